//! `apiregistration.k8s.io/v1`: the `APIService`s through which a server aggregates the
//! group-versions other servers serve (kube-aggregator's kind). Each names one
//! group-version and where it is served: locally (no `service`), or by a server reached
//! through a Service in the cluster (`service`: namespace, name, port) or, kapi's
//! extension for servers that run outside a cluster, an HTTPS `url`; how that server's
//! certificate is checked (`caBundle`, `insecureSkipTLSVerify`); and where the
//! group-version sorts in discovery (`groupPriorityMinimum`, `versionPriority`). Its
//! status says whether it is available (the `Available` condition), as the aggregator's
//! availability controller finds it.
//!
//! Declared with the derives like any kind, with kube's defaults (a service's port 443)
//! and kube's validation (`validation`).

// Printer columns repeat `type = "string"`: the attribute lists columns, not settings.
#![allow(clippy::duplicated_attributes)]

mod validation;

use kapi_core::Resource;
use kapi_core::api::KindInfo;
use kapi_core::byte_string::ByteString;
use kapi_core::error::FieldError;
use kapi_core::meta::ObjectMeta;
use kapi_macros::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The group of APIServices.
pub const GROUP: &str = "apiregistration.k8s.io";

/// The kind, for an API's list of kinds.
pub const KINDS: &[&KindInfo] = &[APIService::INFO];

/// The condition the availability controller keeps.
pub const AVAILABLE: &str = "Available";

/// One group-version and the server that serves it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "apiregistration.k8s.io",
    kind = "APIService",
    plural = "apiservices",
    delete_status,
    category = "api-extensions",
    names = "path_segment",
    status,
    printer_column(
        name = "Service",
        type = "string",
        json_path = ".spec.service.name",
        cell = "service_cell"
    ),
    printer_column(
        name = "Available",
        type = "string",
        json_path = ".status.conditions[?(@.type==\"Available\")].status",
        cell = "available_cell"
    ),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage)
)]
#[schemars(rename = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService")]
pub struct APIService {
    /// Standard object metadata; the name is `<spec.version>.<spec.group>`.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The group-version and where it is served.
    #[serde(default)]
    pub spec: APIServiceSpec,
    /// Whether it is available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<APIServiceStatus>,
}

/// A group-version and the server that serves it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec")]
pub struct APIServiceSpec {
    /// The Service in front of the server; none: served locally, by this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    /// kapi's extension, for a server outside a cluster: its HTTPS URL
    /// (`https://host:port`), instead of a `service`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The API group.
    #[serde(default)]
    pub group: String,
    /// The API version.
    #[serde(default)]
    pub version: String,
    /// Skip the check of the server's certificate (discouraged; use `caBundle`).
    #[serde(
        default,
        rename = "insecureSkipTLSVerify",
        skip_serializing_if = "Option::is_none"
    )]
    pub insecure_skip_tls_verify: Option<bool>,
    /// PEM certificates that sign the server's serving certificate (the system's roots
    /// when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub ca_bundle: Option<ByteString>,
    /// The group's priority in discovery: the highest of its versions' decides, and
    /// groups sort by it, highest first.
    #[serde(default)]
    pub group_priority_minimum: i32,
    /// The version's place in its group, highest first (ties: kube's version order).
    #[serde(default)]
    pub version_priority: i32,
}

/// The Service in front of a server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference")]
pub struct ServiceReference {
    /// Its namespace.
    #[serde(default)]
    pub namespace: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Its port (443 by default).
    #[serde(default = "https_port", skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// Whether an APIService is available.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus")]
pub struct APIServiceStatus {
    /// Its conditions (`Available`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["type"],
        "x-kubernetes-patch-merge-key" = "type",
        "x-kubernetes-patch-strategy" = "merge"
    ))]
    pub conditions: Vec<APIServiceCondition>,
}

/// One condition of an APIService.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition")]
pub struct APIServiceCondition {
    /// `Available`.
    #[serde(default)]
    pub r#type: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    pub status: String,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// A CamelCase reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A message for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

fn https_port() -> Option<i32> {
    Some(443)
}

/// kube's SERVICE column: `Local`, or `namespace/name` (kapi's `url` as it is).
fn service_cell(service: &serde_json::Value) -> serde_json::Value {
    let spec = &service["spec"];
    let text = match (spec["service"].as_object(), spec["url"].as_str()) {
        (Some(reference), _) => format!(
            "{}/{}",
            reference
                .get("namespace")
                .and_then(|v| v.as_str())
                .unwrap_or_default(),
            reference
                .get("name")
                .and_then(|v| v.as_str())
                .unwrap_or_default()
        ),
        (None, Some(url)) => url.to_owned(),
        (None, None) => "Local".to_owned(),
    };
    serde_json::Value::String(text)
}

/// kube's AVAILABLE column: the condition's status, with its reason when not `True`
/// (`False (FailedDiscoveryCheck)`); `Unknown` without one.
fn available_cell(service: &serde_json::Value) -> serde_json::Value {
    let conditions = service["status"]["conditions"].as_array();
    let available = conditions
        .into_iter()
        .flatten()
        .find(|c| c["type"] == AVAILABLE);
    let text = match available {
        None => "Unknown".to_owned(),
        Some(condition) => {
            let status = condition["status"].as_str().unwrap_or_default();
            match condition["reason"].as_str().filter(|r| !r.is_empty()) {
                Some(reason) if status != "True" => format!("{status} ({reason})"),
                _ => status.to_owned(),
            }
        }
    };
    serde_json::Value::String(text)
}

impl APIService {
    /// The `Available` condition, when set.
    pub fn available(&self) -> Option<&APIServiceCondition> {
        (self.status.as_ref())
            .and_then(|status| status.conditions.iter().find(|c| c.r#type == AVAILABLE))
    }

    /// Whether the server's certificate goes unchecked.
    pub fn insecure(&self) -> bool {
        self.spec.insecure_skip_tls_verify == Some(true)
    }

    /// Whether this server serves the group-version itself.
    pub fn is_local(&self) -> bool {
        self.spec.service.is_none() && self.spec.url.is_none()
    }

    /// kube's `SetAPIServiceCondition`: sets the condition of its type, its transition
    /// time now unless its status stays the same.
    pub fn set_condition(&mut self, condition: APIServiceCondition) {
        let status = self.status.get_or_insert_with(Default::default);
        kapi_core::meta::set_condition(&mut status.conditions, condition);
    }
}

impl kapi_core::meta::StatusCondition for APIServiceCondition {
    fn condition_type(&self) -> &str {
        &self.r#type
    }

    fn condition_status(&self) -> &str {
        &self.status
    }

    fn last_transition(&mut self) -> &mut Option<String> {
        &mut self.last_transition_time
    }
}

impl kapi_core::Strategy for APIService {
    /// kube's strategy: a new APIService has no status until the availability controller
    /// gives it one, but for a local one, which is available from the start.
    fn prepare_for_create(&mut self) {
        self.status = None;
        if self.is_local() {
            self.set_condition(APIServiceCondition {
                r#type: AVAILABLE.into(),
                status: "True".into(),
                last_transition_time: None,
                reason: Some("Local".into()),
                message: Some("Local APIServices are always available".into()),
            });
        }
    }

    fn validate(&self) -> Vec<FieldError> {
        validation::api_service(self)
    }
}
