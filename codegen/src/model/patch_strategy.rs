//! The strategic-merge-patch extensions of lists, derived from their list type so nothing
//! is declared twice: kubectl computes strategic merge patches from
//! `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key`, the server applies them
//! by `x-kubernetes-list-type`.
//!
//! | list extensions                                   | published as well                 |
//! |---------------------------------------------------|-----------------------------------|
//! | `x-kubernetes-list-type: map`, one `x-kubernetes-list-map-keys` `k` | `x-kubernetes-patch-merge-key: k`, `x-kubernetes-patch-strategy: merge` |
//! | `x-kubernetes-list-type: set`                     | `x-kubernetes-patch-strategy: merge` |
//! | `map` with several keys, `atomic`                 | nothing: kubectl and the server replace the list |
//!
//! A declared `merge` strategy may add to the implied one (`merge,retainKeys`); a map list
//! keyed by several fields may be merged by one of them, and an atomic list by a key of its
//! items, as kube's own are: strategic merge patches follow the patch extensions, apply
//! the list type.

use serde_json::{Map, Value, json};

use super::ModelError;

/// `x-kubernetes-list-type`: `atomic` (the default), `set` or `map`.
const LIST_TYPE: &str = "x-kubernetes-list-type";
/// `x-kubernetes-list-map-keys`: the keys of a `map` list's items.
const LIST_MAP_KEYS: &str = "x-kubernetes-list-map-keys";
/// `x-kubernetes-patch-strategy`: how a strategic merge patch treats the field.
const PATCH_STRATEGY: &str = "x-kubernetes-patch-strategy";
/// `x-kubernetes-patch-merge-key`: the field identifying the items a strategic merge patch
/// merges.
const PATCH_MERGE_KEY: &str = "x-kubernetes-patch-merge-key";

/// Publishes, on every list of `schema` (named `name`; at `path`, empty for the top), the
/// strategic-merge-patch extensions its list type implies (see the module documentation).
/// Extensions a schema declares itself are kept when they agree with the list type, and
/// refused when they contradict it: kubectl would send patches the server applies
/// differently. Lists without a list type are left as declared (`ObjectMeta`'s
/// `ownerReferences`).
pub(crate) fn patch_strategies(
    name: &str,
    schema: &mut Value,
    path: &str,
) -> Result<(), ModelError> {
    let Some(map) = schema.as_object_mut() else {
        return Ok(());
    };
    list_patch_strategy(name, map, path)?;
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" => {
                for (property, schema) in value.as_object_mut().into_iter().flatten() {
                    patch_strategies(name, schema, &at(&format!("properties.{property}")))?;
                }
            }
            "items" | "additionalProperties" => patch_strategies(name, value, &at(key))?,
            "allOf" => {
                for (i, branch) in value.as_array_mut().into_iter().flatten().enumerate() {
                    patch_strategies(name, branch, &at(&format!("allOf[{i}]")))?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// [`patch_strategies`] of one schema, without its subschemas.
fn list_patch_strategy(
    name: &str,
    map: &mut Map<String, Value>,
    path: &str,
) -> Result<(), ModelError> {
    let Some(list_type) = map.get(LIST_TYPE) else {
        return Ok(());
    };
    let list_type = list_type.as_str().unwrap_or_default();
    let keys: Vec<&str> = (map.get(LIST_MAP_KEYS).and_then(Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let (strategy, merge_key) = match (list_type, keys.as_slice()) {
        ("map", [key]) => (Some("merge"), Some((*key).to_owned())),
        ("set", _) => (Some("merge"), None),
        _ => (None, None),
    };
    let declared_strategy = map.get(PATCH_STRATEGY).cloned();
    let declared_key = map.get(PATCH_MERGE_KEY).cloned();
    // A map list keyed by several fields may say how kubectl merges it by one of them, as
    // kube's own do (`containers[].ports`: keys `containerPort` and `protocol`, merged by
    // `containerPort`).
    let keyed_by_several = list_type == "map"
        && keys.len() > 1
        && (declared_key.as_ref().and_then(Value::as_str)).is_some_and(|d| keys.contains(&d));
    let parts = |d: &Value| -> Vec<String> {
        (d.as_str().unwrap_or_default().split(','))
            .map(|s| s.trim().to_owned())
            .collect()
    };
    let strategy_contradicts = declared_strategy.as_ref().is_some_and(|d| match strategy {
        // `merge,retainKeys` merges too (kube's `volumes`).
        Some(strategy) => !d.is_string() || !parts(d).iter().any(|p| p == strategy),
        None if keyed_by_several => !parts(d).iter().any(|p| p == "merge"),
        // An atomic list that strategic merge patches merge anyway, as kube's own
        // (`hostIPs`: atomic to apply, merged by `ip` in a strategic merge patch, which
        // follows the patch extensions); any strategy is the list's own to declare.
        None => false,
    });
    let key_contradicts = !keyed_by_several
        && list_type != "atomic"
        && (declared_key.as_ref()).is_some_and(|d| merge_key.as_deref().is_none_or(|key| d != key));
    if strategy_contradicts || key_contradicts {
        let declared: Vec<String> = [
            (PATCH_STRATEGY, &declared_strategy),
            (PATCH_MERGE_KEY, &declared_key),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some(format!("{k}: {}", extension_value(v.as_ref()?))))
        .collect();
        let mut list = format!("{LIST_TYPE}: {list_type}");
        if list_type == "map" {
            list.push_str(&format!(" with {LIST_MAP_KEYS}: [{}]", keys.join(", ")));
        }
        let implied = match (strategy, &merge_key) {
            (Some(strategy), Some(key)) => {
                format!("{PATCH_STRATEGY}: {strategy}, {PATCH_MERGE_KEY}: {key}")
            }
            (Some(strategy), None) => {
                format!("{PATCH_STRATEGY}: {strategy} and no {PATCH_MERGE_KEY}")
            }
            _ => "that patches replace the list: no merge strategy, no merge key".to_owned(),
        };
        return Err(ModelError::PatchStrategyConflict {
            schema: name.to_owned(),
            path: if path.is_empty() {
                "the top".to_owned()
            } else {
                path.to_owned()
            },
            declared: declared.join(", "),
            list_type: list,
            implied,
        });
    }
    if let Some(key) = merge_key
        && declared_key.is_none()
    {
        map.insert(PATCH_MERGE_KEY.into(), Value::String(key));
    }
    if let Some(strategy) = strategy
        && declared_strategy.is_none()
    {
        map.insert(PATCH_STRATEGY.into(), json!(strategy));
    }
    Ok(())
}

/// An extension's value as an error names it: strings bare, the rest as JSON.
fn extension_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Deriving the patch extensions of `input` gives `expected`.
    #[track_caller]
    fn check_patch(input: Value, expected: Value) {
        let mut actual = input;
        patch_strategies("S", &mut actual, "").unwrap();
        assert_eq!(actual, expected, "\nactual: {actual:#}");
    }

    /// The error deriving the patch extensions of `input` gives.
    #[track_caller]
    fn patch_error(input: Value) -> String {
        let mut schema = input;
        patch_strategies("dev.example.v1.Spec", &mut schema, "")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn list_types_say_how_strategic_merge_patch_treats_lists() {
        let items = json!({"$ref": "#/components/schemas/a.Port"});
        // A list map with one key merges its items by that key.
        check_patch(
            json!({"type": "array", "items": items, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["containerPort"]}),
            json!({"type": "array", "items": items, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["containerPort"],
                "x-kubernetes-patch-merge-key": "containerPort",
                "x-kubernetes-patch-strategy": "merge"}),
        );
        // A set merges its values.
        check_patch(
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}),
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set",
                "x-kubernetes-patch-strategy": "merge"}),
        );
        // Strategic merge patch has one merge key: a list map with several keys, like an
        // atomic list (or one without list type), is replaced whole.
        for unchanged in [
            json!({"type": "array", "items": items, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["containerPort", "protocol"]}),
            json!({"type": "array", "items": items, "x-kubernetes-list-type": "atomic"}),
            json!({"type": "array", "items": items}),
            // Declared without a list type: kept as declared (ObjectMeta's ownerReferences).
            json!({"type": "array", "items": items, "x-kubernetes-patch-merge-key": "uid",
                "x-kubernetes-patch-strategy": "merge"}),
            // Declared in agreement with the list type: kept (ObjectMeta's finalizers).
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set",
                "x-kubernetes-patch-strategy": "merge"}),
            json!({"type": "array", "items": items, "x-kubernetes-list-type": "atomic",
                "x-kubernetes-patch-strategy": "replace"}),
        ] {
            check_patch(unchanged.clone(), unchanged);
        }
        // What is declared in agreement is kept, what is missing added.
        check_patch(
            json!({"type": "array", "items": items, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"], "x-kubernetes-patch-strategy": "merge"}),
            json!({"type": "array", "items": items, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"], "x-kubernetes-patch-strategy": "merge",
                "x-kubernetes-patch-merge-key": "name"}),
        );
    }

    #[test]
    fn patch_extensions_reach_every_subschema() {
        let set =
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"});
        let merged = json!({"type": "array", "items": {"type": "string"},
            "x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge"});
        check_patch(
            json!({
                "type": "object",
                "properties": {
                    "a": set,
                    "b": {"type": "array", "items": set, "x-kubernetes-list-type": "atomic"},
                    "c": {"type": "object", "additionalProperties": set},
                    "d": {"allOf": [set]}
                }
            }),
            json!({
                "type": "object",
                "properties": {
                    "a": merged,
                    "b": {"type": "array", "items": merged, "x-kubernetes-list-type": "atomic"},
                    "c": {"type": "object", "additionalProperties": merged},
                    "d": {"allOf": [merged]}
                }
            }),
        );
    }

    #[test]
    fn declared_patch_extensions_must_agree_with_the_list_type() {
        let items = json!({"$ref": "#/components/schemas/a.Port"});
        assert_eq!(
            patch_error(json!({"type": "object", "properties": {"ports": {
                "type": "array", "items": items, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["port"], "x-kubernetes-patch-merge-key": "name"}}})),
            "schema dev.example.v1.Spec: x-kubernetes-patch-merge-key: name at properties.ports \
             contradicts x-kubernetes-list-type: map with x-kubernetes-list-map-keys: [port], \
             which implies x-kubernetes-patch-strategy: merge, x-kubernetes-patch-merge-key: \
             port; drop the declared extension (the list type implies it) or change the list type"
        );
        assert_eq!(
            patch_error(
                json!({"type": "array", "items": items, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["port"], "x-kubernetes-patch-strategy": "replace"})
            ),
            "schema dev.example.v1.Spec: x-kubernetes-patch-strategy: replace at the top \
             contradicts x-kubernetes-list-type: map with x-kubernetes-list-map-keys: [port], \
             which implies x-kubernetes-patch-strategy: merge, x-kubernetes-patch-merge-key: \
             port; drop the declared extension (the list type implies it) or change the list type"
        );
        assert_eq!(
            patch_error(
                json!({"type": "object", "properties": {"owners": {"type": "array",
                "items": {"type": "string"}, "x-kubernetes-list-type": "set",
                "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"}}})
            ),
            "schema dev.example.v1.Spec: x-kubernetes-patch-strategy: merge, \
             x-kubernetes-patch-merge-key: name at properties.owners contradicts \
             x-kubernetes-list-type: set, which implies x-kubernetes-patch-strategy: merge and \
             no x-kubernetes-patch-merge-key; drop the declared extension (the list type implies \
             it) or change the list type"
        );
        // kube's own combinations are what they declare: merged by one of several keys,
        // and an atomic list merged by a key in strategic merge patches.
        for declared in [
            json!({"type": "array", "items": items, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["a", "b"], "x-kubernetes-patch-strategy": "merge",
                "x-kubernetes-patch-merge-key": "a"}),
            json!({"type": "array", "items": items, "x-kubernetes-list-type": "atomic",
                "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "ip"}),
            json!({"type": "array", "items": items, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-patch-strategy": "merge,retainKeys",
                "x-kubernetes-patch-merge-key": "name"}),
        ] {
            check_patch(declared.clone(), declared);
        }
    }
}
