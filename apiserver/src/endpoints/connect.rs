//! The `Read` and `Connect` subresources (kube's `log`, `exec`, `attach`, `portforward`,
//! `proxy`): the request handed to the registry's connector, its [`Connection`] answered.
//! kapi runs no kubelets and proxies to no endpoints, so every connection the connectors
//! make ends here: nothing (`204`), or the same path with a trailing slash (`301`).

use axum::body::Body;
use axum::http::StatusCode;
use axum::http::header::{CONNECTION, LOCATION, UPGRADE};
use axum::http::request::Parts;
use axum::response::Response;

use super::params::Query;
use super::resources::Call;
use kapi_core::error::ApiError;
use kapi_core::user::UserInfo;
use kapi_registry::{ConnectRequest, Connection, Registry, Target};

/// Answers a connect to (or read of) `call`'s subresource; its admission's warnings go to
/// `warnings`.
pub(super) async fn serve(
    registry: &Registry,
    call: &Call<'_>,
    target: Target<'_>,
    parts: &Parts,
    warnings: &mut Vec<String>,
) -> Result<Response, ApiError> {
    let query = Query::parse(parts.uri.query());
    let subresource = call.subresource.unwrap_or_default();
    let method = kapi_core::api::Method::from_http(parts.method.as_str())
        .ok_or(ApiError::MethodNotAllowed)?;
    // kube's connect handler refuses dry runs before anything else.
    if query.has("dryRun") && call.handler == kapi_core::api::Handler::Connect {
        return Err(ApiError::BadRequest("dryRun is not supported".into()));
    }
    let upgrade = (parts.headers.get_all(CONNECTION).iter())
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .any(|token| token.trim().eq_ignore_ascii_case("upgrade"))
        })
        && parts.headers.contains_key(UPGRADE);
    let request = ConnectRequest {
        target,
        name: call.names.name.as_deref().unwrap_or_default(),
        subresource,
        method,
        query: query.pairs(),
        path: call.names.path.as_deref(),
        upgrade,
        user: parts.extensions.get::<UserInfo>(),
        options: None,
    };
    let connection = registry.connect(request, warnings).await?;
    let response = match connection {
        Connection::NoContent => Response::builder()
            .status(StatusCode::NO_CONTENT)
            .body(Body::empty()),
        Connection::AddTrailingSlash => {
            let mut location = format!("{}/", parts.uri.path());
            if let Some(query) = parts.uri.query() {
                location = format!("{location}?{query}");
            }
            Response::builder()
                .status(StatusCode::MOVED_PERMANENTLY)
                .header(LOCATION, location)
                .body(Body::empty())
        }
    };
    response.map_err(|e| ApiError::Internal(format!("building a response: {e}")))
}
