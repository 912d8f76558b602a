//! `flowcontrol.apiserver.k8s.io/v1`: API Priority and Fairness' precedence, shares and
//! queues.

use super::{or, or_zero};
use crate::api::flowcontrol::v1::{
    ExemptPriorityLevelConfiguration, FlowSchemaSpec, LimitedPriorityLevelConfiguration,
    QueuingConfiguration,
};

pub(crate) fn flow_schema_spec(spec: &mut FlowSchemaSpec) {
    or_zero(&mut spec.matching_precedence, 1000);
}

pub(crate) fn exempt_priority_level_configuration(exempt: &mut ExemptPriorityLevelConfiguration) {
    or(&mut exempt.nominal_concurrency_shares, 0);
    or(&mut exempt.lendable_percent, 0);
}

/// Thirty shares (an explicit zero is kept), none lent.
pub(crate) fn limited_priority_level_configuration(
    limited: &mut LimitedPriorityLevelConfiguration,
) {
    or(&mut limited.nominal_concurrency_shares, 30);
    or(&mut limited.lendable_percent, 0);
}

/// 64 queues, hands of 8, 50 requests a queue.
pub(crate) fn queuing_configuration(queuing: &mut QueuingConfiguration) {
    or_zero(&mut queuing.hand_size, 8);
    or_zero(&mut queuing.queues, 64);
    or_zero(&mut queuing.queue_length_limit, 50);
}
