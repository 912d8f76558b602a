//! The answers of `authentication.k8s.io/v1`'s reviews (`kapi_kinds::authentication`):
//! `SelfSubjectReview` reports the requesting user (kube's `selfsubjectreview` REST
//! storage); `TokenReview` runs a token through the token methods for the audiences it
//! asks for (none: the API audiences), and reports those the token is good for (kube's
//! `tokenreview`).

use std::sync::Arc;

use serde_json::Value;

use super::{Authenticator, UserInfo};
use kapi_core::error::ApiError;
use kapi_kinds::api::authentication::v1::ExtraValue;
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
        username: user.name.clone(),
        uid: user.uid.clone(),
        groups: user.groups.clone(),
        extra: (user.extra.iter())
            .map(|(key, values)| (key.clone(), ExtraValue(values.clone())))
            .collect(),
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
        review.status.user_info = user.map(reviewed).unwrap_or_default();
        serde_json::to_value(&review).map_err(internal)
    }
}

/// `TokenReview`: whose token this is, by the token methods.
struct Tokens(Arc<Authenticator>);

impl Review for Tokens {
    fn review(&self, _: Option<&UserInfo>, object: Value) -> Result<Value, ApiError> {
        let mut review: TokenReview = serde_json::from_value(object).map_err(internal)?;
        match self
            .0
            .authenticate_token(&review.spec.token, &review.spec.audiences)
        {
            // kube's check that the audiences asked for are the token's.
            Ok(Some(authenticated))
                if !review.spec.audiences.is_empty() && authenticated.audiences.is_empty() =>
            {
                return Err(ApiError::Internal("error validating audiences".into()));
            }
            Ok(Some(authenticated)) => {
                review.status.authenticated = true;
                review.status.user = reviewed(&authenticated.user);
                review.status.audiences = authenticated.audiences;
            }
            Ok(None) => review.status.user = ReviewedUser::default(),
            Err(error) => {
                review.status.user = ReviewedUser::default();
                review.status.error = error;
            }
        }
        serde_json::to_value(&review).map_err(internal)
    }
}
