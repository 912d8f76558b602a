"""The Python client's typed APIs on the built-in kinds controllers use most: Pods,
Services, Secrets (`CoreV1Api`), Deployments (`AppsV1Api`) and Jobs (`BatchV1Api`), each
created, read (into its typed model), listed by label, patched (strategic merge),
replaced, watched and deleted, as a controller's tests drive them against envtest.

Prints one line per kind with what the Rust test checks beyond the asserts here."""

import copy

from kubernetes import client, watch

from kapi import configuration, emit, expect, expect_api_error, expect_true

NAMESPACE = "builtin"
LABELS = {"app": "web"}

api_client = client.ApiClient(configuration())
core = client.CoreV1Api(api_client)
apps = client.AppsV1Api(api_client)
batch = client.BatchV1Api(api_client)
core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))


def meta(name):
    return client.V1ObjectMeta(name=name, labels=dict(LABELS))


def template(restart_policy="Never"):
    """A pod template; a Deployment's restarts its pods always, a Job's may not."""
    return client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels=dict(LABELS)),
        spec=client.V1PodSpec(
            containers=[client.V1Container(name="app", image="nginx:1.27")],
            restart_policy=restart_policy,
        ),
    )


def lifecycle(kind, create, read, list_, patch, replace, delete, obj, change, changed):
    """Create `obj`, read it, list it by label, patch it with `change` (a dict), replace
    it from what was read, watch from its version and delete it; `changed(read)` says
    what the patch and replace must show. Returns the line for the Rust side."""
    created = create(NAMESPACE, obj)
    name = created.metadata.name
    expect(created.metadata.labels, LABELS, f"{kind} labels")
    got = read(name, NAMESPACE)
    expect(type(got).__name__, type(created).__name__, f"{kind} model")
    listed = list_(NAMESPACE, label_selector="app=web")
    expect([o.metadata.name for o in listed.items], [name], f"{kind} listed")
    patched = patch(name, NAMESPACE, change)
    expect_true(changed(patched), f"{kind} after the patch: {patched}")
    patched.metadata.annotations = {"replaced": "yes"}
    replaced = replace(name, NAMESPACE, patched)
    expect(replaced.metadata.annotations, {"replaced": "yes"}, f"{kind} replaced")
    stale = copy.deepcopy(replaced)
    stale.metadata.resource_version = created.metadata.resource_version
    conflict = expect_api_error(409, "Conflict", replace, name, NAMESPACE, stale)
    events = []
    stream = watch.Watch().stream(
        list_, NAMESPACE, resource_version=replaced.metadata.resource_version, timeout_seconds=5
    )
    answer = delete(name, NAMESPACE)
    deleted = answer.get("kind") if isinstance(answer, dict) else answer.kind
    for event in stream:
        events.append(event["type"])
        expect(event["object"].metadata.name, name, f"{kind} watched")
        if event["type"] == "DELETED":
            break
    expect(events, ["DELETED"], f"{kind} watch events")
    expect_api_error(404, "NotFound", read, name, NAMESPACE)
    return dict(kind=kind, conflict=conflict["message"], uid=created.metadata.uid, deleted=deleted)


lines = []
lines.append(lifecycle(
    "Pod",
    core.create_namespaced_pod, core.read_namespaced_pod, core.list_namespaced_pod,
    core.patch_namespaced_pod, core.replace_namespaced_pod, core.delete_namespaced_pod,
    client.V1Pod(metadata=meta("web"), spec=template().spec),
    {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}},
    lambda p: [c.image for c in p.spec.containers] == ["nginx:1.28"],
))
lines.append(lifecycle(
    "Service",
    core.create_namespaced_service, core.read_namespaced_service,
    core.list_namespaced_service, core.patch_namespaced_service,
    core.replace_namespaced_service, core.delete_namespaced_service,
    client.V1Service(
        metadata=meta("web"),
        spec=client.V1ServiceSpec(
            selector=dict(LABELS),
            ports=[client.V1ServicePort(name="http", port=80, target_port=8080)],
        ),
    ),
    {"spec": {"ports": [{"name": "https", "port": 443, "targetPort": 8443}]}},
    lambda s: sorted(p.name for p in s.spec.ports) == ["http", "https"],
))
lines.append(lifecycle(
    "Secret",
    core.create_namespaced_secret, core.read_namespaced_secret, core.list_namespaced_secret,
    core.patch_namespaced_secret, core.replace_namespaced_secret, core.delete_namespaced_secret,
    client.V1Secret(metadata=meta("creds"), type="Opaque", data={"user": "YWRtaW4="}),
    {"data": {"password": "c2VjcmV0"}},
    lambda s: s.data == {"user": "YWRtaW4=", "password": "c2VjcmV0"},
))
lines.append(lifecycle(
    "Deployment",
    apps.create_namespaced_deployment, apps.read_namespaced_deployment,
    apps.list_namespaced_deployment, apps.patch_namespaced_deployment,
    apps.replace_namespaced_deployment, apps.delete_namespaced_deployment,
    client.V1Deployment(
        metadata=meta("web"),
        spec=client.V1DeploymentSpec(
            replicas=2,
            selector=client.V1LabelSelector(match_labels=dict(LABELS)),
            template=template("Always"),
        ),
    ),
    {"spec": {"replicas": 3}},
    lambda d: d.spec.replicas == 3,
))
lines.append(lifecycle(
    "Job",
    batch.create_namespaced_job, batch.read_namespaced_job, batch.list_namespaced_job,
    batch.patch_namespaced_job, batch.replace_namespaced_job, batch.delete_namespaced_job,
    client.V1Job(
        metadata=meta("once"),
        spec=client.V1JobSpec(
            selector=client.V1LabelSelector(match_labels={"job": "once"}),
            manual_selector=True,
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"job": "once"}),
                spec=template().spec,
            ),
        ),
    ),
    {"spec": {"parallelism": 2}},
    lambda j: j.spec.parallelism == 2,
))
for line in lines:
    emit(**line)
