//! Periodic compaction, as kube-apiserver's compactor (`storage/etcd3/compact.go`): every
//! interval, compact the store at the revision it had one interval earlier, so at least
//! one interval of history stays for watches and continue tokens that started before it.
//!
//! Several servers on one store may each run it: a revision already compacted is not an
//! error worth more than a debug line.

use std::sync::{Arc, Weak};
use std::time::Duration;

use super::{Error, Revision, Storage};

/// kube-apiserver's `--etcd-compaction-interval` default.
pub const DEFAULT_COMPACTION_INTERVAL: Duration = Duration::from_secs(300);

/// Starts compacting `storage` every `interval` on the current tokio runtime. The task
/// ends with the returned handle or when the storage is dropped.
pub fn start(storage: &Arc<dyn Storage>, interval: Duration) -> tokio::task::JoinHandle<()> {
    let storage = Arc::downgrade(storage);
    tokio::spawn(run(storage, interval))
}

async fn run(storage: Weak<dyn Storage>, interval: Duration) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    // The revision seen at the previous tick: compacting there keeps one interval.
    let mut previous: Option<Revision> = None;
    loop {
        ticks.tick().await;
        let Some(store) = storage.upgrade() else {
            return;
        };
        if let Some(revision) = previous.filter(|r| *r > 0) {
            match store.compact(revision).await {
                Ok(()) => tracing::info!(revision, "compacted the store"),
                Err(Error::Compacted { .. }) => {
                    tracing::debug!(revision, "already compacted");
                }
                Err(error) => tracing::warn!(%error, revision, "compaction failed"),
            }
        }
        previous = match store.current_revision().await {
            Ok(revision) => Some(revision),
            Err(error) => {
                tracing::warn!(%error, "compaction: cannot read the current revision");
                None
            }
        };
    }
}
