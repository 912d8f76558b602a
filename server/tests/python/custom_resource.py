"""A kind a CustomResourceDefinition installs, through `DynamicClient` as a Python operator
meets it: the definition created and waited for until `Established`, the kind found by the
client's discovery, then a custom resource created (defaults filled in, unknown fields
pruned), listed, merge-patched, and deleted with its definition.

Prints one line per step with what the Rust test checks beyond the asserts here."""

import time

from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

from kapi import connect, emit, expect, expect_true, plain

dyn = connect()
definitions = dyn.resources.get(
    api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"
)
definitions.create(
    body={
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "cronSpec": {"type": "string"},
                                        "replicas": {"type": "integer", "default": 1},
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
)

# Established, as an operator waits for it (a deadline, never a fixed sleep).
deadline = time.monotonic() + 20
while True:
    definition = definitions.get(name="crontabs.stable.example.com")
    conditions = {c.type: c.status for c in (definition.status.conditions or [])}
    if conditions.get("Established") == "True":
        break
    if time.monotonic() > deadline:
        raise SystemExit(f"never Established: {plain(definition.status)}")
    time.sleep(0.02)
emit(step="established", conditions=conditions)

# The client's discovery finds the new kind (its cache is refreshed on a miss).
crontabs = dyn.resources.get(api_version="stable.example.com/v1", kind="CronTab")
expect(crontabs.name, "crontabs", "the kind's plural")
expect(crontabs.namespaced, True, "the kind is namespaced")

created = crontabs.create(
    body={
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "nightly"},
        "spec": {"cronSpec": "0 0 * * *", "bogus": 1},
    },
    namespace="default",
)
expect(created.spec.replicas, 1, "defaulted spec.replicas")
expect_true("bogus" not in plain(created.spec), f"pruned: {plain(created.spec)}")
emit(step="create", object=plain(created))

listed = crontabs.get(namespace="default")
expect(listed.kind, "CronTabList", "kind of the list")
expect([item.metadata.name for item in listed.items], ["nightly"], "names listed")

patched = crontabs.patch(
    name="nightly",
    namespace="default",
    body={"spec": {"replicas": 3}},
    content_type="application/merge-patch+json",
)
expect(patched.spec.replicas, 3, "merge-patched replicas")
expect(patched.metadata.generation, 2, "generation after a spec change")

# Deleting the definition deletes its objects first, then itself.
definitions.delete(name="crontabs.stable.example.com")
deadline = time.monotonic() + 20
while True:
    try:
        definitions.get(name="crontabs.stable.example.com")
    except NotFoundError:
        break
    if time.monotonic() > deadline:
        raise SystemExit("the definition was never deleted")
    time.sleep(0.02)
try:
    crontabs.get(name="nightly", namespace="default")
    raise SystemExit("the custom resource outlived its definition")
except (NotFoundError, ResourceNotFoundError) as error:
    emit(step="gone", error=type(error).__name__)
