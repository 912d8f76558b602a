//! The answers of `authentication.k8s.io/v1`'s reviews (`kapi_kinds::authentication`):
//! `SelfSubjectReview` reports the requesting user (kube's `selfsubjectreview` REST
//! storage); `TokenReview` runs a token through the token methods (kube's `tokenreview`).

use std::sync::Arc;

use serde_json::Value;

use super::{Authenticator, UserInfo};
use kapi_core::error::ApiError;
use kapi_kinds::authentication::{SelfSubjectReview, TokenReview, UserInfo as ReviewedUser};
use kapi_registry::Registry;
use kapi_registry::review::Review;

/// Registers the answers of both reviews with `registry`.
pub fn register(registry: &Registry, authenticator: &Arc<Authenticator>) {
    let group = "authentication.k8s.io";
    registry.set_review(group, "SelfSubjectReview", Arc::new(SelfSubject));
    registry.set_review(
        group,
        "TokenReview",
        Arc::new(Tokens(Arc::clone(authenticator))),
    );
}

fn reviewed(user: &UserInfo) -> ReviewedUser {
    ReviewedUser {
        username: Some(user.name.clone()),
        uid: (!user.uid.is_empty()).then(|| user.uid.clone()),
        groups: user.groups.clone(),
        extra: user.extra.clone(),
    }
}

fn internal(e: serde_json::Error) -> ApiError {
    ApiError::Internal(e.to_string())
}

/// `SelfSubjectReview`: who is asking.
struct SelfSubject;

impl Review for SelfSubject {
    fn review(&self, user: Option<&UserInfo>, object: Value) -> Result<Value, ApiError> {
        let mut review: SelfSubjectReview = serde_json::from_value(object).map_err(internal)?;
        review.status.user_info = user.map(reviewed);
        serde_json::to_value(&review).map_err(internal)
    }
}

/// `TokenReview`: whose token this is, by the token methods.
struct Tokens(Arc<Authenticator>);

impl Review for Tokens {
    fn review(&self, _: Option<&UserInfo>, object: Value) -> Result<Value, ApiError> {
        let mut review: TokenReview = serde_json::from_value(object).map_err(internal)?;
        let token = review.spec.token.clone().unwrap_or_default();
        match self.0.authenticate_token(&token) {
            Ok(Some(user)) => {
                review.status.authenticated = Some(true);
                review.status.user = Some(reviewed(&user));
            }
            Ok(None) => review.status.user = Some(ReviewedUser::default()),
            Err(error) => {
                review.status.user = Some(ReviewedUser::default());
                review.status.error = Some(error);
            }
        }
        serde_json::to_value(&review).map_err(internal)
    }
}
