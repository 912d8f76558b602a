//! Creates committed together: the creates that arrive while others are on their way to
//! etcd go in one transaction (group commit), as many as [`MOST_CREATES`].
//!
//! On two shared cores, etcd spends about 250 µs of CPU on a transaction of one put and
//! little more on one of eight (`cargo xtask bench`'s limits): per create, the transaction
//! is most of etcd's cost, and its gRPC call much of the server's. One transaction of
//! several creates puts them all in one etcd revision; each keeps a revision of its own by
//! its slot in the transaction (`revisions`), so a watch resumes after exactly the events
//! its client saw.
//!
//! Each create keeps the meaning it has alone: it succeeds only if its key is absent and
//! its guard (a namespace) unchanged, atomically. The transaction compares all of them;
//! when any fails, its failure branch reads the keys and guards, the creates whose own
//! condition failed get their answer (`AlreadyExists`, `Conflict`), and the others go
//! again in the next transaction. Every failed transaction answers at least one create,
//! so a batch ends. A create alone is the same transaction as before batching.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use etcd_client::{Compare, CompareOp, GetOptions, Txn, TxnOp, TxnOpResponse};
use tokio::sync::oneshot;

use super::errors::Context;
use super::revisions::{self, LAST, ours};
use super::{EtcdStorage, etcd_revision, key_value};
use crate::{Error, Guard, KeyValue, Result, Revision};

/// The most creates in one transaction: its failure branch reads each key and each guard,
/// within etcd's `--max-txn-ops` (128 by default).
const MOST_CREATES: usize = 48;

/// The most value bytes in one transaction, under etcd's `--max-request-bytes` (1.5 MiB by
/// default) with room for the keys and the framing. A create larger than this goes alone.
const MOST_BYTES: usize = 1024 * 1024;

/// How many transactions of creates may be on their way at once: etcd pipelines them,
/// and a transaction that waits for the one before would add its latency to every create.
const IN_FLIGHT: usize = 4;

/// How many times a committer lets the other ready tasks run before it takes the creates
/// waiting: creates under way can then join its transaction.
const GATHER_TURNS: usize = 4;

/// One create waiting for its transaction.
struct Pending {
    key: String,
    value: Bytes,
    guard: Option<Guard>,
    done: oneshot::Sender<Result<KeyValue>>,
}

/// What [`Creates`] holds between transactions.
#[derive(Default)]
struct Queue {
    /// How many committer tasks run.
    running: usize,
    /// The creates waiting, in arrival order.
    waiting: Vec<Pending>,
}

/// The creates of one storage, committed together.
pub(super) struct Creates {
    queue: Mutex<Queue>,
    etcd: EtcdStorage,
}

impl Creates {
    /// Commits through `etcd` (a copy without shared requests of its own).
    pub(super) fn new(etcd: EtcdStorage) -> Arc<Creates> {
        Arc::new(Creates {
            queue: Mutex::default(),
            etcd,
        })
    }

    /// Creates `key` (under `guard`), in the next transaction that has room.
    pub(super) async fn create(
        self: &Arc<Self>,
        key: String,
        value: Bytes,
        guard: Option<Guard>,
    ) -> Result<KeyValue> {
        let (done, answer) = oneshot::channel();
        let start = {
            let mut queue = self.lock();
            queue.waiting.push(Pending {
                key,
                value,
                guard,
                done,
            });
            let start = queue.running < IN_FLIGHT;
            if start {
                queue.running += 1;
            }
            start
        };
        if start {
            // A task of its own: a caller that goes away (its client disconnected) must not
            // take the creates of others with it.
            tokio::spawn(Arc::clone(self).commit());
        }
        // The transaction runs on the committer's task, under its own deadline: the
        // caller's wait ends by the caller's.
        let answer = async {
            (answer.await).unwrap_or_else(|_| {
                Err(Error::Internal("the create's transaction was lost".into()))
            })
        };
        self.etcd.awaited("a create", true, answer).await
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Commits the creates waiting, a transaction at a time, until none waits.
    async fn commit(self: Arc<Self>) {
        let committer = Committer(&self);
        loop {
            for _ in 0..GATHER_TURNS {
                tokio::task::yield_now().await;
            }
            let batch = {
                let mut queue = self.lock();
                if queue.waiting.is_empty() {
                    queue.running -= 1;
                    std::mem::forget(committer);
                    return;
                }
                take_batch(&mut queue.waiting)
            };
            let retry = self.commit_batch(batch).await;
            if !retry.is_empty() {
                // First in line again: they arrived before the creates waiting now.
                let mut queue = self.lock();
                let later = std::mem::replace(&mut queue.waiting, retry);
                queue.waiting.extend(later);
            }
        }
    }

    /// One transaction of `batch`; the creates it did not answer, to go again.
    async fn commit_batch(&self, batch: Vec<Pending>) -> Vec<Pending> {
        if batch.len() == 1 {
            self.each_alone(batch).await;
            return Vec::new();
        }
        // Each distinct condition once (two creates may expect different revisions of one
        // guard: then one of them fails).
        let guards: Vec<Guard> = {
            let mut seen = HashSet::new();
            (batch.iter().filter_map(|p| p.guard.as_ref()))
                .filter(|g| seen.insert((g.key.as_str(), g.mod_revision)))
                .cloned()
                .collect()
        };
        let last = batch.len() - 1;
        let mut compares = Vec::with_capacity(batch.len() + guards.len());
        let mut puts = Vec::with_capacity(batch.len());
        let mut reads = Vec::with_capacity(batch.len() + guards.len());
        for (i, pending) in batch.iter().enumerate() {
            let key = pending.key.as_str();
            compares.push(Compare::create_revision(key, CompareOp::Equal, 0));
            let slot = if i == last { LAST } else { i as u64 };
            puts.push(TxnOp::put(
                key,
                revisions::encode(&pending.value, slot),
                None,
            ));
            reads.push(TxnOp::get(key, Some(GetOptions::new().with_keys_only())));
        }
        for guard in &guards {
            let (key, expected) = (guard.key.as_str(), etcd_revision(guard.mod_revision));
            compares.push(Compare::mod_revision(key, CompareOp::Equal, expected));
            reads.push(TxnOp::get(key, None));
        }
        let size = batch.iter().map(|p| p.key.len() + p.value.len()).sum();
        let txn = Txn::new().when(compares).and_then(puts).or_else(reads);
        let response = match self
            .etcd
            .txn("a create", txn, Context::Write { size })
            .await
        {
            Ok(response) => response,
            // A cluster with a lower `--max-txn-ops` or `--max-request-bytes`: alone.
            Err(Error::InvalidArgument(_) | Error::TooLarge { .. }) => {
                self.each_alone(batch).await;
                return Vec::new();
            }
            Err(error) => {
                for pending in batch {
                    let _ = pending.done.send(Err(error.clone()));
                }
                return Vec::new();
            }
        };
        if response.succeeded() {
            let at = response.header().map(|h| h.revision());
            for (i, pending) in batch.into_iter().enumerate() {
                let slot = if i == last { LAST } else { i as u64 };
                let answer = match at {
                    Some(at) => Ok(KeyValue {
                        key: pending.key,
                        value: pending.value,
                        create_revision: ours(at, slot),
                        mod_revision: ours(at, slot),
                    }),
                    None => Err(Error::Internal(
                        "etcd answered without a response header".into(),
                    )),
                };
                let _ = pending.done.send(answer);
            }
            return Vec::new();
        }
        // Which conditions failed, as the failure branch read them at the same revision.
        let answers = response.op_responses();
        let exists: Vec<bool> = (answers.iter().take(batch.len()))
            .map(|op| matches!(op, TxnOpResponse::Get(get) if !get.kvs().is_empty()))
            .collect();
        let guards_now: HashMap<String, Revision> = (guards.into_iter())
            .zip(answers.get(batch.len()..).unwrap_or_default())
            .map(|(guard, op)| {
                let current = match op {
                    TxnOpResponse::Get(get) => (get.kvs().first().map(key_value))
                        .and_then(Result::ok)
                        .map_or(0, |kv| kv.mod_revision),
                    _ => 0,
                };
                (guard.key, current)
            })
            .collect();
        let mut retry = Vec::new();
        for (pending, exists) in batch.into_iter().zip(exists) {
            let guard_now = (pending.guard.as_ref())
                .map(|g| (g, guards_now.get(g.key.as_str()).copied().unwrap_or(0)));
            match guard_now {
                // As a create alone answers (`create_alone`): the guard first.
                Some((guard, current))
                    if etcd_revision(current) != etcd_revision(guard.mod_revision) =>
                {
                    let _ = pending.done.send(Err(Error::Conflict {
                        key: guard.key.clone(),
                        expected: guard.mod_revision,
                        current,
                    }));
                }
                _ if exists => {
                    let _ = (pending.done).send(Err(Error::AlreadyExists { key: pending.key }));
                }
                _ => retry.push(pending),
            }
        }
        retry
    }

    /// Commits each create of `batch` in a transaction of its own, as without batching.
    async fn each_alone(&self, batch: Vec<Pending>) {
        for pending in batch {
            let answer = (self.etcd)
                .create_alone(&pending.key, &pending.value, pending.guard.as_ref())
                .await;
            let _ = pending.done.send(answer);
        }
    }
}

/// A running committer; dropped only if it panicked (it is forgotten when it ends well):
/// it gives its place back and answers the creates still waiting with an error, so none
/// waits for a committer that will not come.
struct Committer<'a>(&'a Creates);

impl Drop for Committer<'_> {
    fn drop(&mut self) {
        let waiting = {
            let mut queue = self.0.lock();
            queue.running -= 1;
            std::mem::take(&mut queue.waiting)
        };
        for pending in waiting {
            let _ = (pending.done).send(Err(Error::Internal(
                "the transaction of creates failed".into(),
            )));
        }
    }
}

/// The creates of the next transaction, taken from `waiting`: in arrival order, at most
/// [`MOST_CREATES`] and [`MOST_BYTES`] (or one larger create alone), and each key once
/// (etcd refuses a transaction that puts a key twice; a second create of a key waits for
/// the first's answer, and then finds the key, or not).
fn take_batch(waiting: &mut Vec<Pending>) -> Vec<Pending> {
    let mut keys = HashSet::new();
    let mut bytes = 0;
    let mut batch = Vec::new();
    let mut rest = Vec::new();
    for pending in waiting.drain(..) {
        let size = pending.key.len() + pending.value.len();
        let fits = batch.is_empty() || (batch.len() < MOST_CREATES && bytes + size <= MOST_BYTES);
        if fits && keys.insert(pending.key.clone()) {
            bytes += size;
            batch.push(pending);
        } else {
            rest.push(pending);
        }
    }
    *waiting = rest;
    batch
}
