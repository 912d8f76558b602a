//! `authentication.k8s.io/v1`: questions to the authenticator, created and answered, never
//! stored (`create_only`). `SelfSubjectReview` (who am I?) is what `kubectl auth whoami`
//! asks; `TokenReview` (whose token is this?) is how other servers delegate
//! authentication. The answers come from `authn::reviews`.

use std::collections::BTreeMap;

use kapi_core::Resource;
use kapi_core::api::{KindInfo, ProtoField, ProtoKind, ProtoMessage};
use kapi_core::meta::{OBJECT_META_PROTO, ObjectMeta};
use kapi_macros::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The two kinds, for an API's list of kinds.
pub const KINDS: &[&KindInfo] = &[SelfSubjectReview::INFO, TokenReview::INFO];

/// Who am I?
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "authentication.k8s.io",
    kind = "SelfSubjectReview",
    plural = "selfsubjectreviews",
    create_only,
    version(name = "v1", storage),
    protobuf = SELF_SUBJECT_REVIEW_PROTO
)]
#[schemars(rename = "io.k8s.api.authentication.v1.SelfSubjectReview")]
pub struct SelfSubjectReview {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The answer, set by the server.
    #[serde(default)]
    pub status: SelfSubjectReviewStatus,
}

/// The user a [`SelfSubjectReview`] found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.authentication.v1.SelfSubjectReviewStatus")]
pub struct SelfSubjectReviewStatus {
    /// The requesting user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_info: Option<UserInfo>,
}

/// A user, as authentication found them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.authentication.v1.UserInfo")]
pub struct UserInfo {
    /// The name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// A unique id, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub groups: Vec<String>,
    /// Other attributes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

/// Whose token is this?
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "authentication.k8s.io",
    kind = "TokenReview",
    plural = "tokenreviews",
    create_only,
    version(name = "v1", storage),
    protobuf = TOKEN_REVIEW_PROTO
)]
#[schemars(rename = "io.k8s.api.authentication.v1.TokenReview")]
pub struct TokenReview {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The token.
    #[serde(default)]
    pub spec: TokenReviewSpec,
    /// The answer, set by the server.
    #[serde(default)]
    pub status: TokenReviewStatus,
}

/// The token of a [`TokenReview`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.authentication.v1.TokenReviewSpec")]
pub struct TokenReviewSpec {
    /// The opaque bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Audiences the token must be valid for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub audiences: Vec<String>,
}

/// The answer of a [`TokenReview`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.authentication.v1.TokenReviewStatus")]
pub struct TokenReviewStatus {
    /// Whether the token is valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authenticated: Option<bool>,
    /// Whose it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<UserInfo>,
    /// The audiences it is valid for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub audiences: Vec<String>,
    /// Why it is not valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl kapi_core::Strategy for SelfSubjectReview {}

impl kapi_core::Strategy for TokenReview {}

// The wire shapes of k8s.io/api's `authentication/v1/generated.proto`: typed clients send
// them as protobuf and read the answers (their statuses) as protobuf.

/// `k8s.io.api.authentication.v1.SelfSubjectReview` on the wire.
pub static SELF_SUBJECT_REVIEW_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authentication.v1.SelfSubjectReview",
    fields: &[
        ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
        ProtoField::new(
            2,
            "status",
            ProtoKind::Message(&SELF_SUBJECT_REVIEW_STATUS_PROTO),
        ),
    ],
};

/// `k8s.io.api.authentication.v1.SelfSubjectReviewStatus` on the wire.
pub static SELF_SUBJECT_REVIEW_STATUS_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authentication.v1.SelfSubjectReviewStatus",
    fields: &[ProtoField::new(
        1,
        "userInfo",
        ProtoKind::Message(&USER_INFO_PROTO),
    )],
};

/// `k8s.io.api.authentication.v1.UserInfo` on the wire.
pub static USER_INFO_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authentication.v1.UserInfo",
    fields: &[
        ProtoField::new(1, "username", ProtoKind::String),
        ProtoField::new(2, "uid", ProtoKind::String),
        ProtoField::repeated(3, "groups", ProtoKind::String),
        ProtoField::map(4, "extra", &ProtoKind::String, &ProtoKind::Strings),
    ],
};

/// `k8s.io.api.authentication.v1.TokenReview` on the wire.
pub static TOKEN_REVIEW_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authentication.v1.TokenReview",
    fields: &[
        ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
        ProtoField::new(2, "spec", ProtoKind::Message(&TOKEN_REVIEW_SPEC_PROTO)),
        ProtoField::new(3, "status", ProtoKind::Message(&TOKEN_REVIEW_STATUS_PROTO)),
    ],
};

/// `k8s.io.api.authentication.v1.TokenReviewStatus` on the wire.
pub static TOKEN_REVIEW_STATUS_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authentication.v1.TokenReviewStatus",
    fields: &[
        ProtoField::new(1, "authenticated", ProtoKind::Bool),
        ProtoField::new(2, "user", ProtoKind::Message(&USER_INFO_PROTO)),
        ProtoField::new(3, "error", ProtoKind::String),
        ProtoField::repeated(4, "audiences", ProtoKind::String),
    ],
};

/// `k8s.io.api.authentication.v1.TokenReviewSpec` on the wire.
pub static TOKEN_REVIEW_SPEC_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authentication.v1.TokenReviewSpec",
    fields: &[
        ProtoField::new(1, "token", ProtoKind::String),
        ProtoField::repeated(2, "audiences", ProtoKind::String),
    ],
};
