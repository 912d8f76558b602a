//! The test's store: the embedded store behind a wrapper whose watches the test breaks,
//! holds back or drops, which answers "compacted" on demand, passes progress requests on
//! or not, and counts the reads that reach it; and a watch cache over it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use kapi::storage::cache::{Cache, CacheOptions};
use kapi::storage::embedded::EmbeddedStorage;
use kapi::storage::{
    Deleted, Error, Guard, KeyValue, ListRequest, ListResponse, Result, Revision, Storage,
    WatchStream,
};
use tempfile::TempDir;
use tokio::sync::{broadcast, watch};

/// How long anything may take to arrive.
pub(crate) const DEADLINE: Duration = Duration::from_secs(10);

/// A change another writer makes to a value.
pub(crate) type Rewrite = fn(&[u8]) -> Bytes;

/// The embedded store, with watches the test can break and a switch making every watch
/// answer "compacted" (as etcd does for a revision compacted away).
pub(crate) struct Flaky {
    pub inner: Arc<dyn Storage>,
    pub breaker: broadcast::Sender<()>,
    pub compacted: AtomicBool,
    /// Whether the store's progress requests are passed on (otherwise it reports none).
    pub progress: AtomicBool,
    /// Whether it then drops them all the same (a feed that cannot answer), and how many
    /// it was asked for.
    pub deaf: AtomicBool,
    pub progress_requests: AtomicUsize,
    pub gets: AtomicUsize,
    /// Lists of whole values, and of keys and revisions only.
    pub lists: AtomicUsize,
    pub keys_only_lists: AtomicUsize,
    /// Keys-only lists answered (their caller has the answer once this counts it).
    pub keys_only_answered: AtomicUsize,
    /// Whether watches drop the changes they read (a cache that never hears of writes).
    pub dropping: Arc<AtomicBool>,
    /// Whether watches hold the changes they read back until it is cleared (changes on
    /// their way to the cache).
    pub held: watch::Sender<bool>,
    pub watches: Mutex<Vec<Revision>>,
    /// A key changed by the given function of its value just before the next guarded
    /// create (another writer racing a create between its check and its write).
    pub change_before_create: Mutex<Option<(String, Rewrite)>>,
    /// A key created right after the next list is read (a write racing a list).
    pub create_after_list: Mutex<Option<String>>,
    /// Whether watches open; while not, a watch asked for waits (a feed between its list
    /// and its watch).
    pub watches_open: watch::Sender<bool>,
}

impl Flaky {
    /// Ends every open watch with an `Unavailable` error.
    pub(crate) fn break_watches(&self) {
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
        let keys_only = request.keys_only;
        match keys_only {
            true => self.keys_only_lists.fetch_add(1, Ordering::SeqCst),
            false => self.lists.fetch_add(1, Ordering::SeqCst),
        };
        let listed = self.inner.list(request).await;
        if keys_only {
            self.keys_only_answered.fetch_add(1, Ordering::SeqCst);
        }
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
        let _ = self.watches_open.subscribe().wait_for(|open| *open).await;
        if self.compacted.load(Ordering::SeqCst) {
            return Err(Error::Compacted {
                requested: from_revision,
                compacted: 0,
            });
        }
        let events = self.inner.watch(prefix, from_revision).await?;
        let broken = self.breaker.subscribe();
        let held = self.held.subscribe();
        let state = (events, broken, false, Arc::clone(&self.dropping), held);
        Ok(Box::pin(futures_util::stream::unfold(
            state,
            |(mut events, mut broken, done, dropping, mut held)| async move {
                if done {
                    return None;
                }
                let kept = async {
                    loop {
                        let item = events.next().await;
                        if !matches!(item, Some(Ok(_))) {
                            return item;
                        }
                        if !dropping.load(Ordering::SeqCst) {
                            let _ = held.wait_for(|held| !*held).await;
                            return item;
                        }
                    }
                };
                tokio::select! {
                    item = kept => {
                        item.map(|item| (item, (events, broken, false, dropping, held)))
                    }
                    _ = broken.recv() => {
                        let error = Error::Unavailable("connection reset".into());
                        Some((Err(error), (events, broken, true, dropping, held)))
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

pub(crate) struct Env {
    pub flaky: Arc<Flaky>,
    pub storage: Arc<dyn Storage>,
    pub cache: Arc<Cache>,
    pub _dir: TempDir,
}

/// A cache over a store written once outside its prefix (so that its first list is not
/// at revision 0, the special case `a_write_racing_the_first_list_of_an_empty_store`
/// covers).
pub(crate) async fn env(options: CacheOptions) -> Env {
    env_on(options, true, None).await
}

/// A cache over a fresh store (`seeded`: written once outside the prefix first), with
/// `racing` created right after the cache's first list.
pub(crate) async fn env_on(options: CacheOptions, seeded: bool, racing: Option<&str>) -> Env {
    let seed: &[&str] = if seeded { &["/seed"] } else { &[] };
    env_over(options, seed, racing).await
}

/// A cache over a fresh store holding the keys `existing` (`{}` each), with `racing`
/// created right after the cache's first list request.
pub(crate) async fn env_over(
    options: CacheOptions,
    existing: &[&str],
    racing: Option<&str>,
) -> Env {
    env_with(options, existing, racing, true).await
}

/// [`env_over`], with the store's watches opening only once `watches_open` is set when
/// `open` is false.
pub(crate) async fn env_with(
    options: CacheOptions,
    existing: &[&str],
    racing: Option<&str>,
    open: bool,
) -> Env {
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
        keys_only_answered: AtomicUsize::new(0),
        dropping: Arc::new(AtomicBool::new(false)),
        held: watch::channel(false).0,
        watches: Mutex::new(Vec::new()),
        change_before_create: Mutex::new(None),
        create_after_list: Mutex::new(racing.map(str::to_owned)),
        watches_open: watch::channel(open).0,
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
    pub(crate) async fn put(&self, name: &str, value: &str) -> Revision {
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
    pub(crate) async fn reached(&self, revision: Revision) {
        let reached = self.cache.wait_for(revision, DEADLINE).await;
        assert!(reached.is_some(), "the cache did not reach {revision}");
    }
}
