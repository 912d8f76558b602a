//! Certificates and API Priority and Fairness (kube's `printCertificateSigningRequest`,
//! `printFlowSchema`, `printPriorityLevelConfiguration`).

use serde_json::Value;

use super::{items, or_none, text};
use kapi::api::cells;

/// A CSR's signer, `<none>` when not given.
pub(crate) fn csr_signer(csr: &Value) -> Value {
    or_none(text(csr, "/spec/signerName"))
}

/// The certificate's duration the CSR asks for, `<none>` when it does not.
pub(crate) fn csr_requested_duration(csr: &Value) -> Value {
    match csr
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
    {
        Some(seconds) => cells::human_duration(seconds).into(),
        None => "<none>".into(),
    }
}

/// A CSR's condition (kube's `extractCSRStatus`): denied, else approved, else pending, by
/// the conditions' types alone; then `,Failed` and `,Issued`.
pub(crate) fn csr_condition(csr: &Value) -> Value {
    let types: Vec<&str> = (items(csr, "/status/conditions").iter())
        .filter_map(|c| c.get("type").and_then(Value::as_str))
        .collect();
    let mut status = if types.contains(&"Denied") {
        "Denied".to_owned()
    } else if types.contains(&"Approved") {
        "Approved".to_owned()
    } else {
        "Pending".to_owned()
    };
    if types.contains(&"Failed") {
        status.push_str(",Failed");
    }
    if !text(csr, "/status/certificate").is_empty() {
        status.push_str(",Issued");
    }
    status.into()
}

/// A FlowSchema's precedence: a number in a column declared text, as kube's printer puts it.
pub(crate) fn flow_schema_precedence(schema: &Value) -> Value {
    super::number(schema, "/spec/matchingPrecedence").into()
}

/// How a FlowSchema tells flows apart, `<none>` when it does not.
pub(crate) fn flow_schema_distinguisher(schema: &Value) -> Value {
    or_none(text(schema, "/spec/distinguisherMethod/type"))
}

/// Whether the FlowSchema's priority level is missing: its `Dangling` condition's status,
/// `?` without one.
pub(crate) fn flow_schema_missing_level(schema: &Value) -> Value {
    (items(schema, "/status/conditions").iter())
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Dangling"))
        .and_then(|c| c.get("status").and_then(Value::as_str))
        .unwrap_or("?")
        .into()
}

/// A queuing priority level's `field` of its queuing, `<none>` for an exempt level or a
/// limit that does not queue.
fn queuing(level: &Value, field: &str) -> Value {
    match level.pointer("/spec/limited/limitResponse/queuing") {
        Some(queuing) => super::number(queuing, &format!("/{field}")).into(),
        None => "<none>".into(),
    }
}

/// A priority level's nominal concurrency shares.
pub(crate) fn level_shares(level: &Value) -> Value {
    match level.pointer("/spec/limited") {
        Some(limited) => super::number(limited, "/nominalConcurrencyShares").into(),
        None => "<none>".into(),
    }
}

/// A queuing priority level's queues.
pub(crate) fn level_queues(level: &Value) -> Value {
    queuing(level, "queues")
}

/// A queuing priority level's hand size.
pub(crate) fn level_hand_size(level: &Value) -> Value {
    queuing(level, "handSize")
}

/// A queuing priority level's queue length limit.
pub(crate) fn level_queue_length(level: &Value) -> Value {
    queuing(level, "queueLengthLimit")
}
