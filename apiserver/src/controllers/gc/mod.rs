//! The garbage collector (kube-controller-manager's `garbagecollector`), built in: owner
//! references make dependents go with their owner.
//!
//! Like kube's, it is fed by watches, not by passes over every object: one follower per
//! kind that stores objects reads that kind's watch cache (a list, then its changes) into
//! one `Graph` of the objects that have owners, indexed by owner, and of the owners that
//! wait for their dependents. Each change queues what it makes worth looking at again
//! (`Work`), and the collector:
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
//! replica that loses a race sees the change that beat it and looks again, and nothing is
//! deleted on a stale view. A restart loses nothing: the first lists queue every dependent
//! and every waiting owner, judged once every kind is listed. Work that fails (storage
//! unavailable) is retried with a back-off; its cost is per change, so a large, quiet store
//! costs nothing.

mod actions;
mod graph;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Weak;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;

use self::graph::{Graph, Work};
use super::Retry;
use super::follow::{Followed, follow};
use kapi_registry::Registry;

/// The first wait before failed work is tried again; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait before failed work is tried again.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How often the collector looks for kinds installed since (CustomResourceDefinitions).
const NEW_KINDS: Duration = Duration::from_secs(1);

/// Runs the collector until the registry goes.
pub async fn run(registry: Weak<Registry>) {
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let mut followers = JoinSet::new();
    // The kinds not listed yet. Nothing is judged before every kind is (kube's collector
    // waits for its informers to sync): an owner judged before its dependents' kind was
    // listed would look free of them, and lose its `orphan` or `foregroundDeletion`
    // finalizer too early.
    let mut unlisted = BTreeSet::new();
    // The kinds followed, and the scheme generation they were taken from: kinds installed
    // later (CustomResourceDefinitions) are followed once seen.
    let mut followed = BTreeSet::new();
    let mut generation = None;
    let mut follow_new_kinds = |unlisted: &mut BTreeSet<usize>| -> bool {
        let Some(strong) = registry.upgrade() else {
            return false;
        };
        let scheme = strong.scheme();
        if generation == Some(scheme.generation()) {
            return true;
        }
        generation = Some(scheme.generation());
        let kinds = scheme.kinds();
        // A kind gone (its definition deleted) is listed no more: it must not hold the
        // collector back, and a kind installed again in its slot is followed anew.
        followed.retain(|kind| {
            let served = kinds.get(*kind).is_some();
            if !served {
                unlisted.remove(kind);
            }
            served
        });
        for (kind, entry) in kinds.slots() {
            if entry.info.stores_objects() && followed.insert(kind) {
                followers.spawn(follow(
                    registry.clone(),
                    kind,
                    sender.clone(),
                    "garbage collector",
                ));
                unlisted.insert(kind);
            }
        }
        true
    };
    if !follow_new_kinds(&mut unlisted) {
        return;
    }
    let mut graph = Graph::default();
    let mut queue = BTreeSet::new();
    let mut retries: BTreeMap<Work, Retry> = BTreeMap::new();
    loop {
        if !follow_new_kinds(&mut unlisted) {
            return;
        }
        // Take in every change that has arrived before judging anything, so that work is
        // judged on the newest view.
        loop {
            match receiver.try_recv() {
                Ok(message) => take(&mut graph, message, &mut unlisted, &mut queue),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => return,
            }
        }
        let now = Instant::now();
        for (work, retry) in &retries {
            if retry.due <= now {
                queue.insert(work.clone());
            }
        }
        let work = if unlisted.is_empty() {
            queue.pop_first()
        } else {
            None
        };
        let Some(work) = work else {
            let next_retry =
                (retries.values().map(|retry| retry.due).min()).filter(|_| unlisted.is_empty());
            tokio::select! {
                message = receiver.recv() => match message {
                    Some(message) => take(&mut graph, message, &mut unlisted, &mut queue),
                    None => return,
                },
                () = tokio::time::sleep_until(next_retry.unwrap_or(now)), if next_retry.is_some() => {}
                () = tokio::time::sleep(NEW_KINDS) => {
                    if !follow_new_kinds(&mut unlisted) {
                        return;
                    }
                }
            }
            continue;
        };
        let Some(strong) = registry.upgrade() else {
            return;
        };
        let result = match &work {
            Work::Dependent(key) => actions::judge_dependent(&strong, &graph, key).await,
            Work::Owner(kind, key) => actions::let_owner_go(&strong, &graph, *kind, key).await,
        };
        drop(strong);
        match result {
            Ok(()) => {
                retries.remove(&work);
            }
            Err(error) => {
                tracing::warn!(%error, ?work, "garbage collector: retrying");
                (retries.entry(work))
                    .or_insert_with(|| Retry::now(FIRST_BACKOFF))
                    .again(MAX_BACKOFF);
            }
        }
    }
}

/// Takes one follower's message into the graph, queueing what it makes worth looking at;
/// a list takes its kind off `unlisted`.
fn take(
    graph: &mut Graph,
    message: Followed,
    unlisted: &mut BTreeSet<usize>,
    queue: &mut BTreeSet<Work>,
) {
    match message {
        Followed::Listed { kind, snapshot } => {
            unlisted.remove(&kind);
            graph.forget_kind(kind);
            for object in &snapshot.objects {
                graph.put_object(kind, object, queue);
            }
        }
        Followed::Changed { kind, event } => graph.apply(kind, &event.change, queue),
    }
}
