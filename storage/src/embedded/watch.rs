//! Watch streams: history replay from the log, then live events, with no gap and no
//! duplicate between the two.
//!
//! The hand-over. The writer publishes a batch's events on a broadcast channel after its
//! commit returned. A watcher:
//!
//! 1. replays the log in pages, each from a fresh read snapshot, without listening to the
//!    broadcast (so a long replay cannot make it lag), until a page reaches the current
//!    revision of its snapshot;
//! 2. subscribes to the broadcast, then reads pages again until one is caught up. That last
//!    snapshot began after the subscription, so every commit is either in it (committed
//!    before the snapshot began) or published after the subscription, hence received;
//! 3. follows the broadcast, skipping events at or below the last revision delivered (those
//!    published between the subscription and the snapshot, which the snapshot also held).
//!
//! A progress request ([`Storage::request_progress`](crate::Storage::request_progress))
//! publishes a marker, a batch of one `Progress` event at the current revision, under the
//! lock that publishes commits: every batch up to that revision precedes it on the
//! broadcast. A live watcher answers it with a `Progress` at the marker's revision; one
//! still replaying misses it (the requester asks again).
//!
//! The broadcast channel bounds every watcher: one that falls more than `capacity` commits
//! behind loses the oldest; if it had not delivered them yet, it gets [`Error::Lagged`] and
//! its stream ends. Writers never wait for watchers, and a batch is freed once every
//! subscriber has seen it.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};

use tokio::sync::broadcast::{self, error::RecvError};

use super::Shared;
use super::read;
use crate::{Error, Result, Revision, WatchEvent, WatchStream};

/// How many revisions one replay step reads.
const PAGE: usize = 512;

/// A committed batch's events, as published to watchers.
pub(super) type Batch = Arc<Vec<WatchEvent>>;

enum Phase {
    /// Reading history; `live` once subscribed (step 2).
    Replay {
        live: Option<broadcast::Receiver<Batch>>,
    },
    /// Following the broadcast.
    Live(broadcast::Receiver<Batch>),
    /// Ended, after an error or when the storage closed.
    Done,
}

struct Watcher {
    /// The storage; weak so that an open watch does not keep the database open.
    shared: Weak<Shared>,
    prefix: String,
    /// The last revision delivered or skipped: the next event must be after it.
    next: Revision,
    /// The revision of the last item handed out (event or progress).
    reported: Revision,
    pending: VecDeque<WatchEvent>,
    phase: Phase,
    capacity: usize,
}

/// A stream of the changes under `prefix` after revision `from`.
pub(super) fn stream(
    shared: Weak<Shared>,
    prefix: String,
    from: Revision,
    capacity: usize,
) -> WatchStream {
    let watcher = Watcher {
        shared,
        prefix,
        next: from,
        reported: from,
        pending: VecDeque::new(),
        phase: Phase::Replay { live: None },
        capacity,
    };
    Box::pin(futures_util::stream::unfold(
        watcher,
        |mut watcher| async move {
            let item = watcher.next_item().await?;
            Some((item, watcher))
        },
    ))
}

impl Watcher {
    async fn next_item(&mut self) -> Option<Result<WatchEvent>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                self.reported = event.revision();
                return Some(Ok(event));
            }
            let step = match &mut self.phase {
                Phase::Done => return None,
                Phase::Replay { .. } => self.replay().await,
                Phase::Live(_) => self.follow().await,
            };
            if let Err(error) = step {
                self.phase = Phase::Done;
                return Some(Err(error));
            }
        }
    }

    /// Reads one page of history; moves on to the next phase once caught up.
    async fn replay(&mut self) -> Result<()> {
        let Some(shared) = self.shared.upgrade() else {
            // The storage was dropped: end, as a live watch does.
            self.phase = Phase::Done;
            return Ok(());
        };
        let (prefix, after) = (self.prefix.clone(), self.next);
        let page = (shared.read(move |txn| read::history_page(txn, &prefix, after, PAGE))).await?;
        self.next = page.last;
        self.pending.extend(page.events);
        if page.caught_up {
            self.phase = match std::mem::replace(&mut self.phase, Phase::Done) {
                Phase::Replay { live: Some(live) } => Phase::Live(live),
                _ => Phase::Replay {
                    live: Some(shared.events.subscribe()),
                },
            };
        }
        Ok(())
    }

    /// Takes the next published batch.
    async fn follow(&mut self) -> Result<()> {
        let Phase::Live(live) = &mut self.phase else {
            return Ok(());
        };
        match live.recv().await {
            Ok(batch) => {
                if let [WatchEvent::Progress { revision }] = batch.as_slice() {
                    // Every batch up to the marker's revision came before it.
                    if *revision > self.next {
                        return Err(Error::Lagged {
                            capacity: self.capacity,
                        });
                    }
                    // Unless an item said as much already (or the watch starts later, for
                    // which etcd sends no progress either).
                    let last = self.pending.back().map_or(self.reported, |e| e.revision());
                    if *revision > last {
                        let revision = *revision;
                        self.pending.push_back(WatchEvent::Progress { revision });
                    }
                    return Ok(());
                }
                // Published batches cover every revision, in order: a batch starting past
                // the next revision means some were missed.
                if batch.first().is_some_and(|e| e.revision() > self.next + 1) {
                    return Err(Error::Lagged {
                        capacity: self.capacity,
                    });
                }
                for event in batch.iter() {
                    if event.revision() > self.next {
                        self.next = event.revision();
                        if event.key().is_some_and(|k| k.starts_with(&self.prefix)) {
                            self.pending.push_back(event.clone());
                        }
                    }
                }
                Ok(())
            }
            // The batches skipped may all be ones the replay already delivered (they pile up
            // between the subscription and the end of the replay): the next batch tells.
            Err(RecvError::Lagged(_)) => Ok(()),
            Err(RecvError::Closed) => {
                self.phase = Phase::Done;
                Ok(())
            }
        }
    }
}
