//! The legacy discovery documents: `APIVersions`, `APIResourceList`, `APIGroupList` and
//! `APIGroup` (`meta/v1`).

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{insert_non_empty, namespaced, subresource_kind};
use crate::model::{ApiModel, GroupModel, GroupVersionModel, ResourceModel, api_version};

/// `/api`: the versions of the core group. `v1` even when the API has no core kinds, as
/// every client expects the core group to exist.
pub fn api_versions(model: &ApiModel) -> Value {
    let versions: Vec<&str> = match model.core_group() {
        Some(core) => core.versions.iter().map(|gv| gv.version).collect(),
        None => vec!["v1"],
    };
    // kube-apiserver tells clients to reach it at the address they already use.
    json!({
        "kind": "APIVersions",
        "versions": versions,
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    })
}

/// `/api/v1`: the core group's resources, or an empty list when the API has no core kinds
/// (kube-rs discovery fails on a 404 there).
pub fn core_resource_list(model: &ApiModel) -> Value {
    let core_v1 = model
        .core_group()
        .and_then(|g| g.versions.iter().find(|gv| gv.version == "v1"));
    match core_v1 {
        Some(gv) => resource_list(gv),
        None => json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": []}),
    }
}

/// `/api/<version>` or `/apis/<group>/<version>`: the `APIResourceList` of a group-version,
/// with an entry per resource and per subresource (`webapps/status`), sorted by name.
///
/// Like kube-apiserver, the core group's list carries no `apiVersion`.
pub fn resource_list(gv: &GroupVersionModel) -> Value {
    let mut resources: Vec<(String, Value)> = Vec::new();
    for resource in &gv.resources {
        resources.push((resource.kind.plural.to_owned(), api_resource(resource)));
        for subresource in resource.subresources() {
            let name = format!("{}/{subresource}", resource.kind.plural);
            let entry = api_subresource(resource, gv.version, subresource, &name);
            resources.push((name, entry));
        }
    }
    resources.sort_by(|a, b| a.0.cmp(&b.0));
    let resources: Vec<Value> = resources.into_iter().map(|(_, r)| r).collect();
    if gv.group.is_empty() {
        json!({"kind": "APIResourceList", "groupVersion": gv.api_version(), "resources": resources})
    } else {
        json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": gv.api_version(),
            "resources": resources,
        })
    }
}

/// `/apis`: every named group with its versions, most preferred first.
pub fn group_list(model: &ApiModel) -> Value {
    let groups: Vec<Value> = model.named_groups().map(group_fields).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>`: one group with its versions, most preferred first.
pub fn group(group: &GroupModel) -> Value {
    let mut document = json!({"kind": "APIGroup", "apiVersion": "v1"});
    if let (Some(map), Value::Object(fields)) = (document.as_object_mut(), group_fields(group)) {
        map.extend(fields);
    }
    document
}

/// `name`, `versions` and `preferredVersion` of an `APIGroup`. `preferredVersion` is a
/// `GroupVersionForDiscovery` equal to one of `versions` (the Python client compares them).
fn group_fields(group: &GroupModel) -> Value {
    let version = |gv: &GroupVersionModel| json!({"groupVersion": api_version(gv.group, gv.version), "version": gv.version});
    json!({
        "name": group.name,
        "versions": group.versions.iter().map(version).collect::<Vec<_>>(),
        "preferredVersion": version(group.preferred_version()),
    })
}

/// The `APIResource` of a resource itself.
fn api_resource(resource: &ResourceModel) -> Value {
    let kind = resource.kind;
    let mut entry = json!({
        "name": kind.plural,
        "singularName": kind.singular,
        "namespaced": namespaced(resource),
        "kind": kind.kind,
        "verbs": resource.verbs(None),
    });
    insert_non_empty(&mut entry, "shortNames", kind.short_names);
    insert_non_empty(&mut entry, "categories", kind.categories);
    // Of the kind that stores the objects: the same for kinds stored together, as kube's
    // cohabiting Events show; none for kinds never stored (reviews).
    let (storage, stored) = (kind.storage_version().name, kind.storage_kind());
    if let Some(map) = entry.as_object_mut()
        && !kind.create_only
    {
        map.insert(
            "storageVersionHash".into(),
            storage_version_hash(stored.group, storage, stored.kind).into(),
        );
    }
    entry
}

/// The `APIResource` of a subresource (`webapps/status`). Subresources have no singular
/// name; one answering with another kind (`scale`: `autoscaling/v1` `Scale`) names its
/// group and version.
fn api_subresource(
    resource: &ResourceModel,
    version: &str,
    subresource: &str,
    name: &str,
) -> Value {
    let (group, sub_version, kind) = subresource_kind(resource, version, subresource);
    let mut entry = serde_json::Map::new();
    entry.insert("name".into(), name.into());
    entry.insert("singularName".into(), "".into());
    entry.insert("namespaced".into(), namespaced(resource).into());
    if (group, sub_version) != (resource.kind.group, version) {
        entry.insert("group".into(), group.into());
        entry.insert("version".into(), sub_version.into());
    }
    entry.insert("kind".into(), kind.into());
    entry.insert("verbs".into(), json!(resource.verbs(Some(subresource))));
    Value::Object(entry)
}

/// kube-apiserver's `discovery.StorageVersionHash`: the first 8 bytes of the SHA-256 of
/// `<group>/<version>/<kind>` of the storage version, base64-encoded. Clients compare it
/// for equality only (the storage version migrator uses it to notice a new storage version).
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = Sha256::digest(format!("{group}/{version}/{kind}").as_bytes());
    base64(&digest[..8])
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::storage_version_hash;

    #[test]
    fn storage_version_hashes_match_kube_apiserver() {
        // As a kube-apiserver serves them in `/api/v1` and `/apis/apps/v1`.
        assert_eq!(storage_version_hash("", "v1", "ConfigMap"), "qFsyl6wFWjQ=");
        assert_eq!(storage_version_hash("", "v1", "Namespace"), "Q3oi5N2YM8M=");
        assert_eq!(
            storage_version_hash("apps", "v1", "Deployment"),
            "8aSe+NMegvE="
        );
        assert_eq!(storage_version_hash("", "v1", "Pod"), "xPOwRZ+Yhw8=");
    }
}
