//! What the built-in controllers read: every object of a namespace, an object as its watch
//! cache holds it, and where an owner reference points and whether an object is there.

use std::sync::Arc;

use serde_json::Value;

use super::Registry;
use super::object;
use kapi_core::api::Scope;
use kapi_core::error::ApiError;
use kapi_storage::cache::CachedObject;
use kapi_storage::{KeyValue, ListRequest};

/// One object: its kind (an index into the scheme's kinds) and its metadata.
#[derive(Clone, Debug)]
pub struct Content {
    /// The kind's index in the scheme.
    pub kind: usize,
    /// The object's `{"metadata": ...}` only (as stored, or in its storage version), with
    /// the fields the controllers read (name, namespace, uid, resourceVersion,
    /// deletionTimestamp, finalizers, ownerReferences). The rest is skipped, not decoded, so
    /// that a pass over a namespace does not build every object's tree.
    pub object: Value,
}

/// `{"metadata": ...}` of the JSON object `json`, with only the fields the controllers
/// read: the rest (`managedFields` above all) is skipped by the decoder, not built.
fn metadata_of(json: &[u8]) -> Result<Value, ApiError> {
    #[derive(serde::Deserialize, serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Metadata {
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        namespace: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        uid: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        resource_version: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        deletion_timestamp: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        finalizers: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        owner_references: Option<Value>,
    }
    #[derive(serde::Deserialize, serde::Serialize)]
    struct Object {
        metadata: Option<Metadata>,
    }
    let object: Object = serde_json::from_slice(json)
        .map_err(|e| ApiError::Internal(format!("decoding an object's metadata: {e}")))?;
    serde_json::to_value(object).map_err(|e| ApiError::Internal(e.to_string()))
}

/// Where an owner reference points.
#[derive(Clone, Debug, PartialEq, Eq)]
enum OwnerKey {
    /// At this key, of this kind (an index into the scheme's kinds).
    At(usize, String),
    /// At an object of a kind not served here: nobody can tell whether it exists.
    NotServed,
    /// Nowhere an object can be (a namespaced owner of a cluster-scoped dependent, a
    /// malformed name).
    Nowhere,
}

impl Registry {
    /// Everything stored in namespace `name`, of every namespaced kind (read live).
    pub async fn namespace_content(&self, name: &str) -> Result<Vec<Content>, ApiError> {
        let mut content = Vec::new();
        for (kind, kv) in self.stored_in_namespace(name).await? {
            content.push(Content {
                kind,
                object: metadata_of(&kv.value)?,
            });
        }
        Ok(content)
    }

    /// What storage holds in namespace `name`, of every namespaced kind (an index into the
    /// scheme's kinds with each key and value), read live.
    pub(super) async fn stored_in_namespace(
        &self,
        name: &str,
    ) -> Result<Vec<(usize, KeyValue)>, ApiError> {
        let mut stored = Vec::new();
        for (index, kind) in self.scheme.kinds().slots() {
            // A kind stored with another shows that kind's objects again.
            if kind.info.scope != Scope::Namespaced || !kind.info.stores_objects() {
                continue;
            }
            let prefix = self.keys().collection(kind.info, Some(name));
            let objects = (self.storage.list(ListRequest::prefix(prefix)).await)
                .map_err(|e| object::storage_error(e, &object::resource(kind.info), ""))?;
            stored.extend(objects.items.into_iter().map(|kv| (index, kv)));
        }
        Ok(stored)
    }

    /// Where the owner `reference` of a dependent in `namespace` (`None`: cluster-scoped)
    /// is stored: its kind (an index into the scheme's kinds) and key, where a dependent
    /// there may have its owner (a namespaced owner in the dependent's own namespace, a
    /// cluster-scoped owner anywhere).
    fn owner_key(&self, namespace: Option<&str>, reference: &Value) -> OwnerKey {
        let text = |field: &str| reference.get(field).and_then(Value::as_str).unwrap_or("");
        let group = text("apiVersion")
            .rsplit_once('/')
            .map_or("", |(group, _)| group);
        let Some(kind) = self.scheme.by_kind(group, text("kind")) else {
            return OwnerKey::NotServed;
        };
        let owner_namespace = match (kind.info.scope, namespace) {
            (Scope::Cluster, _) => None,
            (Scope::Namespaced, Some(namespace)) => Some(namespace),
            (Scope::Namespaced, None) => return OwnerKey::Nowhere,
        };
        match (
            self.keys().object(kind.info, owner_namespace, text("name")),
            self.kind_index(&kind),
        ) {
            (Ok(key), Ok(index)) => OwnerKey::At(index, key),
            _ => OwnerKey::Nowhere,
        }
    }

    /// The object of kind `kind` (an index into the scheme's kinds) at `key` as its watch
    /// cache holds it now, if the cache holds it.
    pub fn cached(&self, kind: usize, key: &str) -> Option<Arc<CachedObject>> {
        let entry = self.scheme.kind(kind)?;
        let cache = self
            .caches
            .for_prefix(&self.keys().kind_prefix(entry.info))?;
        cache.get(key).ok()?.0
    }

    /// Whether the owner `reference` of a dependent in `namespace` (`None`: cluster-scoped)
    /// names an object that exists now: it lives where a dependent there may have its
    /// owner (`owner_key`) and its uid is the reference's. An owner its
    /// kind's watch cache holds with that uid exists (a later delete reaches the collector
    /// as a change of its own); any other answer is read live, since the cache may lag and
    /// nothing may be deleted on a stale view. `None` when its kind is not served: nobody
    /// can tell (kube's collector leaves such a dependent alone, retrying).
    pub async fn owner_exists(
        &self,
        namespace: Option<&str>,
        reference: &Value,
    ) -> Result<Option<bool>, ApiError> {
        let (kind, key) = match self.owner_key(namespace, reference) {
            OwnerKey::At(kind, key) => (kind, key),
            OwnerKey::NotServed => return Ok(None),
            OwnerKey::Nowhere => return Ok(Some(false)),
        };
        let uid = reference.get("uid").and_then(Value::as_str);
        let has_uid = |json: &[u8]| -> Result<bool, ApiError> {
            let metadata = metadata_of(json)?;
            Ok(metadata.pointer("/metadata/uid").and_then(Value::as_str) == uid)
        };
        if let Some(cached) = self.cached(kind, &key)
            && has_uid(&cached.kv.value)?
        {
            return Ok(Some(true));
        }
        let name = reference.get("name").and_then(Value::as_str).unwrap_or("");
        let Some(entry) = self.scheme.kind(kind) else {
            return Ok(None); // no longer served
        };
        let resource = object::resource(entry.info);
        let stored = (self.storage.get(&key, 0).await)
            .map_err(|e| object::storage_error(e, &resource, name))?;
        match stored {
            Some(kv) => Ok(Some(has_uid(&kv.value)?)),
            None => Ok(Some(false)),
        }
    }
}
