//! A kind's compiled schema given back as the structural JSON schema CEL types are made of
//! (kapi-cel's `DeclType::of_schema`): what the type checking of admission policies
//! declares `object` and `params` as. Types, formats, nullability, properties, items,
//! additional properties, list types and the bounds cost estimates read; a recursive
//! schema (a definition's `JSONSchemaProps`) is cut at a depth, below which any value
//! goes.

use serde_json::{Map, Value, json};

use super::{KindSchema, ListType, Schemas, View};

/// How deep a schema is followed.
const MAX_DEPTH: usize = 32;

impl KindSchema<'_> {
    /// The kind's structural schema, as JSON.
    pub fn structural_json(&self) -> Value {
        node(self.schemas, self.root, MAX_DEPTH)
    }
}

/// Node `id` (with what it `allOf`s) as JSON, `depth` levels deep.
fn node(schemas: &Schemas, id: usize, depth: usize) -> Value {
    if depth == 0 {
        return json!({"x-kubernetes-preserve-unknown-fields": true});
    }
    let view = View {
        nodes: schemas.flatten(id),
    };
    let mut out = Map::new();
    let mut put = |key: &str, value: Value| {
        out.insert(key.to_owned(), value);
    };
    if let Some(ty) = view.first(|n| n.ty.clone()) {
        put("type", json!(ty));
    }
    if let Some(format) = view.first(|n| n.format.clone()) {
        put("format", json!(format));
    }
    for (key, set) in [
        ("nullable", view.any(|n| n.nullable)),
        ("x-kubernetes-int-or-string", view.any(|n| n.int_or_string)),
        (
            "x-kubernetes-preserve-unknown-fields",
            view.any(|n| n.preserve_unknown),
        ),
        ("x-kubernetes-embedded-resource", view.any(|n| n.embedded)),
    ] {
        if set {
            put(key, json!(true));
        }
    }
    for (key, bound) in [
        ("maxLength", view.first(|n| n.max_length)),
        ("maxItems", view.first(|n| n.max_items)),
        ("maxProperties", view.first(|n| n.max_properties)),
    ] {
        if let Some(bound) = bound {
            put(key, json!(bound));
        }
    }
    let mut properties = Map::new();
    for (name, child) in view.properties() {
        if !properties.contains_key(name) {
            properties.insert(name.clone(), node(schemas, *child, depth - 1));
        }
    }
    if !properties.is_empty() {
        put("properties", Value::Object(properties));
    }
    let mut required: Vec<&String> = Vec::new();
    for name in view.nodes.iter().flat_map(|n| n.required.iter()) {
        if !required.contains(&name) {
            required.push(name);
        }
    }
    if !required.is_empty() {
        put("required", json!(required));
    }
    if let Some(child) = view.first(|n| n.additional) {
        put("additionalProperties", node(schemas, child, depth - 1));
    }
    if let Some(child) = view.first(|n| n.items) {
        put("items", node(schemas, child, depth - 1));
    }
    match view.first(|n| (n.list_type != ListType::Atomic).then(|| n.list_type.clone())) {
        Some(ListType::Set) => put("x-kubernetes-list-type", json!("set")),
        Some(ListType::Map(keys)) => {
            put("x-kubernetes-list-type", json!("map"));
            put("x-kubernetes-list-map-keys", json!(keys));
        }
        _ => {}
    }
    Value::Object(out)
}
