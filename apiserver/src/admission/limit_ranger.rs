//! kube's `LimitRanger` plugin (`plugin/pkg/admission/limitranger`): the LimitRanges of a
//! namespace give a new Pod's containers the requests and limits they lack (recorded in
//! the `kubernetes.io/limit-ranger` annotation), then bound each container's, each Pod's
//! and each claim's (created or updated) by their `min`, `max` and
//! `maxLimitRequestRatio`, refused with kube's 403 and messages.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{Lister, Plugin, forbidden, is};
use kapi_core::error::ApiError;
use kapi_core::quantity::Quantity;
use kapi_registry::Registry;
use kapi_registry::admission::{Attributes, Operation};

/// The plugin.
pub(super) struct LimitRanger {
    ranges: Lister,
}

impl Default for LimitRanger {
    fn default() -> Self {
        LimitRanger {
            ranges: Lister::new("", "limitranges"),
        }
    }
}

const ANNOTATION: &str = "kubernetes.io/limit-ranger";

#[async_trait::async_trait]
impl Plugin for LimitRanger {
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        let create = attributes.operation == Operation::Create;
        let update = attributes.operation == Operation::Update;
        let pods = create && is(attributes, "", "pods");
        let claims = (create || update) && is(attributes, "", "persistentvolumeclaims");
        (pods, pods || claims)
    }

    fn idle(&self, registry: &Registry) -> bool {
        self.ranges.is_empty(registry)
    }

    async fn admit(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        pod: &mut Value,
        _old: Option<&Value>,
    ) -> Result<(), ApiError> {
        // LimitRanges are namespaced: a write outside a namespace finds none.
        let ranges = self.ranges.objects(registry).await?;
        for range in ranges.of(attributes.namespace.unwrap_or_default()) {
            let mut set = Vec::new();
            for item in items(range, "Container") {
                let (limits, requests) = container_defaults(item);
                for (field, prefix) in [
                    ("containers", "container"),
                    ("initContainers", "init container"),
                ] {
                    let Some(containers) = pod["spec"][field].as_array_mut() else {
                        continue;
                    };
                    for container in containers {
                        set.extend(merge_defaults(container, &limits, &requests, prefix));
                    }
                }
            }
            if !set.is_empty() {
                let annotations = &mut pod["metadata"]["annotations"];
                if !annotations.is_object() {
                    *annotations = json!({});
                }
                annotations[ANNOTATION] =
                    json!(format!("LimitRanger plugin set: {}", set.join("; ")));
            }
        }
        Ok(())
    }

    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        let Some(object) = object else {
            return Ok(Vec::new());
        };
        if old.is_some_and(|o| o.pointer("/metadata/deletionTimestamp").is_some()) {
            return Ok(Vec::new());
        }
        // LimitRanges are namespaced: a write outside a namespace finds none.
        let ranges = self.ranges.objects(registry).await?;
        for range in ranges.of(attributes.namespace.unwrap_or_default()) {
            let mut errors = Vec::new();
            if attributes.kind.info.plural == "pods" {
                for item in items(range, "Container") {
                    for field in ["containers", "initContainers"] {
                        for container in object["spec"][field].as_array().into_iter().flatten() {
                            let resources = &container["resources"];
                            errors.extend(check(
                                item,
                                "Container",
                                &resources["requests"],
                                &resources["limits"],
                            ));
                        }
                    }
                }
                for item in items(range, "Pod") {
                    let (requests, limits) = pod_totals(object);
                    errors.extend(check(item, "Pod", &requests, &limits));
                }
            } else {
                for item in items(range, "PersistentVolumeClaim") {
                    let requests = &object["spec"]["resources"]["requests"];
                    errors.extend(check(item, "PersistentVolumeClaim", requests, &Value::Null));
                }
            }
            let mut unique = Vec::new();
            for error in errors {
                if !unique.contains(&error) {
                    unique.push(error);
                }
            }
            let message = match unique.len() {
                0 => continue,
                1 => unique.remove(0),
                _ => format!("[{}]", unique.join(", ")),
            };
            return Err(forbidden(attributes, Some(object), message));
        }
        Ok(Vec::new())
    }
}

/// A LimitRange's items of `kind`.
fn items<'a>(range: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    (range["spec"]["limits"].as_array().into_iter().flatten())
        .filter(move |item| item["type"] == kind)
}

/// A Container item's default limits and requests, as kube's defaulting of LimitRanges
/// completes them: a limit from `max`, a request from the limit, else from `min`.
fn container_defaults(item: &Value) -> (Map<String, Value>, Map<String, Value>) {
    let map = |field: &str| item[field].as_object().cloned().unwrap_or_default();
    let mut limits = map("default");
    for (key, value) in map("max") {
        limits.entry(key).or_insert(value);
    }
    let mut requests = map("defaultRequest");
    for (key, value) in limits.iter().chain(map("min").iter()) {
        requests.entry(key.clone()).or_insert_with(|| value.clone());
    }
    (limits, requests)
}

/// Fills what `container` lacks from the defaults; what was set, as kube's annotation says
/// it (`cpu, memory request for container web`).
fn merge_defaults(
    container: &mut Value,
    limits: &Map<String, Value>,
    requests: &Map<String, Value>,
    prefix: &str,
) -> Vec<String> {
    let name = container["name"].as_str().unwrap_or_default().to_owned();
    let mut said = Vec::new();
    for (field, defaults, what) in [
        ("requests", requests, "request"),
        ("limits", limits, "limit"),
    ] {
        let resources = &mut container["resources"];
        if !resources.is_object() {
            *resources = json!({});
        }
        let current = &mut resources[field];
        if !current.is_object() {
            *current = json!({});
        }
        let mut set: Vec<&str> = Vec::new();
        for (key, value) in defaults {
            if current.get(key).is_none() {
                current[key.as_str()] = value.clone();
                set.push(key);
            }
        }
        if current.as_object().is_some_and(Map::is_empty)
            && let Some(resources) = container["resources"].as_object_mut()
        {
            resources.remove(field);
        }
        if !set.is_empty() {
            set.sort();
            said.push(format!("{} {what} for {prefix} {name}", set.join(", ")));
        }
    }
    said
}

fn quantity(value: &Value) -> Option<Quantity> {
    value.as_str().and_then(|q| Quantity::parse(q).ok())
}

/// kube's `minConstraint`, `maxConstraint` and `limitRequestRatioConstraint` of one item
/// on one set of requests and limits (JSON resource lists).
fn check(item: &Value, kind: &str, requests: &Value, limits: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let sorted = |field: &str| -> BTreeMap<String, Quantity> {
        (item[field].as_object().into_iter().flatten())
            .filter_map(|(k, v)| Some((k.clone(), quantity(v)?)))
            .collect()
    };
    let get = |list: &Value, key: &str| list.get(key).and_then(quantity);
    for (resource, min) in sorted("min") {
        let (request, limit) = (get(requests, &resource), get(limits, &resource));
        match request {
            None => errors.push(format!(
                "minimum {resource} usage per {kind} is {min}.  No request is specified"
            )),
            Some(request) if request < min => errors.push(format!(
                "minimum {resource} usage per {kind} is {min}, but request is {request}"
            )),
            _ => match limit {
                Some(limit) if limit < min => errors.push(format!(
                    "minimum {resource} usage per {kind} is {min}, but limit is {limit}"
                )),
                _ => {}
            },
        }
    }
    for (resource, max) in sorted("max") {
        let (request, limit) = (get(requests, &resource), get(limits, &resource));
        if kind == "PersistentVolumeClaim" {
            match request {
                None => errors.push(format!(
                    "maximum {resource} usage per {kind} is {max}.  No request is specified"
                )),
                Some(request) if request > max => errors.push(format!(
                    "maximum {resource} usage per {kind} is {max}, but request is {request}"
                )),
                _ => {}
            }
            continue;
        }
        match limit {
            None => errors.push(format!(
                "maximum {resource} usage per {kind} is {max}.  No limit is specified"
            )),
            Some(limit) if limit > max => errors.push(format!(
                "maximum {resource} usage per {kind} is {max}, but limit is {limit}"
            )),
            _ => {
                if let Some(request) = request.filter(|r| *r > max) {
                    errors.push(format!(
                        "maximum {resource} usage per {kind} is {max}, but request is {request}"
                    ));
                }
            }
        }
    }
    for (resource, ratio) in sorted("maxLimitRequestRatio") {
        let (request, limit) = (get(requests, &resource), get(limits, &resource));
        let said = format!("{resource} max limit to request ratio per {kind} is {ratio}");
        let (Some(request), true) = (
            request.clone(),
            request.as_ref().is_some_and(|r| !r.is_zero()),
        ) else {
            errors.push(format!(
                "{said}, but no request is specified or request is 0"
            ));
            continue;
        };
        let (Some(limit), true) = (limit.clone(), limit.as_ref().is_some_and(|l| !l.is_zero()))
        else {
            errors.push(format!("{said}, but no limit is specified or limit is 0"));
            continue;
        };
        let observed = limit.milli_value() as f64 / request.milli_value() as f64;
        if observed * 1000.0 > ratio.milli_value() as f64 {
            errors.push(format!("{said}, but provided ratio is {observed:.6}"));
        }
    }
    errors
}

/// A Pod's requests and limits (kube's `PodRequests`/`PodLimits`, `crate::quota`'s), as
/// JSON resource lists.
fn pod_totals(pod: &Value) -> (Value, Value) {
    let json = |field: &str| crate::quota::to_json(&crate::quota::pod_totals(pod, field));
    (json("requests"), json("limits"))
}
