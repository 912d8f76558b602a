//! The namespace lifecycle with kubectl 1.32 and 1.20 against the real `kapi-server` and
//! its namespace controller: a deleted namespace with content, one object holding a
//! finalizer, goes `Terminating`, refuses new content with kube's message, loses the rest
//! of its content, reports what holds it in its conditions, waits for the finalizer, then
//! disappears (`kubectl wait --for=delete` returns).

use crate::support;

use std::time::Duration;

use serde_json::Value;
use support::{Kubectl, Server, Version, for_both_versions, wait_for};

fn names(kubectl: &Kubectl, what: &str, namespace: &str) -> Vec<String> {
    let run = kubectl.ok(&["get", what, "-n", namespace, "-o", "name"]);
    run.stdout.lines().map(str::to_owned).collect()
}

fn terminating_namespace_waits_for_its_content(version: Version) {
    version.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    kubectl.ok(&["create", "namespace", "team"]);
    let created = kubectl.ok(&["get", "ns", "team", "-o", "json"]).json();
    assert_eq!(created["spec"]["finalizers"][0], "kubernetes");
    kubectl.ok(&["create", "configmap", "plain", "-n", "team"]);
    let manifests = kubectl.write_file(
        "content.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, namespace: team, \
         finalizers: [example.com/hold]}\n---\napiVersion: apps.example.dev/v1\nkind: WebApp\n\
         metadata: {name: web, namespace: team}\nspec: {container: {image: nginx:1.27}}\n",
    );
    kubectl.ok(&["create", "-f", &manifests]);

    kubectl.ok(&["delete", "namespace", "team", "--wait=false"]);
    let terminating = kubectl.ok(&["get", "ns", "team", "-o", "json"]).json();
    assert_eq!(terminating["status"]["phase"], "Terminating");
    assert!(terminating["metadata"]["deletionTimestamp"].is_string());
    kubectl
        .fails(&["create", "configmap", "late", "-n", "team"])
        .stderr_has(
            "configmaps \"late\" is forbidden: unable to create new content in namespace team \
             because it is being terminated",
        );

    // The controller removes what it can; the finalizer holds one object.
    wait_for(
        Duration::from_secs(30),
        "the namespace's free content to go",
        || format!("{:?}", names(&kubectl, "cm,wa", "team")),
        || (names(&kubectl, "cm,wa", "team") == ["configmap/held"]).then_some(()),
    );
    let waiting: Value = wait_for(
        Duration::from_secs(30),
        "the conditions to name the finalizer",
        String::new,
        || {
            let namespace = kubectl.ok(&["get", "ns", "team", "-o", "json"]).json();
            let conditions = namespace["status"]["conditions"].as_array()?.clone();
            conditions
                .iter()
                .any(|c| c["type"] == "NamespaceFinalizersRemaining" && c["status"] == "True")
                .then_some(namespace)
        },
    );
    let message = |kind: &str| {
        (waiting["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten())
        .find(|c| c["type"] == kind)
        .map(|c| c["message"].clone())
    };
    assert_eq!(
        message("NamespaceFinalizersRemaining"),
        Some("Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances".into())
    );
    assert_eq!(
        message("NamespaceContentRemaining"),
        Some("Some resources are remaining: configmaps. has 1 resource instances".into())
    );

    // Its finalizer removed, the object goes, and then the namespace.
    let mut wait = kubectl.spawn(&["wait", "--for=delete", "namespace/team", "--timeout=60s"]);
    server.wait_for_watch(Duration::from_secs(30), "metadata.name");
    kubectl.ok(&[
        "patch",
        "cm",
        "held",
        "-n",
        "team",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    wait.wait_line(Duration::from_secs(30), "condition met", |line| {
        line.contains("namespace/team condition met")
    });
    kubectl.fails(&["get", "ns", "team"]).stderr_has("NotFound");
    // A namespace of the same name starts empty and active.
    kubectl.ok(&["create", "namespace", "team"]);
    assert!(names(&kubectl, "cm,wa", "team").is_empty());
    kubectl
        .fails(&["delete", "namespace", "default", "--wait=false"])
        .stderr_has("namespaces \"default\" is forbidden: this namespace may not be deleted");
}

for_both_versions! {
    terminating_namespace_waits_for_its_content => kubectl_1_32_terminating_namespace_waits_for_its_content,
        kubectl_1_20_terminating_namespace_waits_for_its_content;
}
