//! The watch caches of a registry, one per kind's key prefix: started with the registry,
//! or while the server runs for a kind installed then, and stopped with it.
//!
//! They also bring a cache up to storage's revision for a consistent read
//! ([`Caches::catch_up`]). A cache learns revisions from its own kind's changes only, so
//! after a write to another kind it cannot tell by itself that it is current: it asks
//! storage's watches for progress (kube's `RequestWatchProgress` for consistent reads from
//! cache), which answers every cache at once.

use std::sync::Arc;
use std::time::Duration;

use super::{Cache, CacheOptions};
use crate::coalesce::Shared;
use crate::{Revision, Storage};

/// How long a read waits for a cache to catch up after a progress request, per request.
/// Storage answers in one round trip when it can; a watch still replaying history misses
/// a request, hence a second one before the read goes to storage. Also how long a read
/// that found the cache behind waits for the kind's own changes still on their way to it.
pub const CATCH_UP_WAIT: Duration = Duration::from_millis(100);
const CATCH_UP_REQUESTS: usize = 2;

/// How long after a failed catch-up a cache's reads go to storage without trying: its feed
/// is replaying, backing off, or on a member that lags, and every read would wait in vain.
const CATCH_UP_BACKOFF: Duration = Duration::from_secs(1);

/// The caches of a registry: one per kind's key prefix, started with the registry or when
/// a kind is installed later ([`Caches::add`]). Dropping it stops their feeds.
#[derive(Default)]
pub struct Caches {
    inner: std::sync::RwLock<CachesInner>,
}

#[derive(Default)]
struct CachesInner {
    /// The storage new caches read.
    storage: Option<Arc<dyn Storage>>,
    /// Progress requests to that storage's watches, shared by concurrent readers: one
    /// request made after a reader arrived answers it.
    progress: Option<Arc<Shared<()>>>,
    /// What new caches are configured with.
    options: CacheOptions,
    caches: Vec<(Arc<Cache>, tokio::task::AbortHandle)>,
}

impl Caches {
    /// Starts one cache per prefix, each named by its resource.
    pub fn start(
        storage: &Arc<dyn Storage>,
        prefixes: impl IntoIterator<Item = (String, String)>,
        options: CacheOptions,
    ) -> Caches {
        let caches = Caches::default();
        {
            let mut inner = caches.write();
            inner.storage = Some(Arc::clone(storage));
            inner.options = options;
            let storage = Arc::clone(storage);
            inner.progress = Some(Arc::new(Shared::new(move || {
                let storage = Arc::clone(&storage);
                async move { storage.request_progress().await }
            })));
        }
        for (prefix, resource) in prefixes {
            caches.add(prefix, resource);
        }
        caches
    }

    /// The cache of `prefix`, started (named by `resource`) unless one holds it already.
    pub fn add(&self, prefix: String, resource: String) -> Option<Arc<Cache>> {
        let mut inner = self.write();
        if let Some((cache, _)) = (inner.caches.iter()).find(|(c, _)| c.prefix() == prefix) {
            return Some(Arc::clone(cache));
        }
        let storage = inner.storage.clone()?;
        let (cache, task) = Cache::start(&storage, prefix, resource, inner.options);
        inner.caches.push((Arc::clone(&cache), task));
        Some(cache)
    }

    /// A new cache of `prefix` in place of the one holding it, in one step: a reader finds
    /// the old cache or the new one, never none. The old one's watches end.
    pub fn replace(&self, prefix: String, resource: String) -> Option<Arc<Cache>> {
        let mut inner = self.write();
        let storage = inner.storage.clone()?;
        stop(&mut inner.caches, &prefix);
        let (cache, task) = Cache::start(&storage, prefix, resource, inner.options);
        inner.caches.push((Arc::clone(&cache), task));
        Some(cache)
    }

    /// Stops the cache of `prefix`: its watches end ([`Cache::close`]) and its feed stops.
    pub fn remove(&self, prefix: &str) {
        stop(&mut self.write().caches, prefix);
    }

    /// The cache holding the keys under `prefix`.
    pub fn for_prefix(&self, prefix: &str) -> Option<Arc<Cache>> {
        let inner = self.read();
        (inner.caches.iter())
            .find(|(c, _)| prefix.starts_with(c.prefix()))
            .map(|(c, _)| Arc::clone(c))
    }

    /// Every cache, as of now.
    pub fn all(&self) -> Vec<Arc<Cache>> {
        (self.read().caches.iter())
            .map(|(c, _)| Arc::clone(c))
            .collect()
    }

    /// Whether `cache` reaches `revision`, which storage has reached: at once, or after
    /// asking storage's watches for progress when storage can answer (waiting at most
    /// [`CATCH_UP_REQUESTS`] × [`CATCH_UP_WAIT`]). `false`: the caller reads storage.
    pub async fn catch_up(&self, cache: &Cache, revision: Revision) -> bool {
        if cache.revision().is_some_and(|r| r >= revision) {
            return true;
        }
        if cache.revision().is_none() {
            return false;
        }
        let (storage, progress) = {
            let inner = self.read();
            (inner.storage.clone(), inner.progress.clone())
        };
        let (Some(storage), Some(progress)) = (storage, progress) else {
            return false;
        };
        if !storage.reports_progress() {
            // Behind, with no way to catch up: noted for `behind_recently`.
            *cache.catch_up_failed() = Some(std::time::Instant::now());
            return false;
        }
        if self.behind_recently(cache) {
            return false;
        }
        for _ in 0..CATCH_UP_REQUESTS {
            progress.read().await;
            if cache.wait_for(revision, CATCH_UP_WAIT).await.is_some() {
                return true;
            }
        }
        *cache.catch_up_failed() = Some(std::time::Instant::now());
        false
    }

    /// Whether a consistent read found `cache` behind storage and could not catch it up
    /// within the last [`CATCH_UP_BACKOFF`]: it is then likely behind still (other kinds'
    /// writes keep moving storage's revision), so a read that storage answers as cheaply
    /// as it tells its revision (a GET) asks storage at once.
    pub fn behind_recently(&self, cache: &Cache) -> bool {
        (*cache.catch_up_failed()).is_some_and(|at| at.elapsed() < CATCH_UP_BACKOFF)
    }

    /// Reconfigures every cache, and those started later.
    pub fn configure(&self, options: CacheOptions) {
        let mut inner = self.write();
        inner.options = options;
        for (cache, _) in &inner.caches {
            cache.configure(options);
        }
    }

    /// Ends every watch and refuses new ones ([`Cache::close`]).
    pub fn close(&self) {
        for (cache, _) in &self.read().caches {
            cache.close();
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, CachesInner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, CachesInner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Caches {
    fn drop(&mut self) {
        for (_, task) in &self.read().caches {
            task.abort();
        }
    }
}

/// Stops and drops the cache of `prefix` among `caches`: its watches end, its feed stops.
fn stop(caches: &mut Vec<(Arc<Cache>, tokio::task::AbortHandle)>, prefix: &str) {
    caches.retain(|(cache, task)| {
        let keep = cache.prefix() != prefix;
        if !keep {
            cache.close();
            task.abort();
        }
        keep
    });
}
