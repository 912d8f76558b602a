//! JSON values as the CEL values rules see, as kube converts unstructured data
//! (`UnstructuredToVal`): formats read as kube-openapi reads them, lists with their list
//! types, objects by escaped property name, invalid data as values that fail the rules
//! reading them.

use std::sync::Arc;

use serde_json::Value as Json;

use crate::escape::escape;
use crate::time::{Duration, Timestamp};
use crate::types::with_type_and_object_meta;
use crate::value::{Key, List, ListKind, Map, Value};

/// A JSON value as the CEL value rules see at `schema` (kube's `UnstructuredToVal`):
/// formats become timestamps, durations and bytes, lists carry their list type, objects
/// show their declared properties by escaped name.
pub fn to_value(json: &Json, schema: &Json) -> Value {
    let flag = |name: &str| schema.get(name).and_then(Json::as_bool) == Some(true);
    // Data the schema does not describe, which the schema's own validation refuses first,
    // fails the rules that read it, with kube's messages.
    let ty = schema.get("type").and_then(Json::as_str);
    match json {
        Json::Null if !flag("nullable") => {
            return error("invalid data, got null for schema with nullable=false".into());
        }
        Json::Null => return Value::Null,
        _ if flag("x-kubernetes-int-or-string") => {
            return match json {
                Json::String(_) => plain(json),
                Json::Number(n) if n.is_i64() || n.is_u64() => plain(json),
                _ => error(
                    "invalid data, expected XIntOrString value to be either a string or integer"
                        .into(),
                ),
            };
        }
        _ if ty == Some("object") && !json.is_object() => {
            return error(
                "invalid data, expected a map for the provided schema with type=object".into(),
            );
        }
        _ if ty == Some("array") && !json.is_array() => {
            return error(
                "invalid data, expected an array for the provided schema with type=array".into(),
            );
        }
        _ => {}
    }
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match schema.get("type").and_then(Json::as_str) {
            Some("number") => Value::Double(n.as_f64().unwrap_or(0.0)),
            _ => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Double(n.as_f64().unwrap_or(0.0)),
            },
        },
        Json::String(s) => match schema.get("format").and_then(Json::as_str) {
            Some("date-time") => match date_time(s) {
                Some(t) => Value::Timestamp(t),
                None => error(format!(
                    "Invalid date-time formatted string {s}: parsing time {s:?} as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse"
                )),
            },
            Some("date") => match Timestamp::parse(&format!("{s}T00:00:00Z")) {
                Ok(t) => Value::Timestamp(t),
                Err(_) => error(format!(
                    "Invalid date formatted string {s}: parsing time {s:?} as \"2006-01-02\": cannot parse"
                )),
            },
            Some("duration") => match strfmt_duration(s) {
                Some(d) => Value::Duration(d),
                None => error(format!(
                    "Invalid duration {s}: unable to parse {s} as duration"
                )),
            },
            Some("byte") => {
                use base64::Engine;
                match base64::engine::general_purpose::STANDARD.decode(s) {
                    Ok(bytes) => Value::Bytes(bytes.into()),
                    Err(e) => error(format!("Invalid byte formatted string {s}: {e}")),
                }
            }
            _ => Value::string(s.as_str()),
        },
        Json::Array(items) => {
            let item_schema = schema.get("items").unwrap_or(&Json::Null);
            let kind = match schema.get("x-kubernetes-list-type").and_then(Json::as_str) {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(
                    (schema
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Json::as_array))
                    .into_iter()
                    .flatten()
                    .filter_map(Json::as_str)
                    .map(|k| escape(k).unwrap_or_else(|| k.to_owned()))
                    .collect(),
                ),
                _ => ListKind::Atomic,
            };
            Value::List(Arc::new(List {
                items: items.iter().map(|i| to_value(i, item_schema)).collect(),
                kind,
            }))
        }
        Json::Object(fields) => {
            let embedded = flag("x-kubernetes-embedded-resource");
            let owned;
            let schema = if embedded {
                owned = with_type_and_object_meta(schema);
                &owned
            } else {
                schema
            };
            let properties = schema.get("properties").and_then(Json::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            let unknown = flag("x-kubernetes-preserve-unknown-fields");
            let mut map = Map::default();
            for (name, field) in fields {
                let field_schema = match (properties.and_then(|p| p.get(name)), additional) {
                    (Some(s), _) => s,
                    (None, Some(s)) if properties.is_none() => s,
                    // Unknown fields kept: rules cannot name them, but equality sees them.
                    _ if unknown => {
                        map.entries
                            .insert(Key::String(name.as_str().into()), plain(field));
                        continue;
                    }
                    _ => continue,
                };
                let key = match additional.filter(|_| properties.is_none()) {
                    Some(_) => name.clone(),
                    None => match escape(name) {
                        Some(escaped) => escaped,
                        None => continue,
                    },
                };
                map.entries
                    .insert(Key::String(key.into()), to_value(field, field_schema));
            }
            Value::Map(Arc::new(map))
        }
    }
}

/// A value that fails the rules reading it.
fn error(message: String) -> Value {
    crate::interpreter::error_value(crate::library::Error::new(message))
}

/// kube-openapi's `strfmt.ParseDuration`: Go's syntax, else numbers with units in words
/// (`1d`, `5 minutes`, `2 weeks`), summed.
fn strfmt_duration(text: &str) -> Option<Duration> {
    if let Ok(d) = Duration::parse(text) {
        return Some(d);
    }
    const UNITS: &[(&[&str], i128)] = &[
        (&["ns", "nano"], 1),
        (&["us", "µs", "micro"], 1_000),
        (&["ms", "milli"], 1_000_000),
        (&["s", "sec"], 1_000_000_000),
        (&["m", "min"], 60_000_000_000),
        (&["h", "hr", "hour"], 3_600_000_000_000),
        (&["d", "day"], 86_400_000_000_000),
        (&["w", "wk", "week"], 604_800_000_000_000),
    ];
    let (mut total, mut found) = (0i128, false);
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let factor: i128 = chars[start..i].iter().collect::<String>().parse().ok()?;
        let mut j = i;
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        let unit_start = j;
        while j < chars.len() && (chars[j].is_ascii_alphabetic() || chars[j] == 'µ') {
            j += 1;
        }
        if j == unit_start {
            continue;
        }
        let unit: String = chars[unit_start..j]
            .iter()
            .collect::<String>()
            .to_lowercase();
        i = j;
        for (variants, multiplier) in UNITS {
            for (k, variant) in variants.iter().enumerate() {
                // The longest spelling of a unit also matches as a prefix (`minutes`).
                if (k == variants.len() - 1 && unit.starts_with(variant)) || unit == *variant {
                    found = true;
                    total += factor * multiplier;
                }
            }
        }
    }
    found.then_some(Duration(total))
}

/// kube-openapi's `strfmt.ParseDateTime`: RFC 3339 (any fraction), or a local time without
/// a zone (read as UTC); the empty string is the Unix epoch.
fn date_time(text: &str) -> Option<Timestamp> {
    if text.is_empty() {
        return Some(Timestamp(0, 0));
    }
    Timestamp::parse(text).ok().or_else(|| {
        Timestamp::parse(&format!("{text}Z"))
            .ok()
            .filter(|_| text.len() == 19)
    })
}

/// A JSON value without a schema.
pub(crate) fn plain(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => n
            .as_i64()
            .map(Value::Int)
            .unwrap_or_else(|| Value::Double(n.as_f64().unwrap_or(0.0))),
        Json::String(s) => Value::string(s.as_str()),
        Json::Array(items) => Value::list(items.iter().map(plain).collect()),
        Json::Object(fields) => Value::Map(Arc::new(Map {
            entries: fields
                .iter()
                .map(|(k, v)| (Key::String(k.as_str().into()), plain(v)))
                .collect(),
            type_name: None,
        })),
    }
}
