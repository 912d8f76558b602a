"""Shared by the scripts `python_client.rs` runs: the official Python client's
`DynamicClient` on the server whose URL is the first argument, and small checks that
exit non-zero with a message saying what differed.

Each script prints its results as JSON on stdout (one object per line) for the Rust test
to check; a failed check raises `Mismatch`, whose message Python prints on stderr."""

import atexit
import json
import os
import shutil
import sys
import tempfile

from kubernetes import client, dynamic
from kubernetes.client.rest import ApiException


class Mismatch(AssertionError):
    """A check failed: what was expected and what the server gave."""


def configuration(token=None):
    """The client's configuration for `sys.argv[1]`: over HTTPS trusting `$KAPI_CA_FILE`,
    with `token` (else `$KAPI_TOKEN`) as bearer token, when the environment names them."""
    configuration = client.Configuration(host=sys.argv[1])
    if os.environ.get("KAPI_CA_FILE"):
        configuration.ssl_ca_cert = os.environ["KAPI_CA_FILE"]
    token = token or os.environ.get("KAPI_TOKEN")
    if token:
        configuration.api_key = {"authorization": f"Bearer {token}"}
    return configuration


def connect(token=None):
    """A DynamicClient on `sys.argv[1]` (as `token`, else `$KAPI_TOKEN`, when given), its
    discovery cache in a fresh directory (the client's default cache is a file in /tmp
    named after the host, which a later server on the same port would read)."""
    if len(sys.argv) < 2:
        raise SystemExit(f"usage: {sys.argv[0]} SERVER_URL [ARGS...]")
    cache_dir = tempfile.mkdtemp(prefix="kapi-python-")
    atexit.register(shutil.rmtree, cache_dir, ignore_errors=True)
    api_client = client.ApiClient(configuration(token))
    return dynamic.DynamicClient(
        api_client, cache_file=os.path.join(cache_dir, "discovery.json")
    )


def emit(**result):
    """One line of results for the Rust side, flushed at once (it may be waiting for it)."""
    print(json.dumps(result, sort_keys=True), flush=True)


def expect(actual, expected, what):
    if actual != expected:
        raise Mismatch(f"{what}: expected {expected!r}, got {actual!r}")
    return actual


def expect_true(condition, what):
    if not condition:
        raise Mismatch(what)


def expect_api_error(status, reason, call, *args, **kwargs):
    """Calls `call`, which must raise the client's `ApiException` with HTTP `status`
    carrying a `Status` body with that `reason` and `code`. Returns the Status as a dict."""
    try:
        result = call(*args, **kwargs)
    except ApiException as error:
        expect(error.status, status, f"HTTP status of the ApiException ({error.body})")
        body = json.loads(error.body)
        expect(body.get("kind"), "Status", f"kind of the error body {body}")
        expect(body.get("status"), "Failure", f"status of the error body {body}")
        expect(body.get("code"), status, f"code of the error body {body}")
        expect(body.get("reason"), reason, f"reason of the error body {body}")
        return body
    raise Mismatch(f"expected ApiException {status} {reason}, got a result: {result}")


def plain(value):
    """A `ResourceInstance`, a field of one or a list of fields, as plain JSON values."""
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value.to_dict() if hasattr(value, "to_dict") else value
