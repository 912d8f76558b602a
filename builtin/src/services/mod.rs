//! What kube's Service storage does to a Service's addresses around allocating them
//! (`pkg/registry/core/service/storage`), as functions of the Service alone, which the API
//! server's allocators call before they take or give back addresses and ports:
//! [`normalize_cluster_ips`], [`patch_allocated_values`], [`init_ip_family_fields`] and
//! the strategy's [`drop_type_dependent_fields`].

mod families;

pub use families::{
    ClusterFamilies, drop_type_dependent_fields, init_ip_family_fields, normalize_cluster_ips,
    patch_allocated_values,
};

use crate::api::core::v1::ServiceSpec;

/// `ExternalName`: a type without cluster IPs.
pub const EXTERNAL_NAME: &str = "ExternalName";

/// Whether the Service has cluster IPs (every type but `ExternalName`).
pub fn needs_cluster_ip(spec: &ServiceSpec) -> bool {
    spec.r#type != EXTERNAL_NAME
}

/// Whether it is headless (`clusterIPs` is `["None"]`, or `clusterIP` is `None`).
pub fn is_headless(spec: &ServiceSpec) -> bool {
    match spec.cluster_ips.first() {
        Some(first) => first == "None",
        None => spec.cluster_ip == "None",
    }
}

/// Whether it has node ports (`NodePort` and `LoadBalancer`).
pub fn needs_node_ports(spec: &ServiceSpec) -> bool {
    matches!(spec.r#type.as_str(), "NodePort" | "LoadBalancer")
}

/// Whether node ports not asked for are allocated (`NodePort`; `LoadBalancer` unless
/// `allocateLoadBalancerNodePorts` is false).
pub fn allocates_node_ports(spec: &ServiceSpec) -> bool {
    match spec.r#type.as_str() {
        "NodePort" => true,
        "LoadBalancer" => spec.allocate_load_balancer_node_ports.unwrap_or(true),
        _ => false,
    }
}

/// Whether it has a health check node port (`LoadBalancer` with `externalTrafficPolicy`
/// `Local`).
pub fn needs_health_check(spec: &ServiceSpec) -> bool {
    spec.r#type == "LoadBalancer" && spec.external_traffic_policy == "Local"
}

/// Whether it is reachable from outside the cluster (kube's `ExternallyAccessible`).
pub fn externally_accessible(spec: &ServiceSpec) -> bool {
    needs_node_ports(spec) || (spec.r#type == "ClusterIP" && !spec.external_ips.is_empty())
}
