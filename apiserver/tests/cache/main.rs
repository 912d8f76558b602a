//! The watch cache on its own, against the embedded store and a wrapper of it whose watches
//! the test breaks: it follows the store, replays its history, answers "too old" beyond it,
//! resumes a broken storage watch from the last revision it applied without disturbing
//! its watchers, lists again (ending its watchers) only when that revision is gone, and
//! answers the registry's consistent reads once it has caught up with storage.

mod flaky;
mod registry;

use std::sync::atomic::Ordering;

use bytes::Bytes;
use kapi::storage::Revision;
use kapi::storage::cache::{CacheError, CacheOptions, CachedEvent, Change, End, Subscription};

use flaky::{DEADLINE, env, env_on, env_over, env_with};

/// `(revision, key, value)` of an event.
fn summary(event: &CachedEvent) -> (Revision, String, String) {
    let (key, value) = match &event.change {
        Change::Put { object, .. } => (
            object.kv.key.clone(),
            object.decode().unwrap()["v"].to_string(),
        ),
        Change::Delete { prev } => (prev.kv.key.clone(), "deleted".into()),
        Change::Progress => (String::new(), "progress".into()),
    };
    (event.revision, key, value)
}

async fn next(subscription: &mut Subscription) -> (Revision, String, String) {
    let event = tokio::time::timeout(DEADLINE, subscription.next())
        .await
        .expect("an event in time")
        .expect("the watch goes on");
    summary(&event)
}

fn event(revision: Revision, name: &str, value: &str) -> (Revision, String, String) {
    (revision, format!("/r/{name}"), format!("\"{value}\""))
}

/// An empty store lists at revision 0, from which a watch means "from now": a write
/// committed between the cache's list and its watch would be missed, so the cache lists
/// again when the store moved meanwhile.
#[tokio::test]
async fn a_write_racing_the_first_list_of_an_empty_store_is_not_missed() {
    let env = env_on(CacheOptions::default(), false, Some("/r/raced")).await;
    let written = (env.storage.get("/r/raced", 0))
        .await
        .unwrap()
        .map(|kv| kv.mod_revision);
    let revision = match written {
        Some(revision) => revision,
        // The cache has not listed yet: its list creates the key; wait for that.
        None => loop {
            tokio::task::yield_now().await;
            if let Some(kv) = env.storage.get("/r/raced", 0).await.unwrap() {
                break kv.mod_revision;
            }
        },
    };
    env.reached(revision).await;
    let listed = env.cache.list("/r/").unwrap();
    assert_eq!(listed.objects.len(), 1, "the racing write is in the cache");
}

/// The first list of an empty store is published once its feed's watch is open: the list
/// made again because a write raced it (above) resets no watcher that came between the two.
/// A client then finds no cache yet, or one whose watch goes on.
#[tokio::test]
async fn a_list_made_again_at_start_resets_no_watcher() {
    let env = env_with(CacheOptions::default(), &[], Some("/r/raced"), false).await;
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while env.flaky.watches.lock().unwrap().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the feed never watched"
        );
        tokio::task::yield_now().await;
    }
    // The feed has listed (the racing write came after) and waits for its watch.
    let early = env.cache.list_and_watch("/r/");
    env.flaky.watches_open.send_replace(true);
    let revision = env.put("later", "x").await;
    env.reached(revision).await;
    if let Ok((_, mut subscription)) = early {
        let next = tokio::time::timeout(DEADLINE, subscription.next()).await;
        let next = next.expect("an event within the deadline");
        assert!(next.is_ok(), "the watch ended: {:?}", next.err());
    }
    let (snapshot, _) = env.cache.list_and_watch("/r/").unwrap();
    assert_eq!(
        snapshot.objects.len(),
        2,
        "the racing write and the later one"
    );
}

/// The list is read in pages, all at the first page's revision: a write landing between
/// two pages is not in them but comes through the watch, once.
#[tokio::test]
async fn the_list_is_read_in_pages_of_one_snapshot() {
    let options = CacheOptions {
        list_page: 2,
        ..CacheOptions::default()
    };
    let existing = ["/r/a", "/r/b", "/r/c", "/r/d", "/r/e"];
    let env = env_over(options, &existing, Some("/r/raced")).await;
    // The racing key is created once the first page is read.
    let raced = loop {
        if let Some(kv) = env.storage.get("/r/raced", 0).await.unwrap() {
            break kv.mod_revision;
        }
        tokio::task::yield_now().await;
    };
    env.reached(raced).await;
    let listed = env.cache.list("/r/").unwrap();
    let keys: Vec<_> = listed.objects.iter().map(|o| o.kv.key.as_str()).collect();
    assert_eq!(keys, ["/r/a", "/r/b", "/r/c", "/r/d", "/r/e", "/r/raced"]);
    // Three pages (2, 2, 1) of the snapshot without the racing key, which came as an event.
    assert_eq!(env.flaky.lists.load(Ordering::SeqCst), 3);
    let before = raced - 1;
    let mut watch = env.cache.watch("/r/", before).unwrap();
    assert_eq!(
        next(&mut watch).await,
        (raced, "/r/raced".into(), "null".into())
    );
}

#[tokio::test]
async fn the_cache_follows_the_store_and_replays_its_history() {
    let env = env(CacheOptions {
        history: 3,
        ..CacheOptions::default()
    })
    .await;
    let a1 = env.put("a", "1").await;
    // Keys outside the prefix are not the cache's.
    env.storage
        .create("/other/x", Bytes::from("{}"))
        .await
        .unwrap();
    let b1 = env.put("b", "1").await;
    let a2 = env.put("a", "2").await;
    env.reached(a2).await;

    let snapshot = env.cache.list("/r/").unwrap();
    assert_eq!(snapshot.revision, a2);
    let keys: Vec<_> = snapshot.objects.iter().map(|o| o.kv.key.as_str()).collect();
    assert_eq!(keys, ["/r/a", "/r/b"]);
    let (a, _) = env.cache.get("/r/a").unwrap();
    assert_eq!(a.unwrap().kv.mod_revision, a2);

    // From a revision in the history: the later changes, then live ones.
    let mut watch = env.cache.watch("/r/", a1).unwrap();
    assert_eq!(next(&mut watch).await, event(b1, "b", "1"));
    assert_eq!(next(&mut watch).await, event(a2, "a", "2"));
    let c1 = env.put("c", "1").await;
    assert_eq!(next(&mut watch).await, event(c1, "c", "1"));

    // The history keeps 3 changes (a2, c1, d1): a1 and b1 fell out, so watches start at
    // b1 at the earliest.
    let d1 = env.put("d", "1").await;
    assert_eq!(next(&mut watch).await, event(d1, "d", "1"));
    assert!(env.cache.watch("/r/", b1).is_ok());
    let too_old = env.cache.watch("/r/", a1).err().unwrap();
    assert_eq!(
        too_old,
        CacheError::TooOld {
            requested: a1,
            oldest: b1
        }
    );
    // A narrower prefix sees only its keys.
    let mut only_c = env.cache.watch("/r/c", b1).unwrap();
    assert_eq!(next(&mut only_c).await, event(c1, "c", "1"));
    assert_eq!(env.flaky.lists.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_broken_storage_watch_is_resumed_from_the_last_revision_unseen_by_watchers() {
    let env = env(CacheOptions::default()).await;
    let first = env.put("a", "1").await;
    env.reached(first).await;
    // Broken watches must not add lists to those made so far.
    let lists = env.flaky.lists.load(Ordering::SeqCst);
    let mut watch = env.cache.watch("/r/", first).unwrap();

    for round in 0..3 {
        env.flaky.break_watches();
        // Writes while the feed reconnects are picked up from the store's history.
        let revision = env.put("a", &format!("{}", round + 2)).await;
        assert_eq!(
            next(&mut watch).await,
            event(revision, "a", &format!("{}", round + 2))
        );
    }
    assert_eq!(env.flaky.lists.load(Ordering::SeqCst), lists, "no relist");
    let watches = env.flaky.watches.lock().unwrap().clone();
    assert!(watches.len() >= 4, "{watches:?}");
    assert!(
        watches.windows(2).all(|w| w[0] <= w[1]),
        "each re-watch starts from the last revision applied: {watches:?}"
    );
}

#[tokio::test]
async fn a_compacted_resume_relists_and_ends_the_watchers() {
    let env = env(CacheOptions::default()).await;
    let first = env.put("a", "1").await;
    env.reached(first).await;
    let mut watch = env.cache.watch("/r/", first).unwrap();

    env.flaky.compacted.store(true, Ordering::SeqCst);
    env.flaky.break_watches();
    let end = tokio::time::timeout(DEADLINE, watch.next()).await.unwrap();
    assert!(
        matches!(end, Err(End::Reset)),
        "the watchers end when the cache relists"
    );
    assert!(env.flaky.lists.load(Ordering::SeqCst) >= 2);

    // Back to a working store: the cache relists once more and follows it.
    env.flaky.compacted.store(false, Ordering::SeqCst);
    env.flaky.break_watches();
    let revision = env.put("b", "1").await;
    env.reached(revision).await;
    let keys: Vec<_> = (env.cache.list("/r/").unwrap().objects.iter())
        .map(|o| o.kv.key.clone())
        .collect();
    assert_eq!(keys, ["/r/a", "/r/b"]);
    // History restarted at the relist: the old revision is too old now.
    assert!(matches!(
        env.cache.watch("/r/", first - 1),
        Err(CacheError::TooOld { .. })
    ));
}

#[tokio::test]
async fn closing_ends_the_watchers_and_refuses_new_ones() {
    let env = env(CacheOptions::default()).await;
    let first = env.put("a", "1").await;
    env.reached(first).await;
    let mut watch = env.cache.watch("/r/", first).unwrap();
    env.cache.close();
    assert!(matches!(watch.next().await, Err(End::Closed)));
    assert!(matches!(
        env.cache.watch("/r/", first),
        Err(CacheError::ShuttingDown)
    ));
}
