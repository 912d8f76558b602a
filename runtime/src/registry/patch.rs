//! Applying a patch to the current object (kube's `patch.go` mechanisms): JSON patch
//! (RFC 6902), JSON merge patch (RFC 7386) and a subset of strategic merge patch.
//!
//! Strategic merge patch is a merge patch that honours `$patch: replace` and
//! `$patch: delete` in maps. That is all kubectl needs for the kinds it sends it for (core
//! kinds whose lists have no merge keys, so lists are replaced as a merge patch replaces
//! them); other directives (`$retainKeys`, `$setElementOrder/...`,
//! `$deleteFromPrimitiveList/...`, `$patch` in lists) are refused with a 400.

use serde_json::{Map, Value};

use super::PatchType;
use crate::api::KindInfo;

/// kube's `maxJSONPatchOperations`.
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// Why a patch does not apply.
#[derive(Debug, PartialEq, Eq)]
pub enum Failure {
    /// 400: the patch is malformed.
    BadRequest(String),
    /// 422: the patch is well formed but does not apply (a failed `test`, a missing path).
    Invalid(String),
    /// 413: too many operations.
    TooLarge(String),
}

/// The patch types a kind accepts, as kube lists them in a 415: strategic merge only for
/// the core group (kube's built-in types; custom resources do not support it).
pub fn accepted(info: &KindInfo) -> Vec<&'static str> {
    let mut types = vec![
        "application/json-patch+json",
        "application/merge-patch+json",
    ];
    if info.is_core() {
        types.push("application/strategic-merge-patch+json");
    }
    types.push("application/apply-patch+yaml");
    types
}

/// Whether `info` accepts `patch_type`.
pub fn supports(info: &KindInfo, patch_type: PatchType) -> bool {
    match patch_type {
        PatchType::Json | PatchType::Merge => true,
        PatchType::StrategicMerge => info.is_core(),
        PatchType::Apply => true,
    }
}

/// Applies `patch` to `current`.
pub fn apply(patch_type: PatchType, patch: &Value, mut current: Value) -> Result<Value, Failure> {
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
            check_directives(patch)?;
            Ok(merge_map(current, patch))
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

/// Refuses the directives this subset does not implement, anywhere in the patch.
fn check_directives(patch: &Map<String, Value>) -> Result<(), Failure> {
    for (key, value) in patch {
        if key == "$patch" {
            match value.as_str() {
                Some("replace" | "delete") => {}
                _ => {
                    return Err(Failure::BadRequest(format!(
                        "unknown patch type: {value} in map: {}",
                        Value::Object(patch.clone())
                    )));
                }
            }
        } else if key.starts_with('$') {
            return Err(unsupported(key));
        }
        check_value(value)?;
    }
    Ok(())
}

fn check_value(value: &Value) -> Result<(), Failure> {
    match value {
        Value::Object(map) => check_directives(map),
        Value::Array(items) => {
            for item in items {
                if let Value::Object(map) = item
                    && let Some(key) = map.keys().find(|k| k.starts_with('$'))
                {
                    return Err(unsupported(key));
                }
                check_value(item)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn unsupported(directive: &str) -> Failure {
    Failure::BadRequest(format!(
        "the strategic merge patch directive {directive:?} is not supported"
    ))
}

/// Merges a patch map into `current`: `null` deletes, maps merge, anything else replaces;
/// `$patch: replace` replaces the map, `$patch: delete` empties it.
fn merge_map(current: Value, patch: &Map<String, Value>) -> Value {
    let directive = patch.get("$patch").and_then(Value::as_str);
    if directive == Some("delete") {
        return Value::Object(Map::new());
    }
    let mut merged = match (directive, current) {
        (Some("replace"), _) => Map::new(),
        (_, Value::Object(map)) => map,
        _ => Map::new(),
    };
    for (key, value) in patch {
        if key == "$patch" {
            continue;
        }
        match value {
            Value::Null => {
                merged.remove(key);
            }
            Value::Object(inner) => {
                let slot = merged.entry(key.clone()).or_insert(Value::Null);
                *slot = merge_map(std::mem::take(slot), inner);
            }
            other => {
                merged.insert(key.clone(), other.clone());
            }
        }
    }
    Value::Object(merged)
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
        assert_eq!(apply(patch_type, &patch, current), expected);
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
        ) else {
            panic!("a failed test is a 422")
        };
        let Err(Failure::BadRequest(_)) = apply(PatchType::Json, &json!({"op": "add"}), json!({}))
        else {
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

    #[test]
    fn strategic_merge_patches_honour_replace_and_delete() {
        let current = json!({"data": {"a": "1", "b": "2"}, "metadata": {"labels": {"x": "y"}}});
        check(
            PatchType::StrategicMerge,
            json!({"data": {"c": "3", "a": null}}),
            current.clone(),
            Ok(json!({"data": {"b": "2", "c": "3"}, "metadata": {"labels": {"x": "y"}}})),
        );
        check(
            PatchType::StrategicMerge,
            json!({"data": {"$patch": "replace", "c": "3"}}),
            current.clone(),
            Ok(json!({"data": {"c": "3"}, "metadata": {"labels": {"x": "y"}}})),
        );
        check(
            PatchType::StrategicMerge,
            json!({"metadata": {"labels": {"$patch": "delete"}}}),
            current.clone(),
            Ok(json!({"data": {"a": "1", "b": "2"}, "metadata": {"labels": {}}})),
        );
        check(
            PatchType::StrategicMerge,
            json!({"$retainKeys": ["data"]}),
            current.clone(),
            Err(Failure::BadRequest(
                "the strategic merge patch directive \"$retainKeys\" is not supported".into(),
            )),
        );
        check(
            PatchType::StrategicMerge,
            json!({"spec": {"finalizers": [{"$patch": "delete"}]}}),
            current.clone(),
            Err(Failure::BadRequest(
                "the strategic merge patch directive \"$patch\" is not supported".into(),
            )),
        );
        let Err(Failure::BadRequest(message)) = apply(
            PatchType::StrategicMerge,
            &json!({"data": {"$patch": "merge"}}),
            current,
        ) else {
            panic!("an unknown $patch is a 400")
        };
        assert!(
            message.starts_with("unknown patch type: \"merge\" in map:"),
            "{message}"
        );
    }
}
