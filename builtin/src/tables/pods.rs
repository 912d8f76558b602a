//! Pods and pod templates (kube's `printPod`, `printPodTemplate`).

use serde_json::Value;

use super::{containers, format_labels, items, number, or_none, text};
use kapi::api::cells;

/// Whether a condition of `kind` is `True` (the first of that type, as kube looks).
fn condition(object: &Value, kind: &str) -> bool {
    (items(object, "/status/conditions").iter())
        .find(|c| text(c, "/type") == kind)
        .is_some_and(|c| text(c, "/status") == "True")
}

/// Whether an init container restarts always (a sidecar).
fn restartable(container: &Value) -> bool {
    text(container, "/restartPolicy") == "Always"
}

/// What kube's `printPod` reads of a Pod's containers: ready and total, restarts and when
/// the last one ended, and the reason shown as its status.
struct Summary {
    ready: usize,
    total: usize,
    restarts: i64,
    last_restart: Option<String>,
    reason: String,
}

/// The later of two RFC 3339 times (they compare as strings when both are UTC `Z` times,
/// as kube writes them).
fn later(a: Option<String>, b: &str) -> Option<String> {
    match a {
        Some(a) if a.as_str() >= b => Some(a),
        _ if b.is_empty() => None,
        _ => Some(b.to_owned()),
    }
}

fn summary(pod: &Value) -> Summary {
    let init = items(pod, "/spec/initContainers");
    let total =
        items(pod, "/spec/containers").len() + init.iter().filter(|c| restartable(c)).count();
    let mut ready = 0;
    let mut restarts = 0;
    let mut sidecar_restarts = 0;
    let mut last_restart = None;
    let mut last_sidecar_restart = None;
    let mut reason = text(pod, "/status/phase").to_owned();
    if !text(pod, "/status/reason").is_empty() {
        reason = text(pod, "/status/reason").to_owned();
    }
    let gated = (items(pod, "/status/conditions").iter())
        .any(|c| text(c, "/type") == "PodScheduled" && text(c, "/reason") == "SchedulingGated");
    if gated {
        reason = "SchedulingGated".into();
    }
    let mut initializing = false;
    for (i, status) in items(pod, "/status/initContainerStatuses")
        .iter()
        .enumerate()
    {
        let name = text(status, "/name");
        let sidecar = init
            .iter()
            .any(|c| text(c, "/name") == name && restartable(c));
        restarts += number(status, "/restartCount");
        let finished = text(status, "/lastState/terminated/finishedAt");
        last_restart = later(last_restart, finished);
        if sidecar {
            sidecar_restarts += number(status, "/restartCount");
            last_sidecar_restart = later(last_sidecar_restart, finished);
        }
        let terminated = status.pointer("/state/terminated");
        let waiting_reason = text(status, "/state/waiting/reason");
        if terminated.is_some() && number(status, "/state/terminated/exitCode") == 0 {
            continue;
        }
        if sidecar && status.get("started").and_then(Value::as_bool) == Some(true) {
            if status.get("ready").and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        }
        reason = if terminated.is_some() {
            match text(status, "/state/terminated/reason") {
                "" if number(status, "/state/terminated/signal") != 0 => {
                    format!("Init:Signal:{}", number(status, "/state/terminated/signal"))
                }
                "" => format!(
                    "Init:ExitCode:{}",
                    number(status, "/state/terminated/exitCode")
                ),
                why => format!("Init:{why}"),
            }
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{}", init.len())
        };
        initializing = true;
        break;
    }
    let initialized = (items(pod, "/status/conditions").iter())
        .find(|c| text(c, "/type") == "Initialized")
        .is_some_and(|c| text(c, "/status") == "True");
    if !initializing || initialized {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut running = false;
        for status in items(pod, "/status/containerStatuses").iter().rev() {
            restarts += number(status, "/restartCount");
            last_restart = later(
                last_restart,
                text(status, "/lastState/terminated/finishedAt"),
            );
            let waiting = text(status, "/state/waiting/reason");
            let terminated = status.pointer("/state/terminated");
            if !waiting.is_empty() {
                reason = waiting.to_owned();
            } else if terminated.is_some() && !text(status, "/state/terminated/reason").is_empty() {
                reason = text(status, "/state/terminated/reason").to_owned();
            } else if terminated.is_some() {
                reason = match number(status, "/state/terminated/signal") {
                    0 => format!("ExitCode:{}", number(status, "/state/terminated/exitCode")),
                    signal => format!("Signal:{signal}"),
                };
            } else if status.get("ready").and_then(Value::as_bool) == Some(true)
                && status.pointer("/state/running").is_some()
            {
                running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && running {
            reason = match condition(pod, "Ready") {
                true => "Running".into(),
                false => "NotReady".into(),
            };
        }
    }
    let deleting = pod
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null());
    if deleting && text(pod, "/status/reason") == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && !matches!(text(pod, "/status/phase"), "Succeeded" | "Failed") {
        reason = "Terminating".into();
    }
    Summary {
        ready,
        total,
        restarts,
        last_restart,
        reason,
    }
}

/// A Pod's READY: ready containers over containers (sidecars count).
pub(crate) fn pod_ready(pod: &Value) -> Value {
    let summary = summary(pod);
    format!("{}/{}", summary.ready, summary.total).into()
}

/// A Pod's STATUS: its phase, or the reason its containers give.
pub(crate) fn pod_status(pod: &Value) -> Value {
    summary(pod).reason.into()
}

/// A Pod's RESTARTS, with how long ago the last one ended (deferred).
pub(crate) fn pod_restarts(pod: &Value) -> Value {
    let summary = summary(pod);
    match (summary.restarts, summary.last_restart) {
        (0, _) | (_, None) => summary.restarts.to_string().into(),
        (restarts, Some(finished)) => {
            cells::since(&format!("{restarts} ("), Some(&finished), " ago)")
        }
    }
}

/// A Pod's IP (its first in `podIPs`).
pub(crate) fn pod_ip(pod: &Value) -> Value {
    let first = items(pod, "/status/podIPs")
        .first()
        .map(|ip| text(ip, "/ip"))
        .unwrap_or_default();
    or_none(first)
}

/// A Pod's node.
pub(crate) fn pod_node(pod: &Value) -> Value {
    or_none(text(pod, "/spec/nodeName"))
}

/// The node nominated for a Pod.
pub(crate) fn pod_nominated_node(pod: &Value) -> Value {
    or_none(text(pod, "/status/nominatedNodeName"))
}

/// A Pod's readiness gates met over its gates.
pub(crate) fn pod_readiness_gates(pod: &Value) -> Value {
    let gates = items(pod, "/spec/readinessGates");
    if gates.is_empty() {
        return "<none>".into();
    }
    let met = gates
        .iter()
        .filter(|g| condition(pod, text(g, "/conditionType")))
        .count();
    format!("{met}/{}", gates.len()).into()
}

/// A PodTemplate's containers.
pub(crate) fn template_containers(template: &Value) -> Value {
    containers(items(template, "/template/spec/containers")).0
}

/// A PodTemplate's images.
pub(crate) fn template_images(template: &Value) -> Value {
    containers(items(template, "/template/spec/containers")).1
}

/// A PodTemplate's pod labels.
pub(crate) fn template_labels(template: &Value) -> Value {
    format_labels(template.pointer("/template/metadata/labels"))
}
