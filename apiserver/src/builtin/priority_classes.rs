//! kube-apiserver's system PriorityClasses (`pkg/registry/scheduling/rest`, its
//! `scheduling/bootstrap-system-priority-classes` post-start hook): `system-node-critical`
//! and `system-cluster-critical`, made at start when missing, written by `kube-apiserver`.

use serde_json::json;

use kapi_core::error::ApiError;
use kapi_registry::{Registry, Target, WriteOptions};

/// kube's system classes: name, value, description.
const SYSTEM_CLASSES: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// Makes the system classes that are missing; nothing when the scheme serves no
/// PriorityClasses.
pub async fn bootstrap(registry: &Registry) -> Result<(), ApiError> {
    let Some(classes) = registry
        .scheme()
        .by_resource("scheduling.k8s.io", "priorityclasses")
    else {
        return Ok(());
    };
    let target = Target {
        kind: &classes,
        version: "v1",
        namespace: None,
    };
    let options = WriteOptions {
        field_manager: Some("kube-apiserver".into()),
        ..WriteOptions::default()
    };
    for (name, value, description) in SYSTEM_CLASSES {
        let class = json!({
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "description": description,
        });
        match registry.create(target, class, &options).await {
            Ok(_) | Err(ApiError::AlreadyExists { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
