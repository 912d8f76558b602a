//! A Service's cluster IPs and IP families made consistent before allocation, as kube's
//! Service storage makes them (`normalizeClusterIPs`, `patchAllocatedValues`,
//! `initIPFamilyFields` in `pkg/registry/core/service/storage`), and its strategy's
//! `dropTypeDependentFields`, which clears what a type change left behind.

use kapi::error::{FieldError, go_strings};

use super::{externally_accessible, needs_cluster_ip, needs_health_check, needs_node_ports};
use crate::api::core::v1::{Service, ServiceSpec};
use crate::validation::service::cluster_ips_related;

const SINGLE_STACK: &str = "SingleStack";
const PREFER_DUAL_STACK: &str = "PreferDualStack";
const REQUIRE_DUAL_STACK: &str = "RequireDualStack";

/// The IP families the cluster hands out addresses of: the first range's, and the second's
/// on a dual-stack cluster (`IPv4`, `IPv6`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterFamilies {
    /// The family of the first `--service-cluster-ip-range`.
    pub primary: &'static str,
    /// The other family, when a second range is configured.
    pub secondary: Option<&'static str>,
}

impl ClusterFamilies {
    fn configured(&self, family: &str) -> bool {
        self.primary == family || self.secondary == Some(family)
    }

    fn dual_stack(&self) -> bool {
        self.secondary.is_some()
    }
}

/// The family of an address as written (`IPv6` when it has a `:`).
fn family_of(ip: &str) -> &'static str {
    if ip.contains(':') { "IPv6" } else { "IPv4" }
}

fn other_family(family: &str) -> &'static str {
    if family == "IPv6" { "IPv4" } else { "IPv6" }
}

/// kube's `normalizeClusterIPs`: `clusterIP` and `clusterIPs` made to agree (on an update,
/// `old` is the stored Service: an older client that only knows `clusterIP` keeps the
/// `clusterIPs` it did not send).
pub fn normalize_cluster_ips(new: &mut ServiceSpec, old: Option<&ServiceSpec>) {
    let Some(old) = old else {
        if !new.cluster_ip.is_empty() && new.cluster_ips.is_empty() {
            new.cluster_ips = vec![new.cluster_ip.clone()];
        }
        return;
    };
    if !old.cluster_ips.is_empty() && new.cluster_ips.is_empty() && new.cluster_ip == old.cluster_ip
    {
        new.cluster_ips = old.cluster_ips.clone();
    }
    if new.cluster_ip != old.cluster_ip {
        let same_list = new.cluster_ips == old.cluster_ips;
        if !old.cluster_ip.is_empty() && new.cluster_ip.is_empty() && same_list {
            new.cluster_ips = Vec::new();
        } else if same_list {
            new.cluster_ips = vec![new.cluster_ip.clone()];
        }
    }
}

/// kube's `patchAllocatedValues`: what the server allocated and an update left out (a
/// create manifest applied again) is kept.
pub fn patch_allocated_values(new: &mut ServiceSpec, old: &ServiceSpec) {
    if needs_cluster_ip(old) && needs_cluster_ip(new) {
        if new.cluster_ip.is_empty() {
            new.cluster_ip = old.cluster_ip.clone();
        }
        if new.cluster_ips.is_empty() {
            new.cluster_ips = old.cluster_ips.clone();
        }
    }
    if needs_node_ports(old) && needs_node_ports(new) {
        // The node ports of ports in both, which a port left without one may not reuse.
        let kept: Vec<i32> = (new.ports.iter())
            .filter_map(|port| {
                let before = old.ports.iter().find(|o| o.name == port.name)?;
                (port.node_port != 0 && port.node_port == before.node_port)
                    .then_some(port.node_port)
            })
            .collect();
        for port in new.ports.iter_mut().filter(|p| p.node_port == 0) {
            if let Some(before) = old.ports.iter().find(|o| o.name == port.name)
                && before.node_port != 0
                && !kept.contains(&before.node_port)
            {
                port.node_port = before.node_port;
            }
        }
    }
    if needs_health_check(old) && needs_health_check(new) && new.health_check_node_port == 0 {
        new.health_check_node_port = old.health_check_node_port;
    }
}

/// kube's `initIPFamilyFields`: `ipFamilyPolicy` and `ipFamilies` defaulted and checked
/// against the cluster's families before addresses are taken (`old` on an update). The
/// errors are the Service's `Invalid` causes.
pub fn init_ip_family_fields(
    new: &mut Service,
    old: Option<&Service>,
    cluster: ClusterFamilies,
) -> Result<(), Vec<FieldError>> {
    let spec = &mut new.spec;
    if !needs_cluster_ip(spec) {
        return Ok(());
    }
    let old = old.map(|o| &o.spec);
    if let Some(old) = old
        && matching_prefer_dual_stack(spec, old)
    {
        return Ok(());
    }
    let headless = spec.cluster_ips.first().map(String::as_str) == Some("None");
    if spec.ip_family_policy.is_none() {
        spec.ip_family_policy = match old.and_then(|o| o.ip_family_policy.clone()) {
            Some(policy) => Some(policy),
            None if spec.cluster_ip == "None" && spec.selector.is_empty() => {
                Some(REQUIRE_DUAL_STACK.into())
            }
            None => Some(SINGLE_STACK.into()),
        };
    }
    let errors = cluster_ips_related(spec);
    if !errors.is_empty() {
        return Err(errors);
    }
    let policy = spec.ip_family_policy.clone().unwrap_or_default();
    let mut errors = Vec::new();
    if let Some(old) = old {
        if policy == SINGLE_STACK {
            if spec.cluster_ips == old.cluster_ips && spec.cluster_ips.len() > 1 {
                spec.cluster_ips.truncate(1);
            }
            if spec.ip_families == old.ip_families && spec.ip_families.len() > 1 {
                spec.ip_families.truncate(1);
            }
        } else {
            if spec.cluster_ips.len() < old.cluster_ips.len() {
                errors.push(FieldError::invalid(
                    "spec.ipFamilyPolicy",
                    policy.as_str(),
                    "must be 'SingleStack' to release the secondary cluster IP",
                ));
            }
            if spec.ip_families.len() < old.ip_families.len() {
                errors.push(FieldError::invalid(
                    "spec.ipFamilyPolicy",
                    policy.as_str(),
                    "must be 'SingleStack' to release the secondary IP family",
                ));
            }
        }
    }
    if policy == SINGLE_STACK {
        let many = "must be 'RequireDualStack' or 'PreferDualStack' when multiple";
        if spec.cluster_ips.len() > 1 {
            let message = format!("{many} cluster IPs are specified");
            errors.push(FieldError::invalid(
                "spec.ipFamilyPolicy",
                policy.as_str(),
                message,
            ));
        }
        if spec.ip_families.len() > 1 {
            let message = format!("{many} IP families are specified");
            errors.push(FieldError::invalid(
                "spec.ipFamilyPolicy",
                policy.as_str(),
                message,
            ));
        }
    }
    let listed: Vec<&str> = spec.cluster_ips.iter().map(String::as_str).collect();
    let shown = go_strings(&listed);
    let mut appended = Vec::new();
    for (i, ip) in spec.cluster_ips.iter().enumerate() {
        if ip == "None" {
            break;
        }
        if i >= spec.ip_families.len() + appended.len() {
            let family = family_of(ip);
            if cluster.configured(family) {
                appended.push(family.to_owned());
            } else {
                errors.push(FieldError::new(
                    kapi::error::FieldErrorType::Invalid,
                    format!("spec.clusterIPs[{i}]"),
                    None,
                    format!("{shown}: {family} is not configured on this cluster"),
                ));
            }
        }
    }
    spec.ip_families.extend(appended);
    if !errors.is_empty() {
        return Err(errors);
    }
    if headless && spec.selector.is_empty() {
        if spec.ip_families.is_empty() {
            spec.ip_families.push(cluster.primary.into());
        }
        if spec.ip_families.len() == 1 && policy != SINGLE_STACK {
            let other = other_family(&spec.ip_families[0]);
            spec.ip_families.push(other.into());
        }
        return Ok(());
    }
    if policy == REQUIRE_DUAL_STACK && !cluster.dual_stack() {
        errors.push(FieldError::invalid(
            "spec.ipFamilyPolicy",
            policy.as_str(),
            "this cluster is not configured for dual-stack services",
        ));
    }
    for (i, family) in spec.ip_families.iter().enumerate() {
        if !cluster.configured(family) {
            errors.push(FieldError::invalid(
                format!("spec.ipFamilies[{i}]"),
                family.as_str(),
                "not configured on this cluster",
            ));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if spec.ip_families.is_empty() {
        spec.ip_families.push(cluster.primary.into());
    }
    if policy != SINGLE_STACK
        && spec.ip_families.len() == 1
        && let Some(secondary) = cluster.secondary
    {
        let other = match spec.ip_families[0] == cluster.primary {
            true => secondary,
            false => cluster.primary,
        };
        spec.ip_families.push(other.into());
    }
    Ok(())
}

/// kube's `isMatchingPreferDualStackClusterIPFields`: an update of a `PreferDualStack`
/// Service that leaves its addresses and families as they are is not upgraded or
/// downgraded when the cluster's families changed.
fn matching_prefer_dual_stack(new: &ServiceSpec, old: &ServiceSpec) -> bool {
    let prefer = |spec: &ServiceSpec| spec.ip_family_policy.as_deref() == Some(PREFER_DUAL_STACK);
    needs_cluster_ip(old)
        && needs_cluster_ip(new)
        && prefer(old)
        && prefer(new)
        && new.cluster_ips == old.cluster_ips
        && new.ip_families == old.ip_families
}

/// kube's `dropTypeDependentFields` (its strategy's, on update): what the old type needed
/// and the new one does not is cleared, when the update left it as it was (a value the
/// update changed stays, for validation to refuse).
pub fn drop_type_dependent_fields(new: &mut Service, old: &Service) {
    let (spec, before) = (&mut new.spec, &old.spec);
    if needs_cluster_ip(before) && !needs_cluster_ip(spec) {
        if spec.cluster_ip == before.cluster_ip && spec.cluster_ips == before.cluster_ips {
            spec.cluster_ip.clear();
            spec.cluster_ips.clear();
        }
        if spec.ip_families == before.ip_families {
            spec.ip_families.clear();
        }
        if spec.ip_family_policy == before.ip_family_policy {
            spec.ip_family_policy = None;
        }
    }
    if needs_node_ports(before) && !needs_node_ports(spec) {
        let old_ports: Vec<i32> = before.ports.iter().map(|p| p.node_port).collect();
        let subset = (spec.ports.iter())
            .filter(|p| p.node_port != 0)
            .all(|p| old_ports.contains(&p.node_port));
        if subset {
            for port in &mut spec.ports {
                port.node_port = 0;
            }
        }
    }
    if needs_health_check(before)
        && !needs_health_check(spec)
        && spec.health_check_node_port == before.health_check_node_port
    {
        spec.health_check_node_port = 0;
    }
    if before.r#type == "LoadBalancer" && spec.r#type != "LoadBalancer" {
        if spec.allocate_load_balancer_node_ports.is_some()
            && spec.allocate_load_balancer_node_ports == before.allocate_load_balancer_node_ports
        {
            spec.allocate_load_balancer_node_ports = None;
        }
        if spec.load_balancer_class == before.load_balancer_class {
            spec.load_balancer_class = None;
        }
    }
    if externally_accessible(before)
        && !externally_accessible(spec)
        && spec.external_traffic_policy == before.external_traffic_policy
    {
        spec.external_traffic_policy.clear();
    }
    if spec.r#type != "LoadBalancer" {
        new.status.load_balancer = Default::default();
    }
}
