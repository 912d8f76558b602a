//! The request log and the request's audit id (kube's `WithAuditInit` and `httplog`):
//! every request gets an audit id (the client's `Audit-ID` header, else a new UUID), sent
//! back as `Audit-Id` and shared with the audit events; once answered, one line under the
//! `kapi::http` target ([`REQUEST_LOG_TARGET`]): method, path, verb, status, duration,
//! user, audit id. The server enables that target from `-v=3`, as kube's httplog logs
//! requests; when it is off, nothing of the line is gathered.

use std::time::Instant;

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::response::Response;

use super::RequestInfo;
use crate::authn::UserInfo;

/// The request's audit id.
#[derive(Clone, Debug)]
pub struct AuditId(pub String);

/// The header of the audit id, on requests and responses.
pub const AUDIT_ID_HEADER: &str = "audit-id";

/// The user a response was served to, copied onto the response by the authentication
/// filter so that this outer filter can log it.
#[derive(Clone, Debug)]
pub(crate) struct ServedTo(pub String);

/// The target of the request log's lines.
pub const REQUEST_LOG_TARGET: &str = "kapi::http";

/// Logs `request` once it is answered.
pub async fn log_request(mut request: Request, next: impl super::Next) -> Response {
    let audit_id = (request
        .headers()
        .get(AUDIT_ID_HEADER)
        .and_then(|v| v.to_str().ok()))
    .filter(|id| !id.is_empty() && id.len() <= 128)
    .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    request.extensions_mut().insert(AuditId(audit_id.clone()));
    // What the line needs, gathered only when it will be written.
    let logged = tracing::enabled!(target: REQUEST_LOG_TARGET, tracing::Level::INFO).then(|| {
        let verb = (request.extensions().get::<RequestInfo>())
            .map_or_else(String::new, |i| i.verb.clone());
        (
            request.method().clone(),
            request.uri().clone(),
            verb,
            Instant::now(),
        )
    });
    let mut response = next.run(request).await;
    if let Ok(value) = HeaderValue::from_str(&audit_id) {
        response.headers_mut().insert(AUDIT_ID_HEADER, value);
    }
    if let Some((method, uri, verb, start)) = logged {
        let micros = start.elapsed().as_micros();
        let path = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
        let user = (response.extensions().get::<ServedTo>()).map_or("", |u| u.0.as_str());
        tracing::info!(
            target: REQUEST_LOG_TARGET,
            %method,
            %path,
            verb,
            status = response.status().as_u16(),
            duration = %format_args!("{}.{:03}ms", micros / 1000, micros % 1000),
            user,
            audit_id,
            "request",
        );
    }
    response
}

impl From<&UserInfo> for ServedTo {
    fn from(user: &UserInfo) -> ServedTo {
        ServedTo(user.name.clone())
    }
}
