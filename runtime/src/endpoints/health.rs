//! `/version` (also `/version/`) and the health endpoints `/healthz`, `/livez`, `/readyz`, in kube-apiserver's
//! text format: `ok`, or with `?verbose` one `[+]<check> ok` line per check and
//! `<endpoint> check passed`; a failing check answers 503 (`[-]<check> failed: reason
//! withheld`, the reason goes to the log). Each check also has its own path
//! (`/readyz/storage`), and `?exclude=<check>` skips one.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, RawQuery};
use axum::http::StatusCode;
use axum::http::header::{CONTENT_TYPE, HeaderValue, X_CONTENT_TYPE_OPTIONS};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::Shared;
use super::params::Query;
use crate::error::ApiError;

/// How long the storage check may take before it counts as failed.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// The checks, in the order they are reported.
pub(super) const CHECKS: &[&str] = &["ping", "storage"];

/// `/readyz`'s checks: also `shutdown`, failing from the moment the server is told to
/// stop, so that load balancers stop sending it requests while it drains.
const READY_CHECKS: &[&str] = &["ping", "storage", "shutdown"];

/// The checks of `endpoint`.
pub(super) fn checks(endpoint: &str) -> &'static [&'static str] {
    if endpoint == "readyz" {
        READY_CHECKS
    } else {
        CHECKS
    }
}

/// Whether the server is shutting down, which `/readyz` reports.
#[derive(Debug, Default)]
pub struct Lifecycle {
    shutting_down: std::sync::atomic::AtomicBool,
}

impl Lifecycle {
    /// From now on `/readyz` answers 503.
    pub fn shut_down(&self) {
        (self.shutting_down).store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The health endpoints.
pub(super) const ENDPOINTS: [&str; 3] = ["healthz", "livez", "readyz"];

pub(super) fn router(shared: &Arc<Shared>) -> Router {
    let version = {
        let mut body = serde_json::to_vec_pretty(&shared.version).unwrap_or_default();
        body.push(b'\n');
        axum::body::Bytes::from(body)
    };
    let version = get(move || {
        let body = version.clone();
        async move { ([(CONTENT_TYPE, "application/json")], body) }
    })
    .fallback(super::method_not_allowed);
    // kube-apiserver's route is `/version/` (go-restful), which also answers without the
    // slash; the Python client's `VersionApi.get_code` calls `/version/`.
    let mut router = Router::new()
        .route("/version", version.clone())
        .route("/version/", version);
    for endpoint in ENDPOINTS {
        let all = {
            let shared = Arc::clone(shared);
            move |RawQuery(query): RawQuery| {
                let shared = Arc::clone(&shared);
                async move { report(&shared, endpoint, &Query::parse(query.as_deref())).await }
            }
        };
        let one = {
            let shared = Arc::clone(shared);
            move |Path(check): Path<String>| {
                let shared = Arc::clone(&shared);
                async move { report_one(&shared, endpoint, &check).await }
            }
        };
        router = router
            .route(
                &format!("/{endpoint}"),
                get(all).fallback(super::method_not_allowed),
            )
            .route(
                &format!("/{endpoint}/{{check}}"),
                get(one).fallback(super::method_not_allowed),
            );
    }
    router
}

/// Runs one check: `Err` carries the reason.
async fn run(shared: &Shared, check: &str) -> Result<(), String> {
    match check {
        "ping" => Ok(()),
        "shutdown" if shared.lifecycle.is_shutting_down() => {
            Err("the server is shutting down".into())
        }
        "shutdown" => Ok(()),
        "storage" => match tokio::time::timeout(CHECK_TIMEOUT, shared.storage.health()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {CHECK_TIMEOUT:?}")),
        },
        other => Err(format!("no check {other:?}")),
    }
}

fn text(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

async fn report(shared: &Shared, endpoint: &str, query: &Query) -> Response {
    let excluded = query.all("exclude");
    let mut lines = String::new();
    let mut failed = false;
    for check in checks(endpoint) {
        if excluded.contains(check) {
            lines.push_str(&format!("[+]{check} excluded: ok\n"));
            continue;
        }
        match run(shared, check).await {
            Ok(()) => lines.push_str(&format!("[+]{check} ok\n")),
            Err(reason) => {
                tracing::warn!(%endpoint, %check, %reason, "health check failed");
                lines.push_str(&format!("[-]{check} failed: reason withheld\n"));
                failed = true;
            }
        }
    }
    if failed {
        lines.push_str(&format!("{endpoint} check failed\n"));
        return text(StatusCode::SERVICE_UNAVAILABLE, lines);
    }
    if query.has("verbose") {
        lines.push_str(&format!("{endpoint} check passed\n"));
        return text(StatusCode::OK, lines);
    }
    text(StatusCode::OK, "ok".into())
}

async fn report_one(shared: &Shared, endpoint: &str, check: &str) -> Response {
    if !checks(endpoint).contains(&check) {
        return ApiError::NoRoute.into_response();
    }
    match run(shared, check).await {
        Ok(()) => text(StatusCode::OK, "ok".into()),
        Err(reason) => {
            tracing::warn!(%check, %reason, "health check failed");
            text(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("internal server error: {reason}\n"),
            )
        }
    }
}
