//! [`FieldManager`]: field management of one write of one kind (k8s.io/apimachinery's
//! `managedfields.FieldManager`): reads `metadata.managedFields`, runs the [`Updater`],
//! and writes the entries back, for the registry.
//!
//! Objects are given in the request's version. Other managers' versions are reached
//! through the kind's hub, converting onto the stored object's hub as every write does
//! (ARCHITECTURE.md, "Hub conversion"), so a field a version cannot express keeps its
//! owners when written through that version.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::{Value, json};

use super::PathElement;
use super::entries::{self, Entries, Managed};
use super::set::Set;
use super::typed::{Scope, TypeRef};
use super::updater::{Failure, ManagerId, Operation, Updater, Versions};
use kapi_core::error::{ApiError, FieldError};
use kapi_core::scheme::KindEntry;
use kapi_schema::Schemas;

/// The manager of an object's fields before anyone applied, when someone first applies
/// to an object no entry tracks (kube's `before-first-apply`).
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// Field management of one write.
pub struct FieldManager<'a> {
    kind: &'a KindEntry,
    schemas: &'a Schemas,
    /// The stored object's hub as JSON (none for a create): the base of conversions.
    base: Option<&'a Value>,
    /// `status`, `scale`, or empty.
    subresource: &'a str,
}

impl Versions for FieldManager<'_> {
    fn convert(&self, object: &Value, from: &str, to: &str) -> Option<Value> {
        if from == to {
            return Some(object.clone());
        }
        let (from, to) = (self.version_of(from)?, self.version_of(to)?);
        let hub = match self.base {
            Some(base) => {
                let base = || self.kind.hub_from_json_ref(base);
                self.kind.to_hub_over(object.clone(), from, base).ok()?
            }
            None => self.kind.to_hub(object.clone(), from).ok()?,
        };
        self.kind.from_hub(hub, to).ok()
    }

    fn type_of(&self, api_version: &str) -> Option<TypeRef<'_>> {
        let version = self.version_of(api_version)?;
        let info = self.kind.info;
        (self.schemas.kind(info.group, version, info.kind)).map(TypeRef::root)
    }
}

impl<'a> FieldManager<'a> {
    /// Field management of a write to `kind` (`subresource` empty for the object itself),
    /// over the stored hub `base` (none for a create).
    pub fn new(
        kind: &'a KindEntry,
        schemas: &'a Schemas,
        base: Option<&'a Value>,
        subresource: &'a str,
    ) -> FieldManager<'a> {
        FieldManager {
            kind,
            schemas,
            base,
            subresource,
        }
    }

    /// The served version of `api_version` (`apps.example.dev/v1` -> `v1`).
    fn version_of(&self, api_version: &str) -> Option<&'static str> {
        self.kind
            .versions()
            .find(|v| self.kind.api_version(v) == api_version)
    }

    /// The paths this write may own (kube's reset fields): through the object, all but the
    /// status of a kind with a status subresource; through `/status`, only the status;
    /// through `/scale`, only the replica path the Scale writes; through `/finalize`, all
    /// but the status.
    fn scope(&self) -> Scope {
        let info = self.kind.info;
        let path = |dotted: &str| -> Vec<PathElement> {
            (dotted.split('.').filter(|p| !p.is_empty()))
                .map(|p| PathElement::Field(p.to_owned()))
                .collect()
        };
        let mut set = Set::new();
        match self.subresource {
            "" if info.subresources.status => {
                set.insert(&path("status"));
                Scope::Except(set)
            }
            "" => Scope::All,
            "finalize" => {
                set.insert(&path("status"));
                Scope::Except(set)
            }
            "status" => {
                set.insert(&path("status"));
                Scope::Only(set)
            }
            _ => {
                if let Some(scale) = &info.subresources.scale {
                    set.insert(&path(scale.spec_replicas_path));
                }
                Scope::Only(set)
            }
        }
    }

    fn updater(&self) -> Updater<'_> {
        Updater {
            versions: self,
            scope: self.scope(),
            stripped: &STRIPPED,
        }
    }

    fn id(&self, manager: &str, operation: Operation, api_version: &str) -> ManagerId {
        ManagerId {
            manager: if manager.is_empty() {
                "unknown"
            } else {
                manager
            }
            .to_owned(),
            operation,
            api_version: (operation == Operation::Update).then(|| api_version.to_owned()),
            subresource: self.subresource.to_owned(),
        }
    }

    /// The `managedFields` of `new` after a write other than apply by `manager`, from `old`
    /// (both in `api_version`; `old` is `None` for a create). A client may send
    /// `managedFields`: valid entries replace the stored ones, `[]` or `[{}]` forgets
    /// ownership (the object is then untracked until someone applies); malformed entries
    /// are field errors. Returns the new `managedFields` (`None`: none).
    pub fn update(
        &self,
        old: Option<&Value>,
        new: &Value,
        api_version: &str,
        manager: &str,
    ) -> Result<Managed, Vec<FieldError>> {
        let sent = managed_fields(new).filter(|_| self.subresource.is_empty());
        let mut base = old.and_then(managed_fields).map(entries::decode);
        if let Some(sent) = sent {
            if entries::is_reset(sent) {
                if old.is_some() {
                    return Ok(Managed(None));
                }
                base = None;
            } else {
                let errors = entries::validate(sent);
                if !errors.is_empty() {
                    return Err(errors);
                }
                let decoded = entries::decode(sent);
                if !decoded.managers.is_empty() {
                    base = Some(decoded);
                }
            }
        }
        // An existing object nobody tracks stays untracked (kube's `skipNonApplied`).
        if old.is_some() && base.as_ref().is_none_or(|b| b.managers.is_empty()) {
            return Ok(Managed(None));
        }
        let mut entries = base.unwrap_or_default();
        // A create compares with the version type's empty object where the kind has one
        // (kube's own kinds), else with nothing.
        let zero = (self.version_of(api_version))
            .and_then(|name| self.kind.info.versions.iter().find(|v| v.name == name))
            .and_then(|version| version.zero)
            .map_or_else(|| json!({}), |zero| zero());
        // `managedFields` stay: the comparison passes over them.
        let old = old.unwrap_or(&zero);
        let id = self.id(manager, Operation::Update, api_version);
        let changed = self
            .updater()
            .update(old, new, api_version, &mut entries.managers, &id)
            .map_err(|failure| vec![internal_field_error(failure)])?;
        retain_times(&mut entries);
        if changed {
            entries.times.insert(id, kapi_core::unstructured::now());
        }
        entries::cap_update_managers(&mut entries);
        Ok(Managed(Some(entries)))
    }

    /// `config` applied over `live` (both in `api_version`; `live` is `None` when the apply
    /// creates) by `manager`: the new object, with its `managedFields`.
    pub fn apply(
        &self,
        live: Option<&Value>,
        config: &Value,
        api_version: &str,
        manager: &str,
        force: bool,
    ) -> Result<Value, ApiError> {
        let empty = json!({});
        let live_object = without_managed(live.unwrap_or(&empty)).into_owned();
        let mut entries = live
            .and_then(managed_fields)
            .map(entries::decode)
            .unwrap_or_default();
        let updater = self.updater();
        if live.is_some() && entries.managers.is_empty() {
            // What is there belongs to someone: the first applier conflicts with it.
            let id = self.id(BEFORE_FIRST_APPLY, Operation::Update, api_version);
            updater
                .update(
                    &empty,
                    &live_object,
                    api_version,
                    &mut entries.managers,
                    &id,
                )
                .map_err(internal)?;
            entries.times.insert(id, kapi_core::unstructured::now());
        }
        let id = self.id(manager, Operation::Apply, api_version);
        let result = updater.apply(
            &live_object,
            config,
            api_version,
            &mut entries.managers,
            &id,
            force,
        );
        let new = match result {
            Ok(new) => new,
            Err(Failure::Conflicts(conflicts)) => {
                return Err(ApiError::ApplyConflict {
                    conflicts: (conflicts.0.iter())
                        .map(|(owner, path)| (print_manager(owner), path.to_string()))
                        .collect(),
                });
            }
            Err(Failure::Typed(error)) => return Err(ApiError::BadRequest(error.0)),
        };
        retain_times(&mut entries);
        let mut object = match new {
            Some(new) => {
                entries.times.insert(id, kapi_core::unstructured::now());
                new
            }
            None => live_object,
        };
        if let Some(fields) = object.as_object_mut() {
            let metadata = fields.entry("metadata").or_insert_with(|| json!({}));
            if let Some(metadata) = metadata.as_object_mut() {
                match entries::encode(&entries) {
                    Some(managed) => metadata.insert("managedFields".into(), managed),
                    None => metadata.remove("managedFields"),
                };
            }
        }
        Ok(object)
    }
}

/// kube's `printManager`: `"name"`, ` with subresource "status"`, ` using <version>` for
/// update entries.
fn print_manager(id: &ManagerId) -> String {
    let mut out = format!("{:?}", id.manager);
    if !id.subresource.is_empty() {
        out.push_str(&format!(" with subresource {:?}", id.subresource));
    }
    if let Some(version) = &id.api_version {
        out.push_str(&format!(" using {version}"));
    }
    out
}

/// Times only of managers that still own something.
fn retain_times(entries: &mut Entries) {
    let managers = &entries.managers;
    entries.times.retain(|id, _| managers.contains_key(id));
}

/// `metadata.managedFields`, looked up by name (a JSON pointer is parsed and unescaped on
/// every call, on every write).
fn managed_fields_or_null(object: &Value) -> Option<&Value> {
    object.get("metadata")?.get("managedFields")
}

fn managed_fields(object: &Value) -> Option<&Value> {
    managed_fields_or_null(object).filter(|v| !v.is_null())
}

/// `object` without `metadata.managedFields`: ownership is never about ownership. Copied
/// only when it has them.
fn without_managed(object: &Value) -> Cow<'_, Value> {
    if managed_fields_or_null(object).is_none() {
        return Cow::Borrowed(object);
    }
    let mut object = object.clone();
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
    }
    Cow::Owned(object)
}

/// What no manager ever owns (kube's `stripMeta`): type meta, and the metadata the server
/// sets. What is below `metadata` (labels, annotations) may be owned. Made once: every write
/// takes it from its manager's set.
static STRIPPED: LazyLock<Set> = LazyLock::new(|| {
    let mut set = Set::new();
    for path in [
        vec!["apiVersion"],
        vec!["kind"],
        vec!["metadata"],
        vec!["metadata", "name"],
        vec!["metadata", "namespace"],
        vec!["metadata", "creationTimestamp"],
        vec!["metadata", "selfLink"],
        vec!["metadata", "uid"],
        vec!["metadata", "clusterName"],
        vec!["metadata", "generation"],
        vec!["metadata", "managedFields"],
        vec!["metadata", "resourceVersion"],
    ] {
        let path: Vec<PathElement> = path
            .into_iter()
            .map(|f| PathElement::Field(f.to_owned()))
            .collect();
        set.insert(&path);
    }
    set
});

fn internal(failure: Failure) -> ApiError {
    ApiError::Internal(format!("field management: {failure:?}"))
}

fn internal_field_error(failure: Failure) -> FieldError {
    FieldError::new(
        kapi_core::error::FieldErrorType::Invalid,
        "metadata.managedFields",
        None,
        format!("{failure:?}"),
    )
}
