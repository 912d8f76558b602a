"""One WebApp through both served versions of `apps.example.dev`: what is written through
the deprecated `v1beta1` (`spec.image`, `spec.port`) reads back through `v1` as
`spec.container.image` and the first container port, and the other way round.

Prints the object as each version shows it after each write."""

from kapi import connect, emit, expect, plain

NAMESPACE = "versions"

dyn = connect()
dyn.resources.get(api_version="v1", kind="Namespace").create(
    body={"metadata": {"name": NAMESPACE}}
)
v1 = dyn.resources.get(api_version="apps.example.dev/v1", kind="WebApp")
v1beta1 = dyn.resources.get(api_version="apps.example.dev/v1beta1", kind="WebApp")

# Written through v1beta1 with a port: v1 sees it as the first container port. (A v1beta1
# object left at the default port has no ports in v1: a portless v1 object reads through
# v1beta1 as port 8080, and writing that back must not invent a port.)
created = v1beta1.create(
    namespace=NAMESPACE,
    body={
        "apiVersion": "apps.example.dev/v1beta1",
        "kind": "WebApp",
        "metadata": {"name": "legacy"},
        "spec": {"image": "nginx:1.26", "replicas": 2, "port": 8081},
    },
)
expect(created.apiVersion, "apps.example.dev/v1beta1", "apiVersion of the created object")
expect(created.spec.port, 8081, "v1beta1 spec.port")
as_v1 = v1.get(name="legacy", namespace=NAMESPACE)
expect(as_v1.apiVersion, "apps.example.dev/v1", "apiVersion read through v1")
expect(as_v1.spec.container.image, "nginx:1.26", "v1 spec.container.image")
expect(as_v1.spec.container.ports[0].containerPort, 8081, "v1 first container port")
expect(as_v1.spec.replicas, 2, "v1 spec.replicas")
expect(as_v1.metadata.uid, created.metadata.uid, "one object, one uid")
emit(step="created-through-v1beta1", v1beta1=plain(created), v1=plain(as_v1))

# Changed through v1 (merge patch): v1beta1 sees the new image and the first port.
v1.patch(
    name="legacy",
    namespace=NAMESPACE,
    body={
        "spec": {
            "container": {
                "image": "nginx:1.27",
                "ports": [
                    {"containerPort": 8080, "name": "http", "protocol": "UDP"},
                    {"containerPort": 9000},
                ],
            }
        }
    },
    content_type="application/merge-patch+json",
)
as_v1beta1 = v1beta1.get(name="legacy", namespace=NAMESPACE)
expect(as_v1beta1.spec.image, "nginx:1.27", "v1beta1 spec.image after a v1 patch")
expect(as_v1beta1.spec.port, 8080, "v1beta1 spec.port after a v1 patch")

# Replaced through v1beta1 with the resourceVersion read there: v1 sees the new port and
# keeps what v1beta1 cannot express (the first port's name and protocol, other ports).
body = as_v1beta1.to_dict()
body["spec"]["port"] = 9090
replaced = v1beta1.replace(body=body, namespace=NAMESPACE)
expect(replaced.spec.port, 9090, "v1beta1 spec.port after replace")
as_v1 = v1.get(name="legacy", namespace=NAMESPACE)
expect(
    plain(as_v1.spec.container.ports),
    [
        {"containerPort": 9090, "name": "http", "protocol": "UDP"},
        {"containerPort": 9000, "protocol": "TCP"},
    ],
    "v1 ports after a v1beta1 replace",
)
expect(as_v1.spec.container.image, "nginx:1.27", "v1 image after a v1beta1 replace")
emit(step="replaced-through-v1beta1", v1beta1=plain(replaced), v1=plain(as_v1))

# Listed through v1beta1: items in v1beta1.
listed = v1beta1.get(namespace=NAMESPACE)
expect(listed.apiVersion, "apps.example.dev/v1beta1", "apiVersion of the v1beta1 list")
expect([item.spec.image for item in listed.items], ["nginx:1.27"], "v1beta1 list items")
v1beta1.delete(name="legacy", namespace=NAMESPACE)
expect(len(v1.get(namespace=NAMESPACE).items), 0, "v1 list after a v1beta1 delete")
