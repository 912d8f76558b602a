//! The generic validation every object gets besides its kind's own: object metadata
//! (kube's `ValidateObjectMetaAccessor`) and, for kinds with a scale subresource, the
//! replica paths (apiextensions' `ValidateScaleSpec` / `ValidateScaleStatus`).

use serde_json::Value;

use kapi_core::api::{KindInfo, NameRule, Scope};
use kapi_core::error::{FieldError, FieldErrorType, go_strings, go_unstructured};
use kapi_core::meta::ObjectMeta;
use kapi_core::unstructured::{get_path, meta, meta_str};
use kapi_core::validation as names;

/// kube's `TotalAnnotationSizeLimitB`.
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// Whether `info` is the core `namespaces` resource, whose lifecycle the registry runs.
pub fn is_namespaces(info: &KindInfo) -> bool {
    info.group.is_empty() && info.plural == "namespaces" && info.scope == Scope::Cluster
}

/// How an object's namespace is checked.
#[derive(Clone, Copy, PartialEq)]
enum NamespaceRule {
    /// Required, a DNS label (a namespaced kind).
    Required,
    /// A DNS label when set (an embedded resource).
    IfSet,
    /// Not looked at (a cluster-scoped kind: the registry clears it).
    Ignored,
}

/// What metadata rules apply: a kind's own, or an embedded resource's.
struct Rules {
    /// How names are checked on create (updates only check that a name is a path
    /// segment, as kube does).
    names: NameRule,
    create: bool,
    namespace: NamespaceRule,
    /// Whether a name (or generateName) is required.
    named: bool,
    /// Whether kube's own finalizer rule applies (its core kinds).
    core: bool,
}

impl Rules {
    fn name_errors(&self, name: &str, prefix: bool) -> Vec<String> {
        match self.names {
            _ if !self.create => names::path_segment_name(name),
            NameRule::DnsSubdomain => names::name_is_dns_subdomain(name, prefix),
            NameRule::DnsLabel => names::name_is_dns_label(name, prefix),
            NameRule::PathSegment => names::path_segment_name(name),
        }
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
    let rules = Rules {
        names: info.names,
        create,
        namespace: match info.scope {
            Scope::Namespaced => NamespaceRule::Required,
            Scope::Cluster => NamespaceRule::Ignored,
        },
        named: true,
        core: info.is_core(),
    };
    meta_errors(&rules, object)
}

/// The errors of a resource embedded in an object at `path` (a field marked
/// `x-kubernetes-embedded-resource`), as apiextensions' `validateEmbeddedResource` finds
/// them: an `apiVersion` and a `kind` (a string, a group/version, a DNS label but for its
/// case), and `metadata` that reads as an `ObjectMeta` and is valid (see [`embedded_meta`]).
pub fn embedded_resource(embedded: &Value, path: &str) -> Vec<FieldError> {
    let Some(fields) = embedded.as_object() else {
        return Vec::new();
    };
    let at = |field: &str| match path {
        "" => field.to_owned(),
        path => format!("{path}.{field}"),
    };
    let mut errors = Vec::new();
    for key in ["apiVersion", "kind"] {
        if !fields.contains_key(key) {
            errors.push(FieldError::required(at(key), "must not be empty"));
        }
    }
    for (key, value) in fields {
        let text = value.as_str();
        match key.as_str() {
            "apiVersion" | "kind" if text.is_none() => {
                errors.push(FieldError::invalid(
                    at(key),
                    value.clone(),
                    "must be a string",
                ));
            }
            "apiVersion" | "kind" if text == Some("") => {
                errors.push(FieldError::invalid(at(key), "", "must not be empty"));
            }
            "apiVersion" => {
                let api_version = text.unwrap_or_default();
                // `schema.ParseGroupVersion`: one slash at most.
                if api_version.matches('/').count() > 1 {
                    let detail = format!("unexpected GroupVersion string: {api_version}");
                    errors.push(FieldError::invalid(at(key), api_version, detail));
                }
            }
            "kind" => {
                let kind = text.unwrap_or_default();
                let wrong = names::dns1035_label(&kind.to_lowercase());
                if !wrong.is_empty() {
                    let detail = format!(
                        "may have mixed case, but should otherwise match: {}",
                        wrong.join(",")
                    );
                    errors.push(FieldError::invalid(at(key), kind, detail));
                }
            }
            "metadata" => match serde_json::from_value::<ObjectMeta>(value.clone()) {
                Err(error) => errors.push(FieldError::new(
                    FieldErrorType::Invalid,
                    at(key),
                    None,
                    format!("{}: {error}", go_unstructured(value)),
                )),
                Ok(_) => errors.extend(embedded_meta(embedded, path)),
            },
            _ => {}
        }
    }
    errors
}

/// The metadata errors of a resource embedded in an object at `path`, as apiextensions'
/// `schemaobjectmeta.Validate` checks it: names are path segments, a name may be absent, a
/// namespace is checked when set.
fn embedded_meta(embedded: &Value, path: &str) -> Vec<FieldError> {
    let rules = Rules {
        names: NameRule::PathSegment,
        create: true,
        namespace: NamespaceRule::IfSet,
        named: false,
        core: false,
    };
    let mut errors = meta_errors(&rules, embedded);
    if !path.is_empty() {
        for error in &mut errors {
            error.field = format!("{path}.{}", error.field);
        }
    }
    errors
}

fn meta_errors(rules: &Rules, object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(generate_name) = meta_str(object, "generateName") {
        for message in rules.name_errors(generate_name, true) {
            errors.push(invalid("metadata.generateName", generate_name, message));
        }
    }
    match meta_str(object, "name") {
        None if rules.named => errors.push(FieldError::new(
            FieldErrorType::Required,
            "metadata.name",
            None,
            "name or generateName is required",
        )),
        None => {}
        Some(name) => {
            for message in rules.name_errors(name, false) {
                errors.push(invalid("metadata.name", name, message));
            }
        }
    }
    match (meta_str(object, "namespace"), rules.namespace) {
        (_, NamespaceRule::Ignored) => {}
        (None, NamespaceRule::Required) => errors.push(FieldError::new(
            FieldErrorType::Required,
            "metadata.namespace",
            None,
            "",
        )),
        (Some(namespace), rule) if rule == NamespaceRule::Required || !namespace.is_empty() => {
            for message in names::name_is_dns_label(namespace, false) {
                errors.push(invalid("metadata.namespace", namespace, message));
            }
        }
        _ => {}
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
    errors.extend(finalizers(rules.core, object));
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
fn finalizers(core: bool, object: &Value) -> Vec<FieldError> {
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
    if core {
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

/// The replica paths of a kind with a scale subresource, on the hub JSON: kube's rule for
/// custom resources; a kind whose strategy validates (kube's own) judges them there.
pub fn scale(info: &KindInfo, hub: &Value) -> Vec<FieldError> {
    let Some(scale) = &info.subresources.scale else {
        return Vec::new();
    };
    if info.strategy_validates {
        return Vec::new();
    }
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
