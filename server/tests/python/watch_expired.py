"""A watch from a resourceVersion older than the server's watch-cache history (the server
runs with `--watch-cache-history 2`): kube-apiserver answers with one `ERROR` event
carrying a 410 `Expired` Status, which the Python client raises as `ApiException(410)`,
both from the dynamic client's `watch` and from `Watch().stream` (which first retries
once from the same resourceVersion). A relist and a watch from its resourceVersion
recover.

Prints the exceptions' status and reason, and the recovered event."""

from kubernetes import watch
from kubernetes.client.rest import ApiException

from kapi import Mismatch, connect, emit, expect, expect_true

NAMESPACE = "expired"

dyn = connect()
dyn.resources.get(api_version="v1", kind="Namespace").create(
    body={"metadata": {"name": NAMESPACE}}
)
configmaps = dyn.resources.get(api_version="v1", kind="ConfigMap")
first = configmaps.create(namespace=NAMESPACE, body={"metadata": {"name": "first"}})
old = first.metadata.resourceVersion
# More ConfigMap changes than the cache keeps.
for i in range(5):
    configmaps.create(namespace=NAMESPACE, body={"metadata": {"name": f"cm-{i}"}})


def expect_gone(what, events):
    try:
        for event in events:
            raise Mismatch(f"{what}: expected ApiException 410, got an event: {event}")
    except ApiException as error:
        expect(error.status, 410, f"{what}: status of the ApiException")
        prefix = f"Expired: too old resource version: {old} ("
        expect_true(
            str(error.reason).startswith(prefix),
            f"{what}: reason {error.reason!r} starts with {prefix!r}",
        )
        emit(step=what, status=error.status, reason=error.reason)
        return
    raise Mismatch(f"{what}: the watch ended without an error")


expect_gone(
    "dynamic-watch",
    configmaps.watch(namespace=NAMESPACE, resource_version=old, timeout=30),
)
# No timeout: the client retries once after the first 410, then raises.
expect_gone(
    "watch-stream",
    watch.Watch().stream(
        configmaps.get, namespace=NAMESPACE, resource_version=old, serialize=False
    ),
)

# What a controller does next: relist, then watch from the list.
listed = configmaps.get(namespace=NAMESPACE)
expect(len(listed.items), 6, "ConfigMaps listed")
configmaps.create(namespace=NAMESPACE, body={"metadata": {"name": "late"}})
for event in configmaps.watch(
    namespace=NAMESPACE, resource_version=listed.metadata.resourceVersion, timeout=30
):
    expect(event["type"], "ADDED", "type of the first event after the relist")
    expect(event["object"].metadata.name, "late", "name of the first event after the relist")
    emit(step="recovered", type=event["type"], name=event["object"].metadata.name)
    break
else:
    raise Mismatch("the watch from the relist ended without an event")
