//! The embedded storage backend: the conformance suite, and what only a file store has
//! (reopening, locking, limits).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use kapi_storage::embedded::{EmbeddedStorage, Options};
use kapi_storage::{Error, ListRequest, Storage, WatchEvent};
use tempfile::TempDir;

/// A fresh store in a temporary directory, removed after the test.
async fn backend() -> (Arc<dyn Storage>, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open(dir.path()).unwrap();
    (Arc::new(storage), dir)
}

kapi_storage::storage_conformance_tests!(async || backend().await);

const DEADLINE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn data_and_revision_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open(dir.path()).unwrap();
    let a = storage
        .create("/r/a", Bytes::from_static(b"a"))
        .await
        .unwrap();
    storage
        .create("/r/b", Bytes::from_static(b"b"))
        .await
        .unwrap();
    storage
        .update("/r/a", Bytes::from_static(b"a2"), a.mod_revision)
        .await
        .unwrap();
    let deleted = storage.delete("/r/b", None).await.unwrap();
    storage.compact(a.mod_revision + 1).await.unwrap();
    drop(storage);

    let storage = EmbeddedStorage::open(dir.path()).unwrap();
    assert_eq!(storage.current_revision().await.unwrap(), deleted.revision);
    let list = storage.list(ListRequest::prefix("/r/")).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(&list.items[0].value[..], b"a2");
    assert_eq!(list.revision, deleted.revision);
    // History and the compacted revision survive too.
    let old = storage.get("/r/b", a.mod_revision + 1).await.unwrap();
    assert_eq!(old.map(|kv| kv.value), Some(Bytes::from_static(b"b")));
    assert!(matches!(
        storage.get("/r/a", a.mod_revision).await,
        Err(Error::Compacted { .. })
    ));
    let mut watch = storage.watch("/r/", deleted.revision - 1).await.unwrap();
    let event = tokio::time::timeout(DEADLINE, watch.next()).await.unwrap();
    assert!(
        matches!(event, Some(Ok(WatchEvent::Delete { revision, .. })) if revision == deleted.revision)
    );
    // The counter continues from where it was.
    let c = storage.create("/r/c", Bytes::new()).await.unwrap();
    assert_eq!(c.mod_revision, deleted.revision + 1);
}

#[tokio::test]
async fn second_open_of_a_locked_directory_fails() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open(dir.path()).unwrap();
    let error = EmbeddedStorage::open(dir.path())
        .err()
        .expect("the second open fails");
    assert!(
        matches!(&error, Error::Unavailable(message) if message.contains("in use")),
        "{error}"
    );
    drop(storage);
    // Closing releases the lock.
    EmbeddedStorage::open(dir.path()).unwrap();
}

#[tokio::test]
async fn writes_over_the_size_limit_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        max_request_bytes: 1024,
        ..Options::default()
    };
    let storage = EmbeddedStorage::open_with(dir.path(), options).unwrap();
    let big = Bytes::from(vec![0; 1024]);
    let error = storage.create("/big", big.clone()).await.unwrap_err();
    assert_eq!(
        error,
        Error::TooLarge {
            size: 1028,
            limit: 1024
        }
    );
    let kv = storage
        .create("/big", Bytes::from(vec![0; 1020]))
        .await
        .unwrap();
    let error = storage
        .update("/big", big, kv.mod_revision)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::TooLarge { .. }));
    assert_eq!(storage.current_revision().await.unwrap(), kv.mod_revision);

    // The default is etcd's 1.5 MiB.
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open(dir.path()).unwrap();
    let value = Bytes::from(vec![0; 1536 * 1024]);
    assert!(matches!(
        storage.create("/big", value).await,
        Err(Error::TooLarge { .. })
    ));
    storage
        .create("/big", Bytes::from(vec![0; 1024 * 1024]))
        .await
        .unwrap();
}

#[tokio::test]
async fn empty_key_is_invalid() {
    let (storage, _dir) = backend().await;
    assert!(matches!(
        storage.create("", Bytes::new()).await,
        Err(Error::InvalidArgument(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lagging_watcher_gets_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        watch_capacity: 2,
        ..Options::default()
    };
    let storage = EmbeddedStorage::open_with(dir.path(), options).unwrap();
    let mut watch = storage.watch("/lag/", 0).await.unwrap();
    // Reach the live phase: the replay ends when a page finds nothing more.
    let mut first = 0;
    for key in ["/lag/first", "/lag/second"] {
        first = storage
            .create(key, Bytes::new())
            .await
            .unwrap()
            .mod_revision;
        let event = tokio::time::timeout(DEADLINE, watch.next()).await.unwrap();
        assert_eq!(event.unwrap().unwrap().revision(), first);
    }
    // Sequential writes are separate commits: more than the watcher may fall behind.
    for i in 0..10 {
        storage
            .create(&format!("/lag/{i}"), Bytes::new())
            .await
            .unwrap();
    }
    let mut revisions = Vec::new();
    let error = loop {
        match tokio::time::timeout(DEADLINE, watch.next()).await.unwrap() {
            Some(Ok(event)) => revisions.push(event.revision()),
            Some(Err(error)) => break error,
            None => panic!("the watch ended without an error"),
        }
    };
    assert_eq!(error, Error::Lagged { capacity: 2 });
    assert!(
        tokio::time::timeout(DEADLINE, watch.next())
            .await
            .unwrap()
            .is_none()
    );
    // What came before the error was in order.
    assert!(revisions.windows(2).all(|w| w[1] == w[0] + 1));
    // The writer was not held up, and a new watch from the last revision seen catches up.
    let last = revisions.last().copied().unwrap_or(first);
    let mut again = storage.watch("/lag/", last).await.unwrap();
    let event = tokio::time::timeout(DEADLINE, again.next()).await.unwrap();
    assert_eq!(event.unwrap().unwrap().revision(), last + 1);
}

#[tokio::test]
async fn dropping_the_storage_ends_watches() {
    let (storage, _dir) = backend().await;
    let mut watch = storage.watch("/", 0).await.unwrap();
    let kv = storage.create("/x", Bytes::new()).await.unwrap();
    let event = tokio::time::timeout(DEADLINE, watch.next()).await.unwrap();
    assert_eq!(event.unwrap().unwrap().revision(), kv.mod_revision);
    drop(storage);
    assert!(
        tokio::time::timeout(DEADLINE, watch.next())
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn health() {
    let (storage, _dir) = backend().await;
    storage.health().await.unwrap();
}

/// The environment variable that turns [`crash_child`] on, naming its data directory.
const CRASH_DIR: &str = "KAPI_STORAGE_CRASH_DIR";

/// Not a test: the child process of [`acknowledged_writes_survive_kill_9`]. Writes from
/// several tasks until killed, printing each acknowledged write.
#[test]
#[ignore = "run by acknowledged_writes_survive_kill_9"]
fn crash_child() {
    let Ok(dir) = std::env::var(CRASH_DIR) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    runtime.block_on(async {
        let storage = Arc::new(EmbeddedStorage::open(dir).unwrap());
        let tasks: Vec<_> = (0..4)
            .map(|task| {
                let storage = Arc::clone(&storage);
                tokio::spawn(async move {
                    for i in 0.. {
                        let key = format!("/crash/{task}/{i}");
                        let kv = storage
                            .create(&key, Bytes::from(vec![7; 256]))
                            .await
                            .unwrap();
                        println!("ack {key} {}", kv.mod_revision);
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
}

/// Kills a writing process with SIGKILL mid-write: every write it acknowledged is there
/// after reopening, and nothing is half-applied.
#[cfg(unix)]
#[tokio::test]
async fn acknowledged_writes_survive_kill_9() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CRASH_DIR, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // Read acknowledgements until there are enough, then kill while writes are under way.
    let acked = tokio::task::spawn_blocking(move || {
        let mut acked = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if let Some(ack) = line.strip_prefix("ack ") {
                let (key, revision) = ack.split_once(' ').unwrap();
                acked.push((key.to_owned(), revision.parse::<u64>().unwrap()));
                if acked.len() == 300 {
                    child.kill().unwrap();
                    break;
                }
            }
        }
        child.wait().unwrap();
        acked
    });
    let acked = tokio::time::timeout(DEADLINE, acked)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(acked.len(), 300, "the child wrote");

    let storage = EmbeddedStorage::open(dir.path()).unwrap();
    let current = storage.current_revision().await.unwrap();
    for (key, revision) in &acked {
        let kv = storage.get(key, 0).await.unwrap();
        assert_eq!(kv.map(|kv| kv.mod_revision), Some(*revision), "{key}");
        assert!(*revision <= current);
    }
    // Every revision up to the current one is a whole write: its key is there with it.
    let list = storage.list(ListRequest::prefix("/crash/")).await.unwrap();
    assert_eq!(list.items.len() as u64, current);
    let mut revisions: Vec<_> = list.items.iter().map(|kv| kv.mod_revision).collect();
    revisions.sort();
    assert!(revisions.iter().copied().eq(1..=current));
    // And the store goes on from there.
    let kv = storage.create("/after", Bytes::new()).await.unwrap();
    assert_eq!(kv.mod_revision, current + 1);
}

/// Watches started before, during and late in a stream of concurrent writes (so replaying
/// several history pages while writes go on, then handing over to live events) each see
/// every write exactly once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_hand_over_under_load() {
    const TASKS: u64 = 8;
    const PER_TASK: u64 = 300;
    let (storage, _dir) = backend().await;
    // Not 0, which would mean "from now" to a watch.
    let start = storage
        .create("/seed", Bytes::new())
        .await
        .unwrap()
        .mod_revision;
    let writers: Vec<_> = (0..TASKS)
        .map(|task| {
            let storage = Arc::clone(&storage);
            tokio::spawn(async move {
                for i in 0..PER_TASK {
                    let key = format!("/load/{task}/{i}");
                    storage.create(&key, Bytes::new()).await.unwrap();
                }
            })
        })
        .collect();
    let total = TASKS * PER_TASK;
    let watch_from = |from| {
        let storage = Arc::clone(&storage);
        tokio::spawn(async move {
            let mut watch = storage.watch("/load/", from).await.unwrap();
            let mut expected = from + 1;
            while expected <= start + total {
                let item = tokio::time::timeout(DEADLINE, watch.next()).await.unwrap();
                let revision = item.unwrap().unwrap().revision();
                assert_eq!(revision, expected);
                expected += 1;
            }
        })
    };
    let mut watchers = vec![watch_from(start)];
    // Later watchers start from wherever the writes have got to.
    for _ in 0..3 {
        let now = loop {
            let now = storage.current_revision().await.unwrap();
            if now > start + watchers.len() as u64 * 500 || now == start + total {
                break now;
            }
            tokio::task::yield_now().await;
        };
        watchers.push(watch_from(now));
        watchers.push(watch_from(now.saturating_sub(700).max(start)));
    }
    for task in writers.into_iter().chain(watchers) {
        tokio::time::timeout(DEADLINE, task).await.unwrap().unwrap();
    }
}
