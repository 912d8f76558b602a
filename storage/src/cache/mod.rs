//! The watch cache: kube-apiserver's cacher (`storage/cacher`) between the registry and
//! [`Storage`].
//!
//! One [`Cache`] per storage key prefix (per kind: `/registry/apps.example.dev/webapps/`),
//! started with the registry. Each is fed by ONE [`Storage::watch`] of its prefix, after an
//! initial [`Storage::list`] (`feed`), and holds:
//!
//! - the current objects, keyed by storage key, as their stored bytes ([`CachedObject`]);
//! - a bounded ring of the most recent changes ([`CachedEvent`]), `history` of them
//!   ([`CacheOptions::history`], `--watch-cache-history`); a watch from a revision older
//!   than the ring reaches back fails with [`CacheError::TooOld`] (kube's 410 "too old
//!   resource version");
//! - its watchers: each has a bounded buffer ([`CacheOptions::watcher_buffer`]). The feed
//!   hands every change to every watcher without waiting: a watcher whose buffer is full is
//!   dropped ([`End::Lagged`]) after the events it holds, so a stalled client never delays
//!   the others nor grows memory without bound.
//!
//! What is shared: a cached object (and the old object of an event) memoizes its
//! conversions per served version as [`SharedObject`]s, encoded once and kept as bytes only;
//! every watcher (and every list served from the cache) of that version copies the same
//! bytes. The registry decides what the cache serves (watches always; gets and lists
//! that allow a cached answer), and how objects convert; the cache knows only keys, JSON
//! values and revisions.
//!
//! When its storage watch fails the feed watches again from the last revision it applied,
//! so watchers see nothing; only when that revision was compacted does it list again
//! ([`End::Reset`] for every watcher, history emptied: clients watch again, and relist on
//! the 410).

mod caches;
mod feed;
mod object;
mod shared;

pub use caches::{CATCH_UP_WAIT, Caches};
pub use object::{CachedObject, Labels};
pub use shared::{Derived, DerivedKey, Memo, SharedObject, Splice, kept};

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::{KeyValue, Revision, Storage};
use kapi_metrics::Counter;
use kapi_metrics::ResourceLabels;

/// How many changes a cache keeps by default (`--watch-cache-history`): kube's cacher
/// sized its ring to 100 events before it sized it by time (75 s of changes); 1000 keeps a
/// minute or more of moderate write traffic for watchers that reconnect.
pub const DEFAULT_HISTORY: usize = 1000;

/// How many events a watcher may hold unread before it is dropped by default.
pub const DEFAULT_WATCHER_BUFFER: usize = 1024;

/// How long a read waits for the cache to reach a revision (kube's `blockTimeout`).
pub const FRESHNESS_TIMEOUT: Duration = Duration::from_secs(3);

/// How often watchers hear of progress that came with no change (what their bookmarks
/// may claim): progress requested for consistent reads may come many times a second, and
/// each would wake every watcher of the cache.
const PROGRESS_TO_WATCHERS: Duration = Duration::from_secs(1);

/// How many objects one request of a cache's list reads by default: kube's largest page
/// (`maxLimit`); a list of 1M objects is then 100 requests of about 8 MB each.
pub const DEFAULT_LIST_PAGE: usize = 10_000;

/// How often a watch that allows bookmarks gets one by default (`--watch-bookmark-interval`):
/// kube's cacher sends one about every minute (`bookmarkFrequency`).
pub const DEFAULT_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// The tunables of the caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheOptions {
    /// How many recent changes each cache keeps for watches that start in the past.
    pub history: usize,
    /// How many events a watcher may fall behind before it is dropped.
    pub watcher_buffer: usize,
    /// How often a watch with `allowWatchBookmarks` gets a `BOOKMARK` (the registry's
    /// watchers send them; kept here as kube keeps it in its cacher).
    pub bookmark_interval: Duration,
    /// How many objects each request of the cache's list reads (every page at the first
    /// one's revision): no one storage request carries a whole large collection.
    pub list_page: usize,
}

impl Default for CacheOptions {
    fn default() -> CacheOptions {
        CacheOptions {
            history: DEFAULT_HISTORY,
            watcher_buffer: DEFAULT_WATCHER_BUFFER,
            bookmark_interval: DEFAULT_BOOKMARK_INTERVAL,
            list_page: DEFAULT_LIST_PAGE,
        }
    }
}

/// Why the cache cannot serve a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    /// The cache has not loaded its objects yet, or is loading them again.
    #[error("storage is (re)initializing")]
    NotReady,
    /// The revision is older than the changes the cache keeps.
    #[error("too old resource version: {requested} ({oldest})")]
    TooOld {
        /// The revision asked for.
        requested: Revision,
        /// The oldest revision a watch may start from.
        oldest: Revision,
    },
    /// The server is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
}

/// Why a watcher's stream of events ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// It fell `buffer` events behind and was dropped.
    Lagged {
        /// The watcher buffer's size.
        buffer: usize,
    },
    /// The cache listed its objects again: watch again (kube closes its watchers).
    Reset,
    /// The server is shutting down, or the storage closed.
    Closed,
}

/// What a change did.
pub enum Change {
    /// Created (`prev` is `None`) or updated the object.
    Put {
        /// The object after the change.
        object: Arc<CachedObject>,
        /// The object before it.
        prev: Option<Arc<CachedObject>>,
    },
    /// Deleted the object.
    Delete {
        /// The object before the delete.
        prev: Arc<CachedObject>,
    },
    /// Nothing under the prefix changed up to the revision (a storage progress
    /// notification).
    Progress,
}

/// One change, as every watcher receives it.
pub struct CachedEvent {
    /// Its revision.
    pub revision: Revision,
    /// What changed.
    pub change: Change,
    /// The old object in each served version with this event's revision as
    /// resourceVersion: what a `DELETED` event carries (a delete, or an update that makes the
    /// object leave a selection).
    pub gone: Memo,
}

impl CachedEvent {
    /// The key changed; `None` for a progress notification.
    pub fn key(&self) -> Option<&str> {
        match &self.change {
            Change::Put { object, .. } => Some(&object.kv.key),
            Change::Delete { prev } => Some(&prev.kv.key),
            Change::Progress => None,
        }
    }
}

/// The objects under a prefix at one revision.
pub struct Snapshot {
    /// The objects, ordered by key.
    pub objects: Vec<Arc<CachedObject>>,
    /// The revision the cache had reached.
    pub revision: Revision,
}

/// The freshness the cache publishes to readers waiting for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Progress {
    ready: bool,
    revision: Revision,
    /// The revision of the last change the objects saw (a put, a delete, a relist).
    changed: Revision,
}

/// A registered watcher, as the feed sees it.
struct Slot {
    prefix: String,
    /// Only changes after this revision.
    after: Revision,
    sender: mpsc::Sender<Arc<CachedEvent>>,
    end: Arc<OnceLock<End>>,
}

/// A cached object in the index, ordered by (and found by) its key: the key is the one
/// in the object, not a second copy beside it.
#[derive(Clone)]
struct ByKey(Arc<CachedObject>);

impl std::borrow::Borrow<str> for ByKey {
    fn borrow(&self) -> &str {
        &self.0.kv.key
    }
}

impl PartialEq for ByKey {
    fn eq(&self, other: &ByKey) -> bool {
        self.0.kv.key == other.0.kv.key
    }
}

impl Eq for ByKey {}

impl PartialOrd for ByKey {
    fn partial_cmp(&self, other: &ByKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByKey {
    fn cmp(&self, other: &ByKey) -> std::cmp::Ordering {
        self.0.kv.key.cmp(&other.0.kv.key)
    }
}

struct State {
    objects: BTreeSet<ByKey>,
    history: VecDeque<Arc<CachedEvent>>,
    /// The revision the cache reflects.
    revision: Revision,
    /// The revision of the last change to `objects` (progress moves `revision` only).
    changed: Revision,
    /// Watches may start at this revision or later: every change after it is in
    /// `history`.
    oldest: Revision,
    ready: bool,
    closed: bool,
    /// When watchers last heard of progress without a change.
    progress_dispatched: Option<std::time::Instant>,
    options: CacheOptions,
    watchers: HashMap<u64, Slot>,
    next_id: u64,
    /// `apiserver_watch_cache_events_dispatched_total` and
    /// `apiserver_terminated_watchers_total` of this cache's resource.
    dispatched: Counter,
    terminated: Counter,
}

/// The cache of one key prefix. See the module documentation.
pub struct Cache {
    prefix: String,
    resource: String,
    state: Mutex<State>,
    progress: watch::Sender<Progress>,
    /// When a catch-up last failed ([`Caches::catch_up`]): reads then go to storage for a
    /// while rather than each wait in vain for a feed that cannot answer.
    catch_up_failed: Mutex<Option<std::time::Instant>>,
}

impl Cache {
    /// A cache of the keys under `prefix`, the objects of `resource` (its name in metrics),
    /// fed from `storage` by a task on the current tokio runtime; the task ends with the
    /// returned handle, or when the storage is dropped.
    pub fn start(
        storage: &Arc<dyn Storage>,
        prefix: impl Into<String>,
        resource: impl Into<String>,
        options: CacheOptions,
    ) -> (Arc<Cache>, tokio::task::AbortHandle) {
        let resource = resource.into();
        let labels = ResourceLabels {
            resource: resource.clone(),
        };
        let metrics = kapi_metrics::global();
        let cache = Arc::new(Cache {
            prefix: prefix.into(),
            resource,
            state: Mutex::new(State {
                objects: BTreeSet::new(),
                history: VecDeque::new(),
                revision: 0,
                changed: 0,
                oldest: 0,
                ready: false,
                closed: false,
                progress_dispatched: None,
                options,
                watchers: HashMap::new(),
                next_id: 0,
                dispatched: (metrics.cache_events_dispatched).with_or_new(&labels, Counter::clone),
                terminated: (metrics.terminated_watchers).with_or_new(&labels, Counter::clone),
            }),
            progress: watch::Sender::new(Progress::default()),
            catch_up_failed: Mutex::new(None),
        });
        let task = tokio::spawn(feed::run(Arc::downgrade(&cache), Arc::downgrade(storage)));
        (cache, task.abort_handle())
    }

    /// The key prefix cached.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The resource cached, as metrics name it (`webapps.apps.example.dev`).
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// How many objects the cache holds.
    pub fn len(&self) -> usize {
        self.lock().objects.len()
    }

    /// Whether the cache holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Changes the history size, watcher buffer and bookmark interval (for watchers
    /// registered from now on).
    pub fn configure(&self, options: CacheOptions) {
        let mut state = self.lock();
        state.options = CacheOptions {
            history: options.history.max(1),
            watcher_buffer: options.watcher_buffer.max(1),
            bookmark_interval: options.bookmark_interval,
            list_page: options.list_page.max(1),
        };
        while state.history.len() > state.options.history {
            state.evict();
        }
    }

    /// How often a watch of this cache that allows bookmarks gets one.
    pub fn bookmark_interval(&self) -> Duration {
        self.lock().options.bookmark_interval
    }

    /// How many objects each request of this cache's list reads.
    fn list_page(&self) -> usize {
        self.lock().options.list_page
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The revision the cache has reached, if it is ready.
    pub fn revision(&self) -> Option<Revision> {
        let progress = *self.progress.borrow();
        progress.ready.then_some(progress.revision)
    }

    /// The revision of the last change to the objects (`None` until ready): unlike
    /// [`Cache::revision`], progress without a change leaves it, so the cache holds the
    /// same objects whenever it is the same. What derived values are rebuilt on.
    pub fn changed(&self) -> Option<Revision> {
        let progress = *self.progress.borrow();
        progress.ready.then_some(progress.changed)
    }

    /// Waits until the cache is ready and has reached `revision`, at most `timeout`.
    /// Returns the revision reached, or `None` on timeout (or when the cache closes).
    pub async fn wait_for(&self, revision: Revision, timeout: Duration) -> Option<Revision> {
        let mut progress = self.progress.subscribe();
        let reached = tokio::time::timeout(
            timeout,
            progress.wait_for(|p| p.ready && p.revision >= revision),
        )
        .await;
        match reached {
            Ok(Ok(progress)) => Some(progress.revision),
            _ => None,
        }
    }

    /// When a catch-up last failed, if one did.
    fn catch_up_failed(&self) -> std::sync::MutexGuard<'_, Option<std::time::Instant>> {
        self.catch_up_failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The object at `key`, and the revision of the cache.
    pub fn get(&self, key: &str) -> Result<(Option<Arc<CachedObject>>, Revision), CacheError> {
        let state = self.lock();
        state.check()?;
        Ok((state.objects.get(key).map(|o| o.0.clone()), state.revision))
    }

    /// How many objects under `prefix` have keys after `after`: from its index, without
    /// touching the objects (what a page of a list from storage reports as
    /// `remainingItemCount`, which kube documents as an estimate).
    pub fn count_after(&self, prefix: &str, after: &str) -> Result<usize, CacheError> {
        let state = self.lock();
        state.check()?;
        let from = match after < prefix {
            true => Bound::Included(prefix),
            false => Bound::Excluded(after),
        };
        let count = (state.objects)
            .range::<str, _>((from, Bound::Unbounded))
            .take_while(|object| object.0.kv.key.starts_with(prefix))
            .count();
        Ok(count)
    }

    /// The objects under `prefix` (within the cache's prefix).
    pub fn list(&self, prefix: &str) -> Result<Snapshot, CacheError> {
        let state = self.lock();
        state.check()?;
        Ok(state.snapshot(prefix))
    }

    /// Whether at most `limit` objects are under `prefix`: at once when the cache holds no
    /// more, else counted up to `limit + 1`.
    pub fn fits(&self, prefix: &str, limit: usize) -> bool {
        let state = self.lock();
        state.objects.len() <= limit || state.under(prefix).nth(limit).is_none()
    }

    /// The objects under `prefix` if there are at most `limit` of them (`None`: more),
    /// found without walking past the limit.
    pub fn list_at_most(&self, prefix: &str, limit: usize) -> Result<Option<Snapshot>, CacheError> {
        let state = self.lock();
        state.check()?;
        let objects: Vec<_> = state
            .under(prefix)
            .take(limit.saturating_add(1))
            .cloned()
            .collect();
        Ok((objects.len() <= limit).then_some(Snapshot {
            objects,
            revision: state.revision,
        }))
    }

    /// Watches the changes under `prefix` after revision `after`: first those the history
    /// holds, then every later one. A revision ahead of the cache is allowed: the changes
    /// after it are delivered as they come.
    pub fn watch(&self, prefix: &str, after: Revision) -> Result<Subscription, CacheError> {
        let mut state = self.lock();
        state.check()?;
        if after < state.oldest {
            return Err(CacheError::TooOld {
                requested: after,
                oldest: state.oldest,
            });
        }
        let replay = (state.history.iter())
            .filter(|e| e.revision > after && e.key().is_some_and(|k| k.starts_with(prefix)))
            .cloned()
            .collect();
        Ok(state.register(prefix, after, replay))
    }

    /// The objects under `prefix` now, and a watch of every change after them, atomically.
    pub fn list_and_watch(&self, prefix: &str) -> Result<(Snapshot, Subscription), CacheError> {
        let mut state = self.lock();
        state.check()?;
        let snapshot = state.snapshot(prefix);
        let subscription = state.register(prefix, snapshot.revision, VecDeque::new());
        Ok((snapshot, subscription))
    }

    /// Ends every watcher ([`End::Closed`]) and refuses new requests: the server is
    /// shutting down.
    pub fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.terminate_all(End::Closed);
    }

    /// How many watchers are registered and still listening.
    pub fn watchers(&self) -> usize {
        let state = self.lock();
        (state.watchers.values())
            .filter(|slot| !slot.sender.is_closed())
            .count()
    }

    fn publish(&self, state: &State) {
        self.progress.send_replace(Progress {
            ready: state.ready,
            revision: state.revision,
            changed: state.changed,
        });
    }

    /// Loads the objects of a (re)list: every watcher ends, the history restarts.
    fn replace(&self, items: Vec<KeyValue>, revision: Revision) {
        let mut state = self.lock();
        state.terminate_all(End::Reset);
        state.objects = (items.into_iter())
            .map(|kv| ByKey(CachedObject::new(kv)))
            .collect();
        state.history.clear();
        state.revision = revision;
        state.changed = revision;
        state.oldest = revision;
        state.ready = true;
        self.publish(&state);
    }

    /// Applies one change from the storage watch and hands it to the watchers.
    fn apply(&self, event: crate::WatchEvent) {
        use crate::WatchEvent as Storage;
        let mut state = self.lock();
        let revision = event.revision();
        if revision <= state.revision && !matches!(event, Storage::Progress { .. }) {
            return;
        }
        let change = match event {
            Storage::Put { kv, prev } => {
                let object = CachedObject::new(kv);
                let old = state.objects.replace(ByKey(object.clone())).map(|o| o.0);
                let prev = old.or_else(|| prev.map(CachedObject::new));
                Change::Put { object, prev }
            }
            Storage::Delete { prev, .. } => {
                let old = state.objects.take(prev.key.as_str()).map(|o| o.0);
                Change::Delete {
                    prev: old.unwrap_or_else(|| CachedObject::new(prev)),
                }
            }
            Storage::Progress { .. } if revision <= state.revision => return,
            Storage::Progress { .. } => Change::Progress,
        };
        let event = Arc::new(CachedEvent {
            revision,
            change,
            gone: Memo::default(),
        });
        state.revision = revision;
        if !matches!(event.change, Change::Progress) {
            state.changed = revision;
            state.dispatched.inc();
            state.history.push_back(Arc::clone(&event));
            while state.history.len() > state.options.history {
                state.evict();
            }
            state.dispatch(&event);
        } else if (state.progress_dispatched).is_none_or(|at| at.elapsed() >= PROGRESS_TO_WATCHERS)
        {
            state.progress_dispatched = Some(std::time::Instant::now());
            state.dispatch(&event);
        }
        self.publish(&state);
    }

    /// The storage watch ended for good (the storage closed).
    fn storage_closed(&self) {
        let mut state = self.lock();
        state.ready = false;
        state.terminate_all(End::Closed);
        self.publish(&state);
    }
}

impl State {
    fn check(&self) -> Result<(), CacheError> {
        if self.closed {
            Err(CacheError::ShuttingDown)
        } else if !self.ready {
            Err(CacheError::NotReady)
        } else {
            Ok(())
        }
    }

    /// The objects under `prefix`, in key order.
    fn under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Arc<CachedObject>> {
        let from = (Bound::Included(prefix), Bound::Unbounded);
        (self.objects.range::<str, _>(from))
            .take_while(move |object| object.0.kv.key.starts_with(prefix))
            .map(|object| &object.0)
    }

    fn snapshot(&self, prefix: &str) -> Snapshot {
        Snapshot {
            objects: self.under(prefix).cloned().collect(),
            revision: self.revision,
        }
    }

    fn evict(&mut self) {
        if let Some(event) = self.history.pop_front() {
            self.oldest = self.oldest.max(event.revision);
        }
    }

    fn register(
        &mut self,
        prefix: &str,
        after: Revision,
        replay: VecDeque<Arc<CachedEvent>>,
    ) -> Subscription {
        // Watchers whose clients left are dropped here too, not only at the next change of
        // their prefix, so that a quiet prefix does not collect them.
        self.watchers.retain(|_, slot| !slot.sender.is_closed());
        let (sender, receiver) = mpsc::channel(self.options.watcher_buffer.max(1));
        let end = Arc::new(OnceLock::new());
        let id = self.next_id;
        self.next_id += 1;
        self.watchers.insert(
            id,
            Slot {
                prefix: prefix.to_owned(),
                after: after.max(replay.back().map_or(0, |e: &Arc<CachedEvent>| e.revision)),
                sender,
                end: Arc::clone(&end),
            },
        );
        Subscription {
            replay,
            receiver,
            end,
        }
    }

    /// Hands an event to every watcher it concerns, never waiting: a full buffer drops
    /// the watcher.
    fn dispatch(&mut self, event: &Arc<CachedEvent>) {
        let terminated = &self.terminated;
        self.watchers.retain(|_, slot| {
            if slot.sender.is_closed() {
                return false;
            }
            if event.revision <= slot.after {
                return true;
            }
            if event.key().is_some_and(|k| !k.starts_with(&slot.prefix)) {
                return true;
            }
            match slot.sender.try_send(Arc::clone(event)) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    terminated.inc();
                    let _ = slot.end.set(End::Lagged {
                        buffer: slot.sender.max_capacity(),
                    });
                    false
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
        });
    }

    fn terminate_all(&mut self, end: End) {
        for (_, slot) in self.watchers.drain() {
            let _ = slot.end.set(end);
        }
    }
}

/// One watcher's events: the replayed history, then every later change, then why it
/// ended. Dropping it unregisters the watcher (at the next change).
pub struct Subscription {
    replay: VecDeque<Arc<CachedEvent>>,
    receiver: mpsc::Receiver<Arc<CachedEvent>>,
    end: Arc<OnceLock<End>>,
}

impl Subscription {
    /// The next event, or why the watch ended.
    pub async fn next(&mut self) -> Result<Arc<CachedEvent>, End> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// [`Subscription::next`] for a hand-written stream (a watch's, polled once per event
    /// by every watcher's connection).
    pub fn poll_next(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<Arc<CachedEvent>, End>> {
        if let Some(event) = self.replay.pop_front() {
            return std::task::Poll::Ready(Ok(event));
        }
        self.receiver.poll_recv(cx).map(|event| match event {
            Some(event) => Ok(event),
            None => Err(self.end.get().copied().unwrap_or(End::Closed)),
        })
    }
}
