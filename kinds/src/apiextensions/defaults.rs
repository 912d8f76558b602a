//! kube's checks of the defaults in a structural `openAPIV3Schema`
//! (apiextensions' `defaulting.ValidateDefaults`): each default (in the fields and array
//! items the schema specifies; value validations and `additionalProperties` may hold
//! none) must keep every field when pruned with the schema it sits in ("must not have
//! unknown fields") and validate against it, errors reported under `<node>.default`
//! with the same messages as an object's.
//!
//! Not here: kube's check of defaults under an embedded resource's `metadata`, `kind` and
//! `apiVersion` as the metadata of a surrounding object (they are validated against their
//! schema like any other).

use serde_json::Value;

use super::structural::object;
use kapi_core::error::{FieldError, FieldErrorType, go_unstructured};
use kapi_schema::{KindSchema, Schemas};

/// Every error of the defaults in `schema`, a structural `openAPIV3Schema` reported at
/// `path`.
pub(super) fn errors(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    walk(schema, path, true, &mut errors);
    errors
}

fn walk(schema: &Value, path: &str, root: bool, errors: &mut Vec<FieldError>) {
    let Some(node) = object(schema) else {
        return;
    };
    if let Some(default) = node.get("default").filter(|d| !d.is_null()) {
        check(schema, default, &format!("{path}.default"), errors);
    }
    if let Some(items) = node.get("items") {
        walk(items, &format!("{path}.items"), false, errors);
    }
    for (name, property) in node
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        // The root's own metadata, kind and apiVersion may hold no default (the generic
        // checks refuse them before this runs).
        if root && matches!(name.as_str(), "metadata" | "kind" | "apiVersion") {
            continue;
        }
        walk(
            property,
            &format!("{path}.properties[{name}]"),
            false,
            errors,
        );
    }
}

/// The errors of `default`, the default of the node `schema`, reported at `path`.
fn check(schema: &Value, default: &Value, path: &str, errors: &mut Vec<FieldError>) {
    // The node's own default is what is checked, not applied to itself.
    let mut bare = schema.clone();
    if let Some(node) = bare.as_object_mut() {
        node.remove("default");
    }
    let (schemas, root) = match Schemas::standalone(&bare, &Default::default()) {
        Ok(compiled) => compiled,
        Err(error) => {
            let detail = format!("the schema does not compile: {error}");
            errors.push(FieldError::invalid(path, "", detail));
            return;
        }
    };
    let schema = KindSchema::of(&schemas, root);
    let mut pruned = default.clone();
    schema.prune_value(&mut pruned);
    if &pruned != default {
        // kube prints the value as Go prints an unstructured one.
        errors.push(FieldError::new(
            FieldErrorType::Invalid,
            path,
            None,
            format!("{}: must not have unknown fields", go_unstructured(default)),
        ));
    }
    errors.extend(schema.validate_value(default, path));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unstructured_values_print_as_go_does() {
        assert_eq!(
            go_unstructured(&json!({"b": [1, "x"], "a": null, "c": {"d": true}})),
            r#"map[string]interface {}{"a":interface {}(nil), "b":[]interface {}{1, "x"}, "c":map[string]interface {}{"d":true}}"#
        );
    }

    fn messages(schema: Value) -> Vec<String> {
        errors(&schema, "s")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn defaults_are_pruned_and_validated_where_they_sit() {
        let schema = json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "default": {"a": "x", "b": 2},
        "properties": {
            "a": {"type": "string", "minLength": 3},
            "n": {"type": "integer", "maximum": 10, "default": 20},
            "l": {"type": "array", "items": {"type": "string", "enum": ["p"], "default": "q"}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
        }}}});
        assert_eq!(
            messages(schema),
            [
                r#"s.properties[spec].default: Invalid value: map[string]interface {}{"a":"x", "b":2}: must not have unknown fields"#,
                r#"s.properties[spec].default.a: Invalid value: "x": should be at least 3 chars long"#,
                r#"s.properties[spec].properties[n].default: Invalid value: 20: must be less than or equal to 10"#,
                r#"s.properties[spec].properties[l].items.default: Unsupported value: "q": supported values: "p""#,
            ]
        );
    }

    #[test]
    fn null_and_valid_defaults_pass() {
        let schema = json!({"type": "object", "properties": {"spec": {
        "type": "object", "default": {"a": "xyz"},
        "properties": {
            "a": {"type": "string", "minLength": 3},
            "b": {"type": "string", "nullable": true, "default": null},
            "any": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "default": {"free": 1}},
        }}}});
        assert!(messages(schema).is_empty());
    }
}
