//! kube's generic checks of a CustomResourceDefinition's `openAPIV3Schema`
//! (`ValidateCustomResourceDefinitionOpenAPISchema`), for what a v1 schema can hold: known
//! types, the keywords kube does not support (`$ref`, `patternProperties`, `definitions`,
//! `dependencies`, `additionalItems`, `id`, `uniqueItems`, a `null` type, an array of
//! items), `additionalProperties` and `properties` exclusive, no defaults in the root's
//! `metadata`, `apiVersion` and `kind`, `x-kubernetes-preserve-unknown-fields` true or
//! absent, and the map and list types (`x-kubernetes-map-type`, `x-kubernetes-list-type`,
//! `x-kubernetes-list-map-keys`: their values, the types they need, map keys that are
//! scalar, required or defaulted and not nullable, atomic set items). Paths and messages
//! are kube's; errors come in kube's order for one node, its children after its own
//! keywords.
//!
//! `x-kubernetes-validations` (CEL rules) are checked by `rules`: they must compile.

use serde_json::{Map, Value};

use super::structural::{children, flag, object, text};
use kapi_cel::definition::Previous;
use kapi_core::error::FieldError as E;
use kapi_core::error::{FieldError, go_strings};

/// The types OpenAPI v3 knows, as kube lists them.
const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

/// The properties of a resource's root (and of an embedded resource) that describe the
/// object rather than its content.
const META_FIELDS: [&str; 3] = ["metadata", "kind", "apiVersion"];

/// What holds for a node from where it sits (kube's `specStandardValidatorV3`).
#[derive(Clone, Default)]
struct Context {
    /// Under a resource's `metadata`, `kind` or `apiVersion`.
    inside_resource_meta: bool,
    /// Why a default may not be set here, when it may not.
    defaults_forbidden: Option<String>,
}

/// Every generic error of `schema`, a version's `openAPIV3Schema` reported at `path`.
pub(super) fn errors(schema: &Value, path: &str, previous: Option<&Previous>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    check(schema, path, &Context::default(), true, &mut errors);
    errors.extend(kapi_cel::definition::errors(schema, path, previous));
    errors
}

/// The keywords of one node (kube's `specStandardValidatorV3.validate`).
fn keywords(
    node: &Map<String, Value>,
    path: &str,
    context: &Context,
    errors: &mut Vec<FieldError>,
) {
    let type_ = text(node, "type");
    if !type_.is_empty() && !TYPES.contains(&type_) {
        errors.push(E::not_supported(format!("{path}.type"), type_, TYPES));
    }
    if let Some(reason) = &context.defaults_forbidden
        && node.get("default").is_some_and(|d| !d.is_null())
    {
        errors.push(E::forbidden(
            format!("{path}.default"),
            format!("must not be set {reason}"),
        ));
    }
    let unsupported =
        |key: &str| E::forbidden(format!("{path}.{key}"), format!("{key} is not supported"));
    if node
        .get("id")
        .and_then(Value::as_str)
        .is_some_and(|id| !id.is_empty())
    {
        errors.push(unsupported("id"));
    }
    if node.get("additionalItems").is_some_and(|a| !a.is_null()) {
        errors.push(unsupported("additionalItems"));
    }
    for key in ["patternProperties", "definitions"] {
        if node
            .get(key)
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
        {
            errors.push(unsupported(key));
        }
    }
    if node.get("dependencies").is_some_and(|d| !d.is_null()) {
        errors.push(unsupported("dependencies"));
    }
    if node.get("$ref").is_some_and(|r| !r.is_null()) {
        errors.push(unsupported("$ref"));
    }
    if type_ == "null" {
        errors.push(E::forbidden(
            format!("{path}.type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if node.get("items").is_some_and(Value::is_array) {
        errors.push(E::forbidden(
            format!("{path}.items"),
            "items must be a schema object and not an array",
        ));
    }
    if context.inside_resource_meta && flag(node, "x-kubernetes-embedded-resource") {
        errors.push(E::forbidden(
            format!("{path}.x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }
}

/// `ValidateCustomResourceDefinitionOpenAPISchema`: one node, then its subschemas.
fn check(schema: &Value, path: &str, context: &Context, root: bool, errors: &mut Vec<FieldError>) {
    let Some(node) = object(schema) else {
        return;
    };
    keywords(node, path, context, errors);
    if flag(node, "uniqueItems") {
        errors.push(E::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let properties = node.get("properties").and_then(Value::as_object);
    if let Some(additional) = node.get("additionalProperties") {
        if properties.is_some_and(|p| !p.is_empty())
            && (additional == &Value::Bool(false) || additional.is_object())
        {
            errors.push(E::forbidden(
                format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        let mut inner = context.clone();
        if context.inside_resource_meta {
            // Pruning without a value would be ambiguous there.
            inner.defaults_forbidden =
                Some("inside additionalProperties applying to object metadata".into());
        }
        check(
            additional,
            &format!("{path}.additionalProperties"),
            &inner,
            false,
            errors,
        );
    }
    let embedded = flag(node, "x-kubernetes-embedded-resource");
    for (name, child) in properties.into_iter().flatten() {
        let mut inner = context.clone();
        if (root || embedded) && META_FIELDS.contains(&name.as_str()) {
            inner.inside_resource_meta = true;
            if root {
                inner.defaults_forbidden = Some(format!("in top-level {name}"));
            }
        }
        check(
            child,
            &format!("{path}.properties[{name}]"),
            &inner,
            false,
            errors,
        );
    }
    if let Some(not) = node.get("not") {
        check(not, &format!("{path}.not"), context, false, errors);
    }
    for key in [
        "allOf",
        "oneOf",
        "anyOf",
        "definitions",
        "patternProperties",
    ] {
        for (child_path, child) in children(node, key, path) {
            check(child, &child_path, context, false, errors);
        }
    }
    match node.get("items") {
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                check(item, &format!("{path}.items[{i}]"), context, false, errors);
            }
        }
        Some(items) => check(items, &format!("{path}.items"), context, false, errors),
        None => {}
    }
    if let Some(Value::Object(dependencies)) = node.get("dependencies") {
        for (name, dependency) in dependencies {
            if dependency.is_object() {
                let child_path = format!("{path}.dependencies[{name}]");
                check(dependency, &child_path, context, false, errors);
            }
        }
    }
    if node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        errors.push(E::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            Value::Bool(false),
            "must be true or undefined",
        ));
    }
    map_type(node, path, errors);
    list_type(node, path, errors);
}

/// A `Required` when `type` is empty, else an `Invalid` of it, with `detail`.
fn wrong_type(path: &str, type_: &str, detail: &str) -> FieldError {
    match type_ {
        "" => E::required(format!("{path}.type"), detail),
        other => E::invalid(format!("{path}.type"), other, detail),
    }
}

/// `x-kubernetes-map-type`: on objects, `atomic` or `granular`.
fn map_type(node: &Map<String, Value>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(map_type) = node.get("x-kubernetes-map-type").filter(|t| !t.is_null()) else {
        return;
    };
    let type_ = text(node, "type");
    if type_ != "object" {
        let detail = "must be object if x-kubernetes-map-type is specified";
        errors.push(wrong_type(path, type_, detail));
    }
    let map_type = map_type.as_str().unwrap_or_default();
    if map_type != "atomic" && map_type != "granular" {
        errors.push(E::not_supported(
            format!("{path}.x-kubernetes-map-type"),
            map_type,
            &["atomic", "granular"],
        ));
    }
}

/// `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`.
fn list_type(node: &Map<String, Value>, path: &str, errors: &mut Vec<FieldError>) {
    let list_type = node
        .get("x-kubernetes-list-type")
        .filter(|t| !t.is_null())
        .map(|t| t.as_str().unwrap_or_default());
    let keys: Vec<&str> = (node
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array))
    .into_iter()
    .flatten()
    .filter_map(Value::as_str)
    .collect();
    let type_ = text(node, "type");
    let items = node.get("items").and_then(Value::as_object);
    let item = |key: &str| items.and_then(|i| i.get(key));
    let item_properties = item("properties").and_then(Value::as_object);
    if list_type.is_some() && type_ != "array" {
        let detail = "must be array if x-kubernetes-list-type is specified";
        errors.push(wrong_type(path, type_, detail));
    } else if list_type == Some("set")
        && let Some(items) = items
    {
        let atomic = "must be atomic as item of a list with x-kubernetes-list-type=set";
        match text(items, "type") {
            "array" => {
                let inner = text(items, "x-kubernetes-list-type");
                if !inner.is_empty() && inner != "atomic" {
                    let field = format!("{path}.items.x-kubernetes-list-type");
                    errors.push(E::invalid(field, inner, atomic));
                }
            }
            "object" if text(items, "x-kubernetes-map-type") != "atomic" => {
                let field = format!("{path}.items.x-kubernetes-map-type");
                errors.push(E::invalid(
                    field,
                    text(items, "x-kubernetes-map-type"),
                    atomic,
                ));
            }
            _ => {}
        }
    }
    if let Some(list_type) = list_type
        && !["atomic", "set", "map"].contains(&list_type)
    {
        errors.push(E::not_supported(
            format!("{path}.x-kubernetes-list-type"),
            list_type,
            &["atomic", "set", "map"],
        ));
    }
    if !keys.is_empty() {
        let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errors.push(E::required(
                format!("{path}.x-kubernetes-list-type"),
                detail,
            )),
            Some("map") => {}
            Some(other) => errors.push(E::invalid(
                format!("{path}.x-kubernetes-list-type"),
                other,
                detail,
            )),
        }
    }
    if list_type == Some("map") {
        if keys.is_empty() {
            errors.push(E::required(
                format!("{path}.x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match items {
            None => errors.push(E::required(
                format!("{path}.items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Some(items) if text(items, "type") != "object" => errors.push(E::invalid(
                format!("{path}.items.type"),
                text(items, "type"),
                "must be object if parent array's x-kubernetes-list-type is map",
            )),
            Some(_) => {
                let listed = go_strings(&keys);
                for (i, key) in keys.iter().enumerate() {
                    match item_properties
                        .and_then(|p| p.get(*key))
                        .and_then(Value::as_object)
                    {
                        Some(property) => {
                            if matches!(text(property, "type"), "array" | "object") {
                                errors.push(E::invalid(
                                    format!("{path}.items.properties[{key}].type"),
                                    "object",
                                    "must be a scalar type if parent array's \
                                     x-kubernetes-list-type is map",
                                ));
                            }
                        }
                        None => errors.push(E::new(
                            kapi_core::error::FieldErrorType::Invalid,
                            format!("{path}.x-kubernetes-list-map-keys"),
                            None,
                            format!("{listed}: entries must all be names of item properties"),
                        )),
                    }
                    if keys[..i].contains(key) {
                        errors.push(E::new(
                            kapi_core::error::FieldErrorType::Invalid,
                            format!("{path}.x-kubernetes-list-map-keys"),
                            None,
                            format!("{listed}: must not contain duplicate entries"),
                        ));
                    }
                }
            }
        }
    }
    map_and_set_items(node, list_type, &keys, path, errors);
}

/// kube's `validateMapListKeysMapSet`: the items of a set or list-map are not nullable, and
/// a list-map's keys are required or defaulted, and not nullable.
fn map_and_set_items(
    node: &Map<String, Value>,
    list_type: Option<&str>,
    keys: &[&str],
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let Some(items) = node.get("items").and_then(Value::as_object) else {
        return;
    };
    let Some(list_type @ ("set" | "map")) = list_type else {
        return;
    };
    if flag(items, "nullable") {
        errors.push(E::forbidden(
            format!("{path}.items.nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
        ));
    }
    if list_type != "map" {
        return;
    }
    let required: Vec<&str> = (items.get("required").and_then(Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let properties = items.get("properties").and_then(Value::as_object);
    for key in keys {
        let Some(property) = properties
            .and_then(|p| p.get(*key))
            .and_then(Value::as_object)
        else {
            continue;
        };
        if !required.contains(key) && property.get("default").is_none_or(Value::is_null) {
            errors.push(E::required(
                format!("{path}.items.properties[{key}].default"),
                "this property is in x-kubernetes-list-map-keys, so it must have a default or \
                 be a required property",
            ));
        }
        if flag(property, "nullable") {
            errors.push(E::forbidden(
                format!("{path}.items.properties[{key}].nullable"),
                "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(schema: Value) -> Vec<String> {
        errors(&schema, "s", None)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn set_items_must_be_atomic() {
        let schema = json!({"type": "object", "properties": {
            "objects": {"type": "array", "x-kubernetes-list-type": "set",
                "items": {"type": "object", "x-kubernetes-map-type": "granular"}},
            "lists": {"type": "array", "x-kubernetes-list-type": "set",
                "items": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {"type": "object", "required": ["k"],
                        "properties": {"k": {"type": "string"}}}}},
            "fine": {"type": "array", "x-kubernetes-list-type": "set",
                "items": {"type": "object", "x-kubernetes-map-type": "atomic"}},
        }});
        assert_eq!(
            messages(schema),
            [
                "s.properties[objects].items.x-kubernetes-map-type: Invalid value: \"granular\": \
                 must be atomic as item of a list with x-kubernetes-list-type=set",
                "s.properties[lists].items.x-kubernetes-list-type: Invalid value: \"map\": \
                 must be atomic as item of a list with x-kubernetes-list-type=set",
            ]
        );
    }

    #[test]
    fn map_keys_must_name_item_properties_once() {
        let schema = json!({"type": "object", "properties": {"l": {
            "type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k", "k", "gone"],
            "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}},
        }}});
        assert_eq!(
            messages(schema),
            [
                "s.properties[l].x-kubernetes-list-map-keys: Invalid value: []string{\"k\", \"k\", \
                 \"gone\"}: must not contain duplicate entries",
                "s.properties[l].x-kubernetes-list-map-keys: Invalid value: []string{\"k\", \"k\", \
                 \"gone\"}: entries must all be names of item properties",
            ]
        );
    }

    #[test]
    fn empty_or_null_rules_are_no_rules_and_rules_compile() {
        let schema = json!({"type": "object", "x-kubernetes-validations": null,
            "properties": {"a": {"type": "string", "x-kubernetes-validations": []},
                "b": {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]},
                "c": {"type": "string", "x-kubernetes-validations": [{"rule": "self.foo"}]}}});
        assert_eq!(
            messages(schema),
            [
                "s.properties[c].x-kubernetes-validations[0].rule: Invalid value: \
                 apiextensions.ValidationRule{Rule:\"self.foo\", Message:\"\", \
                 MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), \
                 FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: type 'string' does not support field \
                 selection\n | self.foo\n | ....^"
            ]
        );
    }
}
