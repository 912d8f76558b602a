//! The storage conformance suite: the behaviour every [`Storage`] backend must have, as
//! kube-apiserver's `pkg/storage/testing/store_tests.go` is for its backends.
//!
//! A backend's test file runs all of it with one line:
//!
//! ```ignore
//! kapi_runtime::storage_conformance_tests!(async || make_backend().await);
//! ```
//!
//! which expands to one `#[tokio::test]` per case (the using crate needs `tokio` with the
//! `macros` and `rt-multi-thread` features). The factory returns a [`TestBackend`]: an
//! `Arc<dyn Storage>`, or a pair of one and a guard (such as a temporary directory) dropped
//! after the test. Each case needs a store of its own: revisions and compaction are global,
//! so cases sharing one etcd must run one at a time.
//!
//! Cases never assume a starting revision, and never sleep to synchronise: they wait for
//! conditions with deadlines.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;

use super::{Error, Guard, KeyValue, ListRequest, Revision, Storage, WatchEvent, WatchStream};

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
/// [`TestBackend`](crate::storage::conformance::TestBackend).
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
            list_at_past_revision,
            get_at_past_revision,
            paginate_while_writing,
            read_at_future_revision,
            count_live_keys,
            size_covers_what_is_stored,
            watch_replays_then_follows,
            watch_from_now,
            watch_ignores_other_prefixes,
            watch_future_revision,
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
            $crate::storage::conformance::$case(backend).await;
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

/// Each write gets the next revision, across keys.
pub async fn revision_increases_by_one_per_write(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let r0 = current(s).await;
    let a = create(s, "/rev/a", "1").await;
    assert_eq!((a.create_revision, a.mod_revision), (r0 + 1, r0 + 1));
    let b = create(s, "/rev/b", "1").await;
    assert_eq!(b.mod_revision, r0 + 2);
    let a2 = update(s, "/rev/a", "2", a.mod_revision).await;
    assert_eq!((a2.create_revision, a2.mod_revision), (r0 + 1, r0 + 3));
    let deleted = ok("delete", s.delete("/rev/b", None).await);
    assert_eq!(deleted.revision, r0 + 4);
    assert_eq!(current(s).await, r0 + 4);
    let list = ok("list", s.list(ListRequest::prefix("/rev/")).await);
    assert_eq!(list.revision, r0 + 4);
}

/// Create fails on an existing key, and succeeds again after a delete.
pub async fn create_is_create_if_absent(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let first = create(s, "/create/a", "1").await;
    assert_eq!(
        s.create("/create/a", bytes("2")).await,
        Err(Error::AlreadyExists {
            key: "/create/a".into()
        })
    );
    let got = ok("get", s.get("/create/a", 0).await).expect("key exists");
    assert_eq!(got, first);
    ok("delete", s.delete("/create/a", None).await);
    let again = create(s, "/create/a", "3").await;
    assert_eq!(again.create_revision, again.mod_revision);
    assert!(again.create_revision > first.create_revision);
}

/// A guarded create happens only while the guard's key is at the expected mod revision
/// (absent for `0`); a failed guard is a conflict on the guard's key, checked before the
/// key's own existence, and writes nothing.
pub async fn create_guarded_checks_the_guard(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let guard_key = "/guarded/ns";
    let guard = |mod_revision| Guard {
        key: guard_key.into(),
        mod_revision,
    };
    // Absent guard key: expected 0.
    let a = ok(
        "create_guarded",
        s.create_guarded("/guarded/a", bytes("a"), &guard(0)).await,
    );
    assert_eq!(a.create_revision, a.mod_revision);
    let ns1 = create(s, guard_key, "1").await;
    assert_eq!(
        s.create_guarded("/guarded/b", bytes("b"), &guard(0)).await,
        Err(Error::Conflict {
            key: guard_key.into(),
            expected: 0,
            current: ns1.mod_revision,
        })
    );
    let b = ok(
        "create_guarded",
        s.create_guarded("/guarded/b", bytes("b"), &guard(ns1.mod_revision))
            .await,
    );
    assert_eq!(b.mod_revision, ns1.mod_revision + 1);
    assert_eq!(
        s.create_guarded("/guarded/b", bytes("again"), &guard(ns1.mod_revision))
            .await,
        Err(Error::AlreadyExists {
            key: "/guarded/b".into()
        })
    );
    let ns2 = update(s, guard_key, "2", ns1.mod_revision).await;
    let before = current(s).await;
    for key in ["/guarded/b", "/guarded/c"] {
        assert_eq!(
            s.create_guarded(key, bytes("c"), &guard(ns1.mod_revision))
                .await,
            Err(Error::Conflict {
                key: guard_key.into(),
                expected: ns1.mod_revision,
                current: ns2.mod_revision,
            })
        );
    }
    ok("delete", s.delete(guard_key, None).await);
    assert_eq!(
        s.create_guarded("/guarded/c", bytes("c"), &guard(ns2.mod_revision))
            .await,
        Err(Error::Conflict {
            key: guard_key.into(),
            expected: ns2.mod_revision,
            current: 0,
        })
    );
    assert_eq!(current(s).await, before + 1, "failed guards write nothing");
    assert_eq!(ok("get", s.get("/guarded/c", 0).await), None);
    assert_eq!(
        ok("get", s.get("/guarded/b", 0).await).map(|kv| kv.value),
        Some(bytes("b"))
    );
}

/// A list that skips the count of what follows returns the same page and the same `more`
/// (deleted keys after the page are not "more"); `remaining` is `0` or the exact count.
pub async fn list_without_remaining_keeps_more_exact(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    for key in ["a", "b", "c", "d", "e"] {
        create(s, &format!("/skip/{key}"), key).await;
    }
    ok("delete", s.delete("/skip/e", None).await);
    for (limit, start_after) in [
        (2, None),
        (2, Some("/skip/b")),
        (1, Some("/skip/c")),
        (3, Some("/skip/a")),
    ] {
        let mut request = ListRequest::prefix("/skip/").limit(limit);
        request.start_after = start_after.map(str::to_owned);
        let counted = ok("list", s.list(request.clone()).await);
        let skipped = ok("list", s.list(request.without_remaining()).await);
        assert_eq!(
            keys(&skipped.items),
            keys(&counted.items),
            "{limit} after {start_after:?}"
        );
        assert_eq!(skipped.more, counted.more, "{limit} after {start_after:?}");
        assert!(
            [0, counted.remaining].contains(&skipped.remaining),
            "{limit} after {start_after:?}: {} of {}",
            skipped.remaining,
            counted.remaining
        );
    }
    // Only a deleted key after the page: nothing more.
    let last = ok(
        "list",
        s.list(
            ListRequest::prefix("/skip/")
                .start_after("/skip/c")
                .limit(1)
                .without_remaining(),
        )
        .await,
    );
    assert_eq!((keys(&last.items), last.more), (vec!["/skip/d"], false));
}

/// A missing key reads as `None`, before creation and after deletion.
pub async fn get_missing_key(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    assert_eq!(ok("get", s.get("/missing/a", 0).await), None);
    let kv = create(s, "/missing/a", "1").await;
    assert_eq!(ok("get", s.get("/missing/a", 0).await), Some(kv));
    ok("delete", s.delete("/missing/a", None).await);
    assert_eq!(ok("get", s.get("/missing/a", 0).await), None);
    // A key is not a prefix.
    create(s, "/missing/ab", "1").await;
    assert_eq!(ok("get", s.get("/missing/a", 0).await), None);
}

/// Update is a compare-and-swap on the mod revision.
pub async fn update_compares_mod_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let v1 = create(s, "/update/a", "1").await;
    let v2 = update(s, "/update/a", "2", v1.mod_revision).await;
    assert_eq!(&v2.value[..], b"2");
    assert_eq!(v2.create_revision, v1.create_revision);
    assert_eq!(
        s.update("/update/a", bytes("3"), v1.mod_revision).await,
        Err(Error::Conflict {
            key: "/update/a".into(),
            expected: v1.mod_revision,
            current: v2.mod_revision,
        })
    );
    assert_eq!(
        s.update("/update/missing", bytes("1"), v1.mod_revision)
            .await,
        Err(Error::NotFound {
            key: "/update/missing".into()
        })
    );
    let got = ok("get", s.get("/update/a", 0).await);
    assert_eq!(got, Some(v2));
}

/// Delete returns what it deleted; with a precondition it is a compare-and-swap.
pub async fn delete_with_and_without_precondition(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let a1 = create(s, "/delete/a", "1").await;
    let a2 = update(s, "/delete/a", "2", a1.mod_revision).await;
    assert_eq!(
        s.delete("/delete/a", Some(a1.mod_revision)).await,
        Err(Error::Conflict {
            key: "/delete/a".into(),
            expected: a1.mod_revision,
            current: a2.mod_revision,
        })
    );
    let deleted = ok("delete", s.delete("/delete/a", Some(a2.mod_revision)).await);
    assert_eq!(deleted.prev, a2);
    assert_eq!(deleted.revision, a2.mod_revision + 1);
    assert_eq!(
        s.delete("/delete/a", None).await,
        Err(Error::NotFound {
            key: "/delete/a".into()
        })
    );
    let b = create(s, "/delete/b", "b").await;
    let deleted = ok("delete", s.delete("/delete/b", None).await);
    assert_eq!(deleted.prev, b);
    assert_eq!(ok("get", s.get("/delete/b", 0).await), None);
}

/// Writes that fail their precondition change nothing, not even the revision.
pub async fn failed_writes_do_not_advance_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let a = create(s, "/failed/a", "1").await;
    let before = current(s).await;
    assert!(s.create("/failed/a", bytes("x")).await.is_err());
    assert!(
        s.update("/failed/a", bytes("x"), a.mod_revision + 100)
            .await
            .is_err()
    );
    assert!(
        s.update("/failed/b", bytes("x"), a.mod_revision)
            .await
            .is_err()
    );
    assert!(
        s.delete("/failed/a", Some(a.mod_revision + 100))
            .await
            .is_err()
    );
    assert!(s.delete("/failed/b", None).await.is_err());
    assert_eq!(current(s).await, before);
    let next = create(s, "/failed/c", "1").await;
    assert_eq!(next.mod_revision, before + 1);
}

/// A list is ordered by key (not by creation) and reports the revision it read at.
pub async fn list_is_ordered_by_key(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let empty = ok("list", s.list(ListRequest::prefix("/order/")).await);
    assert!(empty.items.is_empty() && !empty.more);
    assert_eq!(empty.revision, current(s).await);
    for key in ["/order/c", "/order/a", "/order/b/x", "/order/b"] {
        create(s, key, key).await;
    }
    let list = ok("list", s.list(ListRequest::prefix("/order/")).await);
    assert_eq!(
        keys(&list.items),
        ["/order/a", "/order/b", "/order/b/x", "/order/c"]
    );
    assert_eq!(list.revision, current(s).await);
    assert!(!list.more);
    assert_eq!(list.remaining, 0);
    for kv in &list.items {
        assert_eq!(kv.value, bytes(&kv.key));
    }
}

/// A prefix matches its own keys only: `/a/b/` is not `/a/bc/`.
pub async fn list_does_not_leak_sibling_prefix(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    for key in ["/a/b", "/a/b/1", "/a/b/2", "/a/bc/1", "/a/a/1", "/a/c"] {
        create(s, key, "v").await;
    }
    let list = ok("list", s.list(ListRequest::prefix("/a/b/")).await);
    assert_eq!(keys(&list.items), ["/a/b/1", "/a/b/2"]);
    assert_eq!(ok("count", s.count("/a/b/").await), 2);
    let list = ok("list", s.list(ListRequest::prefix("/a/bc/")).await);
    assert_eq!(keys(&list.items), ["/a/bc/1"]);
    // Continuing from a key before the prefix starts at the prefix.
    let list = ok(
        "list",
        s.list(ListRequest::prefix("/a/b/").start_after("/a/a/1"))
            .await,
    );
    assert_eq!(keys(&list.items), ["/a/b/1", "/a/b/2"]);
    let list = ok(
        "list",
        s.list(ListRequest::prefix("/a/b/").start_after("/a/b/2"))
            .await,
    );
    assert!(list.items.is_empty() && !list.more);
}

/// Pages of `limit` items, each continuing after the last key of the previous one.
pub async fn list_limit_and_continue(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    for i in 0..7 {
        create(s, &format!("/page/{i}"), &i.to_string()).await;
    }
    create(s, "/pagf/0", "outside").await;
    ok("delete", s.delete("/page/3", None).await);
    let mut pages = Vec::new();
    let mut request = ListRequest::prefix("/page/").limit(2);
    loop {
        let page = ok("list", s.list(request.clone()).await);
        assert!(page.items.len() <= 2);
        pages.push((keys(&page.items).join(","), page.more, page.remaining));
        let Some(last) = page.items.last() else { break };
        if !page.more {
            break;
        }
        request = request.start_after(last.key.clone()).at(page.revision);
    }
    assert_eq!(
        pages,
        [
            ("/page/0,/page/1".to_owned(), true, 4),
            ("/page/2,/page/4".to_owned(), true, 2),
            ("/page/5,/page/6".to_owned(), false, 0),
        ]
    );
    let exact = ok("list", s.list(ListRequest::prefix("/page/").limit(6)).await);
    assert_eq!(
        (exact.items.len(), exact.more, exact.remaining),
        (6, false, 0)
    );
}

/// A list at a past revision sees the state as of then: old values, deleted keys, not yet
/// created keys absent.
pub async fn list_at_past_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let a = create(s, "/past/a", "a1").await;
    let b = create(s, "/past/b", "b1").await;
    let then = current(s).await;
    update(s, "/past/a", "a2", a.mod_revision).await;
    ok("delete", s.delete("/past/b", None).await);
    create(s, "/past/c", "c1").await;
    let old = ok("list", s.list(ListRequest::prefix("/past/").at(then)).await);
    assert_eq!(old.revision, then);
    assert_eq!(
        entries(&old.items),
        [
            ("/past/a".into(), "a1".into(), a.mod_revision),
            ("/past/b".into(), "b1".into(), b.mod_revision),
        ]
    );
    let now = ok("list", s.list(ListRequest::prefix("/past/")).await);
    assert_eq!(keys(&now.items), ["/past/a", "/past/c"]);
    // Past reads with a limit page the same way.
    let page = ok(
        "list",
        s.list(ListRequest::prefix("/past/").at(then).limit(1))
            .await,
    );
    assert_eq!(
        (keys(&page.items), page.more, page.remaining),
        (vec!["/past/a"], true, 1)
    );
}

/// A get at a past revision sees the value as of then.
pub async fn get_at_past_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let v1 = create(s, "/getpast/a", "1").await;
    let v2 = update(s, "/getpast/a", "2", v1.mod_revision).await;
    let deleted = ok("delete", s.delete("/getpast/a", None).await);
    let at = |revision| s.get("/getpast/a", revision);
    assert_eq!(ok("get", at(v1.mod_revision - 1).await), None);
    assert_eq!(ok("get", at(v1.mod_revision).await), Some(v1.clone()));
    assert_eq!(ok("get", at(v2.mod_revision).await), Some(v2));
    assert_eq!(ok("get", at(deleted.revision).await), None);
    let v3 = create(s, "/getpast/a", "3").await;
    assert_eq!(ok("get", at(0).await), Some(v3.clone()));
    assert_eq!(v3.create_revision, v3.mod_revision);
}

/// Every page read at the first page's revision, while writes go on, together equal one
/// list at that revision.
pub async fn paginate_while_writing(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    for i in 0..20 {
        create(s, &format!("/paginate/{i:02}"), "0").await;
    }
    let first = ok(
        "list",
        s.list(ListRequest::prefix("/paginate/").limit(3)).await,
    );
    let revision = first.revision;
    let full = ok(
        "list",
        s.list(ListRequest::prefix("/paginate/").at(revision)).await,
    );
    assert_eq!(full.items.len(), 20);
    let mut items = first.items.clone();
    let mut page = first;
    let mut i = 0;
    while page.more {
        // Change the store between pages: update, delete and create keys on both sides of
        // the page boundary.
        let key = format!("/paginate/{:02}", (i * 7) % 20);
        if let Some(kv) = ok("get", s.get(&key, 0).await) {
            if i % 2 == 0 {
                update(s, &key, &format!("{i}"), kv.mod_revision).await;
            } else {
                ok("delete", s.delete(&key, None).await);
            }
        }
        create(s, &format!("/paginate/{i:02}-new"), "new").await;
        i += 1;
        let last = items.last().map(|kv| kv.key.clone()).unwrap_or_default();
        let request = ListRequest::prefix("/paginate/")
            .limit(3)
            .start_after(last)
            .at(revision);
        page = ok("list", s.list(request).await);
        assert_eq!(page.revision, revision);
        items.extend(page.items.iter().cloned());
    }
    assert_eq!(items, full.items);
    assert!(i > 3, "the writes happened between pages");
}

/// Reading at a revision after the current one fails.
pub async fn read_at_future_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    create(s, "/future/a", "1").await;
    let now = current(s).await;
    let future = now + 10;
    assert_future(s.get("/future/a", future).await, future, now);
    assert_future(
        s.list(ListRequest::prefix("/future/").at(future)).await,
        future,
        now,
    );
    assert_eq!(
        s.get("/future/a", now).await.map(|kv| kv.is_some()),
        Ok(true)
    );
}

/// Count sees live keys under the prefix only.
pub async fn count_live_keys(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    assert_eq!(ok("count", s.count("/count/").await), 0);
    for i in 0..5 {
        create(s, &format!("/count/{i}"), "v").await;
    }
    create(s, "/countx/0", "v").await;
    let kv = ok("get", s.get("/count/0", 0).await).expect("key exists");
    update(s, "/count/0", "w", kv.mod_revision).await;
    ok("delete", s.delete("/count/1", None).await);
    assert_eq!(ok("count", s.count("/count/").await), 4);
    assert_eq!(ok("count", s.count("/countx/").await), 1);
}

/// The database's size is known and comes to cover what was written.
pub async fn size_covers_what_is_stored(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let value = "x".repeat(64 * 1024);
    for i in 0..4 {
        create(s, &format!("/size/{i}"), &value).await;
    }
    // etcd commits its backend in batches (every 100 ms): its size follows shortly.
    deadline("the size to cover 256 KiB written", async {
        loop {
            let size = ok("size", s.size().await);
            if size >= 4 * 64 * 1024 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

/// A watch from a past revision replays what followed it, then follows new writes: every
/// change once, in order, with previous values.
pub async fn watch_replays_then_follows(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let a1 = create(s, "/watch/a", "a1").await;
    let r = a1.mod_revision;
    update(s, "/watch/a", "a2", r).await;
    create(s, "/watch/b", "b1").await;
    ok("delete", s.delete("/watch/a", None).await);
    let mut watch = ok("watch", s.watch("/watch/", r).await);
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(summary(&next_event(&mut watch).await));
    }
    assert_eq!(
        seen,
        [
            put(r + 1, "/watch/a", "a2", Some("a1")),
            put(r + 2, "/watch/b", "b1", None),
            delete(r + 3, "/watch/a", "a2"),
        ]
    );
    // Live: the delete event's previous value carries its revisions.
    let b = ok("get", s.get("/watch/b", 0).await).expect("b exists");
    update(s, "/watch/b", "b2", b.mod_revision).await;
    create(s, "/watch/a", "a3").await;
    ok("delete", s.delete("/watch/b", Some(r + 4)).await);
    let mut live = Vec::new();
    for _ in 0..3 {
        live.push(next_event(&mut watch).await);
    }
    assert_eq!(
        live.iter().map(summary).collect::<Vec<_>>(),
        [
            put(r + 4, "/watch/b", "b2", Some("b1")),
            put(r + 5, "/watch/a", "a3", None),
            delete(r + 6, "/watch/b", "b2"),
        ]
    );
    match &live[1] {
        WatchEvent::Put { kv, .. } => assert_eq!(kv.create_revision, r + 5),
        other => panic!("expected a put, got {other:?}"),
    }
    match &live[2] {
        WatchEvent::Delete { prev, .. } => {
            assert_eq!((prev.create_revision, prev.mod_revision), (r + 2, r + 4));
        }
        other => panic!("expected a delete, got {other:?}"),
    }
    // Nothing twice: the next event is the next write.
    let c = create(s, "/watch/c", "c").await;
    assert_eq!(summary(&next_event(&mut watch).await).0, c.mod_revision);
}

/// A watch from `0`, or from the current revision, sees only later writes.
pub async fn watch_from_now(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    create(s, "/now/old", "old").await;
    let mut from_zero = ok("watch", s.watch("/now/", 0).await);
    let mut from_current = ok("watch", s.watch("/now/", current(s).await).await);
    let new = create(s, "/now/new", "new").await;
    for watch in [&mut from_zero, &mut from_current] {
        let event = next_event(watch).await;
        assert_eq!(
            summary(&event),
            put(new.mod_revision, "/now/new", "new", None)
        );
    }
}

/// A watch on a prefix sees nothing of other prefixes, sibling ones included.
pub async fn watch_ignores_other_prefixes(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    // Replayed: a watch from the seed's revision reads history.
    let start = create(s, "/w/seed", "x").await.mod_revision;
    create(s, "/w/bc/replayed", "x").await;
    let mut watch = ok("watch", s.watch("/w/b/", start).await);
    create(s, "/w/a/1", "x").await;
    create(s, "/w/bc/1", "x").await;
    create(s, "/w/b", "x").await;
    let mine = create(s, "/w/b/1", "x").await;
    create(s, "/w/c/1", "x").await;
    let last = create(s, "/w/b/2", "x").await;
    assert_eq!(summary(&next_event(&mut watch).await).0, mine.mod_revision);
    assert_eq!(summary(&next_event(&mut watch).await).0, last.mod_revision);
}

/// A watch from a revision not reached yet delivers the changes after it, when they happen.
pub async fn watch_future_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let now = current(s).await;
    let mut watch = ok("watch", s.watch("/wf/", now + 2).await);
    create(s, "/wf/1", "1").await;
    create(s, "/wf/2", "2").await;
    let third = create(s, "/wf/3", "3").await;
    assert_eq!(third.mod_revision, now + 3);
    assert_eq!(summary(&next_event(&mut watch).await).0, now + 3);
}

/// After compaction at C, reads at and watches from revisions below C fail; at and after C
/// everything still works, previous values included.
pub async fn compaction(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let a1 = create(s, "/compact/a", "a1").await;
    let r = a1.mod_revision;
    update(s, "/compact/a", "a2", r).await; // r + 1
    create(s, "/compact/b", "b1").await; // r + 2
    ok("delete", s.delete("/compact/b", None).await); // r + 3
    update(s, "/compact/a", "a3", r + 1).await; // r + 4
    let c = r + 2;
    ok("compact", s.compact(c).await);

    assert_compacted(s.get("/compact/a", r + 1).await, r + 1, c);
    assert_compacted(s.list(ListRequest::prefix("/compact/").at(r)).await, r, c);
    let got = ok("get", s.get("/compact/a", c).await).expect("a exists at c");
    assert_eq!((&got.value[..], got.mod_revision), (&b"a2"[..], r + 1));
    let at_c = ok("list", s.list(ListRequest::prefix("/compact/").at(c)).await);
    assert_eq!(keys(&at_c.items), ["/compact/a", "/compact/b"]);
    let at_c1 = ok(
        "list",
        s.list(ListRequest::prefix("/compact/").at(c + 1)).await,
    );
    assert_eq!(keys(&at_c1.items), ["/compact/a"]);

    let mut old = ok("watch", s.watch("/compact/", c - 1).await);
    match next_item(&mut old).await {
        Some(result) => assert_compacted(result, c - 1, c),
        None => panic!("a watch from a compacted revision ended without an error"),
    }
    assert!(
        deadline("the end of a failed watch", old.next())
            .await
            .is_none()
    );
    let mut from_c = ok("watch", s.watch("/compact/", c).await);
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(summary(&next_event(&mut from_c).await));
    }
    assert_eq!(
        seen,
        [
            delete(r + 3, "/compact/b", "b1"),
            put(r + 4, "/compact/a", "a3", Some("a2")),
        ]
    );

    assert_compacted(s.compact(c).await, c, c);
    assert_compacted(s.compact(c - 1).await, c - 1, c);
    let now = current(s).await;
    assert_future(s.compact(now + 1).await, now + 1, now);

    // Compacting again keeps what is visible at the new point, and events after it.
    ok("compact", s.compact(r + 3).await);
    let got = ok("get", s.get("/compact/a", r + 3).await).expect("a exists at r + 3");
    assert_eq!(&got.value[..], b"a2");
    assert_eq!(ok("get", s.get("/compact/b", r + 3).await), None);
    let mut watch = ok("watch", s.watch("/compact/", r + 3).await);
    let event = next_event(&mut watch).await;
    assert_eq!(summary(&event), put(r + 4, "/compact/a", "a3", Some("a2")));
    let d = create(s, "/compact/d", "d").await;
    assert_eq!(summary(&next_event(&mut watch).await).0, d.mod_revision);
    let now = ok("list", s.list(ListRequest::prefix("/compact/")).await);
    assert_eq!(keys(&now.items), ["/compact/a", "/compact/d"]);
}

/// Concurrent writers all succeed with distinct revisions, and watchers (one started
/// before, one during the writes) see every write once, in order.
pub async fn concurrent_writers(backend: impl TestBackend) {
    const TASKS: usize = 8;
    const PER_TASK: usize = 50;
    let storage = backend.storage();
    // Not 0, which would mean "from now" to a watch.
    let start = create(&*storage, "/seed", "").await.mod_revision;
    let mut before = ok("watch", storage.watch("/concurrent/", 0).await);
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let storage = Arc::clone(&storage);
        tasks.push(tokio::spawn(async move {
            let mut revisions = Vec::new();
            for i in 0..PER_TASK {
                let key = format!("/concurrent/{task}/{i}");
                let kv = ok("create", storage.create(&key, Bytes::new()).await);
                revisions.push(kv.mod_revision);
            }
            revisions
        }));
    }
    // Started while the writers run: part replay, part live.
    let mut during = ok("watch", storage.watch("/concurrent/", start).await);
    let mut revisions = BTreeSet::new();
    for task in tasks {
        let written = ok("writer task", deadline("the writers", task).await);
        assert!(written.windows(2).all(|w| w[0] < w[1]));
        revisions.extend(written);
    }
    let total = TASKS * PER_TASK;
    assert_eq!(revisions.len(), total, "revisions are distinct");
    assert_eq!(revisions.first(), Some(&(start + 1)));
    assert_eq!(revisions.last(), Some(&(start + total as Revision)));
    for watch in [&mut before, &mut during] {
        let mut seen = Vec::new();
        for _ in 0..total {
            seen.push(next_event(watch).await.revision());
        }
        assert_eq!(seen, revisions.iter().copied().collect::<Vec<_>>());
    }
    let list = ok(
        "list",
        storage.list(ListRequest::prefix("/concurrent/")).await,
    );
    assert_eq!(list.items.len(), total);
}

/// A watcher that nobody reads does not hold up writes. When read at last it delivers the
/// writes in order, or ends with [`Error::Lagged`] after an in-order part of them.
pub async fn slow_watcher_does_not_block_writers(backend: impl TestBackend) {
    const TASKS: usize = 8;
    const PER_TASK: usize = 250;
    let storage = backend.storage();
    let start = current(&*storage).await;
    let mut idle = ok("watch", storage.watch("/slow/", 0).await);
    // Also poll it once so that it has caught up and is following live writes.
    let first = create(&*storage, "/slow/first", "").await;
    assert_eq!(next_event(&mut idle).await.revision(), first.mod_revision);
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let storage = Arc::clone(&storage);
        tasks.push(tokio::spawn(async move {
            for i in 0..PER_TASK {
                let key = format!("/slow/{task}/{i}");
                ok(
                    "create",
                    storage.create(&key, Bytes::from(vec![0; 512])).await,
                );
            }
        }));
    }
    for task in tasks {
        ok(
            "writer task",
            deadline("writes past an idle watcher", task).await,
        );
    }
    let total = (TASKS * PER_TASK) as Revision;
    let mut expected = start + 2;
    loop {
        match next_item(&mut idle).await {
            Some(Ok(event)) => {
                assert_eq!(event.revision(), expected, "events in order, none missing");
                expected += 1;
                if expected > start + 1 + total {
                    break;
                }
            }
            Some(Err(Error::Lagged { .. })) => break,
            other => panic!("unexpected watch item {other:?}"),
        }
    }
}
