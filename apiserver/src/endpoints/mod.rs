//! The HTTP layer: kube-apiserver's wire protocol on top of the [`Registry`].
//!
//! [`router`] builds one `axum` [`Router`] from a route table (`&'static [RouteBinding]`,
//! generated), a [`Registry`] and the static [`Documents`] (OpenAPI and discovery,
//! generated), so this crate names no concrete API. It serves:
//!
//! - the resource routes of the table, each bound to a generic handler (`resources`):
//!   query options, body decoding (JSON, YAML, Kubernetes protobuf for kinds that declare
//!   their protobuf shape, the four patch formats), content negotiation
//!   of responses (JSON, YAML, `meta.k8s.io` Table), `Warning` headers;
//! - discovery, legacy and aggregated (`discovery`), and OpenAPI v2 and v3 (`openapi`);
//! - `/version`, `/healthz`, `/livez` and `/readyz` (`health`).
//!
//! This layer speaks HTTP only: every rule about objects lives in the registry. Every
//! failure is an [`ApiError`], turned into a `Status` response in
//! one place (`status`); unknown paths answer 404 and known paths with another method 405,
//! both as `Status`es. The router sits behind the handler chain (`crate::filters`:
//! request log, panic recovery, authentication, authorization).

mod connect;
mod discovery;
mod dynamic;
mod health;
mod json;
mod list;
mod media;
mod metrics;
mod openapi;
mod params;
#[cfg(feature = "profiling")]
mod profiling;
mod resources;
mod watch;

pub use kapi_core::api::{Documents, OpenApiV3Document};
use std::sync::Arc;

use axum::Router;
use axum::response::Response;
use serde::Serialize;

pub use crate::filters::Filters;
use crate::http::ErrorResponse as _;
use kapi_core::api::RouteBinding;
use kapi_core::error::ApiError;
use kapi_registry::Registry;
use kapi_storage::Storage;

pub use crate::http::MAX_REQUEST_BODY_BYTES;

/// Everything the HTTP layer serves.
pub struct Config {
    /// Every route of every served version, bound to its handler (the generated `ROUTES`).
    pub routes: &'static [RouteBinding],
    /// The objects.
    pub registry: Arc<Registry>,
    /// The registry's storage, for the `etcd` health check.
    pub storage: Arc<dyn Storage>,
    /// The server's health checks: the endpoints add their own (`etcd`, `informer-sync`,
    /// `shutdown`) to those of the parts of the server that registered theirs.
    pub health: Arc<crate::health::Health>,
    /// OpenAPI and discovery documents.
    pub documents: Documents,
    /// Renders the discovery documents again once kinds are installed while the server
    /// runs (the generated documents describe the compiled kinds only); `None`: they are
    /// not in discovery.
    pub renderer: Option<kapi_core::api::Renderer>,
    /// The generated documents describe more than the scheme serves (`--runtime-config`
    /// switched group-versions off): the documents are rendered from the scheme from the
    /// start (needs `renderer`).
    pub render_documents: bool,
    /// What `/version` reports.
    pub version: ServerVersion,
    /// Authentication and authorization of every request ([`Filters::default`]: everyone
    /// anonymous, everything allowed).
    pub filters: Filters,
    /// `--min-request-timeout`: a watch without `timeoutSeconds` ends at a random point
    /// between this and twice this, as kube spreads them (0: it never ends on its own).
    pub min_request_timeout: std::time::Duration,
    /// Told when the server is shutting down (`/readyz` fails).
    pub lifecycle: Arc<Lifecycle>,
    /// Serve CPU profiles at `/debug/pprof/profile` (`--profiling`; needs the
    /// `profiling` feature).
    pub profiling: bool,
    /// The aggregator, when the API has APIServices: proxies their group-versions to
    /// other servers and merges their documents (`crate::aggregator`, feature
    /// `aggregation`).
    pub aggregator: crate::filters::Aggregation,
    /// Paths the server serves besides the API's (the service-account issuer's discovery
    /// documents).
    pub extra: Extra,
}

/// Routes of parts of the server outside the API, and their paths for the index (`/`).
#[derive(Default)]
pub struct Extra {
    /// The routes.
    pub routes: Router,
    /// Their paths.
    pub paths: Vec<String>,
}

pub use health::Lifecycle;

/// kube's default `--min-request-timeout`.
pub const DEFAULT_MIN_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1800);

/// `/version`: the nine fields of kube's `version.Info`.
///
/// `gitVersion` must be semver (kubectl 1.32 parses it) and `major`/`minor` the Kubernetes
/// version whose API the server speaks, or kubectl warns about version skew.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ServerVersion {
    /// `1`.
    pub major: String,
    /// `32`.
    pub minor: String,
    /// `v1.32.0-kapi`.
    pub git_version: String,
    /// The commit built, when known.
    pub git_commit: String,
    /// `clean` or `dirty`, when known.
    pub git_tree_state: String,
    /// RFC 3339.
    pub build_date: String,
    /// The compiler's version (kube reports Go's).
    pub go_version: String,
    /// `rustc`.
    pub compiler: String,
    /// `linux/amd64`.
    pub platform: String,
}

impl Default for ServerVersion {
    /// The Kubernetes version kapi speaks, built for this target; nothing about the build.
    fn default() -> ServerVersion {
        ServerVersion {
            major: "1".into(),
            minor: "32".into(),
            git_version: "v1.32.0-kapi".into(),
            git_commit: String::new(),
            git_tree_state: String::new(),
            build_date: "1970-01-01T00:00:00Z".into(),
            go_version: String::new(),
            compiler: "rustc".into(),
            platform: platform(),
        }
    }
}

/// `linux/amd64`: the build target, named as Go names it.
pub fn platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64",
        "loongarch64" => "loong64",
        other => other,
    };
    format!("{}/{arch}", std::env::consts::OS)
}

/// What every handler shares.
struct Shared {
    registry: Arc<Registry>,
    /// Discovery of the kinds installed while the server runs.
    discovery: Arc<discovery::Live>,
    storage: Arc<dyn Storage>,
    health: Arc<crate::health::Health>,
    version: ServerVersion,
    min_request_timeout: std::time::Duration,
}

impl Shared {
    /// A watch's end: its `timeoutSeconds`, else a random point in
    /// [`--min-request-timeout`, twice that), so that watches opened together (a restart)
    /// do not all end together.
    fn watch_timeout(&self, asked: Option<std::time::Duration>) -> Option<std::time::Duration> {
        use std::hash::{BuildHasher, Hasher};
        if asked.is_some() || self.min_request_timeout.is_zero() {
            return asked;
        }
        // A random fraction: each `RandomState` is seeded anew.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let fraction = (random >> 11) as f64 / (1u64 << 53) as f64;
        Some(self.min_request_timeout.mul_f64(1.0 + fraction))
    }
}

/// The whole API server as one router.
///
/// # Panics
///
/// On a route table that cannot be served: two bindings of one method on one path, or a
/// binding whose kind the registry's scheme lacks. These are programmer errors of the
/// generated code, caught at start-up rather than on a request.
pub fn router(config: Config) -> Router {
    let Config {
        routes,
        registry,
        storage,
        health,
        documents,
        renderer,
        render_documents,
        version,
        filters,
        min_request_timeout,
        lifecycle,
        profiling,
        aggregator,
        extra,
    } = config;
    let served = Arc::new(
        crate::filters::Served::new(routes).with_installed_kinds(registry.shared_scheme()),
    );
    let live = Arc::new(discovery::Live::new(
        Arc::clone(&registry),
        renderer,
        render_documents,
    ));
    live.prime();
    health::register(&health, &storage, &registry, &lifecycle);
    let shared = Arc::new(Shared {
        registry,
        storage,
        health,
        version,
        min_request_timeout,
        discovery: Arc::clone(&live),
    });
    let index = root_paths(routes, &documents, &shared.health, extra.paths);
    let dynamic = {
        let shared = Arc::clone(&shared);
        move |request| dynamic::serve(Arc::clone(&shared), request)
    };
    let routes = Router::new()
        .route(
            "/",
            axum::routing::get(move || {
                let index = index.clone();
                async move {
                    (
                        [(axum::http::header::CONTENT_TYPE, "application/json")],
                        index,
                    )
                }
            })
            .fallback(method_not_allowed),
        )
        .merge(resources::router(routes, &shared))
        .merge(discovery::router(routes, &documents, &live))
        .merge(openapi::router(&documents, &live))
        .merge(health::router(&shared))
        .merge(metrics::router(&shared))
        .merge(profiling_router(profiling))
        .merge(extra.routes)
        .fallback(dynamic);
    // The aggregator sits after authorization, in front of the local router.
    crate::filters::chain(routes, &filters, served, aggregator)
}

/// `GET /`: kube-apiserver's index of the paths it serves besides the resources
/// (`{"paths": ["/api", "/api/v1", ...]}`).
fn root_paths(
    routes: &[RouteBinding],
    documents: &Documents,
    health: &crate::health::Health,
    extra: Vec<String>,
) -> axum::body::Bytes {
    let mut paths = discovery::paths(routes, documents);
    paths.extend(extra);
    paths.extend(["/metrics", "/openapi/v2", "/openapi/v3", "/version"].map(String::from));
    for endpoint in health::ENDPOINTS {
        paths.push(format!("/{endpoint}"));
        paths.extend(
            (health.checks(endpoint).iter()).map(|check| format!("/{endpoint}/{}", check.name())),
        );
    }
    paths.sort();
    let mut body =
        serde_json::to_vec_pretty(&serde_json::json!({ "paths": paths })).unwrap_or_default();
    body.push(b'\n');
    body.into()
}

/// `/debug/pprof/profile`, when profiling is on and built.
fn profiling_router(on: bool) -> Router {
    #[cfg(feature = "profiling")]
    if on {
        return profiling::router();
    }
    if on {
        tracing::warn!("--profiling: this build has no profiler (the `profiling` feature)");
    }
    Router::new()
}

async fn method_not_allowed() -> Response {
    ApiError::MethodNotAllowed.into_response()
}
