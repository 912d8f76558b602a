//! What structured-merge-diff refuses of a value before it merges it, for those who
//! merge without applying (a mutating admission policy's apply configuration):
//!
//! - [`undeclared`]: fields the schema does not declare (kube's `field not declared in
//!   schema`, raised when the value is typed);
//! - [`atomic`]: where the value sets an atomic struct, map or list, which a merge would
//!   replace whole (kube's mutating policies refuse such a patch).
//!
//! Paths are printed as structured-merge-diff prints them (`.spec.ports[name="http"]`).

use serde_json::Value;

use super::{Atom, ListType, PathElement, TypeRef, item_element};
use crate::path::Path;

/// The paths of the fields of `value` that `tr` does not declare, in structured-merge-diff's order.
pub fn undeclared(value: &Value, tr: TypeRef<'_>) -> Vec<Path> {
    let mut out = Vec::new();
    walk(
        value,
        tr,
        &mut Vec::new(),
        &mut |value, tr, path, out: &mut Vec<Path>| {
            let (Value::Object(map), Atom::Map { fields, elem, .. }) =
                (value, tr.atom(Some(value)))
            else {
                return;
            };
            // An object that declares no properties is a map of anything (kube's `FieldsV1`).
            let declares = fields.0.iter().any(|node| !node.properties.is_empty());
            if tr.node.is_none() || elem.is_some() || tr.preserves_unknown() || !declares {
                return;
            }
            for key in map.keys().filter(|key| !fields.contains_key(key)) {
                let mut at = path.to_vec();
                at.push(PathElement::Field(key.clone()));
                out.push(Path(at));
            }
        },
        &mut out,
    );
    out.sort();
    out
}

/// The values of `value` whose JSON type is not the one `tr` declares there, with what
/// was expected (structured-merge-diff's `expected numeric (int or float), got string`).
pub fn mistyped(value: &Value, tr: TypeRef<'_>) -> Vec<(Path, String)> {
    let mut out = Vec::new();
    walk(
        value,
        tr,
        &mut Vec::new(),
        &mut |value, tr, path, out: &mut Vec<(Path, String)>| {
            let nodes = tr.nodes();
            if nodes.iter().any(|n| n.int_or_string) || value.is_null() {
                return;
            }
            let Some(declared) = nodes.iter().find_map(|n| n.ty.as_deref()) else {
                return;
            };
            let (fits, expected) = match declared {
                "string" => (value.is_string(), "string"),
                "integer" | "number" => (value.is_number(), "numeric (int or float)"),
                "boolean" => (value.is_boolean(), "boolean"),
                "object" => (value.is_object(), "map"),
                "array" => (value.is_array(), "list"),
                _ => (true, ""),
            };
            if !fits {
                let got = match value {
                    Value::String(_) => "string",
                    Value::Number(_) => "numeric",
                    Value::Bool(_) => "boolean",
                    Value::Object(_) => "map",
                    Value::Array(_) => "list",
                    Value::Null => "null",
                };
                out.push((
                    Path(path.to_vec()),
                    format!("expected {expected}, got {got}"),
                ));
            }
        },
        &mut out,
    );
    out.sort();
    out
}

/// The paths where `value` sets a value `tr` declares atomic: a struct or map with
/// `x-kubernetes-map-type: atomic`, a list that is neither a set nor a map. What is
/// below such a value is not looked at.
pub fn atomic(value: &Value, tr: TypeRef<'_>) -> Vec<Path> {
    let mut out = Vec::new();
    atomic_at(value, tr, &mut Vec::new(), &mut out);
    out.sort();
    out
}

fn atomic_at(value: &Value, tr: TypeRef<'_>, path: &mut Vec<PathElement>, out: &mut Vec<Path>) {
    // An untyped value (no schema here) is nobody's to refuse.
    if tr.node.is_none() {
        return;
    }
    match (value, tr.atom(Some(value))) {
        (Value::Object(_), Atom::Map { atomic: true, .. })
        | (
            Value::Array(_),
            Atom::List {
                kind: ListType::Atomic,
                ..
            },
        ) => {
            out.push(Path(path.clone()));
        }
        (Value::Object(map), Atom::Map { fields, elem, .. }) => {
            for (key, child) in map {
                path.push(PathElement::Field(key.clone()));
                atomic_at(child, tr.field(&fields, elem, key), path, out);
                path.pop();
            }
        }
        (Value::Array(items), Atom::List { kind, elem }) => {
            for (index, item) in items.iter().enumerate() {
                let element =
                    item_element(&tr, &kind, elem, item).unwrap_or(PathElement::Index(index));
                path.push(element);
                atomic_at(item, tr.at(elem), path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Calls `visit` on every value of `value` (the root first), with its type and path.
fn walk<T>(
    value: &Value,
    tr: TypeRef<'_>,
    path: &mut Vec<PathElement>,
    visit: &mut impl FnMut(&Value, TypeRef<'_>, &[PathElement], &mut T),
    out: &mut T,
) {
    visit(value, tr, path, out);
    match (value, tr.atom(Some(value))) {
        (Value::Object(map), Atom::Map { fields, elem, .. }) => {
            for (key, child) in map {
                path.push(PathElement::Field(key.clone()));
                walk(child, tr.field(&fields, elem, key), path, visit, out);
                path.pop();
            }
        }
        (Value::Array(items), Atom::List { kind, elem }) => {
            for (index, item) in items.iter().enumerate() {
                let element = match kind {
                    ListType::Atomic => PathElement::Index(index),
                    _ => item_element(&tr, &kind, elem, item).unwrap_or(PathElement::Index(index)),
                };
                path.push(element);
                walk(item, tr.at(elem), path, visit, out);
                path.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kapi_schema::{KindSchema, Schemas};
    use serde_json::json;

    fn schemas() -> (Schemas, usize) {
        let selector = json!({"type": "object", "x-kubernetes-map-type": "atomic",
            "properties": {"matchLabels": {"type": "object",
                "additionalProperties": {"type": "string"}}}});
        let port = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "port": {"type": "integer"}}});
        let schema = json!({"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {
                "labels": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "selector": selector,
                "args": {"type": "array", "items": {"type": "string"}},
                "ports": {"type": "array", "items": port, "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"]},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}});
        Schemas::standalone(&schema, &Default::default()).unwrap()
    }

    fn printed(paths: Vec<Path>) -> Vec<String> {
        paths.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn undeclared_fields_are_named_as_smd_names_them() {
        let (schemas, root) = schemas();
        let tr = TypeRef::root(KindSchema::of(&schemas, root));
        let value = json!({"metadata": {"labels": {"any": "x"}}, "spec": {"replicasx": 1,
            "ports": [{"name": "http", "portx": 80}], "extra": {"free": 1}}});
        assert_eq!(
            printed(undeclared(&value, tr)),
            [".spec.ports[name=\"http\"].portx", ".spec.replicasx"]
        );
    }

    #[test]
    fn atomic_values_are_found_and_granular_ones_are_not() {
        let (schemas, root) = schemas();
        let tr = TypeRef::root(KindSchema::of(&schemas, root));
        let value = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"replicas": 1,
            "selector": {"matchLabels": {"a": "b"}}, "args": ["x"],
            "ports": [{"name": "http", "port": 80}]}});
        assert_eq!(
            printed(atomic(&value, tr)),
            [".spec.args", ".spec.selector"]
        );
    }

    #[test]
    fn values_of_another_json_type_are_found() {
        let (schemas, root) = schemas();
        let tr = TypeRef::root(KindSchema::of(&schemas, root));
        let value = json!({"spec": {"replicas": "3", "args": ["x"], "extra": {"any": 1}}});
        let found: Vec<String> = (mistyped(&value, tr).iter())
            .map(|(path, why)| format!("{path}: {why}"))
            .collect();
        assert_eq!(
            found,
            [".spec.replicas: expected numeric (int or float), got string"]
        );
    }
}
