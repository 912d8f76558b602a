"""A WebApp's life through `DynamicClient`, as a Python controller lives it: create (the
server fills in defaults), get, list with label and field selectors, replace with the
resourceVersion read (and a stale one: 409 Conflict), merge patch, the status and scale
subresources, delete, and the 404 after it. Also the client's default patch type,
strategic merge, which merges the labels.

Prints one line per step with what the Rust test checks beyond the asserts here."""

import json

from kubernetes.dynamic.exceptions import ConflictError, NotFoundError

from kapi import connect, emit, expect, expect_api_error, expect_true, plain

NAMESPACE = "python"

dyn = connect()
namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
webapps = dyn.resources.get(api_version="apps.example.dev/v1", kind="WebApp")

namespaces.create(body={"metadata": {"name": NAMESPACE}})


def webapp(name, image, tier):
    return {
        "apiVersion": "apps.example.dev/v1",
        "kind": "WebApp",
        "metadata": {"name": name, "labels": {"app": name, "tier": tier}},
        "spec": {"container": {"image": image, "ports": [{"containerPort": 80}]}},
    }


# Create: the namespace comes from the argument; defaults are filled in.
created = webapps.create(body=webapp("web", "nginx:1.27", "front"), namespace=NAMESPACE)
expect(created.metadata.namespace, NAMESPACE, "namespace of the created WebApp")
expect(created.spec.replicas, 1, "defaulted spec.replicas")
expect(created.spec.paused, False, "defaulted spec.paused")
expect(created.spec.container.ports[0].protocol, "TCP", "defaulted protocol")
expect(created.metadata.generation, 1, "generation after create")
expect_true(created.metadata.uid, "a uid")
expect_true(created.metadata.creationTimestamp, "a creationTimestamp")
emit(step="create", object=plain(created))
webapps.create(body=webapp("other", "busybox:1.36", "back"), namespace=NAMESPACE)

# Get.
got = webapps.get(name="web", namespace=NAMESPACE)
expect(got.metadata.uid, created.metadata.uid, "uid read back")
expect(got.metadata.resourceVersion, created.metadata.resourceVersion, "resourceVersion read back")

# List: everything, then by label, then by field (a selectable field and metadata.name).
def names(listed):
    expect(listed.kind, "WebAppList", "kind of the list")
    expect_true(listed.metadata.resourceVersion, f"a list resourceVersion: {listed}")
    return sorted(item.metadata.name for item in listed.items)


lists = {
    "all": names(webapps.get(namespace=NAMESPACE)),
    "tier=front": names(webapps.get(namespace=NAMESPACE, label_selector="tier=front")),
    "app in (web,other),tier!=front": names(
        webapps.get(namespace=NAMESPACE, label_selector="app in (web,other),tier!=front")
    ),
    "spec.container.image=busybox:1.36": names(
        webapps.get(namespace=NAMESPACE, field_selector="spec.container.image=busybox:1.36")
    ),
    "metadata.name=web": names(
        webapps.get(namespace=NAMESPACE, field_selector="metadata.name=web")
    ),
    "all namespaces": names(webapps.get()),
}
emit(step="list", lists=lists)

# Replace with the resourceVersion just read.
body = got.to_dict()
body["spec"]["replicas"] = 3
replaced = webapps.replace(body=body, namespace=NAMESPACE)
expect(replaced.spec.replicas, 3, "spec.replicas after replace")
expect(replaced.metadata.generation, 2, "generation after a spec change")
expect_true(
    replaced.metadata.resourceVersion != got.metadata.resourceVersion,
    "replace gives a new resourceVersion",
)

# Replace again with the now stale resourceVersion: 409 Conflict, raised as the dynamic
# client's ConflictError (an ApiException).
body["spec"]["replicas"] = 4
conflict = expect_api_error(409, "Conflict", webapps.replace, body=body, namespace=NAMESPACE)
try:
    webapps.replace(body=body, namespace=NAMESPACE)
except ConflictError:
    pass
emit(step="conflict", status=conflict)

# Merge patch: maps merge, other fields stay.
patched = webapps.patch(
    name="web",
    namespace=NAMESPACE,
    body={"metadata": {"labels": {"patched": "yes"}}, "spec": {"paused": True}},
    content_type="application/merge-patch+json",
)
expect(patched.spec.paused, True, "spec.paused after the merge patch")
expect(patched.spec.replicas, 3, "spec.replicas kept by the merge patch")
expect(
    plain(patched.metadata.labels),
    {"app": "web", "tier": "front", "patched": "yes"},
    "labels after the merge patch",
)
expect(patched.metadata.generation, 3, "generation after the merge patch")

# The client's default patch type is strategic merge: the labels merge (metadata only,
# so the generation stays).
strategic = webapps.patch(
    name="web", namespace=NAMESPACE, body={"metadata": {"labels": {"via": "strategic"}}},
)
expect(strategic.metadata.generation, 3, "generation after a metadata-only patch")
emit(step="strategic-merge-patch", object=plain(strategic))

# The status subresource, as the client exposes it (`webapps.status`): replace and merge
# patch change only the status, and never the generation.
expect(webapps.status.subresource, "status", "the status subresource")
with_status = strategic.to_dict()
with_status["status"] = {"replicas": 3, "readyReplicas": 1, "observedGeneration": 3}
with_status["spec"]["replicas"] = 9  # ignored by the status subresource
status_replaced = webapps.status.replace(body=with_status, namespace=NAMESPACE)
expect(plain(status_replaced.status), with_status["status"], "status after replacing it")
expect(status_replaced.spec.replicas, 3, "spec.replicas kept by a status update")
expect(status_replaced.metadata.generation, 3, "generation kept by a status update")
status_patched = webapps.status.patch(
    name="web",
    namespace=NAMESPACE,
    body={"status": {"readyReplicas": 3}},
    content_type="application/merge-patch+json",
)
expect(status_patched.status.readyReplicas, 3, "status.readyReplicas after the status patch")
expect(status_patched.status.replicas, 3, "status.replicas kept by the status patch")
# And the main resource ignores status.
main_body = status_patched.to_dict()
main_body["status"] = {"replicas": 0}
main_body["spec"]["replicas"] = 2
main_replaced = webapps.replace(body=main_body, namespace=NAMESPACE)
expect(main_replaced.status.replicas, 3, "status kept by a replace of the main resource")
expect(main_replaced.spec.replicas, 2, "spec.replicas after replacing the main resource")
emit(step="status", object=plain(main_replaced))

# The scale subresource: an autoscaling/v1 Scale over spec.replicas and status.replicas.
scale = webapps.scale.get(name="web", namespace=NAMESPACE)
expect(scale.apiVersion, "autoscaling/v1", "apiVersion of the Scale")
expect(scale.kind, "Scale", "kind of the Scale")
expect((scale.spec.replicas, scale.status.replicas), (2, 3), "replicas in the Scale")
scaled = webapps.scale.patch(
    name="web",
    namespace=NAMESPACE,
    body={"spec": {"replicas": 5}},
    content_type="application/merge-patch+json",
)
expect(scaled.spec.replicas, 5, "spec.replicas of the patched Scale")
expect(
    webapps.get(name="web", namespace=NAMESPACE).spec.replicas,
    5,
    "spec.replicas after scaling",
)
emit(step="scale", scale=plain(scaled))

# Delete, then the 404 kube-apiserver gives.
deleted = webapps.delete(name="web", namespace=NAMESPACE)
emit(step="delete", response=plain(deleted))
not_found = expect_api_error(404, "NotFound", webapps.get, name="web", namespace=NAMESPACE)
try:
    webapps.get(name="web", namespace=NAMESPACE)
except NotFoundError:
    pass
emit(step="not-found", status=not_found)
expect(
    names(webapps.get(namespace=NAMESPACE)), ["other"], "what is left after the delete"
)
