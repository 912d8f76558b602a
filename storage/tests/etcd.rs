//! The etcd backend against real etcd processes: the shared conformance suite (each case on
//! an etcd of its own, since revisions and compaction are global), and what only a
//! networked store has (an unreachable cluster, a member's failure).
#![cfg(feature = "etcd")]

#[path = "../../server/tests/support/etcd.rs"]
#[allow(dead_code)]
mod etcd;
#[path = "support/etcd_units.rs"]
mod etcd_units;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use etcd::Etcd;
use futures_util::StreamExt;
use kapi_storage::etcd::{EtcdOptions, EtcdStorage};
use kapi_storage::{Error, Guard, ListRequest, Storage, WatchEvent};

/// A fresh single-member etcd and a store on it; the etcd lives as long as the guard.
async fn backend() -> (Arc<dyn Storage>, Etcd) {
    let etcd = tokio::task::spawn_blocking(Etcd::start).await.unwrap();
    let storage = EtcdStorage::connect(EtcdOptions::new(etcd.endpoints()))
        .await
        .unwrap();
    (Arc::new(storage), etcd)
}

// Creates one transaction each: the suite counts one revision per write.
kapi_storage::storage_conformance_tests!(async || {
    let etcd = tokio::task::spawn_blocking(Etcd::start).await.unwrap();
    let options = EtcdOptions {
        batch_creates: false,
        ..EtcdOptions::new(etcd.endpoints())
    };
    let storage = EtcdStorage::connect(options).await.unwrap();
    let storage: Arc<dyn Storage> = Arc::new(etcd_units::EtcdUnits(Arc::new(storage)));
    (storage, etcd)
});

const DEADLINE: Duration = Duration::from_secs(30);

/// `future`'s output, or a panic naming `what` once [`DEADLINE`] has passed: what a
/// broken deadline would leave hanging fails the test instead.
async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(DEADLINE, future).await {
        Ok(output) => output,
        Err(_) => panic!("{what} did not return within {DEADLINE:?}"),
    }
}

/// With no member reachable, requests fail within the request deadline, as 503/504 errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_cluster_fails_fast() {
    let mut etcd = tokio::task::spawn_blocking(Etcd::start).await.unwrap();
    let mut options = EtcdOptions::new(etcd.endpoints());
    options.request_timeout = Duration::from_secs(1);
    // One store connected before the cluster went away, one after.
    let connected = within("connect", EtcdStorage::connect(options.clone()))
        .await
        .unwrap();
    (within("create", connected.create("/x", Bytes::new())).await).unwrap();
    etcd.stop(0);
    let fresh = within(
        "connect to a stopped cluster",
        EtcdStorage::connect(options),
    )
    .await
    .unwrap();
    for store in [&connected as &dyn Storage, &fresh] {
        let started = Instant::now();
        let results = [
            within("get", store.get("/x", 0)).await.err(),
            within("create", store.create("/y", Bytes::new()))
                .await
                .err(),
            within("health", store.health()).await.err(),
        ];
        for error in results {
            assert!(
                matches!(error, Some(Error::Unavailable(_) | Error::Timeout(_))),
                "{error:?}"
            );
        }
        assert!(
            started.elapsed() < DEADLINE,
            "failing took {:?}",
            started.elapsed()
        );
    }
}

/// A watch outlives its member: restarted, the member serves the watch again from where it
/// was, with nothing lost or repeated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_resumes_after_the_member_returns() {
    let (storage, mut etcd) = backend().await;
    let mut watch = storage.watch("/w/", 0).await.unwrap();
    let a = storage.create("/w/a", Bytes::new()).await.unwrap();
    assert_eq!(next(&mut watch).await.revision(), a.mod_revision);
    etcd.stop(0);
    etcd.restart(0);
    tokio::task::block_in_place(|| etcd.wait_healthy(0));
    // The client's request retries (within its deadline) cover reconnecting.
    let b = storage.create("/w/b", Bytes::new()).await.unwrap();
    assert_eq!(next(&mut watch).await.revision(), b.mod_revision);
}

/// etcd's progress notifications arrive as `Progress` events carrying the revision every
/// change up to which was delivered (etcd started with a short notify interval).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_notifications() {
    let etcd = tokio::task::spawn_blocking(|| {
        Etcd::start_with(&["--experimental-watch-progress-notify-interval=100ms"])
    })
    .await
    .unwrap();
    let storage = EtcdStorage::connect(EtcdOptions::new(etcd.endpoints()))
        .await
        .unwrap();
    let mut watch = storage.watch("/p/", 0).await.unwrap();
    // A change elsewhere moves the revision without an event for this watch.
    let other = storage.create("/elsewhere", Bytes::new()).await.unwrap();
    let revision = loop {
        match tokio::time::timeout(DEADLINE, watch.next()).await {
            Ok(Some(Ok(WatchEvent::Progress { revision }))) if revision >= other.mod_revision => {
                break revision;
            }
            Ok(Some(Ok(WatchEvent::Progress { .. }))) => continue,
            other => panic!("expected progress, got {other:?}"),
        }
    };
    assert_eq!(revision, other.mod_revision);
    let mine = storage.create("/p/a", Bytes::new()).await.unwrap();
    assert_eq!(next(&mut watch).await.revision(), mine.mod_revision);
}

/// A progress request reaches etcd on every watch's stream, and its answer arrives as a
/// `Progress` at the store's revision. This etcd (v3.4.23) is older than the versions
/// that order that answer with the stream's events, so progress requests are forced on
/// and the test requests only once the watch has received its events: what it proves is
/// the mechanism, not etcd's ordering. The version check keeps them off on such members.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_requests_reach_etcd() {
    let etcd = tokio::task::spawn_blocking(Etcd::start).await.unwrap();
    let mut options = EtcdOptions::new(etcd.endpoints());
    options.progress_requests = Some(true);
    let storage = EtcdStorage::connect(options).await.unwrap();
    assert!(storage.reports_progress());
    let mut watch = storage.watch("/p/", 0).await.unwrap();
    let mine = storage.create("/p/a", Bytes::new()).await.unwrap();
    assert_eq!(next(&mut watch).await.revision(), mine.mod_revision);
    let other = storage.create("/elsewhere", Bytes::new()).await.unwrap();
    // The request is sent by the watch when it is polled: ask again until it answers.
    let revision = within("progress at the store's revision", async {
        loop {
            storage.request_progress().await;
            match tokio::time::timeout(Duration::from_millis(50), watch.next()).await {
                Ok(Some(Ok(WatchEvent::Progress { revision })))
                    if revision >= other.mod_revision =>
                {
                    break revision;
                }
                Ok(Some(Ok(WatchEvent::Progress { .. }))) | Err(_) => {}
                other => panic!("expected progress, got {other:?}"),
            }
        }
    })
    .await;
    assert_eq!(revision, other.mod_revision);
    let later = storage.create("/p/b", Bytes::new()).await.unwrap();
    assert_eq!(next(&mut watch).await.revision(), later.mod_revision);
}

/// Concurrent gets of different keys share etcd's reads: the keys asked for while a read
/// is on its way are read together, in read-only transactions of at most 64 ranges, each
/// key answered with its own latest state (or none). (One thread: the first read cannot
/// start before every get has asked.)
#[tokio::test]
async fn concurrent_gets_share_reads() {
    let (storage, etcd) = backend().await;
    for i in 0..100 {
        storage
            .create(&format!("/g/{i}"), Bytes::from(i.to_string()))
            .await
            .unwrap();
    }
    let requests = |method: &str| {
        let method = format!("grpc_method=\"{method}\"");
        etcd.metric(0, "grpc_server_started_total", &[&method])
    };
    let before = [requests("Range"), requests("Txn")];
    // Polled together: every key waits before the first read starts.
    let gets = (0..=100).map(|i| {
        let storage = storage.clone();
        async move { storage.get(&format!("/g/{i}"), 0).await }
    });
    let got = futures_util::future::join_all(gets).await;
    for (i, kv) in got.into_iter().enumerate() {
        let kv = kv.unwrap();
        match i {
            100 => assert_eq!(kv, None, "a missing key"),
            i => assert_eq!(kv.unwrap().value, i.to_string()),
        }
    }
    let after = [requests("Range"), requests("Txn")];
    assert_eq!(
        [after[0] - before[0], after[1] - before[1]],
        [0.0, 2.0],
        "101 keys: two transactions (64 ranges, then 37), no range of its own"
    );
}

/// Writes above etcd's default request limit (1.5 MiB) are refused as too large.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_large_writes() {
    let (storage, _etcd) = backend().await;
    let big = Bytes::from(vec![0; 1536 * 1024]);
    assert!(matches!(
        storage.create("/big", big).await,
        Err(Error::TooLarge { .. })
    ));
    let kv = (storage
        .create("/big", Bytes::from(vec![0; 1024 * 1024]))
        .await)
        .unwrap();
    assert_eq!(kv.value.len(), 1024 * 1024);
}

async fn next(watch: &mut kapi_storage::WatchStream) -> WatchEvent {
    loop {
        match tokio::time::timeout(DEADLINE, watch.next()).await {
            Ok(Some(Ok(WatchEvent::Progress { .. }))) => continue,
            Ok(Some(Ok(event))) => return event,
            other => panic!("expected a watch event, got {other:?}"),
        }
    }
}

/// Concurrent creates share etcd transactions, and each keeps a revision of its own: the
/// revisions are distinct and ordered as the watch delivers them; a watch from any of them
/// resumes after exactly the changes up to it, and a read there sees exactly the creates
/// up to it, even within a shared etcd revision; another store on the cluster (another
/// server) tells the same revisions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_share_transactions_and_keep_their_revisions() {
    const TASKS: usize = 16;
    const PER_TASK: usize = 25;
    let (storage, etcd) = backend().await;
    let start = storage
        .create("/seed", Bytes::new())
        .await
        .unwrap()
        .mod_revision;
    let mut watch = storage.watch("/c/", start).await.unwrap();
    let writers = (0..TASKS).map(|task| {
        let storage = storage.clone();
        tokio::spawn(async move {
            let mut created = Vec::new();
            for i in 0..PER_TASK {
                // Two prefixes, so some transactions end with the other one's key.
                let key = format!("/{}/{task}/{i}", ["c", "d"][i % 2]);
                let kv = storage
                    .create(&key, Bytes::from(key.clone()))
                    .await
                    .unwrap();
                created.push((kv.mod_revision, key));
            }
            created
        })
    });
    let writers: Vec<_> = writers.collect();
    let mut created = Vec::new();
    for writer in writers {
        created.extend(within("the writers", writer).await.unwrap());
    }
    created.sort();
    let revisions: Vec<_> = created.iter().map(|(r, _)| *r).collect();
    assert!(
        revisions.windows(2).all(|w| w[0] < w[1]),
        "distinct revisions"
    );
    let etcd_revision = |r: u64| r >> kapi_storage::etcd::SLOT_BITS;
    let shared = (revisions.windows(2)).filter(|w| etcd_revision(w[0]) == etcd_revision(w[1]));
    assert!(
        shared.count() > 0,
        "no two creates shared a transaction: {revisions:?}"
    );

    // The watch: every create of its prefix, in revision order, at its revision; and it
    // reaches the end of the last etcd revision though that may end with another prefix.
    let mine: Vec<_> = (created.iter())
        .filter(|(_, key)| key.starts_with("/c/"))
        .collect();
    let mut seen = Vec::new();
    while seen.len() < mine.len() {
        match next(&mut watch).await {
            WatchEvent::Put { kv, prev: None } => seen.push((kv.mod_revision, kv.key)),
            other => panic!("expected a create, got {other:?}"),
        }
    }
    assert_eq!(seen.iter().collect::<Vec<_>>(), mine);
    let slots = kapi_storage::etcd::SLOT_BITS;
    let end = ((etcd_revision(*revisions.last().unwrap()) + 1) << slots) - 1;
    within("the watch at the end of the last transaction", async {
        let mut reached = seen.last().unwrap().0;
        while reached < end {
            match watch.next().await {
                Some(Ok(WatchEvent::Progress { revision })) => reached = revision,
                other => panic!("expected progress, got {other:?}"),
            }
        }
        assert_eq!(reached, end);
    })
    .await;

    // From within a shared etcd revision: a watch resumes after it, a read stops at it.
    let (middle, _) = *(created.iter())
        .find(|(r, _)| (r + 1) % (1 << slots) != 0)
        .expect("a create within a shared etcd revision");
    let after: Vec<_> = (mine.iter())
        .filter(|(r, _)| *r > middle)
        .map(|c| c.0)
        .collect();
    let mut resumed = storage.watch("/c/", middle).await.unwrap();
    let mut again = Vec::new();
    while again.len() < after.len() {
        again.push(next(&mut resumed).await.revision());
    }
    assert_eq!(again, after);
    let up_to: Vec<_> = (created.iter()).filter(|(r, _)| *r <= middle).collect();
    let listed = storage
        .list(ListRequest::prefix("/").at(middle))
        .await
        .unwrap();
    let listed: Vec<_> = (listed.items.iter())
        .filter(|kv| kv.key != "/seed")
        .map(|kv| (kv.mod_revision, kv.key.clone()))
        .collect();
    let mut expected: Vec<_> = up_to.iter().map(|(r, k)| (*r, k.clone())).collect();
    expected.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(listed, expected, "the list at {middle}");
    let next_one = &created[created.iter().position(|(r, _)| *r == middle).unwrap() + 1];
    assert_eq!(storage.get(&next_one.1, middle).await.unwrap(), None);
    let got = storage.get(&next_one.1, next_one.0).await.unwrap().unwrap();
    assert_eq!(
        (got.mod_revision, got.create_revision),
        (next_one.0, next_one.0)
    );

    // Another server on the cluster reads the same revisions.
    let other = EtcdStorage::connect(EtcdOptions::new(etcd.endpoints()))
        .await
        .unwrap();
    let everything = other.list(ListRequest::prefix("/")).await.unwrap();
    let mut stored: Vec<_> = (everything.items.into_iter())
        .filter(|kv| kv.key != "/seed")
        .map(|kv| {
            assert_eq!(kv.value, kv.key, "the value without its slot");
            (kv.mod_revision, kv.key)
        })
        .collect();
    stored.sort();
    assert_eq!(stored, created);

    // A keys-only list reads no values, so no slots: each key's revisions are its etcd
    // revision's end, which names the same write; a read at a slot still tells exactly.
    let bare = storage
        .list(ListRequest::prefix("/").keys_only())
        .await
        .unwrap();
    let full = storage.list(ListRequest::prefix("/")).await.unwrap();
    assert_eq!(bare.items.len(), full.items.len());
    for (bare, full) in bare.items.iter().zip(&full.items) {
        assert_eq!((&bare.key, bare.value.is_empty()), (&full.key, true));
        assert_eq!(
            bare.mod_revision,
            ((etcd_revision(full.mod_revision) + 1) << slots) - 1
        );
        assert!(storage.same_write(bare.mod_revision, full.mod_revision));
    }
    let at_middle = storage
        .list(ListRequest::prefix("/").at(middle).keys_only())
        .await
        .unwrap();
    let bare_at_middle: Vec<_> = (at_middle.items.iter())
        .filter(|kv| kv.key != "/seed")
        .collect();
    assert_eq!(
        bare_at_middle.len(),
        expected.len(),
        "the keys-only list at {middle}"
    );
    for (bare, (revision, key)) in bare_at_middle.into_iter().zip(&expected) {
        assert_eq!((&bare.key, bare.value.is_empty()), (key, true));
        assert!(storage.same_write(bare.mod_revision, *revision), "{bare:?}");
        // The creates of the transaction it stops within are read exactly.
        if etcd_revision(*revision) == etcd_revision(middle) {
            assert_eq!(bare.mod_revision, *revision);
        }
    }
}

/// Creates committed together each keep their own conditions: of two creates of one key,
/// one succeeds; a create under a stale guard fails with a conflict while those under the
/// current one succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_committed_together_keep_their_own_conditions() {
    let (storage, _etcd) = backend().await;
    let namespace = storage.create("/ns", Bytes::new()).await.unwrap();
    let guard = |mod_revision| Guard {
        key: "/ns".into(),
        mod_revision,
    };
    let creates = (0..32).map(|i| {
        let storage = storage.clone();
        let guard = guard(if i % 8 == 7 {
            namespace.mod_revision + 1024
        } else {
            namespace.mod_revision
        });
        async move {
            let key = format!("/k/{}", i % 16);
            (i, storage.create_guarded(&key, Bytes::new(), &guard).await)
        }
    });
    let answers = futures_util::future::join_all(creates).await;
    let mut created = std::collections::BTreeSet::new();
    for (i, answer) in answers {
        match answer {
            Err(Error::Conflict { key, current, .. }) if i % 8 == 7 => {
                assert_eq!((key.as_str(), current), ("/ns", namespace.mod_revision));
            }
            Ok(kv) if i % 8 != 7 => assert!(created.insert(kv.key), "{i}: created twice"),
            Err(Error::AlreadyExists { key }) if i % 8 != 7 => {
                assert_eq!(key, format!("/k/{}", i % 16));
            }
            other => panic!("{i}: {other:?}"),
        }
    }
    // Keys 7 and 15 had only stale guards; every other key was created once.
    let expected: std::collections::BTreeSet<_> = (0..16)
        .filter(|k| k % 8 != 7)
        .map(|k| format!("/k/{k}"))
        .collect();
    assert_eq!(created, expected);
}

/// On a cluster whose `--max-txn-ops` is lower than any batch's, etcd refuses the shared
/// transaction: each of its creates is then committed alone, and every one succeeds at the
/// end of an etcd revision of its own, as without batching.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_a_cluster_refuses_together_are_committed_alone() {
    // One operation per list: even two creates together are refused.
    let etcd = tokio::task::spawn_blocking(|| Etcd::start_with(&["--max-txn-ops=1"]))
        .await
        .unwrap();
    let storage = EtcdStorage::connect(EtcdOptions::new(etcd.endpoints()))
        .await
        .unwrap();
    let refused = || {
        let labels = ["grpc_method=\"Txn\"", "grpc_code=\"InvalidArgument\""];
        etcd.metric(0, "grpc_server_handled_total", &labels)
    };
    let slots = kapi_storage::etcd::SLOT_BITS;
    let mut revisions = Vec::new();
    // Rounds of concurrent creates until etcd has refused a shared transaction (the
    // first round almost always makes one: its creates wait while the first commits).
    for round in 0.. {
        assert!(round < 20, "no transaction of creates was ever refused");
        let creates = (0..16).map(|i| {
            let storage = storage.clone();
            async move {
                let key = format!("/r/{round}/{i}");
                storage.create(&key, Bytes::from(key.clone())).await
            }
        });
        for answer in futures_util::future::join_all(creates).await {
            let kv = answer.expect("a create committed alone");
            assert_eq!(kv.create_revision, kv.mod_revision);
            revisions.push(kv.mod_revision);
        }
        if refused() > 0.0 {
            break;
        }
    }
    revisions.sort();
    assert!(
        (revisions.iter()).all(|r| (r + 1) % (1 << slots) == 0),
        "each at the end of its etcd revision: {revisions:?}"
    );
    assert!(revisions.windows(2).all(|w| w[0] < w[1]), "{revisions:?}");
    let stored = storage.list(ListRequest::prefix("/r/")).await.unwrap();
    assert_eq!(stored.items.len(), revisions.len());
    assert!((stored.items.iter()).all(|kv| kv.value == kv.key));
}
