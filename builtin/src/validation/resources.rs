//! kube's resource names and what may be asked of them (`validateResourceName`,
//! `validateContainerResourceName`, `IsStandardResourceName`, `IsNativeResource`,
//! `IsOvercommitAllowed`): shared by containers, limit ranges and quotas.

use kapi::error::FieldError;
use kapi::meta::Quantity;
use kapi::quantity::Quantity as Amount;
use kapi::validation::{self as v, Path};

use super::invalid_each;

/// kube's `IsNativeResource`: no domain, or kube's own.
pub(crate) fn native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// What may be asked for more than is limited: native resources but huge pages.
pub(crate) fn overcommit_allowed(name: &str) -> bool {
    native(name) && !name.starts_with("hugepages-")
}

/// kube's `validateResourceName`: a qualified name, standard unless it has a domain.
pub(crate) fn name(name: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = invalid_each(v::qualified_name(name), name, path);
    if errors.is_empty() && !name.contains('/') && !standard(name) {
        errors.push(FieldError::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified",
        ));
    }
    errors
}

/// kube's `validateContainerResourceName`: [`name`], and one a container may ask for.
pub(crate) fn container_name(name: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = self::name(name, path);
    if !v::qualified_name(name).is_empty() {
        return errors;
    }
    if !name.contains('/') {
        if !standard_container(name) {
            errors.push(FieldError::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !native(name) && !v::qualified_name(&format!("requests.{name}")).is_empty() {
        errors.push(FieldError::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errors
}

/// The resources a container may name without a domain.
fn standard_container(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with("hugepages-")
}

/// kube's `IsStandardResourceName`: the names quotas and containers know.
fn standard(name: &str) -> bool {
    const STANDARD: [&str; 21] = [
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "persistentvolumeclaims",
        "configmaps",
        "services.nodeports",
        "services.loadbalancers",
        "requests.storage",
        "storage",
        "count/pods",
    ];
    STANDARD.contains(&name)
        || name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
}

/// kube's `ValidateResourceQuantityValue`: not negative; whole for extended resources.
pub(crate) fn quantity(
    name: &str,
    quantity: &Quantity,
    path: &Path,
) -> (Vec<FieldError>, Option<Amount>) {
    let Ok(amount) = Amount::parse(&quantity.0) else {
        return (
            vec![FieldError::invalid(
                path,
                quantity.0.as_str(),
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            )],
            None,
        );
    };
    let mut errors = Vec::new();
    if amount.sign() < 0 {
        errors.push(FieldError::invalid(path, amount.to_string(), v::NEGATIVE));
    }
    if !native(name) && amount.milli_value() % 1000 != 0 {
        errors.push(FieldError::invalid(
            path,
            amount.to_string(),
            "must be an integer",
        ));
    }
    (errors, Some(amount))
}
