//! `authentication.k8s.io/v1`: questions to the authenticator, created and answered, never
//! stored (`create_only`). `SelfSubjectReview` (who am I?) is what `kubectl auth whoami`
//! asks; `TokenReview` (whose token is this?) is how other servers delegate
//! authentication. The answers come from `authn::reviews`.

pub use crate::api::authentication::v1::{
    SelfSubjectReview, SelfSubjectReviewStatus, TokenReview, TokenReviewSpec, TokenReviewStatus,
    UserInfo,
};

impl kapi_core::Strategy for SelfSubjectReview {}

impl kapi_core::Strategy for TokenReview {}
