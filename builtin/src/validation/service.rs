//! Services (kube's `ValidateService` and `ValidateServiceUpdate`): ports, type, selector,
//! session affinity, addresses and traffic policies. Allocating addresses is not
//! validation's (issue 58 brings the allocators).

use std::collections::BTreeSet;

use kapi::error::FieldError;
use kapi::validation::{self as v, Path};

use super::pod::{port_number, port_or_name};
use super::{duplicate, forbidden, immutable, invalid_each, required, required_one_of};
use crate::api::core::v1::Service;

/// The Service types.
const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];

/// kube's `ValidateService`.
pub(crate) fn service(service: &Service) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &service.spec;
    let mut errors = Vec::new();
    let headless = s.cluster_ip == "None";
    let ports = spec.child("ports");
    if s.ports.is_empty() && !headless && s.r#type != "ExternalName" {
        errors.push(required(&ports, ""));
    }
    match s.r#type.as_str() {
        "LoadBalancer" if headless => {
            let message = "may not be set to 'None' for LoadBalancer services";
            errors.push(FieldError::invalid(
                spec.child("clusterIPs").index(0),
                "None",
                message,
            ));
        }
        "ExternalName" => {
            if !s.cluster_ip.is_empty() && !headless {
                errors.push(forbidden(
                    &spec.child("clusterIPs"),
                    "may not be set for ExternalName services",
                ));
            }
            let at = spec.child("externalName");
            let name = s.external_name.trim_end_matches('.');
            match s.external_name.is_empty() {
                true => errors.push(required(&at, "")),
                false => errors.extend(invalid_each(
                    v::dns1123_subdomain(name),
                    &s.external_name,
                    &at,
                )),
            }
        }
        _ => {}
    }
    let mut names = BTreeSet::new();
    let mut taken = BTreeSet::new();
    for (i, port) in s.ports.iter().enumerate() {
        let at = ports.index(i);
        let name = at.child("name");
        if s.ports.len() > 1 && port.name.is_empty() {
            errors.push(required(&name, ""));
        } else if !port.name.is_empty() {
            errors.extend(invalid_each(
                v::dns1123_label(&port.name),
                &port.name,
                &name,
            ));
            if !names.insert(port.name.as_str()) {
                errors.push(duplicate(&name, port.name.as_str()));
            }
        }
        errors.extend(port_number(port.port.into(), &at.child("port")));
        errors.extend(required_one_of(
            &port.protocol,
            &["SCTP", "TCP", "UDP"],
            &at.child("protocol"),
        ));
        errors.extend(port_or_name(&port.target_port, &at.child("targetPort")));
        if s.r#type == "ClusterIP" && port.node_port != 0 {
            errors.push(forbidden(
                &at.child("nodePort"),
                "may not be used when `type` is 'ClusterIP'",
            ));
        }
        if port.node_port != 0 {
            errors.extend(port_number(port.node_port.into(), &at.child("nodePort")));
        }
        // kube: one (port, protocol) pair per Service.
        if !taken.insert((port.port, port.protocol.as_str())) {
            let key = serde_json::json!({"port": port.port, "protocol": port.protocol});
            errors.push(duplicate(&at, key));
        }
    }
    errors.extend(v::labels(&s.selector, &spec.child("selector")));
    let affinity = spec.child("sessionAffinity");
    errors.extend(required_one_of(
        &s.session_affinity,
        &["ClientIP", "None"],
        &affinity,
    ));
    if s.session_affinity == "ClientIP"
        && let Some(seconds) = (s.session_affinity_config.as_ref())
            .and_then(|c| c.client_ip.as_ref())
            .and_then(|c| c.timeout_seconds)
        && !(1..=86400).contains(&seconds)
    {
        let at = spec.children(&["sessionAffinityConfig", "clientIP", "timeoutSeconds"]);
        errors.push(FieldError::invalid(
            &at,
            seconds,
            "must be greater than 0 and less than 86400",
        ));
    } else if s.session_affinity == "None" && s.session_affinity_config.is_some() {
        let message = "must not be set when session affinity is None";
        errors.push(forbidden(&spec.child("sessionAffinityConfig"), message));
    }
    errors.extend(required_one_of(&s.r#type, &TYPES, &spec.child("type")));
    let ips = cluster_ips(service);
    for (i, ip) in ips.iter().enumerate() {
        if *ip != "None" && ip.parse::<std::net::IpAddr>().is_err() {
            let message = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
            errors.push(FieldError::invalid(
                spec.child("clusterIPs").index(i),
                *ip,
                message,
            ));
        }
    }
    for (i, ip) in s.external_ips.iter().enumerate() {
        let at = spec.child("externalIPs").index(i);
        match ip.parse::<std::net::IpAddr>() {
            Err(_) => {
                let message = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
                errors.push(FieldError::invalid(&at, ip.as_str(), message));
            }
            Ok(address) => errors.extend(super::non_special_ip(address, ip, &at)),
        }
    }
    let externally = matches!(s.r#type.as_str(), "NodePort" | "LoadBalancer")
        || (s.r#type == "ClusterIP" && !s.external_ips.is_empty());
    let policy = spec.child("externalTrafficPolicy");
    if !externally && !s.external_traffic_policy.is_empty() {
        let message = "may only be set for externally-accessible services";
        errors.push(FieldError::invalid(
            &policy,
            s.external_traffic_policy.as_str(),
            message,
        ));
    } else if externally && !s.external_traffic_policy.is_empty() {
        errors.extend(super::one_of(
            &s.external_traffic_policy,
            &["Cluster", "Local"],
            &policy,
        ));
    }
    if let Some(policy) = &s.internal_traffic_policy {
        errors.extend(super::one_of(
            policy,
            &["Cluster", "Local"],
            &spec.child("internalTrafficPolicy"),
        ));
    }
    if let Some(policy) = &s.ip_family_policy {
        let policies = ["SingleStack", "PreferDualStack", "RequireDualStack"];
        errors.extend(super::one_of(
            policy,
            &policies,
            &spec.child("ipFamilyPolicy"),
        ));
    }
    for (i, family) in s.ip_families.iter().enumerate() {
        errors.extend(super::one_of(
            family,
            &["IPv4", "IPv6"],
            &spec.child("ipFamilies").index(i),
        ));
    }
    errors
}

/// The cluster IPs asked for: `clusterIPs`, or `clusterIP` alone (kube's strategy copies
/// one into the other before validation).
fn cluster_ips(service: &Service) -> Vec<&str> {
    match (
        service.spec.cluster_ips.is_empty(),
        service.spec.cluster_ip.is_empty(),
    ) {
        (false, _) => service
            .spec
            .cluster_ips
            .iter()
            .map(String::as_str)
            .collect(),
        (true, false) => vec![service.spec.cluster_ip.as_str()],
        (true, true) => Vec::new(),
    }
}

/// kube's `ValidateServiceUpdate`: an allocated cluster IP stays (unless the Service
/// becomes an ExternalName).
pub(crate) fn service_update(new: &Service, old: &Service) -> Vec<FieldError> {
    let mut errors = service(new);
    let spec = Path::new("spec");
    if new.spec.r#type != "ExternalName"
        && !old.spec.cluster_ip.is_empty()
        && !new.spec.cluster_ip.is_empty()
    {
        errors.extend(immutable(
            &new.spec.cluster_ip,
            &old.spec.cluster_ip,
            &spec.child("clusterIP"),
        ));
    }
    errors
}
