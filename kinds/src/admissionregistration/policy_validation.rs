//! kube's validation of ValidatingAdmissionPolicies and their bindings
//! (`ValidateValidatingAdmissionPolicy`, `ValidateValidatingAdmissionPolicyBinding`): the
//! policy's failure policy, param kind, match constraints (the rules and selectors webhooks
//! have, named rules with resource names, exclusions), match conditions, variables,
//! validations and audit annotations, every expression compiled as kube compiles it; the
//! binding's policy name, param reference, match resources and validation actions. Field
//! paths and messages are kube's.

use kapi_cel::admission::{Declarations, Returns};
use kapi_core::error::{FieldError, FieldErrorType};
use kapi_core::validation as names;
use kapi_core::validation::label_selector;
use serde_json::Value;

use super::expressions::{Compilers, invalid, match_conditions};
use super::validation::rule_errors;
use super::{
    MatchResources, ParamKind, ParamRef, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding, Variable,
};
use kapi_cel::escape::is_identifier;

const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
const REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];
const ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];
const NOT_FOUND_ACTIONS: &[&str] = &["Deny", "Allow"];
/// The most audit annotations a policy may have.
const MAX_AUDIT_ANNOTATIONS: usize = 20;
/// The longest audit annotation value expression.
const MAX_VALUE_EXPRESSION: usize = 5 * 1024;

/// The expressions a stored policy held, which compile in the stored environment.
#[derive(Default)]
struct Preexisting<'a> {
    match_conditions: Vec<&'a str>,
    validations: Vec<&'a str>,
    messages: Vec<&'a str>,
    audit_annotations: Vec<&'a str>,
}

impl<'a> Preexisting<'a> {
    fn of(old: Option<&'a ValidatingAdmissionPolicy>) -> Preexisting<'a> {
        let Some(old) = old else {
            return Preexisting::default();
        };
        let spec = &old.spec;
        Preexisting {
            match_conditions: (spec.match_conditions.iter())
                .map(|c| c.expression.as_str())
                .collect(),
            validations: spec
                .validations
                .iter()
                .map(|v| v.expression.as_str())
                .collect(),
            messages: (spec.validations.iter())
                .map(|v| v.message_expression.as_str())
                .filter(|m| !m.is_empty())
                .collect(),
            audit_annotations: (spec.audit_annotations.iter())
                .map(|a| a.value_expression.as_str())
                .collect(),
        }
    }
}

/// `spec.failurePolicy`'s error: it is required (defaulted to `Fail` before), and one of
/// kube's.
pub(super) fn failure_policy(value: Option<&str>) -> Option<FieldError> {
    match value {
        None => Some(FieldError::required("spec.failurePolicy", "")),
        Some(p) if !FAILURE_POLICIES.contains(&p) => Some(FieldError::not_supported(
            "spec.failurePolicy",
            p,
            FAILURE_POLICIES,
        )),
        Some(_) => None,
    }
}

/// A policy's errors; `old`: the stored policy of an update.
pub(crate) fn policy(
    policy: &ValidatingAdmissionPolicy,
    old: Option<&ValidatingAdmissionPolicy>,
) -> Vec<FieldError> {
    let spec = &policy.spec;
    let preexisting = Preexisting::of(old);
    let mut errors = Vec::new();
    errors.extend(failure_policy(spec.failure_policy.as_deref()));
    let params = spec.param_kind.is_some();
    if let Some(kind) = &spec.param_kind {
        errors.extend(param_kind(kind, "spec.paramKind"));
    }
    match &spec.match_constraints {
        None => errors.push(FieldError::required("spec.matchConstraints", "")),
        Some(constraints) => {
            errors.extend(match_resources(constraints, "spec.matchConstraints"));
            if constraints.resource_rules.is_empty() {
                errors.push(FieldError::required(
                    "spec.matchConstraints.resourceRules",
                    "",
                ));
            }
        }
    }
    // kube skips the conditions of an update that changes neither them nor the param kind.
    let unchanged = old.is_some_and(|old| {
        old.spec.param_kind == spec.param_kind && old.spec.match_conditions == spec.match_conditions
    });
    if !unchanged {
        errors.extend(match_conditions(
            &spec.match_conditions,
            "spec.matchConditions",
            params,
            &preexisting.match_conditions,
        ));
    }
    let mut compilers = Compilers::new(Declarations {
        params,
        authorizer: true,
        ..Default::default()
    });
    let mut messages = Compilers::new(Declarations {
        params,
        authorizer: false,
        ..Default::default()
    });
    // kube looks a variable up among the stored validations' expressions.
    errors.extend(variables(
        &spec.variables,
        &mut compilers,
        Some(&mut messages),
        &preexisting.validations,
    ));
    if spec.validations.is_empty() && spec.audit_annotations.is_empty() {
        let detail = "validations or auditAnnotations must contain at least one item";
        errors.push(FieldError::required("spec.validations", detail));
        errors.push(FieldError::required("spec.auditAnnotations", detail));
        return errors;
    }
    for (i, validation) in spec.validations.iter().enumerate() {
        let at = format!("spec.validations[{i}]");
        if validation.expression.trim().is_empty() {
            errors.push(FieldError::required(
                format!("{at}.expression"),
                "expression is not specified",
            ));
        } else if let Some(error) = compilers.check(
            &validation.expression,
            Returns::Bool,
            preexisting
                .validations
                .contains(&validation.expression.as_str()),
        ) {
            errors.push(invalid(
                &format!("{at}.expression"),
                &validation.expression,
                error,
            ));
        }
        let message_expression = &validation.message_expression;
        if !message_expression.is_empty() && message_expression.trim().is_empty() {
            errors.push(FieldError::invalid(
                format!("{at}.messageExpression"),
                message_expression.as_str(),
                "must be non-empty if specified",
            ));
        } else if !message_expression.is_empty()
            && let Some(error) = messages.check(
                message_expression,
                Returns::String,
                preexisting.messages.contains(&message_expression.as_str()),
            )
        {
            errors.push(invalid(
                &format!("{at}.messageExpression"),
                message_expression,
                error,
            ));
        }
        let message = validation.message.trim();
        if !validation.message.is_empty() && message.is_empty() {
            errors.push(FieldError::invalid(
                format!("{at}.message"),
                validation.message.as_str(),
                "message must be non-empty if specified",
            ));
        } else if message.contains(['\n', '\r']) {
            errors.push(FieldError::invalid(
                format!("{at}.message"),
                validation.message.as_str(),
                "message must not contain line breaks",
            ));
        }
        if let Some(reason) = validation.reason.as_deref()
            && !REASONS.contains(&reason)
        {
            errors.push(FieldError::not_supported(
                format!("{at}.reason"),
                reason,
                REASONS,
            ));
        }
    }
    if spec.audit_annotations.len() > MAX_AUDIT_ANNOTATIONS {
        errors.push(FieldError::invalid(
            "spec.auditAnnotations",
            serde_json::to_value(&spec.audit_annotations).unwrap_or_default(),
            format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
        ));
    }
    let mut keys: Vec<&str> = Vec::new();
    for (i, annotation) in spec.audit_annotations.iter().enumerate() {
        let at = format!("spec.auditAnnotations[{i}]");
        let name = policy.metadata.name.as_deref().unwrap_or_default();
        if name.is_empty() {
            errors.push(FieldError::invalid(
                format!("{at}.key"),
                annotation.key.as_str(),
                "requires metadata.name be non-empty",
            ));
        } else {
            let qualified = format!("{name}/{}", annotation.key);
            for detail in names::qualified_name(&qualified) {
                errors.push(FieldError::invalid(
                    format!("{at}.key"),
                    qualified.as_str(),
                    detail,
                ));
            }
        }
        let expression = annotation.value_expression.trim();
        if expression.is_empty() {
            errors.push(FieldError::required(
                format!("{at}.valueExpression"),
                "valueExpression is not specified",
            ));
        } else if expression.len() > MAX_VALUE_EXPRESSION {
            errors.push(FieldError::required(
                format!("{at}.valueExpression"),
                format!("must not exceed {MAX_VALUE_EXPRESSION} bytes in length"),
            ));
        } else if let Some(error) = compilers.check(
            expression,
            Returns::StringOrNull,
            (preexisting.audit_annotations).contains(&annotation.value_expression.as_str()),
        ) {
            errors.push(invalid(
                &format!("{at}.valueExpression"),
                &annotation.value_expression,
                error,
            ));
        }
        if keys.contains(&annotation.key.as_str()) {
            errors.push(FieldError::new(
                FieldErrorType::Duplicate,
                format!("{at}.key"),
                Some(Value::String(annotation.key.clone())),
                "",
            ));
        }
        keys.push(&annotation.key);
    }
    errors
}

/// `validateVariable` of each of a policy's `spec.variables`, in order: a name that is a
/// CEL identifier, an expression that compiles, which `compilers` (and `messages`, the
/// compilers of a ValidatingAdmissionPolicy's message expressions) then declare to what
/// follows. `stored`: the expressions a variable compiles in the stored environment for.
pub(super) fn variables(
    variables: &[Variable],
    compilers: &mut Compilers,
    mut messages: Option<&mut Compilers>,
    stored: &[&str],
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, variable) in variables.iter().enumerate() {
        let at = format!("spec.variables[{i}]");
        if variable.name.trim().is_empty() {
            errors.push(FieldError::required(
                format!("{at}.name"),
                "name is not specified",
            ));
        } else if !is_identifier(&variable.name) {
            errors.push(FieldError::invalid(
                format!("{at}.name"),
                variable.name.as_str(),
                "name is not a valid CEL identifier",
            ));
        }
        if variable.expression.trim().is_empty() {
            errors.push(FieldError::required(
                format!("{at}.expression"),
                "expression is not specified",
            ));
            continue;
        }
        let stored = stored.contains(&variable.expression.as_str());
        let error = compilers.variable(&variable.name, &variable.expression, stored);
        if let Some(messages) = messages.as_deref_mut() {
            messages.variable(&variable.name, &variable.expression, stored);
        }
        if let Some(error) = error {
            errors.push(invalid(
                &format!("{at}.expression"),
                &variable.expression,
                error,
            ));
        }
    }
    errors
}

/// `validateParamKind`.
pub(super) fn param_kind(kind: &ParamKind, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let at = format!("{path}.apiVersion");
    let api_version = kind.api_version.as_str();
    if api_version.is_empty() {
        errors.push(FieldError::required(&at, ""));
    } else {
        let parsed = match api_version.matches('/').count() {
            _ if api_version == "/" => Some(("", "")),
            0 => Some(("", api_version)),
            1 => api_version.split_once('/'),
            _ => None,
        };
        match parsed {
            None => errors.push(FieldError::invalid(
                &at,
                api_version,
                format!("unexpected GroupVersion string: {api_version}"),
            )),
            Some((group, version)) => {
                let wrong = names::dns1123_subdomain(group);
                if !group.is_empty() && !wrong.is_empty() {
                    errors.push(FieldError::invalid(&at, group, wrong.join(",")));
                }
                if version.is_empty() {
                    errors.push(FieldError::invalid(
                        &at,
                        api_version,
                        "version must be specified",
                    ));
                } else {
                    let wrong = names::dns1035_label(version);
                    if !wrong.is_empty() {
                        errors.push(FieldError::invalid(&at, version, wrong.join(",")));
                    }
                }
            }
        }
    }
    if kind.kind.is_empty() {
        errors.push(FieldError::required(format!("{path}.kind"), ""));
    } else {
        let wrong = names::dns1035_label(&kind.kind.to_lowercase());
        if !wrong.is_empty() {
            errors.push(FieldError::invalid(
                format!("{path}.kind"),
                kind.kind.as_str(),
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    wrong.join(",")
                ),
            ));
        }
    }
    errors
}

/// `validateMatchResources`, of a policy's constraints and a binding's resources.
pub(super) fn match_resources(resources: &MatchResources, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    match resources.match_policy.as_deref() {
        None => errors.push(FieldError::required(format!("{path}.matchPolicy"), "")),
        Some(p) if !MATCH_POLICIES.contains(&p) => errors.push(FieldError::not_supported(
            format!("{path}.matchPolicy"),
            p,
            MATCH_POLICIES,
        )),
        Some(_) => {}
    }
    for (field, selector) in [
        ("namespaceSelector", &resources.namespace_selector),
        ("objectSelector", &resources.object_selector),
    ] {
        match selector {
            None => errors.push(FieldError::required(format!("{path}.{field}"), "")),
            Some(selector) => errors.extend(label_selector(selector, &format!("{path}.{field}"))),
        }
    }
    for (field, rules) in [
        ("resourceRules", &resources.resource_rules),
        ("excludeResourceRules", &resources.exclude_resource_rules),
    ] {
        for (i, rule) in rules.iter().enumerate() {
            let at = format!("{path}.{field}[{i}]");
            let mut seen: Vec<&str> = Vec::new();
            for (j, name) in rule.resource_names.iter().enumerate() {
                for detail in names::path_segment_name(name) {
                    errors.push(FieldError::invalid(
                        format!("{at}.resourceNames[{j}]"),
                        name.as_str(),
                        detail,
                    ));
                }
                if seen.contains(&name.as_str()) {
                    errors.push(FieldError::new(
                        FieldErrorType::Duplicate,
                        format!("{at}.resourceNames[{j}]"),
                        Some(Value::String(name.clone())),
                        "",
                    ));
                }
                seen.push(name);
            }
            errors.extend(rule_errors(&rule.rule_with_operations, &at));
        }
    }
    errors
}

/// A binding's `policyName`: required, a DNS subdomain.
pub(super) fn policy_name(name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required("spec.policyName", "")];
    }
    (names::name_is_dns_subdomain(name, false).into_iter())
        .map(|detail| FieldError::invalid("spec.policyName", name, detail))
        .collect()
}

/// A binding's errors.
pub(crate) fn binding(binding: &ValidatingAdmissionPolicyBinding) -> Vec<FieldError> {
    let spec = &binding.spec;
    let mut errors = policy_name(&spec.policy_name);
    if let Some(reference) = &spec.param_ref {
        errors.extend(param_ref(reference, "spec.paramRef"));
    }
    if let Some(resources) = &spec.match_resources {
        errors.extend(match_resources(resources, "spec.matchResources"));
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, action) in spec.validation_actions.iter().enumerate() {
        let at = format!("spec.validationActions[{i}]");
        if !ACTIONS.contains(&action.as_str()) {
            errors.push(FieldError::not_supported(&at, action, ACTIONS));
        }
        if seen.contains(&action.as_str()) {
            errors.push(FieldError::new(
                FieldErrorType::Duplicate,
                at,
                Some(Value::String(action.clone())),
                "",
            ));
        }
        seen.push(action);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errors.push(FieldError::invalid(
            "spec.validationActions",
            serde_json::to_value(&spec.validation_actions).unwrap_or_default(),
            "must not contain both Deny and Warn (repeating the same validation failure \
             information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errors.push(FieldError::required(
            "spec.validationActions",
            "at least one validation action is required",
        ));
    }
    errors
}

/// `validateParamRef`.
pub(super) fn param_ref(reference: &ParamRef, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let exclusive = "name and selector are mutually exclusive";
    if !reference.name.is_empty() {
        for detail in names::path_segment_name(&reference.name) {
            errors.push(FieldError::invalid(
                format!("{path}.name"),
                reference.name.as_str(),
                detail,
            ));
        }
        if reference.selector.is_some() {
            errors.push(FieldError::forbidden(format!("{path}.name"), exclusive));
        }
    }
    if let Some(selector) = &reference.selector {
        errors.extend(label_selector(selector, &format!("{path}.selector")));
        if !reference.name.is_empty() {
            errors.push(FieldError::forbidden(format!("{path}.selector"), exclusive));
        }
    }
    if reference.name.is_empty() && reference.selector.is_none() {
        errors.push(FieldError::required(
            path,
            "one of name or selector must be specified",
        ));
    }
    let at = format!("{path}.parameterNotFoundAction");
    match reference.parameter_not_found_action.as_deref() {
        None | Some("") => errors.push(FieldError::required(at, "")),
        Some(action) if !NOT_FOUND_ACTIONS.contains(&action) => {
            errors.push(FieldError::not_supported(at, action, NOT_FOUND_ACTIONS));
        }
        Some(_) => {}
    }
    errors
}
