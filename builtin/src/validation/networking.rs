//! Ingresses (kube's `ValidateIngressSpec`): rules or a default backend, host names, paths
//! and their types, and backends that name a port.

use kapi::error::FieldError;
use kapi::validation::{self as v, Path};

use super::{invalid_each, required};
use crate::api::networking::v1::{Ingress, IngressBackend};

/// The path types, as kube lists them.
const PATH_TYPES: [&str; 3] = ["Exact", "ImplementationSpecific", "Prefix"];

/// kube's `ValidateIngressCreate` (the spec).
pub(crate) fn ingress(ingress: &Ingress) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &ingress.spec;
    let mut errors = Vec::new();
    if s.rules.is_empty() && s.default_backend.is_none() {
        let message = "either `defaultBackend` or `rules` must be specified";
        errors.push(FieldError::invalid(&spec, serde_json::Value::Null, message));
    }
    if let Some(backend) = &s.default_backend {
        errors.extend(self::backend(backend, &spec.child("defaultBackend")));
    }
    for (i, rule) in s.rules.iter().enumerate() {
        let at = spec.child("rules").index(i);
        if !rule.host.is_empty() {
            errors.extend(host(&rule.host, &at.child("host")));
        }
        let Some(http) = &rule.ingress_rule_value.http else {
            continue;
        };
        let http_path = at.child("http");
        if http.paths.is_empty() {
            errors.push(required(&http_path.child("paths"), ""));
        }
        for (j, path) in http.paths.iter().enumerate() {
            let at = http_path.child("paths").index(j);
            match path.path_type.as_deref() {
                None => errors.push(required(
                    &at.child("pathType"),
                    "pathType must be specified",
                )),
                Some("Exact" | "Prefix") if !path.path.starts_with('/') => {
                    errors.push(FieldError::invalid(
                        at.child("path"),
                        path.path.as_str(),
                        "must be an absolute path",
                    ));
                }
                Some("ImplementationSpecific")
                    if !path.path.is_empty() && !path.path.starts_with('/') =>
                {
                    errors.push(FieldError::invalid(
                        at.child("path"),
                        path.path.as_str(),
                        "must be an absolute path",
                    ));
                }
                Some(kind) if !PATH_TYPES.contains(&kind) => {
                    errors.push(FieldError::not_supported(
                        at.child("pathType"),
                        kind,
                        &PATH_TYPES,
                    ));
                }
                Some(_) => {}
            }
            errors.extend(backend(&path.backend, &at.child("backend")));
        }
    }
    for (i, tls) in s.tls.iter().enumerate() {
        for (j, name) in tls.hosts.iter().enumerate() {
            errors.extend(host(
                name,
                &spec.child("tls").index(i).child("hosts").index(j),
            ));
        }
    }
    if let Some(class) = &s.ingress_class_name {
        errors.extend(invalid_each(
            v::dns1123_subdomain(class),
            class,
            &spec.child("ingressClassName"),
        ));
    }
    errors
}

/// A host: a DNS name (a wildcard's first label may be `*`), not an IP address.
fn host(host: &str, path: &Path) -> Vec<FieldError> {
    if host.parse::<std::net::IpAddr>().is_ok() {
        return vec![FieldError::invalid(
            path,
            host,
            "must be a DNS name, not an IP address",
        )];
    }
    match host.strip_prefix("*.") {
        Some(rest) => (v::dns1123_subdomain(rest).into_iter())
            .map(|_| {
                let message = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
                FieldError::invalid(path, host, message)
            })
            .collect(),
        None => invalid_each(v::dns1123_subdomain(host), host, path),
    }
}

/// kube's `validateIngressBackend`: a service with a port, or a resource.
fn backend(backend: &IngressBackend, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    match (&backend.service, &backend.resource) {
        (Some(_), Some(_)) => {
            errors.push(FieldError::invalid(
                path,
                "",
                "cannot set both resource and service backends",
            ));
        }
        (None, None) => errors.push(required(
            path,
            "one of `service` or `resource` must be specified",
        )),
        (None, Some(_)) => {}
        (Some(service), None) => {
            let at = path.child("service");
            errors.extend(invalid_each(
                v::dns1035_label(&service.name),
                &service.name,
                &at.child("name"),
            ));
            let port = &service.port;
            let port_path = at.child("port");
            match (port.name.is_empty(), port.number) {
                (false, n) if n != 0 => {
                    errors.push(FieldError::invalid(
                        &port_path,
                        "",
                        "cannot set both port name & port number",
                    ));
                }
                (false, _) => errors.extend(invalid_each(
                    v::port_name(&port.name),
                    &port.name,
                    &port_path.child("name"),
                )),
                (true, 0) => errors.push(required(path, "port name or number is required")),
                (true, n) => errors.extend(super::pod::port_number(
                    n.into(),
                    &port_path.child("number"),
                )),
            }
        }
    }
    errors
}
