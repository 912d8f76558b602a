//! The namespace controller (kube's `namespace` controller and its
//! `namespacedResourcesDeleter`): for each terminating namespace, delete its content through
//! the registry's ordinary deletes (finalizers are honoured: an object they hold stays,
//! marked), report in the namespace's conditions what remains and which finalizers hold
//! it, and once nothing is left remove the `kubernetes` finalizer (`finalize`), which lets
//! the namespace go.
//!
//! Work is found again from storage on every pass, so a restart loses nothing; every write
//! is a delete (a missing object is fine) or a compare-and-swap, so replicas on one etcd
//! can all run it: they repeat each other's work, never undo it.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::ApiError;
use crate::meta::DeleteOptions;
use crate::registry::{NAMESPACE_FINALIZER, Registry, Target};

/// One pass over every terminating namespace; returns whether any is still there.
pub async fn sync_all(registry: &Registry) -> Result<bool, ApiError> {
    let mut busy = false;
    for name in registry.terminating_namespaces().await? {
        busy |= !sync(registry, &name).await?;
    }
    Ok(busy)
}

/// One pass over terminating namespace `name`; returns whether it is gone.
pub async fn sync(registry: &Registry, name: &str) -> Result<bool, ApiError> {
    let kinds = registry.scheme().kinds();
    let mut failures = Vec::new();
    for item in registry.namespace_content(name).await? {
        let deleting = item.object.pointer("/metadata/deletionTimestamp").is_some();
        let Some(object_name) = item
            .object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
        else {
            continue;
        };
        if deleting {
            continue;
        }
        let kind = &kinds[item.kind];
        let target = Target {
            kind,
            version: kind.info.storage_version().name,
            namespace: Some(name),
        };
        match registry
            .delete(target, object_name, &DeleteOptions::default())
            .await
        {
            Ok(_) | Err(ApiError::NotFound { .. }) => {}
            Err(error) => failures.push(format!("{}: {error}", kind.info.plural)),
        }
    }

    // What is left, and what holds it.
    let mut remaining: BTreeMap<String, usize> = BTreeMap::new();
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    let left = registry.namespace_content(name).await?;
    for item in &left {
        let info = kinds[item.kind].info;
        *remaining
            .entry(format!("{}.{}", info.plural, info.group))
            .or_default() += 1;
        let held = item
            .object
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array);
        for finalizer in held.into_iter().flatten().filter_map(Value::as_str) {
            *finalizers.entry(finalizer.to_owned()).or_default() += 1;
        }
    }
    registry
        .set_namespace_conditions(name, conditions(&failures, &remaining, &finalizers))
        .await?;
    if !left.is_empty() {
        return Ok(false);
    }
    registry.finalize_namespace(name, NAMESPACE_FINALIZER).await
}

/// kube's namespace conditions (`status_condition_utils.go`): each type is always
/// present, `False` with kube's reason and message while all is well.
fn conditions(
    failures: &[String],
    remaining: &BTreeMap<String, usize>,
    finalizers: &BTreeMap<String, usize>,
) -> Vec<Value> {
    let condition = |kind: &str, status: bool, reason: &str, message: String| {
        let status = if status { "True" } else { "False" };
        json!({"type": kind, "status": status, "reason": reason, "message": message})
    };
    let list = |counts: &BTreeMap<String, usize>, format: &dyn Fn(&str, usize) -> String| {
        (counts.iter())
            .map(|(k, n)| format(k, *n))
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        condition(
            "NamespaceDeletionDiscoveryFailure",
            false,
            "ResourcesDiscovered",
            "All resources successfully discovered".into(),
        ),
        condition(
            "NamespaceDeletionGroupVersionParsingFailure",
            false,
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed".into(),
        ),
        match failures.is_empty() {
            true => condition(
                "NamespaceDeletionContentFailure",
                false,
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization".into(),
            ),
            false => condition(
                "NamespaceDeletionContentFailure",
                true,
                "ContentDeletionFailed",
                format!(
                    "Failed to delete all resource types, {} remaining: {}",
                    failures.len(),
                    failures.join(", ")
                ),
            ),
        },
        match remaining.is_empty() {
            true => condition(
                "NamespaceContentRemaining",
                false,
                "ContentRemoved",
                "All content successfully removed".into(),
            ),
            false => condition(
                "NamespaceContentRemaining",
                true,
                "SomeResourcesRemain",
                format!(
                    "Some resources are remaining: {}",
                    list(remaining, &|resource, n| format!(
                        "{resource} has {n} resource instances"
                    ))
                ),
            ),
        },
        match finalizers.is_empty() {
            true => condition(
                "NamespaceFinalizersRemaining",
                false,
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished".into(),
            ),
            false => condition(
                "NamespaceFinalizersRemaining",
                true,
                "SomeFinalizersRemain",
                format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    list(finalizers, &|finalizer, n| format!(
                        "{finalizer} in {n} resource instances"
                    ))
                ),
            ),
        },
    ]
}
