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
//! both as `Status`es. Each request is logged on one line (method, path, status, duration),
//! and a panicking handler answers 500 instead of dropping the connection.

mod discovery;
mod health;
mod json;
mod media;
mod openapi;
mod params;
mod resources;
mod status;
mod watch;

pub use crate::api::{Documents, OpenApiV3Document};
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::api::RouteBinding;
use crate::error::ApiError;
use crate::registry::Registry;
use crate::storage::Storage;

/// The largest request body accepted: 3 MiB, kube-apiserver's limit.
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Everything the HTTP layer serves.
pub struct Config {
    /// Every route of every served version, bound to its handler (the generated `ROUTES`).
    pub routes: &'static [RouteBinding],
    /// The objects.
    pub registry: Arc<Registry>,
    /// The registry's storage, for the `storage` health check.
    pub storage: Arc<dyn Storage>,
    /// OpenAPI and discovery documents.
    pub documents: Documents,
    /// What `/version` reports.
    pub version: ServerVersion,
}

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
    storage: Arc<dyn Storage>,
    version: ServerVersion,
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
        documents,
        version,
    } = config;
    let shared = Arc::new(Shared {
        registry,
        storage,
        version,
    });
    let index = root_paths(routes, &documents);
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
        .merge(discovery::router(routes, &documents))
        .merge(openapi::router(&documents))
        .merge(health::router(&shared));
    layered(routes)
}

/// `GET /`: kube-apiserver's index of the paths it serves besides the resources
/// (`{"paths": ["/api", "/api/v1", ...]}`).
fn root_paths(routes: &[RouteBinding], documents: &Documents) -> axum::body::Bytes {
    let mut paths = discovery::paths(routes, documents);
    paths.extend(["/openapi/v2", "/openapi/v3", "/version"].map(String::from));
    for endpoint in health::ENDPOINTS {
        paths.push(format!("/{endpoint}"));
        paths.extend(
            health::CHECKS
                .iter()
                .map(|check| format!("/{endpoint}/{check}")),
        );
    }
    paths.sort();
    let mut body =
        serde_json::to_vec_pretty(&serde_json::json!({ "paths": paths })).unwrap_or_default();
    body.push(b'\n');
    body.into()
}

/// What every route shares: 404 `Status` for unknown paths, a 500 `Status` for a panic,
/// one log line per request.
fn layered(routes: Router) -> Router {
    routes
        .fallback(not_found)
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(panicked))
        .layer(axum::middleware::from_fn(log_request))
}

async fn not_found() -> Response {
    ApiError::NoRoute.into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::MethodNotAllowed.into_response()
}

/// A handler panicked: a bug. The client gets a 500 `Status`, the log the message.
fn panicked(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let message = if let Some(message) = panic.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = panic.downcast_ref::<String>() {
        message.clone()
    } else {
        "unknown panic".to_owned()
    };
    tracing::error!(%message, "handler panicked");
    ApiError::Internal(format!("the request handler panicked: {message}")).into_response()
}

/// One line per request: method, path, status, duration.
async fn log_request(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let uri = request.uri().clone();
    let path = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
    let start = Instant::now();
    let response = next.run(request).await;
    let micros = start.elapsed().as_micros();
    tracing::info!(
        target: "kapi::http",
        %method,
        %path,
        status = response.status().as_u16(),
        duration = %format_args!("{}.{:03}ms", micros / 1000, micros % 1000),
        "request",
    );
    response
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    #[tokio::test]
    async fn a_panicking_handler_answers_500_and_unknown_paths_404() {
        #[allow(clippy::unused_async)]
        async fn boom() -> &'static str {
            panic!("boom")
        }
        let router = layered(Router::new().route("/boom", get(boom)));
        let send = |uri: &'static str| {
            let request = Request::get(uri).body(Body::empty()).unwrap();
            router.clone().oneshot(request)
        };

        let response = send("/boom").await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(status["reason"], "InternalError");
        assert_eq!(
            status["message"],
            "Internal error occurred: the request handler panicked: boom"
        );

        let response = send("/nowhere").await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
    }
}
