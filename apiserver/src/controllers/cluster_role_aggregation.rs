//! ClusterRole aggregation (kube-controller-manager's `clusterrole-aggregation`
//! controller): a ClusterRole with an `aggregationRule` holds the rules of every other
//! ClusterRole whose labels one of its selectors matches, in the order of their names,
//! each rule once. Kube's `admin`, `edit` and `view` are built this way, so a new kind's
//! roles reach them by a label.
//!
//! Each pass lists the ClusterRoles from the watch cache and updates, conditionally on the
//! resourceVersion it read, every aggregated role whose rules differ from what they should
//! be; replicas doing the same meet a Conflict and read again on their next pass.

use serde_json::Value;

use kapi_core::error::ApiError;
use kapi_kinds::rbac::{ClusterRole, GROUP, PolicyRule};
use kapi_registry::{ListOptions, Registry, Target, WriteOptions};

/// The field manager of the controller's writes.
const MANAGER: &str = "clusterrole-aggregation-controller";

/// One pass; busy when a write conflicted.
pub async fn sync(registry: &Registry) -> Result<bool, ApiError> {
    let Some(kind) = registry.scheme().by_kind(GROUP, "ClusterRole") else {
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
    let listed = registry.list(target, &cached).await?.items;
    let mut roles: Vec<(Value, ClusterRole)> = (listed.into_iter())
        .filter_map(|object| {
            let role = serde_json::from_slice(&object.json()).ok()?;
            Some((object.value(), role))
        })
        .collect();
    roles.sort_by(|a, b| a.1.metadata.name.cmp(&b.1.metadata.name));
    let mut busy = false;
    for (value, role) in &roles {
        let Some(rule) = &role.aggregation_rule else {
            continue;
        };
        let mut rules: Vec<PolicyRule> = Vec::new();
        for (_, other) in &roles {
            if other.metadata.name == role.metadata.name {
                continue;
            }
            let labels = other.metadata.labels.clone().unwrap_or_default();
            if !rule
                .cluster_role_selectors
                .iter()
                .any(|s| s.matches(&labels))
            {
                continue;
            }
            for rule in &other.rules {
                if !rules.contains(rule) {
                    rules.push(rule.clone());
                }
            }
        }
        if rules == role.rules {
            continue;
        }
        let mut updated = value.clone();
        updated["rules"] =
            serde_json::to_value(&rules).map_err(|e| ApiError::Internal(e.to_string()))?;
        let name = role.metadata.name.clone().unwrap_or_default();
        let options = WriteOptions {
            field_manager: Some(MANAGER.to_owned()),
            ..WriteOptions::default()
        };
        match registry
            .update(target, &name, updated, None, &options)
            .await
        {
            Ok(_) => tracing::debug!(role = name, rules = rules.len(), "aggregated"),
            Err(ApiError::Conflict { .. } | ApiError::NotFound { .. }) => busy = true,
            Err(e) => return Err(e),
        }
    }
    Ok(busy)
}
