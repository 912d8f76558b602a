"""Server-side apply through `DynamicClient.server_side_apply` (PATCH with
`application/apply-patch+yaml`, `fieldManager`, `force`), as a Python controller uses it:
on the WebApp itself and on its status subresource (`webapps.status`), each first by one
manager, then by another without force (409 Conflict, naming the owner and the field;
nothing changes), then by that other manager with force (it takes the field over).

Prints one line per step with the object (or the error Status) for the Rust test to check
its managedFields and the conflicts' bodies exactly."""

from kapi import connect, emit, expect, expect_api_error, plain

NAMESPACE = "python-apply"
API_VERSION = "apps.example.dev/v1"

dyn = connect()
namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
webapps = dyn.resources.get(api_version=API_VERSION, kind="WebApp")

namespaces.create(body={"metadata": {"name": NAMESPACE}})


def spec_config(spec):
    return {
        "apiVersion": API_VERSION,
        "kind": "WebApp",
        "metadata": {"name": "web"},
        "spec": spec,
    }


def status_config(status):
    return {
        "apiVersion": API_VERSION,
        "kind": "WebApp",
        "metadata": {"name": "web"},
        "status": status,
    }


def get():
    return webapps.get(name="web", namespace=NAMESPACE)


# Create: an apply to a WebApp that does not exist creates it; defaults are filled in.
created = webapps.server_side_apply(
    body=spec_config(
        {
            "replicas": 2,
            "container": {"image": "nginx:1.27", "ports": [{"containerPort": 80}]},
        }
    ),
    namespace=NAMESPACE,
    field_manager="py-ctrl",
)
expect(created.metadata.namespace, NAMESPACE, "namespace of the applied WebApp")
expect(created.spec.replicas, 2, "spec.replicas after the first apply")
expect(created.spec.container.ports[0].protocol, "TCP", "defaulted protocol")
expect(created.metadata.generation, 1, "generation after the creating apply")
emit(step="create", object=plain(created))

# Another manager changing spec.replicas, force_conflicts=False (the query `force=false`):
# 409 Conflict, raised as an ApiException, and the WebApp is unchanged.
conflict = expect_api_error(
    409,
    "Conflict",
    webapps.server_side_apply,
    body=spec_config({"replicas": 5}),
    namespace=NAMESPACE,
    field_manager="py-other",
    force_conflicts=False,
)
unchanged = get()
expect(unchanged.spec.replicas, 2, "spec.replicas after the conflicting apply")
expect(
    unchanged.metadata.resourceVersion,
    created.metadata.resourceVersion,
    "resourceVersion after the conflicting apply",
)
emit(step="conflict", status=conflict)

# The same with force_conflicts=True (`force=true`): py-other takes spec.replicas over.
forced = webapps.server_side_apply(
    body=spec_config({"replicas": 5}),
    namespace=NAMESPACE,
    field_manager="py-other",
    force_conflicts=True,
)
expect(forced.spec.replicas, 5, "spec.replicas after the forced apply")
expect(forced.spec.container.image, "nginx:1.27", "spec.container.image kept")
expect(forced.metadata.generation, 2, "generation after the forced apply")
emit(step="force", object=plain(forced))

# The status subresource, as the dynamic client exposes it.
expect(webapps.status.subresource, "status", "the status subresource")
status_applied = webapps.status.server_side_apply(
    body=status_config({"readyReplicas": 2}),
    namespace=NAMESPACE,
    field_manager="py-status",
)
expect(plain(status_applied.status), {"readyReplicas": 2}, "status after the status apply")
expect(status_applied.spec.replicas, 5, "spec.replicas kept by the status apply")
expect(status_applied.metadata.generation, 2, "generation kept by the status apply")
emit(step="status", object=plain(status_applied))

status_conflict = expect_api_error(
    409,
    "Conflict",
    webapps.status.server_side_apply,
    body=status_config({"readyReplicas": 3}),
    namespace=NAMESPACE,
    field_manager="py-status-other",
    force_conflicts=False,
)
unchanged = get()
expect(unchanged.status.readyReplicas, 2, "status.readyReplicas after the conflict")
expect(
    unchanged.metadata.resourceVersion,
    status_applied.metadata.resourceVersion,
    "resourceVersion after the conflicting status apply",
)
emit(step="status-conflict", status=status_conflict)

status_forced = webapps.status.server_side_apply(
    body=status_config({"readyReplicas": 3}),
    namespace=NAMESPACE,
    field_manager="py-status-other",
    force_conflicts=True,
)
expect(status_forced.status.readyReplicas, 3, "status.readyReplicas after the forced apply")
expect(status_forced.metadata.generation, 2, "generation kept by the forced status apply")
emit(step="status-force", object=plain(status_forced))

# What a later read sees: the same object as the last apply answered.
final = get()
expect(
    final.metadata.resourceVersion,
    status_forced.metadata.resourceVersion,
    "resourceVersion read back",
)
emit(step="final", object=plain(final))
