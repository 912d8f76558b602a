//! The authorization filter (kube's `WithAuthorization`): asks the modes of
//! `--authorization-mode` whether the request's user may do what its [`RequestInfo`] says;
//! 403 `Forbidden` with kube's message when none allows it.

use axum::extract::Request;
use axum::response::Response;

use super::RequestInfo;
use super::audit::AuditNotes;
use crate::authn::UserInfo;
use crate::authz::{self, Attributes, Decision, Mode};
use crate::http::ErrorResponse as _;
use kapi_core::error::ApiError;

/// Authorizes `request`.
pub async fn authorize(modes: &Mode, request: Request, next: impl super::Next) -> Response {
    let (Some(user), Some(info)) = (
        request.extensions().get::<UserInfo>(),
        request.extensions().get::<RequestInfo>(),
    ) else {
        // The chain puts both before this filter; without them nothing can be judged.
        return ApiError::Internal("the request reached authorization unidentified".into())
            .into_response();
    };
    let attributes = Attributes {
        user,
        request: info,
    };
    let decision = modes.authorize(&attributes);
    if let Some(notes) = request.extensions().get::<AuditNotes>() {
        match &decision {
            Decision::Allow(reason) => notes.authorized("allow", reason),
            Decision::Deny(reason) | Decision::NoOpinion(reason) => {
                notes.authorized("forbid", reason)
            }
        }
    }
    match decision {
        Decision::Allow(_) => next.run(request).await,
        Decision::Deny(reason) | Decision::NoOpinion(reason) => {
            tracing::debug!(user = %user.name, verb = %info.verb, path = %info.path, %reason, "forbidden");
            authz::forbidden(&attributes, &reason).into_response()
        }
    }
}
