//! The request log: one line per request (method, path, status, duration, user), under the
//! `kapi::http` target.

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

use crate::authn::UserInfo;

/// The user a response was served to, copied onto the response by the authentication
/// filter so that this outer filter can log it.
#[derive(Clone, Debug)]
pub(crate) struct ServedTo(pub String);

/// Logs `request` once it is answered.
pub async fn log_request(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let uri = request.uri().clone();
    let path = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
    let start = Instant::now();
    let response = next.run(request).await;
    let micros = start.elapsed().as_micros();
    let user = (response.extensions().get::<ServedTo>()).map_or("", |u| u.0.as_str());
    tracing::info!(
        target: "kapi::http",
        %method,
        %path,
        status = response.status().as_u16(),
        duration = %format_args!("{}.{:03}ms", micros / 1000, micros % 1000),
        user,
        "request",
    );
    response
}

impl From<&UserInfo> for ServedTo {
    fn from(user: &UserInfo) -> ServedTo {
        ServedTo(user.name.clone())
    }
}
