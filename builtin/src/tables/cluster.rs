//! Nodes, accounts, quotas, autoscalers, budgets and classes (kube's `printNode`,
//! `printSecret`, `printServiceAccount`, `printResourceQuota`,
//! `printHorizontalPodAutoscaler`, `printPodDisruptionBudget`, `printPriorityClass`,
//! `printRuntimeClass`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::{items, number, or_none, quantity, text};

/// A Node's status: `Ready`, `NotReady` or `Unknown`, and `SchedulingDisabled`.
pub(crate) fn node_status(node: &Value) -> Value {
    let ready = (items(node, "/status/conditions").iter()).rfind(|c| text(c, "/type") == "Ready");
    let mut status = vec![match ready {
        None => "Unknown",
        Some(c) if text(c, "/status") == "True" => "Ready",
        Some(_) => "NotReady",
    }];
    if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push("SchedulingDisabled");
    }
    status.join(",").into()
}

/// A Node's roles, from its `node-role.kubernetes.io/<role>` and `kubernetes.io/role`
/// labels.
pub(crate) fn node_roles(node: &Value) -> Value {
    let mut roles = BTreeSet::new();
    for (key, value) in node
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(role) = key
            .strip_prefix("node-role.kubernetes.io/")
            .filter(|r| !r.is_empty())
        {
            roles.insert(role.to_owned());
        } else if key == "kubernetes.io/role" {
            roles.extend(value.as_str().filter(|v| !v.is_empty()).map(str::to_owned));
        }
    }
    or_none(&roles.into_iter().collect::<Vec<_>>().join(","))
}

/// A Node's kubelet version.
pub(crate) fn node_version(node: &Value) -> Value {
    text(node, "/status/nodeInfo/kubeletVersion").into()
}

/// A Node's first address of `kind`.
fn address(node: &Value, kind: &str) -> Value {
    let first = items(node, "/status/addresses")
        .iter()
        .find(|a| text(a, "/type") == kind);
    or_none(first.map(|a| text(a, "/address")).unwrap_or_default())
}

/// A Node's internal IP.
pub(crate) fn node_internal_ip(node: &Value) -> Value {
    address(node, "InternalIP")
}

/// A Node's external IP.
pub(crate) fn node_external_ip(node: &Value) -> Value {
    address(node, "ExternalIP")
}

/// A Node's `nodeInfo` field, `<unknown>` when empty.
fn info(node: &Value, field: &str) -> Value {
    match text(node, &format!("/status/nodeInfo/{field}")) {
        "" => "<unknown>".into(),
        value => value.into(),
    }
}

/// A Node's OS image.
pub(crate) fn node_os_image(node: &Value) -> Value {
    info(node, "osImage")
}

/// A Node's kernel.
pub(crate) fn node_kernel(node: &Value) -> Value {
    info(node, "kernelVersion")
}

/// A Node's container runtime.
pub(crate) fn node_runtime(node: &Value) -> Value {
    info(node, "containerRuntimeVersion")
}

/// A Secret's keys.
pub(crate) fn secret_data(secret: &Value) -> Value {
    (secret
        .get("data")
        .and_then(Value::as_object)
        .map_or(0, |d| d.len()) as i64)
        .into()
}

/// A ServiceAccount's secrets.
pub(crate) fn account_secrets(account: &Value) -> Value {
    (items(account, "/secrets").len() as i64).into()
}

/// A quota's used over hard of each resource whose first part is (`limits`) or is not
/// the limits.
fn quota(object: &Value, limits: bool) -> Value {
    let hard = object.pointer("/status/hard").and_then(Value::as_object);
    let mut names: Vec<&String> = hard.into_iter().flat_map(|h| h.keys()).collect();
    names.sort();
    let shown: Vec<String> = (names.into_iter())
        .filter(|name| (name.split('.').next() == Some("limits")) == limits)
        .map(|name| {
            let used =
                quantity(object.pointer(&format!("/status/used/{}", name.replace('/', "~1"))));
            let hard = quantity(hard.and_then(|h| h.get(name.as_str())));
            format!("{name}: {used}/{hard}")
        })
        .collect();
    shown.join(", ").into()
}

/// A ResourceQuota's requests.
pub(crate) fn quota_requests(object: &Value) -> Value {
    quota(object, false)
}

/// A ResourceQuota's limits.
pub(crate) fn quota_limits(object: &Value) -> Value {
    quota(object, true)
}

/// What an HPA scales: `Kind/name`.
pub(crate) fn hpa_reference(hpa: &Value) -> Value {
    format!(
        "{}/{}",
        text(hpa, "/spec/scaleTargetRef/kind"),
        text(hpa, "/spec/scaleTargetRef/name")
    )
    .into()
}

/// A metric's value as kube prints it: a quantity, or `<unknown>`.
fn metric_value(value: Option<&Value>) -> String {
    match value.filter(|v| !v.is_null()) {
        Some(value) => quantity(Some(value)),
        None => "<unknown>".into(),
    }
}

/// An HPA's targets (kube's `formatHPAMetrics`): current over target per metric, by
/// position, two shown.
pub(crate) fn hpa_targets(hpa: &Value) -> Value {
    let specs = items(hpa, "/spec/metrics");
    if specs.is_empty() {
        return "<none>".into();
    }
    let statuses = items(hpa, "/status/currentMetrics");
    let shown: Vec<String> = (specs.iter().enumerate())
        .map(|(i, spec)| {
            let status = statuses.get(i);
            let kind = text(spec, "/type");
            let source = match kind {
                "External" => "external",
                "Pods" => "pods",
                "Object" => "object",
                "Resource" => "resource",
                "ContainerResource" => "containerResource",
                _ => return "<unknown type>".into(),
            };
            let target = |field: &str| spec.pointer(&format!("/{source}/target/{field}"));
            let current =
                |field: &str| status.and_then(|s| s.pointer(&format!("/{source}/current/{field}")));
            match kind {
                "Pods" => format!(
                    "{}/{}",
                    metric_value(current("averageValue")),
                    metric_value(target("averageValue"))
                ),
                "External" | "Object" if target("averageValue").is_some() => format!(
                    "{}/{} (avg)",
                    metric_value(current("averageValue")),
                    metric_value(target("averageValue"))
                ),
                "External" | "Object" => {
                    format!(
                        "{}/{}",
                        metric_value(current("value")),
                        metric_value(target("value"))
                    )
                }
                _ => {
                    let name = text(spec, &format!("/{source}/name"));
                    if target("averageValue").is_some() {
                        return format!(
                            "{name}: {}/{}",
                            metric_value(current("averageValue")),
                            metric_value(target("averageValue"))
                        );
                    }
                    let percent = |value: Option<&Value>, missing: &str| match value
                        .and_then(Value::as_i64)
                    {
                        Some(n) => format!("{n}%"),
                        None => missing.to_owned(),
                    };
                    let current = percent(current("averageUtilization"), "<unknown>");
                    let target = percent(target("averageUtilization"), "<auto>");
                    format!("{name}: {current}/{target}")
                }
            }
        })
        .collect();
    match shown.len() > 2 {
        true => format!("{} + {} more...", shown[..2].join(", "), shown.len() - 2).into(),
        false => shown.join(", ").into(),
    }
}

/// An HPA's least replicas, `<unset>` when not given.
pub(crate) fn hpa_min_pods(hpa: &Value) -> Value {
    match hpa.pointer("/spec/minReplicas").and_then(Value::as_i64) {
        Some(n) => n.to_string().into(),
        None => "<unset>".into(),
    }
}

/// An HPA's most replicas.
pub(crate) fn hpa_max_pods(hpa: &Value) -> Value {
    number(hpa, "/spec/maxReplicas").into()
}

/// An HPA's current replicas.
pub(crate) fn hpa_replicas(hpa: &Value) -> Value {
    number(hpa, "/status/currentReplicas").into()
}

/// A budget's bound as text (`2`, `50%`), `N/A` when not given.
fn bound(budget: &Value, pointer: &str) -> Value {
    match budget.pointer(pointer) {
        Some(Value::String(s)) => s.clone().into(),
        Some(Value::Number(n)) => n.to_string().into(),
        _ => "N/A".into(),
    }
}

/// A budget's least available pods.
pub(crate) fn budget_min_available(budget: &Value) -> Value {
    bound(budget, "/spec/minAvailable")
}

/// A budget's most unavailable pods.
pub(crate) fn budget_max_unavailable(budget: &Value) -> Value {
    bound(budget, "/spec/maxUnavailable")
}

/// The disruptions a budget allows.
pub(crate) fn budget_allowed(budget: &Value) -> Value {
    number(budget, "/status/disruptionsAllowed").into()
}

/// A PriorityClass's preemption policy, empty when not given.
pub(crate) fn priority_preemption(class: &Value) -> Value {
    text(class, "/preemptionPolicy").into()
}

/// Whether a PriorityClass is the default (false unless said).
pub(crate) fn priority_global_default(class: &Value) -> Value {
    class
        .get("globalDefault")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .into()
}
