//! The watch cache on its own, against the embedded store and a wrapper of it whose watches
//! the test breaks: it follows the store, replays its history, answers "too old" beyond it,
//! resumes a broken storage watch from the last revision it applied without disturbing
//! its watchers, lists again (ending its watchers) only when that revision is gone, and
//! answers the registry's consistent reads once it has caught up with storage.
#![cfg(feature = "server")]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use kapi_runtime::cache::{
    Cache, CacheError, CacheOptions, CachedEvent, Change, End, Subscription,
};
use kapi_runtime::storage::embedded::EmbeddedStorage;
use kapi_runtime::storage::{
    Deleted, Error, Guard, KeyValue, ListRequest, ListResponse, Result, Revision, Storage,
    WatchStream,
};
use tempfile::TempDir;
use tokio::sync::broadcast;

/// How long anything may take to arrive.
const DEADLINE: Duration = Duration::from_secs(10);

/// A change another writer makes to a value.
type Rewrite = fn(&[u8]) -> Bytes;

/// The embedded store, with watches the test can break and a switch making every watch
/// answer "compacted" (as etcd does for a revision compacted away).
struct Flaky {
    inner: Arc<dyn Storage>,
    breaker: broadcast::Sender<()>,
    compacted: AtomicBool,
    /// Whether the store's progress requests are passed on (otherwise it reports none).
    progress: AtomicBool,
    /// Whether it then drops them all the same (a feed that cannot answer), and how many
    /// it was asked for.
    deaf: AtomicBool,
    progress_requests: AtomicUsize,
    gets: AtomicUsize,
    /// Lists of whole values, and of keys and revisions only.
    lists: AtomicUsize,
    keys_only_lists: AtomicUsize,
    /// Whether watches drop the changes they read (a cache that never hears of writes).
    dropping: Arc<AtomicBool>,
    watches: Mutex<Vec<Revision>>,
    /// A key changed by the given function of its value just before the next guarded
    /// create (another writer racing a create between its check and its write).
    change_before_create: Mutex<Option<(String, Rewrite)>>,
    /// A key created right after the next list is read (a write racing a list).
    create_after_list: Mutex<Option<String>>,
}

impl Flaky {
    /// Ends every open watch with an `Unavailable` error.
    fn break_watches(&self) {
        let _ = self.breaker.send(());
    }
}

#[async_trait::async_trait]
impl Storage for Flaky {
    async fn get(&self, key: &str, revision: Revision) -> Result<Option<KeyValue>> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        self.inner.get(key, revision).await
    }
    async fn list(&self, request: ListRequest) -> Result<ListResponse> {
        match request.keys_only {
            true => self.keys_only_lists.fetch_add(1, Ordering::SeqCst),
            false => self.lists.fetch_add(1, Ordering::SeqCst),
        };
        let listed = self.inner.list(request).await;
        let racing = self.create_after_list.lock().unwrap().take();
        if let Some(key) = racing {
            self.inner.create(&key, Bytes::from("{}")).await?;
        }
        listed
    }
    async fn count(&self, prefix: &str) -> Result<u64> {
        self.inner.count(prefix).await
    }
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.inner.create(key, value).await
    }
    async fn create_guarded(&self, key: &str, value: Bytes, guard: &Guard) -> Result<KeyValue> {
        let racing = self.change_before_create.lock().unwrap().take();
        if let Some((changed, change)) = racing
            && let Some(kv) = self.inner.get(&changed, 0).await?
        {
            (self.inner)
                .update(&changed, change(&kv.value), kv.mod_revision)
                .await?;
        }
        self.inner.create_guarded(key, value, guard).await
    }
    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue> {
        self.inner.update(key, value, expected).await
    }
    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted> {
        self.inner.delete(key, expected).await
    }
    async fn watch(&self, prefix: &str, from_revision: Revision) -> Result<WatchStream> {
        self.watches.lock().unwrap().push(from_revision);
        if self.compacted.load(Ordering::SeqCst) {
            return Err(Error::Compacted {
                requested: from_revision,
                compacted: 0,
            });
        }
        let events = self.inner.watch(prefix, from_revision).await?;
        let broken = self.breaker.subscribe();
        let state = (events, broken, false, Arc::clone(&self.dropping));
        Ok(Box::pin(futures_util::stream::unfold(
            state,
            |(mut events, mut broken, done, dropping)| async move {
                if done {
                    return None;
                }
                let kept = async {
                    loop {
                        let item = events.next().await;
                        if !(dropping.load(Ordering::SeqCst) && matches!(item, Some(Ok(_)))) {
                            return item;
                        }
                    }
                };
                tokio::select! {
                    item = kept => item.map(|item| (item, (events, broken, false, dropping))),
                    _ = broken.recv() => {
                        let error = Error::Unavailable("connection reset".into());
                        Some((Err(error), (events, broken, true, dropping)))
                    }
                }
            },
        )))
    }
    async fn compact(&self, revision: Revision) -> Result<()> {
        self.inner.compact(revision).await
    }
    fn reports_progress(&self) -> bool {
        self.progress.load(Ordering::SeqCst) && self.inner.reports_progress()
    }
    async fn request_progress(&self) {
        self.progress_requests.fetch_add(1, Ordering::SeqCst);
        if self.progress.load(Ordering::SeqCst) && !self.deaf.load(Ordering::SeqCst) {
            self.inner.request_progress().await;
        }
    }
    async fn current_revision(&self) -> Result<Revision> {
        self.inner.current_revision().await
    }
    async fn health(&self) -> Result<()> {
        self.inner.health().await
    }
    async fn size(&self) -> Result<u64> {
        self.inner.size().await
    }
}

struct Env {
    flaky: Arc<Flaky>,
    storage: Arc<dyn Storage>,
    cache: Arc<Cache>,
    _dir: TempDir,
}

/// A cache over a store written once outside its prefix (so that its first list is not
/// at revision 0, the special case `a_write_racing_the_first_list_of_an_empty_store`
/// covers).
async fn env(options: CacheOptions) -> Env {
    env_on(options, true, None).await
}

/// A cache over a fresh store (`seeded`: written once outside the prefix first), with
/// `racing` created right after the cache's first list.
async fn env_on(options: CacheOptions, seeded: bool, racing: Option<&str>) -> Env {
    let seed: &[&str] = if seeded { &["/seed"] } else { &[] };
    env_over(options, seed, racing).await
}

/// A cache over a fresh store holding the keys `existing` (`{}` each), with `racing`
/// created right after the cache's first list request.
async fn env_over(options: CacheOptions, existing: &[&str], racing: Option<&str>) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let inner: Arc<dyn Storage> = Arc::new(EmbeddedStorage::open(dir.path()).unwrap());
    for key in existing {
        inner.create(key, Bytes::from("{}")).await.unwrap();
    }
    let flaky = Arc::new(Flaky {
        inner,
        breaker: broadcast::channel(4).0,
        compacted: AtomicBool::new(false),
        progress: AtomicBool::new(false),
        deaf: AtomicBool::new(false),
        progress_requests: AtomicUsize::new(0),
        gets: AtomicUsize::new(0),
        lists: AtomicUsize::new(0),
        keys_only_lists: AtomicUsize::new(0),
        dropping: Arc::new(AtomicBool::new(false)),
        watches: Mutex::new(Vec::new()),
        change_before_create: Mutex::new(None),
        create_after_list: Mutex::new(racing.map(str::to_owned)),
    });
    let storage: Arc<dyn Storage> = flaky.clone();
    let (cache, _task) = Cache::start(&storage, "/r/", "things", options);
    Env {
        flaky,
        storage,
        cache,
        _dir: dir,
    }
}

impl Env {
    async fn put(&self, name: &str, value: &str) -> Revision {
        let key = format!("/r/{name}");
        let value = Bytes::from(format!("{{\"v\":\"{value}\"}}"));
        match self.storage.get(&key, 0).await.unwrap() {
            Some(kv) => self.storage.update(&key, value, kv.mod_revision).await,
            None => self.storage.create(&key, value).await,
        }
        .unwrap()
        .mod_revision
    }

    /// Waits until the cache reached `revision`.
    async fn reached(&self, revision: Revision) {
        let reached = self.cache.wait_for(revision, DEADLINE).await;
        assert!(reached.is_some(), "the cache did not reach {revision}");
    }
}

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

/// A registry of core Namespaces and ConfigMaps on the test's store, with their kinds.
struct Core {
    registry: kapi_runtime::registry::Registry,
    namespaces: Arc<kapi_runtime::scheme::KindEntry>,
    configmaps: Arc<kapi_runtime::scheme::KindEntry>,
}

impl Core {
    async fn new(env: &Env) -> Core {
        use api_types::core;
        use kapi_runtime::scheme::{KindEntry, Scheme};
        let scheme = Scheme::new()
            .add(
                KindEntry::new::<core::Namespace>()
                    .version::<core::Namespace, core::Namespace>("v1"),
            )
            .add(
                KindEntry::new::<core::ConfigMap>()
                    .version::<core::ConfigMap, core::ConfigMap>("v1"),
            );
        let registry = kapi_runtime::registry::Registry::new(
            Arc::new(scheme),
            env.storage.clone(),
            "/registry",
        )
        .await
        .unwrap();
        let kind = |plural| registry.scheme().by_resource("", plural).unwrap();
        let (namespaces, configmaps) = (kind("namespaces"), kind("configmaps"));
        Core {
            registry,
            namespaces,
            configmaps,
        }
    }

    /// Creates the Namespace `name`; its resourceVersion.
    async fn namespace(&self, name: &str) -> String {
        let body = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        let options = kapi_runtime::registry::WriteOptions::default();
        let created = self
            .registry
            .create(self.namespaces(), body, &options)
            .await;
        let created = created.unwrap();
        created.object["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    fn namespaces(&self) -> kapi_runtime::registry::Target<'_> {
        kapi_runtime::registry::Target {
            kind: &self.namespaces,
            version: "v1",
            namespace: None,
        }
    }

    fn configmaps<'a>(&'a self, namespace: &'a str) -> kapi_runtime::registry::Target<'a> {
        kapi_runtime::registry::Target {
            kind: &self.configmaps,
            version: "v1",
            namespace: Some(namespace),
        }
    }
}

/// Consistent reads (no resourceVersion) come from the cache once it has reached storage's
/// current revision. When the last write was to another kind, which the kind's cache never
/// hears of, they come from the cache caught up when storage's watches report progress on
/// request, else from storage. The same answer either way.
#[tokio::test]
async fn consistent_reads_use_the_cache_once_it_has_caught_up() {
    use kapi_runtime::registry::{ListOptions, WriteOptions};

    let env = env(CacheOptions::default()).await;
    let core = Core::new(&env).await;
    let registry = &core.registry;
    let configmaps = core.configmaps("default");
    let body =
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    let created = (registry
        .create(configmaps, body, &WriteOptions::default())
        .await)
        .unwrap();
    let revision = created.object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let names = |list: &kapi_runtime::registry::ObjectList| -> Vec<String> {
        (list.items.iter())
            .map(|o| o.value()["metadata"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // Once the cache has the write, a consistent list does not touch storage's lists.
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let at_least = ListOptions {
            resource_version: Some("0".into()),
            ..ListOptions::default()
        };
        let list = registry.list(configmaps, &at_least).await.unwrap();
        if list.resource_version == revision {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cache never caught up"
        );
        tokio::task::yield_now().await;
    }
    let lists = env.flaky.lists.load(Ordering::SeqCst);
    let list = registry
        .list(configmaps, &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (names(&list), list.resource_version.as_str()),
        (vec!["a".to_owned()], revision.as_str())
    );
    assert_eq!(
        env.flaky.lists.load(Ordering::SeqCst),
        lists,
        "served from the cache"
    );

    // A store whose watches report progress on request: the cache catches up with a write
    // to another kind without a change of its own, and answers at the new revision.
    env.flaky.progress.store(true, Ordering::SeqCst);
    let other = core.namespace("other").await;
    let lists = env.flaky.lists.load(Ordering::SeqCst);
    let list = registry
        .list(configmaps, &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (names(&list), list.resource_version.as_str()),
        (vec!["a".to_owned()], other.as_str())
    );
    let not_older = ListOptions {
        resource_version: Some(other.clone()),
        ..ListOptions::default()
    };
    let list = registry.list(configmaps, &not_older).await.unwrap();
    assert_eq!(list.resource_version, other);
    assert_eq!(
        env.flaky.lists.load(Ordering::SeqCst),
        lists,
        "served from the cache"
    );

    // Without progress, a write to another kind leaves the configmaps' cache unable to
    // know it is current. A keys-only list of storage shows it holds storage's keys at
    // their revisions: the cache answers, at the new revision.
    env.flaky.progress.store(false, Ordering::SeqCst);
    let third = core.namespace("third").await;
    let counts = || {
        let flaky = &env.flaky;
        [&flaky.lists, &flaky.keys_only_lists].map(|n| n.load(Ordering::SeqCst))
    };
    let before = counts();
    let list = registry
        .list(configmaps, &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(names(&list), ["a"]);
    assert_eq!(list.resource_version, third);
    assert_eq!(
        counts(),
        [before[0], before[1] + 1],
        "served from the cache"
    );

    // A write the cache never hears of: the keys differ, and storage answers.
    env.flaky.dropping.store(true, Ordering::SeqCst);
    let body =
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}});
    let created = (registry
        .create(configmaps, body, &WriteOptions::default())
        .await)
        .unwrap();
    let before = counts();
    let list = registry
        .list(configmaps, &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(names(&list), ["a", "b"]);
    assert_eq!(
        list.resource_version,
        created.object["metadata"]["resourceVersion"]
    );
    assert_eq!(
        counts(),
        [before[0] + 1, before[1] + 1],
        "served from storage"
    );
}

/// On a store that reports no progress (etcd before v3.4.31), a consistent GET reads the
/// object from storage, and when the cache holds that very state (the same mod revision)
/// answers with the cache's shared encoding: the one lists and watches send, with no
/// decoding or conversion. Its answer is storage's latest either way.
#[tokio::test]
async fn consistent_gets_without_progress_read_storage_and_share_the_cached_encoding() {
    use kapi_runtime::cache::SharedObject;
    use kapi_runtime::registry::{GetOptions, ListOptions, WriteOptions};

    let env = env(CacheOptions::default()).await;
    let core = Core::new(&env).await;
    let registry = &core.registry;
    let configmaps = core.configmaps("default");
    let body = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "1"}});
    let created = (registry
        .create(configmaps, body, &WriteOptions::default())
        .await)
        .unwrap();
    let revision = created.object["metadata"]["resourceVersion"].clone();
    // A write to another kind: the configmaps' cache is behind storage's revision.
    core.namespace("other").await;
    let any = ListOptions {
        resource_version: Some("0".into()),
        ..ListOptions::default()
    };
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let cached = loop {
        let list = registry.list(configmaps, &any).await.unwrap();
        if let Some(item) = list.items.first() {
            break item.clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "never cached");
        tokio::task::yield_now().await;
    };
    assert_eq!(cached.value()["metadata"]["resourceVersion"], revision);

    let latest = GetOptions::default();
    let gets = env.flaky.gets.load(Ordering::SeqCst);
    let got = registry.get_with(configmaps, "a", None, &latest);
    let got = got.await.unwrap();
    assert_eq!(
        env.flaky.gets.load(Ordering::SeqCst),
        gets + 1,
        "read from storage"
    );
    assert!(
        SharedObject::ptr_eq(&got, &cached),
        "served with the cached encoding"
    );

    // Changed behind the registry's back: storage's state is the answer, whether or not
    // the cache has heard of it yet.
    let key = "/registry/configmaps/default/a";
    let stored = env.storage.get(key, 0).await.unwrap().unwrap();
    let mut changed: serde_json::Value = serde_json::from_slice(&stored.value).unwrap();
    changed["data"]["k"] = "2".into();
    let changed = Bytes::from(serde_json::to_vec(&changed).unwrap());
    let updated = env.storage.update(key, changed, stored.mod_revision).await;
    let updated = updated.unwrap();
    let got = registry.get_with(configmaps, "a", None, &latest);
    let got = got.await.unwrap().value();
    assert_eq!(got["data"]["k"], "2");
    assert_eq!(
        got["metadata"]["resourceVersion"],
        updated.mod_revision.to_string()
    );
}

/// A cache whose feed does not answer progress requests is asked twice, then left alone
/// for a while: the reads meanwhile ask storage at once (here a keys-only list, which
/// shows the cache holds storage's keys), not each after a wait in vain.
#[tokio::test]
async fn a_cache_that_cannot_catch_up_leaves_consistent_reads_to_storage() {
    use kapi_runtime::registry::ListOptions;

    let env = env(CacheOptions::default()).await;
    let core = Core::new(&env).await;
    let registry = &core.registry;
    let configmaps = core.configmaps("default");
    core.namespace("other").await;
    env.flaky.progress.store(true, Ordering::SeqCst);
    env.flaky.deaf.store(true, Ordering::SeqCst);
    let lists = env.flaky.keys_only_lists.load(Ordering::SeqCst);
    for read in 1..=3 {
        let list = registry.list(configmaps, &ListOptions::default()).await;
        assert!(list.unwrap().items.is_empty());
        assert_eq!(
            env.flaky.keys_only_lists.load(Ordering::SeqCst),
            lists + read,
            "storage asked"
        );
        assert_eq!(
            env.flaky.progress_requests.load(Ordering::SeqCst),
            2,
            "read {read}: only the first asks, twice"
        );
    }
}

/// kube's NamespaceLifecycle check and the create it allows are one: the create is made
/// under a guard on the namespace's revision as checked, so a namespace marked terminating
/// between the check and the write (here by a writer racing the check) lets nothing in:
/// the store refuses, the check runs again, and the answer is kube's 403.
#[tokio::test]
async fn a_namespace_terminated_after_the_check_refuses_the_create() {
    use kapi_runtime::error::ApiError;
    use kapi_runtime::registry::WriteOptions;

    let env = env(CacheOptions::default()).await;
    let core = Core::new(&env).await;
    let registry = &core.registry;
    let configmaps = core.configmaps("team");
    core.namespace("team").await;
    let configmap = |name: &str| serde_json::json!({"metadata": {"name": name}});
    (registry
        .create(configmaps, configmap("a"), &WriteOptions::default())
        .await)
        .unwrap();

    fn terminate(value: &[u8]) -> Bytes {
        let mut namespace: serde_json::Value = serde_json::from_slice(value).unwrap();
        namespace["status"]["phase"] = "Terminating".into();
        namespace["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z".into();
        Bytes::from(serde_json::to_vec(&namespace).unwrap())
    }
    *env.flaky.change_before_create.lock().unwrap() =
        Some(("/registry/namespaces/team".into(), terminate));
    let refused = registry
        .create(configmaps, configmap("b"), &WriteOptions::default())
        .await;
    assert!(
        env.flaky.change_before_create.lock().unwrap().is_none(),
        "the namespace changed between the check and the write"
    );
    match refused {
        Err(error @ ApiError::Forbidden { .. }) => assert_eq!(
            error.to_string(),
            "configmaps \"b\" is forbidden: unable to create new content in namespace team because it is being terminated"
        ),
        other => panic!("expected kube's 403, got {other:?}"),
    }
    let stored = (env.storage.get("/registry/configmaps/team/b", 0).await).unwrap();
    assert_eq!(stored, None, "nothing was written");
}
