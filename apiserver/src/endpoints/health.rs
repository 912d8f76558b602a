//! `/version` (also `/version/`) and the health endpoints `/healthz`, `/livez`, `/readyz`,
//! in kube-apiserver's text format: `ok`, or with `?verbose` one `[+]<check> ok` line per
//! check and `<endpoint> check passed`. A failing check fails the endpoint as kube's
//! does: 500, every check's line (`[-]<check> failed: reason withheld`, the reason goes to
//! the log) and `<endpoint> check failed`. Each check also has its own path
//! (`/readyz/etcd`, `/livez/poststarthook/bootstrap-controller`), whose failure says why;
//! `?exclude=<check>` skips one (`[+]<check> excluded: ok`), and names no check matched
//! are warned about on a last line. The checks are the server's [`Health`]: this module
//! adds the ones the endpoints own (`etcd`, `informer-sync`, `shutdown`).

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
use crate::health::{Health, Scope};
use crate::http::ErrorResponse as _;
use kapi_core::error::ApiError;
use kapi_registry::Registry;
use kapi_storage::Storage;

/// How long the storage check may take before it counts as failed.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// The groups of the kinds the server's own machinery reads (authorization, admission,
/// definitions, aggregation), besides core namespaces: kube-apiserver's shared informers
/// watch these, and its `informer-sync` waits for them, not for its watch caches.
const MACHINERY_GROUPS: &[&str] = &[
    "rbac.authorization.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
];

/// Whether `resource` (`roles.rbac.authorization.k8s.io`) is one the machinery reads.
fn read_by_machinery(resource: &str) -> bool {
    resource == "namespaces"
        || (resource.split_once('.')).is_some_and(|(_, group)| MACHINERY_GROUPS.contains(&group))
}

/// Registers the checks of what the endpoints hold: `etcd` (kube's name for its store,
/// which kapi keeps for either backend: the store answers), `informer-sync` (`/readyz`:
/// the watch caches of what the server's own machinery reads have their first list, as
/// kube's shared informers have synced; the other kinds' caches load after) and
/// `shutdown` (`/readyz`: failing from the moment the server is told to stop, so that load
/// balancers stop sending it requests while it drains).
pub(super) fn register(
    health: &Health,
    storage: &Arc<dyn Storage>,
    registry: &Arc<Registry>,
    lifecycle: &Arc<Lifecycle>,
) {
    let storage = Arc::clone(storage);
    health.live("etcd", Scope::All, move || {
        let storage = Arc::clone(&storage);
        Box::pin(async move {
            match tokio::time::timeout(CHECK_TIMEOUT, storage.health()).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("no answer within {CHECK_TIMEOUT:?}")),
            }
        })
    });
    // Weak: the checks outlive no registry.
    let registry = Arc::downgrade(registry);
    health.live("informer-sync", Scope::Ready, move || {
        let unsynced = registry
            .upgrade()
            .map(|registry| registry.unsynced_caches(read_by_machinery));
        Box::pin(async move {
            match unsynced {
                Some(unsynced) if unsynced.is_empty() => Ok(()),
                Some(unsynced) => Err(format!("{} not synced", unsynced.join(", "))),
                None => Err("the registry is gone".into()),
            }
        })
    });
    let lifecycle = Arc::clone(lifecycle);
    health.live("shutdown", Scope::Ready, move || {
        let shutting_down = lifecycle.is_shutting_down();
        Box::pin(async move {
            match shutting_down {
                true => Err("process is shutting down".into()),
                false => Ok(()),
            }
        })
    });
}

/// Whether the server is shutting down, which `/readyz` reports.
#[derive(Debug, Default)]
pub struct Lifecycle {
    shutting_down: std::sync::atomic::AtomicBool,
}

impl Lifecycle {
    /// From now on `/readyz` fails (500, `[-]shutdown`).
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
                &format!("/{endpoint}/{{*check}}"),
                get(one).fallback(super::method_not_allowed),
            );
    }
    router
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
    let mut excluded: Vec<&str> = query.all("exclude");
    let mut lines = String::new();
    let mut failed = false;
    for check in shared.health.checks(endpoint) {
        let name = check.name();
        if excluded.contains(&name) {
            excluded.retain(|e| *e != name);
            lines.push_str(&format!("[+]{name} excluded: ok\n"));
            continue;
        }
        match check.run().await {
            Ok(()) => lines.push_str(&format!("[+]{name} ok\n")),
            Err(reason) => {
                tracing::warn!(%endpoint, check = %name, %reason, "health check failed");
                lines.push_str(&format!("[-]{name} failed: reason withheld\n"));
                failed = true;
            }
        }
    }
    // kube warns, after the checks, of the names it could not exclude.
    excluded.retain(|e| !e.is_empty());
    if !excluded.is_empty() {
        excluded.sort_unstable();
        excluded.dedup();
        let names: Vec<String> = excluded.iter().map(|e| format!("{e:?}")).collect();
        lines.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            names.join(",")
        ));
    }
    if failed {
        lines.push_str(&format!("{endpoint} check failed\n"));
        return text(StatusCode::INTERNAL_SERVER_ERROR, lines);
    }
    if query.has("verbose") {
        lines.push_str(&format!("{endpoint} check passed\n"));
        return text(StatusCode::OK, lines);
    }
    text(StatusCode::OK, "ok".into())
}

async fn report_one(shared: &Shared, endpoint: &str, name: &str) -> Response {
    let Some(check) = shared.health.check(endpoint, name) else {
        return ApiError::NoRoute.into_response();
    };
    match check.run().await {
        Ok(()) => text(StatusCode::OK, "ok".into()),
        Err(reason) => {
            tracing::warn!(%endpoint, check = %name, %reason, "health check failed");
            text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal server error: {reason}\n"),
            )
        }
    }
}
