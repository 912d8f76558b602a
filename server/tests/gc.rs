//! The built-in garbage collector with kubectl 1.32 and 1.20 against the real
//! `kapi-server`: a ConfigMap owned by a WebApp is collected after `kubectl delete wa`
//! (Background); stays and loses its owner reference with `--cascade=orphan`; with
//! `--cascade=foreground` the owner waits, carrying `foregroundDeletion`, while a blocking
//! dependent holds its own finalizer, across a `kill -9` and restart of the server, and
//! both go once it is removed; a dependent whose owner never existed is collected; a
//! dependent with several owners stays while one exists, losing its references to owners
//! that went or wait for their dependents in the foreground; one whose owner is of a kind
//! the server does not serve stays.

use crate::support;

use std::time::Duration;

use serde_json::Value;
use support::{Kubectl, Server, Version, for_both_versions, wait_for};

const DEADLINE: Duration = Duration::from_secs(30);

/// Creates WebApp `name`; returns its uid.
fn owner(kubectl: &Kubectl, name: &str) -> String {
    let file = kubectl.write_file(
        &format!("{name}.yaml"),
        &format!(
            "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata: {{name: {name}}}\n\
             spec: {{container: {{image: nginx:1.27}}}}\n"
        ),
    );
    kubectl.ok(&["create", "-f", &file]);
    let object = kubectl.ok(&["get", "wa", name, "-o", "json"]).json();
    object["metadata"]["uid"].as_str().unwrap().to_owned()
}

/// Creates ConfigMap `name` owned by WebApp `owner` (`uid`), optionally blocking its
/// owner's deletion and holding a finalizer.
fn dependent(kubectl: &Kubectl, name: &str, owner: &str, uid: &str, blocking: bool, held: bool) {
    let finalizers = if held { "[example.com/hold]" } else { "[]" };
    let file = kubectl.write_file(
        &format!("{name}.yaml"),
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  finalizers: {finalizers}\n  \
             ownerReferences:\n  - {{apiVersion: apps.example.dev/v1, kind: WebApp, name: {owner}, \
             uid: {uid}, blockOwnerDeletion: {blocking}}}\n"
        ),
    );
    kubectl.ok(&["create", "-f", &file]);
}

fn get(kubectl: &Kubectl, what: &str) -> Option<Value> {
    let run = kubectl.run(&["get", what, "-o", "json"]);
    run.succeeded().then(|| run.json())
}

fn wait_gone(kubectl: &Kubectl, what: &str) {
    wait_for(
        DEADLINE,
        &format!("{what} to be collected"),
        String::new,
        || get(kubectl, what).is_none().then_some(()),
    );
}

fn collects_dependents(version: Version) {
    version.binary();
    let mut server = Server::start();
    let mut kubectl = Kubectl::new(version, &server);

    // Background (kubectl's default): the owner goes at once, the dependent after it.
    let uid = owner(&kubectl, "bg");
    dependent(&kubectl, "bg-dep", "bg", &uid, false, false);
    kubectl.ok(&["delete", "wa", "bg"]);
    wait_gone(&kubectl, "cm/bg-dep");

    // Orphan: the dependent stays, without its owner reference.
    let uid = owner(&kubectl, "orph");
    dependent(&kubectl, "orph-dep", "orph", &uid, false, false);
    kubectl.ok(&["delete", "wa", "orph", "--cascade=orphan"]);
    wait_gone(&kubectl, "wa/orph");
    let orphan = get(&kubectl, "cm/orph-dep").expect("the orphan stays");
    assert!(
        orphan["metadata"].get("ownerReferences").is_none(),
        "{orphan:#}"
    );

    // Foreground: the owner waits for a blocking dependent its finalizer holds.
    let uid = owner(&kubectl, "fg");
    dependent(&kubectl, "fg-dep", "fg", &uid, true, true);
    kubectl.ok(&["delete", "wa", "fg", "--cascade=foreground", "--wait=false"]);
    let waiting = wait_for(
        DEADLINE,
        "the dependent to be deleting",
        String::new,
        || {
            let dependent = get(&kubectl, "cm/fg-dep")?;
            dependent["metadata"]["deletionTimestamp"]
                .is_string()
                .then_some(())?;
            get(&kubectl, "wa/fg")
        },
    );
    assert_eq!(
        waiting["metadata"]["finalizers"],
        serde_json::json!(["foregroundDeletion"])
    );
    assert!(waiting["metadata"]["deletionTimestamp"].is_string());

    // A restart in the middle changes nothing: the work is what is stored.
    server.kill_9();
    server.restart();
    kubectl = Kubectl::new(version, &server);
    assert!(get(&kubectl, "wa/fg").is_some(), "the owner still waits");
    kubectl.ok(&[
        "patch",
        "cm",
        "fg-dep",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    wait_gone(&kubectl, "cm/fg-dep");
    wait_gone(&kubectl, "wa/fg");

    // An owner uid no object ever had: collected.
    dependent(
        &kubectl,
        "ghost-dep",
        "ghost",
        "00000000-0000-4000-8000-000000000009",
        false,
        false,
    );
    wait_gone(&kubectl, "cm/ghost-dep");
    // An owner that exists keeps its dependent: once a dependent without an owner, created
    // after it, is collected, a pass has seen both.
    let uid = owner(&kubectl, "alive");
    dependent(&kubectl, "alive-dep", "alive", &uid, false, false);
    // An owner of a kind this server does not serve: nobody can tell, the dependent stays.
    let file = kubectl.write_file(
        "foreign-dep.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: foreign-dep\n  ownerReferences:\n  \
         - {apiVersion: gadgets.example.com/v1, kind: Gadget, name: p, uid: 00000000-0000-4000-8000-00000000000b}\n",
    );
    kubectl.ok(&["create", "-f", &file]);
    dependent(
        &kubectl,
        "ghost-2",
        "ghost",
        "00000000-0000-4000-8000-00000000000a",
        false,
        false,
    );
    wait_gone(&kubectl, "cm/ghost-2");
    assert!(get(&kubectl, "cm/alive-dep").is_some());
    assert!(get(&kubectl, "cm/foreign-dep").is_some());

    // Several owners: while one exists the dependent stays, and loses its references to
    // an owner that went and to one that waits for its dependents (which then goes).
    let uids: Vec<String> = ["one", "two", "three"]
        .iter()
        .map(|name| owner(&kubectl, name))
        .collect();
    let references: String = (["one", "two", "three"].iter().zip(&uids))
        .map(|(name, uid)| {
            format!(
                "  - {{apiVersion: apps.example.dev/v1, kind: WebApp, name: {name}, uid: {uid}, \
                 blockOwnerDeletion: true}}\n"
            )
        })
        .collect();
    let file = kubectl.write_file(
        "shared.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  ownerReferences:\n{references}"
        ),
    );
    kubectl.ok(&["create", "-f", &file]);
    let owned_by = |names: &[&str]| {
        let expected: Vec<&str> = names.to_vec();
        wait_for(
            DEADLINE,
            &format!("cm/shared to be owned by {expected:?}"),
            || format!("{:#}", get(&kubectl, "cm/shared").unwrap_or_default()),
            || {
                let shared = get(&kubectl, "cm/shared")?;
                let owners: Vec<&str> = (shared["metadata"]["ownerReferences"].as_array()?)
                    .iter()
                    .filter_map(|r| r["name"].as_str())
                    .collect();
                (owners == expected).then_some(())
            },
        )
    };
    kubectl.ok(&["delete", "wa", "one"]);
    owned_by(&["two", "three"]);
    kubectl.ok(&[
        "delete",
        "wa",
        "two",
        "--cascade=foreground",
        "--wait=false",
    ]);
    owned_by(&["three"]);
    wait_gone(&kubectl, "wa/two");
    assert!(
        get(&kubectl, "cm/shared").is_some(),
        "a live owner keeps it"
    );
    kubectl.ok(&["delete", "wa", "three"]);
    wait_gone(&kubectl, "cm/shared");

    assert!(
        !server.log().tail(4000).contains("garbage collector"),
        "a failed pass"
    );
}

for_both_versions! {
    collects_dependents => kubectl_1_32_collects_dependents, kubectl_1_20_collects_dependents;
}
