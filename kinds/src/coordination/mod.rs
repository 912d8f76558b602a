//! `coordination.k8s.io/v1`: Leases, what controllers elect their leader with (client-go's
//! `leaderelection`, controller-runtime, kube-rs): who holds the lease, for how long, when
//! it was acquired and last renewed, and how often it changed hands. Generated with
//! kube's other kinds ([`crate::api::coordination::v1`]), with kube's validation
//! (`pkg/apis/coordination/validation`).

use kapi_core::error::FieldError;

pub use crate::api::coordination::v1::{Lease, LeaseSpec};

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
