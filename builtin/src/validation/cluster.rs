//! The cluster's own objects (kube's `ValidateEndpoints`, `ValidateNode`,
//! `ValidatePersistentVolume`, `ValidateResourceQuota`'s scope selector,
//! `ValidateHorizontalPodAutoscaler`, `ValidateControllerRevision`): addresses and ports,
//! taints, volume capacities and sources, autoscaling bounds, revisions that do not change.

use std::collections::BTreeSet;

use kapi::error::FieldError;
use kapi::net::cidr::Cidr;
use kapi::validation::{self as v, Path};

use super::pod::port_number;
use super::{duplicate, forbidden, immutable, invalid_each, json, one_of, required};
use crate::api::apps::v1::ControllerRevision;
use crate::api::autoscaling::v2::HorizontalPodAutoscaler;
use crate::api::core::v1::{EndpointAddress, Endpoints, Node, PersistentVolume, ResourceQuota};

/// kube's `ValidateEndpointsSpecific`: each subset's addresses and ports.
pub(crate) fn endpoints(endpoints: &Endpoints) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, subset) in endpoints.subsets.iter().enumerate() {
        let at = Path::new("subsets").index(i);
        for (field, addresses) in [
            ("addresses", &subset.addresses),
            ("notReadyAddresses", &subset.not_ready_addresses),
        ] {
            for (j, address) in addresses.iter().enumerate() {
                errors.extend(endpoint_address(address, &at.child(field).index(j)));
            }
        }
        let named = subset.ports.len() > 1;
        for (j, port) in subset.ports.iter().enumerate() {
            let path = at.child("ports").index(j);
            let name = path.child("name");
            match port.name.is_empty() {
                true if named => errors.push(required(&name, "")),
                true => {}
                false => errors.extend(invalid_each(
                    v::dns1123_label(&port.name),
                    &port.name,
                    &name,
                )),
            }
            errors.extend(port_number(port.port.into(), &path.child("port")));
            errors.extend(super::required_one_of(
                &port.protocol,
                &["SCTP", "TCP", "UDP"],
                &path.child("protocol"),
            ));
        }
    }
    errors
}

/// kube's `validateEndpointAddress` and `ValidateEndpointIP`.
fn endpoint_address(address: &EndpointAddress, path: &Path) -> Vec<FieldError> {
    let ip = path.child("ip");
    let mut errors = Vec::new();
    match address.ip.parse::<std::net::IpAddr>() {
        Err(_) => {
            let message = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
            errors.push(FieldError::invalid(&ip, address.ip.as_str(), message));
            errors.push(FieldError::invalid(
                &ip,
                address.ip.as_str(),
                "must be a valid IP address",
            ));
        }
        Ok(parsed) => errors.extend(super::non_special_ip(parsed, &address.ip, &ip)),
    }
    if !address.hostname.is_empty() {
        errors.extend(invalid_each(
            v::dns1123_label(&address.hostname),
            &address.hostname,
            &path.child("hostname"),
        ));
    }
    if let Some(node) = address.node_name.as_ref().filter(|n| !n.is_empty()) {
        errors.extend(invalid_each(
            v::dns1123_subdomain(node),
            node,
            &path.child("nodeName"),
        ));
    }
    errors
}

/// kube's `ValidateNode`: taints (which kube reports under `metadata`) and pod CIDRs.
pub(crate) fn node(node: &Node) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let taints = Path::new("metadata").child("taints");
    let mut seen = BTreeSet::new();
    for (i, taint) in node.spec.taints.iter().enumerate() {
        let at = taints.index(i);
        errors.extend(invalid_each(
            v::qualified_name(&taint.key),
            &taint.key,
            &at.child("key"),
        ));
        errors.extend(invalid_each(
            v::label_value(&taint.value),
            &taint.value,
            &at.child("value"),
        ));
        let effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
        errors.extend(super::required_one_of(
            &taint.effect,
            &effects,
            &at.child("effect"),
        ));
        if !seen.insert((taint.key.as_str(), taint.effect.as_str())) {
            let value = serde_json::json!({"key": taint.key, "effect": taint.effect});
            let mut error = duplicate(&at, value);
            error.detail = "taints must be unique by key and effect pair".into();
            errors.push(error);
        }
    }
    let cidrs = match node.spec.pod_cidrs.is_empty() {
        true if !node.spec.pod_cidr.is_empty() => vec![node.spec.pod_cidr.clone()],
        _ => node.spec.pod_cidrs.clone(),
    };
    for (i, cidr) in cidrs.iter().enumerate() {
        if Cidr::parse(cidr).is_err() {
            let at = Path::new("spec").child("podCIDRs").index(i);
            errors.push(FieldError::invalid(&at, json(&cidrs), "must be valid CIDR"));
        }
    }
    errors
}

/// The volume sources a PersistentVolume may have, by their JSON names.
const VOLUME_SOURCES: [&str; 22] = [
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "cinder",
    "cephfs",
    "iscsi",
    "fc",
    "flexVolume",
    "flocker",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
];

/// kube's `ValidatePersistentVolumeSpec`.
pub(crate) fn persistent_volume(volume: &PersistentVolume) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &volume.spec;
    let mut errors = Vec::new();
    let modes = spec.child("accessModes");
    if s.access_modes.is_empty() {
        errors.push(required(&modes, ""));
    }
    let supported = [
        "ReadOnlyMany",
        "ReadWriteMany",
        "ReadWriteOnce",
        "ReadWriteOncePod",
    ];
    for mode in &s.access_modes {
        errors.extend(one_of(mode, &supported, &modes));
    }
    let capacity = spec.child("capacity");
    if s.capacity.is_empty() {
        errors.push(required(&capacity, ""));
    }
    if s.capacity.len() != 1 || !s.capacity.contains_key("storage") {
        // kube shows a missing list as Go's nil.
        let shown = match s.capacity.is_empty() {
            true => serde_json::Value::Null,
            false => json(&s.capacity),
        };
        errors.push(super::unsupported(&capacity, shown, &["storage"]));
    }
    for (name, quantity) in &s.capacity {
        let at = capacity.key(name);
        match kapi::quantity::Quantity::parse(&quantity.0) {
            Ok(amount) if amount.sign() <= 0 => {
                // kube's `validateBasicResource`, then `ValidatePositiveQuantityValue`.
                if amount.sign() < 0 {
                    let message = "must be a valid resource quantity";
                    errors.push(FieldError::invalid(&at, amount.value(), message));
                }
                errors.push(FieldError::invalid(
                    &at,
                    quantity.0.as_str(),
                    "must be greater than zero",
                ));
            }
            Ok(_) => {}
            Err(_) => errors.push(FieldError::invalid(
                &at,
                quantity.0.as_str(),
                "must be a valid resource quantity",
            )),
        }
    }
    let policy = spec.child("persistentVolumeReclaimPolicy");
    if !s.persistent_volume_reclaim_policy.is_empty() {
        errors.extend(one_of(
            &s.persistent_volume_reclaim_policy,
            &["Delete", "Recycle", "Retain"],
            &policy,
        ));
    }
    let sources = json(&s.persistent_volume_source);
    let given: Vec<&str> = (VOLUME_SOURCES.iter().copied())
        .filter(|name| sources.get(*name).is_some_and(|v| !v.is_null()))
        .collect();
    match given.as_slice() {
        [] => errors.push(required(&spec, "must specify a volume type")),
        [_, rest @ ..] => {
            for name in rest {
                errors.push(forbidden(
                    &spec.child(name),
                    "may not specify more than 1 volume type",
                ));
            }
        }
    }
    if let Some(host) = &s.persistent_volume_source.host_path
        && host.path.is_empty()
    {
        errors.push(required(&spec.children(&["hostPath", "path"]), ""));
    }
    if let Some(mode) = &s.volume_mode {
        errors.extend(one_of(
            mode,
            &["Block", "Filesystem"],
            &spec.child("volumeMode"),
        ));
    }
    errors
}

/// kube's `ValidateResourceQuota`: its scopes and its scope selector.
pub(crate) fn resource_quota(quota: &ResourceQuota) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let mut errors = Vec::new();
    let scopes = [
        "Terminating",
        "NotTerminating",
        "BestEffort",
        "NotBestEffort",
        "PriorityClass",
        "CrossNamespacePodAffinity",
    ];
    for scope in &quota.spec.scopes {
        if !scopes.contains(&scope.as_str()) {
            errors.push(FieldError::invalid(
                spec.child("scopes"),
                scope.as_str(),
                "unsupported scope",
            ));
        }
    }
    let Some(selector) = &quota.spec.scope_selector else {
        return errors;
    };
    let at = spec.children(&["scopeSelector", "matchExpressions"]);
    for requirement in &selector.match_expressions {
        if !scopes.contains(&requirement.scope_name.as_str()) {
            let message = "unsupported scope";
            errors.push(FieldError::invalid(
                at.child("scopeName"),
                requirement.scope_name.as_str(),
                message,
            ));
        }
        match requirement.operator.as_str() {
            "In" | "NotIn" if requirement.values.is_empty() => {
                let message = "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector";
                errors.push(required(&at.child("values"), message));
            }
            "Exists" | "DoesNotExist" if !requirement.values.is_empty() => {
                let message = "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector";
                errors.push(FieldError::invalid(
                    at.child("values"),
                    json(&requirement.values),
                    message,
                ));
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => {
                errors.push(FieldError::invalid(
                    at.child("operator"),
                    other,
                    "not a valid selector operator",
                ));
            }
        }
    }
    errors
}

/// kube's `ValidateHorizontalPodAutoscalerSpec` (paths in autoscaling/v2, as kube names
/// them whatever the request's version).
pub(crate) fn autoscaler(hpa: &HorizontalPodAutoscaler) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &hpa.spec;
    let mut errors = Vec::new();
    if let Some(min) = s.min_replicas
        && min < 1
    {
        errors.push(FieldError::invalid(
            spec.child("minReplicas"),
            min,
            "must be greater than or equal to 1",
        ));
    }
    if s.max_replicas < 1 {
        errors.push(FieldError::invalid(
            spec.child("maxReplicas"),
            s.max_replicas,
            "must be greater than 0",
        ));
    }
    if let Some(min) = s.min_replicas
        && s.max_replicas < min
    {
        let message = "must be greater than or equal to `minReplicas`";
        errors.push(FieldError::invalid(
            spec.child("maxReplicas"),
            s.max_replicas,
            message,
        ));
    }
    let target = spec.child("scaleTargetRef");
    if s.scale_target_ref.kind.is_empty() {
        errors.push(required(&target.child("kind"), ""));
    }
    match s.scale_target_ref.name.is_empty() {
        true => errors.push(required(&target.child("name"), "")),
        false => errors.extend(invalid_each(
            v::path_segment_name(&s.scale_target_ref.name),
            &s.scale_target_ref.name,
            &target.child("name"),
        )),
    }
    for (i, metric) in s.metrics.iter().enumerate() {
        let at = spec.child("metrics").index(i);
        if let Some(resource) = &metric.resource
            && let Some(utilization) = resource.target.average_utilization
            && utilization <= 0
        {
            let path = at.children(&["resource", "target", "averageUtilization"]);
            errors.push(FieldError::invalid(
                &path,
                utilization,
                "must be greater than 0",
            ));
        }
    }
    // Scaling to zero needs a metric that does not come from the pods.
    let from_elsewhere = s
        .metrics
        .iter()
        .any(|m| m.object.is_some() || m.external.is_some());
    if s.min_replicas == Some(0) && !from_elsewhere {
        let message = "must specify at least one Object or External metric to support scaling to zero replicas";
        errors.push(forbidden(&spec.child("metrics"), message));
    }
    errors
}

/// kube's `ValidateControllerRevision`: data is given, the revision not negative.
pub(crate) fn controller_revision(revision: &ControllerRevision) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if revision.data.0.is_null() {
        errors.push(required(&Path::new("data"), "data is mandatory"));
    }
    errors.extend(v::non_negative(revision.revision, &Path::new("revision")));
    errors
}

/// kube's `ValidateControllerRevisionUpdate`: the data stays.
pub(crate) fn controller_revision_update(
    new: &ControllerRevision,
    old: &ControllerRevision,
) -> Vec<FieldError> {
    let mut errors = controller_revision(new);
    errors.extend(immutable(&new.data.0, &old.data.0, &Path::new("data")));
    errors
}
