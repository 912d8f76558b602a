//! The single writer: one thread that applies every write, in batches (group commit).
//!
//! Requests queue on a channel. The writer takes the first, then whatever else is already
//! waiting (up to a bound), applies them in order in one redb write transaction, and commits
//! it with `Durability::Immediate`: one fsync for the whole batch. Writes that arrive while
//! a commit is syncing form the next batch, so concurrency raises throughput instead of
//! queueing one fsync per write.
//!
//! Only after the commit returned does the writer publish the new revision and the batch's
//! events, and then answer each request: nothing is acknowledged, nor visible to a watcher,
//! before it is durable. A failed precondition in a batch is answered after the commit too,
//! as it may have been decided on an earlier write of the same batch.
//!
//! If a batch fails in redb (I/O error, full disk) the writer cannot know what is on disk:
//! the storage is poisoned, every later request fails with `Unavailable`, and the server
//! must be restarted to recover from the file, as etcd stops on a failed fsync.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::mpsc::Receiver;

use bytes::Bytes;
use redb::{Durability, ReadableTable, Table};
use tokio::sync::oneshot;

use super::Shared;
use super::read::{self, Counters};
use super::schema::{self, COMPACTED, CURRENT, LOG, META, VERSIONS};
use crate::{Deleted, Error, Guard, KeyValue, Result, Revision, WatchEvent};

/// A write operation.
#[derive(Debug)]
pub(super) enum Op {
    Create {
        key: String,
        value: Bytes,
        guard: Option<Guard>,
    },
    Update {
        key: String,
        value: Bytes,
        expected: Revision,
    },
    Delete {
        key: String,
        expected: Option<Revision>,
    },
    Compact {
        revision: Revision,
    },
}

impl Op {
    /// Roughly how many bytes the operation writes, to bound a batch.
    fn size(&self) -> usize {
        match self {
            Op::Create { key, value, .. } | Op::Update { key, value, .. } => {
                key.len() + value.len()
            }
            Op::Delete { key, .. } => key.len(),
            Op::Compact { .. } => 0,
        }
    }
}

/// What a successful operation produced.
#[derive(Debug)]
pub(super) enum Outcome {
    Put(KeyValue),
    Deleted(Deleted),
    Compacted,
}

/// A queued operation with where to send its answer.
pub(super) struct Request {
    pub op: Op,
    pub reply: oneshot::Sender<Result<Outcome>>,
}

/// How large a batch may grow.
#[derive(Debug, Clone, Copy)]
pub(super) struct BatchLimits {
    pub max_ops: usize,
    pub max_bytes: usize,
}

/// The writer thread's state.
pub(super) struct Writer {
    shared: Arc<Shared>,
    requests: Receiver<Request>,
    limits: BatchLimits,
    /// The counters as of the last commit.
    counters: Counters,
}

/// The tables a batch writes, open in its transaction.
struct Tables<'txn> {
    versions: Table<'txn, (&'static str, u64), &'static [u8]>,
    log: Table<'txn, u64, &'static str>,
}

/// What a batch has done so far: the counters and the events to publish.
struct BatchState {
    counters: Counters,
    events: Vec<WatchEvent>,
    changed: bool,
}

impl Writer {
    pub(super) fn new(
        shared: Arc<Shared>,
        requests: Receiver<Request>,
        limits: BatchLimits,
        counters: Counters,
    ) -> Writer {
        Writer {
            shared,
            requests,
            limits,
            counters,
        }
    }

    /// Serves requests until every sender is gone (the storage was dropped).
    pub(super) fn run(mut self) {
        while let Ok(first) = self.requests.recv() {
            let batch = self.gather(first);
            self.write_batch(batch);
        }
    }

    /// `first` and the requests already waiting behind it, within the limits.
    fn gather(&self, first: Request) -> Vec<Request> {
        let mut bytes = first.op.size();
        let mut batch = vec![first];
        while batch.len() < self.limits.max_ops && bytes < self.limits.max_bytes {
            match self.requests.try_recv() {
                Ok(request) => {
                    bytes += request.op.size();
                    batch.push(request);
                }
                Err(_) => break,
            }
        }
        batch
    }

    /// Applies, commits, publishes, then answers.
    fn write_batch(&mut self, batch: Vec<Request>) {
        if let Some(reason) = self.shared.poisoned() {
            for request in batch {
                let _ = request.reply.send(Err(Error::Unavailable(reason.clone())));
            }
            return;
        }
        let ops: Vec<&Op> = batch.iter().map(|r| &r.op).collect();
        match self.commit(&ops) {
            Ok((results, events)) => {
                self.shared.publish(self.counters.current, events);
                for (request, result) in batch.into_iter().zip(results) {
                    // The caller may have gone away; its write stands, as in etcd.
                    let _ = request.reply.send(result);
                }
            }
            Err(error) => {
                let reason = format!("a write failed, restart to recover: {error}");
                self.shared.poison(reason.clone());
                for request in batch {
                    let _ = request.reply.send(Err(Error::Unavailable(reason.clone())));
                }
            }
        }
    }

    /// Applies `ops` in one transaction and commits it. The outer error is fatal (redb
    /// failed); the inner results are the operations' own answers.
    fn commit(&mut self, ops: &[&Op]) -> Result<(Vec<Result<Outcome>>, Vec<WatchEvent>)> {
        let mut txn = self.shared.db.begin_write()?;
        txn.set_durability(Durability::Immediate)
            .map_err(|e| Error::Internal(e.to_string()))?;
        txn.set_quick_repair(self.shared.options.quick_repair);
        let mut state = BatchState {
            counters: self.counters,
            events: Vec::new(),
            changed: false,
        };
        let mut results = Vec::with_capacity(ops.len());
        {
            let mut tables = Tables {
                versions: txn.open_table(VERSIONS)?,
                log: txn.open_table(LOG)?,
            };
            for op in ops {
                results.push(apply(&mut tables, &mut state, op)?);
            }
            if state.changed {
                let mut meta = txn.open_table(META)?;
                meta.insert(CURRENT, state.counters.current)?;
                meta.insert(COMPACTED, state.counters.compacted)?;
            }
        }
        if state.changed {
            txn.commit()?;
        } else {
            // Only failed preconditions: nothing to make durable.
            txn.abort()?;
        }
        self.counters = state.counters;
        Ok((results, state.events))
    }
}

/// Applies one operation. `Err` is fatal for the batch; `Ok(Err(_))` is the operation's
/// failure, which leaves the transaction untouched.
fn apply(tables: &mut Tables<'_>, state: &mut BatchState, op: &Op) -> Result<Result<Outcome>> {
    match op {
        Op::Create { key, value, guard } => {
            if let Some(Guard {
                key: guarded,
                mod_revision,
            }) = guard
            {
                let current = read::get_at(&tables.versions, guarded, Revision::MAX)?
                    .map_or(0, |kv| kv.mod_revision);
                if current != *mod_revision {
                    return Ok(Err(Error::Conflict {
                        key: guarded.clone(),
                        expected: *mod_revision,
                        current,
                    }));
                }
            }
            if read::get_at(&tables.versions, key, Revision::MAX)?.is_some() {
                return Ok(Err(Error::AlreadyExists { key: key.clone() }));
            }
            let revision = state.counters.current + 1;
            let kv = put(tables, state, key, value, revision, revision)?;
            state.events.push(WatchEvent::Put {
                kv: kv.clone(),
                prev: None,
            });
            Ok(Ok(Outcome::Put(kv)))
        }
        Op::Update {
            key,
            value,
            expected,
        } => {
            let prev = match current(tables, key, Some(*expected))? {
                Ok(prev) => prev,
                Err(error) => return Ok(Err(error)),
            };
            let revision = state.counters.current + 1;
            let kv = put(tables, state, key, value, prev.create_revision, revision)?;
            state.events.push(WatchEvent::Put {
                kv: kv.clone(),
                prev: Some(prev),
            });
            Ok(Ok(Outcome::Put(kv)))
        }
        Op::Delete { key, expected } => {
            let prev = match current(tables, key, *expected)? {
                Ok(prev) => prev,
                Err(error) => return Ok(Err(error)),
            };
            let revision = state.counters.current + 1;
            tables
                .versions
                .insert((key.as_str(), revision), schema::TOMBSTONE)?;
            tables.log.insert(revision, key.as_str())?;
            state.counters.current = revision;
            state.changed = true;
            state.events.push(WatchEvent::Delete {
                prev: prev.clone(),
                revision,
            });
            Ok(Ok(Outcome::Deleted(Deleted { prev, revision })))
        }
        Op::Compact { revision } => {
            let Counters { current, compacted } = state.counters;
            if *revision > current {
                return Ok(Err(Error::FutureRevision {
                    requested: *revision,
                    current,
                }));
            }
            if *revision <= compacted {
                return Ok(Err(Error::Compacted {
                    requested: *revision,
                    compacted,
                }));
            }
            compact(tables, compacted, *revision)?;
            state.counters.compacted = *revision;
            state.changed = true;
            Ok(Ok(Outcome::Compacted))
        }
    }
}

/// The live version of `key`, checked against an expected mod revision.
fn current(tables: &Tables<'_>, key: &str, expected: Option<Revision>) -> Result<Result<KeyValue>> {
    Ok(match read::get_at(&tables.versions, key, Revision::MAX)? {
        None => Err(Error::NotFound {
            key: key.to_owned(),
        }),
        Some(kv) => match expected {
            Some(expected) if expected != kv.mod_revision => Err(Error::Conflict {
                key: key.to_owned(),
                expected,
                current: kv.mod_revision,
            }),
            _ => Ok(kv),
        },
    })
}

/// Writes a new version of `key` at `revision`.
fn put(
    tables: &mut Tables<'_>,
    state: &mut BatchState,
    key: &str,
    value: &Bytes,
    create_revision: Revision,
    revision: Revision,
) -> Result<KeyValue> {
    let record = schema::encode_put(create_revision, value);
    tables.versions.insert((key, revision), record.as_slice())?;
    tables.log.insert(revision, key)?;
    state.counters.current = revision;
    state.changed = true;
    Ok(KeyValue {
        key: key.to_owned(),
        value: value.clone(),
        create_revision,
        mod_revision: revision,
    })
}

/// Compacts from `from` (the previous compacted revision) to `to`.
///
/// Reads at `to` or later, and watch replay of the events after `to`, must keep working: for
/// that every key keeps its version visible at `to` and everything later. Earlier versions
/// go, so does a tombstone visible at `to`, and so does the log up to `to`. Only keys changed
/// since the previous compaction can have anything to drop, and the log names exactly those,
/// so the work is proportional to the churn, not to the size of the store.
fn compact(tables: &mut Tables<'_>, from: Revision, to: Revision) -> Result<()> {
    let window = from + 1..=to;
    let mut keys = BTreeSet::new();
    for entry in tables.log.range(window.clone())? {
        keys.insert(entry?.1.value().to_owned());
    }
    tables.log.retain_in(window, |_, _| false)?;
    for key in &keys {
        let mut old: Vec<(Revision, bool)> = Vec::new();
        for entry in tables
            .versions
            .range((key.as_str(), 0)..=(key.as_str(), to))?
        {
            let (k, record) = entry?;
            old.push((k.value().1, schema::is_tombstone(record.value())));
        }
        // The last version at or before `to` stays, unless it is a tombstone.
        if let Some(&(_, false)) = old.last() {
            old.pop();
        }
        for (revision, _) in old {
            tables.versions.remove((key.as_str(), revision))?;
        }
    }
    Ok(())
}
