//! kube's `pkg/apis/rbac/validation`: rules, aggregation rules, role references and
//! subjects, with kube's field paths and messages. Names are path segments (the kinds
//! declare `names = "path_segment"`), as kube's `ValidateRBACName`.

use serde_json::{Value, json};

use super::{GROUP, PolicyRule, RoleRef, Subject};
use kapi_core::error::FieldError as E;
use kapi_core::error::FieldError;
use kapi_core::validation::{self as names, label_selector};

/// `ValidatePolicyRule` for each rule of a Role (`namespaced`) or ClusterRole.
pub(super) fn rules(rules: &[PolicyRule], namespaced: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let path = |child: &str| format!("rules[{i}].{child}");
        if rule.verbs.is_empty() {
            errors.push(E::required(
                path("verbs"),
                "verbs must contain at least one value",
            ));
        }
        if !rule.non_resource_urls.is_empty() {
            let urls = json!(rule.non_resource_urls);
            if namespaced {
                errors.push(E::invalid(
                    path("nonResourceURLs"),
                    urls.clone(),
                    "namespaced rules cannot apply to non-resource URLs",
                ));
            }
            if !rule.api_groups.is_empty()
                || !rule.resources.is_empty()
                || !rule.resource_names.is_empty()
            {
                errors.push(E::invalid(
                    path("nonResourceURLs"),
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
            continue;
        }
        if rule.api_groups.is_empty() {
            errors.push(E::required(
                path("apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
        if rule.resources.is_empty() {
            errors.push(E::required(
                path("resources"),
                "resource rules must supply at least one resource",
            ));
        }
    }
    errors
}

/// A ClusterRole's `aggregationRule`: at least one selector, each a valid label selector.
pub(super) fn aggregation_rule(rule: Option<&super::AggregationRule>) -> Vec<FieldError> {
    let Some(rule) = rule else {
        return Vec::new();
    };
    let field = "aggregationRule.clusterRoleSelectors";
    if rule.cluster_role_selectors.is_empty() {
        return vec![E::required(
            field.to_owned(),
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        )];
    }
    (rule.cluster_role_selectors.iter().enumerate())
        .flat_map(|(i, selector)| {
            let path = format!("{field}[{i}]");
            let mut errors = label_selector(selector, &path);
            // kube also fails to convert the selector, and says so about the whole of it.
            if !errors.is_empty() {
                let value = Value::String("null".to_owned());
                errors.push(E::invalid(path, value, "invalid label selector."));
            }
            errors
        })
        .collect()
}

/// `ValidateRoleBinding` (`namespaced`) and `ValidateClusterRoleBinding`, without the
/// metadata the registry checks.
pub(super) fn binding(
    role_ref: &RoleRef,
    subjects: &[Subject],
    namespaced: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if role_ref.api_group != GROUP {
        errors.push(E::not_supported(
            "roleRef.apiGroup".to_owned(),
            &role_ref.api_group,
            &[GROUP],
        ));
    }
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&role_ref.kind.as_str()) {
        errors.push(E::not_supported(
            "roleRef.kind".to_owned(),
            &role_ref.kind,
            kinds,
        ));
    }
    if role_ref.name.is_empty() {
        errors.push(E::required("roleRef.name".to_owned(), ""));
    } else {
        for message in names::path_segment_name(&role_ref.name) {
            let name = Value::String(role_ref.name.clone());
            errors.push(E::invalid("roleRef.name".to_owned(), name, message));
        }
    }
    for (i, subject) in subjects.iter().enumerate() {
        errors.extend(self::subject(
            subject,
            namespaced,
            &format!("subjects[{i}]"),
        ));
    }
    errors
}

/// `ValidateRoleBindingSubject`.
fn subject(subject: &Subject, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let at = |child: &str| format!("{path}.{child}");
    if subject.name.is_empty() {
        errors.push(E::required(at("name"), ""));
    }
    match subject.kind.as_str() {
        "ServiceAccount" => {
            if !subject.name.is_empty() {
                for message in names::name_is_dns_subdomain(&subject.name, false) {
                    let name = Value::String(subject.name.clone());
                    errors.push(E::invalid(at("name"), name, message));
                }
            }
            if !subject.api_group.is_empty() {
                errors.push(E::not_supported(at("apiGroup"), &subject.api_group, &[""]));
            }
            if !namespaced && subject.namespace.is_empty() {
                errors.push(E::required(at("namespace"), ""));
            }
        }
        "User" | "Group" => {
            if subject.api_group != GROUP {
                errors.push(E::not_supported(
                    at("apiGroup"),
                    &subject.api_group,
                    &[GROUP],
                ));
            }
        }
        other => errors.push(E::not_supported(
            at("kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errors
}

/// A binding's `roleRef` cannot change.
pub(super) fn role_ref_unchanged(new: &RoleRef, old: &RoleRef) -> Vec<FieldError> {
    if new == old {
        return Vec::new();
    }
    let value = serde_json::to_value(new).unwrap_or(Value::Null);
    vec![E::invalid(
        "roleRef".to_owned(),
        value,
        "cannot change roleRef",
    )]
}
