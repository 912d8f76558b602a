"""The Python client's typed (generated) APIs, which call kube-apiserver's paths exactly
as its OpenAPI document names them: `VersionApi` (`/version/`), `CoreApi` (`/api/`),
`ApisApi` (`/apis/`), `CoreV1Api` for Namespaces and ConfigMaps (objects deserialized into
`V1ConfigMap`, a delete answering kube's Success Status, a typed watch), and
`CustomObjectsApi` for WebApps.

Prints one line per API with what the Rust test checks beyond the asserts here."""

import sys

from kubernetes import client, watch

from kapi import Mismatch, emit, expect, expect_api_error, expect_true

NAMESPACE = "typed"

api_client = client.ApiClient(client.Configuration(host=sys.argv[1]))

# Discovery and version, at their trailing-slash paths.
version = client.VersionApi(api_client).get_code()
expect_true(version.git_version.startswith("v1."), f"gitVersion {version.git_version}")
core_versions = client.CoreApi(api_client).get_api_versions()
groups = client.ApisApi(api_client).get_api_versions()
core_v1 = client.CoreV1Api(api_client)
core_resources = core_v1.get_api_resources()
custom = client.CustomObjectsApi(api_client)
webapp_resources = custom.get_api_resources("apps.example.dev", "v1")
emit(
    api="discovery",
    gitVersion=version.git_version,
    coreVersions=core_versions.versions,
    groups={g.name: g.preferred_version.group_version for g in groups.groups},
    coreResources=sorted(r.name for r in core_resources.resources),
    webappResources=sorted(r.name for r in webapp_resources.resources),
)

# Core kinds, typed.
namespace = core_v1.create_namespace(
    client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE))
)
expect(namespace.status.phase, "Active", "phase of the new namespace")
created = core_v1.create_namespaced_config_map(
    NAMESPACE,
    client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="settings", labels={"app": "web"}),
        data={"mode": "fast"},
    ),
)
expect(type(created).__name__, "V1ConfigMap", "type of the created ConfigMap")
start = created.metadata.resource_version
# The generated client's patch with a dict body (strategic merge for built-in kinds).
patched = core_v1.patch_namespaced_config_map(
    "settings", NAMESPACE, {"data": {"size": "large"}}
)
expect(patched.data, {"mode": "fast", "size": "large"}, "data after the patch")
listed = core_v1.list_namespaced_config_map(NAMESPACE, label_selector="app=web")
expect([c.metadata.name for c in listed.items], ["settings"], "ConfigMaps listed")
# The client hands a delete's answer over as a dict: for a ConfigMap, kube's Status.
deleted = core_v1.delete_namespaced_config_map("settings", NAMESPACE)
expect((deleted["kind"], deleted["status"]), ("Status", "Success"), "a ConfigMap delete's answer")
expect(deleted["details"]["uid"], created.metadata.uid, "uid in the delete's Status")
emit(api="core", deleted=deleted)

# A typed watch from the create: objects deserialized, resource_version followed.
watcher = watch.Watch()
events = []
for event in watcher.stream(
    core_v1.list_namespaced_config_map,
    NAMESPACE,
    resource_version=start,
    timeout_seconds=30,
):
    expect(type(event["object"]).__name__, "V1ConfigMap", "type of an event's object")
    events.append(event["type"])
    last = event["object"].metadata.resource_version
    if event["type"] == "DELETED":
        watcher.stop()
expect(events, ["MODIFIED", "DELETED"], "typed watch events after the create")
expect(watcher.resource_version, last, "the resourceVersion the watcher would resume from")
emit(api="watch", events=events)

# WebApps through CustomObjectsApi: plain dicts; a delete answers with the object.
group, version, plural = "apps.example.dev", "v1", "webapps"
webapp = custom.create_namespaced_custom_object(
    group, version, NAMESPACE, plural,
    {
        "apiVersion": "apps.example.dev/v1",
        "kind": "WebApp",
        "metadata": {"name": "web"},
        "spec": {"container": {"image": "nginx:1.27"}},
    },
)
expect(webapp["spec"]["replicas"], 1, "defaulted spec.replicas")
patched = custom.patch_namespaced_custom_object(
    group, version, NAMESPACE, plural, "web", {"spec": {"replicas": 3}}
)
expect(patched["spec"]["replicas"], 3, "spec.replicas after the merge patch")
status = custom.patch_namespaced_custom_object_status(
    group, version, NAMESPACE, plural, "web", {"status": {"readyReplicas": 3}}
)
expect(status["status"], {"readyReplicas": 3}, "status after the status patch")
scale = custom.get_namespaced_custom_object_scale(group, version, NAMESPACE, plural, "web")
expect(scale["spec"], {"replicas": 3}, "the Scale's spec")
listed = custom.list_namespaced_custom_object(group, version, NAMESPACE, plural)
expect([w["metadata"]["name"] for w in listed["items"]], ["web"], "WebApps listed")
expect_api_error(
    409, "AlreadyExists", custom.create_namespaced_custom_object,
    group, version, NAMESPACE, plural,
    {"apiVersion": "apps.example.dev/v1", "kind": "WebApp", "metadata": {"name": "web"},
     "spec": {"container": {"image": "nginx:1.27"}}},
)
deleted = custom.delete_namespaced_custom_object(group, version, NAMESPACE, plural, "web")
expect(deleted["kind"], "WebApp", "what a WebApp delete answers")
emit(api="custom", deleted=deleted)
not_found = expect_api_error(
    404, "NotFound", custom.get_namespaced_custom_object,
    group, version, NAMESPACE, plural, "web",
)
if not_found["message"] != 'webapps.apps.example.dev "web" not found':
    raise Mismatch(f"message of the 404: {not_found}")
