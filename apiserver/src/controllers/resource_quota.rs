//! The resource quota controller (kube-controller-manager's `resourcequota` controller):
//! every ResourceQuota's status kept current: `status.hard` its `spec.hard`, `status.used`
//! the usage its namespace has of each (zero for those not used; none for resources kapi
//! does not count). Each pass recounts every quota and writes the statuses that changed
//! (compare-and-swap: a quota charged by admission meanwhile is recounted at the next
//! pass), which is how usage freed by deletes comes back (kube's replenishment) and how a
//! new quota is enforced within a second.

use serde_json::{Value, json};

use crate::quota;
use kapi_core::error::ApiError;
use kapi_registry::{Registry, Subresource, Target};

/// One pass over every ResourceQuota; whether work is left (a status that could not be
/// written).
pub(crate) async fn sync(registry: &Registry) -> Result<bool, ApiError> {
    let Some(kind) = registry.scheme().by_resource("", "resourcequotas") else {
        return Ok(false);
    };
    let all = Target {
        kind: &kind,
        version: "v1",
        namespace: None,
    };
    let quotas = registry.list(all, &Default::default()).await?;
    let mut left = false;
    for item in &quotas.items {
        let stored = item.value();
        let (Some(name), Some(namespace)) = (
            stored["metadata"]["name"].as_str(),
            stored["metadata"]["namespace"].as_str(),
        ) else {
            continue;
        };
        if stored.pointer("/metadata/deletionTimestamp").is_some() {
            continue;
        }
        let used = quota::namespace_usage(registry, namespace, &stored).await?;
        let hard = stored["spec"]["hard"].clone();
        let status = json!({"hard": if hard.is_null() { json!({}) } else { hard }, "used": quota::to_json(&used)});
        if same(&stored["status"], &status) {
            continue;
        }
        let mut updated = stored.clone();
        updated["status"] = status;
        let target = Target {
            namespace: Some(namespace),
            ..all
        };
        let options = super::manager_writes();
        match registry
            .update(target, name, updated, Some(Subresource::Status), &options)
            .await
        {
            Ok(_) | Err(ApiError::NotFound { .. }) => {}
            Err(ApiError::Conflict { .. }) => left = true,
            Err(error) => return Err(error),
        }
    }
    Ok(left)
}

/// Whether two statuses say the same (quantities compared by value).
fn same(stored: &Value, wanted: &Value) -> bool {
    ["hard", "used"].iter().all(|field| {
        quota::from_json(&stored[*field]) == quota::from_json(&wanted[*field])
            && stored[*field].as_object().map_or(0, |m| m.len())
                == wanted[*field].as_object().map_or(0, |m| m.len())
    })
}
