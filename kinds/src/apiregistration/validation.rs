//! kube's validation of APIServices (`kube-aggregator/pkg/apis/apiregistration/
//! validation`): the name is `<version>.<group>`; the group a DNS subdomain (empty only
//! for the legacy `v1`), the version a DNS-1035 label; both priorities in range; a local
//! APIService has no `caBundle` and no `insecureSkipTLSVerify`; a service has a
//! namespace, a name and a valid port; `insecureSkipTLSVerify` excludes a `caBundle`;
//! conditions are `True`, `False` or `Unknown`. kapi's `url` (instead of a service) is
//! checked as a webhook's URL is.

use super::APIService;
use crate::webhook_url::url_errors;
use kapi_core::error::FieldError;
use kapi_core::validation as names;

/// An APIService's errors, in kube's order.
pub(super) fn api_service(service: &APIService) -> Vec<FieldError> {
    let spec = &service.spec;
    let mut errors = Vec::new();
    let required_name = format!("{}.{}", spec.version, spec.group);
    // The registry has checked that the names are path segments (`names =
    // "path_segment"`); kube's name rule then asks for this exact name, and applies to
    // `generateName` too (so a generated name is always refused).
    let metadata = &service.metadata;
    let named = [
        ("metadata.generateName", metadata.generate_name.as_deref()),
        ("metadata.name", metadata.name.as_deref()),
    ];
    for (field, name) in named {
        let name = name.unwrap_or_default();
        if !name.is_empty() && names::path_segment_name(name).is_empty() && name != required_name {
            errors.push(FieldError::invalid(
                field,
                name,
                format!("must be `spec.version+\".\"+spec.group`: {required_name:?}"),
            ));
        }
    }
    if spec.group.is_empty() && spec.version != "v1" {
        errors.push(FieldError::required(
            "spec.group",
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !spec.group.is_empty() {
        for message in names::dns1123_subdomain(&spec.group) {
            errors.push(FieldError::invalid(
                "spec.group",
                spec.group.as_str(),
                message,
            ));
        }
    }
    for message in names::dns1035_label(&spec.version) {
        errors.push(FieldError::invalid(
            "spec.version",
            spec.version.as_str(),
            message,
        ));
    }
    if !(1..=20000).contains(&spec.group_priority_minimum) {
        errors.push(FieldError::invalid(
            "spec.groupPriorityMinimum",
            spec.group_priority_minimum,
            "must be positive and less than 20000",
        ));
    }
    if !(1..=1000).contains(&spec.version_priority) {
        errors.push(FieldError::invalid(
            "spec.versionPriority",
            spec.version_priority,
            "must be positive and less than 1000",
        ));
    }
    let ca_bytes = spec.ca_bundle.0.len();
    if service.is_local() {
        if ca_bytes != 0 {
            errors.push(FieldError::invalid(
                "spec.caBundle",
                format!("{ca_bytes} bytes"),
                "local APIServices may not have a caBundle",
            ));
        }
        if service.insecure() {
            errors.push(FieldError::invalid(
                "spec.insecureSkipTLSVerify",
                true,
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        errors.extend(conditions(service));
        return errors;
    }
    if let Some(reference) = &spec.service {
        if reference.namespace.is_empty() {
            errors.push(FieldError::required("spec.service.namespace", ""));
        }
        if reference.name.is_empty() {
            errors.push(FieldError::required("spec.service.name", ""));
        }
        let port = reference.port.unwrap_or(443);
        if !(1..=65535).contains(&port) {
            errors.push(FieldError::invalid(
                "spec.service.port",
                port,
                "port is not valid: must be between 1 and 65535, inclusive",
            ));
        }
    }
    match (&spec.url, &spec.service) {
        (Some(_), Some(_)) => errors.push(FieldError::forbidden(
            "spec.url",
            "may not be set together with spec.service",
        )),
        (Some(url), None) => errors.extend(url_errors(url, "spec.url")),
        _ => {}
    }
    if service.insecure() && ca_bytes > 0 {
        errors.push(FieldError::invalid(
            "spec.insecureSkipTLSVerify",
            true,
            "may not be true if caBundle is present",
        ));
    }
    errors.extend(conditions(service));
    errors
}

/// `ValidateAPIServiceStatus`: each condition's status is one kube knows.
fn conditions(service: &APIService) -> Vec<FieldError> {
    (service.status.conditions.iter())
        .enumerate()
        .filter(|(_, c)| !["True", "False", "Unknown"].contains(&c.status.as_str()))
        .map(|(i, c)| {
            FieldError::not_supported(
                format!("status.conditions[{i}].status"),
                c.status.as_str(),
                &["True", "False", "Unknown"],
            )
        })
        .collect()
}
