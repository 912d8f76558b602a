//! `GET /metrics`: the Prometheus scrape (`kapi_metrics`), in the text format or, when
//! the scraper's `Accept` asks for it, OpenMetrics. Authorized as the non-resource URL
//! `/metrics` (kube's `system:monitoring` ClusterRole grants it). The figures read rather
//! than counted (objects per resource, the database's size) are refreshed first.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::Shared;
use crate::http::ErrorResponse as _;
use kapi_core::error::ApiError;
use kapi_metrics::{ResourceLabels, StorageClusterLabels, exposition, global};

pub(super) fn router(shared: &Arc<Shared>) -> Router {
    Router::new().route(
        "/metrics",
        get(scrape)
            .fallback(super::method_not_allowed)
            .with_state(Arc::clone(shared)),
    )
}

async fn scrape(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    refresh(&shared).await;
    let accept = headers.get(ACCEPT).and_then(|v| v.to_str().ok());
    match exposition::render(accept) {
        Ok((content_type, body)) => ([(CONTENT_TYPE, content_type)], body).into_response(),
        Err(e) => ApiError::Internal(format!("encoding the metrics: {e}")).into_response(),
    }
}

/// Sets the gauges read at scrape time: the objects of each resource (from the watch
/// caches, which hold them all) and the size of the database (-1 when it cannot be read,
/// as kube reports a failed count).
async fn refresh(shared: &Shared) {
    let metrics = global();
    for (resource, count) in shared.registry.object_counts() {
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        (metrics.storage_objects).with_or_new(&ResourceLabels { resource }, |g| g.set(count));
    }
    let size = match shared.storage.size().await {
        Ok(size) => i64::try_from(size).unwrap_or(i64::MAX),
        Err(_) => -1,
    };
    let cluster = StorageClusterLabels {
        storage_cluster_id: "etcd-0",
    };
    metrics.storage_size.with_or_new(&cluster, |g| g.set(size));
}
