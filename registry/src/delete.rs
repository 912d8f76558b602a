//! Delete, delete collection, and the purge of a namespace's leftovers.
//!
//! kube's generic store `Delete`: the preconditions first (`rest.BeforeDelete`, with its
//! own message); an object with finalizers is not deleted but marked (kube's
//! `markAsDeleting`: `deletionTimestamp` now, `deletionGracePeriodSeconds` 0, the
//! generation bumped once), and answered as it now is; a delete repeated while it waits
//! writes nothing. The update that removes its last finalizer deletes it
//! (`update.rs`). A kind that deletes gracefully (`Strategy::deletes_gracefully`: kube's
//! Pods, when scheduled and running) is marked instead, `deletionTimestamp` its grace
//! period from now, as kube's `rest.BeforeDelete` marks it; a later delete may only
//! shorten the period. Nothing removes it when the period is over: in kube the kubelet
//! does, once the containers stopped, and kapi runs no kubelet (as envtest: a delete with
//! `gracePeriodSeconds=0`, `kubectl delete --force`, removes it). The finalizers kube's garbage collector works with
//! (`orphan`, `foregroundDeletion` from `propagationPolicy` or `orphanDependents`) are added
//! here, as kube's store adds them, for the collector (the API server's `controllers::gc`).
//!
//! The answer ([`answer`]) to a delete that removed the object is the object as it was,
//! with the revision of the delete as its resourceVersion, for kinds of named groups
//! (kube's custom-resource store sets `ReturnDeletedObject`); built-in kinds of the core
//! group answer with a `Success` Status naming the object instead (kube's generic store
//! without `ReturnDeletedObject`, e.g. ConfigMaps): code written against kube reads it
//! (the Python client's `delete_namespaced_config_map` hands the body over as a dict,
//! whose `status` is `Success`). A delete collection answers with the objects, for every
//! kind.
//!
//! Namespaces: a delete marks a namespace `Terminating` (`namespaces.rs`); the namespace
//! controller empties it and lets it go. `default` cannot be deleted, as in kube.

use serde_json::{Value, json};

use super::object::{self, MAX_RETRIES, OPTIMISTIC_LOCK, meta_str, set_meta};
use super::{Fields, ListOptions, ObjectList, Registry, SharedObject, Target, WriteOptions};
use crate::admission::{Attributes, Operation};
use kapi_core::api::KindInfo;
use kapi_core::error::ApiError;
use kapi_core::meta::{DeleteOptions, Status, StatusDetails};
use kapi_core::user::UserInfo;
use kapi_schema::metadata::{FOREGROUND, ORPHAN, finalizer_list, is_namespaces};
use kapi_storage as storage;

/// kube's `rest.BeforeDelete` preconditions, on the stored object (its own wording: the
/// conflict names the kind, not the resource).
fn check_preconditions(
    info: &KindInfo,
    stored: &Value,
    revision: storage::Revision,
    options: &DeleteOptions,
) -> Result<(), ApiError> {
    let Some(preconditions) = &options.preconditions else {
        return Ok(());
    };
    let name = meta_str(stored, "name").unwrap_or_default();
    let conflict = |message: String| ApiError::Conflict {
        resource: kapi_core::error::GroupResource::new(info.group, info.kind),
        name: name.to_owned(),
        message,
    };
    let uid = meta_str(stored, "uid").unwrap_or_default();
    if let Some(expected) = &preconditions.uid
        && expected != uid
    {
        return Err(conflict(format!(
            "the UID in the precondition ({expected}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
        )));
    }
    let revision = revision.to_string();
    if let Some(expected) = &preconditions.resource_version
        && *expected != revision
    {
        return Err(conflict(format!(
            "the ResourceVersion in the precondition ({expected}) does not match the ResourceVersion in record ({revision}). The object might have been modified"
        )));
    }
    Ok(())
}

/// kube's `deletionFinalizersForGarbageCollection`: `Orphan` adds the `orphan` finalizer
/// (the garbage collector takes the owner references off the dependents, then lets the
/// object go), `Foreground` adds `foregroundDeletion` (it deletes the dependents first),
/// `Background` removes both; without a policy the object's own finalizers decide, and
/// every kind's default is `Background` (no finalizer).
fn garbage_collection_finalizers(object: &mut Value, options: &DeleteOptions) {
    let current: Vec<String> = finalizer_list(object)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let policy = options.propagation_policy.as_deref();
    let orphan = match (options.orphan_dependents, policy) {
        (Some(orphan), _) => orphan,
        (None, Some("Orphan")) => true,
        (None, Some("Background" | "Foreground")) => false,
        _ => current.iter().any(|f| f == ORPHAN),
    };
    let foreground = match (options.orphan_dependents, policy) {
        (Some(_), _) => false,
        (None, Some("Foreground")) => true,
        (None, Some("Background" | "Orphan")) => false,
        _ => current.iter().any(|f| f == FOREGROUND),
    };
    let mut wanted: Vec<String> = (current.iter())
        .filter(|f| *f != ORPHAN && *f != FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        wanted.push(ORPHAN.into());
    }
    if foreground {
        wanted.push(FOREGROUND.into());
    }
    let as_set = |list: &[String]| {
        list.iter()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
    };
    if as_set(&wanted) != as_set(&current) {
        set_meta(object, "finalizers", Some(json!(wanted)));
    }
}

/// kube's `markAsDeleting`: the deletion is requested now (unless it already was), with no
/// grace period; the generation moves once, as for a spec change.
fn mark_as_deleting(object: &mut Value) {
    if meta_str(object, "deletionTimestamp").is_none() {
        let generation = object::generation(object);
        if generation > 0 {
            set_meta(object, "generation", Some(json!(generation + 1)));
        }
        set_meta(object, "deletionTimestamp", Some(object::now().into()));
    }
    set_meta(object, "deletionGracePeriodSeconds", Some(json!(0)));
}

/// What a delete does to an object of a kind that deletes gracefully (kube's
/// `rest.BeforeDelete`).
enum Grace {
    /// Nothing: its deletion is under way with a grace period no shorter than asked.
    Pending,
    /// Marked to go at `until`, `period` seconds after the delete (0: at once).
    Mark { until: String, period: i64 },
    /// Deleted at once (or marked for its finalizers).
    Now,
}

/// How a delete asking for `requested` seconds treats `stored`, whose kind gives it
/// `period`: a first delete marks it for `period`; once marked, only a shorter period
/// changes the marks (moving the deletion earlier), and a deletion with no grace left
/// goes on at once.
fn grace(stored: &Value, period: i64, requested: Option<i64>) -> Grace {
    let meta = super::object::meta(stored);
    let marked = meta
        .and_then(|m| m.get("deletionTimestamp"))
        .and_then(Value::as_str);
    let current = meta
        .and_then(|m| m.get("deletionGracePeriodSeconds"))
        .and_then(Value::as_i64);
    let Some(marked) = marked else {
        return match period > 0 {
            true => Grace::Mark {
                until: timestamp_in(std::time::SystemTime::now(), period),
                period,
            },
            false => Grace::Now,
        };
    };
    match (current, requested) {
        (None | Some(0), _) => Grace::Now,
        (Some(current), Some(requested)) if requested < current => {
            let start =
                humantime::parse_rfc3339(marked).unwrap_or_else(|_| std::time::SystemTime::now());
            let start = start - std::time::Duration::from_secs(current.max(0) as u64);
            Grace::Mark {
                until: timestamp_in(start, requested.max(0)),
                period: requested.max(0),
            }
        }
        _ => Grace::Pending,
    }
}

/// `seconds` after `from`, as kube writes a timestamp.
fn timestamp_in(from: std::time::SystemTime, seconds: i64) -> String {
    let at = from + std::time::Duration::from_secs(seconds.max(0) as u64);
    humantime::format_rfc3339_seconds(at).to_string()
}

/// `object` (a view) with the deletion marks of `held` (stored JSON): a dry run's answer.
fn with_deletion_marks(mut object: Value, held: &Value) -> Value {
    for field in [
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        let value = super::object::meta(held)
            .and_then(|m| m.get(field))
            .cloned();
        set_meta(&mut object, field, value);
    }
    object
}

/// What a delete of one object answers, given the object as deleted: the object itself,
/// or for a kind declared `delete_status` (kube's built-in kinds, but those whose stores
/// return the deleted object) a `Success` Status with the object's name, group, plural
/// (as `kind`, as kube sets it) and uid.
pub(super) fn answer(info: &KindInfo, deleted: Value) -> Value {
    if !info.delete_status {
        return deleted;
    }
    // A kind served from another's storage answers as that storage does (kube's
    // `events.k8s.io` Events name the core `events`).
    let info = info.stored_with.unwrap_or(info);
    let meta = |key| meta_str(&deleted, key).map(str::to_owned);
    let status = Status {
        kind: Some("Status".into()),
        api_version: Some("v1".into()),
        status: Some("Success".into()),
        details: Some(StatusDetails {
            name: meta("name"),
            // The core group has no name: kube leaves `group` out.
            group: Some(info.group.to_owned()).filter(|g| !g.is_empty()),
            kind: Some(info.plural.to_owned()),
            uid: meta("uid"),
            ..StatusDetails::default()
        }),
        ..Status::default()
    };
    serde_json::to_value(status).unwrap_or(deleted)
}

/// The namespaces kube-apiserver makes at start.
const SYSTEM_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// What a delete did.
#[derive(Debug)]
pub struct Deleted {
    /// The object as it was when it is gone, or as it now is when its grace period or
    /// finalizers hold it; from [`Registry::delete_as`], what the delete answers (a
    /// `Success` Status for kube's own kinds once gone, as kube's store answers).
    pub answer: Value,
    /// The object is gone (rather than held).
    pub gone: bool,
    /// Admission's warnings, for the client.
    pub warnings: Vec<String>,
}

impl Deleted {
    fn new(answer: Value, gone: bool, warnings: Vec<String>) -> Deleted {
        Deleted {
            answer,
            gone,
            warnings,
        }
    }
}

impl Registry {
    /// Deletes (or, with finalizers, marks) an object (`admit`: through admission, unless
    /// it was admitted as something else); returns it as it was or now is.
    pub(super) async fn delete_object(
        &self,
        target: Target<'_>,
        name: &str,
        options: &DeleteOptions,
        user: Option<&UserInfo>,
        admit: bool,
    ) -> Result<Deleted, ApiError> {
        let kind = target.kind;
        let info = kind.info;
        let resource = object::resource(info);
        let key = self.keys().object(info, target.namespace, name)?;
        let dry_run = (options.dry_run.iter().flatten()).any(|d| d == "All");
        if is_namespaces(info) && name == "default" {
            return Err(ApiError::Forbidden {
                resource,
                name: name.to_owned(),
                message: "this namespace may not be deleted".to_owned(),
            });
        }
        for _ in 0..MAX_RETRIES {
            let kv = (self.storage.get(&key, 0).await)
                .map_err(|e| object::storage_error(e, &resource, name))?
                .ok_or_else(|| ApiError::NotFound {
                    resource: resource.clone(),
                    name: name.to_owned(),
                })?;
            let stored = object::decode(&kv)?;
            check_preconditions(info, &stored, kv.mod_revision, options)?;
            // kube's REST overrides that refuse (a system PriorityClass).
            if kind.refuses_deletes()
                && let Some(message) = kind.delete_refused(&object::decode_hub(kind, &kv)?)
            {
                return Err(ApiError::Forbidden {
                    resource,
                    name: name.to_owned(),
                    message,
                });
            }
            let warnings = match admit {
                true => (self.admit_delete(target, name, options, user, dry_run, &kv)).await?,
                false => Vec::new(),
            };
            // A namespace is first marked terminating; it goes once its controller has
            // emptied it and cleared `spec.finalizers` (`namespaces.rs`).
            if is_namespaces(info)
                && let Some(namespace) = self
                    .delete_namespace(target, name, kv.clone(), dry_run)
                    .await?
            {
                return Ok(Deleted::new(namespace, false, warnings));
            }
            let mut held = stored.clone();
            // The kind's own rules for a first delete (a definition's cleanup finalizer).
            if kind.has_delete_rules() && meta_str(&stored, "deletionTimestamp").is_none() {
                let mut hub = (kind.from_stored(stored.clone()))
                    .map_err(|e| object::internal(e.to_string()))?;
                kind.prepare_for_delete(&mut hub);
                held = (kind.to_stored(hub)).map_err(|e| object::internal(e.to_string()))?;
            }
            // A kind that deletes gracefully (kube's Pods): marked for its grace period.
            let grace = match kind.deletes_gracefully() {
                true => {
                    let hub = object::decode_hub(kind, &kv)?;
                    let period = kind.grace_period(&hub, options.grace_period_seconds);
                    grace(&stored, period.unwrap_or(0), options.grace_period_seconds)
                }
                false => Grace::Now,
            };
            let graceful = match grace {
                Grace::Pending => {
                    let object =
                        object::stored_in_version(kind, &kv, target.version, kv.mod_revision)?;
                    return Ok(Deleted::new(object, false, warnings));
                }
                Grace::Mark { until, period } => {
                    if meta_str(&held, "deletionTimestamp").is_none() {
                        let generation = object::generation(&held);
                        if generation > 0 {
                            set_meta(&mut held, "generation", Some(json!(generation + 1)));
                        }
                    }
                    set_meta(&mut held, "deletionTimestamp", Some(until.into()));
                    set_meta(&mut held, "deletionGracePeriodSeconds", Some(json!(period)));
                    period > 0
                }
                Grace::Now => false,
            };
            garbage_collection_finalizers(&mut held, options);
            if graceful || !finalizer_list(&held).is_empty() {
                // Held by its grace period or its finalizers: marked, not deleted.
                if !graceful {
                    mark_as_deleting(&mut held);
                }
                if held == stored || dry_run {
                    let object =
                        object::stored_in_version(kind, &kv, target.version, kv.mod_revision)?;
                    let object = match held == stored {
                        true => object,
                        false => with_deletion_marks(object, &held),
                    };
                    return Ok(Deleted::new(object, false, warnings));
                }
                match (self.storage)
                    .update(&key, object::encode(held)?, kv.mod_revision)
                    .await
                {
                    Ok(updated) => {
                        let object = object::stored_in_version(
                            kind,
                            &updated,
                            target.version,
                            updated.mod_revision,
                        )?;
                        return Ok(Deleted::new(object, false, warnings));
                    }
                    Err(storage::Error::Conflict { .. }) => continue,
                    Err(e) => return Err(object::storage_error(e, &resource, name)),
                }
            }
            if dry_run {
                let object = object::stored_in_version(kind, &kv, target.version, kv.mod_revision)?;
                return Ok(Deleted::new(object, true, warnings));
            }
            match self.storage.delete(&key, Some(kv.mod_revision)).await {
                Ok(deleted) => {
                    // kube's `AfterDelete` (a Service gives its cluster IPs back).
                    if let Some(hooks) = self.write_hooks_of(info) {
                        hooks.after_delete(self, &stored).await;
                    }
                    let object = object::stored_in_version(
                        kind,
                        &deleted.prev,
                        target.version,
                        deleted.revision,
                    )?;
                    return Ok(Deleted::new(object, true, warnings));
                }
                Err(storage::Error::Conflict { .. }) => continue,
                Err(e) => return Err(object::storage_error(e, &resource, name)),
            }
        }
        Err(ApiError::Conflict {
            resource,
            name: name.to_owned(),
            message: OPTIMISTIC_LOCK.into(),
        })
    }

    /// The admission of a delete, the stored object (in the request's version) its
    /// `oldObject` and no object (kube's `AdmissionToValidateObjectDeleteFunc`): the
    /// mutating side, which may refuse it but has nothing to change, then the validating
    /// side: their warnings.
    async fn admit_delete(
        &self,
        target: Target<'_>,
        name: &str,
        options: &DeleteOptions,
        user: Option<&UserInfo>,
        dry_run: bool,
        kv: &storage::KeyValue,
    ) -> Result<Vec<String>, ApiError> {
        let mut admission_options = serde_json::to_value(options).unwrap_or_default();
        admission_options["kind"] = Value::from("DeleteOptions");
        admission_options["apiVersion"] = Value::from("meta.k8s.io/v1");
        let attributes = Attributes {
            operation: Operation::Delete,
            kind: target.kind,
            version: target.version,
            subresource: "",
            namespace: target.namespace,
            name,
            user,
            dry_run,
            options: &admission_options,
            object_kind: None,
        };
        let configured = self.webhooks_configured(&attributes).await?;
        let mut warnings = Vec::new();
        if configured == (false, false) {
            return Ok(warnings);
        }
        let old = object::stored_in_version(target.kind, kv, target.version, kv.mod_revision)?;
        let admitted = self.admit_through(
            &attributes,
            configured,
            Value::Null,
            Some(&old),
            &mut warnings,
        );
        admitted.await?;
        Ok(warnings)
    }

    /// Deletes the objects of `target` that `list` matches, each through admission: the
    /// list of them as they were or now are, and admission's warnings.
    pub(super) async fn delete_objects(
        &self,
        target: Target<'_>,
        list: &ListOptions,
        options: &DeleteOptions,
        user: Option<&UserInfo>,
    ) -> Result<(ObjectList, Vec<String>), ApiError> {
        let matching = self.list_objects(target, list).await?;
        let mut deleted = Vec::with_capacity(matching.items.len());
        let mut warnings = Vec::new();
        for item in &matching.items {
            let item = item.value();
            let name = meta_str(&item, "name").unwrap_or_default();
            let one = Target {
                namespace: meta_str(&item, "namespace").or(target.namespace),
                ..target
            };
            match self.delete_object(one, name, options, user, true).await {
                Ok(one) => {
                    deleted.push(SharedObject::from(one.answer));
                    warnings.extend(one.warnings);
                }
                Err(ApiError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        let list = ObjectList {
            items: deleted,
            ..matching
        };
        Ok((list, warnings))
    }

    /// Deletes every namespaced object in `namespace` created at or before `created_by`.
    pub(super) async fn purge_namespace(
        &self,
        namespace: &str,
        created_by: storage::Revision,
    ) -> Result<(), ApiError> {
        let stored = self.stored_in_namespace(namespace).await?;
        for (kind, kv) in stored
            .iter()
            .filter(|(_, kv)| kv.create_revision <= created_by)
        {
            match self.storage.delete(&kv.key, None).await {
                Ok(deleted) => {
                    let hooks = (self.scheme.kind(*kind)).and_then(|k| self.write_hooks_of(k.info));
                    if let Some(hooks) = hooks {
                        hooks
                            .after_delete(self, &object::decode(&deleted.prev)?)
                            .await;
                    }
                }
                Err(storage::Error::NotFound { .. }) => {}
                Err(e) => {
                    let Some(kind) = self.scheme.kind(*kind) else {
                        return Err(object::internal(e.to_string()));
                    };
                    return Err(object::storage_error(e, &object::resource(kind.info), ""));
                }
            }
        }
        Ok(())
    }

    /// At start-up: creates kube's system namespaces when missing (`default`, kube's
    /// bootstrap controller's; `kube-system`, `kube-public` and `kube-node-lease`, its
    /// system namespaces controller's, which kube also re-creates each minute), through
    /// the normal create path (so they get their phase and finalizer), written by
    /// `kube-apiserver` as kube's are. Namespaces left terminating are the namespace
    /// controller's, which picks them up when it starts.
    pub(super) async fn start_namespaces(&self) -> Result<(), ApiError> {
        let Some(namespaces) = self.namespaces() else {
            return Ok(());
        };
        let target = Target {
            kind: &namespaces,
            version: namespaces.info.storage_version().name,
            namespace: None,
        };
        let options = WriteOptions {
            field_manager: Some("kube-apiserver".into()),
            ..WriteOptions::default()
        };
        for name in SYSTEM_NAMESPACES {
            let namespace = json!({"metadata": {"name": name}});
            match (self.create_object(target, namespace, &options, Fields::Update)).await {
                Ok(_) | Err(ApiError::AlreadyExists { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
