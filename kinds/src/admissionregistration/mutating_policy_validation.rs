//! kube 1.34's validation of MutatingAdmissionPolicies and their bindings
//! (`ValidateMutatingAdmissionPolicy`, `ValidateMutatingAdmissionPolicyUpdate`,
//! `ValidateMutatingAdmissionPolicyBinding`): what a ValidatingAdmissionPolicy's checks
//! say of the failure policy, param kind, match constraints, match conditions, variables
//! and a binding's policy name, param reference and match resources (`policy_validation`,
//! over `v1beta1`'s types converted to `v1`'s), then what mutating adds: rules that match
//! no DELETE, at least one mutation, each with its patch type and the one expression that
//! type takes, and a reinvocation policy. Field paths and messages are kube's.

use kapi_cel::admission::Declarations;
use kapi_core::error::FieldError;

use super::expressions::{Compilers, Patch, match_conditions, mutation_expression};
use super::policy_validation::{
    failure_policy, match_resources, param_kind, param_ref, policy_name, variables,
};
use super::{MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, Mutation, v1beta1};
use crate::api::admissionregistration::v1;

const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];
const PATCH_TYPES: &[&str] = &["ApplyConfiguration", "JSONPatch"];
/// The operations a mutating policy's rules may match (`supportedMutatingOperations`):
/// kube mutates no DELETE.
const MUTATING_OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "UPDATE"];

/// A policy's errors; `old`: the stored policy of an update.
pub(crate) fn policy(
    policy: &MutatingAdmissionPolicy,
    old: Option<&MutatingAdmissionPolicy>,
) -> Vec<FieldError> {
    let spec = &policy.spec;
    let mut errors = Vec::new();
    errors.extend(failure_policy(spec.failure_policy.as_deref()));
    let params = spec.param_kind.is_some();
    if let Some(kind) = &spec.param_kind {
        errors.extend(param_kind(&kind.into(), "spec.paramKind"));
    }
    match &spec.match_constraints {
        None => errors.push(FieldError::required("spec.matchConstraints", "")),
        Some(constraints) => {
            errors.extend(match_resources(
                &constraints.into(),
                "spec.matchConstraints",
            ));
            if constraints.resource_rules.is_empty() {
                errors.push(FieldError::required(
                    "spec.matchConstraints.resourceRules",
                    "",
                ));
            }
            errors.extend(mutating_operations(
                constraints,
                "spec.matchConstraints.resourceRules.operations",
            ));
        }
    }
    // kube skips the conditions of an update that changes neither them nor the param kind.
    let unchanged = old.is_some_and(|old| {
        old.spec.param_kind == spec.param_kind && old.spec.match_conditions == spec.match_conditions
    });
    if !unchanged {
        let conditions: Vec<v1::MatchCondition> =
            spec.match_conditions.iter().map(Into::into).collect();
        let preexisting: Vec<&str> = old.map_or_else(Vec::new, |old| {
            (old.spec.match_conditions.iter())
                .map(|c| c.expression.as_str())
                .collect()
        });
        errors.extend(match_conditions(
            &conditions,
            "spec.matchConditions",
            params,
            &preexisting,
        ));
    }
    // One compiler for the variables and the mutations that read them (kube's composited
    // compiler); kube looks a variable up among stored validations, which a mutating
    // policy has none of, so each compiles as a new expression.
    // The mutations build kube's patch types (`Object`, `JSONPatch`).
    let mut compilers = Compilers::new(Declarations {
        params,
        authorizer: true,
        patch_types: true,
    });
    let declared: Vec<v1::Variable> = spec.variables.iter().map(Into::into).collect();
    errors.extend(variables(&declared, &mut compilers, None, &[]));
    if spec.mutations.is_empty() {
        errors.push(FieldError::required(
            "spec.mutations",
            "mutations must contain at least one item",
        ));
    }
    // kube looks both kinds of expression up among the stored apply configurations'.
    let stored: Vec<&str> = old.map_or_else(Vec::new, |old| {
        (old.spec.mutations.iter())
            .filter_map(|m| m.apply_configuration.as_ref())
            .map(|a| a.expression.as_str())
            .collect()
    });
    for (i, mutation) in spec.mutations.iter().enumerate() {
        errors.extend(mutation_errors(
            mutation,
            &compilers,
            &stored,
            &format!("spec.mutations[{i}]"),
        ));
    }
    match spec.reinvocation_policy.as_str() {
        "" => errors.push(FieldError::required("spec.reinvocationPolicy", "")),
        p if !REINVOCATION_POLICIES.contains(&p) => errors.push(FieldError::not_supported(
            "spec.reinvocationPolicy",
            p,
            REINVOCATION_POLICIES,
        )),
        _ => {}
    }
    errors
}

/// `validateMutation`: a patch type, and the expression of that type alone.
fn mutation_errors(
    mutation: &Mutation,
    compilers: &Compilers,
    stored: &[&str],
    path: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let (patch, given, other, other_value) = match mutation.patch_type.as_str() {
        "" => return vec![FieldError::required(format!("{path}.patchType"), "")],
        "ApplyConfiguration" => (
            Patch::ApplyConfiguration,
            (mutation.apply_configuration.as_ref()).map(|a| ("applyConfiguration", &a.expression)),
            mutation.json_patch.is_some().then_some("jsonPatch"),
            "{jsonPatch}",
        ),
        "JSONPatch" => (
            Patch::JsonPatch,
            (mutation.json_patch.as_ref()).map(|j| ("jsonPatch", &j.expression)),
            mutation
                .apply_configuration
                .is_some()
                .then_some("applyConfiguration"),
            "{applyConfiguration}",
        ),
        other => {
            return vec![FieldError::not_supported(
                format!("{path}.patchType"),
                other,
                PATCH_TYPES,
            )];
        }
    };
    let patch_type = mutation.patch_type.as_str();
    match given {
        None => {
            let field = match patch {
                Patch::ApplyConfiguration => "applyConfiguration",
                Patch::JsonPatch => "jsonPatch",
            };
            errors.push(FieldError::required(
                format!("{path}.{field}"),
                format!("must be specified when patchType is {patch_type}"),
            ));
        }
        Some((field, expression)) => {
            let stored = stored.contains(&expression.as_str());
            let at = format!("{path}.{field}.expression");
            errors.extend(mutation_expression(
                compilers, patch, expression, stored, &at,
            ));
        }
    }
    if let Some(other) = other {
        errors.push(FieldError::invalid(
            format!("{path}.{other}"),
            other_value,
            format!("must not be specified when patchType is {patch_type}"),
        ));
    }
    errors
}

/// kube's check that a mutating policy's (or binding's) rules match only operations it
/// may mutate: each other operation is unsupported, at the rules' `operations` without an
/// index, as kube reports it.
fn mutating_operations(resources: &v1beta1::MatchResources, path: &str) -> Vec<FieldError> {
    (resources.resource_rules.iter())
        .flat_map(|rule| &rule.rule_with_operations.operations)
        .filter(|operation| !MUTATING_OPERATIONS.contains(&operation.as_str()))
        .map(|operation| FieldError::not_supported(path, operation, MUTATING_OPERATIONS))
        .collect()
}

/// A binding's errors.
pub(crate) fn binding(binding: &MutatingAdmissionPolicyBinding) -> Vec<FieldError> {
    let spec = &binding.spec;
    let mut errors = policy_name(&spec.policy_name);
    if let Some(reference) = &spec.param_ref {
        errors.extend(param_ref(&reference.into(), "spec.paramRef"));
    }
    if let Some(resources) = &spec.match_resources {
        errors.extend(match_resources(&resources.into(), "spec.matchResources"));
        errors.extend(mutating_operations(
            resources,
            "spec.matchResources.resourceRules.operations",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use kapi_core::Strategy;

    fn policy_from(spec: serde_json::Value) -> MutatingAdmissionPolicy {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).expect("a policy")
    }

    fn binding_from(spec: serde_json::Value) -> MutatingAdmissionPolicyBinding {
        serde_json::from_value(json!({"metadata": {"name": "b"}, "spec": spec})).expect("a binding")
    }

    fn messages(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// A valid policy's spec, before defaults.
    fn valid() -> serde_json::Value {
        json!({
            "matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"],
            }]},
            "variables": [{"name": "team", "expression": "object.metadata.labels['team']"}],
            "mutations": [{
                "patchType": "ApplyConfiguration",
                "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"},
            }],
            "reinvocationPolicy": "Never",
        })
    }

    #[test]
    fn defaults_are_kubes() {
        let mut policy = policy_from(valid());
        policy.prepare_for_create();
        let spec = serde_json::to_value(&policy.spec).expect("encodes");
        assert_eq!(spec["failurePolicy"], "Fail");
        let constraints = &spec["matchConstraints"];
        assert_eq!(constraints["matchPolicy"], "Equivalent");
        assert_eq!(constraints["namespaceSelector"], json!({}));
        assert_eq!(constraints["objectSelector"], json!({}));
        assert_eq!(constraints["resourceRules"][0]["scope"], "*");
        // kube defaults no reinvocation policy: it is required.
        let mut without = policy_from(json!({"mutations": []}));
        without.prepare_for_create();
        assert_eq!(without.spec.reinvocation_policy, "");
        assert_eq!(without.spec.failure_policy.as_deref(), Some("Fail"));

        let mut binding = binding_from(json!({
            "policyName": "p",
            "matchResources": {"excludeResourceRules": [{
                "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                "resources": ["deployments"],
            }]},
        }));
        binding.prepare_for_create();
        let resources = binding.spec.match_resources.as_ref().expect("kept");
        assert_eq!(resources.match_policy.as_deref(), Some("Equivalent"));
        assert!(resources.namespace_selector.is_some() && resources.object_selector.is_some());
        let rule = &resources.exclude_resource_rules[0]
            .rule_with_operations
            .rule;
        assert_eq!(rule.scope.as_deref(), Some("*"));
    }

    #[test]
    fn a_defaulted_policy_is_valid() {
        let mut policy = policy_from(valid());
        policy.prepare_for_create();
        assert_eq!(messages(policy.validate()), Vec::<String>::new());
        assert_eq!(
            messages(policy.validate_update(&policy)),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_empty_policy_misses_what_kube_requires() {
        let policy = policy_from(json!({}));
        assert_eq!(
            messages(policy.validate()),
            [
                "spec.failurePolicy: Required value",
                "spec.matchConstraints: Required value",
                "spec.mutations: Required value: mutations must contain at least one item",
                "spec.reinvocationPolicy: Required value",
            ]
        );
    }

    #[test]
    fn policies_are_judged_as_kube_judges_them() {
        let mut spec = valid();
        spec["failurePolicy"] = json!("Sometimes");
        spec["reinvocationPolicy"] = json!("Always");
        spec["paramKind"] = json!({"apiVersion": "a/b/c", "kind": "Config"});
        spec["matchConstraints"] = json!({
            "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
            "resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "DELETE"],
                "resources": ["configmaps"], "scope": "*",
            }],
        });
        spec["variables"] = json!([{"name": "1st", "expression": " "}]);
        spec["matchConditions"] = json!([{"name": "", "expression": "true"}]);
        spec["mutations"] = json!([
            {"patchType": ""},
            {"patchType": "Merge"},
            {"patchType": "ApplyConfiguration", "jsonPatch": {"expression": "[]"}},
            {"patchType": "JSONPatch", "jsonPatch": {"expression": "  "},
             "applyConfiguration": {"expression": "Object{}"}},
        ]);
        assert_eq!(
            messages(policy_from(spec).validate()),
            [
                r#"spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore""#,
                r#"spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
                r#"spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE""#,
                "spec.matchConditions[0].name: Required value",
                r#"spec.variables[0].name: Invalid value: "1st": name is not a valid CEL identifier"#,
                "spec.variables[0].expression: Required value: expression is not specified",
                "spec.mutations[0].patchType: Required value",
                r#"spec.mutations[1].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch""#,
                "spec.mutations[2].applyConfiguration: Required value: must be specified when patchType is ApplyConfiguration",
                r#"spec.mutations[2].jsonPatch: Invalid value: "{jsonPatch}": must not be specified when patchType is ApplyConfiguration"#,
                "spec.mutations[3].jsonPatch.expression: Required value",
                r#"spec.mutations[3].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch"#,
                r#"spec.reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never""#,
            ]
        );
    }

    #[test]
    fn variables_and_match_conditions_compile_when_written() {
        let mut spec = valid();
        spec["failurePolicy"] = json!("Fail");
        spec["matchConstraints"] = json!({
            "matchPolicy": "Exact", "namespaceSelector": {}, "objectSelector": {},
            "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["*"], "resources": ["configmaps"], "scope": "*"}],
        });
        spec["variables"] = json!([
            {"name": "size", "expression": "size(object.data)"},
            {"name": "big", "expression": "variables.size > 'many'"},
            {"name": "p", "expression": "params.x"},
        ]);
        spec["matchConditions"] = json!([{"name": "is-big", "expression": "params.big"}]);
        let errors = messages(policy_from(spec).validate());
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert!(
            errors[0].starts_with("spec.matchConditions[0].expression: Invalid value: \"params.big\": compilation failed: "),
            "{errors:#?}"
        );
        assert!(
            errors[1].starts_with("spec.variables[1].expression: Invalid value: \"variables.size > 'many'\": compilation failed: "),
            "{errors:#?}"
        );
        assert!(
            errors[2].starts_with(
                "spec.variables[2].expression: Invalid value: \"params.x\": compilation failed: "
            ),
            "{errors:#?}"
        );
    }

    #[test]
    fn an_update_keeps_its_unchanged_match_conditions() {
        let mut spec = valid();
        spec["matchConditions"] = json!([{"name": "bad", "expression": "1 + "}]);
        let mut old = policy_from(spec);
        old.prepare_for_create();
        let mut new = old.clone();
        new.spec.reinvocation_policy = "IfNeeded".to_owned();
        assert_eq!(messages(new.validate_update(&old)), Vec::<String>::new());
        assert_eq!(new.validate().len(), 1);
    }

    #[test]
    fn bindings_are_judged_as_kube_judges_them() {
        assert_eq!(
            messages(binding_from(json!({})).validate()),
            ["spec.policyName: Required value"]
        );
        let binding = binding_from(json!({
            "policyName": "Not_A_Name",
            "paramRef": {"name": "x", "selector": {}},
            "matchResources": {
                "matchPolicy": "Sometimes", "namespaceSelector": {}, "objectSelector": {},
                "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["DELETE"], "resources": ["pods"], "scope": "*"}],
            },
        }));
        let errors = messages(binding.validate());
        assert_eq!(
            errors[1..],
            [
                "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.parameterNotFoundAction: Required value",
                r#"spec.matchResources.matchPolicy: Unsupported value: "Sometimes": supported values: "Equivalent", "Exact""#,
                r#"spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE""#,
            ]
        );
        assert!(
            errors[0].starts_with(r#"spec.policyName: Invalid value: "Not_A_Name": "#),
            "{errors:#?}"
        );
    }

    #[test]
    fn the_mutations_cell_counts_them() {
        assert_eq!(
            super::super::mutating_policies::mutations_cell(
                &json!({"spec": {"mutations": [{}, {}]}})
            ),
            json!(2)
        );
        assert_eq!(
            super::super::mutating_policies::mutations_cell(&json!({"spec": {}})),
            json!(0)
        );
    }
}
