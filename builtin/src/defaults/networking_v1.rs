//! `networking.k8s.io/v1`: network policies' ports and policy types, ingress classes'
//! parameters' scope.

use super::or;
use crate::api::networking::v1::{IngressClass, NetworkPolicy, NetworkPolicyPort};

pub(crate) fn network_policy_port(port: &mut NetworkPolicyPort) {
    or(&mut port.protocol, "TCP".to_owned());
}

/// A policy governs ingress, and egress when it has egress rules, unless it says.
pub(crate) fn network_policy(policy: &mut NetworkPolicy) {
    let spec = &mut policy.spec;
    if spec.policy_types.is_empty() {
        spec.policy_types.push("Ingress".into());
        if !spec.egress.is_empty() {
            spec.policy_types.push("Egress".into());
        }
    }
}

/// Parameters are cluster-wide unless said.
pub(crate) fn ingress_class(class: &mut IngressClass) {
    if let Some(parameters) = class.spec.parameters.as_mut() {
        or(&mut parameters.scope, "Cluster".to_owned());
    }
}
