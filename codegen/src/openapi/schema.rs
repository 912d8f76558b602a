//! Schemas in the documents: a group-version's schemas as the documents hold them
//! ([`document_schemas`]), and from OpenAPI 3.0 to Swagger 2.0 ([`to_swagger2`]): Swagger
//! 2.0 additionally has no `nullable`, `writeOnly`, `deprecated`, `oneOf`, `anyOf` or
//! `not`, and writes a single-`$ref` `allOf` as a plain `$ref`. The schemas themselves are
//! the model's, already in Kubernetes' OpenAPI 3.0 style (`crate::model::normalize`).

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use crate::GroupVersionModel;
use crate::model::SCHEMA_REF_PREFIX;

/// Where Swagger 2.0 schemas live.
pub(crate) const DEFINITION_REF_PREFIX: &str = "#/definitions/";

/// The body schema of every PATCH operation (as kube-apiserver names it).
pub(crate) const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
/// The body schema of DELETE operations.
pub(crate) const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
/// The response schema of DELETE operations.
pub(crate) const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
/// The response schema of watch operations.
pub(crate) const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
/// The body and response schema of the `scale` subresource.
pub(crate) const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// The schemas of a group-version's documents: the model's plus [`PATCH`], sorted by name.
pub(crate) fn document_schemas(gv: &GroupVersionModel) -> IndexMap<String, Value> {
    let mut schemas = gv.schemas.clone();
    schemas.insert(PATCH.to_owned(), patch_schema());
    schemas.sort_keys();
    schemas
}

fn patch_schema() -> Value {
    json!({
        "description": "A patch: a JSON Patch, a JSON Merge Patch, a strategic merge patch or a server-side apply configuration, as the request's Content-Type says.",
        "type": "object"
    })
}

/// The Swagger 2.0 form of a (normalized) OpenAPI 3.0 schema.
pub(crate) fn to_swagger2(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    let mut single_all_of = None;
    for (key, value) in map {
        let converted = match key.as_str() {
            "$ref" => Value::String(swagger2_ref(value)),
            // Swagger 2.0 has none of these; dropping them only loosens the schema.
            "nullable" | "writeOnly" | "deprecated" | "oneOf" | "anyOf" | "not" => continue,
            "allOf" => match value.as_array().map(Vec::as_slice) {
                Some([only]) => {
                    single_all_of = Some(to_swagger2(only));
                    continue;
                }
                _ => map_array(value, to_swagger2),
            },
            "properties" => match value {
                Value::Object(properties) => Value::Object(
                    (properties.iter())
                        .map(|(name, p)| (name.clone(), to_swagger2(p)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items" | "additionalProperties" => to_swagger2(value),
            // 3.0's discriminator object; 2.0 names only the property.
            "discriminator" => match value.get("propertyName") {
                Some(name) => name.clone(),
                None => value.clone(),
            },
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    if let Some(Value::Object(inner)) = single_all_of {
        // `allOf: [{$ref}]` with siblings is how 3.0 describes a reference; 2.0 (and
        // kube's v2 document) puts the reference next to its description.
        // The outer schema's own keywords win over the member's.
        let mut merged = inner;
        merged.extend(out);
        out = merged;
    }
    if out.contains_key("$ref")
        && out
            .get("default")
            .is_some_and(|d| d.as_object().is_some_and(Map::is_empty))
    {
        // `default: {}` next to a reference to a struct says nothing; kube's v2 leaves it
        // out. Other defaults (an enum's value) stay.
        out.remove("default");
    }
    Value::Object(out)
}

fn swagger2_ref(value: &Value) -> String {
    let reference = value.as_str().unwrap_or_default();
    match reference.strip_prefix(SCHEMA_REF_PREFIX) {
        Some(name) => format!("{DEFINITION_REF_PREFIX}{name}"),
        None => reference.to_owned(),
    }
}

fn map_array(value: &Value, f: fn(&Value) -> Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(f).collect()),
        other => other.clone(),
    }
}

/// A CustomResourceDefinition's schema as kube publishes it in OpenAPI v2
/// (`apiextensions-apiserver/pkg/controller/openapi/v2.ToStructuralOpenAPIV2`): without the
/// value validations v2 cannot carry (`allOf`, `anyOf`, `oneOf`, `not`), and untyped where
/// kubectl's client-side validation would refuse what the server accepts: nullable fields
/// (no type, items or properties, and never required), fields keeping unknown fields (no
/// items or properties; no `object` type), arrays left without items. A kind whose root
/// keeps unknown fields is a bare object naming its kind (kube's `buildKubeNative`: any
/// property, even `metadata`, would make kubectl refuse the fields it does not know).
pub(crate) fn definition_v2(schema: &Value) -> Value {
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        let mut bare = Map::new();
        bare.insert("type".into(), json!("object"));
        for extension in [
            "x-kubernetes-group-version-kind",
            "x-kubernetes-selectable-fields",
        ] {
            if let Some(value) = schema.get(extension) {
                bare.insert(extension.into(), value.clone());
            }
        }
        return Value::Object(bare);
    }
    let mut schema = schema.clone();
    strip_for_v2(&mut schema);
    // kube's builder describes the root's `metadata` beside its reference (kubectl 1.20
    // explains `<kind>.metadata` with it); OpenAPI 3.0 cannot say both, v2 can.
    if let Some(metadata) = schema.pointer_mut("/properties/metadata")
        && let Some(metadata) = metadata.as_object_mut()
        && metadata.contains_key("$ref")
    {
        metadata
            .entry("description")
            .or_insert_with(|| json!(METADATA_DESCRIPTION));
    }
    schema
}

/// kube's description of a custom resource's `metadata` (its CRD OpenAPI builder's).
const METADATA_DESCRIPTION: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

fn strip_for_v2(schema: &mut Value) {
    let Some(node) = schema.as_object_mut() else {
        return;
    };
    for junctor in ["allOf", "anyOf", "oneOf", "not"] {
        node.remove(junctor);
    }
    if node.remove("nullable") == Some(Value::Bool(true)) {
        for key in ["type", "items", "properties"] {
            node.remove(key);
        }
    }
    let preserve = node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if preserve {
        node.remove("items");
        node.remove("properties");
    }
    let ty = node.get("type").and_then(Value::as_str).map(str::to_owned);
    if (ty.as_deref() == Some("array") && !node.contains_key("items"))
        || (preserve && ty.as_deref() == Some("object"))
    {
        node.remove("type");
    }
    let nullable =
        |child: Option<&Value>| child.and_then(|c| c.get("nullable")) == Some(&Value::Bool(true));
    if nullable(node.get("additionalProperties")) {
        node.remove("required");
    } else if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        let nullable_fields: Vec<String> = (properties.iter())
            .filter(|(_, child)| nullable(Some(child)))
            .map(|(name, _)| name.clone())
            .collect();
        if let Some(Value::Array(required)) = node.get_mut("required") {
            required.retain(|r| {
                !r.as_str()
                    .is_some_and(|r| nullable_fields.iter().any(|n| n == r))
            });
        }
    }
    if let Some(Value::Object(properties)) = node.get_mut("properties") {
        for child in properties.values_mut() {
            strip_for_v2(child);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = node.get_mut(key) {
            strip_for_v2(child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::normalize::normalize;

    #[test]
    fn intra_doc_links_become_code_spans() {
        check_normalize(
            json!({"description": "Desired state of a [`WebApp`]; see [`Container`] and [x]."}),
            json!({"description": "Desired state of a `WebApp`; see `Container` and [x]."}),
        );
    }

    #[test]
    fn defaults_are_said_in_the_description() {
        for (input, expected) in [
            (
                json!({"description": "How many.", "default": 1}),
                json!({"description": "How many. Defaults to 1.", "default": 1}),
            ),
            (
                json!({"description": "`TCP` or `UDP`", "default": "TCP"}),
                json!({"description": "`TCP` or `UDP`. Defaults to \"TCP\".", "default": "TCP"}),
            ),
            (
                json!({"default": false}),
                json!({"description": "Defaults to false.", "default": false}),
            ),
            // Empty defaults, and descriptions that say it already, stay as they are.
            (
                json!({"description": "Meta.", "default": {}}),
                json!({"description": "Meta.", "default": {}}),
            ),
            (
                json!({"description": "Reason.", "default": ""}),
                json!({"description": "Reason.", "default": ""}),
            ),
            (
                json!({"description": "Size. Defaults to 3 items.", "default": 3}),
                json!({"description": "Size. Defaults to 3 items.", "default": 3}),
            ),
        ] {
            check_normalize(input, expected);
        }
    }

    /// Normalizing `input` (as schemars emits it) gives `expected`.
    #[track_caller]
    fn check_normalize(input: Value, expected: Value) {
        let mut actual = input;
        normalize(&mut actual);
        assert_eq!(actual, expected, "\nactual: {actual:#}");
    }

    /// Converting `input` (normalized OpenAPI 3.0) to Swagger 2.0 gives `expected`.
    #[track_caller]
    fn check(input: Value, expected: Value) {
        let actual = to_swagger2(&input);
        assert_eq!(actual, expected, "\nactual: {actual:#}");
    }

    #[test]
    fn optional_scalars_lose_their_null_type() {
        check_normalize(
            json!({"type": ["string", "null"], "description": "Name."}),
            json!({"type": "string", "description": "Name."}),
        );
        check_normalize(
            json!({"type": ["integer", "null"], "format": "int32"}),
            json!({"type": "integer", "format": "int32"}),
        );
        check_normalize(
            json!({"type": ["object", "null"], "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
        );
        check_normalize(json!({"type": "null"}), json!({}));
        check_normalize(
            json!({"type": ["string", "integer", "null"]}),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        );
    }

    #[test]
    fn optional_references_become_all_of() {
        check_normalize(
            json!({
                "anyOf": [{"$ref": "#/components/schemas/a.B"}, {"type": "null"}],
                "description": "Observed state."
            }),
            json!({"description": "Observed state.", "allOf": [{"$ref": "#/components/schemas/a.B"}]}),
        );
        // What schemars' AddNullable would have made of the null alternative.
        check_normalize(
            json!({"oneOf": [{"$ref": "#/components/schemas/a.B"}, {"nullable": true, "const": null}]}),
            json!({"allOf": [{"$ref": "#/components/schemas/a.B"}]}),
        );
        // An inline alternative is merged; the outer description wins.
        check_normalize(
            json!({
                "anyOf": [{"type": "array", "items": {"type": ["string", "null"]}, "description": "inner"}, {"type": "null"}],
                "description": "outer"
            }),
            json!({"description": "outer", "type": "array", "items": {"type": "string"}}),
        );
        // Real unions stay unions, without the null.
        check_normalize(
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        );
    }

    #[test]
    fn documented_unit_enums_become_string_enums() {
        check_normalize(
            json!({
                "description": "Transport protocol.",
                "oneOf": [
                    {"type": "string", "description": "TCP.", "enum": ["TCP"]},
                    {"type": "string", "const": "UDP"}
                ]
            }),
            json!({
                "description": "Transport protocol.\n\nPossible enum values:\n - `\"TCP\"` TCP.\n - `\"UDP\"`",
                "type": "string",
                "enum": ["TCP", "UDP"]
            }),
        );
        // Undocumented unit enums already are string enums.
        check_normalize(
            json!({"type": "string", "enum": ["Active", "Terminating"]}),
            json!({"type": "string", "enum": ["Active", "Terminating"]}),
        );
        // Enums with data stay as they are.
        let mixed = json!({"oneOf": [{"type": "string", "enum": ["A"]}, {"type": "object", "properties": {"b": {"type": "string"}}}]});
        check_normalize(mixed.clone(), mixed);
    }

    #[test]
    fn normalization_reaches_every_subschema() {
        check_normalize(
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": ["string", "null"]},
                    "b": {"type": "array", "items": {"type": ["integer", "null"]}},
                    "c": {"type": "object", "additionalProperties": {"type": ["boolean", "null"]}},
                    "d": {"allOf": [{"type": ["number", "null"]}]}
                }
            }),
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "array", "items": {"type": "integer"}},
                    "c": {"type": "object", "additionalProperties": {"type": "boolean"}},
                    "d": {"allOf": [{"type": "number"}]}
                }
            }),
        );
    }

    #[test]
    fn references_point_into_definitions() {
        check(
            json!({"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}),
            json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}),
        );
        check(
            json!({"type": "array", "items": {"$ref": "#/components/schemas/a.B"}}),
            json!({"type": "array", "items": {"$ref": "#/definitions/a.B"}}),
        );
        check(
            json!({"type": "object", "additionalProperties": {"$ref": "#/components/schemas/a.B"}}),
            json!({"type": "object", "additionalProperties": {"$ref": "#/definitions/a.B"}}),
        );
    }

    #[test]
    fn a_single_reference_all_of_becomes_a_reference() {
        check(
            json!({
                "default": {},
                "description": "Standard object metadata.",
                "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
            }),
            json!({
                "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                "description": "Standard object metadata."
            }),
        );
        // A default that says something stays.
        check(
            json!({"default": "TCP", "allOf": [{"$ref": "#/components/schemas/a.Protocol"}]}),
            json!({"$ref": "#/definitions/a.Protocol", "default": "TCP"}),
        );
        // Several members stay an allOf, which 2.0 has.
        check(
            json!({"allOf": [{"$ref": "#/components/schemas/a.B"}, {"$ref": "#/components/schemas/a.C"}]}),
            json!({"allOf": [{"$ref": "#/definitions/a.B"}, {"$ref": "#/definitions/a.C"}]}),
        );
        // A single inline member is merged.
        check(
            json!({"description": "d", "allOf": [{"type": "string", "description": "inner"}]}),
            json!({"type": "string", "description": "d"}),
        );
    }

    #[test]
    fn what_swagger2_lacks_is_dropped() {
        check(
            json!({"type": "string", "nullable": true, "writeOnly": true, "deprecated": true}),
            json!({"type": "string"}),
        );
        check(
            json!({"description": "Either.", "oneOf": [{"type": "string"}, {"type": "integer"}], "anyOf": [{}], "not": {}}),
            json!({"description": "Either."}),
        );
        check(
            json!({"type": "object", "discriminator": {"propertyName": "kind"}}),
            json!({"type": "object", "discriminator": "kind"}),
        );
    }

    #[test]
    fn kube_extensions_defaults_and_constraints_survive() {
        let schema = json!({
            "type": "object",
            "description": "Spec.",
            "required": ["image"],
            "properties": {
                "replicas": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 1000, "default": 1},
                "image": {"type": "string", "minLength": 1},
                "protocol": {"type": "string", "enum": ["TCP", "UDP"], "default": "TCP"},
                "ports": {
                    "type": "array",
                    "items": {"type": "object"},
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["containerPort"]
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "anything": {"description": "Any JSON."},
                "open": {"type": "object", "additionalProperties": true}
            },
            "x-kubernetes-group-version-kind": [{"group": "", "kind": "ConfigMap", "version": "v1"}]
        });
        check(schema.clone(), schema);
    }
}
