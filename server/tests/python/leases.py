"""Leases through the Python client's typed `CoordinationV1Api`, as leader election uses
them: create, read, replace as the holder renews, a replace from a stale resourceVersion
(409), invalid specs (422 with kube's field paths), delete. Prints one line per step."""

import datetime
import sys

from kubernetes import client

from kapi import emit, expect, expect_api_error

NAMESPACE = "default"

api = client.CoordinationV1Api(client.ApiClient(client.Configuration(host=sys.argv[1])))
now = datetime.datetime.now(datetime.timezone.utc)
lease = api.create_namespaced_lease(
    NAMESPACE,
    client.V1Lease(
        metadata=client.V1ObjectMeta(name="webapp-controller"),
        spec=client.V1LeaseSpec(
            holder_identity="controller-a",
            lease_duration_seconds=15,
            acquire_time=now,
            renew_time=now,
            lease_transitions=0,
        ),
    ),
)
expect(type(lease).__name__, "V1Lease", "type of the created Lease")
read = api.read_namespaced_lease("webapp-controller", NAMESPACE)
emit(
    step="read",
    holder=read.spec.holder_identity,
    duration=read.spec.lease_duration_seconds,
    renewMicros=read.spec.renew_time.microsecond == now.microsecond,
)

# The holder renews: a replace from what it read.
stale = read.metadata.resource_version
read.spec.renew_time = now + datetime.timedelta(seconds=2)
renewed = api.replace_namespaced_lease("webapp-controller", NAMESPACE, read)
emit(step="renewed", moved=renewed.metadata.resource_version != stale)

# Another candidate that read before the renewal cannot take it over.
taken = client.V1Lease(
    metadata=client.V1ObjectMeta(name="webapp-controller", resource_version=stale),
    spec=client.V1LeaseSpec(holder_identity="controller-b", lease_duration_seconds=15,
                            lease_transitions=1),
)
conflict = expect_api_error(409, "Conflict", api.replace_namespaced_lease,
                            "webapp-controller", NAMESPACE, taken)
emit(step="conflict", message=conflict["message"])

invalid = client.V1Lease(
    metadata=client.V1ObjectMeta(name="invalid"),
    spec=client.V1LeaseSpec(lease_duration_seconds=0, lease_transitions=-1),
)
refused = expect_api_error(422, "Invalid", api.create_namespaced_lease, NAMESPACE, invalid)
emit(step="invalid", message=refused["message"],
     fields=sorted(cause["field"] for cause in refused["details"]["causes"]))

api.delete_namespaced_lease("webapp-controller", NAMESPACE)
expect_api_error(404, "NotFound", api.read_namespaced_lease, "webapp-controller", NAMESPACE)
emit(step="deleted")
