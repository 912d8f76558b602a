//! Prometheus metrics under kube-apiserver 1.32's names, label sets and buckets, so that
//! dashboards and alerts written for kube-apiserver read kapi unchanged.
//!
//! One process-wide set ([`global`]), as kube's `legacyregistry`: the layers that observe
//! something (the handler chain, the watch endpoint, the watch cache, storage, audit)
//! record into it directly; [`exposition`] renders it for `/metrics`, after refreshing
//! the figures read at scrape time (objects per resource, storage size, process).
//!
//! Label values are bounded: requests are recorded only for the resources the server
//! serves and its health endpoints (the API server's filters decide which), never for an
//! arbitrary path.

pub mod exposition;
mod process;

use std::sync::OnceLock;

use fastmetrics::derive::LabelSet;
pub use fastmetrics::metrics::counter::Counter;
use fastmetrics::metrics::family::Family;
pub use fastmetrics::metrics::gauge::Gauge;
pub use fastmetrics::metrics::histogram::Histogram;
use fastmetrics::registry::Registry;

/// kube's latency buckets (`apiserver_request_duration_seconds`,
/// `etcd_request_duration_seconds`), in seconds.
pub const LATENCY_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// kube's admission webhook latency buckets, in seconds.
pub const WEBHOOK_BUCKETS: [f64; 6] = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5];
/// kube's buckets of `apiserver_validating_admission_policy_check_duration_seconds`.
pub const POLICY_CHECK_BUCKETS: [f64; 5] = [0.0000005, 0.001, 0.01, 0.1, 1.0];
/// kube's buckets of `apiserver_admission_match_condition_evaluation_seconds`.
pub const MATCH_CONDITION_BUCKETS: [f64; 7] = [0.001, 0.005, 0.01, 0.025, 0.1, 0.2, 0.25];

/// `apiserver_response_sizes`: 1 kB to 1 GB, by tens.
pub const RESPONSE_SIZE_BUCKETS: [f64; 7] = [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/// `apiserver_watch_events_sizes`: 1 KiB to 128 KiB, by twos.
pub const WATCH_EVENT_SIZE_BUCKETS: [f64; 8] = [
    1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0,
];

/// What a request is for: the labels of `apiserver_response_sizes` and
/// `apiserver_longrunning_requests`, and the base of every request metric's.
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
pub struct RouteLabels {
    /// `GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`, or `other`.
    pub verb: &'static str,
    /// The API group (empty for the core group and health checks).
    pub group: &'static str,
    /// The API version.
    pub version: &'static str,
    /// The resource (plural).
    pub resource: &'static str,
    /// The subresource; for a health check, its path.
    pub subresource: &'static str,
    /// `cluster`, `namespace`, `resource`, or `""` for a health check.
    pub scope: &'static str,
    /// `apiserver`, or `""` for a health check.
    pub component: &'static str,
}

/// A request's labels (`apiserver_request_duration_seconds`); the code is added when it
/// is answered ([`CodeLabels`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
pub struct RequestLabels {
    /// What it is for.
    #[label(flatten)]
    pub route: RouteLabels,
    /// `""`, `All`, or `invalid`.
    pub dry_run: &'static str,
}

/// A request's labels with its response code (`apiserver_request_total`,
/// `apiserver_request_terminations_total`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
pub struct CodeLabels {
    /// The request's labels.
    #[label(flatten)]
    pub request: RequestLabels,
    /// The HTTP status.
    pub code: u16,
}

impl RequestLabels {
    /// With the response code.
    pub fn with_code(&self, code: u16) -> CodeLabels {
        CodeLabels {
            request: self.clone(),
            code,
        }
    }
}

/// `readOnly` or `mutating`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct KindOfRequest {
    pub request_kind: &'static str,
}

/// A served kind (`apiserver_watch_events_total`, `apiserver_registered_watchers`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct KindLabels {
    pub group: String,
    pub version: String,
    pub kind: String,
}

/// One call of an admission webhook (`apiserver_admission_webhook_admission_duration_seconds`):
/// its name, `admit` (mutating) or `validating`, the operation, and whether it refused.
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct WebhookLabels {
    pub name: String,
    #[label(rename = "type")]
    pub type_: String,
    pub operation: String,
    pub rejected: String,
}

/// A ValidatingAdmissionPolicy's verdict on a write
/// (`apiserver_validating_admission_policy_check_total` and `..._duration_seconds`):
/// `error_type` is `no_error`, `compile_error`, `invalid_error` or `out_of_budget`;
/// `enforcement_action` `allow`, `deny`, `warn` or `audit`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct PolicyCheckLabels {
    pub policy: String,
    pub policy_binding: String,
    pub error_type: String,
    pub enforcement_action: String,
}

/// One mutation of a MutatingAdmissionPolicy on a write
/// (`apiserver_mutating_admission_policy_check_total` and `..._duration_seconds`):
/// `error_type` is `no_error`, `compile_error`, `invalid_error` or `out_of_budget`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct MutationCheckLabels {
    pub policy: String,
    pub policy_binding: String,
    pub error_type: String,
}

/// A match condition's evaluation (`apiserver_admission_match_condition_*`): the webhook's
/// or policy's name, `webhook` or `policy`, `admit`/`validating` (`validate` in
/// exclusions), and the operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct MatchConditionLabels {
    pub name: String,
    pub kind: String,
    #[label(rename = "type")]
    pub type_: String,
    pub operation: String,
}

/// A write an admission webhook refused or failed (`apiserver_admission_webhook_rejection_count`):
/// `error_type` is `calling_webhook_error` when it could not be called, `no_error` when it
/// refused; `rejection_code` the HTTP code answered.
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct WebhookRejectionLabels {
    pub name: String,
    #[label(rename = "type")]
    pub type_: String,
    pub operation: String,
    pub error_type: String,
    pub rejection_code: String,
}

/// An APIService (`aggregator_unavailable_apiservice`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct ApiServiceLabels {
    pub name: String,
}

/// An APIService marked unavailable, and why (`aggregator_unavailable_apiservice_total`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct ApiServiceReasonLabels {
    pub name: String,
    pub reason: String,
}

/// A stored resource, `webapps.apps.example.dev` (`configmaps` in the core group).
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct ResourceLabels {
    pub resource: String,
}

/// A consistent list of a resource (`apiserver_watch_cache_consistent_read_total`): whether
/// it succeeded, and whether storage answered it rather than the watch cache.
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct ConsistentReadLabels {
    pub resource: String,
    pub success: &'static str,
    pub fallback: &'static str,
}

/// A storage operation on a resource (`etcd_request_duration_seconds`): kube 1.32's `type`
/// is the group-resource.
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct StorageLabels {
    pub operation: &'static str,
    #[label(rename = "type")]
    pub kind: String,
}

/// The storage backend (`apiserver_storage_size_bytes`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, LabelSet)]
#[allow(missing_docs)] // The fields are the label names.
pub struct StorageClusterLabels {
    pub storage_cluster_id: &'static str,
}

/// Every metric kapi exports.
pub struct Metrics {
    /// The families under their Prometheus text names (counters end in `_total`).
    text: Registry,
    /// Their names.
    names: Vec<&'static str>,
    /// The same families under their OpenMetrics names (a counter's family name has no
    /// `_total`; its samples do).
    openmetrics: Registry,
    /// `apiserver_request_total`.
    pub requests: Family<CodeLabels, Counter>,
    /// `apiserver_request_duration_seconds`.
    pub request_duration: Family<RequestLabels, Histogram>,
    /// `apiserver_response_sizes`.
    pub response_sizes: Family<RouteLabels, Histogram>,
    /// `apiserver_request_terminations_total`.
    pub terminations: Family<CodeLabels, Counter>,
    /// `apiserver_current_inflight_requests`.
    pub inflight: Family<KindOfRequest, Gauge>,
    /// `apiserver_dropped_requests_total`.
    pub dropped: Family<KindOfRequest, Counter>,
    /// `apiserver_longrunning_requests`.
    pub longrunning: Family<RouteLabels, Gauge>,
    /// `apiserver_registered_watchers`.
    pub registered_watchers: Family<KindLabels, Gauge>,
    /// `apiserver_watch_events_total`.
    pub watch_events: Family<KindLabels, Counter>,
    /// `apiserver_watch_events_sizes`.
    pub watch_event_sizes: Family<KindLabels, Histogram>,
    /// `apiserver_watch_cache_events_dispatched_total`.
    pub cache_events_dispatched: Family<ResourceLabels, Counter>,
    /// `apiserver_terminated_watchers_total`.
    pub terminated_watchers: Family<ResourceLabels, Counter>,
    /// `apiserver_watch_cache_consistent_read_total`.
    pub consistent_reads: Family<ConsistentReadLabels, Counter>,
    /// `apiserver_storage_objects`.
    pub storage_objects: Family<ResourceLabels, Gauge>,
    /// `apiserver_storage_size_bytes`.
    pub storage_size: Family<StorageClusterLabels, Gauge>,
    /// `etcd_request_duration_seconds`.
    pub storage_duration: Family<StorageLabels, Histogram>,
    /// `etcd_requests_total`.
    pub storage_requests: Family<StorageLabels, Counter>,
    /// `etcd_request_errors_total`.
    pub storage_errors: Family<StorageLabels, Counter>,
    /// `apiserver_admission_webhook_admission_duration_seconds`.
    pub webhook_duration: Family<WebhookLabels, Histogram>,
    /// `apiserver_admission_webhook_rejection_count`.
    pub webhook_rejections: Family<WebhookRejectionLabels, Counter>,
    /// `apiserver_validating_admission_policy_check_total`.
    pub policy_checks: Family<PolicyCheckLabels, Counter>,
    /// `apiserver_validating_admission_policy_check_duration_seconds`.
    pub policy_check_duration: Family<PolicyCheckLabels, Histogram>,
    /// `apiserver_mutating_admission_policy_check_total`.
    pub mutation_checks: Family<MutationCheckLabels, Counter>,
    /// `apiserver_mutating_admission_policy_check_duration_seconds`.
    pub mutation_check_duration: Family<MutationCheckLabels, Histogram>,
    /// `apiserver_admission_match_condition_evaluation_errors_total`.
    pub match_condition_errors: Family<MatchConditionLabels, Counter>,
    /// `apiserver_admission_match_condition_exclusions_total`.
    pub match_condition_exclusions: Family<MatchConditionLabels, Counter>,
    /// `apiserver_admission_match_condition_evaluation_seconds`.
    pub match_condition_duration: Family<MatchConditionLabels, Histogram>,
    /// `aggregator_unavailable_apiservice`: 1 while an APIService is not available.
    pub unavailable_apiservices: Family<ApiServiceLabels, Gauge>,
    /// `aggregator_unavailable_apiservice_total`.
    pub unavailable_apiservice_marks: Family<ApiServiceReasonLabels, Counter>,
    /// `apiserver_audit_event_total`.
    pub audit_events: Counter,
    /// `apiserver_audit_requests_rejected_total`.
    pub audit_rejected: Counter,
}

/// The process-wide metrics.
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

fn histograms<L>(buckets: &'static [f64]) -> Family<L, Histogram> {
    Family::new(move || Histogram::new(buckets.iter().copied()))
}

impl Metrics {
    fn new() -> Metrics {
        let metrics = Metrics {
            text: Registry::default(),
            names: Vec::new(),
            openmetrics: Registry::default(),
            requests: Family::default(),
            request_duration: histograms(&LATENCY_BUCKETS),
            response_sizes: histograms(&RESPONSE_SIZE_BUCKETS),
            terminations: Family::default(),
            inflight: Family::default(),
            dropped: Family::default(),
            longrunning: Family::default(),
            registered_watchers: Family::default(),
            watch_events: Family::default(),
            watch_event_sizes: histograms(&WATCH_EVENT_SIZE_BUCKETS),
            cache_events_dispatched: Family::default(),
            terminated_watchers: Family::default(),
            consistent_reads: Family::default(),
            storage_objects: Family::default(),
            storage_size: Family::default(),
            storage_duration: histograms(&LATENCY_BUCKETS),
            storage_requests: Family::default(),
            storage_errors: Family::default(),
            webhook_duration: histograms(&WEBHOOK_BUCKETS),
            webhook_rejections: Family::default(),
            policy_checks: Family::default(),
            policy_check_duration: histograms(&POLICY_CHECK_BUCKETS),
            mutation_checks: Family::default(),
            mutation_check_duration: histograms(&POLICY_CHECK_BUCKETS),
            match_condition_errors: Family::default(),
            match_condition_exclusions: Family::default(),
            match_condition_duration: histograms(&MATCH_CONDITION_BUCKETS),
            unavailable_apiservices: Family::default(),
            unavailable_apiservice_marks: Family::default(),
            audit_events: Counter::default(),
            audit_rejected: Counter::default(),
        };
        // The families are shared handles: each registry holds clones of them.
        let mut text = Registry::default();
        let names = metrics.register_all(&mut text, false);
        let mut openmetrics = Registry::default();
        metrics.register_all(&mut openmetrics, true);
        Metrics {
            text,
            names,
            openmetrics,
            ..metrics
        }
    }

    /// Registers every metric under kube's name and help text (its stability prefix
    /// included).
    ///
    /// # Panics
    ///
    /// On an invalid or repeated name: a fixed set, so a bug caught by any test.
    /// Returns the text-format names.
    fn register_all(&self, registry: &mut Registry, openmetrics: bool) -> Vec<&'static str> {
        let mut names = process::NAMES.to_vec();
        macro_rules! register {
            ($name:literal, $help:literal, $metric:expr) => {
                names.push($name);
                let name = match $name.strip_suffix("_total") {
                    Some(family) if openmetrics => family,
                    _ => $name,
                };
                if let Err(e) = registry.register(name, $help, $metric.clone()) {
                    panic!("registering {name}: {e}");
                }
            };
        }
        register!(
            "apiserver_request_total",
            "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            self.requests
        );
        register!(
            "apiserver_request_duration_seconds",
            "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            self.request_duration
        );
        register!(
            "apiserver_response_sizes",
            "[STABLE] Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
            self.response_sizes
        );
        register!(
            "apiserver_request_terminations_total",
            "[ALPHA] Number of requests which apiserver terminated in self-defense.",
            self.terminations
        );
        register!(
            "apiserver_current_inflight_requests",
            "[STABLE] Number of requests of each kind (readOnly, mutating) being served now under the max-in-flight limits.",
            self.inflight
        );
        register!(
            "apiserver_dropped_requests_total",
            "[ALPHA] Number of requests dropped with 'Try again later' response (the max-in-flight filter's 429s).",
            self.dropped
        );
        register!(
            "apiserver_longrunning_requests",
            "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.",
            self.longrunning
        );
        register!(
            "apiserver_registered_watchers",
            "[ALPHA] Number of currently registered watchers for a given resources",
            self.registered_watchers
        );
        register!(
            "apiserver_watch_events_total",
            "[ALPHA] Number of events sent in watch clients",
            self.watch_events
        );
        register!(
            "apiserver_watch_events_sizes",
            "[ALPHA] Watch event size distribution in bytes",
            self.watch_event_sizes
        );
        register!(
            "apiserver_watch_cache_events_dispatched_total",
            "[ALPHA] Counter of events dispatched in watch cache broken by resource type.",
            self.cache_events_dispatched
        );
        register!(
            "apiserver_terminated_watchers_total",
            "[ALPHA] Counter of watchers closed due to unresponsiveness broken by resource type.",
            self.terminated_watchers
        );
        register!(
            "apiserver_watch_cache_consistent_read_total",
            "[ALPHA] Counter for consistent reads from cache.",
            self.consistent_reads
        );
        register!(
            "apiserver_storage_objects",
            "[STABLE] Number of stored objects at the time of last check split by kind.",
            self.storage_objects
        );
        register!(
            "apiserver_storage_size_bytes",
            "[STABLE] Size of the storage database file physically allocated in bytes.",
            self.storage_size
        );
        register!(
            "apiserver_admission_webhook_admission_duration_seconds",
            "[STABLE] Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
            self.webhook_duration
        );
        register!(
            "apiserver_admission_webhook_rejection_count",
            "[ALPHA] Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
            self.webhook_rejections
        );
        register!(
            "apiserver_validating_admission_policy_check_total",
            "[BETA] Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.",
            self.policy_checks
        );
        register!(
            "apiserver_validating_admission_policy_check_duration_seconds",
            "[BETA] Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.",
            self.policy_check_duration
        );
        register!(
            "apiserver_mutating_admission_policy_check_total",
            "[ALPHA] Mutations of writes by MutatingAdmissionPolicies, by policy, binding and error type.",
            self.mutation_checks
        );
        register!(
            "apiserver_mutating_admission_policy_check_duration_seconds",
            "[ALPHA] How long each mutation of a MutatingAdmissionPolicy took, in seconds, by policy, binding and error type.",
            self.mutation_check_duration
        );
        register!(
            "apiserver_admission_match_condition_evaluation_errors_total",
            "[ALPHA] Admission match condition evaluation errors count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit).",
            self.match_condition_errors
        );
        register!(
            "apiserver_admission_match_condition_exclusions_total",
            "[ALPHA] Admission match condition evaluation exclusions count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit).",
            self.match_condition_exclusions
        );
        register!(
            "apiserver_admission_match_condition_evaluation_seconds",
            "[ALPHA] Admission match condition evaluation time in seconds, identified by name and broken out for each kind containing matchConditions (webhook or policy), operation and type (validate or admit).",
            self.match_condition_duration
        );
        register!(
            "aggregator_unavailable_apiservice",
            "[ALPHA] Gauge of APIServices which are marked as unavailable broken down by APIService name.",
            self.unavailable_apiservices
        );
        register!(
            "aggregator_unavailable_apiservice_total",
            "[ALPHA] Counter of APIServices which are marked as unavailable broken down by APIService name and reason.",
            self.unavailable_apiservice_marks
        );
        register!(
            "etcd_request_duration_seconds",
            "[ALPHA] Etcd request latency in seconds for each operation and object type.",
            self.storage_duration
        );
        register!(
            "etcd_requests_total",
            "[ALPHA] Etcd request counts for each operation and object type.",
            self.storage_requests
        );
        register!(
            "etcd_request_errors_total",
            "[ALPHA] Etcd failed request counts for each operation and object type.",
            self.storage_errors
        );
        register!(
            "apiserver_audit_event_total",
            "[ALPHA] Counter of audit events generated and sent to the audit backend.",
            self.audit_events
        );
        register!(
            "apiserver_audit_requests_rejected_total",
            "[ALPHA] Counter of apiserver requests rejected due to an error in audit logging backend.",
            self.audit_rejected
        );
        process::register(registry, openmetrics)
            .unwrap_or_else(|e| panic!("registering process metrics: {e}"));
        names
    }

    /// The name of every metric family exported, in the text format.
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// The registry of the text format, or of OpenMetrics.
    pub(crate) fn registry(&self, openmetrics: bool) -> &Registry {
        if openmetrics {
            &self.openmetrics
        } else {
            &self.text
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::global;

    /// The metric names of a PromQL expression: identifiers followed by a selector's `{`
    /// or a range's `[` (the dashboard writes every metric with a `job` selector).
    fn names_in(expr: &str, names: &mut BTreeSet<String>) {
        let mut start = None;
        for (i, b) in expr.bytes().enumerate() {
            let ident = b.is_ascii_alphanumeric() || b == b'_' || b == b':';
            match (start, ident) {
                (None, true) => start = Some(i),
                (Some(s), false) => {
                    if b == b'{' || b == b'[' {
                        names.insert(expr[s..i].to_owned());
                    }
                    start = None;
                }
                _ => {}
            }
        }
    }

    fn exprs(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                (map.iter()).for_each(|(key, value)| match (key.as_str(), value) {
                    ("expr", Value::String(expr)) => out.push(expr.clone()),
                    _ => exprs(value, out),
                })
            }
            Value::Array(items) => items.iter().for_each(|v| exprs(v, out)),
            _ => {}
        }
    }

    /// The Grafana dashboard in `deploy/grafana/` queries only metrics kapi exports (a
    /// histogram's `_bucket`, `_sum` and `_count` series are its family's).
    #[test]
    fn the_dashboard_queries_only_exported_metrics() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/grafana/kapi.json");
        let dashboard: Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut queries = Vec::new();
        exprs(&dashboard, &mut queries);
        assert!(queries.len() >= 10, "{queries:?}");
        let mut queried = BTreeSet::new();
        for query in &queries {
            names_in(query, &mut queried);
        }
        let exported: BTreeSet<&str> = global().names().iter().copied().collect();
        let missing: Vec<&String> = (queried.iter())
            .filter(|name| {
                let family = ["_bucket", "_sum", "_count"]
                    .iter()
                    .find_map(|suffix| name.strip_suffix(suffix))
                    .unwrap_or(name);
                !exported.contains(name.as_str()) && !exported.contains(family)
            })
            .collect();
        assert!(
            missing.is_empty(),
            "the dashboard queries {missing:?}, not exported"
        );
        // Each panel reads something: the check saw every query.
        assert!(queried.len() >= 15, "{queried:?}");
    }
}
