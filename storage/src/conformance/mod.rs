//! The storage conformance suite: the behaviour every [`Storage`] backend must have, as
//! kube-apiserver's `pkg/storage/testing/store_tests.go` is for its backends.
//!
//! A backend's test file runs all of it with one line:
//!
//! ```ignore
//! kapi_storage::storage_conformance_tests!(async || make_backend().await);
//! ```
//!
//! which expands to one `#[tokio::test]` per case (the using crate needs `tokio` with the
//! `macros` and `rt-multi-thread` features). The factory returns a [`TestBackend`]: an
//! `Arc<dyn Storage>`, or a pair of one and a guard (such as a temporary directory) dropped
//! after the test. Each case needs a store of its own: revisions and compaction are global,
//! so cases sharing one etcd must run one at a time.
//!
//! Cases never assume a starting revision, and never sleep to synchronise: they wait for
//! conditions with deadlines. They are grouped by what they exercise: `writes`,
//! `reads`, `history` (watches and compaction).

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;

use crate::{Error, Guard, KeyValue, ListRequest, Revision, Storage, WatchEvent, WatchStream};

mod history;
mod reads;
mod writes;

pub use history::*;
pub use reads::*;
pub use writes::*;

/// What a conformance factory returns.
pub trait TestBackend: Send + 'static {
    /// The store under test.
    fn storage(&self) -> Arc<dyn Storage>;
}

impl TestBackend for Arc<dyn Storage> {
    fn storage(&self) -> Arc<dyn Storage> {
        Arc::clone(self)
    }
}

impl<G: Send + 'static> TestBackend for (Arc<dyn Storage>, G) {
    fn storage(&self) -> Arc<dyn Storage> {
        Arc::clone(&self.0)
    }
}

/// Runs the whole conformance suite against a backend: one `#[tokio::test]` per case.
///
/// The argument is a closure (called once per test) whose future yields a
/// [`TestBackend`](crate::conformance::TestBackend).
#[macro_export]
macro_rules! storage_conformance_tests {
    ($make:expr) => {
        $crate::__storage_conformance_cases!(
            $make;
            revision_increases_by_one_per_write,
            create_is_create_if_absent,
            create_guarded_checks_the_guard,
            get_missing_key,
            update_compares_mod_revision,
            delete_with_and_without_precondition,
            failed_writes_do_not_advance_revision,
            list_is_ordered_by_key,
            list_does_not_leak_sibling_prefix,
            list_limit_and_continue,
            list_without_remaining_keeps_more_exact,
            list_keys_only,
            list_at_past_revision,
            get_at_past_revision,
            paginate_while_writing,
            read_at_future_revision,
            count_live_keys,
            size_covers_what_is_stored,
            big_collections_are_read_whole,
            watch_replays_then_follows,
            watch_from_now,
            watch_ignores_other_prefixes,
            watch_future_revision,
            progress_on_request,
            compaction,
            concurrent_writers,
            slow_watcher_does_not_block_writers,
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __storage_conformance_cases {
    ($make:expr; $($case:ident),* $(,)?) => {$(
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $case() {
            let backend = ($make)().await;
            $crate::conformance::$case(backend).await;
        }
    )*};
}

/// How long a case waits for anything before failing.
const DEADLINE: Duration = Duration::from_secs(30);

/// Awaits `future`, failing the test after [`DEADLINE`].
async fn deadline<T>(what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(DEADLINE, future).await {
        Ok(value) => value,
        Err(_) => panic!("timed out after {DEADLINE:?} waiting for {what}"),
    }
}

fn bytes(value: &str) -> Bytes {
    Bytes::copy_from_slice(value.as_bytes())
}

/// Unwraps an operation's result, naming the operation on failure.
fn ok<T, E: Debug>(what: &str, result: Result<T, E>) -> T {
    match result {
        Ok(value) => value,
        Err(error) => panic!("{what} failed: {error:?}"),
    }
}

/// The next change on a watch, skipping progress notifications.
async fn next_event(stream: &mut WatchStream) -> WatchEvent {
    loop {
        match deadline("a watch event", stream.next()).await {
            Some(Ok(WatchEvent::Progress { .. })) => continue,
            Some(Ok(event)) => return event,
            Some(Err(error)) => panic!("watch failed: {error:?}"),
            None => panic!("watch ended"),
        }
    }
}

/// The next item on a watch that is not a progress notification.
async fn next_item(stream: &mut WatchStream) -> Option<Result<WatchEvent, Error>> {
    loop {
        match deadline("a watch item", stream.next()).await {
            Some(Ok(WatchEvent::Progress { .. })) => continue,
            other => return other,
        }
    }
}

/// An event as `(revision, "put"|"delete", key, value, prev value)`, for comparisons.
type Summary = (Revision, &'static str, String, String, Option<String>);

fn summary(event: &WatchEvent) -> Summary {
    let text = |kv: &KeyValue| String::from_utf8_lossy(&kv.value).into_owned();
    match event {
        WatchEvent::Put { kv, prev } => (
            kv.mod_revision,
            "put",
            kv.key.clone(),
            text(kv),
            prev.as_ref().map(text),
        ),
        WatchEvent::Delete { prev, revision } => (
            *revision,
            "delete",
            prev.key.clone(),
            String::new(),
            Some(text(prev)),
        ),
        WatchEvent::Progress { revision } => {
            (*revision, "progress", String::new(), String::new(), None)
        }
    }
}

fn put(revision: Revision, key: &str, value: &str, prev: Option<&str>) -> Summary {
    (
        revision,
        "put",
        key.into(),
        value.into(),
        prev.map(Into::into),
    )
}

fn delete(revision: Revision, key: &str, prev: &str) -> Summary {
    (
        revision,
        "delete",
        key.into(),
        String::new(),
        Some(prev.into()),
    )
}

/// `(key, value, mod_revision)` of each item, for comparisons.
fn entries(items: &[KeyValue]) -> Vec<(String, String, Revision)> {
    (items.iter())
        .map(|kv| {
            let value = String::from_utf8_lossy(&kv.value).into_owned();
            (kv.key.clone(), value, kv.mod_revision)
        })
        .collect()
}

fn keys(items: &[KeyValue]) -> Vec<&str> {
    items.iter().map(|kv| kv.key.as_str()).collect()
}

/// Checks a [`Error::Compacted`] (whose `compacted` may be unknown: `0`).
fn assert_compacted<T: Debug>(result: Result<T, Error>, requested: Revision, compacted: Revision) {
    match result {
        Err(Error::Compacted {
            requested: r,
            compacted: c,
        }) if r == requested && (c == compacted || c == 0) => {}
        other => panic!(
            "expected Compacted {{ requested: {requested}, compacted: {compacted} }}, got {other:?}"
        ),
    }
}

/// Checks a [`Error::FutureRevision`] (whose `current` may be unknown: `0`).
fn assert_future<T: Debug>(result: Result<T, Error>, requested: Revision, current: Revision) {
    match result {
        Err(Error::FutureRevision {
            requested: r,
            current: c,
        }) if r == requested && (c == current || c == 0) => {}
        other => panic!(
            "expected FutureRevision {{ requested: {requested}, current: {current} }}, got {other:?}"
        ),
    }
}

async fn create(storage: &dyn Storage, key: &str, value: &str) -> KeyValue {
    ok(
        &format!("create {key}"),
        storage.create(key, bytes(value)).await,
    )
}

async fn update(storage: &dyn Storage, key: &str, value: &str, expected: Revision) -> KeyValue {
    let result = storage.update(key, bytes(value), expected).await;
    ok(&format!("update {key}"), result)
}

async fn current(storage: &dyn Storage) -> Revision {
    ok("current_revision", storage.current_revision().await)
}
