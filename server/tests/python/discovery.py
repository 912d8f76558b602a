"""Discovery through `DynamicClient`: `/version`, `/apis` (whose `preferredVersion` the
client compares with each `versions` entry by equality) and each group-version's
resource list, as `dyn.resources.get(api_version=..., kind=...)` finds them.

Prints one line per kind (where the client will send requests for it), then the
versions and group-versions it found."""

from kapi import connect, emit, expect

dyn = connect()
emit(version=dyn.version["kubernetes"])

for api_version, kind in [
    ("apps.example.dev/v1", "WebApp"),
    ("apps.example.dev/v1beta1", "WebApp"),
    ("v1", "ConfigMap"),
    ("v1", "Namespace"),
    ("platform.example.dev/v1", "Tenant"),
]:
    resource = dyn.resources.get(api_version=api_version, kind=kind)
    expect(resource.group_version, api_version, f"group version of {kind}")
    expect(resource.kind, kind, f"kind found for {api_version} {kind}")
    emit(
        apiVersion=api_version,
        kind=kind,
        name=resource.name,
        namespaced=resource.namespaced,
        preferred=resource.preferred,
        shortNames=resource.short_names,
        verbs=sorted(resource.verbs),
        subresources=sorted(resource.subresources),
        path=resource.path(name="x", namespace="ns"),
    )

# Every version of a kind, and the preferred one: the client marks a version preferred
# only when its `versions` entry equals the group's `preferredVersion`.
emit(webappVersions=sorted(r.group_version for r in dyn.resources.search(kind="WebApp")))
preferred = dyn.resources.get(kind="WebApp", preferred=True)
expect(preferred.group_version, "apps.example.dev/v1", "the preferred WebApp version")
emit(groupVersions=sorted({r.group_version for r in dyn.resources.search()}))

# The list kind the client derives for every resource.
webapp_list = dyn.resources.get(api_version="apps.example.dev/v1", kind="WebAppList")
emit(listKind=webapp_list.kind)
