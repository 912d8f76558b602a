//! PodDisruptionBudgets (kube's `ValidatePodDisruptionBudgetSpec`): one bound, as a count
//! or a percentage, and a valid selector.

use kapi::error::FieldError;
use kapi::validation::{self as v, Path};

use super::{int_or_percent, json, label_selector};
use crate::api::policy::v1::PodDisruptionBudget;

/// kube's `ValidatePodDisruptionBudget`.
pub(crate) fn budget(budget: &PodDisruptionBudget) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &budget.spec;
    let mut errors = Vec::new();
    if s.min_available.is_some() && s.max_unavailable.is_some() {
        errors.push(FieldError::invalid(
            &spec,
            json(s),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (bound, name) in [
        (&s.min_available, "minAvailable"),
        (&s.max_unavailable, "maxUnavailable"),
    ] {
        if let Some(bound) = bound {
            let at = spec.child(name);
            errors.extend(v::positive_int_or_percent(int_or_percent(bound), &at));
            errors.extend(v::not_more_than_100_percent(int_or_percent(bound), &at));
        }
    }
    if let Some(selector) = &s.selector {
        errors.extend(label_selector(selector, &spec.child("selector")));
    }
    if let Some(policy) = &s.unhealthy_pod_eviction_policy {
        let policies = ["AlwaysAllow", "IfHealthyBudget"];
        errors.extend(super::one_of(
            policy,
            &policies,
            &spec.child("unhealthyPodEvictionPolicy"),
        ));
    }
    errors
}
