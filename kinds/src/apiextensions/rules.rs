//! A CustomResourceDefinition's validation rules (`x-kubernetes-validations`) checked as
//! kube's `validateExtensions` checks them when the definition is written: each rule
//! non-empty, its `message`, `messageExpression`, `reason` and `fieldPath` well formed,
//! the rule and its message expression compiled in the environment new rules get (the
//! previous Kubernetes version's), with kube's paths and messages.

use serde_json::Value;

use kapi_cel::environment::{KUBERNETES, new_expressions};
use kapi_cel::validation::{Rule, compile_rules};
use kapi_core::error::FieldError as E;
use kapi_core::error::FieldError;

/// The `reason`s a rule may give.
const REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// The errors of the rules of the schema node `schema` at `path` (`resource_root` at a
/// resource's root or an embedded resource).
pub(super) fn errors(schema: &Value, path: &str, resource_root: bool) -> Vec<FieldError> {
    let rules = Rule::of(schema);
    if rules.is_empty() {
        return Vec::new();
    }
    let mut errors = Vec::new();
    let at = |i: usize, field: &str| format!("{path}.x-kubernetes-validations[{i}].{field}");
    for (i, rule) in rules.iter().enumerate() {
        if rule.rule.trim().is_empty() {
            errors.push(E::required(at(i, "rule"), "rule is not specified"));
        }
        let declared = &schema["x-kubernetes-validations"][i];
        if declared.get("message").is_some() && rule.message.trim().is_empty() {
            errors.push(E::invalid(
                at(i, "message"),
                rule.message.as_str(),
                "message must be non-empty if specified",
            ));
        } else if rule.message.contains('\n') {
            errors.push(E::invalid(
                at(i, "message"),
                rule.message.as_str(),
                "message must not contain line breaks",
            ));
        } else if rule.rule.contains('\n') && rule.message.is_empty() {
            errors.push(E::required(
                at(i, "message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        if declared.get("messageExpression").is_some() && rule.message_expression.trim().is_empty()
        {
            errors.push(E::required(
                at(i, "messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = &rule.reason
            && !REASONS.contains(&reason.as_str())
        {
            errors.push(E::not_supported(at(i, "reason"), reason, REASONS));
        }
        if declared.get("fieldPath").is_some() {
            if rule.field_path.trim().is_empty() {
                errors.push(E::invalid(
                    at(i, "fieldPath"),
                    rule.field_path.as_str(),
                    "fieldPath must be non-empty if specified",
                ));
            } else if rule.field_path.contains('\n') {
                errors.push(E::invalid(
                    at(i, "fieldPath"),
                    rule.field_path.as_str(),
                    "fieldPath must not contain line breaks",
                ));
            }
        }
    }
    if !errors.is_empty() {
        return errors;
    }
    for (i, compiled) in compile_rules(schema, resource_root, &new_expressions(KUBERNETES))
        .into_iter()
        .enumerate()
    {
        if let Err(detail) = &compiled.program {
            errors.push(E::invalid(
                at(i, "rule"),
                compiled.rule.rule.as_str(),
                detail.as_str(),
            ));
        }
        if let Err(detail) = &compiled.message {
            errors.push(E::invalid(
                at(i, "messageExpression"),
                compiled.rule.message_expression.as_str(),
                detail.as_str(),
            ));
        }
        if compiled.rule.optional_old_self && compiled.program.is_ok() && !compiled.uses_old_self {
            errors.push(E::invalid(
                at(i, "optionalOldSelf"),
                true,
                "may not be set if oldSelf is not used in rule",
            ));
        }
    }
    errors
}
