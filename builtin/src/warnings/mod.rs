//! What kube warns about when it accepts one of its kinds (the strategies'
//! `WarningsOnCreate` and `WarningsOnUpdate`, kube 1.32): deprecated labels, annotations,
//! volume sources and fields, values kube accepts but ignores or will refuse. Answered in
//! `Warning` headers once the object is valid, each text once.

mod pod;
mod workloads;

pub(crate) use pod::{pod, template};
pub(crate) use workloads::*;

use std::collections::BTreeMap;

use kapi::meta::{ObjectMeta, Quantity};
use kapi::quantity::Quantity as Amount;
use kapi::validation::{self as v, Path};

/// kube's `GetNodeLabelDeprecatedMessage` (pkg/api/node/util.go).
fn deprecated_node_label(key: &str) -> Option<&'static str> {
    Some(match key {
        "beta.kubernetes.io/arch" => r#"deprecated since v1.14; use "kubernetes.io/arch" instead"#,
        "beta.kubernetes.io/os" => r#"deprecated since v1.14; use "kubernetes.io/os" instead"#,
        "failure-domain.beta.kubernetes.io/region" => {
            r#"deprecated since v1.17; use "topology.kubernetes.io/region" instead"#
        }
        "failure-domain.beta.kubernetes.io/zone" => {
            r#"deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#
        }
        "beta.kubernetes.io/instance-type" => {
            r#"deprecated since v1.17; use "node.kubernetes.io/instance-type" instead"#
        }
        "app.kubernetes.io/created-by" => "deprecated since v1.9",
        "scheduler.alpha.kubernetes.io/preferAvoidPods" => {
            "deprecated since v1.22; use Taints and Tolerations instead"
        }
        "node-role.kubernetes.io/master" => {
            r#"use "node-role.kubernetes.io/control-plane" instead"#
        }
        _ => return None,
    })
}

/// What kube says of a deprecated or removed volume plugin, by its field (a Pod's volume
/// source or a PersistentVolume's).
fn deprecated_plugin(field: &str) -> Option<&'static str> {
    Some(match field {
        "photonPersistentDisk" => "deprecated in v1.11, non-functional in v1.16+",
        "gitRepo" => "deprecated in v1.11",
        "scaleIO" => "deprecated in v1.16, non-functional in v1.22+",
        "flocker" | "storageOS" | "quobyte" => "deprecated in v1.22, non-functional in v1.25+",
        "glusterfs" => "deprecated in v1.25, non-functional in v1.26+",
        "cephfs" | "rbd" => "deprecated in v1.28, non-functional in v1.31+",
        _ => return None,
    })
}

/// `path.field: message` for each plugin of `plugins` (set, field) that is set, in order.
fn plugins(plugins: &[(bool, &str)], path: &Path) -> Vec<String> {
    (plugins.iter())
        .filter(|(set, _)| *set)
        .filter_map(|(_, field)| {
            Some(format!(
                "{}: {}",
                path.child(field),
                deprecated_plugin(field)?
            ))
        })
        .collect()
}

/// `path: fractional byte value "1500m" is invalid, must be an integer` for the quantity
/// named `name` of `map`, when it has a fraction of a byte.
fn fractional_bytes(map: &BTreeMap<String, Quantity>, name: &str, path: &Path) -> Option<String> {
    let amount = Amount::parse(&map.get(name)?.0).ok()?;
    (amount.milli_value() % 1000 != 0).then(|| {
        format!(
            "{}: fractional byte value {:?} is invalid, must be an integer",
            path.key(name),
            amount.to_string()
        )
    })
}

/// The name warning of kinds whose name becomes a Pod's (`what`: "the Pod's hostname",
/// "Pod names and hostnames"): a DNS label is recommended.
fn name(metadata: &ObjectMeta, what: &str) -> Option<String> {
    let errors = v::dns1123_label(metadata.name.as_deref().unwrap_or_default());
    (!errors.is_empty()).then(|| {
        format!(
            "metadata.name: this is used in {what}, which can result in surprising behavior; a DNS label is recommended: [{}]",
            errors.join(" ")
        )
    })
}
