//! Warning Events about Services (`events.k8s.io/v1`), as kube's repair controllers
//! record them through their event recorders: on the Service, from the controller named
//! by `reportingController`.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;

use kapi_kinds::builtin::core::v1::Service;
use kapi_registry::{Registry, Target, WriteOptions};

/// Records a Warning Event on `service`: `reason`, `action`, `note`, from `controller`.
pub(super) async fn warn(
    registry: &Registry,
    controller: &str,
    service: &Service,
    reason: &str,
    action: &str,
    note: &str,
) {
    let Some(events) = registry.scheme().by_resource("events.k8s.io", "events") else {
        return;
    };
    let (name, namespace) = (
        service.metadata.name.as_deref().unwrap_or_default(),
        service.metadata.namespace.as_deref().unwrap_or("default"),
    );
    let nanos = (SystemTime::now().duration_since(UNIX_EPOCH)).map_or(0, |d| d.as_nanos());
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into());
    let event = json!({
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": format!("{name}.{nanos:x}"), "namespace": namespace},
        "eventTime": humantime::format_rfc3339_micros(SystemTime::now()).to_string(),
        "reportingController": controller,
        "reportingInstance": format!("{controller}-{host}"),
        "action": action,
        "reason": reason,
        "regarding": {
            "kind": "Service",
            "namespace": namespace,
            "name": name,
            "uid": service.metadata.uid,
            "apiVersion": "v1",
            "resourceVersion": service.metadata.resource_version,
        },
        "note": note,
        "type": "Warning",
    });
    let target = Target {
        kind: &events,
        version: "v1",
        namespace: Some(namespace),
    };
    let options = WriteOptions::default();
    if let Err(error) = registry.create(target, event, &options).await {
        tracing::warn!(%error, reason, service = name, "cannot record an event");
    }
}
