//! Watch: every change of a collection after a revision, as kube-apiserver's cacher
//! (`storage/cacher`) sends them, served from the kind's watch [`Cache`].
//!
//! - A `resourceVersion` of `N` delivers every change after `N`, in order, exactly once,
//!   from the cache's history (older than it: one `ERROR` event with kube's 410 `Expired`
//!   Status, then the end). `0` first sends an `ADDED` event per object the cache holds,
//!   then every later change; none (the most recent, consistent) does the same once the
//!   cache has reached storage's current revision, else from a storage list, then follows
//!   the cache from that list's revision.
//! - Selectors apply to both sides of a change: matched before and after is `MODIFIED`, only
//!   after is `ADDED`, only before is `DELETED` (the old object at the change's revision).
//!   A `DELETED` event carries the last state of the object with the delete's revision.
//! - Objects come from the cache, converted to the watch's version once per change and
//!   version and shared by every watcher ([`SharedObject`]).
//! - A watcher too slow to keep up is dropped by the cache: its buffered events, then one
//!   `ERROR` (500) saying to watch again; the cache re-listing ends the stream cleanly.
//! - `allowWatchBookmarks` sends a `BOOKMARK` every [`WatchOptions::bookmark_interval`]
//!   (default: the cache's, `--watch-bookmark-interval`), and one 2 s before the watch's
//!   timeout as kube's cacher does, with the last revision the watch has seen;
//!   `sendInitialEvents=true` ends its initial events with a bookmark annotated
//!   `k8s.io/initial-events-end: "true"`.
//! - The stream ends cleanly at [`WatchOptions::timeout`] and when the server shuts down.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_core::Stream;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::object::{self, internal};
use super::update::parse_resource_version;
use super::{Registry, Target, WatchEvent, WatchEventType, WatchOptions};
use kapi_core::error::{ApiError, FieldError, FieldErrorType};
use kapi_core::scheme::KindEntry;
use kapi_schema::selector::Selectors;
use kapi_storage::cache::{
    self, CachedEvent, CachedObject, Change, End, SharedObject, Subscription,
};
use kapi_storage::{ListRequest, Revision};

/// The stream of a watch: it ends at the timeout, after an `ERROR`, or when the storage
/// closes. Dropping it unregisters the watcher.
pub type EventStream = Pin<Box<dyn Stream<Item = WatchEvent> + Send>>;

/// How often bookmarks are sent by default; a registry's caches may set another interval
/// ([`CacheOptions::bookmark_interval`](kapi_storage::cache::CacheOptions::bookmark_interval)).
pub use kapi_storage::cache::DEFAULT_BOOKMARK_INTERVAL;

/// The annotation of the bookmark that ends the initial events of `sendInitialEvents`.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

impl Registry {
    pub(super) async fn watch_objects(
        &self,
        target: Target<'_>,
        options: &WatchOptions,
    ) -> Result<EventStream, ApiError> {
        let kind = target.kind;
        let info = kind.info;
        let resource = object::resource(info);
        // Objects made when read change with no write to tell of (kube: no `watch` verb).
        if info.read_only {
            return Err(ApiError::MethodNotSupported {
                resource,
                action: "watch".into(),
            });
        }
        validate_watch_options(options)?;
        let (selectors, prefix) = self.collection_scope(
            target,
            options.label_selector.as_deref(),
            options.field_selector.as_deref(),
        )?;
        let resource_version = (options.resource_version.as_deref()).filter(|v| !v.is_empty());
        let requested = resource_version.map(parse_resource_version).transpose()?;
        let send_initial = match options.send_initial_events {
            Some(send) => send,
            None => matches!(requested, None | Some(0)),
        };
        let shared_kind = (self.scheme.current(kind))
            .ok_or_else(|| object::internal(format!("{} is not served", kind.info.kind)))?;
        let cache = self.ready_cache(kind).await?;
        let cache = &*cache;

        let mut pending = VecDeque::new();
        let mut initial = Vec::new();
        let started = if send_initial {
            // What the initial events come from: the cache when it may answer (`0`, not
            // older than a revision it has reached, or, for the latest state, once it has
            // reached storage's current revision), else a consistent storage list.
            let fresh = match requested {
                Some(0) => true,
                Some(at_least) => self.cache_reaches(kind, cache, at_least).await?,
                None => self.cache_is_current(kind, cache).await?,
            };
            let (revision, subscription) = if fresh {
                let (snapshot, subscription) =
                    cache.list_and_watch(&prefix).map_err(object::cache_error)?;
                for cached in &snapshot.objects {
                    if matches_cached(kind, cached, &selectors)? {
                        let object = in_version(kind, cached, target.version)?;
                        initial.push(event(WatchEventType::Added, object));
                    }
                }
                (snapshot.revision, Ok(subscription))
            } else {
                let list = (self.storage.list(ListRequest::prefix(prefix.clone())).await)
                    .map_err(|e| object::storage_error(e, &resource, ""))?;
                for kv in &list.items {
                    let stored = object::decode(kv)?;
                    if matches(kind, &stored, &selectors)? {
                        let object =
                            object::stored_in_version(kind, kv, target.version, kv.mod_revision)?;
                        initial.push(event(WatchEventType::Added, object.into()));
                    }
                }
                (list.revision, cache.watch(&prefix, list.revision))
            };
            pending.extend(initial);
            if options.send_initial_events == Some(true) {
                let mut bookmark = bookmark(kind, target.version, revision);
                object::set_meta(
                    &mut bookmark,
                    "annotations",
                    Some(json!({ INITIAL_EVENTS_END: "true" })),
                );
                pending.push_back(event(WatchEventType::Bookmark, bookmark.into()));
            }
            subscription.map(|s| (revision, s))
        } else {
            let after = match requested {
                Some(revision) if revision > 0 => revision,
                // Changes from now on.
                _ => (self.storage.current_revision().await)
                    .map_err(|e| object::storage_error(e, &resource, ""))?,
            };
            cache.watch(&prefix, after).map(|s| (after, s))
        };
        let (from, events, done) = match started {
            Ok((from, subscription)) => (from, Some(subscription), false),
            Err(error @ cache::CacheError::TooOld { .. }) => {
                pending.clear();
                pending.push_back(error_event(&object::cache_error(error)));
                (0, None, true)
            }
            Err(error) => return Err(object::cache_error(error)),
        };
        // The request's interval (tests), else the one the server configured its caches with.
        let interval = options
            .bookmark_interval
            .unwrap_or_else(|| cache.bookmark_interval())
            .max(Duration::from_millis(10));
        let deadline = options.timeout.map(|t| Instant::now() + t);
        let watcher = Watcher {
            kind: shared_kind,
            version: target.version.to_owned(),
            selectors,
            events,
            pending,
            last: from,
            bookmarks: options.allow_watch_bookmarks,
            next_bookmark: Timer::at(next_bookmark(Instant::now(), interval, deadline)),
            interval,
            timeout: Timer::at(deadline),
            deadline,
            done,
        };
        Ok(Box::pin(watcher))
    }
}

/// The state of one watch.
struct Watcher {
    /// The kind watched, as it was when the watch started.
    kind: Arc<KindEntry>,
    version: String,
    selectors: Selectors,
    /// `None` once the cache's stream is gone.
    events: Option<Subscription>,
    /// Events ready to send (initial events, a final error).
    pending: VecDeque<WatchEvent>,
    /// The last revision seen from the cache (every change under the prefix, selected or
    /// not): what a bookmark may claim.
    last: Revision,
    bookmarks: bool,
    /// When the next bookmark is due; unarmed: no more before the deadline.
    next_bookmark: Timer,
    interval: Duration,
    deadline: Option<Instant>,
    /// The end of the watch (`deadline`).
    timeout: Timer,
    /// No more events after `pending`.
    done: bool,
}

/// A watch is a stream polled by its connection, by hand rather than as an `async` loop:
/// every watcher's connection polls it once per change, and at 1,000 watchers of one
/// collection that poll is most of what the server does per change besides the write.
impl Stream for Watcher {
    type Item = WatchEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WatchEvent>> {
        let watcher = &mut *self;
        loop {
            if let Some(event) = watcher.pending.pop_front() {
                return Poll::Ready(Some(event));
            }
            if watcher.done {
                return Poll::Ready(None);
            }
            let Some(events) = watcher.events.as_mut() else {
                return Poll::Ready(None);
            };
            // The timeout comes first, as kube ends a watch at its deadline even while
            // changes keep coming; the deadline is checked only when a change is ready,
            // and the timer polled only when none is (what wakes the watch then).
            let change = match events.poll_next(cx) {
                Poll::Ready(_) if watcher.timeout.is_due() => {
                    watcher.finish();
                    return Poll::Ready(None);
                }
                Poll::Ready(change) => change,
                Poll::Pending => {
                    if watcher.timeout.poll_fired(cx).is_ready() {
                        watcher.finish();
                        return Poll::Ready(None);
                    }
                    if watcher.bookmarks && watcher.next_bookmark.poll_fired(cx).is_ready() {
                        let due = next_bookmark(Instant::now(), watcher.interval, watcher.deadline);
                        watcher.next_bookmark.set(due);
                        let object = bookmark(&watcher.kind, &watcher.version, watcher.last);
                        return Poll::Ready(Some(event(WatchEventType::Bookmark, object.into())));
                    }
                    return Poll::Pending;
                }
            };
            match change {
                Err(End::Lagged { buffer }) => {
                    watcher.finish();
                    return Poll::Ready(Some(error_event(&ApiError::Internal(format!(
                        "the watch fell more than {buffer} changes behind and was closed; watch again from the last resourceVersion received"
                    )))));
                }
                Err(End::Reset | End::Closed) => {
                    watcher.finish();
                    return Poll::Ready(None);
                }
                Ok(change) => {
                    watcher.last = watcher.last.max(change.revision);
                    match watcher.transform(&change) {
                        Ok(Some(event)) => return Poll::Ready(Some(event)),
                        Ok(None) => {}
                        Err(error) => {
                            watcher.finish();
                            return Poll::Ready(Some(error_event(&error)));
                        }
                    }
                }
            }
        }
    }
}

impl Watcher {
    /// Ends the stream and unregisters from the cache.
    fn finish(&mut self) {
        self.done = true;
        self.events = None;
    }

    /// kube's `cacheWatcher.convertToWatchEvent`: the event a change is for this watch, if
    /// any.
    fn transform(&self, change: &CachedEvent) -> Result<Option<WatchEvent>, ApiError> {
        let kind = &*self.kind;
        let selectors = &self.selectors;
        let version = self.version.as_str();
        let revision = change.revision;
        match &change.change {
            Change::Progress => Ok(None),
            Change::Delete { prev } => {
                if !matches_cached(kind, prev, selectors)? {
                    return Ok(None);
                }
                let object = gone(kind, change, prev, version)?;
                Ok(Some(event(WatchEventType::Deleted, object)))
            }
            Change::Put { object, prev } => {
                let now = matches_cached(kind, object, selectors)?;
                let before = match prev {
                    Some(prev) if !selectors.is_empty() => {
                        Some(matches_cached(kind, prev, selectors)?)
                    }
                    Some(_) => Some(true),
                    None => None,
                };
                match (before, now) {
                    (None | Some(false), true) => {
                        let object = in_version(kind, object, version)?;
                        Ok(Some(event(WatchEventType::Added, object)))
                    }
                    (Some(true), true) => {
                        let object = in_version(kind, object, version)?;
                        Ok(Some(event(WatchEventType::Modified, object)))
                    }
                    (Some(true), false) => {
                        let prev = prev.as_ref().expect("a previous object was matched");
                        let object = gone(kind, change, prev, version)?;
                        debug_assert_eq!(
                            object.value().pointer("/metadata/resourceVersion").cloned(),
                            Some(Value::String(revision.to_string()))
                        );
                        Ok(Some(event(WatchEventType::Deleted, object)))
                    }
                    (_, false) => Ok(None),
                }
            }
        }
    }
}

/// A cached object in `version` with its own revision, converted once per version.
pub(super) fn in_version(
    kind: &KindEntry,
    cached: &Arc<CachedObject>,
    version: &str,
) -> Result<SharedObject, ApiError> {
    cached.served(kind.info.group, version, || {
        converted(kind, cached, version, cached.kv.mod_revision)
    })
}

/// The old object of a change in `version`, with the change's revision (a `DELETED`
/// event's object), converted once per version.
fn gone(
    kind: &KindEntry,
    change: &CachedEvent,
    prev: &CachedObject,
    version: &str,
) -> Result<SharedObject, ApiError> {
    (change.gone).get_or_try_insert(kind.info.group, version, &prev.kv.value, || {
        converted(kind, prev, version, change.revision)
    })
}

fn converted(
    kind: &KindEntry,
    cached: &CachedObject,
    version: &str,
    revision: Revision,
) -> Result<Value, ApiError> {
    let stored = cached.decode().map_err(internal)?;
    let mut object = kind
        .stored_to(stored, version)
        .map_err(|e| internal(format!("converting the object at {}: {e}", cached.kv.key)))?;
    object::set_resource_version(&mut object, revision);
    Ok(object)
}

/// Whether a cached object matches the selectors: labels as the cache extracted them; the
/// selectable fields' values are computed from its hub once and kept (not the hub).
pub(super) fn matches_cached(
    kind: &KindEntry,
    cached: &CachedObject,
    selectors: &Selectors,
) -> Result<bool, ApiError> {
    // The labels only when a selector asks: the cache finds them on first use.
    if selectors.selects_labels() && !selectors.matches_label_map(cached.labels()) {
        return Ok(false);
    }
    if !selectors.selects_fields() {
        return Ok(true);
    }
    let key = (kind.info.group, kind.info.kind);
    let fields = cached.derived.get_or_try_insert(&key, || {
        let stored = cached.decode().map_err(internal)?;
        let hub = kind.from_stored(stored).map_err(internal)?;
        let json = kind.hub_json(&hub).map_err(internal)?;
        Ok::<_, ApiError>(Arc::new(Selectors::selectable_values(kind.info, &json)))
    })?;
    Ok(selectors.matches_selectable_values(&fields))
}

/// How long before its deadline a watch gets its last bookmark (kube's cacher: 2 s).
const PRE_TIMEOUT_BOOKMARK: Duration = Duration::from_secs(2);

/// When a watch's next bookmark is due, as kube's cacher (`nextBookmarkTime`) schedules
/// it: an `interval` from `now`, or [`PRE_TIMEOUT_BOOKMARK`] before the deadline if that
/// comes first, so a client whose watch times out resumes from a recent revision rather
/// than from its last event, possibly long compacted away; none once that moment is past.
fn next_bookmark(now: Instant, interval: Duration, deadline: Option<Instant>) -> Option<Instant> {
    let periodic = now + interval;
    let due = match deadline {
        Some(deadline) => periodic.min(deadline.checked_sub(PRE_TIMEOUT_BOOKMARK)?),
        None => periodic,
    };
    (due >= now).then_some(due)
}

/// A timer armed once and kept across events: a watch waits for its next change, its
/// timeout and its next bookmark at once, and a timer made anew for each change would
/// cost every watcher a trip through the runtime's timer wheel per change. Once polled by
/// a task, it wakes that task when it fires, so it is polled again only for another task
/// (or after [`Timer::set`]); until then its state is read without the timer wheel. That
/// poll, with the clock read beside it, cost about 250 of the some 6,000 instructions
/// each watcher spent per change (callgrind, 200 watchers).
struct Timer {
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The waker of the last poll: the task the timer wakes.
    polled_by: Option<Waker>,
}

impl Timer {
    /// Firing at `due`; never, for `None`.
    fn at(due: Option<Instant>) -> Timer {
        Timer {
            sleep: due.map(|due| Box::pin(tokio::time::sleep_until(due))),
            polled_by: None,
        }
    }

    /// Fires at `due` instead; never, for `None`.
    fn set(&mut self, due: Option<Instant>) {
        match (&mut self.sleep, due) {
            (Some(sleep), Some(due)) => {
                sleep.as_mut().reset(due);
                // Registered anew at its next poll.
                self.polled_by = None;
            }
            (_, due) => *self = Timer::at(due),
        }
    }

    /// Ready once it has fired (never, when unarmed).
    fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(sleep) = &mut self.sleep else {
            return Poll::Pending;
        };
        if (self.polled_by.as_ref()).is_some_and(|waker| waker.will_wake(cx.waker())) {
            return if sleep.is_elapsed() {
                Poll::Ready(())
            } else {
                Poll::Pending
            };
        }
        let fired = sleep.as_mut().poll(cx);
        self.polled_by = Some(cx.waker().clone());
        fired
    }

    /// Whether the time it was set to has come: as the timer says once it has been polled
    /// (no clock read), else by the clock; never, when unarmed.
    fn is_due(&self) -> bool {
        match &self.sleep {
            Some(sleep) if self.polled_by.is_some() => sleep.is_elapsed(),
            Some(sleep) => Instant::now() >= sleep.deadline(),
            None => false,
        }
    }
}

fn event(type_: WatchEventType, object: SharedObject) -> WatchEvent {
    WatchEvent { type_, object }
}

/// An `ERROR` event carrying the Status of `error`.
pub(super) fn error_event(error: &ApiError) -> WatchEvent {
    let status = serde_json::to_value(error.to_status()).unwrap_or_else(|_| json!({}));
    event(WatchEventType::Error, status.into())
}

/// A bookmark: the kind, and the revision the watch has reached.
fn bookmark(kind: &KindEntry, version: &str, revision: Revision) -> Value {
    json!({
        "kind": kind.info.kind,
        "apiVersion": kind.api_version(version),
        "metadata": { "resourceVersion": revision.to_string() },
    })
}

/// Whether a stored object matches the selectors (labels on any version, fields on the hub).
fn matches(kind: &KindEntry, stored: &Value, selectors: &Selectors) -> Result<bool, ApiError> {
    if !selectors.matches_labels(stored) {
        return Ok(false);
    }
    if !selectors.selects_fields() {
        return Ok(true);
    }
    let hub = kind.from_stored(stored.clone()).map_err(internal)?;
    let json = kind.hub_json(&hub).map_err(internal)?;
    Ok(selectors.matches_fields(kind.info, &json))
}

/// kube's `validateWatchOptions`.
fn validate_watch_options(options: &WatchOptions) -> Result<(), ApiError> {
    let mut errors = Vec::new();
    let forbidden =
        |field: &str, detail: &str| FieldError::new(FieldErrorType::Forbidden, field, None, detail);
    let matching = options.resource_version_match.as_deref().unwrap_or("");
    if options.send_initial_events.is_some() {
        if matching != "NotOlderThan" {
            errors.push(forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !options.allow_watch_bookmarks {
            errors.push(forbidden(
                "allowWatchBookmarks",
                "sendInitialEvents requires setting allowWatchBookmarks to true",
            ));
        }
    }
    if !matching.is_empty() {
        if options.send_initial_events.is_none() {
            errors.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if matching != "NotOlderThan" {
            errors.push(FieldError::new(
                FieldErrorType::NotSupported,
                "resourceVersionMatch",
                Some(Value::String(matching.to_owned())),
                "supported values: \"NotOlderThan\"",
            ));
        }
    }
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::Invalid {
        group: "meta.k8s.io".into(),
        kind: "ListOptions".into(),
        name: String::new(),
        causes: errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookmarks_are_due_every_interval_and_just_before_the_deadline() {
        let now = Instant::now();
        let secs = Duration::from_secs;
        let minute = secs(60);
        assert_eq!(next_bookmark(now, minute, None), Some(now + minute));
        // A 10-minute watch: the periodic one first; a 30 s watch: 2 s before its end.
        assert_eq!(
            next_bookmark(now, minute, Some(now + secs(600))),
            Some(now + minute)
        );
        assert_eq!(
            next_bookmark(now, minute, Some(now + secs(30))),
            Some(now + secs(28))
        );
        // Past the pre-timeout moment (or a watch shorter than 2 s): no more.
        assert_eq!(next_bookmark(now, minute, Some(now + secs(1))), None);
        assert_eq!(
            next_bookmark(now + secs(28), minute, Some(now + secs(30))),
            Some(now + secs(28))
        );
        assert_eq!(
            next_bookmark(now + secs(29), minute, Some(now + secs(30))),
            None
        );
    }

    #[test]
    fn cache_failures_become_statuses() {
        let expired = object::cache_error(cache::CacheError::TooOld {
            requested: 3,
            oldest: 9,
        });
        assert_eq!(expired.code(), 410);
        assert_eq!(expired.to_string(), "too old resource version: 3 (9)");
        let event = error_event(&expired);
        assert_eq!(event.type_, WatchEventType::Error);
        assert_eq!(event.object.value()["reason"], "Expired");
        assert_eq!(
            serde_json::to_value(&event).unwrap()["type"],
            "ERROR",
            "the wire name"
        );
        let not_ready = object::cache_error(cache::CacheError::NotReady);
        assert_eq!(not_ready.code(), 429);
        assert_eq!(not_ready.retry_after_seconds(), Some(1));
    }
}
