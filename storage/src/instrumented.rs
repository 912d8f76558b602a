//! Storage request metrics (kube's `etcd_request_duration_seconds`, `etcd_requests_total`,
//! `etcd_request_errors_total`), for every backend: a [`Storage`] that times each call of
//! the one it wraps. Storage knows no resource types: the `type` label (kube 1.32's
//! group-resource, `webapps.apps.example.dev`) comes from a table of key prefixes its
//! owner gives it; a key under none is labelled `""`.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use super::{
    Deleted, Error, Guard, KeyValue, ListRequest, ListResponse, Result, Revision, Storage,
    WatchStream,
};
use kapi_metrics::{StorageLabels, global};

/// A [`Storage`] whose calls are measured.
pub struct Instrumented {
    inner: Arc<dyn Storage>,
    /// Key prefixes and their labels, longest first.
    types: Vec<(String, String)>,
}

impl Instrumented {
    /// Measures `inner`; `types` labels the keys under each prefix.
    pub fn new(inner: Arc<dyn Storage>, types: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut types: Vec<(String, String)> = types.into_iter().collect();
        types.sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
        Instrumented { inner, types }
    }

    fn label(&self, key: &str) -> String {
        (self.types.iter())
            .find(|(prefix, _)| key.starts_with(prefix.as_str()))
            .map(|(_, label)| label.clone())
            .unwrap_or_default()
    }

    /// Records one call of `operation` on `key` that started at `started`.
    fn record<T>(&self, operation: &'static str, key: &str, started: Instant, result: &Result<T>) {
        let metrics = global();
        let labels = StorageLabels {
            operation,
            kind: self.label(key),
        };
        metrics.storage_requests.with_or_new(&labels, |c| c.inc());
        (metrics.storage_duration)
            .with_or_new(&labels, |h| h.observe(started.elapsed().as_secs_f64()));
        // Outcomes a request asks about (absent, taken, changed) are answers, not failures.
        if let Err(Error::Unavailable(_) | Error::Timeout(_) | Error::Internal(_)) = result {
            metrics.storage_errors.with_or_new(&labels, |c| c.inc());
        }
    }
}

#[async_trait::async_trait]
impl Storage for Instrumented {
    async fn get(&self, key: &str, revision: Revision) -> Result<Option<KeyValue>> {
        let started = Instant::now();
        let result = self.inner.get(key, revision).await;
        self.record("get", key, started, &result);
        result
    }

    async fn list(&self, request: ListRequest) -> Result<ListResponse> {
        let started = Instant::now();
        let prefix = request.prefix.clone();
        let result = self.inner.list(request).await;
        self.record("list", &prefix, started, &result);
        result
    }

    async fn count(&self, prefix: &str) -> Result<u64> {
        let started = Instant::now();
        let result = self.inner.count(prefix).await;
        self.record("listWithCount", prefix, started, &result);
        result
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        let started = Instant::now();
        let result = self.inner.create(key, value).await;
        self.record("create", key, started, &result);
        result
    }

    async fn create_guarded(&self, key: &str, value: Bytes, guard: &Guard) -> Result<KeyValue> {
        let started = Instant::now();
        let result = self.inner.create_guarded(key, value, guard).await;
        self.record("create", key, started, &result);
        result
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> Result<KeyValue> {
        let started = Instant::now();
        let result = self.inner.update(key, value, expected_mod_revision).await;
        self.record("update", key, started, &result);
        result
    }

    async fn delete(&self, key: &str, expected_mod_revision: Option<Revision>) -> Result<Deleted> {
        let started = Instant::now();
        let result = self.inner.delete(key, expected_mod_revision).await;
        self.record("delete", key, started, &result);
        result
    }

    async fn watch(&self, prefix: &str, from_revision: Revision) -> Result<WatchStream> {
        self.inner.watch(prefix, from_revision).await
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        self.inner.compact(revision).await
    }

    async fn current_revision(&self) -> Result<Revision> {
        self.inner.current_revision().await
    }

    fn same_write(&self, a: Revision, b: Revision) -> bool {
        self.inner.same_write(a, b)
    }

    fn reports_progress(&self) -> bool {
        self.inner.reports_progress()
    }

    async fn request_progress(&self) {
        self.inner.request_progress().await
    }

    async fn health(&self) -> Result<()> {
        self.inner.health().await
    }

    async fn size(&self) -> Result<u64> {
        self.inner.size().await
    }
}
