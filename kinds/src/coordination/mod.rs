//! `coordination.k8s.io/v1`: Leases, what controllers elect their leader with (client-go's
//! `leaderelection`, controller-runtime, kube-rs): who holds the lease, for how long, when
//! it was acquired and last renewed, and how often it changed hands. Declared like a
//! user's kind, with kube's validation (`pkg/apis/coordination/validation`).

use kapi_core::error::FieldError;
use kapi_core::meta::{MicroTime, ObjectMeta};
use kapi_macros::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A lease: one holder at a time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "coordination.k8s.io",
    kind = "Lease",
    plural = "leases",
    delete_status,
    namespaced,
    printer_column(name = "Holder", type = "string", json_path = ".spec.holderIdentity"),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage)
)]
#[schemars(rename = "io.k8s.api.coordination.v1.Lease")]
pub struct Lease {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Who holds the lease, and until when.
    #[serde(default)]
    pub spec: LeaseSpec,
}

/// The holder of a [`Lease`] and its times.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.coordination.v1.LeaseSpec")]
pub struct LeaseSpec {
    /// The identity of the current holder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_identity: Option<String>,
    /// How long candidates wait after the last renewal before they may take the lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_duration_seconds: Option<i32>,
    /// When the current holder acquired it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquire_time: Option<MicroTime>,
    /// When the current holder last renewed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_time: Option<MicroTime>,
    /// How many times it changed hands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_transitions: Option<i32>,
}

/// Unlike most of kube's own kinds, a Lease is not replaced without a resourceVersion
/// (kube's lease strategy: `AllowUnconditionalUpdate` is false), so two candidates cannot
/// both take it.
impl kapi_core::Strategy for Lease {
    /// kube's `ValidateLeaseSpec`, with its messages (the second's grammar included).
    fn validate(&self) -> Vec<FieldError> {
        let spec = &self.spec;
        let mut errors = Vec::new();
        if let Some(seconds) = spec.lease_duration_seconds.filter(|s| *s <= 0) {
            errors.push(FieldError::invalid(
                "spec.leaseDurationSeconds",
                seconds,
                "must be greater than 0",
            ));
        }
        if let Some(transitions) = spec.lease_transitions.filter(|t| *t < 0) {
            errors.push(FieldError::invalid(
                "spec.leaseTransitions",
                transitions,
                "must to greater or equal than 0",
            ));
        }
        errors
    }
}
