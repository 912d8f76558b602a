//! A built-in kind served in two versions: `autoscaling/v1` HorizontalPodAutoscalers, kept
//! as `autoscaling/v2` ones, converted as kube 1.32 converts them. kubectl 1.20's
//! `autoscale` writes v1; what v1 cannot say travels in its annotations, so that a v1
//! client's read-modify-write keeps a v2 object whole; protobuf bodies are each version's
//! own message.

use crate::support;

use serde_json::{Value, json};
use support::http::Client;
use support::{Kubectl, Server, Version};

const V1: &str = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
const V2: &str = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

fn read(client: &Client, path: &str) -> Value {
    let response = client.get(path).unwrap();
    assert_eq!(response.status, 200, "{response:?}");
    response.json()
}

fn cpu(percent: i32) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": percent}}})
}

/// kubectl 1.20 autoscales a Deployment in v1; v2 reads the CPU target as a metric.
#[test]
fn kubectl_1_20_autoscale_writes_v1_read_as_v2() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_20, &server);
    let client = server.client();
    kubectl.ok(&["create", "deployment", "web", "--image=nginx:1.27"]);
    kubectl.ok(&[
        "autoscale",
        "deployment",
        "web",
        "--min=2",
        "--max=5",
        "--cpu-percent=60",
    ]);
    let v2 = read(&client, &format!("{V2}/web"));
    assert_eq!(v2["apiVersion"], "autoscaling/v2");
    assert_eq!(v2["spec"]["minReplicas"], 2);
    assert_eq!(v2["spec"]["maxReplicas"], 5);
    assert_eq!(v2["spec"]["metrics"], json!([cpu(60)]));
    assert_eq!(v2["spec"]["scaleTargetRef"]["kind"], "Deployment");
    let v1 = kubectl
        .ok(&["get", "hpa.v1.autoscaling", "web", "-o", "json"])
        .json();
    assert_eq!(v1["apiVersion"], "autoscaling/v1", "{v1}");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    // One object, listed once, through both versions.
    let listed = read(&client, V1);
    assert_eq!(
        listed["items"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
}

/// A v2 object with what v1 cannot say: a v1 read carries it in annotations, a v1
/// read-modify-write keeps it, and the stored object never holds the annotations.
#[test]
fn a_v1_read_modify_write_keeps_what_only_v2_says() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let client = server.client();
    let memory = json!({"type": "Resource", "resource": {"name": "memory",
        "target": {"type": "AverageValue", "averageValue": "500Mi"}}});
    let behavior = json!({"scaleDown": {"stabilizationWindowSeconds": 300,
        "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}});
    let manifest = json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "api", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
                 "minReplicas": 1, "maxReplicas": 4,
                 "metrics": [cpu(70), memory], "behavior": behavior},
    });
    let file = kubectl.write_file("hpa.json", &manifest.to_string());
    kubectl.ok(&["apply", "--server-side", "-f", &file]);

    let v1 = read(&client, &format!("{V1}/api"));
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 70, "{v1}");
    let annotations = &v1["metadata"]["annotations"];
    assert_eq!(
        annotations[METRICS],
        r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}}]"#
    );
    assert_eq!(
        annotations[BEHAVIOR],
        // The behaviour as kube's v2 defaults complete it (SetDefaults_HorizontalPodAutoscaler).
        r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}]},"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}]}}"#
    );

    // A v1 client raises the ceiling and writes back what it read.
    let mut changed = v1.clone();
    changed["spec"]["maxReplicas"] = json!(8);
    let written = client.put(&format!("{V1}/api"), &changed).unwrap();
    assert_eq!(written.status, 200, "{written:?}");
    let v2 = read(&client, &format!("{V2}/api"));
    assert_eq!(v2["spec"]["maxReplicas"], 8);
    assert_eq!(v2["spec"]["metrics"], json!([memory, cpu(70)]), "{v2}");
    // As written, completed by kube's v2 defaults.
    let defaulted = json!({
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
            "policies": behavior["scaleDown"]["policies"]},
    });
    assert_eq!(v2["spec"]["behavior"], defaulted, "{v2}");
    assert!(v2["metadata"].get("annotations").is_none(), "{v2}");

    // A v1 object that says no metric at all gets kube's CPU target.
    let bare = json!({
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "bare"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "bare"}, "maxReplicas": 2},
    });
    let created = client.post(V1, &bare).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    assert_eq!(created.json()["spec"]["targetCPUUtilizationPercentage"], 80);
    let v2 = read(&client, &format!("{V2}/bare"));
    assert_eq!(v2["spec"]["metrics"], json!([cpu(80)]));

    // v2 writers cannot store the annotations either.
    let mut annotated = read(&client, &format!("{V2}/bare"));
    annotated["metadata"]["annotations"] = json!({METRICS: "[]", "kept": "yes"});
    let written = client.put(&format!("{V2}/bare"), &annotated).unwrap();
    assert_eq!(written.status, 200, "{written:?}");
    assert_eq!(
        written.json()["metadata"]["annotations"],
        json!({"kept": "yes"})
    );
}

/// Protobuf bodies of each version are that version's message: a v1 object written in v1's
/// protobuf reads back in v1's, and in v2's JSON.
#[test]
fn each_version_speaks_its_own_protobuf() {
    use kapi::api::protobuf::{Protobuf, decode_body, encode};
    use kapi::kinds::builtin::autoscaling::v1::HorizontalPodAutoscaler;

    let server = Server::start();
    let client = server.client();
    let object = json!({
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "proto", "namespace": "default"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "proto"},
                 "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 45},
    });
    let message = HorizontalPodAutoscaler::MESSAGE;
    let body = encode::object(message, &object).expect("a v1 object encodes");
    let (status, answer) = client
        .send_bytes("POST", V1, PROTOBUF, &body, PROTOBUF)
        .unwrap();
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&answer));
    let created = decode_body(message, &answer).expect("v1's message");
    assert_eq!(
        created["spec"]["targetCPUUtilizationPercentage"], 45,
        "{created}"
    );
    assert_eq!(created["spec"]["maxReplicas"], 3, "{created}");
    let v2 = read(&client, &format!("{V2}/proto"));
    assert_eq!(v2["spec"]["metrics"], json!([cpu(45)]));
}
