//! Schemas as the model holds them: from what schemars emits to Kubernetes-style OpenAPI
//! 3.0 ([`normalize`]).
//!
//! The model generates schemas with schemars' OpenAPI 3.0 settings minus `nullable`, which
//! leaves JSON Schema's ways of saying "optional" in place. Kubernetes' documents say it by
//! leaving the field out of `required`, and its clients break on anything else (kubectl
//! 1.20 rejects the whole v2 document over a `type: null`). So:
//!
//! | schemars emits                                   | kube-style 3.0                     |
//! |--------------------------------------------------|------------------------------------|
//! | `type: [string, "null"]` (`Option<String>`)      | `type: string`                     |
//! | `anyOf: [{$ref}, {type: null}]` (`Option<Struct>`) | `allOf: [{$ref}]`, siblings kept |
//! | `oneOf: [{type: string, enum: [A], description}, ...]` (documented unit enum) | `type: string, enum: [A, ...]`, variant docs appended to the description as kube does ("Possible enum values") |
//!
//! A `default` is also said in the description ("How many instances to run. Defaults to
//! 1."), as Kubernetes' API docs say it: `kubectl explain` prints descriptions but not
//! `default`.
//!
//! Lists also say how a strategic merge patch treats them (`super::patch_strategy`).

use serde_json::{Map, Value, json};

/// Rewrites a schema (and its subschemas) as schemars emits it into Kubernetes-style
/// OpenAPI 3.0: see the module documentation.
pub(crate) fn normalize(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::String(description)) = map.get_mut("description") {
        *description = plain_description(description);
    }
    describe_default(map);
    for key in ["anyOf", "oneOf"] {
        drop_null_alternative(map, key);
    }
    drop_null_type(map);
    collapse_string_enum(map);
    for_each_subschema(map, normalize);
}

/// Appends "Defaults to `value`." to the description of a schema with a `default`, unless
/// it says so already or the default is empty (`""`, `{}`, `[]`): that is no news.
/// Strings are quoted and the rest written as JSON, as kube's docs write them (`Defaults to
/// "TCP".`, `Defaults to 1.`).
fn describe_default(map: &mut Map<String, Value>) {
    let Some(default) = map.get("default") else {
        return;
    };
    let empty = match default {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    };
    if empty {
        return;
    }
    let sentence = format!("Defaults to {default}.");
    let description = match map.get("description").and_then(Value::as_str) {
        Some(d) if d.contains("Defaults to") => return,
        Some(d) if !d.trim().is_empty() => {
            let d = d.trim_end();
            let stop = if d.ends_with(['.', '!', '?']) {
                ""
            } else {
                "."
            };
            format!("{d}{stop} {sentence}")
        }
        _ => sentence,
    };
    map.insert("description".into(), Value::String(description));
}

/// Doc comments become descriptions; rustdoc's intra-doc links (`` [`WebApp`] ``) mean
/// nothing to `kubectl explain`, so only the code span is kept.
fn plain_description(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[`") {
        let Some(len) = rest[start + 2..].find("`]") else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push('`');
        out.push_str(&rest[start + 2..start + 2 + len]);
        out.push('`');
        rest = &rest[start + 2 + len + 2..];
    }
    out.push_str(rest);
    out
}

/// Applies `f` to the direct subschemas of a schema.
fn for_each_subschema(map: &mut Map<String, Value>, f: fn(&mut Value)) {
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" => value
                .as_object_mut()
                .into_iter()
                .flat_map(|p| p.values_mut())
                .for_each(f),
            "items" | "additionalProperties" | "not" => f(value),
            "allOf" | "anyOf" | "oneOf" => value.as_array_mut().into_iter().flatten().for_each(f),
            _ => {}
        }
    }
}

/// `{type: null}`, or what schemars' `AddNullable` makes of it.
fn is_null_schema(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => !types.is_empty() && types.iter().all(|t| t == "null"),
        Some(_) => false,
        None => {
            schema.get("const") == Some(&Value::Null) || schema.get("enum") == Some(&json!([null]))
        }
    }
}

/// `anyOf: [X, {type: null}]` -> `allOf: [X]` when X is a reference (kube's style for a
/// described reference), X merged into the schema otherwise.
fn drop_null_alternative(map: &mut Map<String, Value>, key: &str) {
    let Some(Value::Array(alternatives)) = map.get(key) else {
        return;
    };
    if !alternatives.iter().any(is_null_schema) {
        return;
    }
    let mut rest: Vec<Value> = alternatives
        .iter()
        .filter(|a| !is_null_schema(a))
        .cloned()
        .collect();
    if rest.len() > 1 {
        map.insert(key.to_owned(), Value::Array(rest));
        return;
    }
    map.remove(key);
    let Some(only) = rest.pop() else {
        return;
    };
    if only.get("$ref").is_some() {
        let all_of = map.entry("allOf").or_insert_with(|| json!([]));
        if let Some(all_of) = all_of.as_array_mut() {
            all_of.push(only);
        }
    } else if let Value::Object(only) = only {
        for (k, v) in only {
            map.entry(k).or_insert(v);
        }
    }
}

/// `type: [string, "null"]` -> `type: string`. Several non-null types become an `anyOf`,
/// which OpenAPI 3.0 can say and a type array it cannot.
fn drop_null_type(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.get("type") else {
        if map.get("type").is_some_and(|t| t == "null") {
            map.remove("type");
        }
        return;
    };
    let mut types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
    match types.len() {
        0 => {
            map.remove("type");
        }
        1 => {
            map.insert("type".into(), types.remove(0));
        }
        _ => {
            map.remove("type");
            if !map.contains_key("anyOf") {
                let alternatives = types.into_iter().map(|t| json!({"type": t})).collect();
                map.insert("anyOf".into(), Value::Array(alternatives));
            }
        }
    }
}

/// A `oneOf` of string constants (a unit enum whose variants have doc comments) -> one
/// string `enum`, with the variants' docs listed in the description as kube lists them.
fn collapse_string_enum(map: &mut Map<String, Value>) {
    let Some(Value::Array(alternatives)) = map.get("oneOf") else {
        return;
    };
    if map.get("type").is_some_and(|t| t != "string") || map.contains_key("enum") {
        return;
    }
    let mut values = Vec::new();
    let mut docs = Vec::new();
    for alternative in alternatives {
        let Some(alternative) = alternative.as_object() else {
            return;
        };
        let allowed = ["type", "enum", "const", "description", "title"];
        if alternative.keys().any(|k| !allowed.contains(&k.as_str()))
            || alternative.get("type").is_some_and(|t| t != "string")
        {
            return;
        }
        let these: Vec<&Value> = match (alternative.get("enum"), alternative.get("const")) {
            (Some(Value::Array(e)), None) => e.iter().collect(),
            (None, Some(c)) => vec![c],
            _ => return,
        };
        if these.is_empty() || !these.iter().all(|v| v.is_string()) {
            return;
        }
        let doc = alternative.get("description").and_then(Value::as_str);
        for value in these {
            let value = value.as_str().unwrap_or_default();
            docs.push(match doc {
                Some(doc) => format!(" - `\"{value}\"` {doc}"),
                None => format!(" - `\"{value}\"`"),
            });
            values.push(Value::String(value.to_owned()));
        }
    }
    map.remove("oneOf");
    map.insert("type".into(), json!("string"));
    map.insert("enum".into(), Value::Array(values));
    let listing = format!("Possible enum values:\n{}", docs.join("\n"));
    let description = match map.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d}\n\n{listing}"),
        _ => listing,
    };
    map.insert("description".into(), Value::String(description));
}
