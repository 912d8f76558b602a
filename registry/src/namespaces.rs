//! The namespace lifecycle (kube's namespace REST storage and its `finalize` subresource),
//! which the namespace controller (the API server's `controllers::namespace`) drives:
//!
//! - a created namespace carries the `kubernetes` finalizer in `spec.finalizers` (its
//!   strategy adds it);
//! - deleting it marks it: `deletionTimestamp`, phase `Terminating`, and creates in it are
//!   refused with kube's 403 from then on; it goes only once `spec.finalizers` is empty;
//! - the controller deletes its content (finalizers honoured, through the ordinary
//!   deletes), reports progress in its conditions, and when nothing is left removes
//!   `kubernetes` from `spec.finalizers` ([`Registry::finalize_namespace`]), which deletes
//!   the namespace unless `metadata.finalizers` still hold it;
//! - clients write `spec.finalizers` through the `finalize` subresource (any kind declared
//!   with `finalize`): an update that keeps the status and, unlike other updates of a
//!   namespace, takes `spec.finalizers` (`update.rs`).
//!
//! `default` cannot be deleted (403, as kube's NamespaceLifecycle admission).

use serde_json::{Value, json};

use super::guaranteed::Write;
use super::object::{self, MAX_RETRIES, OPTIMISTIC_LOCK, meta_str, set_meta};
use super::scale::set_path;
use super::{Registry, Target};
use kapi_core::error::ApiError;
use kapi_schema::metadata::finalizer_list;
use kapi_storage::{self as storage, KeyValue};

/// The namespace controller's finalizer.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

/// A namespace's `spec.finalizers`.
pub(crate) fn spec_finalizers(namespace: &Value) -> Vec<&str> {
    (namespace
        .pointer("/spec/finalizers")
        .and_then(Value::as_array))
    .into_iter()
    .flatten()
    .filter_map(Value::as_str)
    .collect()
}

impl Registry {
    /// The first delete of a namespace: marks it terminating (kube's namespace REST
    /// `Delete`); a delete of a terminating namespace without `spec.finalizers` deletes it
    /// as any object. Returns the namespace, and whether it is gone.
    pub(super) async fn delete_namespace(
        &self,
        target: Target<'_>,
        name: &str,
        mut kv: KeyValue,
        dry_run: bool,
    ) -> Result<Option<Value>, ApiError> {
        let resource = object::resource(target.kind.info);
        for _ in 0..MAX_RETRIES {
            let mut stored = object::decode(&kv)?;
            if meta_str(&stored, "deletionTimestamp").is_some() {
                if spec_finalizers(&stored).is_empty() {
                    return Ok(None);
                }
                let view =
                    object::stored_in_version(target.kind, &kv, target.version, kv.mod_revision)?;
                return Ok(Some(view));
            }
            set_meta(&mut stored, "deletionTimestamp", Some(object::now().into()));
            set_path(&mut stored, ".status.phase", json!("Terminating"));
            if dry_run {
                let mut view =
                    object::stored_in_version(target.kind, &kv, target.version, kv.mod_revision)?;
                set_meta(
                    &mut view,
                    "deletionTimestamp",
                    object::meta(&stored)
                        .and_then(|m| m.get("deletionTimestamp"))
                        .cloned(),
                );
                set_path(&mut view, ".status.phase", json!("Terminating"));
                return Ok(Some(view));
            }
            match (self.storage)
                .update(&kv.key, object::encode(stored)?, kv.mod_revision)
                .await
            {
                Ok(updated) => {
                    let view = object::stored_in_version(
                        target.kind,
                        &updated,
                        target.version,
                        updated.mod_revision,
                    )?;
                    return Ok(Some(view));
                }
                Err(storage::Error::Conflict { .. }) => {
                    kv = self
                        .stored_namespace(name)
                        .await?
                        .ok_or_else(|| ApiError::NotFound {
                            resource: resource.clone(),
                            name: name.to_owned(),
                        })?;
                }
                Err(e) => return Err(object::storage_error(e, &resource, name)),
            }
        }
        Err(ApiError::Conflict {
            resource,
            name: name.to_owned(),
            message: OPTIMISTIC_LOCK.into(),
        })
    }

    /// The stored namespace `name`, read from storage.
    pub(super) async fn stored_namespace(&self, name: &str) -> Result<Option<KeyValue>, ApiError> {
        let Some(namespaces) = self.namespaces() else {
            return Ok(None);
        };
        let resource = object::resource(namespaces.info);
        let key = self.keys().object(namespaces.info, None, name)?;
        (self.storage.get(&key, 0).await).map_err(|e| object::storage_error(e, &resource, name))
    }

    /// Sets the conditions of namespace `name`'s status (when they differ).
    pub async fn set_namespace_conditions(
        &self,
        name: &str,
        conditions: Vec<Value>,
    ) -> Result<(), ApiError> {
        let Some(namespaces) = self.namespaces() else {
            return Ok(());
        };
        let target = Target {
            kind: &namespaces,
            version: namespaces.info.storage_version().name,
            namespace: None,
        };
        let change = self.change_stored(target, name, false, |namespace, _| {
            let previous = namespace.pointer("/status/conditions").cloned();
            // A condition keeps its transition time while its status stays.
            let conditions: Vec<Value> = (conditions.iter())
                .map(|condition| {
                    let mut condition = condition.clone();
                    let before = (previous
                        .as_ref()
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten())
                    .find(|c| c["type"] == condition["type"]);
                    condition["lastTransitionTime"] = match before {
                        Some(before) if before["status"] == condition["status"] => {
                            before["lastTransitionTime"].clone()
                        }
                        _ => json!(object::now()),
                    };
                    condition
                })
                .collect();
            set_path(namespace, ".status.conditions", Value::Array(conditions));
            Ok(())
        });
        // A namespace gone meanwhile has no conditions to set.
        match change.await {
            Ok(_) | Err(ApiError::NotFound { .. }) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// What the namespace controller does when a namespace is empty: removes `finalizer`
    /// from its `spec.finalizers` (kube's `finalize`), which deletes it unless something
    /// else holds it. Returns whether it is gone.
    pub async fn finalize_namespace(&self, name: &str, finalizer: &str) -> Result<bool, ApiError> {
        let Some(namespaces) = self.namespaces() else {
            return Ok(false);
        };
        let target = Target {
            kind: &namespaces,
            version: namespaces.info.storage_version().name,
            namespace: None,
        };
        let written = self
            .write_spec_finalizers(target, name, |finalizers| {
                finalizers.into_iter().filter(|f| f != finalizer).collect()
            })
            .await;
        match written {
            Ok((_, gone)) => Ok(gone),
            Err(ApiError::NotFound { .. }) => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// Sets the stored object's `spec.finalizers` to `change` of them (compare-and-swap,
    /// retried), then deletes it if it is being deleted and nothing holds it any more.
    /// Returns it in the request's version, and whether it is gone.
    async fn write_spec_finalizers(
        &self,
        target: Target<'_>,
        name: &str,
        change: impl Fn(Vec<String>) -> Vec<String> + Send + Sync,
    ) -> Result<(Value, bool), ApiError> {
        let write = |namespace: &mut Value, _revision| {
            let before: Vec<String> = (spec_finalizers(namespace).into_iter())
                .map(str::to_owned)
                .collect();
            let after = change(before.clone());
            let goes = meta_str(namespace, "deletionTimestamp").is_some()
                && after.is_empty()
                && finalizer_list(namespace).is_empty();
            // Unchanged, the object is not written (nor given an empty list it lacked).
            if after != before {
                set_path(namespace, ".spec.finalizers", json!(after));
            }
            Ok(if goes { Write::Delete } else { Write::Store })
        };
        self.guaranteed_update(target, name, false, write).await
    }
}
