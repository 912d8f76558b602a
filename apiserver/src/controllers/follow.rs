//! Following one kind's watch cache: what the built-in controllers are fed by, as kube's
//! are by informers. A follower sends the kind's objects as listed, then each change, and
//! lists again when its subscription ends (the cache listed again, or the follower fell
//! behind), so its controller always rebuilds from a whole list before new changes.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::mpsc;

use kapi_registry::Registry;
use kapi_storage::cache::{CachedEvent, End, Snapshot};

/// What a follower hands its controller.
pub(super) enum Followed {
    /// Every object of kind `kind` (an index into the scheme's kinds) as listed: at start,
    /// and again when the follower had to list again.
    Listed { kind: usize, snapshot: Snapshot },
    /// One change of an object of kind `kind`.
    Changed {
        kind: usize,
        event: Arc<CachedEvent>,
    },
}

/// The slot of kind `kind` of `group` in the registry's scheme, when the registry is
/// still there and serves it: what a controller follows (those of the CRD and APIService
/// sets).
#[cfg(any(feature = "crds", feature = "aggregation"))]
pub(super) fn slot(registry: &Weak<Registry>, group: &str, kind: &str) -> Option<usize> {
    let strong = registry.upgrade()?;
    let scheme = strong.scheme();
    scheme.by_kind(group, kind).and_then(|k| scheme.slot_of(&k))
}

/// Follows the watch cache of kind `kind` into `sender` until the registry or the
/// receiver is gone; `controller` names who follows, in logs.
pub(super) async fn follow(
    registry: Weak<Registry>,
    kind: usize,
    sender: mpsc::UnboundedSender<Followed>,
    controller: &'static str,
) {
    loop {
        let listed = {
            let Some(strong) = registry.upgrade() else {
                return;
            };
            // A kind no longer served (its definition deleted) has nothing to follow.
            let Some(entry) = strong.scheme().kind(kind) else {
                return;
            };
            strong
                .follow_stored(entry.info.group, entry.info.kind)
                .await
        };
        let mut subscription = match listed {
            Ok((snapshot, subscription)) => {
                if sender.send(Followed::Listed { kind, snapshot }).is_err() {
                    return;
                }
                subscription
            }
            Err(error) => {
                tracing::warn!(%error, kind, controller, "cannot list; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        loop {
            match subscription.next().await {
                Ok(event) => {
                    if sender.send(Followed::Changed { kind, event }).is_err() {
                        return;
                    }
                }
                Err(End::Closed) => return,
                Err(end) => {
                    tracing::info!(kind, ?end, controller, "listing again");
                    break;
                }
            }
        }
    }
}

/// Takes what a follower saw into `objects` (by name, decoded as `T` with their
/// resourceVersion, which stored bytes leave out; `meta` reaches a `T`'s metadata).
#[cfg(any(feature = "crds", feature = "aggregation"))]
pub(super) fn take<T: serde::de::DeserializeOwned>(
    objects: &mut std::collections::BTreeMap<String, T>,
    followed: Followed,
    meta: fn(&mut T) -> &mut kapi_core::meta::ObjectMeta,
) {
    let decode = |object: &kapi_storage::cache::CachedObject| {
        let mut typed: T = serde_json::from_slice(&object.kv.value).ok()?;
        let metadata = meta(&mut typed);
        metadata.resource_version = Some(object.kv.mod_revision.to_string());
        Some((metadata.name.clone().unwrap_or_default(), typed))
    };
    match followed {
        Followed::Listed { snapshot, .. } => {
            objects.clear();
            objects.extend(snapshot.objects.iter().filter_map(|o| decode(o)));
        }
        Followed::Changed { event, .. } => match &event.change {
            kapi_storage::cache::Change::Put { object, .. } => objects.extend(decode(object)),
            kapi_storage::cache::Change::Delete { prev } => {
                if let Some((name, _)) = decode(prev) {
                    objects.remove(&name);
                }
            }
            kapi_storage::cache::Change::Progress => {}
        },
    }
}
