//! PriorityClasses (kube's `ValidatePriorityClass` and its update): the `system-` names
//! are kube's own, user priorities stay below a billion, and the value does not change.

use kapi::error::FieldError;
use kapi::validation::Path;

use super::{forbidden, one_of};
use crate::api::scheduling::v1::PriorityClass;

/// kube's `HighestUserDefinablePriority`.
const HIGHEST_USER_PRIORITY: i32 = 1_000_000_000;

/// kube's system priority classes and their values.
const SYSTEM: [(&str, i32); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// kube's `ValidatePriorityClass`.
pub(crate) fn priority_class(class: &PriorityClass) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = class.metadata.name.clone().unwrap_or_default();
    if name.starts_with("system-") {
        let known = match SYSTEM.iter().find(|(known, _)| *known == name) {
            None => Err(format!("{name} is not a known system priority class")),
            Some((_, value)) if *value != class.value => {
                Err(format!("value of {name} PriorityClass must be {value}"))
            }
            Some(_) if class.global_default => Err(format!(
                "globalDefault of {name} PriorityClass must be false"
            )),
            Some(_) => Ok(()),
        };
        if let Err(error) = known {
            let message = format!(
                "priority class names with 'system-' prefix are reserved for system use only. error: {error}"
            );
            errors.push(forbidden(&Path::new("metadata").child("name"), message));
        }
    } else if class.value > HIGHEST_USER_PRIORITY {
        let message =
            format!("maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}");
        errors.push(forbidden(&Path::new("value"), message));
    }
    if let Some(policy) = &class.preemption_policy {
        errors.extend(one_of(
            policy,
            &["PreemptLowerPriority", "Never"],
            &Path::new("preemptionPolicy"),
        ));
    }
    errors
}

/// kube's `ValidatePriorityClassUpdate`: the value and the preemption policy stay.
pub(crate) fn priority_class_update(new: &PriorityClass, old: &PriorityClass) -> Vec<FieldError> {
    let mut errors = priority_class(new);
    if new.value != old.value {
        errors.push(forbidden(
            &Path::new("value"),
            "may not be changed in an update.",
        ));
    }
    errors.extend(super::immutable(
        &new.preemption_policy,
        &old.preemption_policy,
        &Path::new("preemptionPolicy"),
    ));
    errors
}

/// kube's `ValidateRuntimeClass`: the handler is a DNS label.
pub(crate) fn runtime_class(class: &crate::api::node::v1::RuntimeClass) -> Vec<FieldError> {
    let handler = Path::new("handler");
    match class.handler.is_empty() {
        true => vec![super::required(&handler, "")],
        false => super::invalid_each(
            kapi::validation::dns1123_label(&class.handler),
            &class.handler,
            &handler,
        ),
    }
}

/// kube's `ValidateRuntimeClassUpdate`: the handler stays.
pub(crate) fn runtime_class_update(
    new: &crate::api::node::v1::RuntimeClass,
    old: &crate::api::node::v1::RuntimeClass,
) -> Vec<FieldError> {
    let mut errors = runtime_class(new);
    errors.extend(super::immutable(
        &new.handler,
        &old.handler,
        &Path::new("handler"),
    ));
    errors
}
