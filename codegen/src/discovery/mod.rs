//! Discovery documents, exactly as kube-apiserver serves them: the legacy `APIVersions`,
//! `APIGroupList`, `APIGroup` and `APIResourceList` (`/api`, `/api/v1`, `/apis`,
//! `/apis/<group>`, `/apis/<group>/<version>`), and the aggregated
//! `apidiscovery.k8s.io/v2` `APIGroupDiscoveryList` served at `/api` and `/apis` to clients
//! that ask for it.
//!
//! Every function is pure: `&ApiModel` in, `serde_json::Value` out. Field names, key order
//! and the omission of empty optional fields follow the Go types in
//! `k8s.io/apimachinery/pkg/apis/meta/v1/types.go` and `k8s.io/api/apidiscovery/v2/types.go`.
//! Resources are listed by name, as kube-apiserver's installer sorts them, so subresources
//! follow their resource (`webapps`, `webapps/scale`, `webapps/status`).

mod aggregated;
mod legacy;

use kapi_core::api::{Scope, SubresourceShape};
use serde_json::{Value, json};

use crate::model::{ApiModel, ResourceModel};

pub use aggregated::{aggregated_api, aggregated_apis};
pub use legacy::{
    api_versions, core_resource_list, group, group_list, resource_list, storage_version_hash,
};

/// One discovery document and the URL path it is served at.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// `/api`, `/api/v1`, `/apis`, `/apis/apps.example.dev`, `/apis/apps.example.dev/v1`.
    pub path: String,
    /// The aggregated (`apidiscovery.k8s.io/v2`) form of `/api` or `/apis`, served instead
    /// of the legacy one when the client asks for it in `Accept`.
    pub aggregated: bool,
    /// The document.
    pub body: Value,
}

/// Every discovery document of `model`: the legacy ones in path order (`/api`, `/api/<v>`,
/// `/apis`, then per group `/apis/<g>` and `/apis/<g>/<v>`), then the aggregated `/api`
/// and `/apis`.
pub fn documents(model: &ApiModel) -> Vec<Document> {
    let legacy = |path: String, body| Document {
        path,
        aggregated: false,
        body,
    };
    let mut documents = vec![legacy("/api".into(), api_versions(model))];
    match model.core_group() {
        Some(core) => {
            for gv in &core.versions {
                documents.push(legacy(gv.path(), resource_list(gv)));
            }
        }
        None => documents.push(legacy("/api/v1".into(), core_resource_list(model))),
    }
    documents.push(legacy("/apis".into(), group_list(model)));
    for g in model.named_groups() {
        documents.push(legacy(format!("/apis/{}", g.name), group(g)));
        for gv in &g.versions {
            documents.push(legacy(gv.path(), resource_list(gv)));
        }
    }
    for (path, body) in [
        ("/api", aggregated_api(model)),
        ("/apis", aggregated_apis(model)),
    ] {
        documents.push(Document {
            path: path.into(),
            aggregated: true,
            body,
        });
    }
    documents
}

/// `{group, version, kind}`: Go's `metav1.GroupVersionKind`, in its field order.
fn group_version_kind(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "version": version, "kind": kind})
}

/// The `(group, version, kind)` discovery names for a subresource of `resource` (served in
/// `version`): `autoscaling/v1` `Scale` for `scale`, a `Create` subresource's body kind
/// (`policy/v1` `Eviction`), a connect's options kind (`PodExecOptions`), the resource's
/// own kind otherwise.
fn subresource_kind<'a>(
    resource: &'a ResourceModel,
    version: &'a str,
    subresource: &str,
) -> (&'a str, &'a str, &'a str) {
    let own = (resource.kind.group, version, resource.kind.kind);
    if subresource == "scale" {
        return ("autoscaling", "v1", "Scale");
    }
    match resource
        .kind
        .subresources
        .other(subresource)
        .map(|s| &s.shape)
    {
        Some(SubresourceShape::Create(body)) => (body.group, body.version, body.kind),
        Some(SubresourceShape::Connect { options, .. }) => (own.0, own.1, options),
        _ => own,
    }
}

/// Whether objects of the resource live in a namespace.
fn namespaced(resource: &ResourceModel) -> bool {
    resource.kind.scope == Scope::Namespaced
}

/// Inserts `key: values` unless `values` is empty, as Go's `omitempty` does.
fn insert_non_empty(object: &mut Value, key: &str, values: &[&str]) {
    if let (Some(map), false) = (object.as_object_mut(), values.is_empty()) {
        map.insert(key.into(), json!(values));
    }
}
