//! The garbage collector (kube-controller-manager's `garbagecollector`), built in: owner
//! references make dependents go with their owner.
//!
//! Each pass reads every object from the watch cache and:
//!
//! - **orphans** the dependents of an owner being deleted with the `orphan` finalizer
//!   (`propagationPolicy: Orphan`): takes that owner's reference off each of them, then the
//!   finalizer off the owner, which lets it go;
//! - deletes, **in the foreground**, the dependents of an owner being deleted with the
//!   `foregroundDeletion` finalizer (`Foreground`), and takes the finalizer off once no
//!   dependent with `blockOwnerDeletion: true` is left;
//! - **collects** dependents none of whose owners exist any more (`Background`, the
//!   default: the owner went at once) or ever did (a uid no object has);
//! - keeps a dependent one of whose owners exists (and is not deleting in the foreground),
//!   taking the references to its other owners off: those that are gone, and those that
//!   wait for their dependents, which then no longer wait for this one.
//!
//! The cache may lag: before a dependent is deleted for a missing owner, each owner is
//! looked up with a live read (kube's collector verifies the same way), and every write is
//! conditional (a delete carries the dependent's uid as precondition, a patch its
//! resourceVersion). So every replica on one etcd may run it: no leader is needed, a
//! replica that loses a race retries on its next pass, and nothing is deleted on a stale
//! view. A restart loses nothing: the work is what is stored.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::ApiError;
use crate::meta::{DeleteOptions, Preconditions};
use crate::registry::{
    Content, FOREGROUND, ListOptions, ORPHAN, PatchType, Registry, Target, WriteOptions,
};

/// The field manager of the collector's writes.
const MANAGER: &str = "garbage-collector";

/// One object as the collector sees it.
struct Node<'a> {
    item: &'a Content,
    uid: &'a str,
    name: &'a str,
    namespace: Option<&'a str>,
    deleting: bool,
    finalizers: Vec<&'a str>,
    owners: Vec<&'a Value>,
}

impl<'a> Node<'a> {
    fn new(item: &'a Content) -> Node<'a> {
        let meta = |field: &str| item.object.pointer(&format!("/metadata/{field}"));
        let text = |field: &str| meta(field).and_then(Value::as_str);
        Node {
            item,
            uid: text("uid").unwrap_or_default(),
            name: text("name").unwrap_or_default(),
            namespace: text("namespace"),
            deleting: meta("deletionTimestamp").is_some_and(|t| !t.is_null()),
            finalizers: (meta("finalizers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten())
            .filter_map(Value::as_str)
            .collect(),
            owners: (meta("ownerReferences")
                .and_then(Value::as_array)
                .into_iter()
                .flatten())
            .collect(),
        }
    }
}

/// One pass; returns whether work remains (an owner still waits for its dependents).
pub async fn sync(registry: &Registry) -> Result<bool, ApiError> {
    let objects = registry
        .all_objects(&ListOptions {
            resource_version: Some("0".into()),
            ..ListOptions::default()
        })
        .await?;
    let nodes: Vec<Node<'_>> = objects.iter().map(Node::new).collect();
    let by_uid: BTreeMap<&str, &Node<'_>> = nodes.iter().map(|n| (n.uid, n)).collect();
    let mut dependents: BTreeMap<&str, Vec<(&Node<'_>, &Value)>> = BTreeMap::new();
    for node in &nodes {
        for owner in &node.owners {
            if let Some(uid) = owner.get("uid").and_then(Value::as_str) {
                dependents.entry(uid).or_default().push((node, *owner));
            }
        }
    }
    let mut busy = false;
    for owner in nodes.iter().filter(|n| n.deleting) {
        let mine = dependents
            .get(owner.uid)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if owner.finalizers.contains(&ORPHAN) {
            busy = true;
            for (dependent, _) in mine {
                drop_owners(registry, dependent, &[owner.uid]).await?;
            }
            if mine.is_empty() {
                remove_finalizer(registry, owner, ORPHAN).await?;
            }
        }
        if owner.finalizers.contains(&FOREGROUND) {
            busy = true;
            let blocking =
                (mine.iter()).any(|(_, reference)| reference["blockOwnerDeletion"] == json!(true));
            if !blocking {
                remove_finalizer(registry, owner, FOREGROUND).await?;
            }
        }
    }
    // Each dependent, by what its owners are (kube's attemptToDeleteItem): an owner that
    // exists and is not deleting in the foreground keeps it, and references to the others
    // are taken off; otherwise it is deleted: in the foreground when owners wait for it
    // and it has dependents of its own, else in the background (its owners are all gone,
    // checked in the cache, then live, or wait for it).
    for node in nodes.iter().filter(|n| !n.owners.is_empty() && !n.deleting) {
        let (mut solid, mut dropped, mut waiting, mut unknown) = (false, Vec::new(), false, false);
        for reference in &node.owners {
            let uid = reference
                .get("uid")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match by_uid.get(uid) {
                Some(owner) if owner.deleting && owner.finalizers.contains(&FOREGROUND) => {
                    waiting = true;
                    dropped.push(uid);
                }
                Some(_) => solid = true,
                None => match registry.owner_exists(node.namespace, reference).await? {
                    Some(true) => solid = true,
                    Some(false) => dropped.push(uid),
                    None => unknown = true,
                },
            }
        }
        if unknown {
            // An owner of a kind not served here: whether it exists cannot be told, so the
            // dependent is left as it is (kube's collector cannot map it either).
            continue;
        }
        if solid {
            if !dropped.is_empty() {
                drop_owners(registry, node, &dropped).await?;
            }
        } else if waiting && dependents.contains_key(node.uid) {
            delete(registry, node, "Foreground").await?;
        } else {
            delete(registry, node, "Background").await?;
        }
    }
    Ok(busy)
}

fn target<'a>(registry: &'a Registry, node: &Node<'a>) -> Target<'a> {
    let kind = &registry.scheme().kinds()[node.item.kind];
    Target {
        kind,
        version: kind.info.storage_version().name,
        namespace: node.namespace,
    }
}

/// Deletes `node` (if it is still the object seen: its uid is the precondition).
async fn delete(registry: &Registry, node: &Node<'_>, policy: &str) -> Result<(), ApiError> {
    let options = DeleteOptions {
        preconditions: Some(Preconditions {
            uid: Some(node.uid.to_owned()),
            resource_version: None,
        }),
        propagation_policy: Some(policy.to_owned()),
        ..DeleteOptions::default()
    };
    match registry
        .delete(target(registry, node), node.name, &options)
        .await
    {
        Ok(_) | Err(ApiError::NotFound { .. } | ApiError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// A merge patch of `node` at the resourceVersion seen (a conflict waits for the next
/// pass).
async fn patch(registry: &Registry, node: &Node<'_>, metadata: Value) -> Result<(), ApiError> {
    let mut metadata = metadata;
    metadata["resourceVersion"] = node.item.object["metadata"]["resourceVersion"].clone();
    let options = WriteOptions {
        field_manager: Some(MANAGER.into()),
        ..WriteOptions::default()
    };
    let result = registry
        .patch(
            target(registry, node),
            node.name,
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
async fn drop_owners(
    registry: &Registry,
    dependent: &Node<'_>,
    uids: &[&str],
) -> Result<(), ApiError> {
    let kept = (dependent.owners.iter().copied()).filter(|owner| {
        let uid = owner.get("uid").and_then(Value::as_str).unwrap_or_default();
        !uids.contains(&uid)
    });
    let kept = merge_list(kept.collect());
    patch(registry, dependent, json!({"ownerReferences": kept})).await
}

/// Takes `finalizer` off `owner` (the last one gone, the registry deletes it).
async fn remove_finalizer(
    registry: &Registry,
    owner: &Node<'_>,
    finalizer: &str,
) -> Result<(), ApiError> {
    let kept = (owner.finalizers.iter().copied()).filter(|f| *f != finalizer);
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
