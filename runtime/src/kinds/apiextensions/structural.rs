//! kube's checks of a CustomResourceDefinition's `openAPIV3Schema`: the generic ones
//! (`ValidateCustomResourceDefinitionOpenAPISchema`: known types, no `uniqueItems`, no
//! `$ref`, `additionalProperties` and `properties` exclusive, `x-kubernetes-preserve-
//! unknown-fields` true or absent) and the structural invariants (apiextensions'
//! `schema.ValidateStructural`): every specified field, array item and the root has a
//! type (unless it preserves unknown fields or is an int-or-string), the root is an object
//! without `additionalProperties`, `metadata` restricts at most `name` and `generateName`,
//! value validations (`allOf`, `anyOf`, `oneOf`, `not`) carry no types, defaults,
//! descriptions or extensions, and the embedded-resource and int-or-string rules. Paths
//! and messages are kube's (`properties[spec].type`).
//!
//! `x-kubernetes-validations` (CEL rules) are refused, with that reason: this server does not
//! evaluate them, and ignoring them would store objects kube rejects.
//!
//! Not yet here: kube's completeness check (every field a value validation names is also
//! specified outside it) and the validation of defaults against the schema.

use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::error::FieldError as E;

/// The types OpenAPI v3 knows, as kube lists them.
const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

/// Where a schema node sits: kube words a missing type differently for each.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Every error of `schema`, a version's `openAPIV3Schema` reported at `path`.
pub fn errors(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    generic(schema, path, &mut errors);
    // kube reports the structural invariants of a schema that passed the generic checks.
    if errors.is_empty() {
        invariants(schema, Level::Root, path, &mut errors);
    }
    errors
}

fn object(schema: &Value) -> Option<&Map<String, Value>> {
    schema.as_object()
}

fn text<'a>(schema: &'a Map<String, Value>, key: &str) -> &'a str {
    schema.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn flag(schema: &Map<String, Value>, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The subschemas under `key`: `properties` (by name) or a list (`allOf`, by index).
fn children<'a>(schema: &'a Map<String, Value>, key: &str, path: &str) -> Vec<(String, &'a Value)> {
    match schema.get(key) {
        Some(Value::Object(map))
            if key == "properties" || key == "patternProperties" || key == "definitions" =>
        {
            map.iter()
                .map(|(name, child)| (format!("{path}.{key}[{name}]"), child))
                .collect()
        }
        Some(Value::Array(items)) => (items.iter().enumerate())
            .map(|(i, child)| (format!("{path}.{key}[{i}]"), child))
            .collect(),
        _ => Vec::new(),
    }
}

/// `ValidateCustomResourceDefinitionOpenAPISchema`, for what v1 schemas can hold.
fn generic(schema: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(node) = object(schema) else {
        return;
    };
    let type_ = text(node, "type");
    if !type_.is_empty() && !TYPES.contains(&type_) {
        errors.push(E::not_supported(format!("{path}.type"), type_, TYPES));
    }
    if flag(node, "uniqueItems") {
        errors.push(E::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    // Refused rather than ignored: an object a rule would reject must not be stored.
    if node.contains_key("x-kubernetes-validations") {
        errors.push(E::forbidden(
            format!("{path}.x-kubernetes-validations"),
            "validation rules (CEL) are not supported by this server",
        ));
    }
    if node.contains_key("$ref") {
        errors.push(E::forbidden(
            format!("{path}.$ref"),
            "$ref is not supported",
        ));
    }
    if let Some(additional) = node.get("additionalProperties") {
        let has_properties = node
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        if has_properties && (additional == &Value::Bool(false) || additional.is_object()) {
            errors.push(E::forbidden(
                format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        generic(additional, &format!("{path}.additionalProperties"), errors);
    }
    if node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        errors.push(E::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            Value::Bool(false),
            "must be true or undefined",
        ));
    }
    for key in [
        "properties",
        "patternProperties",
        "allOf",
        "oneOf",
        "anyOf",
        "definitions",
    ] {
        for (child_path, child) in children(node, key, path) {
            generic(child, &child_path, errors);
        }
    }
    if let Some(not) = node.get("not") {
        generic(not, &format!("{path}.not"), errors);
    }
    if let Some(items) = node.get("items") {
        match items {
            Value::Array(_) => errors.push(E::forbidden(
                format!("{path}.items"),
                "items must be a schema object and not an array",
            )),
            items => generic(items, &format!("{path}.items"), errors),
        }
    }
}

/// `validateStructuralInvariants`.
fn invariants(schema: &Value, level: Level, path: &str, errors: &mut Vec<FieldError>) {
    let Some(node) = object(schema) else {
        return;
    };
    let type_ = text(node, "type");
    let embedded = flag(node, "x-kubernetes-embedded-resource");
    let preserve = flag(node, "x-kubernetes-preserve-unknown-fields");
    let int_or_string = flag(node, "x-kubernetes-int-or-string");

    if type_ == "array" && !node.contains_key("items") {
        errors.push(E::required(format!("{path}.items"), "must be specified"));
    }
    if let Some(items) = node.get("items") {
        invariants(items, Level::Item, &format!("{path}.items"), errors);
    }
    for (child_path, child) in children(node, "properties", path) {
        invariants(child, Level::Field, &child_path, errors);
    }
    if let Some(additional) = node.get("additionalProperties") {
        if level == Level::Root {
            errors.push(E::forbidden(
                format!("{path}.additionalProperties"),
                "must not be used at the root",
            ));
        }
        if additional.is_object() {
            invariants(
                additional,
                Level::Field,
                &format!("{path}.additionalProperties"),
                errors,
            );
        }
    }
    if int_or_string && preserve {
        errors.push(E::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            Value::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errors.push(E::invalid(
            format!("{path}.x-kubernetes-embedded-resource"),
            Value::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    value_validation(
        node,
        int_or_string_any_of(node),
        int_or_string_all_of(node),
        path,
        errors,
    );

    if embedded && type_ != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        errors.push(match type_ {
            "" => E::required(format!("{path}.type"), detail),
            other => E::invalid(format!("{path}.type"), Value::String(other.into()), detail),
        });
    } else if type_.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errors.push(E::required(format!("{path}.type"), detail));
    }
    if embedded && node.contains_key("additionalProperties") {
        errors.push(E::forbidden(
            format!("{path}.additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !type_.is_empty() && type_ != "object" {
        errors.push(E::invalid(
            format!("{path}.type"),
            Value::String(type_.into()),
            "must be object at the root",
        ));
    }
    let properties = node.get("properties").and_then(Value::as_object);
    let property = |name: &str| {
        properties
            .and_then(|p| p.get(name))
            .and_then(Value::as_object)
    };
    if level == Level::Root || embedded {
        for (name, wanted) in [
            ("kind", "string"),
            ("apiVersion", "string"),
            ("metadata", "object"),
        ] {
            if let Some(field) = property(name) {
                let actual = text(field, "type");
                if actual != wanted {
                    errors.push(E::invalid(
                        format!("{path}.properties[{name}].type"),
                        Value::String(actual.into()),
                        format!("must be {wanted}"),
                    ));
                }
            }
        }
    }
    if level == Level::Root
        && let Some(metadata) = property("metadata")
        && !only_names(metadata)
    {
        errors.push(E::forbidden(format!("{path}.properties[metadata]"), "must not specify anything other than name and generateName, but metadata is implicitly specified"));
    }
    if embedded && !preserve && properties.is_none_or(Map::is_empty) {
        errors.push(E::required(format!("{path}.properties"), "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"));
    }
}

/// Whether a root `metadata` schema says no more than its type, a default, and the
/// schemas of `name` and `generateName` (what kube lets it restrict).
fn only_names(metadata: &Map<String, Value>) -> bool {
    metadata.iter().all(|(key, value)| match key.as_str() {
        "type" | "default" => true,
        "properties" => value
            .as_object()
            .is_some_and(|p| p.keys().all(|k| k == "name" || k == "generateName")),
        _ => false,
    })
}

/// `anyOf: [{type: integer}, {type: string}]`, the int-or-string pattern.
fn is_int_or_string(any_of: Option<&Value>) -> bool {
    any_of.and_then(Value::as_array).is_some_and(|options| {
        options.len() == 2
            && options[0] == serde_json::json!({"type": "integer"})
            && options[1] == serde_json::json!({"type": "string"})
    })
}

fn int_or_string_any_of(node: &Map<String, Value>) -> bool {
    is_int_or_string(node.get("anyOf"))
}

fn int_or_string_all_of(node: &Map<String, Value>) -> bool {
    (node.get("allOf").and_then(Value::as_array))
        .and_then(|all| all.first())
        .is_some_and(|first| is_int_or_string(first.get("anyOf")))
}

/// `validateValueValidation`: the junctors of `node`, each a nested value validation.
fn value_validation(
    node: &Map<String, Value>,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    if !skip_any_of {
        for (child_path, child) in children(node, "anyOf", path) {
            nested(child, false, &child_path, errors);
        }
    }
    for (i, (child_path, child)) in children(node, "allOf", path).into_iter().enumerate() {
        nested(
            child,
            skip_first_all_of_any_of && i == 0,
            &child_path,
            errors,
        );
    }
    for (child_path, child) in children(node, "oneOf", path) {
        nested(child, false, &child_path, errors);
    }
    if let Some(not) = node.get("not") {
        nested(not, false, &format!("{path}.not"), errors);
    }
}

/// `validateNestedValueValidation`: what a value validation may not carry.
fn nested(schema: &Value, skip_any_of: bool, path: &str, errors: &mut Vec<FieldError>) {
    let Some(node) = object(schema) else {
        return;
    };
    value_validation(node, skip_any_of, false, path, errors);
    if let Some(items) = node.get("items") {
        nested(items, false, &format!("{path}.items"), errors);
    }
    for (child_path, child) in children(node, "properties", path) {
        nested(child, false, &child_path, errors);
    }
    let forbid = |errors: &mut Vec<FieldError>, key: &str, detail: &str| {
        errors.push(E::forbidden(format!("{path}.{key}"), detail));
    };
    if !text(node, "type").is_empty() {
        forbid(errors, "type", "must be empty to be structural");
    }
    if node.contains_key("additionalProperties") {
        forbid(
            errors,
            "additionalProperties",
            "must be undefined to be structural",
        );
    }
    if node.contains_key("default") {
        forbid(errors, "default", "must be undefined to be structural");
    }
    if !text(node, "title").is_empty() {
        forbid(errors, "title", "must be empty to be structural");
    }
    if !text(node, "description").is_empty() {
        forbid(errors, "description", "must be empty to be structural");
    }
    if flag(node, "nullable") {
        forbid(errors, "nullable", "must be false to be structural");
    }
    for key in [
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if flag(node, key) {
            forbid(errors, key, "must be false to be structural");
        }
    }
    if node
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .is_some_and(|k| !k.is_empty())
    {
        forbid(
            errors,
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        );
    }
    if node.contains_key("x-kubernetes-list-type") {
        forbid(
            errors,
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        );
    }
    if node
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key("metadata"))
    {
        forbid(
            errors,
            "properties[metadata]",
            "must not be specified in a nested context",
        );
    }
}
