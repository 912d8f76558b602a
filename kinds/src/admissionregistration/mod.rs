//! `admissionregistration.k8s.io`: the admission webhooks a server calls on writes, and
//! the admission policies (CEL) it evaluates itself: `v1`'s ValidatingAdmissionPolicies
//! (`policies`) and `v1beta1`'s MutatingAdmissionPolicies (kube 1.34's, `mutating_policies`),
//! each with its bindings.
//! A `MutatingWebhookConfiguration`'s webhooks may change the objects written (JSON
//! patches), a `ValidatingWebhookConfiguration`'s may refuse them; each webhook says which
//! writes it sees (rules of operations, groups, versions, resources and scope; namespace
//! and object label selectors; `matchPolicy`), how to reach it (an HTTPS URL and the CA
//! bundle that signs its certificate), and what happens when it cannot be reached
//! (`failurePolicy`). The API server's admission webhooks call them.
//!
//! Generated with kube's other kinds ([`crate::api::admissionregistration::v1`], and
//! [`v1beta1`] from k8s.io/api v0.34.1); their strategies give kube's defaults
//! (`failurePolicy: Fail`, `matchPolicy: Equivalent`, empty selectors, `timeoutSeconds:
//! 10`, `reinvocationPolicy: Never` of a webhook, `scope: "*"`, a service's port 443) and
//! kube's validation (`validation`). `v1beta1`'s own versions of the types both kinds of
//! policy share ([`v1beta1::MatchResources`], [`v1beta1::ParamRef`], ...) convert to
//! `v1`'s (`From`), which the checks and the admission plugin read.

mod expressions;
pub(crate) mod mutating_policies;
mod mutating_policy_validation;
pub(crate) mod policies;
mod policy_validation;
pub(crate) mod validation;

use kapi_core::error::FieldError;
use kapi_core::meta::LabelSelector;

pub use crate::api::admissionregistration::v1::{
    AuditAnnotation, ExpressionWarning, MatchCondition, MatchResources, MutatingWebhook,
    MutatingWebhookConfiguration, NamedRuleWithOperations, ParamKind, ParamRef, Rule,
    RuleWithOperations, ServiceReference, TypeChecking, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyBindingSpec,
    ValidatingAdmissionPolicySpec, ValidatingAdmissionPolicyStatus, ValidatingWebhook,
    ValidatingWebhookConfiguration, Validation, Variable, WebhookClientConfig,
};
/// `admissionregistration.k8s.io/v1beta1`: the MutatingAdmissionPolicy kinds, and the
/// versions of the types they share with ValidatingAdmissionPolicies.
pub use crate::api::admissionregistration::v1beta1;
pub use crate::api::admissionregistration::v1beta1::{
    ApplyConfiguration, JSONPatch, MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding,
    MutatingAdmissionPolicyBindingSpec, MutatingAdmissionPolicySpec, Mutation,
};

/// The fields both kinds of webhook share, as a [`WebhookView`] without reinvocation.
macro_rules! view {
    ($hook:expr) => {
        WebhookView {
            name: &$hook.name,
            client_config: &$hook.client_config,
            rules: &$hook.rules,
            failure_policy: $hook.failure_policy.as_deref(),
            match_policy: $hook.match_policy.as_deref(),
            namespace_selector: $hook.namespace_selector.as_ref(),
            object_selector: $hook.object_selector.as_ref(),
            side_effects: $hook.side_effects.as_deref(),
            timeout_seconds: $hook.timeout_seconds,
            admission_review_versions: &$hook.admission_review_versions,
            match_conditions: &$hook.match_conditions,
            reinvocation_policy: None,
        }
    };
}

/// The group of the webhook configurations.
pub const GROUP: &str = "admissionregistration.k8s.io";

/// What both kinds of webhook say, as validation and admission read it (a validating
/// webhook has no reinvocation policy).
pub struct WebhookView<'a> {
    /// `name`.
    pub name: &'a str,
    /// `clientConfig`.
    pub client_config: &'a WebhookClientConfig,
    /// `rules`.
    pub rules: &'a [RuleWithOperations],
    /// `failurePolicy`.
    pub failure_policy: Option<&'a str>,
    /// `matchPolicy`.
    pub match_policy: Option<&'a str>,
    /// `namespaceSelector`.
    pub namespace_selector: Option<&'a LabelSelector>,
    /// `objectSelector`.
    pub object_selector: Option<&'a LabelSelector>,
    /// `sideEffects`.
    pub side_effects: Option<&'a str>,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<i32>,
    /// `admissionReviewVersions`.
    pub admission_review_versions: &'a [String],
    /// `matchConditions`.
    pub match_conditions: &'a [MatchCondition],
    /// `reinvocationPolicy` (mutating webhooks only).
    pub reinvocation_policy: Option<&'a str>,
}

impl MutatingWebhook {
    /// What it says, as admission reads it.
    pub fn view(&self) -> WebhookView<'_> {
        WebhookView {
            reinvocation_policy: self.reinvocation_policy.as_deref(),
            ..view!(self)
        }
    }
}

impl ValidatingWebhook {
    /// What it says, as admission reads it.
    pub fn view(&self) -> WebhookView<'_> {
        view!(self)
    }
}

/// kube's `SetDefaults_*` of what both kinds of webhook have, applied where they are unset.
macro_rules! default_webhook {
    ($hook:expr) => {{
        let hook = $hook;
        hook.failure_policy.get_or_insert_with(|| "Fail".to_owned());
        hook.match_policy
            .get_or_insert_with(|| "Equivalent".to_owned());
        hook.namespace_selector
            .get_or_insert_with(LabelSelector::default);
        hook.object_selector
            .get_or_insert_with(LabelSelector::default);
        hook.timeout_seconds.get_or_insert(10);
        for rule in &mut hook.rules {
            rule.rule.scope.get_or_insert_with(|| "*".to_owned());
        }
        if let Some(service) = &mut hook.client_config.service {
            service.port.get_or_insert(443);
        }
    }};
}

impl kapi_core::Strategy for MutatingWebhookConfiguration {
    fn prepare_for_create(&mut self) {
        for hook in &mut self.webhooks {
            default_webhook!(&mut *hook);
            hook.reinvocation_policy
                .get_or_insert_with(|| "Never".to_owned());
        }
    }

    fn prepare_for_update(&mut self, _old: &Self) {
        self.prepare_for_create();
    }

    fn validate(&self) -> Vec<FieldError> {
        validation::mutating(self)
    }
}

impl kapi_core::Strategy for ValidatingWebhookConfiguration {
    fn prepare_for_create(&mut self) {
        for hook in &mut self.webhooks {
            default_webhook!(hook);
        }
    }

    fn prepare_for_update(&mut self, _old: &Self) {
        self.prepare_for_create();
    }

    fn validate(&self) -> Vec<FieldError> {
        validation::validating(self)
    }
}
