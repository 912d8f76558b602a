//! One mutation's value applied to the object (kube's `patch` package of the mutating
//! plugin): pure, so that it runs on the blocking pool and is tested as data.
//!
//! - An apply configuration (`Object{...}`) is typed against the kind's schema (a field it
//!   does not declare is refused), may set no atomic value (a merge would replace it
//!   whole), and is merged into the object as structured-merge-diff merges (no field
//!   removed, list maps merged by key, no field manager: nobody owns what a policy sets).
//! - A JSON patch (`[JSONPatch{...}]`) applies as kube's JSON patch library applies it
//!   (`super::json_patch`): a `test` that fails leaves the object as it was (the patch is
//!   skipped, not an error). A compiled kind's object must then decode strictly (an
//!   unknown field is kube's 500).

use serde_json::Value;

use kapi_cel::admission::patches;
use kapi_core::error::ApiError;
use kapi_fieldmanager::typed::{self, TypeRef, check};
use kapi_registry::KindSchema;

use super::compile::PatchKind;
use super::json_patch;

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
    /// The object's group-version is served, its kind is not among its schemas (a
    /// connect's options): kube's type converter of the group-version exists and does not
    /// know the kind, the policy's error, not the 503 of a group-version not served yet.
    pub(crate) served_without_schema: bool,
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
    let failed = |e: String| Failure::Policy(format!("error applying patch: {e}"));
    let Some(schema) = target.schema else {
        if target.served_without_schema {
            return Err(failed(format!(
                "failed to convert patch object to typed object: no corresponding type for {}",
                target.gvk
            )));
        }
        return Err(Failure::Status(ApiError::ServiceUnavailable(format!(
            "Resource kind {} not found. There can be a delay between when CustomResourceDefinitions are created and when they are available.",
            target.gvk
        ))));
    };
    let tr = TypeRef::root(schema);
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
    let operations = operations.as_array().map_or(&[][..], Vec::as_slice);
    let patched = match super::json_patch::apply(object, operations) {
        Ok(patched) => patched,
        // A failed test skips the whole patch.
        Err(json_patch::Failed::Test) => return Ok(object.clone()),
        Err(json_patch::Failed::Error(error)) => {
            return Err(Failure::Policy(format!("JSON Patch: {error}")));
        }
    };
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
