//! The v1 conversion's cases, after kube's own (`pkg/apis/autoscaling/v1/conversion_test.go`
//! and the behaviour its conversion functions define).

use serde_json::{Value, json};

use super::{BEHAVIOR, CONDITIONS, CURRENT_METRICS, METRICS};
use crate::api::autoscaling::{v1, v2};
use kapi::api::Convert;

fn hub(value: Value) -> v2::HorizontalPodAutoscaler {
    serde_json::from_value(value).unwrap()
}

fn v1(value: Value) -> v1::HorizontalPodAutoscaler {
    serde_json::from_value(value).unwrap()
}

fn into_hub(object: v1::HorizontalPodAutoscaler) -> Value {
    let mut hub = v2::HorizontalPodAutoscaler::default();
    object.into_hub(&mut hub);
    serde_json::to_value(hub).unwrap()
}

fn as_v1(hub: &v2::HorizontalPodAutoscaler) -> Value {
    serde_json::to_value(v1::HorizontalPodAutoscaler::from_hub(hub)).unwrap()
}

fn cpu(percent: i32) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": percent}}})
}

#[test]
fn the_first_cpu_utilization_is_v1_s_target_and_the_rest_is_annotated() {
    // kube's "Test for #101370": an AverageValue target does not hide the utilization one.
    let memory = json!({"type": "Resource", "resource": {"name": "memory",
        "target": {"type": "Utilization", "averageUtilization": 60}}});
    let by_value = json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "AverageValue", "averageValue": "300m"}}});
    let object = hub(json!({
        "metadata": {"name": "web", "annotations": {"kept": "yes"}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                 "maxReplicas": 5, "metrics": [by_value, cpu(70), memory, cpu(50)]},
    }));
    let read = as_v1(&object);
    assert_eq!(read["spec"]["targetCPUUtilizationPercentage"], 70);
    let annotations = &read["metadata"]["annotations"];
    assert_eq!(annotations["kept"], "yes");
    // Every CPU utilization target is left out of the annotation (the second is lost).
    assert_eq!(
        annotations[METRICS],
        r#"[{"type":"Resource","resource":{"name":"cpu","targetAverageValue":"300m"}},{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":60}}]"#
    );
    // Written back: the annotated metrics first, then v1's CPU target.
    let written = into_hub(serde_json::from_value(read).unwrap());
    assert_eq!(
        written["spec"]["metrics"],
        json!([by_value, memory, cpu(70)]),
        "{written}"
    );
    assert_eq!(written["metadata"]["annotations"], json!({"kept": "yes"}));
}

#[test]
fn a_v1_object_without_metrics_gets_kube_s_cpu_target() {
    let written = into_hub(v1(json!({
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    })));
    assert_eq!(written["spec"]["metrics"], json!([cpu(80)]));
    // An annotation that does not parse is dropped, and the default still applies.
    let written = into_hub(v1(json!({
        "metadata": {"name": "web", "annotations": {METRICS: "not json", "other": "kept"}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    })));
    assert_eq!(written["spec"]["metrics"], json!([cpu(80)]));
    assert_eq!(written["metadata"]["annotations"], json!({"other": "kept"}));
    // A v1 target is v2's metric.
    let written = into_hub(v1(json!({
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3,
                 "targetCPUUtilizationPercentage": 55},
    })));
    assert_eq!(written["spec"]["metrics"], json!([cpu(55)]));
}

#[test]
fn status_behavior_and_conditions_travel_in_annotations() {
    let object = hub(json!({
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            "metrics": [cpu(70)],
            "behavior": {"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}]}},
        },
        "status": {
            "currentReplicas": 2, "desiredReplicas": 3,
            "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": 40, "averageValue": "200m"}}},
                {"type": "Pods", "pods": {"metric": {"name": "qps"},
                    "current": {"averageValue": "10"}}},
            ],
            "conditions": [{"type": "AbleToScale", "status": "True",
                "lastTransitionTime": "2024-12-11T00:00:00Z", "reason": "ReadyForNewScale"}],
        },
    }));
    let read = as_v1(&object);
    assert_eq!(read["status"]["currentCPUUtilizationPercentage"], 40);
    let annotations = &read["metadata"]["annotations"];
    assert!(annotations.get(METRICS).is_none(), "{annotations}");
    assert_eq!(
        annotations[BEHAVIOR],
        r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}]},"ScaleDown":null}"#
    );
    assert_eq!(
        annotations[CURRENT_METRICS],
        r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"200m"}},{"type":"Pods","pods":{"metricName":"qps","currentAverageValue":"10"}}]"#
    );
    assert_eq!(
        annotations[CONDITIONS],
        r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-12-11T00:00:00Z","reason":"ReadyForNewScale"}]"#
    );
    // Back through v1, v2 is whole again and the annotations are gone.
    let written = into_hub(serde_json::from_value(read).unwrap());
    let expected = serde_json::to_value(&object).unwrap();
    assert_eq!(written["spec"], expected["spec"]);
    assert_eq!(written["status"], expected["status"]);
    assert!(
        written["metadata"].get("annotations").is_none(),
        "{written}"
    );
}

#[test]
fn a_behavior_is_read_whatever_the_case_of_its_keys() {
    let written = into_hub(v1(json!({
        "metadata": {"name": "web", "annotations": {
            BEHAVIOR: r#"{"scaleDown":{"selectPolicy":"Min","policies":[{"type":"Percent","value":10,"periodSeconds":60}]}}"#,
        }},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    })));
    assert_eq!(
        written["spec"]["behavior"],
        json!({"scaleDown": {"selectPolicy": "Min",
            "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}})
    );
    // One that says nothing is none.
    let written = into_hub(v1(json!({
        "metadata": {"name": "web", "annotations": {BEHAVIOR: r#"{"ScaleUp":null}"#}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    })));
    assert!(written["spec"].get("behavior").is_none(), "{written}");
}
