//! One mutation's value applied to the object (kube's `patch` package of the mutating
//! plugin): pure, so that it runs on the blocking pool and is tested as data.
//!
//! - An apply configuration (`Object{...}`) is typed against the kind's schema (a field it
//!   does not declare is refused), may set no atomic value (a merge would replace it
//!   whole), and is merged into the object as structured-merge-diff merges (no field
//!   removed, list maps merged by key, no field manager: nobody owns what a policy sets).
//! - A JSON patch (`[JSONPatch{...}]`) applies as kube's JSON patch library applies it:
//!   a `test` that fails leaves the object as it was (the patch is skipped, not an
//!   error), `replace` of a missing map key adds it, errors are worded as kube's. A
//!   compiled kind's object must then decode strictly (an unknown field is kube's 500).

use serde_json::Value;

use kapi_cel::admission::patches;
use kapi_core::error::ApiError;
use kapi_fieldmanager::typed::{self, TypeRef, check};
use kapi_registry::KindSchema;

use super::compile::PatchKind;

/// Where a mutation's failure goes.
#[derive(Debug)]
pub(crate) enum Failure {
    /// A failure of the policy, acted on as its `failurePolicy` says.
    Policy(String),
    /// An error kube returns as it is, whatever the failure policy (a kind without a
    /// schema, an object that no longer decodes).
    Status(ApiError),
}

/// An object through its kind's type (what the type keeps of it), or why it does not
/// decode.
pub(crate) type ThroughType<'a> = dyn Fn(&Value) -> Result<Value, String> + 'a;

/// What a mutation changes: the object's kind as the patches see it.
#[derive(Clone, Copy)]
pub(crate) struct Target<'a> {
    /// The kind's schema in the version the object is in.
    pub(crate) schema: Option<KindSchema<'a>>,
    /// `group/version, Kind=kind`, for kube's error when there is no schema.
    pub(crate) gvk: &'a str,
    /// A compiled kind's object through its version's type (a JSON patch's result must
    /// decode into it strictly); none for a kind a definition installed.
    pub(crate) typed: Option<&'a ThroughType<'a>>,
}

/// `object` with the mutation's `value` applied.
pub(crate) fn apply(
    kind: PatchKind,
    value: &kapi_cel::value::Value,
    object: &Value,
    target: Target<'_>,
) -> Result<Value, Failure> {
    match kind {
        PatchKind::ApplyConfiguration => apply_configuration(value, object, target),
        PatchKind::JsonPatch => json_patch(value, object, target),
    }
}

fn apply_configuration(
    value: &kapi_cel::value::Value,
    object: &Value,
    target: Target<'_>,
) -> Result<Value, Failure> {
    let patch = patches::apply_configuration(value).map_err(Failure::Policy)?;
    let Some(schema) = target.schema else {
        return Err(Failure::Status(ApiError::ServiceUnavailable(format!(
            "Resource kind {} not found. There can be a delay between when CustomResourceDefinitions are created and when they are available.",
            target.gvk
        ))));
    };
    let tr = TypeRef::root(schema);
    let failed = |e: String| Failure::Policy(format!("error applying patch: {e}"));
    // What typing the configuration refuses: fields the schema lacks, values of another
    // JSON type than it declares.
    let mut errors: Vec<(String, String)> = (check::undeclared(&patch, tr).iter())
        .map(|path| (path.to_string(), "field not declared in schema".to_owned()))
        .collect();
    errors.extend(
        (check::mistyped(&patch, tr).into_iter()).map(|(path, why)| (path.to_string(), why)),
    );
    if !errors.is_empty() {
        errors.sort();
        let errors: Vec<String> = (errors.iter())
            .map(|(path, why)| format!("{path}: {why}"))
            .collect();
        let errors = match errors.len() {
            1 => errors.concat(),
            _ => format!("errors:\n  {}", errors.join("\n  ")),
        };
        return Err(failed(format!(
            "failed to convert patch object to typed object: {errors}"
        )));
    }
    let atomic = check::atomic(&patch, tr);
    if !atomic.is_empty() {
        let paths: Vec<String> = atomic.iter().map(ToString::to_string).collect();
        return Err(failed(format!(
            "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {}",
            paths.join(", ")
        )));
    }
    typed::merge(object, &patch, tr).map_err(|e| failed(format!("failed to merge patch: {e}")))
}

fn json_patch(
    value: &kapi_cel::value::Value,
    object: &Value,
    target: Target<'_>,
) -> Result<Value, Failure> {
    let operations = patches::json_patch(value).map_err(Failure::Policy)?;
    let mut patched = object.clone();
    for operation in operations.as_array().into_iter().flatten() {
        match apply_one(&mut patched, operation) {
            Ok(()) => {}
            // A failed test skips the whole patch.
            Err(None) => return Ok(object.clone()),
            Err(Some(error)) => return Err(Failure::Policy(format!("JSON Patch: {error}"))),
        }
    }
    if let Some(typed) = target.typed {
        let through = typed(&patched).map_err(|e| Failure::Status(ApiError::Internal(e)))?;
        let unknown = kapi_registry::unknown_fields(&patched, &through);
        if !unknown.is_empty() {
            let fields: Vec<String> = (unknown.iter())
                .map(|path| format!("unknown field {path:?}"))
                .collect();
            return Err(Failure::Status(ApiError::Internal(format!(
                "strict decoding error: {}",
                fields.join(", ")
            ))));
        }
    }
    Ok(patched)
}

/// Applies one operation: `Err(None)` when it is a `test` that fails, `Err(Some(_))` with
/// kube's JSON patch library's words when it cannot apply.
fn apply_one(doc: &mut Value, operation: &Value) -> Result<(), Option<String>> {
    let text = |field: &str| operation[field].as_str().unwrap_or_default().to_owned();
    let (op, path, from) = (text("op"), text("path"), text("from"));
    let missing = |what: &str| Some(format!("{what}: missing value"));
    let parent_of = |path: &str| path.rsplit_once('/').map(|(parent, _)| parent.to_owned());
    let exists = |doc: &Value, path: &str| doc.pointer(path).is_some();
    let container = |doc: &Value, path: &str| {
        parent_of(path)
            .is_some_and(|p| matches!(doc.pointer(&p), Some(Value::Object(_) | Value::Array(_))))
    };
    let mut operation = operation.clone();
    match op.as_str() {
        "add" if !container(doc, &path) && !path.is_empty() => {
            return Err(missing(&format!(
                "add operation does not apply: doc is missing path: \"{path}\""
            )));
        }
        "remove" if !exists(doc, &path) => {
            let key = path.rsplit('/').next().unwrap_or_default();
            return Err(missing(&format!("Unable to remove nonexistent key: {key}")));
        }
        "replace" if !exists(doc, &path) => {
            let parent = parent_of(&path).and_then(|p| doc.pointer(&p).cloned());
            match parent {
                // kube's library adds a key that is not there.
                Some(Value::Object(_)) => operation["op"] = Value::from("add"),
                _ => {
                    return Err(missing(&format!(
                        "replace operation does not apply: doc is missing key: {path}"
                    )));
                }
            }
        }
        "test" if !container(doc, &path) && !path.is_empty() => {
            return Err(missing(&format!(
                "test operation does not apply: is missing path: {path}"
            )));
        }
        "test" if !exists(doc, &path) => return Err(None),
        "move" | "copy" if !exists(doc, &from) => {
            return Err(missing(&format!(
                "{op} operation does not apply: doc is missing from path: {from}"
            )));
        }
        "add" | "remove" | "replace" | "move" | "copy" | "test" => {}
        other => return Err(Some(format!("Unexpected kind: {other}"))),
    }
    let parsed: json_patch::PatchOperation =
        serde_json::from_value(operation).map_err(|e| Some(e.to_string()))?;
    match json_patch::patch(doc, &[parsed]) {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.kind, json_patch::PatchErrorKind::TestFailed) => Err(None),
        Err(e) => Err(Some(e.to_string())),
    }
}
