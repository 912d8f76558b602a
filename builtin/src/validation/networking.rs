//! Ingresses (kube's `ValidateIngressSpec`): rules or a default backend, host names, paths
//! and their types, and backends that name a port; IngressClasses and NetworkPolicies.

use kapi::error::FieldError;
use kapi::validation::{self as v, Path};

use super::{invalid_each, required};
use crate::api::networking::v1::{IPBlock, Ingress, IngressBackend, IngressClass, NetworkPolicy};
use kapi::net::cidr::Cidr;

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

/// kube's `ValidateNetworkPolicySpec`: selectors, ports, peers and their IP blocks, and
/// the policy types.
pub(crate) fn network_policy(policy: &NetworkPolicy) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &policy.spec;
    let mut errors = super::label_selector(&s.pod_selector, &spec.child("podSelector"));
    let rules = (s
        .ingress
        .iter()
        .map(|r| (&r.ports, &r.from, "ingress", "from")))
    .enumerate()
    .chain(
        s.egress
            .iter()
            .map(|r| (&r.ports, &r.to, "egress", "to"))
            .enumerate(),
    );
    for (i, (ports, peers, kind, side)) in rules {
        let at = spec.child(kind).index(i);
        for (j, port) in ports.iter().enumerate() {
            let path = at.child("ports").index(j);
            if let Some(protocol) = &port.protocol {
                errors.extend(super::one_of(
                    protocol,
                    &["TCP", "UDP", "SCTP"],
                    &path.child("protocol"),
                ));
            }
            if let Some(number) = &port.port {
                errors.extend(super::pod::port_or_name(number, &path.child("port")));
            }
        }
        for (j, peer) in peers.iter().enumerate() {
            let path = at.child(side).index(j);
            let given = [
                peer.pod_selector.is_some(),
                peer.namespace_selector.is_some(),
                peer.ip_block.is_some(),
            ];
            if !given.iter().any(|g| *g) {
                errors.push(required(&path, "must specify a peer"));
            }
            if let Some(selector) = &peer.pod_selector {
                errors.extend(super::label_selector(selector, &path.child("podSelector")));
            }
            if let Some(selector) = &peer.namespace_selector {
                errors.extend(super::label_selector(
                    selector,
                    &path.child("namespaceSelector"),
                ));
            }
            if let Some(block) = &peer.ip_block {
                errors.extend(ip_block(block, &path.child("ipBlock")));
            }
        }
    }
    for (i, kind) in s.policy_types.iter().enumerate() {
        errors.extend(super::one_of(
            kind,
            &["Ingress", "Egress"],
            &spec.child("policyTypes").index(i),
        ));
    }
    errors
}

/// kube's `ValidateIPBlock`: a CIDR, and exceptions strictly inside it.
fn ip_block(block: &IPBlock, path: &Path) -> Vec<FieldError> {
    let cidr_path = path.child("cidr");
    if block.cidr.is_empty() {
        return vec![required(&cidr_path, "")];
    }
    let Ok(cidr) = Cidr::parse(&block.cidr) else {
        return vec![FieldError::invalid(
            &cidr_path,
            block.cidr.as_str(),
            "not a valid CIDR",
        )];
    };
    let mut errors = Vec::new();
    for (i, except) in block.except.iter().enumerate() {
        let at = path.child("except").index(i);
        match Cidr::parse(except) {
            Err(_) => errors.push(FieldError::invalid(
                &at,
                except.as_str(),
                "not a valid CIDR",
            )),
            Ok(inner)
                if !(cidr.contains_cidr(&inner) && inner.prefix_len() > cidr.prefix_len()) =>
            {
                errors.push(FieldError::invalid(
                    &at,
                    except.as_str(),
                    "must be a strict subset of `cidr`",
                ));
            }
            Ok(_) => {}
        }
    }
    errors
}

/// kube's `ValidateIngressClass`: a domain-prefixed controller, and parameters that name
/// something.
pub(crate) fn ingress_class(class: &IngressClass) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let mut errors = Vec::new();
    let controller = &class.spec.controller;
    let domain_prefixed = controller.split_once('/').is_some_and(|(domain, path)| {
        v::dns1123_subdomain(domain).is_empty()
            && !path.is_empty()
            && !path.contains(char::is_whitespace)
    });
    if controller.is_empty() {
        errors.push(required(&spec.child("controller"), ""));
    } else if !domain_prefixed {
        let message = "must be a domain-prefixed path (such as \"acme.io/foo\")";
        errors.push(FieldError::invalid(
            spec.child("controller"),
            controller.as_str(),
            message,
        ));
    }
    if let Some(parameters) = &class.spec.parameters {
        let at = spec.child("parameters");
        if parameters.kind.is_empty() {
            errors.push(required(&at.child("kind"), "kind is required"));
        }
        if parameters.name.is_empty() {
            errors.push(required(&at.child("name"), "name is required"));
        }
        if let Some(scope) = &parameters.scope {
            errors.extend(super::one_of(
                scope,
                &["Cluster", "Namespace"],
                &at.child("scope"),
            ));
        }
    }
    errors
}
