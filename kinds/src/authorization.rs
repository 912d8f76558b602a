//! `authorization.k8s.io/v1`: questions to the authorizer, created and answered, never
//! stored (`create_only`). `SelfSubjectAccessReview` (may I?) is what `kubectl auth can-i`
//! asks, `SelfSubjectRulesReview` (what may I?) what `can-i --list` asks;
//! `SubjectAccessReview` and `LocalSubjectAccessReview` ask about someone else. The
//! answers come from `authz::reviews`.

use std::collections::BTreeMap;

use kapi_core::Resource;
use kapi_core::api::{KindInfo, ProtoField, ProtoKind, ProtoMessage};
use kapi_core::error::{FieldError, FieldErrorType};
use kapi_core::meta::{OBJECT_META_PROTO, ObjectMeta};
use kapi_macros::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The four kinds, for an API's list of kinds.
pub const KINDS: &[&KindInfo] = &[
    SelfSubjectAccessReview::INFO,
    SubjectAccessReview::INFO,
    LocalSubjectAccessReview::INFO,
    SelfSubjectRulesReview::INFO,
];

/// May I do this?
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "authorization.k8s.io",
    kind = "SelfSubjectAccessReview",
    plural = "selfsubjectaccessreviews",
    create_only,
    version(name = "v1", storage),
    protobuf = SELF_SUBJECT_ACCESS_REVIEW_PROTO
)]
#[schemars(rename = "io.k8s.api.authorization.v1.SelfSubjectAccessReview")]
pub struct SelfSubjectAccessReview {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The question.
    #[serde(default)]
    pub spec: SelfSubjectAccessReviewSpec,
    /// The answer, set by the server.
    #[serde(default)]
    pub status: SubjectAccessReviewStatus,
}

/// The request of a [`SelfSubjectAccessReview`]: exactly one of the two.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.authorization.v1.SelfSubjectAccessReviewSpec")]
pub struct SelfSubjectAccessReviewSpec {
    /// A resource request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_attributes: Option<ResourceAttributes>,
    /// A non-resource request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_resource_attributes: Option<NonResourceAttributes>,
}

/// May this user do this?
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "authorization.k8s.io",
    kind = "SubjectAccessReview",
    plural = "subjectaccessreviews",
    create_only,
    version(name = "v1", storage),
    protobuf = SUBJECT_ACCESS_REVIEW_PROTO
)]
#[schemars(rename = "io.k8s.api.authorization.v1.SubjectAccessReview")]
pub struct SubjectAccessReview {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The question.
    #[serde(default)]
    pub spec: SubjectAccessReviewSpec,
    /// The answer, set by the server.
    #[serde(default)]
    pub status: SubjectAccessReviewStatus,
}

/// May this user do this in this namespace?
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "authorization.k8s.io",
    kind = "LocalSubjectAccessReview",
    plural = "localsubjectaccessreviews",
    namespaced,
    create_only,
    version(name = "v1", storage),
    protobuf = LOCAL_SUBJECT_ACCESS_REVIEW_PROTO
)]
#[schemars(rename = "io.k8s.api.authorization.v1.LocalSubjectAccessReview")]
pub struct LocalSubjectAccessReview {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The question.
    #[serde(default)]
    pub spec: SubjectAccessReviewSpec,
    /// The answer, set by the server.
    #[serde(default)]
    pub status: SubjectAccessReviewStatus,
}

/// The request of a [`SubjectAccessReview`]: the attributes and whom they are about.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.authorization.v1.SubjectAccessReviewSpec")]
pub struct SubjectAccessReviewSpec {
    /// A resource request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_attributes: Option<ResourceAttributes>,
    /// A non-resource request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_resource_attributes: Option<NonResourceAttributes>,
    /// The user asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Their groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub groups: Vec<String>,
    /// Their other attributes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
    /// Their uid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

/// A resource request, as authorization sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.authorization.v1.ResourceAttributes")]
pub struct ResourceAttributes {
    /// Empty for cluster-scoped resources, or all namespaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `get`, `list`, `create`, ...; `*` for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
    /// The API group; `*` for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The API version; `*` for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The resource; `*` for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The subresource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    /// The object's name; empty for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A non-resource request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.authorization.v1.NonResourceAttributes")]
pub struct NonResourceAttributes {
    /// The URL path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The lower-case HTTP verb.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
}

/// The answer of an access review.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.authorization.v1.SubjectAccessReviewStatus")]
pub struct SubjectAccessReviewStatus {
    /// Whether the request is allowed.
    #[serde(default)]
    pub allowed: bool,
    /// Whether it is denied outright (no later authorizer asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denied: Option<bool>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What went wrong while judging, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation_error: Option<String>,
}

/// What may I do in a namespace?
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "authorization.k8s.io",
    kind = "SelfSubjectRulesReview",
    plural = "selfsubjectrulesreviews",
    create_only,
    version(name = "v1", storage),
    protobuf = SELF_SUBJECT_RULES_REVIEW_PROTO
)]
#[schemars(rename = "io.k8s.api.authorization.v1.SelfSubjectRulesReview")]
pub struct SelfSubjectRulesReview {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The question.
    #[serde(default)]
    pub spec: SelfSubjectRulesReviewSpec,
    /// The answer, set by the server.
    #[serde(default)]
    pub status: SubjectRulesReviewStatus,
}

/// The namespace a [`SelfSubjectRulesReview`] asks about.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.authorization.v1.SelfSubjectRulesReviewSpec")]
pub struct SelfSubjectRulesReviewSpec {
    /// The namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// The rules that apply.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.authorization.v1.SubjectRulesReviewStatus")]
pub struct SubjectRulesReviewStatus {
    /// On resources.
    #[serde(default)]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub resource_rules: Vec<ResourceRule>,
    /// On non-resource URLs.
    #[serde(default, rename = "nonResourceRules")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub non_resource_rules: Vec<NonResourceRule>,
    /// Whether some rules could not be listed (an authorizer that cannot enumerate).
    #[serde(default)]
    pub incomplete: bool,
    /// What went wrong while listing, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation_error: Option<String>,
}

/// One rule on resources.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.authorization.v1.ResourceRule")]
pub struct ResourceRule {
    /// The verbs.
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub verbs: Vec<String>,
    /// The API groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "apiGroups")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub api_groups: Vec<String>,
    /// The resources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub resources: Vec<String>,
    /// The names, if limited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub resource_names: Vec<String>,
}

/// One rule on non-resource URLs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.authorization.v1.NonResourceRule")]
pub struct NonResourceRule {
    /// The verbs.
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub verbs: Vec<String>,
    /// The URLs.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        rename = "nonResourceURLs"
    )]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub non_resource_urls: Vec<String>,
}

/// kube's `ValidateSelfSubjectAccessReviewSpec`: exactly one kind of attributes.
fn one_of_attributes(resource: bool, non_resource: bool) -> Vec<FieldError> {
    let message = match (resource, non_resource) {
        (true, true) => "cannot be specified in combination with resourceAttributes",
        (false, false) => {
            "exactly one of nonResourceAttributes or resourceAttributes must be specified"
        }
        _ => return Vec::new(),
    };
    let field = if resource && non_resource {
        "spec.nonResourceAttributes"
    } else {
        "spec.resourceAttributes"
    };
    vec![FieldError::new(
        FieldErrorType::Invalid,
        field,
        None,
        message,
    )]
}

/// kube's `ValidateSubjectAccessReviewSpec`: one kind of attributes, and a user or groups.
fn subject_spec(spec: &SubjectAccessReviewSpec) -> Vec<FieldError> {
    let mut errors = one_of_attributes(
        spec.resource_attributes.is_some(),
        spec.non_resource_attributes.is_some(),
    );
    if spec.user.as_deref().unwrap_or_default().is_empty() && spec.groups.is_empty() {
        errors.push(FieldError::new(
            FieldErrorType::Invalid,
            "spec.user",
            Some(serde_json::Value::String(String::new())),
            "at least one of user or group must be specified",
        ));
    }
    errors
}

impl kapi_core::Strategy for SelfSubjectAccessReview {
    fn validate(&self) -> Vec<FieldError> {
        one_of_attributes(
            self.spec.resource_attributes.is_some(),
            self.spec.non_resource_attributes.is_some(),
        )
    }
}

impl kapi_core::Strategy for SubjectAccessReview {
    fn validate(&self) -> Vec<FieldError> {
        subject_spec(&self.spec)
    }
}

impl kapi_core::Strategy for LocalSubjectAccessReview {
    fn validate(&self) -> Vec<FieldError> {
        let mut errors = subject_spec(&self.spec);
        if self.spec.non_resource_attributes.is_some() {
            errors.push(FieldError::new(
                FieldErrorType::Invalid,
                "spec.nonResourceAttributes",
                None,
                "disallowed on this kind of request",
            ));
        }
        let namespace = self.metadata.namespace.as_deref().unwrap_or_default();
        let asked = (self.spec.resource_attributes.as_ref())
            .and_then(|a| a.namespace.as_deref())
            .unwrap_or_default();
        if self.spec.resource_attributes.is_some() && asked != namespace {
            errors.push(FieldError::new(
                FieldErrorType::Invalid,
                "spec.resourceAttributes.namespace",
                Some(serde_json::Value::String(asked.to_owned())),
                "must match metadata.namespace",
            ));
        }
        errors
    }
}

impl kapi_core::Strategy for SelfSubjectRulesReview {}

// The wire shapes of k8s.io/api's `authorization/v1/generated.proto`: kubectl's typed
// clients send them as protobuf.

const REVIEW_STATUS: ProtoKind = ProtoKind::Message(&SUBJECT_ACCESS_REVIEW_STATUS_PROTO);

/// `k8s.io.api.authorization.v1.SelfSubjectAccessReview` on the wire.
pub static SELF_SUBJECT_ACCESS_REVIEW_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.SelfSubjectAccessReview",
    fields: &[
        ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
        ProtoField::new(
            2,
            "spec",
            ProtoKind::Message(&SELF_SUBJECT_ACCESS_REVIEW_SPEC_PROTO),
        ),
        ProtoField::new(3, "status", REVIEW_STATUS),
    ],
};

/// `k8s.io.api.authorization.v1.SelfSubjectAccessReviewSpec` on the wire.
pub static SELF_SUBJECT_ACCESS_REVIEW_SPEC_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.SelfSubjectAccessReviewSpec",
    fields: &[
        ProtoField::new(
            1,
            "resourceAttributes",
            ProtoKind::Message(&RESOURCE_ATTRIBUTES_PROTO),
        ),
        ProtoField::new(
            2,
            "nonResourceAttributes",
            ProtoKind::Message(&NON_RESOURCE_ATTRIBUTES_PROTO),
        ),
    ],
};

/// `k8s.io.api.authorization.v1.SubjectAccessReview` on the wire.
pub static SUBJECT_ACCESS_REVIEW_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.SubjectAccessReview",
    fields: SUBJECT_ACCESS_REVIEW_FIELDS,
};

/// `k8s.io.api.authorization.v1.LocalSubjectAccessReview` on the wire.
pub static LOCAL_SUBJECT_ACCESS_REVIEW_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.LocalSubjectAccessReview",
    fields: SUBJECT_ACCESS_REVIEW_FIELDS,
};

const SUBJECT_ACCESS_REVIEW_FIELDS: &[ProtoField] = &[
    ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
    ProtoField::new(
        2,
        "spec",
        ProtoKind::Message(&SUBJECT_ACCESS_REVIEW_SPEC_PROTO),
    ),
    ProtoField::new(3, "status", REVIEW_STATUS),
];

/// `k8s.io.api.authorization.v1.SubjectAccessReviewSpec` on the wire.
pub static SUBJECT_ACCESS_REVIEW_SPEC_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.SubjectAccessReviewSpec",
    fields: &[
        ProtoField::new(
            1,
            "resourceAttributes",
            ProtoKind::Message(&RESOURCE_ATTRIBUTES_PROTO),
        ),
        ProtoField::new(
            2,
            "nonResourceAttributes",
            ProtoKind::Message(&NON_RESOURCE_ATTRIBUTES_PROTO),
        ),
        ProtoField::new(3, "user", ProtoKind::String),
        ProtoField::repeated(4, "groups", ProtoKind::String),
        ProtoField::map(5, "extra", &ProtoKind::String, &ProtoKind::Strings),
        ProtoField::new(6, "uid", ProtoKind::String),
    ],
};

/// `k8s.io.api.authorization.v1.ResourceAttributes` on the wire.
pub static RESOURCE_ATTRIBUTES_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.ResourceAttributes",
    fields: &[
        ProtoField::new(1, "namespace", ProtoKind::String),
        ProtoField::new(2, "verb", ProtoKind::String),
        ProtoField::new(3, "group", ProtoKind::String),
        ProtoField::new(4, "version", ProtoKind::String),
        ProtoField::new(5, "resource", ProtoKind::String),
        ProtoField::new(6, "subresource", ProtoKind::String),
        ProtoField::new(7, "name", ProtoKind::String),
    ],
};

/// `k8s.io.api.authorization.v1.NonResourceAttributes` on the wire.
pub static NON_RESOURCE_ATTRIBUTES_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.NonResourceAttributes",
    fields: &[
        ProtoField::new(1, "path", ProtoKind::String),
        ProtoField::new(2, "verb", ProtoKind::String),
    ],
};

/// `k8s.io.api.authorization.v1.SubjectAccessReviewStatus` on the wire.
pub static SUBJECT_ACCESS_REVIEW_STATUS_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.SubjectAccessReviewStatus",
    fields: &[
        // No `omitempty` in Go.
        ProtoField::new(1, "allowed", ProtoKind::Bool).keep_zero(),
        ProtoField::new(4, "denied", ProtoKind::Bool),
        ProtoField::new(2, "reason", ProtoKind::String),
        ProtoField::new(3, "evaluationError", ProtoKind::String),
    ],
};

/// `k8s.io.api.authorization.v1.SelfSubjectRulesReview` on the wire.
pub static SELF_SUBJECT_RULES_REVIEW_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.SelfSubjectRulesReview",
    fields: &[
        ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
        ProtoField::new(
            2,
            "spec",
            ProtoKind::Message(&SELF_SUBJECT_RULES_REVIEW_SPEC_PROTO),
        ),
        ProtoField::new(
            3,
            "status",
            ProtoKind::Message(&SUBJECT_RULES_REVIEW_STATUS_PROTO),
        ),
    ],
};

/// `k8s.io.api.authorization.v1.SubjectRulesReviewStatus` on the wire.
pub static SUBJECT_RULES_REVIEW_STATUS_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.SubjectRulesReviewStatus",
    fields: &[
        ProtoField::repeated(1, "resourceRules", ProtoKind::Message(&RESOURCE_RULE_PROTO)),
        ProtoField::repeated(
            2,
            "nonResourceRules",
            ProtoKind::Message(&NON_RESOURCE_RULE_PROTO),
        ),
        // No `omitempty` in Go.
        ProtoField::new(3, "incomplete", ProtoKind::Bool).keep_zero(),
        ProtoField::new(4, "evaluationError", ProtoKind::String),
    ],
};

/// `k8s.io.api.authorization.v1.ResourceRule` on the wire.
pub static RESOURCE_RULE_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.ResourceRule",
    fields: &[
        ProtoField::repeated(1, "verbs", ProtoKind::String),
        ProtoField::repeated(2, "apiGroups", ProtoKind::String),
        ProtoField::repeated(3, "resources", ProtoKind::String),
        ProtoField::repeated(4, "resourceNames", ProtoKind::String),
    ],
};

/// `k8s.io.api.authorization.v1.NonResourceRule` on the wire.
pub static NON_RESOURCE_RULE_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.NonResourceRule",
    fields: &[
        ProtoField::repeated(1, "verbs", ProtoKind::String),
        ProtoField::repeated(2, "nonResourceURLs", ProtoKind::String),
    ],
};

/// `k8s.io.api.authorization.v1.SelfSubjectRulesReviewSpec` on the wire.
pub static SELF_SUBJECT_RULES_REVIEW_SPEC_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.authorization.v1.SelfSubjectRulesReviewSpec",
    fields: &[ProtoField::new(1, "namespace", ProtoKind::String)],
};
