//! kube's validation of webhook configurations (`pkg/apis/admissionregistration/
//! validation`, v1 rules): each webhook's fully qualified name, unique in its
//! configuration; its rules (operations, API groups and versions, resources and
//! subresources, scope); its policies (`failurePolicy`, `matchPolicy`, `sideEffects` of v1:
//! `None` or `NoneOnDryRun`, `reinvocationPolicy`); `timeoutSeconds` between 1 and 30; its
//! selectors; exactly one of an HTTPS URL or a service; and the `AdmissionReview`
//! versions (one of `v1`, `v1beta1`); its match conditions (`expressions`).

use super::expressions::match_conditions;
use crate::webhook_url::url_errors;
use serde_json::Value;

use super::{
    MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhookConfiguration,
    WebhookClientConfig, WebhookView,
};
use kapi_core::error::{FieldError, FieldErrorType, go_strings};
use kapi_core::validation as names;
use kapi_core::validation::label_selector;

const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
/// v1's side-effect classes (v1beta1 also allowed `Some` and `Unknown`).
const SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun"];
const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];
const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];
/// The `AdmissionReview` versions kube speaks.
const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];

/// A MutatingWebhookConfiguration's errors.
pub(crate) fn mutating(configuration: &MutatingWebhookConfiguration) -> Vec<FieldError> {
    configuration_errors(configuration.webhooks.iter().map(|hook| hook.view()))
}

/// A ValidatingWebhookConfiguration's errors.
pub(crate) fn validating(configuration: &ValidatingWebhookConfiguration) -> Vec<FieldError> {
    configuration_errors(configuration.webhooks.iter().map(|hook| hook.view()))
}

/// The errors of a configuration's webhooks.
fn configuration_errors<'a>(hooks: impl Iterator<Item = WebhookView<'a>>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names_seen: Vec<&str> = Vec::new();
    for (i, hook) in hooks.enumerate() {
        let path = format!("webhooks[{i}]");
        errors.extend(hook_errors(&hook, &path));
        errors.extend(review_versions(
            hook.admission_review_versions,
            &format!("{path}.admissionReviewVersions"),
        ));
        if !hook.name.is_empty() {
            if names_seen.contains(&hook.name) {
                errors.push(FieldError::new(
                    FieldErrorType::Duplicate,
                    format!("{path}.name"),
                    Some(Value::String(hook.name.to_owned())),
                    "",
                ));
            }
            names_seen.push(hook.name);
        }
    }
    errors
}

fn hook_errors(hook: &WebhookView<'_>, path: &str) -> Vec<FieldError> {
    let mut errors = fully_qualified_name(hook.name, &format!("{path}.name"));
    for (i, rule) in hook.rules.iter().enumerate() {
        errors.extend(rule_errors(rule, &format!("{path}.rules[{i}]")));
    }
    let unsupported = |field: &str, value: &str, supported: &[&str]| {
        FieldError::not_supported(format!("{path}.{field}"), value, supported)
    };
    if let Some(policy) = hook.failure_policy
        && !FAILURE_POLICIES.contains(&policy)
    {
        errors.push(unsupported("failurePolicy", policy, FAILURE_POLICIES));
    }
    if let Some(policy) = hook.match_policy
        && !MATCH_POLICIES.contains(&policy)
    {
        errors.push(unsupported("matchPolicy", policy, MATCH_POLICIES));
    }
    match hook.side_effects {
        None => errors.push(FieldError::required(
            format!("{path}.sideEffects"),
            format!("must specify one of {}", SIDE_EFFECTS.join(", ")),
        )),
        Some(class) if !SIDE_EFFECTS.contains(&class) => {
            errors.push(unsupported("sideEffects", class, SIDE_EFFECTS));
        }
        Some(_) => {}
    }
    if let Some(seconds) = hook.timeout_seconds
        && !(1..=30).contains(&seconds)
    {
        errors.push(FieldError::invalid(
            format!("{path}.timeoutSeconds"),
            seconds,
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    if let Some(selector) = hook.namespace_selector {
        errors.extend(label_selector(
            selector,
            &format!("{path}.namespaceSelector"),
        ));
    }
    if let Some(selector) = hook.object_selector {
        errors.extend(label_selector(selector, &format!("{path}.objectSelector")));
    }
    if let Some(policy) = hook.reinvocation_policy
        && !REINVOCATION_POLICIES.contains(&policy)
    {
        errors.push(unsupported(
            "reinvocationPolicy",
            policy,
            REINVOCATION_POLICIES,
        ));
    }
    errors.extend(client_config_errors(
        hook.client_config,
        &format!("{path}.clientConfig"),
    ));
    errors.extend(match_conditions(
        hook.match_conditions,
        &format!("{path}.matchConditions"),
        false,
        &[],
    ));
    errors
}

/// apimachinery's `IsFullyQualifiedName`.
fn fully_qualified_name(name: &str, path: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let wrong = names::dns1123_subdomain(name);
    if !wrong.is_empty() {
        return vec![FieldError::invalid(path, name, wrong.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![FieldError::invalid(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

/// `validateRuleWithOperations`.
pub(crate) fn rule_errors(rule: &RuleWithOperations, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let wildcard = |values: &[String]| values.iter().any(|v| v == "*");
    let invalid_list = |field: &str, values: &[String], detail: &str| {
        let listed: Vec<&str> = values.iter().map(String::as_str).collect();
        FieldError::new(
            FieldErrorType::Invalid,
            format!("{path}.{field}"),
            None,
            format!("{}: {detail}", go_strings(&listed)),
        )
    };
    if rule.operations.is_empty() {
        errors.push(FieldError::required(format!("{path}.operations"), ""));
    }
    if rule.operations.len() > 1 && wildcard(&rule.operations) {
        // Go's `%#v` of the typed list.
        let listed: Vec<String> = rule.operations.iter().map(|o| format!("{o:?}")).collect();
        errors.push(FieldError::new(
            FieldErrorType::Invalid,
            format!("{path}.operations"),
            None,
            format!(
                "[]admissionregistration.OperationType{{{}}}: if '*' is present, must not \
                 specify other operations",
                listed.join(", ")
            ),
        ));
    }
    for (i, operation) in rule.operations.iter().enumerate() {
        if !OPERATIONS.contains(&operation.as_str()) {
            errors.push(FieldError::not_supported(
                format!("{path}.operations[{i}]"),
                operation,
                OPERATIONS,
            ));
        }
    }
    // The groups, versions, resources and scope: kube's `Rule`, inlined.
    let rule = &rule.rule;
    if rule.api_groups.is_empty() {
        errors.push(FieldError::required(format!("{path}.apiGroups"), ""));
    }
    if rule.api_groups.len() > 1 && wildcard(&rule.api_groups) {
        errors.push(invalid_list(
            "apiGroups",
            &rule.api_groups,
            "if '*' is present, must not specify other API groups",
        ));
    }
    if rule.api_versions.is_empty() {
        errors.push(FieldError::required(format!("{path}.apiVersions"), ""));
    }
    if rule.api_versions.len() > 1 && wildcard(&rule.api_versions) {
        errors.push(invalid_list(
            "apiVersions",
            &rule.api_versions,
            "if '*' is present, must not specify other API versions",
        ));
    }
    for (i, version) in rule.api_versions.iter().enumerate() {
        if version.is_empty() {
            errors.push(FieldError::required(format!("{path}.apiVersions[{i}]"), ""));
        }
    }
    errors.extend(resources_errors(
        &rule.resources,
        &format!("{path}.resources"),
    ));
    if let Some(scope) = rule.scope.as_deref()
        && !SCOPES.contains(&scope)
    {
        errors.push(FieldError::not_supported(
            format!("{path}.scope"),
            scope,
            SCOPES,
        ));
    }
    errors
}

/// `validateResources`: resources and subresources, with their wildcards.
fn resources_errors(resources: &[String], path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if resources.is_empty() {
        errors.push(FieldError::required(path, ""));
    }
    let mut wildcard_subresources: Vec<&str> = Vec::new();
    let mut wildcard_resources: Vec<&str> = Vec::new();
    let (mut double, mut single, mut without_subresource) = (false, false, false);
    for (i, resource) in resources.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if resource.is_empty() {
            errors.push(FieldError::required(at, ""));
            continue;
        }
        double |= resource == "*/*";
        single |= resource == "*";
        let Some((name, sub)) = resource.split_once('/') else {
            without_subresource = resource != "*";
            continue;
        };
        if wildcard_subresources.contains(&name) {
            let detail = format!("if '{name}/*' is present, must not specify {resource}");
            errors.push(FieldError::invalid(&at, resource.as_str(), detail));
        }
        if wildcard_resources.contains(&sub) {
            let detail = format!("if '*/{sub}' is present, must not specify {resource}");
            errors.push(FieldError::invalid(&at, resource.as_str(), detail));
        }
        if sub == "*" {
            wildcard_subresources.push(name);
        }
        if name == "*" {
            wildcard_resources.push(sub);
        }
    }
    let listed: Vec<&str> = resources.iter().map(String::as_str).collect();
    let invalid = |detail: &str| {
        FieldError::new(
            FieldErrorType::Invalid,
            path,
            None,
            format!("{}: {detail}", go_strings(&listed)),
        )
    };
    if resources.len() > 1 && double {
        errors.push(invalid(
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single && without_subresource {
        errors.push(invalid(
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errors
}

/// `validateAdmissionReviewVersions`.
fn review_versions(versions: &[String], path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if versions.is_empty() {
        errors.push(FieldError::required(
            path,
            format!("must specify one of {}", REVIEW_VERSIONS.join(", ")),
        ));
        return errors;
    }
    let mut known = false;
    for (i, version) in versions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if versions[..i].contains(version) {
            errors.push(FieldError::invalid(
                at,
                version.as_str(),
                "duplicate version",
            ));
            continue;
        }
        for detail in names::dns1035_label(version) {
            errors.push(FieldError::invalid(&at, version.as_str(), detail));
        }
        known |= REVIEW_VERSIONS.contains(&version.as_str());
    }
    if !known {
        let listed: Vec<&str> = versions.iter().map(String::as_str).collect();
        errors.push(FieldError::new(
            FieldErrorType::Invalid,
            path,
            None,
            format!(
                "{}: must include at least one of {}",
                go_strings(&listed),
                REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
    errors
}

/// Exactly one of an HTTPS URL (apiserver's `ValidateWebhookURL`) or a service
/// (`ValidateWebhookService`).
pub(crate) fn client_config_errors(config: &WebhookClientConfig, path: &str) -> Vec<FieldError> {
    match (&config.url, &config.service) {
        (Some(_), Some(_)) | (None, None) => vec![FieldError::required(
            path,
            "exactly one of url or service is required",
        )],
        (Some(url), None) => url_errors(url, &format!("{path}.url")),
        // kube passes the name as the namespace and the namespace as the name (the
        // order of `ValidateWebhookService`'s parameters is the other way round), so its
        // errors name the other field; kube's answers are the specification.
        (None, Some(service)) => service_errors(
            &service.name,
            &service.namespace,
            service.path.as_deref(),
            service.port.unwrap_or(443),
            &format!("{path}.service"),
        ),
    }
}

/// apiserver's `ValidateWebhookService`.
pub(crate) fn service_errors(
    namespace: &str,
    name: &str,
    url_path: Option<&str>,
    port: i32,
    path: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if name.is_empty() {
        errors.push(FieldError::required(
            format!("{path}.name"),
            "service name is required",
        ));
    }
    if namespace.is_empty() {
        errors.push(FieldError::required(
            format!("{path}.namespace"),
            "service namespace is required",
        ));
    }
    if !(1..=65535).contains(&port) {
        errors.push(FieldError::invalid(
            format!("{path}.port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = url_path.filter(|p| !p.is_empty() && *p != "/") else {
        return errors;
    };
    let at = format!("{path}.path");
    if url_path == "//" {
        errors.push(FieldError::invalid(
            &at,
            url_path,
            "segment[0] may not be empty",
        ));
        return errors;
    }
    if !url_path.starts_with('/') {
        errors.push(FieldError::invalid(&at, url_path, "must start with a '/'"));
    }
    let trimmed = url_path.get(1..).unwrap_or_default();
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    for (i, step) in trimmed.split('/').enumerate() {
        if step.is_empty() {
            let detail = format!("segment[{i}] may not be empty");
            errors.push(FieldError::invalid(&at, url_path, detail));
            continue;
        }
        for failure in names::dns1123_subdomain(step) {
            let detail = format!("segment[{i}]: {failure}");
            errors.push(FieldError::invalid(&at, url_path, detail));
        }
    }
    errors
}
