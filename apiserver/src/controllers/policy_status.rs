//! ValidatingAdmissionPolicies' status (kube-controller-manager's
//! `validatingadmissionpolicy-status-controller`): a policy whose generation is newer
//! than its `status.observedGeneration` is type checked (`policies::type_check`) and its
//! status written with the warnings and the generation observed, through the status
//! subresource, conditionally on what was read.

use kapi_core::error::ApiError;
use kapi_kinds::admissionregistration::{GROUP, TypeChecking, ValidatingAdmissionPolicy};
use kapi_registry::{ListOptions, Registry, Subresource, Target, WriteOptions};

/// The field manager of the controller's writes.
const MANAGER: &str = "validatingadmissionpolicy-status-controller";

/// One pass; busy when a write conflicted.
pub(crate) async fn sync(registry: &Registry) -> Result<bool, ApiError> {
    let Some(kind) = registry
        .scheme()
        .by_kind(GROUP, "ValidatingAdmissionPolicy")
    else {
        return Ok(false);
    };
    let target = Target {
        kind: &kind,
        version: "v1",
        namespace: None,
    };
    let cached = ListOptions {
        resource_version: Some("0".into()),
        ..ListOptions::default()
    };
    let mut busy = false;
    for object in registry.list(target, &cached).await?.items {
        let value = object.value();
        let generation = value["metadata"]["generation"].as_i64().unwrap_or(0);
        let observed = value["status"]["observedGeneration"].as_i64().unwrap_or(0);
        if generation <= observed {
            continue;
        }
        let policy = match serde_json::from_value::<ValidatingAdmissionPolicy>(value.clone()) {
            Ok(policy) => policy,
            Err(error) => {
                tracing::warn!(%error, "a ValidatingAdmissionPolicy that does not read is not checked");
                continue;
            }
        };
        let checking = TypeChecking {
            // Compiling against up to ten kinds' schemas leaves the worker.
            expression_warnings: kapi_registry::blocking(|| {
                crate::policies::type_check(registry, &policy)
            }),
        };
        let mut updated = value;
        updated["status"]["observedGeneration"] = generation.into();
        updated["status"]["typeChecking"] =
            serde_json::to_value(&checking).map_err(|e| ApiError::Internal(e.to_string()))?;
        let name = policy.metadata.name.clone().unwrap_or_default();
        let options = WriteOptions {
            field_manager: Some(MANAGER.to_owned()),
            ..WriteOptions::default()
        };
        match (registry.update(target, &name, updated, Some(Subresource::Status), &options)).await {
            Ok(_) => {}
            Err(ApiError::Conflict { .. } | ApiError::NotFound { .. }) => busy = true,
            // One policy's status refused leaves the others to be checked.
            Err(error) => tracing::warn!(%error, policy = name, "cannot write its status"),
        }
    }
    Ok(busy)
}
