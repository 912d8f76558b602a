//! The answers of `authorization.k8s.io/v1`'s reviews (`kapi_kinds::authorization`):
//! access reviews ask the authorization modes, as a request would (kube's
//! `subjectaccessreview` REST storage); rules reviews list the rules that apply (kube's
//! `RulesFor` of each mode).

use std::sync::Arc;

use serde_json::Value;

use super::{Attributes, Decision, Mode};
use crate::authn::UserInfo;
use crate::http::RequestInfo;
use kapi_core::error::ApiError;
use kapi_kinds::authorization::{
    NonResourceRule, ResourceAttributes, ResourceRule, SelfSubjectAccessReview,
    SelfSubjectRulesReview, SubjectAccessReview, SubjectAccessReviewStatus,
};
use kapi_kinds::rbac::PolicyRule;
use kapi_registry::Registry;
use kapi_registry::review::Review;

/// Registers the answers of the four reviews with `registry`, judged by `modes`.
pub fn register(registry: &Registry, modes: &Mode) {
    let group = "authorization.k8s.io";
    let access = Arc::new(Access(modes.clone()));
    registry.set_review(
        group,
        "SelfSubjectAccessReview",
        Arc::new(SelfAccess(modes.clone())),
    );
    registry.set_review(group, "SubjectAccessReview", access.clone());
    registry.set_review(group, "LocalSubjectAccessReview", access);
    registry.set_review(
        group,
        "SelfSubjectRulesReview",
        Arc::new(Rules(modes.clone())),
    );
}

fn decode<T: serde::de::DeserializeOwned>(object: Value) -> Result<T, ApiError> {
    serde_json::from_value(object).map_err(|e| ApiError::Internal(e.to_string()))
}

fn encode<T: serde::Serialize>(object: &T) -> Result<Value, ApiError> {
    serde_json::to_value(object).map_err(|e| ApiError::Internal(e.to_string()))
}

/// The request a review's attributes describe.
fn request_of(
    resource: Option<&ResourceAttributes>,
    non_resource: Option<&kapi_kinds::authorization::NonResourceAttributes>,
) -> RequestInfo {
    let text = |value: &String| value.clone();
    match (resource, non_resource) {
        (Some(attributes), _) => RequestInfo {
            resource_request: true,
            verb: text(&attributes.verb),
            api_group: text(&attributes.group),
            api_version: text(&attributes.version),
            namespace: text(&attributes.namespace),
            resource: text(&attributes.resource),
            subresource: text(&attributes.subresource),
            name: text(&attributes.name),
            ..RequestInfo::default()
        },
        (None, Some(attributes)) => RequestInfo {
            path: text(&attributes.path),
            verb: text(&attributes.verb),
            ..RequestInfo::default()
        },
        (None, None) => RequestInfo::default(),
    }
}

/// The status kube reports for a decision.
fn status(decision: Decision) -> SubjectAccessReviewStatus {
    let (allowed, denied, reason) = match decision {
        Decision::Allow(reason) => (true, false, reason),
        Decision::Deny(reason) => (false, true, reason),
        Decision::NoOpinion(reason) => (false, false, reason),
    };
    SubjectAccessReviewStatus {
        allowed,
        denied,
        reason: reason.to_string(),
        evaluation_error: String::new(),
    }
}

/// `SelfSubjectAccessReview`: may the requesting user do this?
struct SelfAccess(Mode);

impl Review for SelfAccess {
    fn review(&self, user: Option<&UserInfo>, object: Value) -> Result<Value, ApiError> {
        let mut review: SelfSubjectAccessReview = decode(object)?;
        let user = user.cloned().unwrap_or_default();
        let spec = &review.spec;
        let request = request_of(
            spec.resource_attributes.as_ref(),
            spec.non_resource_attributes.as_ref(),
        );
        let decision = self.0.authorize(&Attributes {
            user: &user,
            request: &request,
        });
        review.status = status(decision);
        encode(&review)
    }
}

/// `SubjectAccessReview` and `LocalSubjectAccessReview`: may the user named do this?
struct Access(Mode);

impl Review for Access {
    fn review(&self, _: Option<&UserInfo>, object: Value) -> Result<Value, ApiError> {
        let mut review: SubjectAccessReview = decode(object)?;
        let spec = &review.spec;
        let user = UserInfo {
            name: spec.user.clone(),
            uid: spec.uid.clone(),
            groups: spec.groups.clone(),
            extra: (spec.extra.iter())
                .map(|(key, values)| (key.clone(), values.0.clone()))
                .collect(),
        };
        let request = request_of(
            spec.resource_attributes.as_ref(),
            spec.non_resource_attributes.as_ref(),
        );
        let decision = self.0.authorize(&Attributes {
            user: &user,
            request: &request,
        });
        review.status = status(decision);
        encode(&review)
    }
}

/// `SelfSubjectRulesReview`: what may the requesting user do in a namespace?
struct Rules(Mode);

impl Review for Rules {
    fn review(&self, user: Option<&UserInfo>, object: Value) -> Result<Value, ApiError> {
        let mut review: SelfSubjectRulesReview = decode(object)?;
        let user = user.cloned().unwrap_or_default();
        let namespace = review.spec.namespace.clone();
        let found = self.0.rules_for(&user, &namespace);
        let status = &mut review.status;
        for rule in found.rules {
            if rule.non_resource_urls.is_empty() {
                status.resource_rules.push(ResourceRule {
                    verbs: rule.verbs,
                    api_groups: rule.api_groups,
                    resources: rule.resources,
                    resource_names: rule.resource_names,
                });
            } else {
                status.non_resource_rules.push(NonResourceRule {
                    verbs: rule.verbs,
                    non_resource_urls: rule.non_resource_urls,
                });
            }
        }
        status.incomplete = found.incomplete;
        status.evaluation_error = found.errors.join(", ");
        encode(&review)
    }
}

/// The rules that apply to a user in a namespace, as the modes list them.
#[derive(Debug, Default)]
pub struct RulesFor {
    /// The rules.
    pub rules: Vec<PolicyRule>,
    /// Whether some mode could not list its rules.
    pub incomplete: bool,
    /// What went wrong while listing.
    pub errors: Vec<String>,
}
