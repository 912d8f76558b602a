//! Applying a patch to the current object (kube's `patch.go` mechanisms): JSON patch
//! (RFC 6902), JSON merge patch (RFC 7386) and strategic merge patch ([`strategic`],
//! along the schema of the request's version). Server-side apply is not a patch format:
//! the field manager merges it (`kapi_fieldmanager`).

mod strategic;

use serde_json::Value;

use super::PatchType;
use kapi_core::scheme::KindEntry;
use kapi_fieldmanager::typed::TypeRef;

/// kube's `maxJSONPatchOperations`.
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// Why a patch does not apply.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// 400: the patch is malformed.
    BadRequest(String),
    /// 422: the patch is well formed but does not apply (a failed `test`, a missing path).
    Invalid(String),
    /// 413: too many operations.
    TooLarge(String),
}

/// The patch types a kind accepts, as kube lists them in a 415: a compiled kind takes
/// strategic merge patches, its lists merging as its schema says; a kind a
/// CustomResourceDefinition defines does not, as kube's custom resources do not.
pub(crate) fn accepted(kind: &KindEntry) -> Vec<&'static str> {
    (PatchType::ALL.iter())
        .filter(|t| !(kind.is_dynamic() && **t == PatchType::StrategicMerge))
        .map(|t| t.media_type())
        .collect()
}

/// Whether `kind` accepts `patch_type`.
pub(crate) fn supports(kind: &KindEntry, patch_type: PatchType) -> bool {
    accepted(kind).contains(&patch_type.media_type())
}

/// Applies `patch` to `current`, whose schema is `tr` (strategic merge patches follow it).
pub(crate) fn apply(
    patch_type: PatchType,
    patch: &Value,
    mut current: Value,
    tr: TypeRef<'_>,
) -> Result<Value, Failure> {
    match patch_type {
        PatchType::Json => {
            let operations: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| Failure::BadRequest(e.to_string()))?;
            if operations.len() > MAX_JSON_PATCH_OPERATIONS {
                return Err(Failure::TooLarge(format!(
                    "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                    operations.len()
                )));
            }
            json_patch::patch(&mut current, &operations)
                .map_err(|e| Failure::Invalid(e.to_string()))?;
            Ok(current)
        }
        PatchType::Merge => {
            if !patch.is_object() {
                return Err(Failure::BadRequest("Invalid JSON Patch".into()));
            }
            json_patch::merge(&mut current, patch);
            Ok(current)
        }
        PatchType::StrategicMerge => {
            let Value::Object(patch) = patch else {
                return Err(Failure::BadRequest(format!(
                    "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    json_type(patch)
                )));
            };
            strategic::merge(current, patch, tr)
        }
        PatchType::Apply => Err(Failure::BadRequest(
            "server-side apply is not supported".into(),
        )),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[track_caller]
    fn check(
        patch_type: PatchType,
        patch: Value,
        current: Value,
        expected: Result<Value, Failure>,
    ) {
        assert_eq!(
            apply(patch_type, &patch, current, TypeRef::untyped()),
            expected
        );
    }

    #[test]
    fn json_and_merge_patches() {
        check(
            PatchType::Json,
            json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]),
            json!({"spec": {"replicas": 1}}),
            Ok(json!({"spec": {"replicas": 3}})),
        );
        let Err(Failure::Invalid(_)) = apply(
            PatchType::Json,
            &json!([{"op": "test", "path": "/spec/replicas", "value": 3}]),
            json!({"spec": {"replicas": 1}}),
            TypeRef::untyped(),
        ) else {
            panic!("a failed test is a 422")
        };
        let Err(Failure::BadRequest(_)) = apply(
            PatchType::Json,
            &json!({"op": "add"}),
            json!({}),
            TypeRef::untyped(),
        ) else {
            panic!("a malformed patch is a 400")
        };
        check(
            PatchType::Merge,
            json!({"data": {"a": null, "b": "2"}}),
            json!({"data": {"a": "1"}}),
            Ok(json!({"data": {"b": "2"}})),
        );
        check(
            PatchType::Merge,
            json!([]),
            json!({}),
            Err(Failure::BadRequest("Invalid JSON Patch".into())),
        );
    }
}
