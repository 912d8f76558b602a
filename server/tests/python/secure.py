"""The official Python client against a secure server (HTTPS, tokens, RBAC): as the
administrator it creates a ConfigMap; as alice (second argument: her token), who holds
nothing, reading it is kube's 403, and a wrong token is 401."""

import sys

from kapi import connect, emit, expect, expect_api_error

admin = connect()
configmaps = admin.resources.get(api_version="v1", kind="ConfigMap")
created = configmaps.create(
    body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "secure"}},
    namespace="default",
)
expect(created.metadata.name, "secure", "the created ConfigMap")
emit(created=created.metadata.name)

# Discovery is every authenticated user's; the ConfigMap is not alice's.
alice = connect(token=sys.argv[2])
alice_configmaps = alice.resources.get(api_version="v1", kind="ConfigMap")
status = expect_api_error(
    403, "Forbidden", alice_configmaps.get, name="secure", namespace="default"
)
emit(forbidden=status["message"])

try:
    connect(token="not-a-token").resources.get(api_version="v1", kind="ConfigMap")
    raise SystemExit("a wrong token was accepted")
except Exception as error:  # the client wraps discovery failures in its own errors
    expect("401" in str(error), True, f"a 401 for a wrong token ({error})")
    emit(unauthorized=True)
