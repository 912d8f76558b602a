//! Finalizers and deletion with kubectl 1.32 and 1.20 against the real `kapi-server`:
//! a delete of an object with a finalizer leaves it with a `deletionTimestamp`, a new
//! finalizer is then refused with kube's message, removing the last finalizer deletes it,
//! `kubectl wait --for=delete` returns then, and a watcher sees MODIFIED, then DELETED;
//! a delete asking for dependents to go first (`orphanDependents: false`) is answered 202
//! while the object is held.
//! kube's answers to the same requests on a ConfigMap are rows of the differential table.

use crate::support;

use std::time::Duration;

use serde_json::Value;
use support::http::Client;
use support::{Kubectl, Server, Version, for_both_versions};

const MANIFEST: &str = "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata:\n  name: web\n  \
    finalizers: [example.com/hold]\nspec:\n  container: {image: nginx:1.27}\n";

fn held_until_the_last_finalizer_goes(version: Version) {
    version.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    let manifest = kubectl.write_file("web.yaml", MANIFEST);
    kubectl.ok(&["create", "-f", &manifest]);
    let created = kubectl.ok(&["get", "wa", "web", "-o", "json"]).json();
    let revision = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let client = Client::new(server.addr());
    let mut watch = client
        .watch(
            &format!(
                "/apis/apps.example.dev/v1/namespaces/default/webapps?watch=1\
                 &fieldSelector=metadata.name%3Dweb&resourceVersion={revision}"
            ),
            "application/json",
        )
        .expect("a watch");

    // Held: marked for deletion, still there.
    kubectl.ok(&["delete", "wa", "web", "--wait=false"]);
    let held = kubectl.ok(&["get", "wa", "web", "-o", "json"]).json();
    assert!(
        held["metadata"]["deletionTimestamp"].is_string(),
        "{held:#}"
    );
    assert_eq!(held["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(held["metadata"]["finalizers"][0], "example.com/hold");
    assert_eq!(
        held["metadata"]["generation"], 2,
        "the deletion request moves the generation"
    );
    let event = watch.next_event(Duration::from_secs(10));
    assert_eq!(event["type"], "MODIFIED");
    assert_eq!(
        event["object"]["metadata"]["deletionTimestamp"],
        held["metadata"]["deletionTimestamp"]
    );
    // Deleting again changes nothing.
    kubectl.ok(&["delete", "wa", "web", "--wait=false"]);
    assert_eq!(kubectl.ok(&["get", "wa", "web", "-o", "json"]).json(), held);
    // kube answers 202 to a delete that leaves the object held though it asked for its
    // dependents to go (the deprecated `orphanDependents: false`).
    let body = r#"{"kind":"DeleteOptions","apiVersion":"v1","orphanDependents":false}"#;
    let path = "/apis/apps.example.dev/v1/namespaces/default/webapps/web";
    let accepted = client
        .request("DELETE", path, "application/json", Some(body))
        .unwrap();
    assert_eq!(accepted.status, 202, "{accepted:?}");
    let answered = accepted.json();
    for field in ["deletionTimestamp", "resourceVersion", "finalizers"] {
        assert_eq!(
            answered["metadata"][field], held["metadata"][field],
            "{field}"
        );
    }

    // No new finalizers while deleting.
    kubectl
        .fails(&[
            "patch",
            "wa",
            "web",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}"#,
        ])
        .stderr_has(
            "The WebApp \"web\" is invalid: metadata.finalizers: Forbidden: no new finalizers \
             can be added if the object is being deleted, found new finalizers \
             []string{\"example.com/more\"}",
        );

    // Removing the last finalizer deletes it; `kubectl wait --for=delete` returns.
    let mut wait = kubectl.spawn(&["wait", "--for=delete", "wa/web", "--timeout=60s"]);
    // kubectl waits by watching (`watch=true`; this test's own watch says `watch=1`): it
    // must see the object before it goes, or it finds nothing to wait for.
    server.wait_for_watch(Duration::from_secs(30), "metadata.name");
    kubectl.ok(&[
        "patch",
        "wa",
        "web",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    wait.wait_line(Duration::from_secs(30), "condition met", |line| {
        line.contains("webapp.apps.example.dev/web condition met")
    });
    let event = watch.next_event(Duration::from_secs(10));
    assert_eq!(event["type"], "DELETED");
    assert_eq!(event["object"]["metadata"]["name"], "web");
    kubectl.fails(&["get", "wa", "web"]).stderr_has("NotFound");
    let gone: Value = client
        .get("/apis/apps.example.dev/v1/namespaces/default/webapps/web")
        .expect("a response")
        .json();
    assert_eq!(gone["code"], 404);
}

fn finalizer_names_are_validated(version: Version) {
    version.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    let manifest = kubectl.write_file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, finalizers: [cleanup]}\n",
    );
    kubectl.fails(&["create", "-f", &manifest]).stderr_has(
        "The ConfigMap \"c\" is invalid: metadata.finalizers[0]: Invalid value: \"cleanup\": \
         name is neither a standard finalizer name nor is it fully qualified",
    );
    kubectl.fails(&["get", "cm", "c"]).stderr_has("NotFound");
}

for_both_versions! {
    held_until_the_last_finalizer_goes => kubectl_1_32_held_until_the_last_finalizer_goes,
        kubectl_1_20_held_until_the_last_finalizer_goes;
    finalizer_names_are_validated => kubectl_1_32_finalizer_names_are_validated,
        kubectl_1_20_finalizer_names_are_validated;
}
