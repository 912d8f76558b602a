//! What kube-apiserver does with its built-in kinds beyond storing them (feature
//! `builtin`): the Pod `binding` and `eviction` subresources and the `bindings` collection
//! (kube's `pkg/registry/core/pod/storage`), and the subresources that reach a node or a
//! Service's endpoints (`log`, `exec`, `attach`, `portforward`, `proxy`), answered as kube
//! answers them when nothing can serve them, since kapi runs no kubelets and proxies to no
//! endpoints. Each is an action or a connector of the registry, registered for the kinds
//! the scheme serves; they change objects through the registry only. ComponentStatuses are
//! probes made when read (`component_status`); the system PriorityClasses are made at
//! start (`priority_classes`).

mod binding;
mod component_status;
mod connect_options;
mod eviction;
mod nodes;
mod priority_classes;
pub mod services;

pub use priority_classes::bootstrap as bootstrap_priority_classes;

use std::sync::Arc;

use serde_json::{Value, json};

use kapi_core::error::ApiError;
use kapi_core::meta::Status;
use kapi_core::scheme::KindEntry;
use kapi_registry::{Registry, Target};
use kapi_storage::Storage;

/// Registers the actions, connectors and computed objects of the built-in kinds the scheme
/// serves; `storage` is what the objects are in (`etcd`: an etcd cluster), which the
/// ComponentStatuses probe.
pub fn register(registry: &Registry, storage: &Arc<dyn Storage>, etcd: bool) {
    let served = |group: &str, plural: &str| registry.scheme().by_resource(group, plural).is_some();
    if served("", "componentstatuses") {
        let statuses = component_status::ComponentStatuses {
            storage: Arc::clone(storage),
            storage_name: if etcd { "etcd-0" } else { "storage-0" },
        };
        registry.set_computed("", "ComponentStatus", Arc::new(statuses));
    }
    if served("", "pods") {
        let bind = Arc::new(binding::Bind);
        registry.set_action("", "pods", "binding", bind.clone());
        if served("", "bindings") {
            registry.set_action("", "bindings", "", bind);
        }
        registry.set_action("", "pods", "eviction", Arc::new(eviction::Evict));
        for subresource in ["log", "exec", "attach", "portforward", "proxy"] {
            registry.set_connector("", "pods", subresource, Arc::new(nodes::Pods));
        }
    }
    if served("", "services") {
        registry.set_connector("", "services", "proxy", Arc::new(nodes::Services));
    }
    if served("", "nodes") {
        registry.set_connector("", "nodes", "proxy", Arc::new(nodes::Nodes));
    }
}

/// The core group's `plural` in `v1`, in `namespace`.
pub(crate) fn core_kind(registry: &Registry, plural: &str) -> Result<Arc<KindEntry>, ApiError> {
    registry
        .scheme()
        .by_resource("", plural)
        .ok_or(ApiError::NoRoute)
}

/// `kind` in its storage version and `namespace`.
pub(crate) fn target<'a>(kind: &'a KindEntry, namespace: Option<&'a str>) -> Target<'a> {
    Target {
        kind,
        version: kind.info.storage_version().name,
        namespace,
    }
}

/// kube's answer to a create that returns no object: a `Success` Status with code 201.
fn success() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

/// A failure kube reports with a code and a message but no reason (a plain Go error,
/// which its handlers turn into a 500 without one).
fn plain_error(code: i32, message: String) -> ApiError {
    ApiError::Denied(Box::new(Status {
        kind: Some("Status".into()),
        api_version: Some("v1".into()),
        status: Some("Failure".into()),
        message: Some(message),
        code: Some(code),
        ..Status::default()
    }))
}

/// The value of `condition_type` in the `status.conditions` of `object`, with the time it
/// last changed.
fn condition<'a>(object: &'a Value, condition_type: &str) -> Option<&'a Value> {
    (object
        .pointer("/status/conditions")
        .and_then(Value::as_array))
    .into_iter()
    .flatten()
    .find(|c| c.get("type").and_then(Value::as_str) == Some(condition_type))
}

/// kube's `UpdatePodCondition`: sets `new` (a condition with `type` and `status`) among
/// `object`'s status conditions, replacing the one of its type wholesale; its transition
/// time is now unless the status stays.
fn set_condition(object: &mut Value, mut new: Value, now: &str) {
    let kept = condition(object, new["type"].as_str().unwrap_or_default())
        .filter(|old| old.get("status") == new.get("status"))
        .and_then(|old| old.get("lastTransitionTime").cloned());
    new["lastTransitionTime"] = kept.unwrap_or_else(|| json!(now));
    let conditions = (object
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut))
    .map(std::mem::take)
    .unwrap_or_default();
    let mut replaced = false;
    let mut conditions: Vec<Value> = (conditions.into_iter())
        .map(|c| match c.get("type") == new.get("type") {
            true => {
                replaced = true;
                new.clone()
            }
            false => c,
        })
        .collect();
    if !replaced {
        conditions.push(new);
    }
    kapi_core::unstructured::set_path(object, ".status.conditions", Value::Array(conditions));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_are_replaced_wholesale_and_keep_their_time_while_their_status_stays() {
        let mut pod = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"},
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastTransitionTime": "t0"},
        ]}});
        set_condition(
            &mut pod,
            json!({"type": "PodScheduled", "status": "True"}),
            "t1",
        );
        assert_eq!(
            pod["status"]["conditions"][1],
            json!({"type": "PodScheduled", "status": "True", "lastTransitionTime": "t1"})
        );
        set_condition(
            &mut pod,
            json!({"type": "PodScheduled", "status": "True"}),
            "t2",
        );
        assert_eq!(pod["status"]["conditions"][1]["lastTransitionTime"], "t1");
        let mut bare = json!({});
        set_condition(
            &mut bare,
            json!({"type": "DisruptionTarget", "status": "True"}),
            "t3",
        );
        assert_eq!(
            bare,
            json!({"status": {"conditions": [{"type": "DisruptionTarget", "status": "True", "lastTransitionTime": "t3"}]}})
        );
    }
}
