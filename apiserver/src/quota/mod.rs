//! Resource quota usage (kube's quota evaluators, `pkg/quota/v1/evaluator/core` and the
//! generic object counter): what one object counts against a ResourceQuota's resources,
//! whether a quota's scopes match it, and the usage of a namespace. The `ResourceQuota`
//! admission plugin (`admission::resource_quota`) charges writes against it; the quota
//! controller (`controllers::resource_quota`) keeps quotas' status from it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use kapi_core::error::ApiError;
use kapi_core::quantity::Quantity;
use kapi_registry::{Registry, Target};

/// Resource names and amounts.
pub(crate) type Usage = BTreeMap<String, Quantity>;

/// The kinds kube never counts (reviews, events, bindings).
const IGNORED: &[(&str, &str)] = &[
    ("", "bindings"),
    ("", "componentstatuses"),
    ("", "events"),
    ("events.k8s.io", "events"),
    ("authentication.k8s.io", "tokenreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
];

/// Whether objects of `group`/`plural` are counted at all.
pub(crate) fn counted(group: &str, plural: &str) -> bool {
    !IGNORED.contains(&(group, plural))
}

/// The object count resource of `group`/`plural` (`count/pods`, `count/deployments.apps`).
pub(crate) fn count_name(group: &str, plural: &str) -> String {
    match group.is_empty() {
        true => format!("count/{plural}"),
        false => format!("count/{plural}.{group}"),
    }
}

fn one() -> Quantity {
    Quantity::new(1, kapi_core::quantity::Format::DecimalSi)
}

fn number(n: usize) -> Quantity {
    Quantity::new(n as i64, kapi_core::quantity::Format::DecimalSi)
}

fn quantity(value: &Value) -> Option<Quantity> {
    value.as_str().and_then(|q| Quantity::parse(q).ok())
}

/// What `object` (of `group`/`plural`, JSON) counts: every resource its evaluator
/// tracks, zero where it uses none.
pub(crate) fn usage(group: &str, plural: &str, object: &Value) -> Usage {
    let mut usage = Usage::new();
    usage.insert(count_name(group, plural), one());
    match (group, plural) {
        ("", "pods") => pod_usage(object, &mut usage),
        ("", "services") => {
            let spec = &object["spec"];
            let ports = spec["ports"].as_array().map_or(0, Vec::len);
            let (balancers, node_ports) = match spec["type"].as_str().unwrap_or("ClusterIP") {
                "NodePort" => (0, ports),
                "LoadBalancer" if spec["allocateLoadBalancerNodePorts"] == Value::Bool(false) => {
                    let given = (spec["ports"].as_array().into_iter().flatten())
                        .filter(|p| p["nodePort"].as_i64().unwrap_or(0) != 0)
                        .count();
                    (1, given)
                }
                "LoadBalancer" => (1, ports),
                _ => (0, 0),
            };
            usage.insert("services".into(), one());
            usage.insert("services.loadbalancers".into(), number(balancers));
            usage.insert("services.nodeports".into(), number(node_ports));
        }
        ("", "persistentvolumeclaims") => {
            usage.insert("persistentvolumeclaims".into(), one());
            let requested = object
                .pointer("/spec/resources/requests/storage")
                .and_then(quantity);
            let allocated = object
                .pointer("/status/allocatedResources/storage")
                .and_then(quantity);
            let mut storage = match (requested, allocated) {
                (Some(r), Some(a)) if a > r => a,
                (Some(r), _) => r,
                (None, Some(a)) => a,
                (None, None) => Quantity::default(),
            };
            storage.round_up(0);
            let class = object["spec"]["storageClassName"]
                .as_str()
                .unwrap_or_default();
            if !class.is_empty() {
                let prefix = format!("{class}.storageclass.storage.k8s.io/");
                usage.insert(format!("{prefix}persistentvolumeclaims"), one());
                usage.insert(format!("{prefix}requests.storage"), storage.clone());
            }
            usage.insert("requests.storage".into(), storage);
        }
        ("", legacy @ ("configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas")) => {
            usage.insert(legacy.into(), one());
        }
        _ => {}
    }
    usage
}

/// The compute resources kube's pod evaluator tracks.
const POD_COMPUTE: [&str; 6] = [
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// kube's `PodUsageFunc`: `count/pods` always; `pods` and compute resources only while
/// the Pod is not terminal (requests summed over containers, raised to any init
/// container's larger one; limits likewise, over the containers that set them).
fn pod_usage(pod: &Value, usage: &mut Usage) {
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    let terminal = matches!(phase, "Succeeded" | "Failed");
    usage.insert("pods".into(), number(usize::from(!terminal)));
    for name in POD_COMPUTE {
        usage.insert(name.into(), Quantity::default());
    }
    if terminal {
        return;
    }
    for (field, prefix) in [("requests", "requests."), ("limits", "limits.")] {
        for (key, total) in pod_totals(pod, field) {
            if field == "requests" && matches!(key.as_str(), "cpu" | "memory" | "ephemeral-storage")
            {
                usage.insert(key.clone(), total.clone());
            }
            usage.insert(format!("{prefix}{key}"), total);
        }
    }
}

/// A Pod's `requests` or `limits` (kube's `PodRequests`/`PodLimits`): its containers'
/// summed, raised to any init container's that is larger.
pub(crate) fn pod_totals(pod: &Value, field: &str) -> Usage {
    let resources = |container: &Value| -> Vec<(String, Quantity)> {
        (container["resources"][field]
            .as_object()
            .into_iter()
            .flatten())
        .filter_map(|(key, value)| Some((key.clone(), quantity(value)?)))
        .collect()
    };
    let mut totals = Usage::new();
    for container in pod["spec"]["containers"].as_array().into_iter().flatten() {
        for (key, q) in resources(container) {
            totals.entry(key).or_default().add(&q);
        }
    }
    for container in pod["spec"]["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
    {
        for (key, q) in resources(container) {
            let total = totals.entry(key).or_default();
            if q > *total {
                *total = q;
            }
        }
    }
    totals
}

/// kube's pod evaluator's `Constraints`: with a quota on a compute resource, every
/// container says how much of it it asks for (`must specify limits.cpu for: web`).
pub(crate) fn pod_constraints(pod: &Value, hard: &BTreeSet<String>) -> Option<String> {
    let mut missing: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for field in ["containers", "initContainers"] {
        for container in pod["spec"][field].as_array().into_iter().flatten() {
            let name = container["name"].as_str().unwrap_or_default().to_owned();
            let resources = &container["resources"];
            for resource in POD_COMPUTE.iter().filter(|r| hard.contains(**r)) {
                let (list, key) = match resource.split_once('.') {
                    Some(("limits", key)) => ("limits", key),
                    Some((_, key)) => ("requests", key),
                    None => ("requests", *resource),
                };
                if resources[list].get(key).is_none() {
                    missing.entry(resource).or_default().insert(name.clone());
                }
            }
        }
    }
    if missing.is_empty() {
        return None;
    }
    let parts: Vec<String> = (missing.iter())
        .map(|(resource, names)| {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            format!("{resource} for: {}", names.join(","))
        })
        .collect();
    Some(format!("must specify {}", parts.join("; ")))
}

/// Whether `quota`'s scopes and scope selector match `object` (of `group`/`plural`): a
/// quota with any scope counts Pods alone.
pub(crate) fn scopes_match(quota: &Value, group: &str, plural: &str, object: &Value) -> bool {
    let mut expressions: Vec<(String, String, Vec<String>)> = Vec::new();
    for scope in quota["spec"]["scopes"].as_array().into_iter().flatten() {
        expressions.push((
            scope.as_str().unwrap_or_default().into(),
            "Exists".into(),
            Vec::new(),
        ));
    }
    for e in (quota
        .pointer("/spec/scopeSelector/matchExpressions")
        .and_then(Value::as_array))
    .into_iter()
    .flatten()
    {
        let values = (e["values"].as_array().into_iter().flatten())
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        expressions.push((
            e["scopeName"].as_str().unwrap_or_default().into(),
            e["operator"].as_str().unwrap_or_default().into(),
            values,
        ));
    }
    if expressions.is_empty() {
        return true;
    }
    if (group, plural) != ("", "pods") {
        return false;
    }
    let spec = &object["spec"];
    let best_effort = ["containers", "initContainers"].iter().all(|field| {
        (spec[*field].as_array().into_iter().flatten()).all(|c| {
            ["requests", "limits"].iter().all(|list| {
                let resources = &c["resources"][*list];
                resources.get("cpu").is_none() && resources.get("memory").is_none()
            })
        })
    });
    let terminating = spec["activeDeadlineSeconds"]
        .as_i64()
        .is_some_and(|s| s >= 0);
    let class = spec["priorityClassName"].as_str().unwrap_or_default();
    expressions
        .iter()
        .all(|(scope, operator, values)| match scope.as_str() {
            "Terminating" => terminating,
            "NotTerminating" => !terminating,
            "BestEffort" => best_effort,
            "NotBestEffort" => !best_effort,
            "PriorityClass" => match operator.as_str() {
                "Exists" => !class.is_empty(),
                "DoesNotExist" => class.is_empty(),
                "In" => values.iter().any(|v| v == class),
                "NotIn" => !values.iter().any(|v| v == class),
                _ => false,
            },
            _ => false,
        })
}

/// The kinds whose objects count against `resource`: the core kinds kube's evaluators
/// read, or the kind a `count/` resource names.
fn kinds_of(resource: &str) -> Vec<(String, String)> {
    let core = |plural: &str| vec![(String::new(), plural.to_owned())];
    if let Some(counted) = resource.strip_prefix("count/") {
        return match counted.split_once('.') {
            Some((plural, group)) => vec![(group.to_owned(), plural.to_owned())],
            None => core(counted),
        };
    }
    match resource {
        "pods" | "cpu" | "memory" | "ephemeral-storage" => core("pods"),
        r if r.starts_with("requests.") && r != "requests.storage" || r.starts_with("limits.") => {
            core("pods")
        }
        "services" | "services.loadbalancers" | "services.nodeports" => core("services"),
        "persistentvolumeclaims" | "requests.storage" => core("persistentvolumeclaims"),
        r if r.contains(".storageclass.storage.k8s.io/") => core("persistentvolumeclaims"),
        "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas" => core(resource),
        _ => Vec::new(),
    }
}

/// The usage of `namespace` of the resources `quota` limits (its `spec.hard`): zero for
/// each one kapi counts, none for those it does not know.
pub(crate) async fn namespace_usage(
    registry: &Registry,
    namespace: &str,
    quota: &Value,
) -> Result<Usage, ApiError> {
    let hard: BTreeSet<String> = (quota["spec"]["hard"].as_object().into_iter().flatten())
        .map(|(k, _)| k.clone())
        .collect();
    let mut kinds: BTreeSet<(String, String)> = BTreeSet::new();
    let mut used = Usage::new();
    for resource in &hard {
        let of = kinds_of(resource);
        let served: Vec<_> = (of.into_iter())
            .filter(|(group, plural)| registry.scheme().by_resource(group, plural).is_some())
            .collect();
        if !served.is_empty() {
            used.insert(resource.clone(), Quantity::default());
        }
        kinds.extend(served);
    }
    for (group, plural) in kinds {
        let Some(kind) = registry.scheme().by_resource(&group, &plural) else {
            continue;
        };
        let target = Target {
            kind: &kind,
            version: kind.info.storage_version().name,
            namespace: Some(namespace),
        };
        let list = registry.list(target, &Default::default()).await?;
        for item in &list.items {
            let object = item.value();
            if !scopes_match(quota, &group, &plural, &object) {
                continue;
            }
            for (resource, amount) in usage(&group, &plural, &object) {
                if let Some(total) = used.get_mut(&resource) {
                    total.add(&amount);
                }
            }
        }
    }
    Ok(used)
}

/// A usage as a ResourceList (canonical quantities).
pub(crate) fn to_json(usage: &Usage) -> Value {
    Value::Object(
        usage
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.to_string())))
            .collect(),
    )
}

/// A ResourceList's quantities.
pub(crate) fn from_json(list: &Value) -> Usage {
    (list.as_object().into_iter().flatten())
        .filter_map(|(k, v)| Some((k.clone(), quantity(v)?)))
        .collect()
}
