"""Paginated lists through `DynamicClient`: `limit` and `_continue` walk five ConfigMaps
two at a time, every page at the first page's resourceVersion, `remainingItemCount` on
the pages before the last.

Prints each page: its names, resourceVersion, continue token and remaining count."""

from kapi import connect, emit, expect, expect_true

NAMESPACE = "pages"

dyn = connect()
dyn.resources.get(api_version="v1", kind="Namespace").create(
    body={"metadata": {"name": NAMESPACE}}
)
configmaps = dyn.resources.get(api_version="v1", kind="ConfigMap")
for i in range(5):
    configmaps.create(
        namespace=NAMESPACE,
        body={"metadata": {"name": f"cm-{i}"}, "data": {"index": str(i)}},
    )

token = None
pages = []
while True:
    page = configmaps.get(namespace=NAMESPACE, limit=2, _continue=token)
    expect(page.kind, "ConfigMapList", "kind of a page")
    names = [item.metadata.name for item in page.items]
    token = page.metadata["continue"]
    emit(
        names=names,
        resourceVersion=page.metadata.resourceVersion,
        remainingItemCount=page.metadata.remainingItemCount,
        hasContinue=bool(token),
    )
    pages.append(names)
    expect_true(len(pages) <= 5, f"pagination does not end: {pages}")
    if not token:
        break

expect(pages, [["cm-0", "cm-1"], ["cm-2", "cm-3"], ["cm-4"]], "pages of two")
