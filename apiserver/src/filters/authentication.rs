//! The authentication filter (kube's `WithAuthentication`): the request's user, from the
//! [`Authenticator`], as a request extension; 401 `Unauthorized` when a credential is
//! invalid or none is presented and anonymous requests are refused. A token that
//! authenticated is removed from the request, so nothing after this filter can leak it.

use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;

use super::log::ServedTo;
use crate::audit::Auditor;
use crate::authn::{self, Authenticator, PeerCertificates};
use crate::http::ErrorResponse as _;
use kapi_core::error::ApiError;

/// The filter's state.
#[derive(Clone)]
pub struct Authentication {
    /// Who sent a request.
    pub authenticator: Arc<Authenticator>,
    /// Where failures are audited.
    pub auditor: Option<Arc<Auditor>>,
}

/// Authenticates `request`.
pub async fn authenticate(
    Authentication {
        authenticator,
        auditor,
    }: &Authentication,
    mut request: Request,
    next: impl super::Next,
) -> Response {
    let outcome = authenticator.authenticate(&authn::Request {
        headers: request.headers(),
        certificates: request.extensions().get::<PeerCertificates>(),
        audiences: None,
    });
    match outcome {
        Ok(user) => {
            request
                .headers_mut()
                .remove(axum::http::header::AUTHORIZATION);
            let served_to = ServedTo::from(&user);
            request.extensions_mut().insert(user);
            let mut response = next.run(request).await;
            response.extensions_mut().insert(served_to);
            response
        }
        Err(error) => {
            // Not under the request log's target: kube logs these at every verbosity.
            tracing::info!(
                path = %request.uri().path(),
                reason = %error,
                "unable to authenticate the request"
            );
            let response = ApiError::Unauthorized("Unauthorized".to_owned()).into_response();
            if let Some(auditor) = &auditor {
                super::audit::unauthenticated(auditor, &request, &response);
            }
            response
        }
    }
}
