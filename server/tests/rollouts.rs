//! `kubectl rollout history` and `rollout undo` on kube's workload kinds: kubectl reads a
//! Deployment's revisions from the ReplicaSets it controls and a DaemonSet's from its
//! ControllerRevisions, and undoes by patching the template back. No controller runs in
//! kapi, so the test writes the ReplicaSets and ControllerRevisions a controller would.

use crate::support;

use serde_json::{Value, json};
use support::{Kubectl, Server, Version};

support::for_both_versions! {
    kubectl_reads_and_undoes_rollouts =>
        kubectl_1_32_reads_and_undoes_rollouts,
        kubectl_1_20_reads_and_undoes_rollouts;
}

/// A Deployment's pod template running `image`.
fn template(image: &str, hash: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": "web", "pod-template-hash": hash}},
        "spec": {"containers": [{"name": "nginx", "image": image}]},
    })
}

/// The ReplicaSet the Deployment controller would have made for `revision`.
fn replica_set(deployment: &Value, revision: u32, image: &str, hash: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": format!("web-{hash}"),
            "labels": {"app": "web", "pod-template-hash": hash},
            "annotations": {"deployment.kubernetes.io/revision": revision.to_string()},
            "ownerReferences": [{
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "web",
                "uid": deployment["metadata"]["uid"],
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web", "pod-template-hash": hash}},
            "template": template(image, hash),
        },
    })
}

fn kubectl_reads_and_undoes_rollouts(version: Version) {
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    kubectl.ok(&["create", "deployment", "web", "--image=nginx:1.27"]);
    let deployment = kubectl
        .ok(&["get", "deployment", "web", "-o", "json"])
        .json();
    let sets = [
        replica_set(&deployment, 1, "nginx:1.26", "5d8f7c9b6a"),
        replica_set(&deployment, 2, "nginx:1.27", "6c9d8f7b5e"),
    ];
    let file = kubectl.write_file(
        "sets.json",
        &json!({"apiVersion": "v1", "kind": "List", "items": sets}).to_string(),
    );
    kubectl.ok(&["create", "-f", &file]);
    // The Deployment controller's annotation on the Deployment: its current revision.
    kubectl.ok(&[
        "annotate",
        "deployment",
        "web",
        "deployment.kubernetes.io/revision=2",
    ]);

    let history = kubectl.ok(&["rollout", "history", "deployment/web"]).stdout;
    let revisions: Vec<&str> = (history.lines())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|first| first.parse::<u32>().is_ok())
        .collect();
    assert_eq!(revisions, ["1", "2"], "{history}");
    let first = kubectl
        .ok(&["rollout", "history", "deployment/web", "--revision=1"])
        .stdout;
    assert!(first.contains("nginx:1.26"), "{first}");

    kubectl.ok(&["rollout", "undo", "deployment/web", "--to-revision=1"]);
    let undone = kubectl
        .ok(&["get", "deployment", "web", "-o", "json"])
        .json();
    assert_eq!(
        undone["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.26",
        "{undone}"
    );
    // kubectl takes the ReplicaSet's template without its pod-template-hash label.
    assert_eq!(
        undone["spec"]["template"]["metadata"]["labels"],
        json!({"app": "web"})
    );

    // A DaemonSet's revisions are ControllerRevisions.
    let daemon_set = json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "fluentd:2"}]},
            },
        },
    });
    let file = kubectl.write_file("agent.json", &daemon_set.to_string());
    kubectl.ok(&["create", "-f", &file]);
    let created = kubectl
        .ok(&["get", "daemonset", "agent", "-o", "json"])
        .json();
    let revision = |n: u32, image: &str| {
        json!({
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "name": format!("agent-{n}"),
                "labels": {"app": "agent", "controller-revision-hash": format!("hash{n}")},
                "ownerReferences": [{
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": "agent",
                    "uid": created["metadata"]["uid"],
                    "controller": true,
                }],
            },
            "revision": n,
            "data": {"spec": {"template": {
                "$patch": "replace",
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": image}]},
            }}},
        })
    };
    let file = kubectl.write_file(
        "revisions.json",
        &json!({"apiVersion": "v1", "kind": "List", "items": [revision(1, "fluentd:1"), revision(2, "fluentd:2")]}).to_string(),
    );
    kubectl.ok(&["create", "-f", &file]);
    let history = kubectl
        .ok(&["rollout", "history", "daemonset/agent"])
        .stdout;
    assert!(history.lines().any(|l| l.starts_with('1')), "{history}");
    assert!(history.lines().any(|l| l.starts_with('2')), "{history}");
    kubectl.ok(&["rollout", "undo", "daemonset/agent", "--to-revision=1"]);
    let undone = kubectl
        .ok(&["get", "daemonset", "agent", "-o", "json"])
        .json();
    assert_eq!(
        undone["spec"]["template"]["spec"]["containers"][0]["image"], "fluentd:1",
        "{undone}"
    );
}
