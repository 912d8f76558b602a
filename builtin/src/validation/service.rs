//! Services (kube's `ValidateService` and `ValidateServiceUpdate`): ports, type, selector,
//! session affinity, addresses and traffic policies. Allocating addresses is not
//! validation's: the API server's allocators take them before validation, having checked
//! the address fields with [`cluster_ips_related`] (`crate::services`).

use std::collections::BTreeSet;

use kapi::error::{FieldError, FieldErrorType, go_strings};
use kapi::validation::{self as v, Path};

use super::pod::{port_number, port_or_name};
use super::{duplicate, forbidden, invalid_each, required, required_one_of};
use crate::api::core::v1::{Service, ServiceSpec};

/// The Service types.
const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];

/// kube's `ValidateService`.
pub(crate) fn service(service: &Service) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &service.spec;
    let mut errors = Vec::new();
    let headless = s.cluster_ips.first().map(String::as_str) == Some("None")
        || (s.cluster_ips.is_empty() && s.cluster_ip == "None");
    let ports = spec.child("ports");
    if s.ports.is_empty() && !headless && s.r#type != "ExternalName" {
        errors.push(required(&ports, ""));
    }
    match s.r#type.as_str() {
        kind @ ("LoadBalancer" | "NodePort") if headless => {
            let message = format!("may not be set to 'None' for {kind} services");
            errors.push(FieldError::invalid(
                spec.child("clusterIPs").index(0),
                "None",
                message,
            ));
        }
        "ExternalName" => {
            let message = "may not be set for ExternalName services";
            if !s.cluster_ips.is_empty() {
                errors.push(forbidden(&spec.child("clusterIPs"), message));
            }
            if !s.ip_families.is_empty() {
                errors.push(forbidden(&spec.child("ipFamilies"), message));
            }
            if s.ip_family_policy.is_some() {
                errors.push(forbidden(&spec.child("ipFamilyPolicy"), message));
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
    errors.extend(cluster_ips_related(s));
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
    errors
}

/// kube's `ValidateServiceClusterIPsRelatedFields`: `clusterIP` and `clusterIPs` agree,
/// are addresses (or one `None`), at most one of each family and of the families
/// `ipFamilies` names; the families and policy are known ones. Nothing for ExternalName
/// Services.
pub(crate) fn cluster_ips_related(s: &ServiceSpec) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if s.r#type == "ExternalName" {
        return errors;
    }
    let spec = Path::new("spec");
    let at = spec.child("clusterIPs");
    let listed: Vec<&str> = s.cluster_ips.iter().map(String::as_str).collect();
    let whole = |detail: &str| {
        let detail = format!("{}: {detail}", go_strings(&listed));
        FieldError::new(FieldErrorType::Invalid, at.to_string(), None, detail)
    };
    if !s.cluster_ip.is_empty() && s.cluster_ips.is_empty() {
        errors.push(required(&at, ""));
    } else if !s.cluster_ip.is_empty() && s.cluster_ips[0] != s.cluster_ip {
        errors.push(whole("first value must match `clusterIP`"));
    } else if s.cluster_ip.is_empty() && !s.cluster_ips.is_empty() {
        errors.push(whole("must be empty when `clusterIP` is not specified"));
    }
    let mut seen = BTreeSet::new();
    for (i, family) in s.ip_families.iter().enumerate() {
        let path = spec.child("ipFamilies").index(i);
        errors.extend(super::one_of(family, &["IPv4", "IPv6"], &path));
        if !seen.insert(family.as_str()) {
            errors.push(duplicate(&path, family.as_str()));
        }
    }
    if let Some(policy) = &s.ip_family_policy {
        let policies = ["PreferDualStack", "RequireDualStack", "SingleStack"];
        errors.extend(super::one_of(
            policy,
            &policies,
            &spec.child("ipFamilyPolicy"),
        ));
    }
    let headless = listed.first() == Some(&"None");
    if headless && listed.len() > 1 {
        errors.push(whole("'None' must be the first and only value"));
    }
    let mut invalid = false;
    for (i, ip) in listed.iter().enumerate() {
        if (i == 0 && headless) || ip.parse::<std::net::IpAddr>().is_ok() {
            continue;
        }
        invalid = true;
        let message = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
        errors.push(FieldError::invalid(at.index(i), *ip, message));
    }
    if listed.len() > 2 {
        errors.push(whole("may only hold up to 2 values"));
    }
    if invalid || headless {
        return errors;
    }
    let v6 = |ip: &str| ip.contains(':');
    if listed.len() == 2 && v6(listed[0]) == v6(listed[1]) {
        errors.push(whole("may specify no more than one IP for each IP family"));
    }
    for (i, (ip, family)) in listed.iter().zip(&s.ip_families).enumerate() {
        let expected = match family.as_str() {
            "IPv4" if v6(ip) => "IPv4",
            "IPv6" if !v6(ip) => "IPv6",
            _ => continue,
        };
        let message = format!("expected an {expected} value as indicated by `ipFamilies[{i}]`");
        errors.push(FieldError::invalid(at.index(i), *ip, message));
    }
    errors
}

/// kube's `ValidateServiceUpdate`: allocated cluster IPs and families stay (but for a
/// secondary one a `SingleStack` Service gives back), unless the Service is or becomes an
/// ExternalName; so does a needed health check node port.
pub(crate) fn service_update(new: &Service, old: &Service) -> Vec<FieldError> {
    let (n, o) = (&new.spec, &old.spec);
    let mut errors = Vec::new();
    let external = n.r#type == "ExternalName" || o.r#type == "ExternalName";
    let headless = |s: &ServiceSpec| s.cluster_ips.first().map(String::as_str) == Some("None");
    let single = n.ip_family_policy.as_deref() == Some("SingleStack");
    let policy = || {
        n.ip_family_policy
            .clone()
            .map_or(serde_json::Value::Null, Into::into)
    };
    let ips: Vec<&str> = n.cluster_ips.iter().map(String::as_str).collect();
    let shown = |detail: &str, values: &[&str]| format!("{}: {detail}", go_strings(values));
    let invalid_at = |field: String, detail: String| {
        FieldError::new(FieldErrorType::Invalid, field, None, detail)
    };
    let both_headless = headless(n) && headless(o);
    if !external && !both_headless {
        let changed = "may not change once set";
        if n.cluster_ips.len() == o.cluster_ips.len() {
            for (i, (a, b)) in n.cluster_ips.iter().zip(&o.cluster_ips).enumerate() {
                if a != b {
                    errors.push(invalid_at(
                        format!("spec.clusterIPs[{i}]"),
                        shown(changed, &ips),
                    ));
                }
            }
        } else if n.cluster_ips.len() < o.cluster_ips.len() {
            if n.cluster_ips.is_empty() {
                let detail = shown("primary clusterIP can not be unset", &ips);
                errors.push(invalid_at("spec.clusterIPs[0]".into(), detail));
            } else if n.cluster_ips[0] != o.cluster_ips[0] {
                errors.push(invalid_at(
                    "spec.clusterIPs[0]".into(),
                    shown(changed, &ips),
                ));
            } else if !single {
                errors.push(FieldError::invalid(
                    "spec.ipFamilyPolicy",
                    policy(),
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                ));
            }
        } else if !o.cluster_ips.is_empty() && n.cluster_ips[0] != o.cluster_ips[0] {
            errors.push(invalid_at(
                "spec.clusterIPs[0]".into(),
                shown(changed, &ips),
            ));
        }
    }
    if !external && !headless(n) && !headless(o) {
        let families: Vec<&str> = n.ip_families.iter().map(String::as_str).collect();
        let changed = "may not change once set";
        if n.ip_families.len() == o.ip_families.len() {
            if n.ip_families != o.ip_families {
                errors.push(invalid_at(
                    "spec.ipFamilies[0]".into(),
                    shown(changed, &families),
                ));
            }
        } else if n.ip_families.len() < o.ip_families.len() && n.cluster_ips.is_empty() {
            let detail = shown("primary ipFamily can not be unset", &families);
            errors.push(invalid_at("spec.ipFamilies[0]".into(), detail));
        } else if !o.ip_families.is_empty() && n.ip_families.first() != o.ip_families.first() {
            errors.push(invalid_at(
                "spec.ipFamilies[0]".into(),
                shown(changed, &ips),
            ));
        } else if n.ip_families.len() < o.ip_families.len() && !single {
            errors.push(FieldError::invalid(
                "spec.ipFamilyPolicy",
                policy(),
                "must be set to 'SingleStack' when releasing the secondary ipFamily",
            ));
        }
    }
    if o.r#type == "LoadBalancer"
        && n.r#type == "LoadBalancer"
        && n.load_balancer_class != o.load_balancer_class
    {
        let class = n
            .load_balancer_class
            .clone()
            .map_or(serde_json::Value::Null, Into::into);
        errors.push(FieldError::invalid(
            "spec.loadBalancerClass",
            class,
            "may not change once set",
        ));
    }
    let health_check =
        |s: &ServiceSpec| s.r#type == "LoadBalancer" && s.external_traffic_policy == "Local";
    if health_check(n) && health_check(o) && n.health_check_node_port != o.health_check_node_port {
        errors.push(forbidden(
            &Path::new("spec").child("healthCheckNodePort"),
            "field is immutable",
        ));
    }
    errors.extend(service(new));
    errors
}
