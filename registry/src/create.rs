//! Create (`POST`): kube's create handler, `Store.Create` and `rest.BeforeCreate`.
//!
//! Order: type meta -> unknown fields -> the namespace exists and is not terminating ->
//! the body's namespace -> (status dropped) -> defaults -> mutating admission (its result
//! defaulted again) -> decode -> server-set metadata (name from
//! `generateName`, uid, creationTimestamp, generation 1) -> field management (the creator
//! owns what it set, defaults included; an apply that creates brings its own) ->
//! `prepare_for_create` ->
//! validation (the version's schema, after its defaults before decoding; metadata, replica
//! paths, the kind's `validate`) -> validating admission -> `canonicalize` -> the storage
//! create (a generated name
//! is drawn again on a collision).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use super::body::{self, Expected};
use super::field_paths;
use super::new_metadata::NewMetadata;
use super::object::{self, MAX_RETRIES, internal, meta_str, set_meta};
use super::schema_checks::not_reported;
use super::{Fields, Registry, Target, WriteOptions, Written};
use crate::admission::{Attributes, Operation};
use crate::write_hooks::Finishing;
use kapi_core::error::{ApiError, GroupResource};
use kapi_schema::metadata::{self as validation, is_namespaces};
use kapi_storage::{self as storage, Guard};

/// kube's `maxNameGenerationCreateAttempts`.
const NAME_GENERATION_ATTEMPTS: usize = 8;

impl Registry {
    pub(super) async fn create_object(
        &self,
        target: Target<'_>,
        mut body: Value,
        options: &WriteOptions,
        fields: Fields,
    ) -> Result<Written, ApiError> {
        let kind = target.kind;
        let info = kind.info;
        let resource = object::resource(info);
        if kind.is_terminating() {
            return Err(ApiError::DefinitionTerminating {
                resource,
                verb: "create".into(),
            });
        }
        let api_version = kind.api_version(target.version);
        let expected = Expected {
            api_version: &api_version,
            kind: info.kind,
        };
        let mut warnings = body::check_new(target, &body, options, expected)?;
        // A resourceVersion a create carries is refused by kube's storage, at the write: a
        // number above zero (what its versioner parses; others are ignored).
        let versioned = meta_str(&body, "resourceVersion")
            .and_then(|version| version.parse::<u64>().ok())
            .is_some_and(|version| version > 0);
        // The namespace it goes into, with the guard of its check.
        let mut guarded = None;
        if let (kapi_core::api::Scope::Namespaced, Some(namespace)) = (info.scope, target.namespace)
        {
            let name = meta_str(&body, "name").unwrap_or_default();
            let guard = (self.namespace_guard(namespace, &resource, name, false)).await?;
            guarded = guard.map(|guard| (namespace, guard));
        }
        body::ensure_namespace(&mut body, info, target.namespace)?;
        if info.subresources.status
            && let Some(fields) = body.as_object_mut()
        {
            fields.remove("status");
        }

        // Defaults and schema errors, in the request's version (kube: default on decode).
        let (mut schema_errors, mut schema_warnings) =
            self.apply_schema(target, &mut body, None)?;
        let body_name = meta_str(&body, "name").unwrap_or_default().to_owned();
        let admission_options = Registry::options_json("CreateOptions", options);
        let attributes = Attributes {
            operation: Operation::Create,
            kind,
            version: target.version,
            subresource: "",
            namespace: target.namespace,
            name: &body_name,
            user: options.user.as_ref(),
            dry_run: options.dry_run,
            options: &admission_options,
            object_kind: None,
        };
        let (mutating, validating) = self.webhooks_configured(&attributes).await?;
        // The mutating admission, on the object as decoded; what it makes is defaulted and
        // validated again (kube: admission before the strategy's validation). The creator
        // owns what it sent, not what admission added: kube's field manager runs first.
        let mut unmutated = None;
        if mutating {
            let (mutated, admission_warnings) =
                (self.mutating_admission(&attributes, body.clone(), None)).await?;
            warnings.extend(admission_warnings);
            if mutated != body {
                unmutated = Some(std::mem::replace(&mut body, mutated));
                (schema_errors, schema_warnings) = self.apply_schema(target, &mut body, None)?;
            }
        }
        warnings.extend(schema_warnings);
        let mut hub = match kind.to_hub(body, target.version) {
            Ok(hub) => hub,
            // The schema already says why it does not decode (a type, an enum).
            Err(_) if !schema_errors.is_empty() => {
                return Err(ApiError::Invalid {
                    group: info.storage_kind().group.into(),
                    kind: info.storage_kind().kind.into(),
                    name: body_name,
                    causes: schema_errors,
                });
            }
            Err(e @ kapi_core::scheme::ConversionError::Webhook(_)) => return Err(internal(e)),
            Err(e) => return Err(expected.decode_error(e)),
        };
        let new_metadata = NewMetadata::new(info.tracks_generation());
        let typed = kind.metadata_mut(&mut hub).is_some();
        let (mut hub, mut json, generate_prefix, field_errors) = match typed {
            true => {
                #[cfg(debug_assertions)]
                let by_json = {
                    let mut json = kind.hub_json(&hub).map_err(internal)?;
                    new_metadata.set_json(&mut json);
                    json
                };
                let metadata = (kind.metadata_mut(&mut hub))
                    .ok_or_else(|| internal("the hub's metadata went away"))?;
                let prefix = new_metadata.set(metadata)?;
                #[cfg(debug_assertions)]
                {
                    let by_json = kind.hub_from_json(by_json).map_err(internal)?;
                    debug_assert_eq!(
                        kind.hub_json(&hub).map_err(internal)?,
                        kind.hub_json(&by_json).map_err(internal)?,
                        "a new {}'s metadata set on its type is not as set on its JSON",
                        info.kind
                    );
                }
                let mut field_errors = Vec::new();
                if fields == Fields::Update {
                    let view = match &unmutated {
                        Some(sent) => match kind.to_hub(sent.clone(), target.version) {
                            Ok(sent) => kind.from_hub_ref(&sent, target.version),
                            Err(_) => kind.from_hub_ref(&hub, target.version),
                        },
                        None => kind.from_hub_ref(&hub, target.version),
                    };
                    let view = view.map_err(internal)?;
                    match self.manage_fields(target, None, &view, "", options) {
                        Ok(managed) => {
                            let managed = managed.into_typed().map_err(internal)?;
                            if let Some(metadata) = kind.metadata_mut(&mut hub) {
                                metadata.managed_fields = managed;
                            }
                        }
                        Err(errors) => field_errors = errors,
                    }
                }
                kind.prepare_for_create(&mut hub, options.user.as_ref());
                let json = kind.hub_json(&hub).map_err(internal)?;
                (hub, json, prefix, field_errors)
            }
            false => {
                let mut json = kind.hub_json(&hub).map_err(internal)?;
                let prefix = new_metadata.set_json(&mut json);
                let mut field_errors = Vec::new();
                if fields == Fields::Update {
                    let view = match &unmutated {
                        Some(sent) => sent.clone(),
                        None => kind.hub_json_in(&json, target.version).map_err(internal)?,
                    };
                    match self.manage_fields(target, None, &view, "", options) {
                        Ok(managed) => set_meta(&mut json, "managedFields", managed.into_json()),
                        Err(errors) => field_errors = errors,
                    }
                }
                let mut hub = kind.hub_from_json(json).map_err(internal)?;
                kind.prepare_for_create(&mut hub, options.user.as_ref());
                let json = kind.hub_json(&hub).map_err(internal)?;
                (hub, json, prefix, field_errors)
            }
        };
        // kube's `BeginCreate` (a Service's cluster IPs and node ports), before validation;
        // given back unless the object is stored.
        let finishing = match self.write_hooks_of(info) {
            Some(hooks) => {
                let finish = (hooks.begin_create(self, &mut json, options.dry_run)).await?;
                hub = kind.hub_from_json_ref(&json).map_err(internal)?;
                Finishing::new(finish)
            }
            None => Finishing::new(None),
        };
        let name = meta_str(&json, "name").unwrap_or_default().to_owned();
        let mut errors = schema_errors;
        errors.extend(field_errors);
        errors.extend(validation::object_meta(info, &json, true));
        let scale_errors = validation::scale(info, &json);
        errors.extend(not_reported(scale_errors, &errors));
        let own = kind.validate(&hub, target.version);
        errors.extend(field_paths::to_version(kind, target.version, &json, own));
        if !errors.is_empty() {
            return Err(ApiError::Invalid {
                group: info.storage_kind().group.into(),
                kind: info.storage_kind().kind.into(),
                name,
                causes: errors,
            });
        }
        // A valid object's own warnings (kube's `WarningsOnCreate`).
        warnings.extend(kind.warnings(&hub, None));
        if validating {
            let view = kind.hub_json_in(&json, target.version).map_err(internal)?;
            let attributes = Attributes {
                name: &name,
                ..attributes
            };
            let hubs = Some((&json, None));
            let admission_warnings =
                (self.validating_admission(&attributes, Some(&view), None, hubs)).await?;
            warnings.extend(admission_warnings);
        } else {
            self.admit(info, options.user.as_ref(), &json, None)?;
        }
        // kube's storage refuses it here, after validation and admission (a dry run never
        // reaches it), with a plain error kube-apiserver 1.20 answers 500; the client sent
        // it, so it is the client's error: 400, kube's message.
        if versioned && !options.dry_run {
            return Err(ApiError::BadRequest(
                "resourceVersion should not be set on objects to be created".into(),
            ));
        }
        let namespace = meta_str(&json, "namespace").map(str::to_owned);
        let uid = meta_str(&json, "uid").map(str::to_owned);
        // Without a canonical form the hub is what was validated: its JSON is at hand.
        let at_hand = (!kind.canonicalize(&mut hub)).then_some(&json);
        let mut value = Bytes::from(kind.stored_bytes(hub, at_hand).map_err(internal)?);

        let keys = self.keys();
        let mut name = name;
        let mut attempts = 0;
        let mut guard_checks = 0;
        let mut cut_off = 0;
        // A write cut off in flight and the read that settles it answer within one
        // storage deadline: the client learns the outcome is unknown in time.
        let result = storage::deadline::shared(async {
            loop {
                let key = keys.object(info, namespace.as_deref(), &name)?;
                if options.dry_run {
                    return match self.storage.get(&key, 0).await {
                        Ok(Some(_)) => Err(ApiError::AlreadyExists { resource, name }),
                        Ok(None) => {
                            let stored = object::decode_bytes(&key, &value)?;
                            let object =
                                (kind.stored_to(stored, target.version)).map_err(internal)?;
                            Ok(Written::new(object, true, warnings))
                        }
                        Err(e) => Err(object::storage_error(e, &resource, &name)),
                    };
                }
                // Its own requests, not the write's deadline.
                if is_namespaces(info) {
                    storage::deadline::shared(self.purge_orphans(&key, &name)).await?;
                }
                let created = match &guarded {
                    Some((_, guard)) => {
                        self.storage
                            .create_guarded(&key, value.clone(), guard)
                            .await
                    }
                    None => self.storage.create(&key, value.clone()).await,
                };
                match created {
                    Ok(kv) => {
                        let mut written = object::written_in_version(
                            kind,
                            &kv.key,
                            &value,
                            target.version,
                            kv.mod_revision,
                        )?;
                        written.created = true;
                        written.warnings = warnings;
                        return Ok(written);
                    }
                    Err(storage::Error::AlreadyExists { .. })
                        if generate_prefix.is_some() && attempts + 1 < NAME_GENERATION_ATTEMPTS =>
                    {
                        attempts += 1;
                        name =
                            object::generate_name(generate_prefix.as_deref().unwrap_or_default());
                        let mut stored = object::decode_bytes(&key, &value)?;
                        set_meta(&mut stored, "name", Some(Value::String(name.clone())));
                        value = object::encode(stored)?;
                    }
                    // The namespace changed since it was checked: check again.
                    Err(storage::Error::Conflict { key: changed, .. })
                        if guarded
                            .as_ref()
                            .is_some_and(|(_, guard)| guard.key == changed)
                            && guard_checks < MAX_RETRIES =>
                    {
                        guard_checks += 1;
                        let namespace = guarded.as_ref().map_or("", |(namespace, _)| namespace);
                        let guard =
                            (self.namespace_guard(namespace, &resource, &name, true)).await?;
                        guarded = guard.map(|guard| (namespace, guard));
                    }
                    // Cut off in flight (an etcd election: a proposal to a member that had not
                    // noticed its leader's death): the write may or may not have been applied.
                    // A linearizable read of the key rides out the election and tells by the
                    // uid: ours is this create's success, none is written again, another's
                    // exists. A read that fails leaves the write's fate unknown: the timeout
                    // (504) says so.
                    Err(error @ storage::Error::Timeout(_)) if cut_off < MAX_RETRIES => {
                        cut_off += 1;
                        match self.settle(&key, uid.as_deref()).await {
                            Ok(Settled::Ours(kv)) => {
                                return settled(kind, &kv, target.version, warnings);
                            }
                            Ok(Settled::Absent) => {}
                            Ok(Settled::Other) => {
                                return Err(ApiError::AlreadyExists { resource, name });
                            }
                            Err(_) => return Err(object::storage_error(error, &resource, &name)),
                        }
                    }
                    // After a cut, the first proposal may have landed after the read: the
                    // object in the way may be this create's own.
                    Err(error @ storage::Error::AlreadyExists { .. }) if cut_off > 0 => {
                        if let Ok(Settled::Ours(kv)) = self.settle(&key, uid.as_deref()).await {
                            return settled(kind, &kv, target.version, warnings);
                        }
                        return Err(object::storage_error(error, &resource, &name));
                    }
                    Err(e) => return Err(object::storage_error(e, &resource, &name)),
                }
            }
        })
        .await;
        match result.is_ok() {
            true => finishing.succeeded().await,
            false => finishing.failed().await,
        }
        result
    }

    /// What a create cut off in flight finds at its `key`, told apart by `uid` (the one
    /// it wrote), read linearizably.
    async fn settle(&self, key: &str, uid: Option<&str>) -> storage::Result<Settled> {
        let Some(kv) = self.storage.get(key, 0).await? else {
            return Ok(Settled::Absent);
        };
        let existing: Value = serde_json::from_slice(&kv.value)
            .map_err(|e| storage::Error::Internal(format!("decoding {key}: {e}")))?;
        Ok(match uid.is_some() && meta_str(&existing, "uid") == uid {
            true => Settled::Ours(kv),
            false => Settled::Other,
        })
    }

    /// Before a namespace is created: removes what a create that raced the deletion of an
    /// earlier namespace of that name left behind, so that it does not reappear. Creates
    /// are guarded by their namespace's revision now, so only a store written before that
    /// (or by another writer) holds such content; this keeps it from resurfacing. Only
    /// objects created while the namespace was missing are removed: content of a namespace
    /// created meanwhile by someone else is younger than the revision read here.
    async fn purge_orphans(&self, key: &str, namespace: &str) -> Result<(), ApiError> {
        let resource = GroupResource::new("", "namespaces");
        let failed = |e| object::storage_error(e, &resource, namespace);
        let revision = self.storage.current_revision().await.map_err(failed)?;
        if self
            .storage
            .get(key, revision)
            .await
            .map_err(failed)?
            .is_none()
        {
            self.purge_namespace(namespace, revision).await?;
        }
        Ok(())
    }

    /// The core `namespaces` kind, when the scheme has it.
    pub(super) fn namespaces(&self) -> Option<Arc<kapi_core::scheme::KindEntry>> {
        (self.scheme.by_resource("", "namespaces")).filter(|k| is_namespaces(k.info))
    }

    /// kube's `NamespaceLifecycle` admission: content may only be created in a namespace
    /// that exists and is not terminating. Answers with the [`Guard`] the create is made
    /// under: the namespace's key at the mod revision it was read at (`None` when the
    /// scheme has no namespaces), so a namespace marked terminating or deleted between this
    /// check and the write is noticed by the store ([`storage::Error::Conflict`] on its
    /// key), and the create checks again.
    ///
    /// The namespace is read from its watch cache, as kube's admission reads its informer
    /// (a linearizable read per create cost etcd as much as the create), unless `live` or
    /// the cache does not have it: a stale entry is harmless, since the guard's revision
    /// is compared in the create's own transaction, and a conflict checks again, live.
    pub(super) async fn namespace_guard(
        &self,
        namespace: &str,
        resource: &GroupResource,
        name: &str,
        live: bool,
    ) -> Result<Option<Guard>, ApiError> {
        let Some(namespaces) = self.namespaces() else {
            return Ok(None);
        };
        let namespaces_resource = object::resource(namespaces.info);
        let key = self.keys().object(namespaces.info, None, namespace)?;
        let cached = (!live)
            .then(|| self.caches.for_prefix(&key))
            .flatten()
            .and_then(|cache| cache.get(&key).ok())
            .and_then(|(object, _)| object)
            .map(|object| object.kv.clone());
        let kv = match cached {
            Some(kv) => kv,
            None => (self.storage.get(&key, 0).await)
                .map_err(|e| object::storage_error(e, &namespaces_resource, namespace))?
                .ok_or_else(|| ApiError::NotFound {
                    resource: namespaces_resource.clone(),
                    name: namespace.to_owned(),
                })?,
        };
        let phase: NamespacePhase = serde_json::from_slice(&kv.value).map_err(internal)?;
        if phase.status.phase.as_deref() == Some(TERMINATING) {
            return Err(ApiError::Forbidden {
                resource: resource.clone(),
                name: name.to_owned(),
                message: format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            });
        }
        Ok(Some(Guard {
            key,
            mod_revision: kv.mod_revision,
        }))
    }
}

/// The answer of a create settled as written after a cut: its object as stored.
fn settled(
    kind: &kapi_core::scheme::KindEntry,
    kv: &storage::KeyValue,
    version: &str,
    warnings: Vec<String>,
) -> Result<Written, ApiError> {
    let object = object::stored_in_version(kind, kv, version, kv.mod_revision)?;
    Ok(Written::new(object, true, warnings))
}

/// What a create cut off in flight finds at its key.
enum Settled {
    /// Its own object: it was written.
    Ours(storage::KeyValue),
    /// Nothing: it was not.
    Absent,
    /// Another create's object.
    Other,
}

/// The part of a stored namespace the lifecycle check reads.
#[derive(serde::Deserialize)]
struct NamespacePhase {
    #[serde(default)]
    status: NamespaceStatus,
}

#[derive(serde::Deserialize, Default)]
struct NamespaceStatus {
    phase: Option<String>,
}

/// A terminating namespace's `status.phase`.
const TERMINATING: &str = "Terminating";
