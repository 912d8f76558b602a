//! Aggregated discovery: `apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`, served at `/api`
//! and `/apis` when the client's `Accept` asks for
//! `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`. One request
//! gives a client every group, version and resource.

use serde_json::{Value, json};

use super::{group_version_kind, insert_non_empty, subresource_kind};
use crate::model::{ApiModel, GroupModel, GroupVersionModel, ResourceModel};

/// Aggregated `/api`: the core group as the only item (name `""`, omitted), with an empty
/// `v1` when the API has no core kinds, as the legacy `/api` still lists `v1`.
pub fn aggregated_api(model: &ApiModel) -> Value {
    let item = match model.core_group() {
        Some(core) => group_discovery(core),
        None => json!({"metadata": {}, "versions": [{"version": "v1", "freshness": "Current"}]}),
    };
    list(vec![item])
}

/// Aggregated `/apis`: every named group, each with its versions most preferred first.
pub fn aggregated_apis(model: &ApiModel) -> Value {
    list(model.named_groups().map(group_discovery).collect())
}

fn list(items: Vec<Value>) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// One `APIGroupDiscovery`. Its `metadata` holds only the name, which Go omits when empty
/// (the core group).
fn group_discovery(group: &GroupModel) -> Value {
    let metadata = if group.name.is_empty() {
        json!({})
    } else {
        json!({"name": group.name})
    };
    let versions: Vec<Value> = group.versions.iter().map(version_discovery).collect();
    json!({"metadata": metadata, "versions": versions})
}

/// One `APIVersionDiscovery`: resources sorted by name; the document is generated from
/// the types, so it is always `Current`.
fn version_discovery(gv: &GroupVersionModel) -> Value {
    let mut resources: Vec<&ResourceModel> = gv.resources.iter().collect();
    resources.sort_by_key(|r| r.kind.plural);
    let mut version = json!({"version": gv.version});
    if let Some(map) = version.as_object_mut() {
        if !resources.is_empty() {
            let resources: Vec<Value> = resources
                .iter()
                .map(|r| resource_discovery(gv, r))
                .collect();
            map.insert("resources".into(), resources.into());
        }
        map.insert("freshness".into(), "Current".into());
    }
    version
}

/// One `APIResourceDiscovery`, with its subresources (sorted by name) nested in it.
fn resource_discovery(gv: &GroupVersionModel, resource: &ResourceModel) -> Value {
    let kind = resource.kind;
    let mut entry = json!({
        "resource": kind.plural,
        "responseKind": group_version_kind(kind.group, gv.version, kind.kind),
        "scope": kind.scope.as_str(),
        "singularResource": kind.singular,
        "verbs": resource.verbs(None),
    });
    insert_non_empty(&mut entry, "shortNames", kind.short_names);
    insert_non_empty(&mut entry, "categories", kind.categories);
    let mut names = resource.subresources();
    names.sort_unstable();
    let subresources: Vec<Value> = names
        .into_iter()
        .map(|name| {
            let (group, version, kind) = subresource_kind(resource, gv.version, name);
            json!({
                "subresource": name,
                "responseKind": group_version_kind(group, version, kind),
                "verbs": resource.verbs(Some(name)),
            })
        })
        .collect();
    if let (Some(map), false) = (entry.as_object_mut(), subresources.is_empty()) {
        map.insert("subresources".into(), subresources.into());
    }
    entry
}
