//! The feed of a cache: list, then follow one storage watch of the prefix (kube's
//! reflector `ListAndWatch` under the cacher).
//!
//! The list is read in pages, every page at the first one's revision (one snapshot, as
//! kube's reflector pages its list): a collection of a million objects is not one etcd
//! request, which its deadline would cut. A page refused because its revision was
//! compacted meanwhile starts the list again.
//!
//! A failed or ended watch is re-established from the last revision applied, with a
//! backoff, so a storage outage (etcd restarting, a lagging watch) costs watchers nothing;
//! only a compacted revision forces a new list, which resets the cache (after the backoff
//! when the revision compacted is the one just listed, so that it never spins). The first
//! list of an empty store is the exception: it is published only once its watch is open, so
//! that listing again after a racing write resets nobody. The task holds the storage
//! weakly: when the storage is dropped the feed ends and so do the watchers.

use std::sync::Weak;
use std::time::Duration;

use futures_util::StreamExt;

use super::Cache;
use crate::{Error, ListRequest, ListResponse, Revision, Storage};

/// The first and the longest wait between failed attempts.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));

type WeakCache = std::sync::Weak<Cache>;

/// Runs until the cache or the storage is dropped.
pub(super) async fn run(cache: WeakCache, storage: Weak<dyn Storage>) {
    let mut backoff = BACKOFF.0;
    'list: loop {
        let Some((prefix, page)) = cache.upgrade().map(|c| (c.prefix.clone(), c.list_page()))
        else {
            return;
        };
        let Some(store) = storage.upgrade() else {
            return closed(&cache);
        };
        let listed = list_all(&*store, &prefix, page).await;
        drop(store);
        // A list at revision 0 (an empty store) is published once its watch is open and
        // nothing was written meanwhile: a list made again (below) would otherwise reset
        // the watchers that came in between. Any other is published at once, as kube's
        // reflector replaces its store before it watches.
        let (mut listed, mut revision) = match listed {
            Ok(list) if list.revision == 0 => (Some(list.items), 0),
            Ok(list) => {
                let Some(cache) = cache.upgrade() else { return };
                cache.replace(list.items, list.revision);
                (None, list.revision)
            }
            Err(error) => {
                let wait = failing("list", &error, &mut backoff);
                tokio::time::sleep(wait).await;
                continue 'list;
            }
        };
        let listed_at = revision;
        loop {
            let Some(store) = storage.upgrade() else {
                return closed(&cache);
            };
            let watched = store.watch(&prefix, revision).await;
            drop(store);
            let mut events = match watched {
                // Listed from a store never written to: revision 0 asks for changes "from
                // now", which misses a write committed between the list and the watch.
                // Such a write makes the store's revision move: list again.
                Ok(_) if revision == 0 && current_revision(&storage).await != Some(0) => {
                    continue 'list;
                }
                Ok(events) => {
                    backoff = BACKOFF.0;
                    if let Some(items) = listed.take() {
                        let Some(cache) = cache.upgrade() else { return };
                        cache.replace(items, listed_at);
                    }
                    events
                }
                Err(error @ Error::Compacted { .. }) => {
                    // Compacted at the revision just listed: storage is compacting faster
                    // than the cache lists; wait before listing again rather than spin.
                    if revision == listed_at {
                        tokio::time::sleep(failing("watch", &error, &mut backoff)).await;
                    }
                    continue 'list;
                }
                Err(error) => {
                    let wait = failing("watch", &error, &mut backoff);
                    tokio::time::sleep(wait).await;
                    continue;
                }
            };
            while let Some(item) = events.next().await {
                match item {
                    Ok(event) => {
                        revision = revision.max(event.revision());
                        let Some(cache) = cache.upgrade() else { return };
                        cache.apply(event);
                        backoff = BACKOFF.0;
                    }
                    Err(Error::Compacted { .. }) => continue 'list,
                    Err(error) => {
                        let wait = failing("watch", &error, &mut backoff);
                        tokio::time::sleep(wait).await;
                        break;
                    }
                }
            }
            // The stream ended: the storage closed, or will be watched again.
            if storage.strong_count() == 0 {
                return closed(&cache);
            }
            tokio::time::sleep(BACKOFF.0).await;
        }
    }
}

/// Everything under `prefix`, read `page` keys at a time at the first page's revision.
async fn list_all(store: &dyn Storage, prefix: &str, page: usize) -> Result<ListResponse, Error> {
    let request = || ListRequest::prefix(prefix).limit(page).without_remaining();
    let mut list = store.list(request()).await?;
    while list.more {
        let Some(last) = list.items.last().map(|kv| kv.key.clone()) else {
            return Err(Error::Internal(format!(
                "listing {prefix}: a page with more to follow was empty"
            )));
        };
        let next = (store.list(request().start_after(last).at(list.revision))).await?;
        list.items.extend(next.items);
        list.more = next.more;
    }
    Ok(list)
}

/// Logs a failure; returns how long to wait before the next attempt, doubling `backoff`.
fn failing(what: &str, error: &Error, backoff: &mut Duration) -> Duration {
    tracing::warn!(%error, ?backoff, "watch cache: {what} failed; retrying");
    let wait = *backoff;
    *backoff = (*backoff * 2).min(BACKOFF.1);
    wait
}

fn closed(cache: &WeakCache) {
    if let Some(cache) = cache.upgrade() {
        cache.storage_closed();
    }
}

/// The store's current revision, when it answers.
async fn current_revision(storage: &Weak<dyn Storage>) -> Option<Revision> {
    storage.upgrade()?.current_revision().await.ok()
}
