//! The registry's side of its watch caches ([`kapi_storage::cache`], one per kind): their
//! options, counts and readiness as the server reports them, in-process followers of a
//! kind, and whether a cache may answer a read (kube's `ConsistentListFromCache` and
//! "not older than" reads).

use std::sync::Arc;

use kapi_core::error::ApiError;
use kapi_core::scheme::KindEntry;
use kapi_storage::cache::{self, Cache, CacheOptions};

use crate::{Registry, object};

impl Registry {
    /// Sets the watch caches' history size, watcher buffer and bookmark interval.
    pub fn with_watch_cache(self, options: CacheOptions) -> Registry {
        self.caches.configure(options);
        self
    }

    /// How many objects each stored resource has (`webapps.apps.example.dev`), as its watch
    /// cache holds them.
    pub fn object_counts(&self) -> Vec<(String, usize)> {
        (self.caches.all().iter())
            .map(|cache| (cache.resource().to_owned(), cache.len()))
            .collect()
    }

    /// The resources (`roles.rbac.authorization.k8s.io`) among `of` whose watch cache is
    /// not ready (has not listed yet, or lists again).
    pub fn unsynced_caches(&self, of: impl Fn(&str) -> bool) -> Vec<String> {
        (self.caches.all().iter())
            .filter(|cache| of(cache.resource()) && cache.revision().is_none())
            .map(|cache| cache.resource().to_owned())
            .collect()
    }

    /// Ends every open watch cleanly and refuses new ones (503): the server is shutting
    /// down, and watches would otherwise hold its drain until their timeout.
    pub fn stop_watches(&self) {
        self.caches.close();
    }

    /// The objects of the kind `group`/`kind` as stored (JSON in the storage version) and
    /// a subscription to every later change, from its watch cache: how in-process readers
    /// (the RBAC authorizer's index) follow a kind without reading storage per request.
    pub async fn follow_stored(
        &self,
        group: &str,
        kind: &str,
    ) -> Result<(cache::Snapshot, cache::Subscription), ApiError> {
        let entry = (self.scheme.by_kind(group, kind))
            .ok_or_else(|| object::internal(format!("{kind}.{group} is not served")))?;
        let cache = self.ready_cache(&entry).await?;
        cache
            .list_and_watch(&self.keys().kind_prefix(entry.info))
            .map_err(object::cache_error)
    }

    /// The object `name` of `kind` in `namespace` as its watch cache holds it now (stored
    /// JSON, in the storage version), without waiting: `None` when the cache has not loaded
    /// or holds no such object. For readers that cannot wait, as authentication reading a
    /// token's objects on every request; a miss may be an object written a moment ago,
    /// which [`get`](Registry::get) finds.
    pub fn cached_object(
        &self,
        kind: &KindEntry,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<serde_json::Value> {
        let keys = self.keys();
        let key = keys.object(kind.info, namespace, name).ok()?;
        let cache = self.caches.for_prefix(&keys.kind_prefix(kind.info))?;
        cache.revision()?;
        let (object, _) = cache.get(&key).ok()?;
        object?.decode().ok()
    }

    /// How many watches the caches serve now.
    pub fn watchers(&self) -> usize {
        self.caches.all().iter().map(|c| c.watchers()).sum()
    }

    /// The watch cache of `kind`, once it has loaded (kube answers 429 "storage is
    /// (re)initializing" after waiting a little).
    pub(crate) async fn ready_cache(&self, kind: &KindEntry) -> Result<Arc<Cache>, ApiError> {
        let prefix = self.keys().kind_prefix(kind.info);
        let cache = (self.caches.for_prefix(&prefix)).ok_or_else(|| match kind.is_dynamic() {
            // Its definition was deleted while the request ran.
            true => ApiError::NoRoute,
            false => object::internal(format!("{} has no watch cache", kind.info.kind)),
        })?;
        if cache.revision().is_none() {
            cache.wait_for(0, cache::FRESHNESS_TIMEOUT).await;
        }
        Ok(cache)
    }

    /// Whether `cache` may answer a consistent read: it has reached storage's current
    /// revision, at once or after a progress request (kube's `ConsistentListFromCache`);
    /// storage answers otherwise.
    pub(crate) async fn cache_is_current(
        &self,
        kind: &KindEntry,
        cache: &Cache,
    ) -> Result<bool, ApiError> {
        let current = self.storage.current_revision().await;
        let current =
            current.map_err(|e| object::storage_error(e, &object::resource(kind.info), ""))?;
        Ok(self.caches.catch_up(cache, current).await)
    }

    /// Whether `cache` may answer a read "not older than" `at_least`: it has reached it
    /// (`true`), or storage has and the cache catches up (as for a consistent read) or not
    /// (`false`: read storage). Neither, after waiting kube's `blockTimeout` for the
    /// revision to come: 504 "Too large resource version".
    pub(crate) async fn cache_reaches(
        &self,
        kind: &KindEntry,
        cache: &Cache,
        at_least: u64,
    ) -> Result<bool, ApiError> {
        if cache.revision().is_some_and(|r| r >= at_least) {
            return Ok(true);
        }
        let current = self.storage.current_revision().await;
        let current =
            current.map_err(|e| object::storage_error(e, &object::resource(kind.info), ""))?;
        if current >= at_least {
            return Ok(self.caches.catch_up(cache, at_least).await);
        }
        match cache.wait_for(at_least, cache::FRESHNESS_TIMEOUT).await {
            Some(_) => Ok(true),
            None => Err(ApiError::TooLargeResourceVersion {
                requested: at_least,
                current: cache.revision().unwrap_or(current).max(current),
            }),
        }
    }
}
