//! The first filter: reads what a request asks for ([`RequestInfo`]) once, for the
//! filters and handlers after it.

use axum::extract::Request;
use axum::response::Response;

use crate::http::RequestInfo;

/// Attaches the [`RequestInfo`] of `request` to it.
pub(super) async fn attach(mut request: Request, next: impl super::Next) -> Response {
    let info = RequestInfo::new(
        request.method(),
        request.uri().path(),
        request.uri().query(),
    );
    request.extensions_mut().insert(info);
    next.run(request).await
}
