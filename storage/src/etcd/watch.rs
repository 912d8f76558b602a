//! Watches on etcd: one etcd watch (`prev_kv`, `progress_notify`) per [`Storage::watch`],
//! resumed from the last revision delivered when its member fails.
//!
//! kube-apiserver's etcd watcher ends its watch on any error and lets the cacher watch
//! again. Here a transient failure (the member stopped, lost its leader, the connection
//! broke) is invisible instead: the watch is established again on whichever member
//! answers, from the last revision delivered, with a growing pause between attempts, so an
//! HTTP watch open on the server resumes by itself once the cluster is back. What cannot be
//! resumed ends the stream with an error: a revision compacted meanwhile
//! ([`Error::Compacted`], 410 for the client, which lists again).
//!
//! The contract of [`Storage::watch`](crate::Storage::watch): etcd's watch starts
//! at `start_revision` inclusive, so events at the starting revision itself (already seen)
//! are dropped; a watch from `0` starts after the revision of etcd's `created` response,
//! which arrives once the watch is registered, so a write completing after `watch` returns
//! is delivered.
//!
//! A progress request ([`Storage::request_progress`](crate::Storage::request_progress))
//! reaches every watch as a change of a shared counter; each sends etcd a progress request
//! on its own stream, whose answer (no events, the header's revision) is delivered as
//! [`WatchEvent::Progress`] like a periodic notification.

use std::collections::VecDeque;
use std::time::Duration;

use etcd_client::{EventType, WatchClient, WatchOptions};
use tokio::sync::watch;

use super::errors::{Context, map_error};
use super::revisions::{LAST, end_of, etcd_of};
use super::{EtcdOptions, header_revision, key_value, prefix_end};
use crate::{Error, Result, Revision, WatchEvent, WatchStream};

/// The longest pause between two attempts to re-establish a watch.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Starts a watch of `prefix` after `from_revision` (`0`: after now).
pub(super) async fn start(
    client: WatchClient,
    options: EtcdOptions,
    progress_requests: watch::Receiver<u64>,
    prefix: &str,
    from_revision: Revision,
) -> Result<WatchStream> {
    let mut watch = Watch {
        client,
        options,
        progress_requests,
        key: prefix.as_bytes().to_vec(),
        range_end: prefix_end(prefix.as_bytes()),
        last: from_revision,
        stream: None,
        pending: VecDeque::new(),
        done: false,
    };
    // A member may refuse for a moment (no leader yet, a connection being re-made): try
    // again, on any member, within the request deadline.
    let deadline = tokio::time::Instant::now() + watch.options.request_timeout;
    let mut pause = Duration::from_millis(20);
    loop {
        match watch.open(from_revision).await {
            Ok(()) => break,
            // Reported as the stream's first item, as the contract asks.
            Err(error @ Error::Compacted { .. }) => {
                watch.pending.push_back(Err(error));
                watch.done = true;
                break;
            }
            Err(Error::Unavailable(why)) if tokio::time::Instant::now() + pause < deadline => {
                tracing::debug!(reason = %why, "etcd refused a watch; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_BACKOFF);
            }
            Err(error) => return Err(error),
        }
    }
    Ok(Box::pin(futures_util::stream::unfold(
        watch,
        |mut watch| async move {
            let item = watch.next().await?;
            Some((item, watch))
        },
    )))
}

/// The state of one watch.
struct Watch {
    client: WatchClient,
    options: EtcdOptions,
    /// Changes when progress is requested.
    progress_requests: watch::Receiver<u64>,
    key: Vec<u8>,
    range_end: Vec<u8>,
    /// Every change up to this revision was delivered (or precedes the watch).
    last: Revision,
    /// The etcd watch; `None` while it must be re-established.
    stream: Option<etcd_client::WatchStream>,
    /// Items ready to deliver.
    pending: VecDeque<Result<WatchEvent>>,
    /// Nothing more after `pending`.
    done: bool,
}

/// What one etcd watch response meant.
enum Step {
    /// Events or progress were queued (possibly none).
    Continue,
    /// The etcd watch broke; establish it again.
    Resume(String),
}

impl Watch {
    /// Establishes the etcd watch at the etcd revision of `start` (ours; etcd's
    /// `start_revision` is inclusive; `0`: now), waiting for etcd's `created` answer under
    /// the request deadline.
    async fn open(&mut self, start: Revision) -> Result<()> {
        let etcd_start = match start {
            0 => 0,
            start => etcd_of(start).0.max(1),
        };
        let options = WatchOptions::new()
            .with_range(self.range_end.clone())
            .with_start_revision(etcd_start)
            .with_prev_key()
            .with_progress_notify();
        let timeout = self.options.request_timeout;
        let mut client = self.client.clone();
        let key = self.key.clone();
        let opened = async move {
            let mut stream = (client.watch(key, Some(options)).await)
                .map_err(|e| map_error(e, Context::Read { revision: start }))?;
            let created = (stream.message().await)
                .map_err(|e| map_error(e, Context::Read { revision: start }))?
                .ok_or_else(|| Error::Unavailable("etcd closed the watch at once".into()))?;
            if created.compact_revision() > 0 {
                return Err(Error::Compacted {
                    requested: start,
                    compacted: end_of(created.compact_revision()),
                });
            }
            if created.canceled() || !created.created() {
                return Err(Error::Unavailable(format!(
                    "etcd refused the watch: {}",
                    created.cancel_reason()
                )));
            }
            Ok((stream, header_revision(created.header())?))
        };
        let (stream, revision) = match tokio::time::timeout(timeout, opened).await {
            Ok(result) => result?,
            Err(_) => {
                return Err(Error::Timeout(format!(
                    "etcd did not establish a watch within {timeout:?}"
                )));
            }
        };
        if start == 0 {
            self.last = revision;
        }
        self.stream = Some(stream);
        Ok(())
    }

    async fn next(&mut self) -> Option<Result<WatchEvent>> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Some(item);
            }
            if self.done {
                return None;
            }
            let Some(stream) = self.stream.as_mut() else {
                self.resume().await;
                continue;
            };
            let received = tokio::select! {
                message = stream.message() => Some(message),
                // Gone only with the storage, which ends the watch at its next change.
                Ok(()) = self.progress_requests.changed() => None,
            };
            let step = match received {
                Some(Ok(Some(response))) => self.receive(&response),
                Some(Ok(None)) => Step::Resume("etcd closed the watch stream".into()),
                Some(Err(error)) => Step::Resume(error.to_string()),
                None => match stream.request_progress().await {
                    Ok(()) => Step::Continue,
                    Err(error) => Step::Resume(error.to_string()),
                },
            };
            if let Step::Resume(why) = step {
                tracing::info!(reason = %why, last = self.last, "etcd watch broke; resuming");
                self.stream = None;
            }
        }
    }

    /// Queues what one response carries.
    fn receive(&mut self, response: &etcd_client::WatchResponse) -> Step {
        if response.compact_revision() > 0 {
            self.pending.push_back(Err(Error::Compacted {
                requested: self.last,
                compacted: end_of(response.compact_revision()),
            }));
            self.done = true;
            return Step::Continue;
        }
        if response.canceled() {
            // Cancelled by the member (lost leader, shutting down): not by us.
            return Step::Resume(format!(
                "etcd cancelled the watch: {}",
                response.cancel_reason()
            ));
        }
        if response.events().is_empty() {
            // A progress notification: every change up to the header's revision was sent.
            if let Some(header) = response.header() {
                let revision = end_of(header.revision());
                if revision > self.last && !response.created() {
                    self.last = revision;
                    self.pending
                        .push_back(Ok(WatchEvent::Progress { revision }));
                }
            }
            return Step::Continue;
        }
        for event in response.events() {
            match self.event(event) {
                Ok(Some(event)) => {
                    self.last = event.revision();
                    self.pending.push_back(Ok(event));
                }
                Ok(None) => {}
                Err(error) => {
                    self.pending.push_back(Err(error));
                    self.done = true;
                    return Step::Continue;
                }
            }
        }
        // etcd sends an etcd revision's events together: when this prefix had only some of
        // the creates of a transaction (`revisions`), the watch has still seen all of that
        // revision, which its last event's slot does not tell.
        if let (etcd, slot) = etcd_of(self.last)
            && slot != LAST
        {
            self.last = end_of(etcd);
            (self.pending).push_back(Ok(WatchEvent::Progress {
                revision: self.last,
            }));
        }
        Step::Continue
    }

    /// One etcd event as ours; `None` when already delivered.
    fn event(&self, event: &etcd_client::Event) -> Result<Option<WatchEvent>> {
        let kv = (event.kv()).ok_or_else(|| Error::Internal("etcd event without a key".into()))?;
        // Deletes are written alone: their revision is the end of etcd's.
        let (revision, put) = match event.event_type() {
            EventType::Put => {
                let kv = key_value(kv)?;
                (kv.mod_revision, Some(kv))
            }
            EventType::Delete => (end_of(kv.mod_revision()), None),
        };
        if revision <= self.last {
            return Ok(None);
        }
        let prev = event.prev_kv().map(key_value).transpose()?;
        Ok(Some(match put {
            Some(kv) => WatchEvent::Put { kv, prev },
            None => WatchEvent::Delete {
                prev: prev.ok_or_else(|| {
                    Error::Internal("etcd delete event without the previous value".into())
                })?,
                revision,
            },
        }))
    }

    /// Establishes the watch again from the last revision delivered, pausing between
    /// attempts; gives up only on what retrying cannot fix.
    async fn resume(&mut self) {
        let mut pause = Duration::from_millis(50);
        loop {
            // From `last` (inclusive, dropped as seen): its compaction check is that of a
            // read at `last`, and `last + 1` may not exist yet.
            match self.open(self.last.max(1)).await {
                Ok(()) => return,
                Err(error @ Error::Compacted { .. }) => {
                    self.pending.push_back(Err(error));
                    self.done = true;
                    return;
                }
                Err(error @ (Error::Unavailable(_) | Error::Timeout(_))) => {
                    tracing::debug!(%error, "re-establishing an etcd watch");
                }
                Err(error) => {
                    self.pending.push_back(Err(error));
                    self.done = true;
                    return;
                }
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_BACKOFF);
        }
    }
}
