//! Watch: every change of a collection after a revision, as kube-apiserver's etcd watcher
//! (`storage/etcd3/watcher.go`) sends them, on top of [`Storage::watch`](crate::storage::Storage::watch).
//!
//! - A `resourceVersion` of `N` delivers every change after `N`, in order, exactly once; `0`
//!   or none first sends an `ADDED` event per current object (a list at the current revision)
//!   then every change after that revision, so nothing is missed or repeated.
//! - Selectors apply to both sides of a change: matched before and after is `MODIFIED`, only
//!   after is `ADDED`, only before is `DELETED` (the old object at the change's revision).
//!   A `DELETED` event carries the last state of the object with the delete's revision.
//! - A revision older than the retained history is one `ERROR` event with kube's 410
//!   `Expired` Status, then the end; so is a watcher too slow to keep up (a 500).
//! - `allowWatchBookmarks` sends a `BOOKMARK` every [`WatchOptions::bookmark_interval`]
//!   with the last revision the watch has seen; `sendInitialEvents=true` ends its initial
//!   events with a bookmark annotated `k8s.io/initial-events-end: "true"`.
//! - The stream ends cleanly at [`WatchOptions::timeout`].

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_core::Stream;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::object::{self, internal};
use super::selector::Selectors;
use super::update::parse_resource_version;
use super::{Registry, Target, WatchEvent, WatchEventType, WatchOptions};
use crate::error::{ApiError, FieldError, FieldErrorType, GroupResource};
use crate::scheme::{KindEntry, Scheme};
use crate::storage::{self, KeyValue, ListRequest, Revision, WatchStream};

/// The stream of a watch: it ends at the timeout, after an `ERROR`, or when the storage
/// closes. Dropping it ends the storage watch.
pub type EventStream = Pin<Box<dyn Stream<Item = WatchEvent> + Send>>;

/// How often bookmarks are sent by default (kube's cacher sends one about every minute).
pub const DEFAULT_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

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
        let kind_index = (self.scheme.kinds().iter())
            .position(|k| std::ptr::eq(k, kind))
            .or_else(|| {
                (self.scheme.kinds().iter())
                    .position(|k| k.info.group == info.group && k.info.kind == info.kind)
            })
            .ok_or_else(|| internal(format!("{} is not in the registry's scheme", info.kind)))?;

        let mut pending = VecDeque::new();
        let from = if send_initial {
            let list = (self.storage.list(ListRequest::prefix(prefix.clone())).await)
                .map_err(|e| object::storage_error(e, &resource, ""))?;
            if let Some(at_least) = requested.filter(|r| *r > list.revision) {
                return Err(ApiError::Timeout {
                    message: format!(
                        "Too large resource version: {at_least}, current: {}",
                        list.revision
                    ),
                    retry_after_seconds: 1,
                });
            }
            for kv in &list.items {
                let stored = object::decode(kv)?;
                if matches(kind, &stored, &selectors)? {
                    let object = convert(kind, kv, stored, target.version, kv.mod_revision)?;
                    pending.push_back(event(WatchEventType::Added, object));
                }
            }
            if options.send_initial_events == Some(true) {
                let mut bookmark = bookmark(kind, target.version, list.revision);
                object::set_meta(
                    &mut bookmark,
                    "annotations",
                    Some(json!({ INITIAL_EVENTS_END: "true" })),
                );
                pending.push_back(event(WatchEventType::Bookmark, bookmark));
            }
            list.revision
        } else {
            requested.unwrap_or(0)
        };

        let mut done = false;
        let events = match self.storage.watch(&prefix, from).await {
            Ok(events) => Some(events),
            Err(error @ storage::Error::Compacted { .. }) => {
                pending.clear();
                pending.push_back(error_event(&object::storage_error(error, &resource, "")));
                done = true;
                None
            }
            Err(error) => return Err(object::storage_error(error, &resource, "")),
        };
        let interval = options
            .bookmark_interval
            .unwrap_or(DEFAULT_BOOKMARK_INTERVAL)
            .max(Duration::from_millis(10));
        let watcher = Watcher {
            scheme: Arc::clone(&self.scheme),
            kind: kind_index,
            version: target.version.to_owned(),
            resource,
            selectors,
            events,
            pending,
            last: from,
            bookmarks: options.allow_watch_bookmarks,
            next_bookmark: Instant::now() + interval,
            interval,
            deadline: options.timeout.map(|t| Instant::now() + t),
            done,
        };
        Ok(Box::pin(futures_util::stream::unfold(
            watcher,
            |mut watcher| async move {
                let item = watcher.next_event().await?;
                Some((item, watcher))
            },
        )))
    }
}

/// The state of one watch.
struct Watcher {
    scheme: Arc<Scheme>,
    /// Index of the kind in the scheme.
    kind: usize,
    version: String,
    resource: GroupResource,
    selectors: Selectors,
    /// `None` once the storage stream is gone.
    events: Option<WatchStream>,
    /// Events ready to send (initial events, a final error).
    pending: VecDeque<WatchEvent>,
    /// The last revision seen from storage (every change under the prefix, selected or
    /// not): what a bookmark may claim.
    last: Revision,
    bookmarks: bool,
    next_bookmark: Instant,
    interval: Duration,
    deadline: Option<Instant>,
    /// No more events after `pending`.
    done: bool,
}

/// What woke the watcher.
enum Wake {
    Storage(Option<storage::Result<storage::WatchEvent>>),
    Bookmark,
    Timeout,
}

impl Watcher {
    async fn next_event(&mut self) -> Option<WatchEvent> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(event);
            }
            if self.done {
                return None;
            }
            let deadline = self.deadline;
            let bookmarks = self.bookmarks;
            let next_bookmark = self.next_bookmark;
            let events = self.events.as_mut()?;
            let wake = tokio::select! {
                biased;
                () = sleep_until(deadline) => Wake::Timeout,
                item = events.next() => Wake::Storage(item),
                () = tokio::time::sleep_until(next_bookmark), if bookmarks => Wake::Bookmark,
            };
            match wake {
                Wake::Timeout => {
                    self.finish();
                    return None;
                }
                Wake::Bookmark => {
                    self.next_bookmark = Instant::now() + self.interval;
                    let kind = &self.scheme.kinds()[self.kind];
                    let object = bookmark(kind, &self.version, self.last);
                    return Some(event(WatchEventType::Bookmark, object));
                }
                Wake::Storage(None) => {
                    self.finish();
                    return None;
                }
                Wake::Storage(Some(Err(error))) => {
                    self.finish();
                    return Some(error_event(&watch_error(error, &self.resource)));
                }
                Wake::Storage(Some(Ok(change))) => {
                    self.last = self.last.max(change.revision());
                    match self.transform(&change) {
                        Ok(Some(event)) => return Some(event),
                        Ok(None) => {}
                        Err(error) => {
                            self.finish();
                            return Some(error_event(&error));
                        }
                    }
                }
            }
        }
    }

    /// Ends the stream and the storage watch.
    fn finish(&mut self) {
        self.done = true;
        self.events = None;
    }

    /// kube's `watchChan.transform`: the event a change is for this watch, if any.
    fn transform(&self, change: &storage::WatchEvent) -> Result<Option<WatchEvent>, ApiError> {
        let kind = &self.scheme.kinds()[self.kind];
        let selectors = &self.selectors;
        let version = self.version.as_str();
        let decoded = |kv: &KeyValue| -> Result<(bool, Value), ApiError> {
            let stored = object::decode(kv)?;
            Ok((matches(kind, &stored, selectors)?, stored))
        };
        match change {
            storage::WatchEvent::Progress { .. } => Ok(None),
            storage::WatchEvent::Delete { prev, revision } => {
                let (matched, stored) = decoded(prev)?;
                if !matched {
                    return Ok(None);
                }
                let object = convert(kind, prev, stored, version, *revision)?;
                Ok(Some(event(WatchEventType::Deleted, object)))
            }
            storage::WatchEvent::Put { kv, prev } => {
                let (now, stored) = decoded(kv)?;
                let before = match prev {
                    Some(prev) if !selectors.is_empty() => Some(decoded(prev)?),
                    Some(_) => Some((true, Value::Null)),
                    None => None,
                };
                let revision = kv.mod_revision;
                match (before, now) {
                    (None, true) | (Some((false, _)), true) => {
                        let object = convert(kind, kv, stored, version, revision)?;
                        Ok(Some(event(WatchEventType::Added, object)))
                    }
                    (Some((true, _)), true) => {
                        let object = convert(kind, kv, stored, version, revision)?;
                        Ok(Some(event(WatchEventType::Modified, object)))
                    }
                    (Some((true, old)), false) => {
                        let prev = prev.as_ref().expect("a previous value was decoded");
                        let object = convert(kind, prev, old, version, revision)?;
                        Ok(Some(event(WatchEventType::Deleted, object)))
                    }
                    (_, false) => Ok(None),
                }
            }
        }
    }
}

/// The Status ending a watch on a storage failure.
fn watch_error(error: storage::Error, resource: &GroupResource) -> ApiError {
    match error {
        storage::Error::Lagged { capacity } => ApiError::Internal(format!(
            "the watch fell more than {capacity} changes behind and was closed; watch again from the last resourceVersion received"
        )),
        other => object::storage_error(other, resource, ""),
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

fn event(type_: WatchEventType, object: Value) -> WatchEvent {
    WatchEvent { type_, object }
}

/// An `ERROR` event carrying the Status of `error`.
pub(super) fn error_event(error: &ApiError) -> WatchEvent {
    let status = serde_json::to_value(error.to_status()).unwrap_or_else(|_| json!({}));
    event(WatchEventType::Error, status)
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
    let from = object::stored_version(kind, stored);
    let hub = kind.to_hub(stored.clone(), from).map_err(internal)?;
    let json = kind.hub_json(&hub).map_err(internal)?;
    Ok(selectors.matches_fields(kind.info, &json))
}

/// A decoded stored object in `version`, with `revision` as its resourceVersion.
fn convert(
    kind: &KindEntry,
    kv: &KeyValue,
    stored: Value,
    version: &str,
    revision: Revision,
) -> Result<Value, ApiError> {
    let from = object::stored_version(kind, &stored);
    let mut object = kind
        .convert(stored, from, version)
        .map_err(|e| internal(format!("converting the object at {}: {e}", kv.key)))?;
    object::set_resource_version(&mut object, revision);
    Ok(object)
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
    fn storage_failures_become_statuses() {
        let resource = GroupResource::new("apps.example.dev", "webapps");
        let lagged = watch_error(storage::Error::Lagged { capacity: 8 }, &resource);
        assert_eq!(lagged.code(), 500);
        assert!(lagged.to_string().contains("more than 8 changes behind"));
        let compacted = storage::Error::Compacted {
            requested: 3,
            compacted: 9,
        };
        let expired = watch_error(compacted, &resource);
        assert_eq!(expired.code(), 410);
        assert_eq!(expired.to_string(), "too old resource version: 3 (9)");
        let event = error_event(&expired);
        assert_eq!(event.type_, WatchEventType::Error);
        assert_eq!(event.object["reason"], "Expired");
        assert_eq!(
            serde_json::to_value(&event).unwrap()["type"],
            "ERROR",
            "the wire name"
        );
    }
}
