//! The generic validation every object gets besides its kind's own: object metadata
//! (kube's `ValidateObjectMetaAccessor`) and, for kinds with a scale subresource, the
//! replica paths (apiextensions' `ValidateScaleSpec` / `ValidateScaleStatus`).

use serde_json::Value;

use super::object::{meta, meta_str};
use super::scale::get_path;
use crate::api::{KindInfo, NameRule, Scope};
use crate::error::{FieldError, FieldErrorType, go_strings};
use crate::validation as names;

/// kube's `TotalAnnotationSizeLimitB`.
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// Whether `info` is the core `namespaces` resource, whose lifecycle the registry runs.
pub fn is_namespaces(info: &KindInfo) -> bool {
    info.group.is_empty() && info.plural == "namespaces" && info.scope == Scope::Cluster
}

/// How names of a kind are checked: as the kind declares ([`NameRule`]) on create; updates
/// only check that the name is a path segment, as kube does.
fn name_errors(info: &KindInfo, name: &str, prefix: bool, create: bool) -> Vec<String> {
    match info.names {
        _ if !create => names::path_segment_name(name),
        NameRule::DnsSubdomain => names::name_is_dns_subdomain(name, prefix),
        NameRule::DnsLabel => names::name_is_dns_label(name, prefix),
        NameRule::PathSegment => names::path_segment_name(name),
    }
}

fn invalid(field: &str, value: &str, detail: String) -> FieldError {
    FieldError::new(
        FieldErrorType::Invalid,
        field,
        Some(Value::String(value.to_owned())),
        detail,
    )
}

/// The metadata errors of an object (create: `create`; otherwise an update).
pub fn object_meta(info: &KindInfo, object: &Value, create: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(generate_name) = meta_str(object, "generateName") {
        for message in name_errors(info, generate_name, true, create) {
            errors.push(invalid("metadata.generateName", generate_name, message));
        }
    }
    match meta_str(object, "name") {
        None => errors.push(FieldError::new(
            FieldErrorType::Required,
            "metadata.name",
            None,
            "name or generateName is required",
        )),
        Some(name) => {
            for message in name_errors(info, name, false, create) {
                errors.push(invalid("metadata.name", name, message));
            }
        }
    }
    if info.scope == Scope::Namespaced {
        match meta_str(object, "namespace") {
            None => errors.push(FieldError::new(
                FieldErrorType::Required,
                "metadata.namespace",
                None,
                "",
            )),
            Some(namespace) => {
                for message in names::name_is_dns_label(namespace, false) {
                    errors.push(invalid("metadata.namespace", namespace, message));
                }
            }
        }
    }
    let map = |field: &str| meta(object).and_then(|m| m.get(field)?.as_object());
    if let Some(labels) = map("labels") {
        for (key, value) in labels {
            for message in names::qualified_name(key) {
                errors.push(invalid("metadata.labels", key, message));
            }
            let value = value.as_str().unwrap_or_default();
            for message in names::label_value(value) {
                errors.push(invalid("metadata.labels", value, message));
            }
        }
    }
    errors.extend(finalizers(info, object));
    errors.extend(owner_references(object));
    if let Some(annotations) = map("annotations") {
        let mut size = 0;
        for (key, value) in annotations {
            for message in names::qualified_name(&key.to_lowercase()) {
                errors.push(invalid("metadata.annotations", key, message));
            }
            size += key.len() + value.as_str().map_or(0, str::len);
        }
        if size > ANNOTATIONS_LIMIT {
            errors.push(FieldError::new(
                FieldErrorType::TooLong,
                "metadata.annotations",
                None,
                format!("may not be more than {ANNOTATIONS_LIMIT} bytes"),
            ));
        }
    }
    errors
}

/// `metadata.finalizers` (apimachinery's `ValidateFinalizers`): qualified names, not both
/// `orphan` and `foregroundDeletion`; for the core kinds, also kube's own rule that a name
/// is standard or fully qualified (core's `validateKubeFinalizerName`).
fn finalizers(info: &KindInfo, object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let finalizers = finalizer_list(object);
    for finalizer in &finalizers {
        for message in names::qualified_name(finalizer) {
            errors.push(invalid("metadata.finalizers", finalizer, message));
        }
    }
    if finalizers.contains(&ORPHAN) && finalizers.contains(&FOREGROUND) {
        errors.push(FieldError::new(
            FieldErrorType::Invalid,
            "metadata.finalizers",
            None,
            // Go's `%#v` of the list, which a JSON value cannot show.
            format!(
                "{}: finalizer {ORPHAN} and {FOREGROUND} cannot be both set",
                go_strings(&finalizers)
            ),
        ));
    }
    if info.is_core() {
        for (index, finalizer) in finalizers.iter().enumerate() {
            for message in names::kube_finalizer_name(finalizer) {
                errors.push(invalid(
                    &format!("metadata.finalizers[{index}]"),
                    finalizer,
                    message,
                ));
            }
        }
    }
    errors
}

/// `metadata.ownerReferences` (apimachinery's `ValidateOwnerReferences`): each names an
/// owner by a parseable apiVersion with a version, a kind, a name and a uid; core v1
/// Events own nothing; at most one reference is the controller.
fn owner_references(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let references = (meta(object).and_then(|m| m.get("ownerReferences")?.as_array()))
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut controller: Option<String> = None;
    for (index, reference) in references.iter().enumerate() {
        let text = |field: &str| reference.get(field).and_then(Value::as_str).unwrap_or("");
        let path = |field: &str| format!("metadata.ownerReferences[{index}].{field}");
        let required = |field: &str| {
            FieldError::new(
                FieldErrorType::Required,
                path(field),
                None,
                "must not be empty",
            )
        };
        let api_version = text("apiVersion");
        // `schema.ParseGroupVersion`: `v`, or `g/v`; one slash at most.
        let version = match api_version.split('/').collect::<Vec<_>>().as_slice() {
            [version] => Some(*version),
            [_, version] => Some(*version),
            _ => None,
        };
        if api_version.is_empty() {
            errors.push(required("apiVersion"));
        } else if version.is_none_or(str::is_empty) {
            errors.push(invalid(
                &path("apiVersion"),
                api_version,
                "must be <group>/<version> or <version>".into(),
            ));
        }
        for field in ["kind", "name", "uid"] {
            if text(field).is_empty() {
                errors.push(required(field));
            }
        }
        if api_version == "v1" && text("kind") == "Event" {
            errors.push(FieldError::new(
                FieldErrorType::Invalid,
                format!("metadata.ownerReferences[{index}]"),
                None,
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if reference.get("controller") == Some(&Value::Bool(true)) {
            let name = format!("{}/{}", text("kind"), text("name"));
            match &controller {
                None => controller = Some(name),
                Some(first) => errors.push(FieldError::new(
                    FieldErrorType::Invalid,
                    "metadata.ownerReferences",
                    None,
                    format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {name}"
                    ),
                )),
            }
        }
    }
    errors
}

/// kube's `FinalizerOrphanDependents`.
pub const ORPHAN: &str = "orphan";
/// kube's `FinalizerDeleteDependents`.
pub const FOREGROUND: &str = "foregroundDeletion";

/// The object's finalizers.
pub fn finalizer_list(object: &Value) -> Vec<&str> {
    (meta(object).and_then(|m| m.get("finalizers")?.as_array()))
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The metadata errors only an update can have (kube's `ValidateObjectMetaUpdate`): the
/// uid is immutable, and an object being deleted takes no new finalizers. The other
/// immutable fields (name, namespace, timestamps) are taken from the URL and the stored
/// object before validation, as kube's `BeforeUpdate` does.
pub fn object_meta_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let (Some(uid), old_uid) = (meta_str(new, "uid"), meta_str(old, "uid"))
        && Some(uid) != old_uid
    {
        errors.push(invalid("metadata.uid", uid, "field is immutable".into()));
    }
    if meta_str(old, "deletionTimestamp").is_some() {
        let before = finalizer_list(old);
        let mut added: Vec<&str> = (finalizer_list(new).into_iter())
            .filter(|f| !before.contains(f))
            .collect();
        added.sort_unstable();
        added.dedup();
        if !added.is_empty() {
            errors.push(FieldError::new(
                FieldErrorType::Forbidden,
                "metadata.finalizers",
                None,
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers {}",
                    go_strings(&added)
                ),
            ));
        }
    }
    errors
}

/// The replica paths of a kind with a scale subresource, on the hub JSON.
pub fn scale(info: &KindInfo, hub: &Value) -> Vec<FieldError> {
    let Some(scale) = &info.subresources.scale else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    for path in [scale.spec_replicas_path, scale.status_replicas_path] {
        let Some(value) = get_path(hub, path).and_then(Value::as_i64) else {
            continue;
        };
        let detail = if value < 0 {
            "should be a non-negative integer".to_owned()
        } else if value > i64::from(i32::MAX) {
            format!("should be less than or equal to {}", i32::MAX)
        } else {
            continue;
        };
        errors.push(FieldError::new(
            FieldErrorType::Invalid,
            path,
            Some(Value::from(value)),
            detail,
        ));
    }
    errors
}
