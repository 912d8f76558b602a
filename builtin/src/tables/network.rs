//! Services and what routes to them (kube's `printService`, `printEndpoints`,
//! `printIngress`, `printIngressClass`, `printNetworkPolicy`, `printEndpointSlice`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::{at_most_three, format_labels, format_selector, items, number, or_none, text};

/// A Service's cluster IP (its first), `<none>` without one.
pub(crate) fn service_cluster_ip(service: &Value) -> Value {
    let first = items(service, "/spec/clusterIPs")
        .first()
        .and_then(Value::as_str);
    or_none(first.unwrap_or_else(|| text(service, "/spec/clusterIP")))
}

/// The load balancer's addresses (IPs, else host names), each once, sorted.
fn balancer_addresses(object: &Value) -> Vec<String> {
    let addresses: BTreeSet<String> = (items(object, "/status/loadBalancer/ingress").iter())
        .map(|i| match text(i, "/ip") {
            "" => text(i, "/hostname").to_owned(),
            ip => ip.to_owned(),
        })
        .filter(|a| !a.is_empty())
        .collect();
    addresses.into_iter().collect()
}

/// A Service's external IP (kube's `getServiceExternalIP`).
pub(crate) fn service_external_ip(service: &Value) -> Value {
    let external: Vec<&str> = items(service, "/spec/externalIPs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match text(service, "/spec/type") {
        "ClusterIP" | "NodePort" => or_none(&external.join(",")),
        "LoadBalancer" => {
            let mut addresses = balancer_addresses(service);
            if !external.is_empty() {
                addresses.extend(external.iter().map(|e| (*e).to_owned()));
                return addresses.join(",").into();
            }
            match addresses.is_empty() {
                true => "<pending>".into(),
                false => addresses.join(",").into(),
            }
        }
        "ExternalName" => text(service, "/spec/externalName").into(),
        _ => "<unknown>".into(),
    }
}

/// A Service's ports: `port/protocol`, or `port:nodePort/protocol`.
pub(crate) fn service_ports(service: &Value) -> Value {
    let ports: Vec<String> = (items(service, "/spec/ports").iter())
        .map(|p| match number(p, "/nodePort") {
            0 => format!("{}/{}", number(p, "/port"), text(p, "/protocol")),
            node => format!("{}:{node}/{}", number(p, "/port"), text(p, "/protocol")),
        })
        .collect();
    or_none(&ports.join(","))
}

/// A Service's selector.
pub(crate) fn service_selector(service: &Value) -> Value {
    format_labels(service.pointer("/spec/selector"))
}

/// An Endpoints' ready addresses with their ports, three at most (kube's
/// `formatEndpoints`).
pub(crate) fn endpoints(object: &Value) -> Value {
    let subsets = items(object, "/subsets");
    if subsets.is_empty() {
        return "<none>".into();
    }
    let mut shown = Vec::new();
    let mut count = 0;
    for subset in subsets {
        let addresses = items(subset, "/addresses");
        let ports = items(subset, "/ports");
        if ports.is_empty() {
            count += addresses.len();
            shown.extend(addresses.iter().map(|a| text(a, "/ip").to_owned()));
            continue;
        }
        for port in ports {
            count += addresses.len();
            for address in addresses {
                let ip = text(address, "/ip");
                let port = number(port, "/port");
                shown.push(match ip.contains(':') {
                    true => format!("[{ip}]:{port}"),
                    false => format!("{ip}:{port}"),
                });
            }
        }
    }
    at_most_three(&shown, count).into()
}

/// An Ingress's class.
pub(crate) fn ingress_class(ingress: &Value) -> Value {
    or_none(text(ingress, "/spec/ingressClassName"))
}

/// An Ingress's hosts, three at most, `*` for none.
pub(crate) fn ingress_hosts(ingress: &Value) -> Value {
    let rules = items(ingress, "/spec/rules");
    let hosts: Vec<String> = (rules.iter().map(|r| text(r, "/host")))
        .filter(|h| !h.is_empty())
        .map(str::to_owned)
        .collect();
    if hosts.is_empty() {
        return "*".into();
    }
    let shown: Vec<String> = hosts.into_iter().take(3).collect();
    match rules.len() > 3 {
        true => format!("{} + {} more...", shown.join(","), rules.len() - 3).into(),
        false => shown.join(",").into(),
    }
}

/// An Ingress's load balancer addresses.
pub(crate) fn ingress_address(ingress: &Value) -> Value {
    balancer_addresses(ingress).join(",").into()
}

/// An Ingress's ports: 80, and 443 with TLS.
pub(crate) fn ingress_ports(ingress: &Value) -> Value {
    match items(ingress, "/spec/tls").is_empty() {
        true => "80".into(),
        false => "80, 443".into(),
    }
}

/// An IngressClass's parameters: `Kind.group/name`.
pub(crate) fn ingress_class_parameters(class: &Value) -> Value {
    let Some(parameters) = class.pointer("/spec/parameters").filter(|p| !p.is_null()) else {
        return "<none>".into();
    };
    let group = match text(parameters, "/apiGroup") {
        "" => String::new(),
        group => format!(".{group}"),
    };
    format!(
        "{}{group}/{}",
        text(parameters, "/kind"),
        text(parameters, "/name")
    )
    .into()
}

/// A NetworkPolicy's pod selector.
pub(crate) fn network_policy_pods(policy: &Value) -> Value {
    format_selector(policy.pointer("/spec/podSelector"))
}

/// An EndpointSlice's ports, three at most.
pub(crate) fn endpoint_slice_ports(slice: &Value) -> Value {
    let ports = items(slice, "/ports");
    let shown: Vec<String> = (ports.iter())
        .map(|p| match p.get("port").and_then(Value::as_i64) {
            Some(port) => port.to_string(),
            None => match text(p, "/name") {
                "" => "*".to_owned(),
                name => name.to_owned(),
            },
        })
        .collect();
    match shown.is_empty() {
        true => "<unset>".into(),
        false => at_most_three(&shown, ports.len()).into(),
    }
}

/// An EndpointSlice's addresses, three at most.
pub(crate) fn endpoint_slice_endpoints(slice: &Value) -> Value {
    let addresses: Vec<String> = (items(slice, "/endpoints").iter())
        .flat_map(|e| items(e, "/addresses"))
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    match addresses.is_empty() {
        true => "<unset>".into(),
        false => at_most_three(&addresses, addresses.len()).into(),
    }
}
