//! `authorization.k8s.io/v1`: questions to the authorizer, created and answered, never
//! stored (`create_only`). `SelfSubjectAccessReview` (may I?) is what `kubectl auth can-i`
//! asks, `SelfSubjectRulesReview` (what may I?) what `can-i --list` asks;
//! `SubjectAccessReview` and `LocalSubjectAccessReview` ask about someone else. The
//! answers come from `authz::reviews`.

use kapi_core::error::{FieldError, FieldErrorType};

pub use crate::api::authorization::v1::{
    FieldSelectorAttributes, LabelSelectorAttributes, LocalSubjectAccessReview,
    NonResourceAttributes, NonResourceRule, ResourceAttributes, ResourceRule,
    SelfSubjectAccessReview, SelfSubjectAccessReviewSpec, SelfSubjectRulesReview,
    SelfSubjectRulesReviewSpec, SubjectAccessReview, SubjectAccessReviewSpec,
    SubjectAccessReviewStatus, SubjectRulesReviewStatus,
};

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
    if spec.user.is_empty() && spec.groups.is_empty() {
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
        let asked = (self.spec.resource_attributes.as_ref()).map_or("", |a| a.namespace.as_str());
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
