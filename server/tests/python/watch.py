"""Watches through `DynamicClient` of changes another client makes.

First a live watch (`webapps.watch(...)`, the dynamic client's helper around
`kubernetes.watch.Watch`): the script lists, prints `{"step": "ready"}` with the list's
resourceVersion, and then prints each event as it arrives; the Rust test makes the next
change only after it has seen the event of the previous one, so that ADDED, MODIFIED and
DELETED each travel through the open stream. Then `Watch().stream(webapps.get, ...)`
directly, from the same resourceVersion: the same three events, replayed from history.
Every event line carries its type, the object's name and resourceVersion."""

from kubernetes import watch

from kapi import connect, emit, expect

NAMESPACE = "watched"

dyn = connect()
dyn.resources.get(api_version="v1", kind="Namespace").create(
    body={"metadata": {"name": NAMESPACE}}
)
webapps = dyn.resources.get(api_version="apps.example.dev/v1", kind="WebApp")

listed = webapps.get(namespace=NAMESPACE)
expect(len(listed.items), 0, "WebApps before the watch")
start = listed.metadata.resourceVersion
emit(step="ready", resourceVersion=start)


def describe(event, obj):
    return {
        "type": event["type"],
        "name": obj["metadata"]["name"],
        "resourceVersion": obj["metadata"]["resourceVersion"],
        "replicas": obj["spec"]["replicas"],
        "apiVersion": obj["apiVersion"],
    }


# Live: ends after the DELETED event (a generator closed by `break` closes its stream).
live = []
for event in webapps.watch(namespace=NAMESPACE, resource_version=start, timeout=60):
    # The helper wraps the object in a ResourceInstance and keeps the raw dict.
    expect(event["object"].kind, "WebApp", "kind of the event's object")
    line = describe(event, event["raw_object"])
    live.append(line)
    emit(step="event", **line)
    if event["type"] == "DELETED":
        break
expect(
    [line["type"] for line in live],
    ["ADDED", "MODIFIED", "DELETED"],
    "event types of the live watch (did it end early?)",
)

# Replayed: Watch().stream on the resource's `get`, as one writes it by hand (`serialize`
# False so that the dynamic client hands the stream over unread). `timeout_seconds` bounds
# it; the watcher is stopped after the DELETED event.
watcher = watch.Watch()
replayed = []
for event in watcher.stream(
    webapps.get,
    namespace=NAMESPACE,
    resource_version=start,
    timeout_seconds=30,
    serialize=False,
):
    replayed.append(describe(event, event["object"]))
    if event["type"] == "DELETED":
        watcher.stop()
expect(replayed, live, "events replayed by Watch().stream from the list's resourceVersion")
emit(step="replayed", events=len(replayed))
