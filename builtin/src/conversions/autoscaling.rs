//! `autoscaling/v1` HorizontalPodAutoscaler to and from `autoscaling/v2`, its hub and
//! storage version, as kube 1.32 converts them (`pkg/apis/autoscaling/v1/conversion.go`).
//!
//! v1 says one thing of the metrics: a CPU utilization target. Everything else v2 holds
//! travels in four annotations of the v1 object, so that a v1 client's read-modify-write
//! keeps it: the other metrics, the current metrics, the conditions (in v1's annotation
//! types, `v1::MetricSpec`) and the behavior (in Go's field names, as kube marshals its
//! internal type). A v1 write reads them back and drops them: the stored object never
//! holds them, and a v2 write drops them too (the kind's strategy). An annotation that
//! does not parse is dropped without an error, as kube drops it; a v1 object that leaves
//! no metric at all gets kube's CPU utilization target of 80%.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::api::autoscaling::{v1, v2};
use kapi::api::Convert;
use kapi::meta::Quantity;

/// The other metrics (`[]v1.MetricSpec`).
pub(crate) const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// The current metrics (`[]v1.MetricStatus`).
pub(crate) const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// The conditions (`[]v1.HorizontalPodAutoscalerCondition`).
pub(crate) const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// The behavior, as Go marshals kube's internal type (no JSON tags: Go's field names).
pub(crate) const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";

/// kube's `DefaultCPUUtilization`.
const DEFAULT_CPU_UTILIZATION: i32 = 80;

/// Drops the four annotations that carry v2's fields through v1: an object as stored,
/// or as a v2 client reads it, never has them (kube's
/// `DropRoundTripHorizontalPodAutoscalerAnnotations`).
pub(crate) fn drop_round_trip_annotations(annotations: &mut Option<BTreeMap<String, String>>) {
    if let Some(map) = annotations {
        for key in [METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR] {
            map.remove(key);
        }
        if map.is_empty() {
            *annotations = None;
        }
    }
}

impl Convert<v2::HorizontalPodAutoscaler> for v1::HorizontalPodAutoscaler {
    fn into_hub(self, hub: &mut v2::HorizontalPodAutoscaler) {
        let v1::HorizontalPodAutoscaler {
            mut metadata,
            spec,
            status,
        } = self;
        let annotations = metadata.annotations.clone().unwrap_or_default();
        let parsed = |key: &str| annotations.get(key).map(String::as_str);
        // The CPU target, after the other metrics the annotation carries.
        let cpu = spec
            .target_cpu_utilization_percentage
            .map(|percent| v2::MetricSpec {
                r#type: "Resource".into(),
                resource: Some(v2::ResourceMetricSource {
                    name: "cpu".into(),
                    target: v2::MetricTarget {
                        r#type: "Utilization".into(),
                        average_utilization: Some(percent),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            });
        let mut metrics: Vec<v2::MetricSpec> =
            match parsed(METRICS).and_then(decode::<Vec<v1::MetricSpec>>) {
                Some(others) => others.into_iter().map(metric_into_hub).collect(),
                None => Vec::new(),
            };
        metrics.extend(cpu);
        if metrics.is_empty() {
            metrics.push(v2::MetricSpec {
                r#type: "Resource".into(),
                resource: Some(v2::ResourceMetricSource {
                    name: "cpu".into(),
                    target: v2::MetricTarget {
                        r#type: "Utilization".into(),
                        average_utilization: Some(DEFAULT_CPU_UTILIZATION),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            });
        }
        let behavior = parsed(BEHAVIOR)
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .and_then(|value| behavior_from_go(&value));
        let current_metrics =
            match parsed(CURRENT_METRICS).and_then(decode::<Vec<v1::MetricStatus>>) {
                Some(current) => current.into_iter().map(metric_status_into_hub).collect(),
                None => (status.current_cpu_utilization_percentage)
                    .map(|percent| v2::MetricStatus {
                        r#type: "Resource".into(),
                        resource: Some(v2::ResourceMetricStatus {
                            name: "cpu".into(),
                            current: v2::MetricValueStatus {
                                average_utilization: Some(percent),
                                ..Default::default()
                            },
                        }),
                        ..Default::default()
                    })
                    .into_iter()
                    .collect(),
            };
        let conditions = parsed(CONDITIONS)
            .and_then(decode::<Vec<v1::HorizontalPodAutoscalerCondition>>)
            .map(|conditions| conditions.into_iter().map(condition_into_hub).collect())
            .unwrap_or_default();
        drop_round_trip_annotations(&mut metadata.annotations);
        *hub = v2::HorizontalPodAutoscaler {
            metadata,
            spec: v2::HorizontalPodAutoscalerSpec {
                scale_target_ref: v2::CrossVersionObjectReference {
                    kind: spec.scale_target_ref.kind,
                    name: spec.scale_target_ref.name,
                    api_version: spec.scale_target_ref.api_version,
                },
                min_replicas: spec.min_replicas,
                max_replicas: spec.max_replicas,
                metrics,
                behavior,
            },
            status: v2::HorizontalPodAutoscalerStatus {
                observed_generation: status.observed_generation,
                last_scale_time: status.last_scale_time,
                current_replicas: status.current_replicas,
                desired_replicas: status.desired_replicas,
                current_metrics,
                conditions,
            },
        };
    }

    fn from_hub(hub: &v2::HorizontalPodAutoscaler) -> Self {
        let mut metadata = hub.metadata.clone();
        drop_round_trip_annotations(&mut metadata.annotations);
        let is_cpu_utilization = |metric: &v2::MetricSpec| {
            metric.r#type == "Resource"
                && (metric.resource.as_ref())
                    .is_some_and(|r| r.name == "cpu" && r.target.average_utilization.is_some())
        };
        // The first CPU utilization target is v1's; every other metric is annotated.
        let target_cpu = (hub.spec.metrics.iter())
            .find(|m| is_cpu_utilization(m))
            .and_then(|m| m.resource.as_ref()?.target.average_utilization);
        // The last current CPU utilization is v1's (kube's loop does not stop).
        let current_cpu = (hub.status.current_metrics.iter())
            .filter(|m| m.r#type == "Resource")
            .filter_map(|m| m.resource.as_ref())
            .filter(|r| r.name == "cpu")
            .filter_map(|r| r.current.average_utilization)
            .next_back();
        let others: Vec<v1::MetricSpec> = (hub.spec.metrics.iter())
            .filter(|m| !is_cpu_utilization(m))
            .map(metric_from_hub)
            .collect();
        let current: Vec<v1::MetricStatus> = (hub.status.current_metrics.iter())
            .map(metric_status_from_hub)
            .collect();
        let conditions: Vec<v1::HorizontalPodAutoscalerCondition> = (hub.status.conditions.iter())
            .map(condition_from_hub)
            .collect();
        let mut annotate = |key: &str, value: String| {
            (metadata.annotations.get_or_insert_with(BTreeMap::new)).insert(key.into(), value);
        };
        if !others.is_empty() {
            annotate(METRICS, encode(&others));
        }
        if !current.is_empty() {
            annotate(CURRENT_METRICS, encode(&current));
        }
        if let Some(behavior) = &hub.spec.behavior {
            annotate(BEHAVIOR, behavior_to_go(behavior).to_string());
        }
        if !conditions.is_empty() {
            annotate(CONDITIONS, encode(&conditions));
        }
        let target = &hub.spec.scale_target_ref;
        v1::HorizontalPodAutoscaler {
            metadata,
            spec: v1::HorizontalPodAutoscalerSpec {
                scale_target_ref: v1::CrossVersionObjectReference {
                    kind: target.kind.clone(),
                    name: target.name.clone(),
                    api_version: target.api_version.clone(),
                },
                min_replicas: hub.spec.min_replicas,
                max_replicas: hub.spec.max_replicas,
                target_cpu_utilization_percentage: target_cpu,
            },
            status: v1::HorizontalPodAutoscalerStatus {
                observed_generation: hub.status.observed_generation,
                last_scale_time: hub.status.last_scale_time.clone(),
                current_replicas: hub.status.current_replicas,
                desired_replicas: hub.status.desired_replicas,
                current_cpu_utilization_percentage: current_cpu,
            },
        }
    }
}

/// An annotation's value, when it parses.
fn decode<T: DeserializeOwned>(text: &str) -> Option<T> {
    serde_json::from_str(text).ok()
}

/// Compact JSON, as Go's `json.Marshal` writes it.
fn encode<T: serde::Serialize>(value: &T) -> String {
    // The annotation types serialize to JSON whatever they hold.
    serde_json::to_string(value).unwrap_or_default()
}

/// Go's zero `resource.Quantity`, which v1's non-pointer quantities hold when v2 has none.
fn zero() -> Quantity {
    Quantity("0".into())
}

fn reference_into_hub(r: v1::CrossVersionObjectReference) -> v2::CrossVersionObjectReference {
    v2::CrossVersionObjectReference {
        kind: r.kind,
        name: r.name,
        api_version: r.api_version,
    }
}

fn reference_from_hub(r: &v2::CrossVersionObjectReference) -> v1::CrossVersionObjectReference {
    v1::CrossVersionObjectReference {
        kind: r.kind.clone(),
        name: r.name.clone(),
        api_version: r.api_version.clone(),
    }
}

/// A v1 annotation metric as v2's: the target's type follows from what is set.
fn metric_into_hub(metric: v1::MetricSpec) -> v2::MetricSpec {
    let by = |value: bool, yes: &str, no: &str| if value { yes } else { no }.to_string();
    v2::MetricSpec {
        r#type: metric.r#type,
        object: metric.object.map(|o| v2::ObjectMetricSource {
            described_object: reference_into_hub(o.target),
            target: v2::MetricTarget {
                r#type: by(o.average_value.is_none(), "Value", "AverageValue"),
                value: Some(o.target_value),
                average_value: o.average_value,
                average_utilization: None,
            },
            metric: v2::MetricIdentifier {
                name: o.metric_name,
                selector: o.selector,
            },
        }),
        pods: metric.pods.map(|p| v2::PodsMetricSource {
            metric: v2::MetricIdentifier {
                name: p.metric_name,
                selector: p.selector,
            },
            target: v2::MetricTarget {
                r#type: "AverageValue".into(),
                average_value: Some(p.target_average_value),
                ..Default::default()
            },
        }),
        resource: metric.resource.map(|r| v2::ResourceMetricSource {
            name: r.name,
            target: resource_target(r.target_average_utilization, r.target_average_value),
        }),
        container_resource: metric
            .container_resource
            .map(|r| v2::ContainerResourceMetricSource {
                name: r.name,
                target: resource_target(r.target_average_utilization, r.target_average_value),
                container: r.container,
            }),
        external: metric.external.map(|e| v2::ExternalMetricSource {
            target: v2::MetricTarget {
                r#type: by(e.target_value.is_some(), "Value", "AverageValue"),
                value: e.target_value,
                average_value: e.target_average_value,
                average_utilization: None,
            },
            metric: v2::MetricIdentifier {
                name: e.metric_name,
                selector: e.metric_selector,
            },
        }),
    }
}

/// A resource's target (of a pod's or of one container's): a utilization when v1 gives
/// one, else an average value.
fn resource_target(utilization: Option<i32>, average_value: Option<Quantity>) -> v2::MetricTarget {
    v2::MetricTarget {
        r#type: match utilization {
            Some(_) => "Utilization",
            None => "AverageValue",
        }
        .into(),
        value: None,
        average_value,
        average_utilization: utilization,
    }
}

fn metric_from_hub(metric: &v2::MetricSpec) -> v1::MetricSpec {
    v1::MetricSpec {
        r#type: metric.r#type.clone(),
        object: metric.object.as_ref().map(|o| v1::ObjectMetricSource {
            target: reference_from_hub(&o.described_object),
            metric_name: o.metric.name.clone(),
            target_value: o.target.value.clone().unwrap_or_else(zero),
            selector: o.metric.selector.clone(),
            average_value: o.target.average_value.clone(),
        }),
        pods: metric.pods.as_ref().map(|p| v1::PodsMetricSource {
            metric_name: p.metric.name.clone(),
            target_average_value: p.target.average_value.clone().unwrap_or_else(zero),
            selector: p.metric.selector.clone(),
        }),
        resource: metric.resource.as_ref().map(|r| v1::ResourceMetricSource {
            name: r.name.clone(),
            target_average_utilization: r.target.average_utilization,
            target_average_value: r.target.average_value.clone(),
        }),
        container_resource: (metric.container_resource.as_ref()).map(|r| {
            v1::ContainerResourceMetricSource {
                name: r.name.clone(),
                target_average_utilization: r.target.average_utilization,
                target_average_value: r.target.average_value.clone(),
                container: r.container.clone(),
            }
        }),
        external: metric.external.as_ref().map(|e| v1::ExternalMetricSource {
            metric_name: e.metric.name.clone(),
            metric_selector: e.metric.selector.clone(),
            target_value: e.target.value.clone(),
            target_average_value: e.target.average_value.clone(),
        }),
    }
}

fn metric_status_into_hub(status: v1::MetricStatus) -> v2::MetricStatus {
    v2::MetricStatus {
        r#type: status.r#type,
        object: status.object.map(|o| v2::ObjectMetricStatus {
            metric: v2::MetricIdentifier {
                name: o.metric_name,
                selector: o.selector,
            },
            current: v2::MetricValueStatus {
                value: Some(o.current_value),
                average_value: o.average_value,
                average_utilization: None,
            },
            described_object: reference_into_hub(o.target),
        }),
        pods: status.pods.map(|p| v2::PodsMetricStatus {
            metric: v2::MetricIdentifier {
                name: p.metric_name,
                selector: p.selector,
            },
            current: v2::MetricValueStatus {
                average_value: Some(p.current_average_value),
                ..Default::default()
            },
        }),
        resource: status.resource.map(|r| v2::ResourceMetricStatus {
            name: r.name,
            current: v2::MetricValueStatus {
                value: None,
                average_value: Some(r.current_average_value),
                average_utilization: r.current_average_utilization,
            },
        }),
        container_resource: (status.container_resource).map(|r| {
            v2::ContainerResourceMetricStatus {
                name: r.name,
                current: v2::MetricValueStatus {
                    value: None,
                    average_value: Some(r.current_average_value),
                    average_utilization: r.current_average_utilization,
                },
                container: r.container,
            }
        }),
        external: status.external.map(|e| v2::ExternalMetricStatus {
            metric: v2::MetricIdentifier {
                name: e.metric_name,
                selector: e.metric_selector,
            },
            current: v2::MetricValueStatus {
                value: Some(e.current_value),
                average_value: e.current_average_value,
                average_utilization: None,
            },
        }),
    }
}

fn metric_status_from_hub(status: &v2::MetricStatus) -> v1::MetricStatus {
    v1::MetricStatus {
        r#type: status.r#type.clone(),
        object: status.object.as_ref().map(|o| v1::ObjectMetricStatus {
            target: reference_from_hub(&o.described_object),
            metric_name: o.metric.name.clone(),
            current_value: o.current.value.clone().unwrap_or_else(zero),
            selector: o.metric.selector.clone(),
            average_value: o.current.average_value.clone(),
        }),
        pods: status.pods.as_ref().map(|p| v1::PodsMetricStatus {
            metric_name: p.metric.name.clone(),
            current_average_value: p.current.average_value.clone().unwrap_or_else(zero),
            selector: p.metric.selector.clone(),
        }),
        resource: status.resource.as_ref().map(|r| v1::ResourceMetricStatus {
            name: r.name.clone(),
            current_average_utilization: r.current.average_utilization,
            current_average_value: r.current.average_value.clone().unwrap_or_else(zero),
        }),
        container_resource: (status.container_resource.as_ref()).map(|r| {
            v1::ContainerResourceMetricStatus {
                name: r.name.clone(),
                current_average_utilization: r.current.average_utilization,
                current_average_value: r.current.average_value.clone().unwrap_or_else(zero),
                container: r.container.clone(),
            }
        }),
        external: status.external.as_ref().map(|e| v1::ExternalMetricStatus {
            metric_name: e.metric.name.clone(),
            metric_selector: e.metric.selector.clone(),
            current_value: e.current.value.clone().unwrap_or_else(zero),
            current_average_value: e.current.average_value.clone(),
        }),
    }
}

fn condition_into_hub(
    c: v1::HorizontalPodAutoscalerCondition,
) -> v2::HorizontalPodAutoscalerCondition {
    v2::HorizontalPodAutoscalerCondition {
        r#type: c.r#type,
        status: c.status,
        last_transition_time: c.last_transition_time,
        reason: c.reason,
        message: c.message,
    }
}

fn condition_from_hub(
    c: &v2::HorizontalPodAutoscalerCondition,
) -> v1::HorizontalPodAutoscalerCondition {
    v1::HorizontalPodAutoscalerCondition {
        r#type: c.r#type.clone(),
        status: c.status.clone(),
        last_transition_time: c.last_transition_time.clone(),
        reason: c.reason.clone(),
        message: c.message.clone(),
    }
}

/// The behavior as Go marshals kube's internal type: Go's field names, every field
/// written, `null` for what is unset (an empty list too, which Go cannot tell from none).
fn behavior_to_go(behavior: &v2::HorizontalPodAutoscalerBehavior) -> Value {
    let rules = |rules: &Option<v2::HPAScalingRules>| match rules {
        None => Value::Null,
        Some(rules) => {
            let policies: Vec<Value> = (rules.policies.iter())
                .map(|p| json!({"Type": p.r#type, "Value": p.value, "PeriodSeconds": p.period_seconds}))
                .collect();
            json!({
                "StabilizationWindowSeconds": rules.stabilization_window_seconds,
                "SelectPolicy": rules.select_policy,
                "Policies": if policies.is_empty() { Value::Null } else { Value::Array(policies) },
            })
        }
    };
    json!({"ScaleUp": rules(&behavior.scale_up), "ScaleDown": rules(&behavior.scale_down)})
}

/// The behavior an annotation carries, read as Go's decoder reads it (keys matched
/// without regard to case); `None` when it says nothing (both rules absent).
fn behavior_from_go(value: &Value) -> Option<v2::HorizontalPodAutoscalerBehavior> {
    let object = value.as_object()?;
    let rules = |value: Option<&Value>| -> Option<v2::HPAScalingRules> {
        let rules = value?.as_object()?;
        let policies = (field(rules, "policies").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
            .map(|p| v2::HPAScalingPolicy {
                r#type: (field(p, "type").and_then(Value::as_str))
                    .unwrap_or_default()
                    .into(),
                value: int(field(p, "value")).unwrap_or_default(),
                period_seconds: int(field(p, "periodseconds")).unwrap_or_default(),
            })
            .collect();
        Some(v2::HPAScalingRules {
            stabilization_window_seconds: int(field(rules, "stabilizationwindowseconds")),
            select_policy: (field(rules, "selectpolicy").and_then(Value::as_str)).map(Into::into),
            policies,
        })
    };
    let behavior = v2::HorizontalPodAutoscalerBehavior {
        scale_up: rules(field(object, "scaleup")),
        scale_down: rules(field(object, "scaledown")),
    };
    (behavior.scale_up.is_some() || behavior.scale_down.is_some()).then_some(behavior)
}

/// A field of `object` by its lower-case name, matched as Go's decoder matches keys.
fn field<'v>(object: &'v Map<String, Value>, lower: &str) -> Option<&'v Value> {
    (object.iter())
        .find(|(key, _)| key.eq_ignore_ascii_case(lower))
        .map(|(_, value)| value)
}

fn int(value: Option<&Value>) -> Option<i32> {
    value?.as_i64().and_then(|v| i32::try_from(v).ok())
}

#[cfg(test)]
mod tests;
