//! `admissionregistration.k8s.io/v1`: the admission webhooks a server calls on writes.
//! A `MutatingWebhookConfiguration`'s webhooks may change the objects written (JSON
//! patches), a `ValidatingWebhookConfiguration`'s may refuse them; each webhook says which
//! writes it sees (rules of operations, groups, versions, resources and scope; namespace
//! and object label selectors; `matchPolicy`), how to reach it (an HTTPS URL and the CA
//! bundle that signs its certificate), and what happens when it cannot be reached
//! (`failurePolicy`). The API server's admission webhooks call them.
//!
//! Declared with the derives like any kind, with kube's defaults (`failurePolicy: Fail`,
//! `matchPolicy: Equivalent`, empty selectors, `timeoutSeconds: 10`, `reinvocationPolicy:
//! Never`, `scope: "*"`, a service's port 443) and kube's validation (`validation`).

pub(crate) mod validation;

use kapi_core::Resource;
use kapi_core::api::KindInfo;
use kapi_core::byte_string::ByteString;
use kapi_core::error::FieldError;
use kapi_core::meta::{LabelSelector, ObjectMeta};
use kapi_macros::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

/// The two kinds, for an API's list of kinds.
pub const KINDS: &[&KindInfo] = &[
    MutatingWebhookConfiguration::INFO,
    ValidatingWebhookConfiguration::INFO,
];

/// Webhooks that may change the objects written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "admissionregistration.k8s.io",
    kind = "MutatingWebhookConfiguration",
    plural = "mutatingwebhookconfigurations",
    delete_status,
    category = "api-extensions",
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage)
)]
#[schemars(rename = "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration")]
pub struct MutatingWebhookConfiguration {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The webhooks, called in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Not a list-map for the schema: kube reports a repeated name as `webhooks[i].name`
    // (its validation's), which the schema's uniqueness check would report again.
    #[schemars(extend(
        "x-kubernetes-patch-merge-key" = "name",
        "x-kubernetes-patch-strategy" = "merge"
    ))]
    pub webhooks: Vec<MutatingWebhook>,
}

/// Webhooks that may refuse the objects written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "admissionregistration.k8s.io",
    kind = "ValidatingWebhookConfiguration",
    plural = "validatingwebhookconfigurations",
    delete_status,
    category = "api-extensions",
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage)
)]
#[schemars(rename = "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration")]
pub struct ValidatingWebhookConfiguration {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The webhooks, called in parallel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Not a list-map for the schema: kube reports a repeated name as `webhooks[i].name`
    // (its validation's), which the schema's uniqueness check would report again.
    #[schemars(extend(
        "x-kubernetes-patch-merge-key" = "name",
        "x-kubernetes-patch-strategy" = "merge"
    ))]
    pub webhooks: Vec<ValidatingWebhook>,
}

/// A webhook that may change objects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.admissionregistration.v1.MutatingWebhook")]
pub struct MutatingWebhook {
    /// Its fully qualified name (`label.example.com`), unique in its configuration.
    #[serde(default)]
    pub name: String,
    /// How to reach it.
    #[serde(default)]
    pub client_config: WebhookClientConfig,
    /// The writes it is called for; none: no write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub rules: Vec<RuleWithOperations>,
    /// `Fail` (refuse the write) or `Ignore` (go on) when it cannot be called.
    #[serde(default = "fail", skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<String>,
    /// `Exact` (only the versions the rules name) or `Equivalent` (also the same kinds in
    /// other versions, converted to one the rules name).
    #[serde(default = "equivalent", skip_serializing_if = "Option::is_none")]
    pub match_policy: Option<String>,
    /// The namespaces (by label) whose objects it is called for.
    #[serde(default = "everything", skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// The objects (by label) it is called for.
    #[serde(default = "everything", skip_serializing_if = "Option::is_none")]
    pub object_selector: Option<LabelSelector>,
    /// `None` or `NoneOnDryRun`: whether it may be called for a dry run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<String>,
    /// Seconds to wait for its answer (1 to 30).
    #[serde(default = "ten_seconds", skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// The `AdmissionReview` versions it speaks, preferred first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub admission_review_versions: Vec<String>,
    /// `Never`, or `IfNeeded`: called again when a later webhook changed the object.
    #[serde(default = "never", skip_serializing_if = "Option::is_none")]
    pub reinvocation_policy: Option<String>,
    /// CEL conditions: refused by this server, which does not evaluate CEL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub match_conditions: Vec<MatchCondition>,
}

/// A webhook that may refuse objects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.admissionregistration.v1.ValidatingWebhook")]
pub struct ValidatingWebhook {
    /// Its fully qualified name (`policy.example.com`), unique in its configuration.
    #[serde(default)]
    pub name: String,
    /// How to reach it.
    #[serde(default)]
    pub client_config: WebhookClientConfig,
    /// The writes it is called for; none: no write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub rules: Vec<RuleWithOperations>,
    /// `Fail` (refuse the write) or `Ignore` (go on) when it cannot be called.
    #[serde(default = "fail", skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<String>,
    /// `Exact` or `Equivalent` (see [`MutatingWebhook::match_policy`]).
    #[serde(default = "equivalent", skip_serializing_if = "Option::is_none")]
    pub match_policy: Option<String>,
    /// The namespaces (by label) whose objects it is called for.
    #[serde(default = "everything", skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// The objects (by label) it is called for.
    #[serde(default = "everything", skip_serializing_if = "Option::is_none")]
    pub object_selector: Option<LabelSelector>,
    /// `None` or `NoneOnDryRun`: whether it may be called for a dry run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<String>,
    /// Seconds to wait for its answer (1 to 30).
    #[serde(default = "ten_seconds", skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// The `AdmissionReview` versions it speaks, preferred first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub admission_review_versions: Vec<String>,
    /// CEL conditions: refused by this server, which does not evaluate CEL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub match_conditions: Vec<MatchCondition>,
}

/// How to reach a webhook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.admissionregistration.v1.WebhookClientConfig")]
pub struct WebhookClientConfig {
    /// `https://host:port/path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A Service in the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    /// PEM certificates that sign the webhook's serving certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<ByteString>,
}

/// A Service that serves a webhook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.admissionregistration.v1.ServiceReference")]
pub struct ServiceReference {
    /// Its namespace.
    #[serde(default)]
    pub namespace: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// The URL path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The port.
    #[serde(default = "https_port", skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// Which writes a webhook sees.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.admissionregistration.v1.RuleWithOperations")]
pub struct RuleWithOperations {
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub operations: Vec<String>,
    /// API groups (`""` for the core group, `*` for all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub api_groups: Vec<String>,
    /// API versions (`*` for all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub api_versions: Vec<String>,
    /// Resources (`webapps`), subresources (`webapps/status`, `*/status`) or `*`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub resources: Vec<String>,
    /// `Cluster`, `Namespaced` or `*`.
    #[serde(default = "all_scopes", skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// A CEL condition on a webhook's calls.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.admissionregistration.v1.MatchCondition")]
pub struct MatchCondition {
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// The CEL expression.
    #[serde(default)]
    pub expression: String,
}

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

fn fail() -> Option<String> {
    Some("Fail".into())
}

fn equivalent() -> Option<String> {
    Some("Equivalent".into())
}

fn everything() -> Option<LabelSelector> {
    Some(LabelSelector::default())
}

fn ten_seconds() -> Option<i32> {
    Some(10)
}

fn never() -> Option<String> {
    Some("Never".into())
}

fn https_port() -> Option<i32> {
    Some(443)
}

fn all_scopes() -> Option<String> {
    Some("*".into())
}

impl kapi_core::Strategy for MutatingWebhookConfiguration {
    fn validate(&self) -> Vec<FieldError> {
        validation::mutating(self)
    }
}

impl kapi_core::Strategy for ValidatingWebhookConfiguration {
    fn validate(&self) -> Vec<FieldError> {
        validation::validating(self)
    }
}
