//! The namespace controller (kube's `namespace` controller and its
//! `namespacedResourcesDeleter`): for each terminating namespace, delete its content through
//! the registry's ordinary deletes (finalizers are honoured: an object they hold stays,
//! marked), report in the namespace's conditions what remains and which finalizers hold
//! it, and once nothing is left remove the `kubernetes` finalizer (`finalize`), which lets
//! the namespace go.
//!
//! It is fed by the namespaces' watch cache, as kube's is by its informer: a namespace
//! that turns terminating is worked on at once, and again, with a growing pause, while
//! content remains (finalizers hold it, or a delete failed); the rest of the time it costs
//! nothing. No content arrives meanwhile: a create is made under a guard on the
//! namespace's revision (`registry/create.rs`). The content itself is read live on each
//! pass, so nothing is judged on a lagging cache, and a restart loses nothing (the first
//! list finds every terminating namespace again). Every write is a delete (a missing object is fine) or a
//! compare-and-swap, so replicas on one etcd can all run it: they repeat each other's
//! work, never undo it.

use std::collections::BTreeMap;
use std::sync::Weak;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::Retry;
use super::follow::{Followed, follow};
use kapi_core::error::ApiError;
use kapi_core::meta::DeleteOptions;
use kapi_registry::{NAMESPACE_FINALIZER, Registry, Target};
use kapi_storage::cache::{CachedObject, Change};

/// The first pause before a namespace whose content remains is worked on again.
const FIRST_PAUSE: Duration = Duration::from_millis(200);
/// The longest such pause.
const MAX_PAUSE: Duration = Duration::from_secs(2);

/// Runs the controller until the registry goes (at once when the scheme has no
/// namespaces).
pub async fn run(registry: Weak<Registry>) {
    let kind = {
        let Some(strong) = registry.upgrade() else {
            return;
        };
        let scheme = strong.scheme();
        let Some(namespaces) = scheme.by_resource("", "namespaces") else {
            return;
        };
        match scheme.slot_of(&namespaces) {
            Some(kind) => kind,
            None => return,
        }
    };
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let follower = tokio::spawn(follow(
        registry.clone(),
        kind,
        sender,
        "namespace controller",
    ));
    let mut terminating: BTreeMap<String, Retry> = BTreeMap::new();
    loop {
        while let Ok(followed) = receiver.try_recv() {
            take(&mut terminating, followed);
        }
        let now = Instant::now();
        let next = (terminating.iter())
            .min_by_key(|(_, retry)| retry.due)
            .map(|(name, retry)| (name.clone(), retry.due));
        let name = match next {
            Some((name, at)) if at <= now => name,
            next => {
                tokio::select! {
                    followed = receiver.recv() => match followed {
                        Some(followed) => take(&mut terminating, followed),
                        None => break,
                    },
                    () = tokio::time::sleep_until(next.map_or(now, |(_, at)| at)), if next.is_some() => {}
                }
                continue;
            }
        };
        let Some(strong) = registry.upgrade() else {
            break;
        };
        let gone = sync(&strong, &name).await;
        drop(strong);
        match gone {
            Ok(true) => {
                terminating.remove(&name);
            }
            result => {
                if let Err(error) = result {
                    tracing::warn!(%error, namespace = name, "namespace controller: retrying");
                }
                if let Some(retry) = terminating.get_mut(&name) {
                    retry.again(MAX_PAUSE);
                }
            }
        }
    }
    follower.abort();
}

/// Takes what the follower saw into the set of terminating namespaces: a namespace that
/// turns terminating is due at once; one already known keeps its pause (the controller's
/// own writes of its conditions change it too).
fn take(terminating: &mut BTreeMap<String, Retry>, followed: Followed) {
    let due_now = || Retry::now(FIRST_PAUSE);
    match followed {
        Followed::Listed { snapshot, .. } => {
            terminating.clear();
            for object in &snapshot.objects {
                if let Some(Metadata {
                    name,
                    deletion_timestamp: Some(_),
                }) = metadata(object)
                {
                    terminating.insert(name, due_now());
                }
            }
        }
        Followed::Changed { event, .. } => match &event.change {
            Change::Put { object, .. } => match metadata(object) {
                Some(Metadata {
                    name,
                    deletion_timestamp: Some(_),
                }) => {
                    terminating.entry(name).or_insert_with(due_now);
                }
                Some(Metadata { name, .. }) => {
                    terminating.remove(&name);
                }
                None => {}
            },
            Change::Delete { prev } => {
                if let Some(Metadata { name, .. }) = metadata(prev) {
                    terminating.remove(&name);
                }
            }
            Change::Progress => {}
        },
    }
}

/// The part of a stored namespace's metadata the controller reads.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    name: String,
    deletion_timestamp: Option<serde::de::IgnoredAny>,
}

/// The metadata of a cached namespace (`None` if it does not decode).
fn metadata(object: &CachedObject) -> Option<Metadata> {
    #[derive(serde::Deserialize)]
    struct Stored {
        metadata: Metadata,
    }
    serde_json::from_slice::<Stored>(&object.kv.value)
        .ok()
        .map(|stored| stored.metadata)
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
        let Some(kind) = kinds.get(item.kind) else {
            continue;
        };
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
        let Some(info) = kinds.get(item.kind).map(|k| k.info) else {
            continue;
        };
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
