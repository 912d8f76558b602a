//! A definition's validation rules (`x-kubernetes-validations` in a structural schema: a
//! CustomResourceDefinition's `openAPIV3Schema`, or a compiled kind's schema with its
//! references inlined) checked as kube's `validateExtensions` and its cost checks do when
//! a CustomResourceDefinition is written:
//! each rule non-empty, its `message`, `messageExpression`, `reason` and `fieldPath` well
//! formed; the rule and its message expression compiled in the environment new rules get
//! (the previous Kubernetes version's); `oldSelf` only where old and new values can be
//! matched; each rule's estimated cost, times how many times its node can occur in one
//! object, within kube's limit per expression, and all of them within kube's limit for the
//! schema; with kube's paths and messages.

use std::collections::HashSet;

use serde_json::Value;

use crate::cost::limits::{CostLimits, child_cardinality};
use crate::environment::{KUBERNETES, new_expressions, stored_expressions};
use crate::types::DeclType;
use crate::validation::{Rule, compile_rules};
use kapi_core::error::FieldError as E;
use kapi_core::error::{FieldError, FieldErrorType};

/// The `reason`s a rule may give.
const REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// What an updated definition had before: its rules and message expressions (which
/// compile in the stored-expressions environment, so that an update never refuses what
/// was accepted once) and its versions' schemas (whose rules are not held to the
/// per-expression cost limit again).
pub struct Previous {
    expressions: HashSet<String>,
    schemas: Vec<Value>,
}

impl Previous {
    /// What a definition whose versions had `schemas` had.
    pub fn of(schemas: Vec<Value>) -> Previous {
        fn collect(v: &Value, into: &mut HashSet<String>) {
            match v {
                Value::Object(fields) => {
                    if let Some(Value::Array(rules)) = fields.get("x-kubernetes-validations") {
                        for rule in rules {
                            for key in ["rule", "messageExpression"] {
                                if let Some(text) = rule.get(key).and_then(Value::as_str) {
                                    into.insert(text.to_owned());
                                }
                            }
                        }
                    }
                    fields.values().for_each(|v| collect(v, into));
                }
                Value::Array(items) => items.iter().for_each(|v| collect(v, into)),
                _ => {}
            }
        }
        let mut expressions = HashSet::new();
        schemas.iter().for_each(|s| collect(s, &mut expressions));
        Previous {
            expressions,
            schemas,
        }
    }
}

/// The errors of every rule of a version's `openAPIV3Schema` (reported at `path`), then
/// those of their total cost; `previous` on update.
pub fn errors(schema: &Value, path: &str, previous: Option<&Previous>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let unchanged = previous.is_some_and(|p| p.schemas.contains(schema));
    let mut limits = CostLimits::new(!unchanged);
    let root = Place {
        resource_root: true,
        cardinality: Some(1),
        uncorrelatable: None,
    };
    walk(schema, path, root, previous, &mut limits, &mut errors);
    let total = limits.total_errors(path).into_iter();
    errors.extend(total.map(|e| E::forbidden(e.path, e.detail)));
    errors
}

/// Where a schema node sits.
#[derive(Clone)]
struct Place {
    /// At a resource's root (or an embedded resource's).
    resource_root: bool,
    /// How many times it may occur in one object (`None`: unbounded).
    cardinality: Option<u64>,
    /// The highest node above it whose children old and new objects cannot be matched in
    /// (items of a list other than a list-map, properties of an atomic map): rules there
    /// may not read `oldSelf`.
    uncorrelatable: Option<String>,
}

/// The rules of `schema` (at `path`), then those of its subschemas.
fn walk(
    schema: &Value,
    path: &str,
    at: Place,
    previous: Option<&Previous>,
    limits: &mut CostLimits,
    errors: &mut Vec<FieldError>,
) {
    if !schema.is_object() {
        return;
    }
    let text = |key: &str| schema.get(key).and_then(Value::as_str);
    let embedded = schema
        .get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        == Some(true);
    let here = Place {
        resource_root: at.resource_root || embedded,
        ..at.clone()
    };
    node(schema, path, &here, previous, limits, errors);
    let below = |forbid: bool| Place {
        resource_root: false,
        cardinality: child_cardinality(at.cardinality, schema),
        uncorrelatable: (at.uncorrelatable.clone()).or_else(|| forbid.then(|| path.to_owned())),
    };
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let child = below(text("x-kubernetes-map-type") == Some("atomic"));
            walk(
                property,
                &format!("{path}.properties[{name}]"),
                child,
                previous,
                limits,
                errors,
            );
        }
    }
    if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        walk(
            additional,
            &format!("{path}.additionalProperties"),
            below(false),
            previous,
            limits,
            errors,
        );
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        let child = below(text("x-kubernetes-list-type") != Some("map"));
        walk(
            items,
            &format!("{path}.items"),
            child,
            previous,
            limits,
            errors,
        );
    }
    // An `allOf` branch's rules, typed by this node's schema.
    for (i, branch) in crate::validation::all_of_branches(schema)
        .iter()
        .enumerate()
    {
        walk(
            branch,
            &format!("{path}.allOf[{i}]"),
            at.clone(),
            previous,
            limits,
            errors,
        );
    }
}

/// The errors of one node's rules: their form first; when well formed, their compilation
/// and costs.
fn node(
    schema: &Value,
    path: &str,
    at: &Place,
    previous: Option<&Previous>,
    limits: &mut CostLimits,
    errors: &mut Vec<FieldError>,
) {
    let rules = Rule::of(schema);
    if rules.is_empty() {
        return;
    }
    let field = |i: usize, name: &str| format!("{path}.x-kubernetes-validations[{i}].{name}");
    let before = errors.len();
    for (i, rule) in rules.iter().enumerate() {
        if rule.rule.trim().is_empty() {
            errors.push(E::required(field(i, "rule"), "rule is not specified"));
        }
        let declared = &schema["x-kubernetes-validations"][i];
        if declared.get("message").is_some() && rule.message.trim().is_empty() {
            let detail = "message must be non-empty if specified";
            errors.push(E::invalid(
                field(i, "message"),
                rule.message.as_str(),
                detail,
            ));
        } else if rule.message.contains('\n') {
            let detail = "message must not contain line breaks";
            errors.push(E::invalid(
                field(i, "message"),
                rule.message.as_str(),
                detail,
            ));
        } else if rule.rule.contains('\n') && rule.message.is_empty() {
            let detail = "message must be specified if rule contains line breaks";
            errors.push(E::required(field(i, "message"), detail));
        }
        if declared.get("messageExpression").is_some() && rule.message_expression.trim().is_empty()
        {
            let detail = "messageExpression must be non-empty if specified";
            errors.push(E::required(field(i, "messageExpression"), detail));
        }
        if let Some(reason) = &rule.reason
            && !REASONS.contains(&reason.as_str())
        {
            errors.push(E::not_supported(field(i, "reason"), reason, REASONS));
        }
        if declared.get("fieldPath").is_some() {
            let path = rule.field_path.as_str();
            if path.trim().is_empty() {
                let detail = "fieldPath must be non-empty if specified";
                errors.push(E::invalid(field(i, "fieldPath"), path, detail));
            } else if path.contains('\n') {
                let detail = "fieldPath must not contain line breaks";
                errors.push(E::invalid(field(i, "fieldPath"), path, detail));
            } else if crate::validation::valid_field_path(path, schema).is_err() {
                let detail = "fieldPath must be a valid path";
                errors.push(E::invalid(field(i, "fieldPath"), path, detail));
            }
        }
    }
    if errors.len() > before {
        return;
    }
    let min_size =
        DeclType::of_schema(schema, at.resource_root).map_or(0, |d| d.min_serialized_size);
    // A rule (or message expression) the definition had already compiles in the
    // stored-expressions environment; a new one in the previous version's.
    let new = compile_rules(schema, at.resource_root, &new_expressions(KUBERNETES));
    let preexisting = |r: &Rule| {
        previous.is_some_and(|p| {
            p.expressions.contains(&r.rule) || p.expressions.contains(&r.message_expression)
        })
    };
    let stored = (rules.iter().any(preexisting))
        .then(|| compile_rules(schema, at.resource_root, &stored_expressions(KUBERNETES)));
    let mut stored = stored.map(|s| s.into_iter().map(Some).collect::<Vec<_>>());
    let compiled = new.into_iter().enumerate().map(|(i, c)| {
        match stored
            .as_mut()
            .and_then(|s| s.get_mut(i))
            .filter(|_| preexisting(&rules[i]))
        {
            Some(slot) => slot.take().unwrap_or(c),
            None => c,
        }
    });
    for (i, compiled) in compiled.enumerate() {
        let rule_path = format!("{path}.x-kubernetes-validations[{i}]");
        if let Some(cost) = limits.rule(&compiled, &rule_path, at.cardinality, min_size) {
            errors.push(E::forbidden(cost.path, cost.detail));
        }
        let rule = compiled.rule.rule.as_str();
        // kube shows the whole rule as the invalid value (Go's `%#v` of its struct).
        let invalid_rule = |path: String, detail: &str| match go_rule(&compiled.rule) {
            Some(shown) => E::new(
                FieldErrorType::Invalid,
                path,
                None,
                format!("{shown}: {detail}"),
            ),
            None => E::invalid(path, rule, detail),
        };
        if let Err(detail) = &compiled.program {
            errors.push(invalid_rule(field(i, "rule"), detail));
        }
        if let Err(detail) = &compiled.message {
            errors.push(invalid_rule(field(i, "messageExpression"), detail));
        } else if let Some(cost) = limits.message_expression(&compiled, &rule_path) {
            errors.push(E::forbidden(cost.path, cost.detail));
        }
        if let Some(within) = at
            .uncorrelatable
            .as_ref()
            .filter(|_| compiled.uses_old_self)
        {
            let detail = format!(
                "oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"
            );
            errors.push(E::invalid(field(i, "rule"), rule, detail));
        }
        if compiled.rule.optional_old_self && compiled.program.is_ok() && !compiled.uses_old_self {
            let detail = "may not be set if oldSelf is not used in rule";
            errors.push(E::invalid(field(i, "optionalOldSelf"), true, detail));
        }
    }
}

/// Go's `%#v` of kube's `apiextensions.ValidationRule`, as kube prints a rule it refuses;
/// `None` when it has a `reason` or `optionalOldSelf`, which Go prints as pointer
/// addresses.
fn go_rule(rule: &Rule) -> Option<String> {
    if rule.reason.is_some() || rule.optional_old_self {
        return None;
    }
    let quote = kapi_core::net::go_quote_str;
    Some(format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, \
         Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:{}, \
         OptionalOldSelf:(*bool)(nil)}}",
        quote(&rule.rule),
        quote(&rule.message),
        quote(&rule.message_expression),
        quote(&rule.field_path),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A rule with a two-variable comprehension: kube 1.32 has it only for stored rules.
    fn schema() -> Value {
        json!({"type": "object", "properties": {"m": {
            "type": "object", "maxProperties": 10,
            "additionalProperties": {"type": "integer"},
            "x-kubernetes-validations": [{"rule": "self.all(k, v, v > 0)"}]
        }}})
    }

    #[test]
    fn rules_a_definition_had_compile_as_stored_rules() {
        let new = errors(&schema(), "s", None);
        assert_eq!(new.len(), 1, "{new:?}");
        assert!(new[0].detail.contains("compilation failed"), "{new:?}");
        let previous = Previous {
            expressions: ["self.all(k, v, v > 0)".to_owned()].into(),
            schemas: vec![schema()],
        };
        assert_eq!(errors(&schema(), "s", Some(&previous)), vec![]);
    }
}
