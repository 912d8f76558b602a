//! What mutating admission policies build in CEL, as kube's `pkg/cel/mutation` declares
//! and reads it:
//!
//! - [`declare`]: `Object` and every `Object.<path>` are struct types that take any
//!   field (`Object{spec: Object.spec{replicas: 3}}`), `JSONPatch` one with `op`, `path`,
//!   `from` (strings) and `value` (`dyn`), and the `jsonpatch.escapeKey` library;
//! - [`apply_configuration`]: an `Object` value as the JSON of an apply configuration;
//! - [`json_patch`]: a `list(JSONPatch)` value as the operations of an RFC 6902 patch.
//!
//! Nested `Object` values must be named for the fields that hold them (kube's
//! `CheckTypeNamesMatchFieldPathNames`: `Object.spec.template` in `spec.template`, list
//! and map items named for the field of the list or map), which only evaluation sees.

use std::collections::BTreeMap;

use serde_json::{Map as JsonMap, Value as Json};

use crate::library::Env;
use crate::ty::Type;
use crate::value::{Key, Value};

/// The root of the object types.
pub const OBJECT: &str = "Object";
/// The JSON patch operation type.
pub const JSON_PATCH: &str = "JSONPatch";

/// Declares the object types, `JSONPatch` and `jsonpatch.escapeKey` in `env`.
pub fn declare(env: &mut Env) {
    env.open_struct_types(OBJECT);
    let fields: BTreeMap<String, Type> = [
        ("op", Type::String),
        ("path", Type::String),
        ("from", Type::String),
        ("value", Type::Dyn),
    ]
    .into_iter()
    .map(|(name, ty)| (name.to_owned(), ty))
    .collect();
    env.struct_type(JSON_PATCH, fields);
    crate::library::kube::jsonpatch::install(env);
}

/// The type an apply configuration's expression must have.
pub fn object_type() -> Type {
    Type::opaque(OBJECT)
}

/// The type a JSON patch's expression must have.
pub fn json_patch_type() -> Type {
    Type::list(Type::opaque(JSON_PATCH))
}

/// An apply configuration's value as JSON: kube's errors for a value that is not an
/// `Object` or whose nested objects are misnamed.
pub fn apply_configuration(value: &Value) -> Result<Json, String> {
    match value {
        Value::Map(map) if map.type_name.as_deref() == Some(OBJECT) => {}
        other => {
            return Err(format!(
                "unsupported return type from ApplyConfiguration expression: {}",
                other.type_name()
            ));
        }
    }
    check_names(value, OBJECT).map_err(|e| format!("type mismatch: {e}"))?;
    to_json(value)
}

/// A JSON patch expression's value as the patch's operations: `op` and `path` always,
/// `from` when not empty, `value` when set.
pub fn json_patch(value: &Value) -> Result<Json, String> {
    let Value::List(list) = value else {
        return Err("type mismatch: JSONPatchType.expression should evaluate to array".into());
    };
    let mut operations = Vec::with_capacity(list.items.len());
    for item in &list.items {
        let Value::Map(patch) = item else {
            return Err(format!(
                "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of {}",
                item.type_name()
            ));
        };
        let field = |name: &str| patch.entries.get(&Key::String(name.into()));
        let text = |name: &str| -> Result<String, String> {
            match field(name) {
                None => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.to_string()),
                Some(other) => Err(format!(
                    "unexpected type {} for JSONPatchType '{name}' field",
                    other.type_name()
                )),
            }
        };
        let mut operation = JsonMap::new();
        operation.insert("op".into(), Json::String(text("op")?));
        operation.insert("path".into(), Json::String(text("path")?));
        let from = text("from")?;
        if !from.is_empty() {
            operation.insert("from".into(), Json::String(from));
        }
        if let Some(value) = field("value") {
            if let Value::Map(map) = value
                && let Some(name) = &map.type_name
            {
                // The value's own name is not checked (kube's), what it holds is.
                check_names(value, name).map_err(|e| format!("type mismatch: {e}"))?;
            }
            let json = to_json(value).map_err(|e| {
                format!("JSONPath valueExpression evaluated to a type that could not marshal to JSON: {e}")
            })?;
            operation.insert("value".into(), json);
        }
        operations.push(Json::Object(operation));
    }
    Ok(Json::Array(operations))
}

/// Checks that the objects in `value`, at the place named `path`, are named for it.
fn check_names(value: &Value, path: &str) -> Result<(), String> {
    crate::stack::guard(|| match value {
        Value::Map(map) => {
            if let Some(name) = &map.type_name {
                if **name != *path {
                    return Err(format!(
                        "unexpected type name {name:?}, expected {path:?}, which matches field name path from root Object type"
                    ));
                }
                for (key, child) in &map.entries {
                    if let Key::String(field) = key {
                        check_names(child, &format!("{path}.{field}"))?;
                    }
                }
                return Ok(());
            }
            map.entries.values().try_for_each(|v| check_names(v, path))
        }
        Value::List(list) => list.items.iter().try_for_each(|v| check_names(v, path)),
        _ => Ok(()),
    })
}

/// A CEL value as JSON, as kube marshals what an expression made: bytes in base64,
/// durations and timestamps as their strings; map keys must be strings.
pub fn to_json(value: &Value) -> Result<Json, String> {
    crate::stack::guard(|| {
        Ok(match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::Uint(u) => Json::from(*u),
            // Go writes a whole float64 without a fraction (`3`, not `3.0`), which integer
            // fields then read.
            Value::Double(d) if d.fract() == 0.0 && d.abs() < 9_007_199_254_740_992.0 => {
                Json::from(*d as i64)
            }
            Value::Double(d) => serde_json::Number::from_f64(*d)
                .map(Json::Number)
                .ok_or_else(|| format!("json: unsupported value: {d}"))?,
            Value::String(s) => Json::String(s.to_string()),
            Value::Bytes(b) => {
                use base64::Engine;
                Json::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
            Value::Duration(d) => Json::String(d.to_string()),
            Value::Timestamp(t) => Json::String(t.to_string()),
            Value::List(list) => {
                Json::Array(list.items.iter().map(to_json).collect::<Result<_, _>>()?)
            }
            Value::Map(map) => {
                let mut object = JsonMap::new();
                for (key, v) in &map.entries {
                    let Key::String(key) = key else {
                        return Err(format!(
                            "map key {:?} is of type {}, not string",
                            key.to_value().to_string(),
                            key.to_value().type_name()
                        ));
                    };
                    object.insert(key.to_string(), to_json(v)?);
                }
                Json::Object(object)
            }
            Value::Optional(Some(v)) => to_json(v)?,
            Value::Optional(None) => Json::Null,
            other => return Err(format!("unsupported type: {}", other.type_name())),
        })
    })
}
