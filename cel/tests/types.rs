//! kube's bounds of schema types (`k8s.io/apiextensions-apiserver`,
//! `pkg/apiserver/schema/cel/model/schemas_test.go`, `TestEstimateMaxLengthJSON`), as data:
//! each schema, and the most elements its type may hold (`None`: rules cannot see it).

use kapi_cel::types::{DeclType, Kind, MAX_REQUEST_SIZE_BYTES};
use serde_json::{Value, json};

fn array(item_type: &str, format: &str, max_items: Option<i64>) -> Value {
    let mut schema = json!({"type": "array", "items": {"type": item_type, "format": format}});
    if let Some(max) = max_items {
        schema["maxItems"] = json!(max);
    }
    schema
}

#[test]
fn bounds_are_estimated_as_kube_estimates_them() {
    let cases: Vec<(&str, Value, Option<i64>)> = vec![
        ("booleanArray", array("boolean", "", None), Some(629145)),
        (
            "durationArray",
            array("string", "duration", None),
            Some(786431),
        ),
        (
            "datetimeArray",
            array("string", "date-time", None),
            Some(142987),
        ),
        ("dateArray", array("string", "date", None), Some(241978)),
        ("numberArray", array("integer", "", None), Some(1572863)),
        ("stringArray", array("string", "", None), Some(1048575)),
        (
            "stringMap",
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            Some(393215),
        ),
        (
            "objectOptionalPropertyArray",
            json!({"type": "array", "items": {"type": "object",
                "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
                "required": ["required"]}}),
            Some(185042),
        ),
        (
            "arrayWithLength",
            array("integer", "int64", Some(10)),
            Some(10),
        ),
        (
            "stringWithLength",
            json!({"type": "string", "maxLength": 20}),
            Some(80),
        ),
        (
            "mapWithLength",
            json!({"type": "object", "additionalProperties": {"type": "string"},
                "format": "string", "maxProperties": 15}),
            Some(15),
        ),
        (
            "durationMaxSize",
            json!({"type": "string", "format": "duration"}),
            Some(32),
        ),
        (
            "dateSize",
            json!({"type": "string", "format": "date"}),
            Some(12),
        ),
        (
            "maxdatetimeSize",
            json!({"type": "string", "format": "date-time"}),
            Some(32),
        ),
        (
            "maxintOrStringSize",
            json!({"x-kubernetes-int-or-string": true}),
            Some(MAX_REQUEST_SIZE_BYTES - 2),
        ),
        (
            "objectDefaultFieldArray",
            json!({"type": "array", "items": {"type": "object",
                "properties": {"field": {"type": "string", "default": "default"}},
                "required": ["field"]}}),
            Some(1048575),
        ),
        (
            "byteStringSize",
            json!({"type": "string", "format": "byte"}),
            Some(3145726),
        ),
        (
            "byteStringSetMaxLength",
            json!({"type": "string", "format": "byte", "maxLength": 20}),
            Some(20),
        ),
        (
            "Property under array",
            json!({"type": "array",
                "properties": {"field": {"type": "string", "default": "default"}}}),
            None,
        ),
        (
            "Items under object",
            json!({"type": "object", "items": {"type": "array",
                "properties": {"field": {"type": "string", "default": "default"}},
                "required": ["field"]}}),
            Some(0),
        ),
    ];
    for (name, schema, expected) in cases {
        let ty = DeclType::of_schema(&schema, false);
        assert_eq!(ty.map(|t| t.max_elements), expected, "{name}");
    }
}

#[test]
fn a_resource_root_shows_type_meta_and_only_the_names_of_metadata() {
    let schema = json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"labels": {
            "type": "object", "additionalProperties": {"type": "string"}}}},
        "spec": {"type": "object", "properties": {"max-size": {"type": "integer"},
            "namespace": {"type": "string"}, "1st": {"type": "string"}}},
    }});
    let Some(DeclType {
        kind: Kind::Object(fields),
        ..
    }) = DeclType::of_schema(&schema, true)
    else {
        panic!("an object");
    };
    let names: Vec<&str> = fields.keys().map(String::as_str).collect();
    assert_eq!(names, ["apiVersion", "kind", "metadata", "spec"]);
    let Kind::Object(metadata) = &fields["metadata"].ty.kind else {
        panic!("metadata is an object");
    };
    let names: Vec<&str> = metadata.keys().map(String::as_str).collect();
    assert_eq!(names, ["generateName", "name"]);
    let Kind::Object(spec) = &fields["spec"].ty.kind else {
        panic!("spec is an object");
    };
    // Escaped names; one that has no identifier is not seen.
    let names: Vec<&str> = spec.keys().map(String::as_str).collect();
    assert_eq!(names, ["__namespace__", "max__dash__size"]);
}
