//! Update (`PUT`) and patch (`PATCH`) of an object, its `status` or its `scale`: kube's
//! `Store.Update` over `GuaranteedUpdate`, with `rest.BeforeUpdate` and apiextensions'
//! status and scale strategies.
//!
//! One loop serves them all: read the object; apply the change to the view the request
//! addresses (the object in the request's version, or its Scale) -- a replacement body or a
//! patch; check the view's resourceVersion (a precondition when set) and uid; turn the
//! view back into the object (a Scale only writes the spec replica path); apply the
//! generic rules (immutable metadata, the status/spec split) after the view's schema
//! defaults (its schema errors join the validation below) and the mutating admission
//! webhooks (their result defaulted again); `prepare_for_update`;
//! bump `metadata.generation` when anything but metadata (and status, for kinds with a
//! status subresource) changed; validate; validating admission; `canonicalize`; then
//! compare-and-swap on the
//! revision read. Losing the race re-reads and starts over, so an update without a
//! resourceVersion (and every patch that does not set one) never fails on a concurrent
//! write; one with a stale resourceVersion gets kube's 409. An update that changes nothing
//! is not written (kube's etcd store skips identical bytes) and keeps its resourceVersion.

use bytes::Bytes;
use serde_json::{Value, json};

use super::body::{self, Expected};
use super::field_paths;
use super::object::{self, MAX_RETRIES, OPTIMISTIC_LOCK, internal, meta_str, set_meta};
use super::patch::{self, Failure};
use super::scale::{self, set_path};
use super::schema_checks::not_reported;
use super::update_rules::{apply_update_rules, deletes_on_update, generation_moves};
use super::{Fields, PatchType, Registry, Subresource, Target, WriteOptions, Written};
use crate::admission::{Attributes, Operation};
use crate::write_hooks::Finishing;
use kapi_core::api::{KindInfo, ScaleInfo};
use kapi_core::error::{ApiError, FieldError, FieldErrorType, GroupResource};
use kapi_core::meta::Scale;
use kapi_core::scheme::{ErasedHub, KindEntry};
use kapi_fieldmanager::typed::{self, TypeRef};
use kapi_storage::{self as storage, Revision};

/// What an update does to the addressed view of the object.
pub(super) enum Change<'a> {
    /// `PUT`: the new view.
    Replace(Value),
    /// `PATCH`: a patch of the current view.
    Patch(PatchType, &'a Value),
}

/// What one request addresses.
struct Request<'a> {
    kind: &'a KindEntry,
    target: Target<'a>,
    name: &'a str,
    subresource: Option<Subresource>,
    resource: GroupResource,
    key: String,
}

impl Request<'_> {
    fn info(&self) -> &'static KindInfo {
        self.kind.info
    }

    fn scale_info(&self) -> Result<&'static ScaleInfo, ApiError> {
        self.info()
            .subresources
            .scale
            .as_ref()
            .ok_or(ApiError::NoRoute)
    }

    /// The type the view must be: the kind in the request's version, or a Scale.
    fn expected<'s>(&self, api_version: &'s str) -> Expected<'s> {
        match self.subresource {
            Some(Subresource::Scale) => Expected {
                api_version: "autoscaling/v1",
                kind: "Scale",
            },
            _ => Expected {
                api_version,
                kind: self.info().kind,
            },
        }
    }

    fn not_found(&self) -> ApiError {
        ApiError::NotFound {
            resource: self.resource.clone(),
            name: self.name.to_owned(),
        }
    }

    fn conflict(&self, message: impl Into<String>) -> ApiError {
        ApiError::Conflict {
            resource: self.resource.clone(),
            name: self.name.to_owned(),
            message: message.into(),
        }
    }

    /// kube names the kind of the internal object, so a kind stored with another is
    /// reported as that kind (`Event "x" is invalid` through `events.k8s.io`).
    fn invalid(&self, causes: Vec<FieldError>) -> ApiError {
        ApiError::Invalid {
            group: self.info().storage_kind().group.into(),
            kind: self.info().storage_kind().kind.into(),
            name: self.name.to_owned(),
            causes,
        }
    }

    /// The view of an object (hub JSON) the request addresses, at `revision`.
    fn view(&self, hub: &Value, revision: Revision) -> Result<Value, ApiError> {
        if self.subresource == Some(Subresource::Scale) {
            return Ok(scale::view(self.scale_info()?, hub, revision));
        }
        let mut view = self.in_version(hub)?;
        object::set_resource_version(&mut view, revision);
        Ok(view)
    }

    /// An object (hub JSON) in the request's version, without resourceVersion.
    fn in_version(&self, hub: &Value) -> Result<Value, ApiError> {
        (self.kind.hub_json_in(hub, self.target.version)).map_err(internal)
    }

    /// The view of what was just written (`new`, hub JSON; `stored`, as the storage
    /// version keeps it) at `revision`: a Scale of `new`, or the object as a create
    /// answers it ([`object::written_in_version`]).
    fn written_view(
        &self,
        new: &Value,
        stored: &[u8],
        revision: Revision,
    ) -> Result<Written, ApiError> {
        if self.subresource == Some(Subresource::Scale) {
            return Ok(Written::new(self.view(new, revision)?, false, Vec::new()));
        }
        object::written_in_version(self.kind, &self.key, stored, self.target.version, revision)
    }

    /// The unknown fields of a view, per `fieldValidation`; `patch`: the merge or strategic
    /// merge patch that made it of the stored object, where alone they can be.
    fn unknown_fields(
        &self,
        options: &WriteOptions,
        view: &Value,
        patch: Option<&Value>,
        expected: Expected<'_>,
    ) -> Result<Vec<String>, ApiError> {
        body::check_unknown_fields_within(
            options.field_validation,
            view,
            patch,
            || match self.subresource {
                Some(Subresource::Scale) => (serde_json::from_value::<Scale>(view.clone()))
                    .and_then(serde_json::to_value)
                    .ok(),
                _ => (self.kind).round_trip(view, self.target.version).ok(),
            },
            &options.duplicate_fields,
            expected,
        )
    }
}

/// The stored object as the request sees it, converted at most once per attempt: a patch
/// applies to it, immutable fields and webhooks compare with it, field management reads it.
struct OldView<'r> {
    request: &'r Request<'r>,
    /// The stored object as its hub (owned: a reference to it is not `Send`).
    typed: ErasedHub,
    /// The stored object as hub JSON.
    hub: &'r Value,
    revision: Revision,
    /// The object in the request's version, without resourceVersion, once converted.
    converted: Option<Value>,
}

impl OldView<'_> {
    /// The stored object in the request's version, without resourceVersion.
    fn object(&mut self) -> Result<&Value, ApiError> {
        if self.converted.is_none() {
            let (kind, version) = (self.request.kind, self.request.target.version);
            let converted = kind.hub_in(&self.typed, self.hub, version);
            self.converted = Some(converted.map_err(internal)?);
        }
        Ok(self.converted.as_ref().expect("converted above"))
    }

    /// What the request addresses (the object, or its Scale) at the stored revision.
    fn view(&mut self) -> Result<Value, ApiError> {
        if self.request.subresource == Some(Subresource::Scale) {
            return self.request.view(self.hub, self.revision);
        }
        let revision = self.revision;
        let mut view = self.object()?.clone();
        object::set_resource_version(&mut view, revision);
        Ok(view)
    }
}

impl Registry {
    pub(super) async fn update_object(
        &self,
        target: Target<'_>,
        name: &str,
        subresource: Option<Subresource>,
        mut change: Change<'_>,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let kind = target.kind;
        let info = kind.info;
        let request = Request {
            kind,
            target,
            name,
            subresource,
            resource: object::resource(info),
            key: self.keys().object(info, target.namespace, name)?,
        };
        match subresource {
            Some(Subresource::Status) if !info.subresources.status => {
                return Err(ApiError::NoRoute);
            }
            Some(Subresource::Scale) => {
                request.scale_info()?;
            }
            Some(Subresource::Fields(name)) => {
                object::fields_of(info, name)?;
            }
            _ => {}
        }
        let api_version = kind.api_version(target.version);
        let expected = request.expected(&api_version);
        let mut warnings = Vec::new();
        match &mut change {
            Change::Replace(body) => {
                body::check_type_meta(body, expected)?;
                warnings = request.unknown_fields(options, body, None, expected)?;
                body::ensure_namespace(body, info, target.namespace)?;
                body::check_name(body, name, target.namespace)?;
            }
            Change::Patch(patch_type, _) if !patch::supports(target.kind, *patch_type) => {
                return Err(ApiError::UnsupportedMediaType(
                    patch::accepted(target.kind).join(", "),
                ));
            }
            Change::Patch(..) => {}
        }

        // What the kind's begin hook took on the last attempt.
        let mut finishing: Option<Finishing> = None;
        for _ in 0..MAX_RETRIES {
            if let Some(previous) = finishing.take() {
                previous.failed().await;
            }
            let kv = match self.storage.get(&request.key, 0).await {
                Ok(Some(kv)) => kv,
                Ok(None) => {
                    return match &change {
                        Change::Replace(body)
                            if kind.allow_create_on_update()
                                && meta_str(body, "resourceVersion").is_none()
                                && subresource.is_none() =>
                        {
                            (self.create_object(target, body.clone(), options, Fields::Update))
                                .await
                        }
                        // An apply creates what is missing (kube's `forceAllowCreate`).
                        Change::Patch(PatchType::Apply, config) if subresource.is_none() => {
                            let mut warnings = Vec::new();
                            let object =
                                self.apply_config(&request, None, config, options, &mut warnings)?;
                            body::check_name(&object, name, target.namespace)?;
                            let created =
                                (self.create_object(target, object, options, Fields::Applied))
                                    .await;
                            created.map(|mut written| {
                                warnings.append(&mut written.warnings);
                                written.warnings = warnings;
                                written
                            })
                        }
                        _ => Err(request.not_found()),
                    };
                }
                Err(e) => return Err(object::storage_error(e, &request.resource, name)),
            };
            let old_hub = object::decode_hub(kind, &kv)?;
            let old = kind.hub_json(&old_hub).map_err(internal)?;
            let mut old_view = OldView {
                request: &request,
                typed: old_hub,
                hub: &old,
                revision: kv.mod_revision,
                converted: None,
            };

            // What the request makes of the stored object, in its version.
            let view = self.changed_view(
                &request,
                &change,
                &old,
                &mut old_view,
                options,
                expected,
                &mut warnings,
            )?;
            let uid_precondition = matches!(change, Change::Replace(_));
            self.check_preconditions(&request, &view, &old, kv.mod_revision, uid_precondition)?;
            if let Change::Replace(body) = &change
                && subresource != Some(Subresource::Scale)
                && meta_str(body, "resourceVersion").is_none()
                && !request.kind.allow_unconditional_update()
            {
                // kube names the resource where the kind would be (its store's Invalid).
                return Err(ApiError::Invalid {
                    group: info.group.into(),
                    kind: info.plural.into(),
                    name: name.to_owned(),
                    causes: vec![FieldError::new(
                        FieldErrorType::Invalid,
                        "metadata.resourceVersion",
                        None,
                        // Go's `%#v` of the unsigned zero, which a JSON value cannot show.
                        "0x0: must be specified for an update",
                    )],
                });
            }

            // Defaults and schema errors of the view, in the request's version (a Scale
            // only writes the replica path, checked below).
            let mut view = view;
            let immutable_old = match subresource {
                Some(Subresource::Scale) => None,
                _ if self.has_immutable_fields(target) => Some(old_view.view()?),
                _ => None,
            };
            let schema_of = |view: &mut Value| match subresource {
                Some(Subresource::Scale) => Ok(Default::default()),
                _ => self.apply_schema(target, view, immutable_old.as_ref()),
            };
            let (mut schema_errors, mut schema_warnings) = schema_of(&mut view)?;

            // The mutating webhooks, on the view as decoded; what they make is defaulted
            // and validated again.
            let admission_options = Registry::options_json("UpdateOptions", options);
            let attributes = Attributes {
                operation: Operation::Update,
                kind,
                version: target.version,
                subresource: subresource_name(subresource),
                namespace: target.namespace,
                name,
                user: options.user.as_ref(),
                dry_run: options.dry_run,
                options: &admission_options,
                object_kind: None,
            };
            let (mutating, validating) = self.webhooks_configured(&attributes).await?;
            let old_admitted = match mutating || validating {
                true => Some(old_view.view()?),
                false => None,
            };
            if mutating {
                let (mutated, admission_warnings) = self
                    .mutating_admission(&attributes, view.clone(), old_admitted.as_ref())
                    .await?;
                warnings.extend(admission_warnings);
                if mutated != view {
                    view = mutated;
                    (schema_errors, schema_warnings) = schema_of(&mut view)?;
                }
            }
            warnings.append(&mut schema_warnings);

            // The new object, as hub JSON.
            let mut new = match subresource {
                Some(Subresource::Scale) => {
                    let scale: Scale = serde_json::from_value(view).map_err(|e| match &change {
                        Change::Replace(_) => expected.decode_error(e),
                        Change::Patch(..) => patch_decode_error(&request, e),
                    })?;
                    let replicas = scale.spec.and_then(|s| s.replicas).unwrap_or(0);
                    let mut new = old.clone();
                    set_path(
                        &mut new,
                        request.scale_info()?.spec_replicas_path,
                        Value::from(replicas),
                    );
                    new
                }
                _ => {
                    // Onto a copy of the stored hub: fields the request's version cannot
                    // express keep their stored values (ARCHITECTURE.md, "Hub conversion").
                    let base = || kind.hub_from_json_ref(&old);
                    let hub = kind.to_hub_over(view, target.version, base);
                    let hub = hub.map_err(|e| match &change {
                        // A conversion webhook that failed: kube's 500.
                        _ if matches!(e, kapi_core::scheme::ConversionError::Webhook(_)) => {
                            internal(e)
                        }
                        // The schema already says why it does not decode.
                        _ if !schema_errors.is_empty() => request.invalid(schema_errors.clone()),
                        Change::Replace(_) => expected.decode_error(e),
                        Change::Patch(..) => patch_decode_error(&request, e),
                    })?;
                    kind.hub_json(&hub).map_err(internal)?
                }
            };
            apply_update_rules(
                (
                    info,
                    kind.subresource_metadata(subresource.map_or("", |s| s.name())),
                ),
                &mut new,
                &old,
                subresource,
                target.namespace,
                name,
            );
            let finalizers = new.pointer("/spec/finalizers").cloned();
            // Ownership of what the write changed (an apply computed its own).
            let (mut new_hub, field_errors) = match change {
                Change::Patch(PatchType::Apply, _) => {
                    (kind.hub_from_json(new).map_err(internal)?, Vec::new())
                }
                _ => {
                    let old_object = old_view.object()?;
                    self.manage_update_fields(&request, new, (&old, old_object), options)?
                }
            };
            kind.prepare_for_update(&mut new_hub, &old_view.typed);
            let mut new = kind.hub_json(&new_hub).map_err(internal)?;
            // kube's `BeginUpdate` (a Service's cluster IPs and node ports), before
            // validation; what it took is given back unless the update is stored.
            if subresource.is_none()
                && let Some(hooks) = self.write_hooks_of(info)
            {
                let finish = (hooks.begin_update(self, &mut new, &old, options.dry_run)).await?;
                new_hub = kind.hub_from_json_ref(&new).map_err(internal)?;
                finishing = Some(Finishing::new(finish));
            }
            // What `/finalize` is for, whatever the kind's update strategy keeps.
            if subresource == Some(Subresource::Finalize) {
                set_path(
                    &mut new,
                    ".spec.finalizers",
                    finalizers.unwrap_or_else(|| json!([])),
                );
                new_hub = kind.hub_from_json_ref(&new).map_err(internal)?;
                // As the hub writes it (an empty list is no list): `new` stays its JSON.
                new = kind.hub_json(&new_hub).map_err(internal)?;
            }
            if generation_moves(info, &new, &old) {
                let generation = object::generation(&old) + 1;
                set_meta(&mut new, "generation", Some(Value::from(generation)));
                match kind.metadata_mut(&mut new_hub) {
                    Some(metadata) => metadata.generation = Some(generation),
                    None => new_hub = kind.hub_from_json_ref(&new).map_err(internal)?,
                }
                #[cfg(debug_assertions)]
                {
                    let by_json = kind.hub_from_json_ref(&new).map_err(internal)?;
                    debug_assert_eq!(
                        kind.hub_json(&new_hub).map_err(internal)?,
                        kind.hub_json(&by_json).map_err(internal)?,
                        "a {}'s generation set on its type is not as set on its JSON",
                        info.kind
                    );
                }
            }
            let mut errors = schema_errors;
            errors.extend(field_errors);
            errors.extend(kapi_schema::metadata::object_meta(info, &new, false));
            errors.extend(kapi_schema::metadata::object_meta_update(&new, &old));
            let scale_errors = kapi_schema::metadata::scale(info, &new);
            errors.extend(not_reported(scale_errors, &errors));
            let sub = subresource_name(subresource);
            let own = kind.validate_update(&new_hub, &old_view.typed, target.version, sub);
            if !own.is_empty() {
                let hub = kind.hub_json(&new_hub).map_err(internal)?;
                errors.extend(field_paths::to_version(kind, target.version, &hub, own));
            }
            if !errors.is_empty() {
                return Err(request.invalid(errors));
            }
            // A valid update's own warnings (kube's `WarningsOnUpdate`), not a subresource's.
            if subresource.is_none() {
                warnings.extend(kind.warnings(&new_hub, Some(&old_view.typed)));
            }
            if validating {
                let new_view = request.view(&new, kv.mod_revision)?;
                let hubs = Some((&new, Some(&old)));
                let admission_warnings = self
                    .validating_admission(&attributes, Some(&new_view), old_admitted.as_ref(), hubs)
                    .await?;
                warnings.extend(admission_warnings);
            } else {
                self.admit(info, options.user.as_ref(), &new, Some(&old))?;
            }
            // Without a canonical form the hub is what was validated: `new` is its JSON.
            if kind.canonicalize(&mut new_hub) {
                new = kind.hub_json(&new_hub).map_err(internal)?;
            }
            let bytes = Bytes::from(kind.stored_bytes(new_hub, Some(&new)).map_err(internal)?);

            // kube's `shouldDeleteDuringUpdate`: the last finalizer of an object whose
            // deletion was requested is gone, so the object goes; the answer is the object
            // as the request left it.
            if deletes_on_update(&old, &new) {
                if let Some(finishing) = finishing.take() {
                    finishing.failed().await;
                }
                if !options.dry_run {
                    match self
                        .storage
                        .delete(&request.key, Some(kv.mod_revision))
                        .await
                    {
                        Ok(_) => {
                            if let Some(hooks) = self.write_hooks_of(info) {
                                hooks.after_delete(self, &old).await;
                            }
                        }
                        Err(storage::Error::NotFound { .. }) => {}
                        Err(storage::Error::Conflict { .. }) => continue,
                        Err(e) => return Err(object::storage_error(e, &request.resource, name)),
                    }
                }
                let object = request.view(&new, kv.mod_revision)?;
                return Ok(Written::new(object, false, warnings));
            }
            if bytes == kv.value || options.dry_run {
                if let Some(finishing) = finishing.take() {
                    finishing.succeeded().await;
                }
                let current = if bytes == kv.value { &old } else { &new };
                let object = request.view(current, kv.mod_revision)?;
                return Ok(Written::new(object, false, warnings));
            }
            match self
                .storage
                .update(&request.key, bytes.clone(), kv.mod_revision)
                .await
            {
                Ok(stored) => {
                    if let Some(finishing) = finishing.take() {
                        finishing.succeeded().await;
                    }
                    let mut written = request.written_view(&new, &bytes, stored.mod_revision)?;
                    written.warnings = warnings;
                    return Ok(written);
                }
                Err(storage::Error::Conflict { .. }) => continue,
                Err(e) => return Err(object::storage_error(e, &request.resource, name)),
            }
        }
        Err(request.conflict(OPTIMISTIC_LOCK))
    }

    /// The object a replace, patch or apply (`change`) makes of the stored one (`old`, hub
    /// JSON; `old_view`, its view in the request's version), in the request's version,
    /// with kube's checks of it; `warnings` gets its unknown fields' (a patch's).
    #[allow(clippy::too_many_arguments)]
    fn changed_view(
        &self,
        request: &Request<'_>,
        change: &Change<'_>,
        old: &Value,
        old_view: &mut OldView<'_>,
        options: &WriteOptions,
        expected: Expected<'_>,
        warnings: &mut Vec<String>,
    ) -> Result<Value, ApiError> {
        let (target, name) = (request.target, request.name);
        let info = request.info();
        let subresource = request.subresource;
        Ok(match change {
            Change::Replace(body) => body.clone(),
            Change::Patch(PatchType::Apply, config) => {
                let current = old_view.view()?;
                let mut applied =
                    self.apply_config(request, Some((old, &current)), config, options, warnings)?;
                body::check_type_meta(&applied, expected)?;
                body::ensure_namespace(&mut applied, info, target.namespace)?;
                body::check_name(&applied, name, target.namespace)?;
                applied
            }
            Change::Patch(patch_type, patch) => {
                let current = old_view.view()?;
                let schemas = match subresource {
                    Some(Subresource::Scale) => None,
                    _ => self.schemas_for(target.kind),
                };
                let schema = (schemas.as_deref())
                    .and_then(|schemas| schemas.kind(info.group, target.version, info.kind));
                let tr = schema.map_or(TypeRef::untyped(), TypeRef::root);
                let mut patched = patch::apply(*patch_type, patch, current, tr).map_err(
                    |failure| match failure {
                        Failure::BadRequest(message) => ApiError::BadRequest(message),
                        Failure::TooLarge(message) => ApiError::RequestEntityTooLarge(message),
                        Failure::Invalid(message) => request.invalid(vec![FieldError::new(
                            FieldErrorType::Invalid,
                            "patch",
                            None,
                            message,
                        )]),
                    },
                )?;
                body::check_type_meta(&patched, expected)?;
                // A compiled kind's stored object is viewed through its version's type: it
                // has no unknown fields, so only what a merge patch reaches is looked at. A
                // dynamic kind's view is its stored JSON converted, which keeps a field its
                // schema has dropped since: that is looked at everywhere, as kube does.
                let reach = match patch_type {
                    PatchType::Merge | PatchType::StrategicMerge if !target.kind.is_dynamic() => {
                        Some(*patch)
                    }
                    _ => None,
                };
                *warnings = request.unknown_fields(options, &patched, reach, expected)?;
                body::ensure_namespace(&mut patched, info, target.namespace)?;
                body::check_name(&patched, name, target.namespace)?;
                patched
            }
        })
    }

    /// The hub of `new` (hub JSON, the update's rules applied) with the managedFields of
    /// the write (`old`: the stored object as hub JSON, and in the request's version), and
    /// the errors of its managedFields (the hub keeps those sent). Set on the hub's
    /// metadata where its type has one, from a view in the request's version converted
    /// from that hub; else on the JSON the hub is made of.
    fn manage_update_fields(
        &self,
        request: &Request<'_>,
        mut new: Value,
        old: (&Value, &Value),
        options: &WriteOptions,
    ) -> Result<(ErasedHub, Vec<FieldError>), ApiError> {
        let (kind, target) = (request.kind, request.target);
        let sub = subresource_name(request.subresource);
        let mut hub = match kind.is_dynamic() {
            false => Some(kind.hub_from_json_ref(&new).map_err(internal)?),
            true => None,
        };
        let view = match &hub {
            Some(hub) => kind.hub_in(hub, &new, target.version),
            None => kind.hub_json_in(&new, target.version),
        };
        let view = view.map_err(internal)?;
        let mut errors = Vec::new();
        match self.manage_fields(target, Some(old), &view, sub, options) {
            Ok(managed) => match hub.as_mut().and_then(|hub| kind.metadata_mut(hub)) {
                Some(metadata) => {
                    metadata.managed_fields = managed.into_typed().map_err(internal)?
                }
                None => {
                    set_meta(&mut new, "managedFields", managed.into_json());
                    hub = None;
                }
            },
            Err(field_errors) => errors = field_errors,
        }
        let hub = match hub {
            Some(hub) => hub,
            None => kind.hub_from_json(new).map_err(internal)?,
        };
        Ok((hub, errors))
    }

    /// The view's resourceVersion (when set) must be the stored revision; with
    /// `uid_precondition` (a `PUT`: kube's `DefaultUpdatedObjectInfo` makes the body's uid a
    /// precondition), its uid (when set) the stored uid. A patch that changes the uid fails
    /// validation instead (`metadata.uid` is immutable).
    fn check_preconditions(
        &self,
        request: &Request<'_>,
        view: &Value,
        old: &Value,
        revision: Revision,
        uid_precondition: bool,
    ) -> Result<(), ApiError> {
        if let Some(resource_version) = meta_str(view, "resourceVersion")
            && parse_resource_version(resource_version)? != revision
        {
            return Err(request.conflict(OPTIMISTIC_LOCK));
        }
        if let Some(uid) = meta_str(view, "uid").filter(|_| uid_precondition)
            && Some(uid) != meta_str(old, "uid")
        {
            return Err(request.conflict(precondition_failed(
                &request.key,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    meta_str(old, "uid").unwrap_or_default()
                ),
            )));
        }
        Ok(())
    }
}

/// The name of a subresource in `managedFields` (empty for the object itself).
fn subresource_name(subresource: Option<Subresource>) -> &'static str {
    subresource.map_or("", Subresource::name)
}

impl Registry {
    /// A server-side apply of `config` over the stored object (its hub and its view in the
    /// request's version; `None` when the apply creates it): the new view, with its
    /// `managedFields`. kube's checks first: the configuration is of the request's type
    /// and carries no `managedFields`.
    fn apply_config(
        &self,
        request: &Request<'_>,
        live: Option<(&Value, &Value)>,
        config: &Value,
        options: &WriteOptions,
        warnings: &mut Vec<String>,
    ) -> Result<Value, ApiError> {
        let kind = request.kind;
        let api_version = kind.api_version(request.target.version);
        let text = |field: &str| config.get(field).and_then(Value::as_str).unwrap_or("");
        if !config.is_object()
            || text("apiVersion") != api_version
            || text("kind") != kind.info.kind
        {
            let (group, version) = match text("apiVersion").rsplit_once('/') {
                Some((group, version)) => (group, version),
                None => ("", text("apiVersion")),
            };
            return Err(ApiError::BadRequest(format!(
                "invalid object type: {group}/{version}, Kind={}",
                text("kind")
            )));
        }
        if config
            .pointer("/metadata/managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(ApiError::BadRequest(
                "metadata.managedFields must be nil".into(),
            ));
        }
        let schemas = (self.schemas_for(kind))
            .ok_or_else(|| ApiError::UnsupportedMediaType(patch::accepted(kind).join(", ")))?;
        // Fields the version's schema does not have are reported per `fieldValidation`,
        // and never merged nor owned.
        let schema = schemas.kind(kind.info.group, request.target.version, kind.info.kind);
        let known = typed::prune_unknown(config, schema.map_or(TypeRef::untyped(), TypeRef::root));
        let expected = request.expected(&api_version);
        *warnings = body::check_unknown_fields(
            options.field_validation,
            config,
            || Some(known.clone()),
            &options.duplicate_fields,
            expected,
        )?;
        let manager = kapi_fieldmanager::FieldManager::new(
            kind,
            &schemas,
            live.map(|(hub, _)| hub),
            subresource_name(request.subresource),
        );
        manager.apply(
            live.map(|(_, view)| view),
            &known,
            &api_version,
            options.field_manager.as_deref().unwrap_or(""),
            options.force,
        )
    }
}

/// A resourceVersion sent by a client: a revision (kube's `ParseResourceVersion`).
pub(super) fn parse_resource_version(value: &str) -> Result<Revision, ApiError> {
    value.parse::<Revision>().map_err(|_| {
        ApiError::BadRequest(format!(
            "invalid resource version: resourceVersion: Invalid value: {value:?}: strconv.ParseUint: parsing {value:?}: invalid syntax"
        ))
    })
}

/// The message of a failed storage precondition, as kube's `StorageError` prints it.
pub(super) fn precondition_failed(key: &str, detail: &str) -> String {
    format!(
        "StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: {detail}"
    )
}

/// A patched object that no longer decodes (kube: a 422 on the field `patch`).
fn patch_decode_error(request: &Request<'_>, error: impl std::fmt::Display) -> ApiError {
    request.invalid(vec![FieldError::new(
        FieldErrorType::Invalid,
        "patch",
        None,
        error.to_string(),
    )])
}
