//! MutatingAdmissionPolicies and their bindings (`admissionregistration.k8s.io/v1beta1`,
//! kube 1.34): changes in CEL the API server itself makes to the writes they match, as
//! apply configurations or JSON patches. Their strategies give kube's defaults
//! (`SetDefaults_MutatingAdmissionPolicySpec`: `failurePolicy: Fail`; in match resources,
//! as a ValidatingAdmissionPolicy's, `matchPolicy: Equivalent`, empty selectors, rules of
//! any scope; no `reinvocationPolicy`, which is required) and kube's validation
//! (`mutating_policy_validation`); a policy has no status in `v1beta1`. The cell is kube's
//! MUTATIONS printer column (PARAMKIND and a binding's PARAMREF are the
//! ValidatingAdmissionPolicies' cells).
//!
//! kube validates, and its admission plugin matches, the internal types both versions of
//! the group convert to; `v1beta1`'s match resources, param kinds and references, match
//! conditions and variables are `v1`'s field for field, and convert to them here
//! (`From`), so the same checks read both.

use serde_json::{Value, json};

use kapi_core::error::FieldError;

use super::mutating_policy_validation;
use super::policies::default_match_resources;
use super::{MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, v1beta1};
use crate::api::admissionregistration::v1;

impl kapi_core::Strategy for MutatingAdmissionPolicy {
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
        mutating_policy_validation::policy(self, None)
    }

    fn validate_update(&self, old: &Self) -> Vec<FieldError> {
        mutating_policy_validation::policy(self, Some(old))
    }
}

impl kapi_core::Strategy for MutatingAdmissionPolicyBinding {
    fn prepare_for_create(&mut self) {
        if let Some(resources) = &mut self.spec.match_resources {
            default_match_resources!(resources);
        }
    }

    fn prepare_for_update(&mut self, _old: &Self) {
        self.prepare_for_create();
    }

    fn validate(&self) -> Vec<FieldError> {
        mutating_policy_validation::binding(self)
    }
}

/// kube's MUTATIONS column: how many mutations the policy has.
pub(crate) fn mutations_cell(policy: &Value) -> Value {
    json!(policy["spec"]["mutations"].as_array().map_or(0, Vec::len))
}

impl From<&v1beta1::ParamKind> for v1::ParamKind {
    fn from(kind: &v1beta1::ParamKind) -> v1::ParamKind {
        let v1beta1::ParamKind { api_version, kind } = kind;
        v1::ParamKind {
            api_version: api_version.clone(),
            kind: kind.clone(),
        }
    }
}

impl From<&v1beta1::ParamRef> for v1::ParamRef {
    fn from(reference: &v1beta1::ParamRef) -> v1::ParamRef {
        let v1beta1::ParamRef {
            name,
            namespace,
            selector,
            parameter_not_found_action,
        } = reference;
        v1::ParamRef {
            name: name.clone(),
            namespace: namespace.clone(),
            selector: selector.clone(),
            parameter_not_found_action: parameter_not_found_action.clone(),
        }
    }
}

impl From<&v1beta1::NamedRuleWithOperations> for v1::NamedRuleWithOperations {
    fn from(rule: &v1beta1::NamedRuleWithOperations) -> v1::NamedRuleWithOperations {
        let v1beta1::NamedRuleWithOperations {
            resource_names,
            rule_with_operations,
        } = rule;
        v1::NamedRuleWithOperations {
            resource_names: resource_names.clone(),
            rule_with_operations: rule_with_operations.clone(),
        }
    }
}

impl From<&v1beta1::MatchResources> for v1::MatchResources {
    fn from(resources: &v1beta1::MatchResources) -> v1::MatchResources {
        let v1beta1::MatchResources {
            namespace_selector,
            object_selector,
            resource_rules,
            exclude_resource_rules,
            match_policy,
        } = resources;
        v1::MatchResources {
            namespace_selector: namespace_selector.clone(),
            object_selector: object_selector.clone(),
            resource_rules: resource_rules.iter().map(Into::into).collect(),
            exclude_resource_rules: exclude_resource_rules.iter().map(Into::into).collect(),
            match_policy: match_policy.clone(),
        }
    }
}

impl From<&v1beta1::MatchCondition> for v1::MatchCondition {
    fn from(condition: &v1beta1::MatchCondition) -> v1::MatchCondition {
        let v1beta1::MatchCondition { name, expression } = condition;
        v1::MatchCondition {
            name: name.clone(),
            expression: expression.clone(),
        }
    }
}

impl From<&v1beta1::Variable> for v1::Variable {
    fn from(variable: &v1beta1::Variable) -> v1::Variable {
        let v1beta1::Variable { name, expression } = variable;
        v1::Variable {
            name: name.clone(),
            expression: expression.clone(),
        }
    }
}
