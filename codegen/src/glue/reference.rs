//! The API reference (`docs/api-reference.md`): per group, kind and served version, the
//! kind's resource facts and every field with its type, default and constraints.
//!
//! Fields are read from the published OpenAPI v3 documents (their `components.schemas`),
//! so the reference shows exactly what clients are told. Fields of the kind's own types are
//! listed with dotted paths (`spec.container.ports[].containerPort`); the shared
//! `meta.k8s.io` types (`ObjectMeta`, `Condition`, ...) are named, not expanded.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::model::{ApiModel, GroupVersionModel, ResourceModel, SCHEMA_REF_PREFIX, api_version};

/// Schemas under this prefix are Kubernetes' shared types, named rather than expanded.
const SHARED_PREFIX: &str = "io.k8s.apimachinery.";

#[derive(Serialize)]
pub(super) struct Reference {
    groups: Vec<Group>,
}

#[derive(Serialize)]
struct Group {
    /// `` `apps.example.dev` `` or `the core group`.
    title: String,
    kinds: Vec<Kind>,
}

#[derive(Serialize)]
struct Kind {
    kind: &'static str,
    description: String,
    /// `- Resource: ...` lines.
    facts: Vec<String>,
    versions: Vec<Version>,
}

#[derive(Serialize)]
struct Version {
    /// `apps.example.dev/v1`.
    api_version: String,
    /// ` (storage version)`, ` (deprecated)`, ` (off by default: ...)`, or empty.
    note: String,
    /// The `Warning` a deprecated version is served with.
    deprecation: Option<String>,
    /// `/apis/apps.example.dev/v1/namespaces/{namespace}/webapps`.
    collection: String,
    fields: Vec<Field>,
}

#[derive(Serialize)]
struct Field {
    path: String,
    ty: String,
    required: bool,
    default: String,
    constraints: String,
    description: String,
}

/// The reference of `model`; `schemas` gives the `components.schemas` of each
/// group-version's OpenAPI v3 document.
pub(super) fn reference<'a>(
    model: &ApiModel,
    schemas: impl Fn(&GroupVersionModel) -> Option<&'a Map<String, Value>>,
) -> Reference {
    let mut groups = Vec::new();
    for group in &model.groups {
        let mut kinds: Vec<Kind> = Vec::new();
        for gv in &group.versions {
            for resource in &gv.resources {
                let version = version(gv, resource, schemas(gv));
                match kinds.iter_mut().find(|k| k.kind == resource.kind.kind) {
                    Some(kind) => kind.versions.push(version),
                    None => {
                        let mut kind = kind(resource, schemas(gv));
                        kind.versions.push(version);
                        kinds.push(kind);
                    }
                }
            }
        }
        let title = if group.name.is_empty() {
            "The core group".to_owned()
        } else {
            format!("`{}`", group.name)
        };
        groups.push(Group { title, kinds });
    }
    Reference { groups }
}

fn kind(resource: &ResourceModel, schemas: Option<&Map<String, Value>>) -> Kind {
    let info = resource.kind;
    let code = |items: &[&str]| {
        let items: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
        items.join(", ")
    };
    let scope = match info.scope {
        kapi_core::api::Scope::Namespaced => "namespaced",
        kapi_core::api::Scope::Cluster => "cluster-scoped",
    };
    let mut facts = vec![format!(
        "Resource: `{}` (singular `{}`), {scope}",
        info.plural, info.singular
    )];
    if !info.short_names.is_empty() {
        facts.push(format!("Short names: {}", code(info.short_names)));
    }
    if !info.categories.is_empty() {
        facts.push(format!("Categories: {}", code(info.categories)));
    }
    let subresources = resource.subresources();
    if !subresources.is_empty() {
        facts.push(format!("Subresources: {}", code(&subresources)));
    }
    if !info.printer_columns.is_empty() {
        let columns: Vec<String> = (info.printer_columns.iter())
            .map(|c| {
                let wide = if c.priority > 0 { ", `-o wide`" } else { "" };
                format!("{} (`{}`{wide})", c.name, c.json_path)
            })
            .collect();
        facts.push(format!("`kubectl get` columns: {}", columns.join(", ")));
    }
    if !info.selectable_fields.is_empty() {
        facts.push(format!(
            "Selectable fields: {}",
            code(
                &(info.selectable_fields.iter())
                    .map(|f| f.label)
                    .collect::<Vec<_>>()
            )
        ));
    }
    let description = (schemas.and_then(|s| s.get(&resource.schema_name)))
        .map(description)
        .unwrap_or_default();
    Kind {
        kind: info.kind,
        description,
        facts,
        versions: Vec::new(),
    }
}

fn version(
    gv: &GroupVersionModel,
    resource: &ResourceModel,
    schemas: Option<&Map<String, Value>>,
) -> Version {
    let info = resource.version;
    let mut note = match (info.storage, info.deprecated) {
        (true, _) => " (storage version)",
        (false, true) => " (deprecated)",
        (false, false) => "",
    }
    .to_owned();
    if info.off_by_default {
        note.push_str(" (off by default: `--runtime-config` turns it on)");
    }
    let deprecation = (info.deprecated).then(|| {
        let warning = info.deprecation_warning.map(str::to_owned);
        warning
            .unwrap_or_else(|| format!("{} {} is deprecated", gv.api_version(), resource.kind.kind))
    });
    let collection = (resource.routes().iter())
        .find(|r| r.subresource.is_none() && !r.is_object() && !r.path.contains("/watch/"))
        .map(|r| r.path.to_owned())
        .unwrap_or_default();
    let mut fields = Vec::new();
    if let Some(schemas) = schemas
        && let Some(schema) = schemas.get(&resource.schema_name)
    {
        let mut visiting = vec![resource.schema_name.clone()];
        collect_fields(schemas, schema, "", &mut visiting, &mut fields);
    }
    Version {
        api_version: api_version(gv.group, gv.version),
        note,
        deprecation,
        collection,
        fields,
    }
}

/// Every property of `schema` (an object schema), depth first, with `prefix` before its
/// name. `visiting` holds the schemas being expanded, so recursive types stop.
fn collect_fields(
    schemas: &Map<String, Value>,
    schema: &Value,
    prefix: &str,
    visiting: &mut Vec<String>,
    fields: &mut Vec<Field>,
) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = (schema.get("required").and_then(Value::as_array))
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, property) in properties {
        let path = format!("{prefix}{name}");
        let target = referenced(property).and_then(|n| Some((n, schemas.get(n)?)));
        let shape = target.map_or(property, |(_, s)| s);
        fields.push(Field {
            ty: type_name(schemas, property),
            required: required.contains(&name.as_str()),
            default: (property.get("default"))
                .map(|d| format!("`{}`", d.to_string().replace('|', "\\|")))
                .unwrap_or_default(),
            constraints: constraints(property, shape),
            description: description(property),
            path: path.clone(),
        });
        // Expand the kind's own object types, and arrays and maps of them.
        let (child, suffix) = match shape.get("type").and_then(Value::as_str) {
            Some("array") => (shape.get("items"), "[]"),
            Some("object")
                if shape
                    .get("additionalProperties")
                    .is_some_and(Value::is_object) =>
            {
                (shape.get("additionalProperties"), ".*")
            }
            _ => (Some(property), ""),
        };
        let Some(child) = child else { continue };
        let Some(name) = referenced(child) else {
            continue;
        };
        if name.starts_with(SHARED_PREFIX) || visiting.iter().any(|v| v == name) {
            continue;
        }
        if let Some(child_schema) = schemas.get(name) {
            visiting.push(name.to_owned());
            let prefix = format!("{path}{suffix}.");
            collect_fields(schemas, child_schema, &prefix, visiting, fields);
            visiting.pop();
        }
    }
}

/// The schema name `schema` refers to: `{"$ref"}` or a single-reference `allOf`.
fn referenced(schema: &Value) -> Option<&str> {
    let reference = match schema.get("allOf").and_then(Value::as_array) {
        Some(all) if all.len() == 1 => all[0].get("$ref"),
        _ => schema.get("$ref"),
    };
    reference?.as_str()?.strip_prefix(SCHEMA_REF_PREFIX)
}

/// `string`, `integer (int32)`, `[]ContainerPort`, `map[string]string`, `ObjectMeta`.
fn type_name(schemas: &Map<String, Value>, schema: &Value) -> String {
    if let Some(name) = referenced(schema) {
        let short = name.rsplit('.').next().unwrap_or(name);
        return match schemas.get(name) {
            Some(target) if target.get("type").and_then(Value::as_str) != Some("object") => {
                format!("{} ({short})", type_name(schemas, target))
            }
            _ => format!("`{short}`"),
        };
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("array") => {
            let items = schema.get("items").map(|i| type_name(schemas, i));
            format!("[]{}", items.unwrap_or_default())
        }
        Some("object") => match schema.get("additionalProperties") {
            Some(values) if values.is_object() => {
                format!("map[string]{}", type_name(schemas, values))
            }
            _ => "object".to_owned(),
        },
        Some(ty) => match schema.get("format").and_then(Value::as_str) {
            Some(format) => format!("{ty} ({format})"),
            None => ty.to_owned(),
        },
        None => "any".to_owned(),
    }
}

/// Bounds, lengths, patterns, allowed values and list semantics of a property (`shape` is
/// the schema it refers to, for enums).
fn constraints(property: &Value, shape: &Value) -> String {
    let mut out = Vec::new();
    let number = |key: &str| property.get(key).map(|v| v.to_string());
    match (number("minimum"), number("maximum")) {
        (Some(min), Some(max)) => out.push(format!("{min}..={max}")),
        (Some(min), None) => out.push(format!(">= {min}")),
        (None, Some(max)) => out.push(format!("<= {max}")),
        (None, None) => {}
    }
    for (key, what) in [
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
    ] {
        if let Some(n) = number(key) {
            out.push(format!("{what} {n}"));
        }
    }
    if let Some(pattern) = property.get("pattern").and_then(Value::as_str) {
        out.push(format!("pattern `{pattern}`"));
    }
    if let Some(values) = shape.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values
            .iter()
            .map(|v| format!("`{}`", v.as_str().unwrap_or_default()))
            .collect();
        out.push(format!("one of {}", values.join(", ")));
    }
    match property
        .get("x-kubernetes-list-type")
        .and_then(Value::as_str)
    {
        Some("map") => {
            let keys: Vec<String> = (property
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array))
            .map(|k| {
                k.iter()
                    .filter_map(Value::as_str)
                    .map(|k| format!("`{k}`"))
                    .collect()
            })
            .unwrap_or_default();
            out.push(format!("list map keyed by {}", keys.join(", ")));
        }
        Some("set") => out.push("set".to_owned()),
        _ => {}
    }
    // The registry's `IMMUTABLE_EXTENSION`.
    if property.get("x-kapi-immutable") == Some(&Value::Bool(true)) {
        out.push("immutable once set".to_owned());
    }
    out.join("; ")
}

/// The first paragraph of a schema's description, on one line, safe in a table cell, with
/// rustdoc links (`` [`WebApp`] ``) as plain code.
fn description(schema: &Value) -> String {
    let text = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let first = text.split("\n\n").next().unwrap_or_default();
    let mut line = first.split_whitespace().collect::<Vec<_>>().join(" ");
    line = line.replace('|', "\\|");
    let mut out = String::with_capacity(line.len());
    let mut rest = line.as_str();
    while let Some(start) = rest.find("[`") {
        let Some(end) = rest[start..].find("`]") else {
            break;
        };
        let end = start + end;
        let after = &rest[end + 2..];
        out.push_str(&rest[..start]);
        if after.starts_with('(') || after.starts_with('[') {
            out.push_str(&rest[start..end + 2]);
        } else {
            out.push_str(&rest[start + 1..end + 1]);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn descriptions_lose_rustdoc_links_and_later_paragraphs() {
        let schema = json!({"description": "Observed state of a [`WebApp`], see [`x`](http://x).\n\nMore | text."});
        assert_eq!(
            description(&schema),
            "Observed state of a `WebApp`, see [`x`](http://x)."
        );
        assert_eq!(description(&json!({"description": "a | b"})), "a \\| b");
    }

    #[test]
    fn types_and_constraints() {
        let schemas: Map<String, Value> = serde_json::from_value(json!({
            "x.Protocol": {"type": "string", "enum": ["TCP", "UDP"]},
            "x.Port": {"type": "object", "properties": {}},
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object"}
        }))
        .unwrap();
        let check = |schema: Value, ty: &str, constraints_: &str| {
            let target = referenced(&schema)
                .and_then(|n| schemas.get(n))
                .unwrap_or(&schema);
            assert_eq!(type_name(&schemas, &schema), ty, "{schema}");
            assert_eq!(constraints(&schema, target), constraints_, "{schema}");
        };
        check(
            json!({"type": "integer", "format": "int32", "minimum": 0, "maximum": 1000}),
            "integer (int32)",
            "0..=1000",
        );
        check(
            json!({"type": "string", "minLength": 1}),
            "string",
            "min length 1",
        );
        check(
            json!({"allOf": [{"$ref": "#/components/schemas/x.Protocol"}]}),
            "string (Protocol)",
            "one of `TCP`, `UDP`",
        );
        check(
            json!({"type": "array", "items": {"$ref": "#/components/schemas/x.Port"}, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["containerPort"]}),
            "[]`Port`",
            "list map keyed by `containerPort`",
        );
        check(
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            "map[string]string",
            "",
        );
        check(
            json!({"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}),
            "`ObjectMeta`",
            "",
        );
    }
}
