//! The generic validation every object gets besides its kind's own: object metadata
//! (kube's `ValidateObjectMetaAccessor`) and, for kinds with a scale subresource, the
//! replica paths (apiextensions' `ValidateScaleSpec` / `ValidateScaleStatus`).

use serde_json::Value;

use super::object::{meta, meta_str};
use super::scale::get_path;
use crate::api::{KindInfo, Scope};
use crate::error::{FieldError, FieldErrorType};
use crate::validation as names;

/// kube's `TotalAnnotationSizeLimitB`.
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// Whether `info` is the core `namespaces` resource, whose lifecycle the registry runs.
pub fn is_namespaces(info: &KindInfo) -> bool {
    info.group.is_empty() && info.plural == "namespaces" && info.scope == Scope::Cluster
}

/// How names of a kind are checked: namespaces are DNS labels, everything else DNS
/// subdomains (kube's core kinds and CRDs). Updates only check that the name is a path
/// segment, as kube does.
fn name_errors(info: &KindInfo, name: &str, prefix: bool, create: bool) -> Vec<String> {
    if !create {
        names::path_segment_name(name)
    } else if is_namespaces(info) {
        names::name_is_dns_label(name, prefix)
    } else {
        names::name_is_dns_subdomain(name, prefix)
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

/// The metadata errors only an update can have (kube's `ValidateObjectMetaUpdate`): the
/// uid is immutable. The other immutable fields (name, namespace, timestamps) are taken
/// from the URL and the stored object before validation, as kube's `BeforeUpdate` does.
pub fn object_meta_update(new: &Value, old: &Value) -> Vec<FieldError> {
    match (meta_str(new, "uid"), meta_str(old, "uid")) {
        (Some(uid), old_uid) if Some(uid) != old_uid => {
            vec![invalid("metadata.uid", uid, "field is immutable".into())]
        }
        _ => Vec::new(),
    }
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
