//! Objects as JSON (kube's unstructured objects): their metadata fields, values at dotted
//! paths, and the values the server sets (uids, timestamps). Every layer that handles
//! objects without their types reads them through these.

use serde_json::{Map, Value};

/// The `metadata` object of an object, if it has one.
pub fn meta(object: &Value) -> Option<&Map<String, Value>> {
    object.get("metadata")?.as_object()
}

/// The `metadata` object, created (or replaced, if not an object) when missing.
pub fn meta_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.is_object() {
        *object = Value::Object(Map::new());
    }
    let fields = object.as_object_mut().expect("made an object above");
    let metadata = fields
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    metadata.as_object_mut().expect("made an object above")
}

/// A string field of `metadata` (`name`, `uid`, ...); empty strings count as unset.
pub fn meta_str<'v>(object: &'v Value, field: &str) -> Option<&'v str> {
    meta(object)?.get(field)?.as_str().filter(|s| !s.is_empty())
}

/// Sets `metadata.<field>`, or removes it for `None`.
pub fn set_meta(object: &mut Value, field: &str, value: Option<Value>) {
    let metadata = meta_mut(object);
    match value {
        Some(value) => {
            metadata.insert(field.to_owned(), value);
        }
        None => {
            metadata.remove(field);
        }
    }
}

/// `metadata.generation`, 0 when unset.
pub fn generation(object: &Value) -> i64 {
    meta(object)
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// The current time as kube writes timestamps: RFC 3339, UTC, seconds.
pub fn now() -> String {
    crate::meta::now()
}

/// A fresh uid (a random v4 UUID, as kube's).
pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The field names of a dotted path (`.spec.replicas` -> `spec`, `replicas`).
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
}

/// The value at a dotted path; `null` counts as missing.
pub fn get_path<'v>(object: &'v Value, path: &str) -> Option<&'v Value> {
    segments(path)
        .try_fold(object, |value, segment| value.get(segment))
        .filter(|v| !v.is_null())
}

/// Removes the value at a dotted path, if there is one.
pub fn remove_path(object: &mut Value, path: &str) {
    let names: Vec<&str> = segments(path).collect();
    let Some((last, parents)) = names.split_last() else {
        return;
    };
    let parent = (parents.iter()).try_fold(object, |value, segment| value.get_mut(*segment));
    if let Some(Value::Object(map)) = parent {
        map.remove(*last);
    }
}

/// Sets the value at a dotted path, creating the objects on the way.
pub fn set_path(object: &mut Value, path: &str, value: Value) {
    let mut current = object;
    for segment in segments(path) {
        if !current.is_object() {
            *current = Value::Object(Map::new());
        }
        current = (current.as_object_mut().expect("made an object above"))
            .entry(segment)
            .or_insert(Value::Null);
    }
    *current = value;
}
