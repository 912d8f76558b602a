//! `autoscaling/v2`: at least one replica, 80% of the CPU requested as the metric, and a
//! scaling behaviour, when one is given, completed with kube's policies.

use super::or;
use crate::api::autoscaling::v2::{
    HPAScalingPolicy, HPAScalingRules, HorizontalPodAutoscaler, MetricSpec, MetricTarget,
    ResourceMetricSource,
};

pub(crate) fn horizontal_pod_autoscaler(autoscaler: &mut HorizontalPodAutoscaler) {
    let spec = &mut autoscaler.spec;
    or(&mut spec.min_replicas, 1);
    if spec.metrics.is_empty() {
        spec.metrics.push(MetricSpec {
            r#type: "Resource".into(),
            resource: Some(ResourceMetricSource {
                name: "cpu".into(),
                target: MetricTarget {
                    r#type: "Utilization".into(),
                    average_utilization: Some(80),
                    ..MetricTarget::default()
                },
            }),
            ..MetricSpec::default()
        });
    }
    if let Some(behavior) = spec.behavior.as_mut() {
        behavior.scale_up = Some(rules(behavior.scale_up.take(), scale_up()));
        behavior.scale_down = Some(rules(behavior.scale_down.take(), scale_down()));
    }
}

fn policy(kind: &str, value: i32) -> HPAScalingPolicy {
    HPAScalingPolicy {
        r#type: kind.into(),
        value,
        period_seconds: 15,
    }
}

/// Up at once, by four pods or doubling every 15 seconds, whichever is more.
fn scale_up() -> HPAScalingRules {
    HPAScalingRules {
        stabilization_window_seconds: Some(0),
        select_policy: Some("Max".into()),
        policies: vec![policy("Pods", 4), policy("Percent", 100)],
    }
}

/// Down by up to all pods every 15 seconds, after the controller's window (its flag).
fn scale_down() -> HPAScalingRules {
    HPAScalingRules {
        stabilization_window_seconds: None,
        select_policy: Some("Max".into()),
        policies: vec![policy("Percent", 100)],
    }
}

/// The user's rules over the defaults, each part replacing the default's whole.
fn rules(given: Option<HPAScalingRules>, mut defaults: HPAScalingRules) -> HPAScalingRules {
    let Some(given) = given else {
        return defaults;
    };
    if given.select_policy.is_some() {
        defaults.select_policy = given.select_policy;
    }
    if given.stabilization_window_seconds.is_some() {
        defaults.stabilization_window_seconds = given.stabilization_window_seconds;
    }
    if !given.policies.is_empty() {
        defaults.policies = given.policies;
    }
    defaults
}
