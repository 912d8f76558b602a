//! ValidatingAdmissionPolicies and their bindings: rules in CEL the API server itself
//! applies to the writes they match (the admission room of `kapi-apiserver` evaluates
//! them). Their strategies give kube's defaults (`failurePolicy: Fail`; in match
//! resources `matchPolicy: Equivalent`, empty selectors, rules of any scope) and kube's
//! validation (`policy_validation`); a policy's `status` (type checking, conditions) is
//! written through its subresource only. The cells are kube's printer columns.

use serde_json::{Value, json};

use kapi_core::error::FieldError;
use kapi_core::meta::LabelSelector;

use super::policy_validation;
use super::{ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding};

/// kube's `SetDefaults_MatchResources` and `SetDefaults_Rule` of its rules, of `v1`'s
/// match resources and `v1beta1`'s alike (MutatingAdmissionPolicies').
macro_rules! default_match_resources {
    ($resources:expr) => {{
        let resources = $resources;
        resources
            .match_policy
            .get_or_insert_with(|| "Equivalent".to_owned());
        resources
            .namespace_selector
            .get_or_insert_with(kapi_core::meta::LabelSelector::default);
        resources
            .object_selector
            .get_or_insert_with(kapi_core::meta::LabelSelector::default);
        for rule in
            (resources.resource_rules.iter_mut()).chain(&mut resources.exclude_resource_rules)
        {
            (rule.rule_with_operations.rule.scope).get_or_insert_with(|| "*".to_owned());
        }
    }};
}
pub(super) use default_match_resources;

impl kapi_core::Strategy for ValidatingAdmissionPolicy {
    fn prepare_for_create(&mut self) {
        self.spec
            .failure_policy
            .get_or_insert_with(|| "Fail".to_owned());
        if let Some(constraints) = &mut self.spec.match_constraints {
            default_match_resources!(constraints);
        }
    }

    fn prepare_for_update(&mut self, _old: &Self) {
        self.prepare_for_create();
    }

    fn validate(&self) -> Vec<FieldError> {
        policy_validation::policy(self, None)
    }

    fn validate_update(&self, old: &Self) -> Vec<FieldError> {
        policy_validation::policy(self, Some(old))
    }
}

impl kapi_core::Strategy for ValidatingAdmissionPolicyBinding {
    fn prepare_for_create(&mut self) {
        if let Some(resources) = &mut self.spec.match_resources {
            default_match_resources!(resources);
        }
    }

    fn prepare_for_update(&mut self, _old: &Self) {
        self.prepare_for_create();
    }

    fn validate(&self) -> Vec<FieldError> {
        policy_validation::binding(self)
    }
}

/// kube's VALIDATIONS column: how many validations the policy has.
pub(crate) fn validations_cell(policy: &Value) -> Value {
    json!(policy["spec"]["validations"].as_array().map_or(0, Vec::len))
}

/// kube's PARAMKIND column: `apiVersion/kind`, or `<unset>`.
pub(crate) fn param_kind_cell(policy: &Value) -> Value {
    let kind = &policy["spec"]["paramKind"];
    match kind.as_object() {
        Some(_) => json!(format!(
            "{}/{}",
            kind["apiVersion"].as_str().unwrap_or_default(),
            kind["kind"].as_str().unwrap_or_default()
        )),
        None => json!("<unset>"),
    }
}

/// kube's PARAMREF column: `namespace/name`, `*/name` without a namespace, the selector,
/// or `<unset>`.
pub(crate) fn param_ref_cell(binding: &Value) -> Value {
    let reference = &binding["spec"]["paramRef"];
    let text = |field: &str| reference[field].as_str().unwrap_or_default().to_owned();
    let cell = match (text("name"), text("namespace")) {
        _ if !reference.is_object() => "<unset>".to_owned(),
        (name, namespace) if !name.is_empty() && !namespace.is_empty() => {
            format!("{namespace}/{name}")
        }
        (name, _) if !name.is_empty() => format!("*/{name}"),
        _ => match serde_json::from_value::<LabelSelector>(reference["selector"].clone()) {
            Ok(selector) if reference["selector"].is_object() => {
                selector.text().unwrap_or_else(|| "<error>".to_owned())
            }
            _ => "<unset>".to_owned(),
        },
    };
    json!(cell)
}
