//! kube's checks of a CustomResourceDefinition's `openAPIV3Schema`, in kube's order: the
//! generic ones ([`super::openapi_schema`]); then, for a schema that passed them, the
//! structural ones (apiextensions' `schema.ValidateStructural`), sorted as kube sorts them;
//! then, for a structural schema, its defaults ([`super::defaults`]).
//!
//! The structural invariants: every specified field, array item and the root has a type
//! (unless it preserves unknown fields or is an int-or-string), the root is an object
//! without `additionalProperties`, `metadata` restricts at most `name` and `generateName`,
//! value validations (`allOf`, `anyOf`, `oneOf`, `not`) carry no types, defaults,
//! descriptions or extensions, and the embedded-resource and int-or-string rules. And
//! completeness: every field or array item a value validation of the root names (at any
//! depth) is also specified outside it. Paths and messages are kube's
//! (`properties[spec].type`).

use serde_json::{Map, Value};

use kapi_core::error::FieldError;
use kapi_core::error::FieldError as E;

/// Where a schema node sits: kube words a missing type differently for each.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Every error of `schema`, a version's `openAPIV3Schema` reported at `path`.
/// `previous` (on update) says which rules the definition had already.
pub(super) fn errors(
    schema: &Value,
    path: &str,
    previous: Option<&kapi_cel::definition::Previous>,
) -> Vec<FieldError> {
    let errors = super::openapi_schema::errors(schema, path, previous);
    // kube reports the structural rules of a schema that passed the generic checks (it
    // cannot read the others as structural).
    if !errors.is_empty() {
        return errors;
    }
    let mut errors = Vec::new();
    invariants(schema, Level::Root, path, &mut errors);
    if let Some(root) = object(schema) {
        value_validation_completeness(root, root, path, path, &mut errors);
    }
    // kube sorts them by their text: Go's maps have no order.
    errors.sort_by_cached_key(ToString::to_string);
    // The defaults are checked with the registry's schema validation, which a build without
    // the server (code generation) does not have and does not need.
    #[cfg(feature = "server")]
    if errors.is_empty() {
        return super::defaults::errors(schema, path);
    }
    errors
}

pub(super) fn object(schema: &Value) -> Option<&Map<String, Value>> {
    schema.as_object()
}

pub(super) fn text<'a>(schema: &'a Map<String, Value>, key: &str) -> &'a str {
    schema.get(key).and_then(Value::as_str).unwrap_or_default()
}

pub(super) fn flag(schema: &Map<String, Value>, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The subschemas under `key`: `properties` (by name) or a list (`allOf`, by index).
pub(super) fn children<'a>(
    schema: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Vec<(String, &'a Value)> {
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

/// `validateValueValidationCompleteness`: the value validations of `v` (`not`, `allOf`,
/// `anyOf`, `oneOf`), each against the structural schema `s` they apply to.
fn value_validation_completeness(
    v: &Map<String, Value>,
    s: &Map<String, Value>,
    s_path: &str,
    v_path: &str,
    errors: &mut Vec<FieldError>,
) {
    if let Some(not) = v.get("not") {
        nested_completeness(not, Some(s), s_path, &format!("{v_path}.not"), errors);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for (child_path, child) in children(v, key, v_path) {
            nested_completeness(child, Some(s), s_path, &child_path, errors);
        }
    }
}

/// `validateNestedValueValidationCompleteness`: what the value validation `v` names (its
/// items and properties, and its own value validations) is specified in `s`.
fn nested_completeness(
    v: &Value,
    s: Option<&Map<String, Value>>,
    s_path: &str,
    v_path: &str,
    errors: &mut Vec<FieldError>,
) {
    let Some(v) = object(v) else {
        return;
    };
    let Some(s) = s else {
        errors.push(E::required(
            s_path,
            format!("because it is defined in {v_path}"),
        ));
        return;
    };
    value_validation_completeness(v, s, s_path, v_path, errors);
    if let Some(items) = v.get("items") {
        nested_completeness(
            items,
            s.get("items").and_then(Value::as_object),
            &format!("{s_path}.items"),
            &format!("{v_path}.items"),
            errors,
        );
    }
    let specified = s.get("properties").and_then(Value::as_object);
    for (name, property) in v
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let s_child = format!("{s_path}.properties[{name}]");
        let v_child = format!("{v_path}.properties[{name}]");
        match specified
            .and_then(|p| p.get(name))
            .and_then(Value::as_object)
        {
            Some(field) => nested_completeness(property, Some(field), &s_child, &v_child, errors),
            None => errors.push(E::required(
                s_child,
                format!("because it is defined in {v_child}"),
            )),
        }
    }
}
