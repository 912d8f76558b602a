//! The validation rules of compiled kinds (`#[kapi::rules]`), judged before anything is
//! rendered as kube-apiserver judges a CustomResourceDefinition's: each kind's schema in
//! each version inlined into its structural form (`kapi_schema::structural`), then kube's
//! definition checks (`kapi_cel::definition`: every rule compiled against the types of the
//! node it sits on, `oldSelf` only where old values correlate, estimated costs within the
//! limits per rule and per kind). Each refusal names where the rule was written (the
//! `x-kapi-source` the attribute records) and, for a cost, the fields without the bound
//! that would make it estimable. The sources are then dropped: documents never show them.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde_json::Value;

use super::ModelError;

/// The key the attribute records a rule's place under.
const SOURCE: &str = "x-kapi-source";
/// The rules' keyword.
const RULES: &str = "x-kubernetes-validations";
/// Where kube's errors place a version's schema.
const ROOT: &str = "openAPIV3Schema";

/// Checks the rules of the kind whose schema is component `name` of `schemas`.
pub(super) fn check(
    kind: &str,
    api_version: &str,
    name: &str,
    schemas: &IndexMap<String, Value>,
) -> Result<(), ModelError> {
    let lookup = |component: &str| Ok(schemas.get(component).map(Cow::Borrowed));
    let refused = |errors: Vec<String>| ModelError::Rules {
        kind: kind.to_owned(),
        api_version: api_version.to_owned(),
        errors,
    };
    let reaches = kapi_schema::structural::reaches_rules(name, &lookup);
    if !reaches.map_err(|e| refused(vec![e.to_string()]))? {
        return Ok(());
    }
    let schema = kapi_schema::structural::inline_resource(name, &lookup)
        .map_err(|e| refused(vec![e.to_string()]))?;
    let errors = kapi_cel::definition::errors(&schema, ROOT, None);
    if errors.is_empty() {
        return Ok(());
    }
    Err(refused(
        errors.iter().map(|e| located(&schema, e)).collect(),
    ))
}

/// Drops the sources from every rule of `schema`.
pub(super) fn strip_sources(schema: &mut Value) {
    match schema {
        Value::Object(fields) => {
            if let Some(Value::Array(rules)) = fields.get_mut(RULES) {
                for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                    rule.remove(SOURCE);
                }
            }
            fields.values_mut().for_each(strip_sources);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_sources),
        _ => {}
    }
}

/// `error` with where its rule was written, and for a cost, what lacks a bound.
fn located(schema: &Value, error: &kapi_core::error::FieldError) -> String {
    let Some(place) = resolve(schema, &error.field) else {
        // The kind's total: every rule shares it.
        let mut sources = Vec::new();
        collect_sources(schema, &mut sources);
        return format!("{} (rules at {})", error, sources.join(", "));
    };
    let rule = &place.node[RULES][place.rule];
    let source = rule[SOURCE].as_str().unwrap_or("<unknown place>");
    let text = rule["rule"].as_str().unwrap_or_default();
    let mut line = format!("{source}: rule {text:?}: {error}");
    if error.detail.contains("cost") {
        let mut unbounded = place.unbounded_above.clone();
        unbounded_within(place.node, &place.json_path, &mut unbounded);
        if !unbounded.is_empty() {
            line.push_str(&format!("; give these a bound: {}", unbounded.join(", ")));
        }
    }
    line
}

/// A rule's place in the inlined schema.
struct Place<'a> {
    /// The node whose rules it is.
    node: &'a Value,
    /// Its index there.
    rule: usize,
    /// The node's JSON path (`.spec.ports[*]`).
    json_path: String,
    /// The lists and maps above the node whose size is unbounded, each with its bound.
    unbounded_above: Vec<String>,
}

/// The rule an error's path (`openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`)
/// is about.
fn resolve<'a>(schema: &'a Value, path: &str) -> Option<Place<'a>> {
    let mut rest = path.strip_prefix(ROOT)?;
    let mut node = schema;
    let mut json_path = String::new();
    let mut unbounded_above = Vec::new();
    loop {
        if let Some(after) = rest.strip_prefix(".properties[") {
            let (name, after) = after.split_once(']')?;
            node = node.get("properties")?.get(name)?;
            json_path.push_str(&format!(".{name}"));
            rest = after;
        } else if let Some(after) = rest.strip_prefix(".items") {
            if node.get("maxItems").is_none() {
                unbounded_above.push(format!("{} (maxItems)", shown(&json_path)));
            }
            node = node.get("items")?;
            json_path.push_str("[*]");
            rest = after;
        } else if let Some(after) = rest.strip_prefix(".additionalProperties") {
            if node.get("maxProperties").is_none() {
                unbounded_above.push(format!("{} (maxProperties)", shown(&json_path)));
            }
            node = node.get("additionalProperties")?;
            json_path.push_str("[*]");
            rest = after;
        } else if let Some(after) = rest.strip_prefix(".allOf[") {
            let (index, after) = after.split_once(']')?;
            node = node.get("allOf")?.get(index.parse::<usize>().ok()?)?;
            rest = after;
        } else if let Some(after) = rest.strip_prefix(&format!(".{RULES}[")) {
            let (index, _) = after.split_once(']')?;
            return Some(Place {
                node,
                rule: index.parse().ok()?,
                json_path,
                unbounded_above,
            });
        } else {
            return None;
        }
    }
}

/// The fields within `node` (at `path`) whose size has no bound: lists without
/// `maxItems`, maps without `maxProperties`, strings without `maxLength` (or an `enum`).
fn unbounded_within(node: &Value, path: &str, out: &mut Vec<String>) {
    let ty = node.get("type").and_then(Value::as_str).unwrap_or_default();
    let bounded = |key: &str| node.get(key).is_some() || node.get("enum").is_some();
    match ty {
        "array" => {
            if !bounded("maxItems") {
                out.push(format!("{} (maxItems)", shown(path)));
            }
            if let Some(items) = node.get("items") {
                unbounded_within(items, &format!("{path}[*]"), out);
            }
        }
        "string" if !bounded("maxLength") => out.push(format!("{} (maxLength)", shown(path))),
        "object" => {
            for (name, property) in node
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                unbounded_within(property, &format!("{path}.{name}"), out);
            }
            if let Some(additional) = node.get("additionalProperties").filter(|a| a.is_object()) {
                if !bounded("maxProperties") {
                    out.push(format!("{} (maxProperties)", shown(path)));
                }
                unbounded_within(additional, &format!("{path}[*]"), out);
            }
        }
        _ => {}
    }
}

/// A JSON path as shown: the root is `.`.
fn shown(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

/// Every rule's source within `value`.
fn collect_sources(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            if let Some(source) = fields.get(SOURCE).and_then(Value::as_str) {
                out.push(source.to_owned());
            }
            fields.values().for_each(|v| collect_sources(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_sources(v, out)),
        _ => {}
    }
}
