//! What the collector does for one piece of [`Work`](super::graph::Work): judge a dependent
//! by its owners (kube's `attemptToDeleteItem`), or let an owner that waits for its
//! dependents go on (kube's `orphanDependents` and the foreground finalizer's removal).
//! Every write is conditional: a delete carries the dependent's uid as its precondition, a
//! patch the revision the collector saw; a conflict or a missing object is left alone, as
//! the change that caused it reaches the collector as a change of its own.

use serde_json::{Value, json};

use super::graph::{Graph, Node};
use kapi_core::error::ApiError;
use kapi_core::meta::{DeleteOptions, Preconditions};
use kapi_core::scheme::KindEntry;
use kapi_registry::{FOREGROUND, ORPHAN, PatchType, Registry, Target, WriteOptions};

/// The field manager of the collector's writes.
const MANAGER: &str = "garbage-collector";

/// Judges the dependent at `key`: an owner that exists and is not deleting in the
/// foreground keeps it, and its references to the others are taken off; otherwise it is
/// deleted: in the foreground when owners wait for it and it has dependents of its own,
/// else in the background (its owners are all gone, checked in the cache, then live, or
/// wait for it).
pub(super) async fn judge_dependent(
    registry: &Registry,
    graph: &Graph,
    key: &str,
) -> Result<(), ApiError> {
    let Some(node) = graph.dependent(key) else {
        return Ok(());
    };
    if node.deleting {
        return Ok(());
    }
    let (mut solid, mut dropped, mut waiting, mut unknown) = (false, Vec::new(), false, false);
    for reference in &node.owners {
        let uid = reference
            .get("uid")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if graph.waiting(uid).is_some_and(|owner| owner.foreground) {
            waiting = true;
            dropped.push(uid);
            continue;
        }
        match (registry)
            .owner_exists(node.namespace.as_deref(), reference)
            .await?
        {
            Some(true) => solid = true,
            Some(false) => dropped.push(uid),
            None => unknown = true,
        }
    }
    if unknown {
        // An owner of a kind not served here: whether it exists cannot be told, so the
        // dependent is left as it is (kube's collector cannot map it either).
        return Ok(());
    }
    if solid {
        if !dropped.is_empty() {
            drop_owners(registry, node, &dropped).await?;
        }
    } else if waiting && graph.has_dependents(&node.uid) {
        delete(registry, node, "Foreground").await?;
    } else {
        delete(registry, node, "Background").await?;
    }
    Ok(())
}

/// Lets the owner of kind `kind` at `key` go on if it waits for the collector: orphaning
/// takes its reference off each dependent, then the `orphan` finalizer off the owner;
/// foreground deletion takes `foregroundDeletion` off once no dependent with
/// `blockOwnerDeletion` is left (the dependents themselves are deleted as they are judged).
pub(super) async fn let_owner_go(
    registry: &Registry,
    graph: &Graph,
    kind: usize,
    key: &str,
) -> Result<(), ApiError> {
    let Some(owner) = (registry.cached(kind, key)).and_then(|object| Node::of(kind, &object))
    else {
        return Ok(());
    };
    if !owner.deleting {
        return Ok(());
    }
    let mine: Vec<&Node> = graph.dependents_of(&owner.uid).collect();
    if owner.has_finalizer(ORPHAN) {
        for dependent in &mine {
            drop_owners(registry, dependent, &[&owner.uid]).await?;
        }
        if mine.is_empty() {
            remove_finalizer(registry, &owner, ORPHAN).await?;
        }
    }
    if owner.has_finalizer(FOREGROUND) {
        let blocking = mine.iter().any(|dependent| {
            dependent.owners.iter().any(|reference| {
                reference.get("uid").and_then(Value::as_str) == Some(owner.uid.as_str())
                    && reference["blockOwnerDeletion"] == json!(true)
            })
        });
        if !blocking {
            remove_finalizer(registry, &owner, FOREGROUND).await?;
        }
    }
    Ok(())
}

fn target<'a>(kind: &'a KindEntry, node: &'a Node) -> Target<'a> {
    Target {
        kind,
        version: kind.info.storage_version().name,
        namespace: node.namespace.as_deref(),
    }
}

/// Deletes `node` (if it is still the object seen: its uid is the precondition).
async fn delete(registry: &Registry, node: &Node, policy: &str) -> Result<(), ApiError> {
    let options = DeleteOptions {
        preconditions: Some(Preconditions {
            uid: Some(node.uid.clone()),
            resource_version: None,
        }),
        propagation_policy: Some(policy.to_owned()),
        ..DeleteOptions::default()
    };
    let Some(kind) = registry.scheme().kind(node.kind) else {
        return Ok(()); // no longer served: its objects went with its definition
    };
    match (registry)
        .delete(target(&kind, node), &node.name, &options)
        .await
    {
        Ok(_) | Err(ApiError::NotFound { .. } | ApiError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// A merge patch of `node`'s metadata at the revision seen.
async fn patch(registry: &Registry, node: &Node, mut metadata: Value) -> Result<(), ApiError> {
    metadata["resourceVersion"] = json!(node.revision.to_string());
    let options = WriteOptions {
        field_manager: Some(MANAGER.into()),
        ..WriteOptions::default()
    };
    let Some(kind) = registry.scheme().kind(node.kind) else {
        return Ok(()); // no longer served: its objects went with its definition
    };
    let result = registry
        .patch(
            target(&kind, node),
            &node.name,
            PatchType::Merge,
            json!({"metadata": metadata}),
            None,
            &options,
        )
        .await;
    match result {
        Ok(_) | Err(ApiError::NotFound { .. } | ApiError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Takes the references to the owners `uids` off `dependent`.
async fn drop_owners(registry: &Registry, dependent: &Node, uids: &[&str]) -> Result<(), ApiError> {
    let kept = (dependent.owners.iter()).filter(|owner| {
        let uid = owner.get("uid").and_then(Value::as_str).unwrap_or_default();
        !uids.contains(&uid)
    });
    let kept = merge_list(kept.collect());
    patch(registry, dependent, json!({"ownerReferences": kept})).await
}

/// Takes `finalizer` off `owner` (the last one gone, the registry deletes it).
async fn remove_finalizer(
    registry: &Registry,
    owner: &Node,
    finalizer: &str,
) -> Result<(), ApiError> {
    let kept = (owner.finalizers.iter()).filter(|f| *f != finalizer);
    let kept = merge_list(kept.collect());
    patch(registry, owner, json!({"finalizers": kept})).await
}

/// A list as a merge patch sets it: `null` when empty, which removes the field rather than
/// leaving `[]` behind.
fn merge_list<T: serde::Serialize>(items: Vec<T>) -> Value {
    if items.is_empty() {
        Value::Null
    } else {
        json!(items)
    }
}
