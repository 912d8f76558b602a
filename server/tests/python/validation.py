"""Invalid objects through `DynamicClient`: the client raises its `ApiException` 422
(the dynamic client's `UnprocessibleEntityError`) carrying kube-apiserver's `Status`, with
one `details.causes` entry per invalid field; nothing is stored.

Prints each Status for the Rust test to compare with kube-apiserver's messages."""

from kubernetes.dynamic.exceptions import UnprocessibleEntityError

from kapi import connect, emit, expect, expect_api_error

NAMESPACE = "validation"

dyn = connect()
dyn.resources.get(api_version="v1", kind="Namespace").create(
    body={"metadata": {"name": NAMESPACE}}
)
webapps = dyn.resources.get(api_version="apps.example.dev/v1", kind="WebApp")


def webapp(name, spec):
    return {
        "apiVersion": "apps.example.dev/v1",
        "kind": "WebApp",
        "metadata": {"name": name},
        "spec": spec,
    }


# One invalid field.
bad = webapp("bad", {"replicas": -1, "container": {"image": "nginx:1.27"}})
status = expect_api_error(422, "Invalid", webapps.create, body=bad, namespace=NAMESPACE)
try:
    webapps.create(body=bad, namespace=NAMESPACE)
except UnprocessibleEntityError:
    pass
emit(case="replicas", status=status)
expect_api_error(404, "NotFound", webapps.get, name="bad", namespace=NAMESPACE)

# Several: one cause each.
worse = webapp(
    "worse",
    {"replicas": -1, "container": {"image": "", "ports": [{"containerPort": 70000}]}},
)
status = expect_api_error(422, "Invalid", webapps.create, body=worse, namespace=NAMESPACE)
emit(case="several", status=status)

# A merge patch that would make a valid object invalid.
webapps.create(
    body=webapp("good", {"container": {"image": "nginx:1.27"}}), namespace=NAMESPACE
)
status = expect_api_error(
    422,
    "Invalid",
    webapps.patch,
    name="good",
    namespace=NAMESPACE,
    body={"spec": {"replicas": 1001}},
    content_type="application/merge-patch+json",
)
emit(case="patch", status=status)
expect(
    webapps.get(name="good", namespace=NAMESPACE).spec.replicas,
    1,
    "spec.replicas after the rejected patch",
)

# A validation rule written on the version type (`#[kapi::rules]` on WebApp v1's spec):
# an image tagged `latest` is refused at the rule's field path, with its message.
latest = webapp("latest", {"container": {"image": "nginx:latest"}})
status = expect_api_error(422, "Invalid", webapps.create, body=latest, namespace=NAMESPACE)
emit(case="rule", status=status)
expect_api_error(404, "NotFound", webapps.get, name="latest", namespace=NAMESPACE)
