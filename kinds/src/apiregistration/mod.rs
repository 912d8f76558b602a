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
//! Declared by the generator from kube-aggregator's own description (`api::apiregistration`,
//! with kapi's `url`), with kube's defaults (a service's port 443) and kube's validation
//! (`validation`) here.

mod validation;

use kapi_core::error::FieldError;

/// The group of APIServices.
pub const GROUP: &str = "apiregistration.k8s.io";

/// The condition the availability controller keeps.
pub const AVAILABLE: &str = "Available";

pub use crate::api::apiregistration::v1::{
    APIService, APIServiceCondition, APIServiceSpec, APIServiceStatus, ServiceReference,
};

/// kube's SERVICE column: `Local`, or `namespace/name` (kapi's `url` as it is).
pub(crate) fn service_cell(service: &serde_json::Value) -> serde_json::Value {
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
pub(crate) fn available_cell(service: &serde_json::Value) -> serde_json::Value {
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
        (self.status.conditions.iter()).find(|c| c.r#type == AVAILABLE)
    }

    /// Whether the server's certificate goes unchecked.
    pub fn insecure(&self) -> bool {
        self.spec.insecure_skip_tls_verify
    }

    /// Whether this server serves the group-version itself.
    pub fn is_local(&self) -> bool {
        self.spec.service.is_none() && self.spec.url.is_none()
    }

    /// kube's `SetAPIServiceCondition`: sets the condition of its type, its transition
    /// time now unless its status stays the same.
    pub fn set_condition(&mut self, condition: APIServiceCondition) {
        kapi_core::meta::set_condition(&mut self.status.conditions, condition);
    }
}

impl APIService {
    /// kube's `SetDefaults_ServiceReference`: a Service's port is 443 unless given.
    fn default_port(&mut self) {
        if let Some(service) = self.spec.service.as_mut() {
            service.port.get_or_insert(443);
        }
    }
}

impl kapi_core::meta::StatusCondition for APIServiceCondition {
    fn condition_type(&self) -> &str {
        &self.r#type
    }

    fn condition_status(&self) -> &str {
        &self.status
    }

    fn last_transition(&mut self) -> &mut Option<kapi_core::meta::Time> {
        &mut self.last_transition_time
    }
}

impl kapi_core::Strategy for APIService {
    /// kube's strategy: a new APIService has no status until the availability controller
    /// gives it one, but for a local one, which is available from the start.
    fn prepare_for_create(&mut self) {
        self.default_port();
        self.status = APIServiceStatus::default();
        if self.is_local() {
            self.set_condition(APIServiceCondition {
                r#type: AVAILABLE.into(),
                status: "True".into(),
                last_transition_time: None,
                reason: "Local".into(),
                message: "Local APIServices are always available".into(),
            });
        }
    }

    fn prepare_for_update(&mut self, _old: &Self) {
        self.default_port();
    }

    fn validate(&self) -> Vec<FieldError> {
        validation::api_service(self)
    }
}
