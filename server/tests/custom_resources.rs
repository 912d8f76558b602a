//! The kinds CustomResourceDefinitions define, served by the real `kapi-server` once their
//! definition is `Established`: names accepted or refused as kube's naming controller
//! decides, objects created, read, listed, watched, patched and deleted through both
//! served versions, pruned and defaulted to each version's schema, validated against it
//! with kube's field paths, the status split off the main resource, printer columns in
//! Tables, and kube's 415 for strategic merge patches.
//!
//! Raw HTTP, to see kube's exact answers; kubectl on these kinds is in `crds.rs`, kube-rs
//! in `reflector.rs`, the Python client in `python_client.rs`.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::crontabs::{
    CRONTABS, DEFINITIONS, condition, crontab, crontab_definition, names_refused, serve_crontabs,
    wait_established,
};
use support::{Server, wait_for};

#[test]
fn a_defined_kind_is_served_once_established() {
    let server = Server::start();
    let client = server.client();
    let created = client.post(DEFINITIONS, &crontab_definition()).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let established = wait_established(&client, "crontabs.stable.example.com");
    assert_eq!(established["reason"], "InitialNamesAccepted");
    let accepted = condition(&client, "crontabs.stable.example.com", "NamesAccepted").unwrap();
    assert_eq!(
        (
            &accepted["status"],
            &accepted["reason"],
            &accepted["message"]
        ),
        (
            &json!("True"),
            &json!("NoConflicts"),
            &json!("no conflicts found")
        )
    );
    let crd = client
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com")
        .unwrap()
        .json();
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "CronTab", "{crd}");
    assert_eq!(
        crd["status"]["acceptedNames"]["listKind"], "CronTabList",
        "{crd}"
    );

    // Create: pruned (unknown fields warned about), defaulted, status dropped.
    let mut body = crontab(
        "nightly",
        json!({"cronSpec": "0 0 * * *", "bogus": 1, "extra": {"anything": {"kept": true}}}),
    );
    body["status"] = json!({"replicas": 9});
    let created = client.post(CRONTABS, &body).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let object = created.json();
    assert_eq!(object["spec"]["replicas"], 1, "{object}");
    assert_eq!(object["spec"]["mode"], "Slow", "{object}");
    assert_eq!(
        object["spec"]["extra"]["anything"]["kept"], true,
        "{object}"
    );
    assert!(object["spec"].get("bogus").is_none(), "{object}");
    assert!(object.get("status").is_none(), "{object}");
    assert_eq!(object["metadata"]["generation"], 1, "{object}");
    assert_eq!(
        created.warnings,
        [r#"299 - "unknown field \"spec.bogus\"""#],
        "{created:?}"
    );

    // Strict field validation refuses unknown fields instead.
    let strict = client
        .post(
            &format!("{CRONTABS}?fieldValidation=Strict"),
            &crontab("strict", json!({"cronSpec": "x", "bogus": 1})),
        )
        .unwrap();
    assert_eq!(strict.status, 400, "{strict:?}");
    assert!(
        strict
            .body
            .contains(r#"strict decoding error: unknown field \"spec.bogus\""#),
        "{strict:?}"
    );

    // Invalid objects: kube's field paths and messages.
    let invalid = client
        .post(
            CRONTABS,
            &crontab(
                "bad",
                json!({"replicas": -1, "mode": "Medium", "interval": 30,
                       "template": {"image": "a", "tag": "b"}}),
            ),
        )
        .unwrap();
    assert_eq!(invalid.status, 422, "{invalid:?}");
    let status = invalid.json();
    let causes: Vec<&str> = (status["details"]["causes"].as_array().unwrap().iter())
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert!(causes.contains(&"spec.cronSpec"), "{status}");
    assert!(causes.contains(&"spec.replicas"), "{status}");
    assert!(causes.contains(&"spec.mode"), "{status}");
    assert!(causes.contains(&"spec.template"), "{status}");
    let message = status["message"].as_str().unwrap();
    assert!(
        message.contains(
            "spec.interval: Invalid value: 30: must validate at least one schema (anyOf)"
        ),
        "{status}"
    );
    let odd = client
        .post(
            CRONTABS,
            &crontab("odd", json!({"cronSpec": "x", "interval": 61})),
        )
        .unwrap();
    assert_eq!(odd.status, 422, "{odd:?}");
    assert!(odd.body.contains("should be a multiple of 5"), "{odd:?}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with("CronTab.stable.example.com \"bad\" is invalid"),
        "{status}"
    );

    // Read through both versions; the deprecated-free v1beta1 names its own apiVersion.
    let read = client.get(&format!("{CRONTABS}/nightly")).unwrap().json();
    assert_eq!(read["apiVersion"], "stable.example.com/v1");
    let beta = client
        .get("/apis/stable.example.com/v1beta1/namespaces/default/crontabs/nightly")
        .unwrap()
        .json();
    assert_eq!(beta["apiVersion"], "stable.example.com/v1beta1", "{beta}");
    assert_eq!(beta["spec"]["cronSpec"], "0 0 * * *", "{beta}");

    // Merge patch; strategic merge is kube's 415 for custom resources.
    let patched = client
        .request(
            "PATCH",
            &format!("{CRONTABS}/nightly"),
            "application/merge-patch+json",
            Some(r#"{"spec":{"replicas":3}}"#),
        )
        .unwrap();
    assert_eq!(patched.status, 200, "{patched:?}");
    assert_eq!(patched.json()["metadata"]["generation"], 2);
    let strategic = client
        .request(
            "PATCH",
            &format!("{CRONTABS}/nightly"),
            "application/strategic-merge-patch+json",
            Some(r#"{"spec":{"replicas":4}}"#),
        )
        .unwrap();
    assert_eq!(strategic.status, 415, "{strategic:?}");
    assert!(
        strategic.body.contains(
            "accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        ),
        "{strategic:?}"
    );

    // Status and scale subresources.
    let status = client
        .request(
            "PATCH",
            &format!("{CRONTABS}/nightly/status"),
            "application/merge-patch+json",
            Some(r#"{"status":{"replicas":3},"spec":{"replicas":7}}"#),
        )
        .unwrap();
    assert_eq!(status.status, 200, "{status:?}");
    let object = status.json();
    assert_eq!(
        (&object["status"]["replicas"], &object["spec"]["replicas"]),
        (&json!(3), &json!(3))
    );
    let scale = client
        .get(&format!("{CRONTABS}/nightly/scale"))
        .unwrap()
        .json();
    assert_eq!(scale["kind"], "Scale", "{scale}");
    assert_eq!(
        (&scale["spec"]["replicas"], &scale["status"]["replicas"]),
        (&json!(3), &json!(3))
    );

    // Lists (also of every namespace) and Tables with the printer columns.
    let list = client.get(CRONTABS).unwrap().json();
    assert_eq!(list["kind"], "CronTabList", "{list}");
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");
    let all = client
        .get("/apis/stable.example.com/v1/crontabs")
        .unwrap()
        .json();
    assert_eq!(all["items"].as_array().unwrap().len(), 1, "{all}");
    let (code, table) = client
        .get_accepting(CRONTABS, "application/json;as=Table;v=v1;g=meta.k8s.io")
        .unwrap();
    assert_eq!(code, 200);
    let table: Value = serde_json::from_slice(&table).unwrap();
    let headers: Vec<&str> = (table["columnDefinitions"].as_array().unwrap().iter())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(headers, ["Name", "Spec", "Replicas"], "{table}");
    assert_eq!(
        table["rows"][0]["cells"],
        json!(["nightly", "0 0 * * *", 3]),
        "{table}"
    );

    // Watch: a delete reaches a watcher.
    let mut watch = client
        .watch(
            &format!("{CRONTABS}?watch=true&resourceVersion=0"),
            "application/json",
        )
        .unwrap();
    let added = watch.next_event(Duration::from_secs(5));
    assert_eq!(added["type"], "ADDED", "{added}");
    let deleted = client.delete(&format!("{CRONTABS}/nightly")).unwrap();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    let event = watch.next_event(Duration::from_secs(5));
    assert_eq!(event["type"], "DELETED", "{event}");

    // Requests to the kind are counted under its group, version and resource.
    let metrics = client.get("/metrics").unwrap().body;
    let counted = metrics.lines().any(|line| {
        line.starts_with("apiserver_request_total{")
            && line.contains(r#"group="stable.example.com""#)
            && line.contains(r#"resource="crontabs""#)
            && line.contains(r#"subresource="scale""#)
            && line.contains(r#"verb="GET""#)
    });
    assert!(counted, "no request count of crontabs/scale:\n{metrics}");

    // What is not served: an unknown version, a subresource the kind lacks, a method a
    // path does not take.
    let missing = client
        .get("/apis/stable.example.com/v2/namespaces/default/crontabs")
        .unwrap();
    assert_eq!(missing.status, 404, "{missing:?}");
    let missing = client.get(&format!("{CRONTABS}/nightly/logs")).unwrap();
    assert_eq!(missing.status, 404, "{missing:?}");
    let wrong = client
        .post(&format!("{CRONTABS}/nightly"), &json!({}))
        .unwrap();
    assert_eq!(wrong.status, 405, "{wrong:?}");
}

/// CEL rules are refused with a clear reason: this server does not evaluate them, and
/// ignoring them would store objects kube rejects.
#[test]
fn names_in_use_are_not_accepted() {
    let (_server, client) = serve_crontabs();

    // Another definition of the group wanting the same kind: NamesAccepted is False.
    let mut rival = crontab_definition();
    rival["metadata"]["name"] = json!("crontables.stable.example.com");
    rival["spec"]["names"] =
        json!({"plural": "crontables", "kind": "CronTab", "shortNames": ["ct"]});
    let created = client.post(DEFINITIONS, &rival).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let refused = names_refused(&client, "crontables.stable.example.com");
    // Every name is checked and the last conflict is reported, as kube's naming
    // controller does: the short name, the kind, then the list kind.
    assert_eq!(refused["reason"], "ListKindConflict", "{refused}");
    assert_eq!(
        refused["message"], "\"CronTabList\" is already in use",
        "{refused}"
    );
    let established = condition(&client, "crontables.stable.example.com", "Established").unwrap();
    assert_eq!(
        (&established["status"], &established["reason"]),
        (&json!("False"), &json!("NotAccepted"))
    );
    let unserved = client
        .get("/apis/stable.example.com/v1/crontables")
        .unwrap();
    assert_eq!(unserved.status, 404, "{unserved:?}");

    // A compiled kind's plural in its group.
    let mut webapps = crontab_definition();
    webapps["metadata"]["name"] = json!("webapps.apps.example.dev");
    webapps["spec"]["group"] = json!("apps.example.dev");
    webapps["spec"]["names"] = json!({"plural": "webapps", "kind": "OtherApp"});
    client.post(DEFINITIONS, &webapps).unwrap();
    let refused = names_refused(&client, "webapps.apps.example.dev");
    assert_eq!(refused["reason"], "PluralConflict", "{refused}");
    // The compiled kind is still the one served.
    let list = client
        .get("/apis/apps.example.dev/v1/webapps")
        .unwrap()
        .json();
    assert_eq!(list["kind"], "WebAppList", "{list}");
}

#[test]
fn deleting_a_definition_deletes_its_objects_first() {
    let (_server, client) = serve_crontabs();
    const DEFINITION: &str =
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com";
    for name in ["a", "b"] {
        let created = client
            .post(CRONTABS, &crontab(name, json!({"cronSpec": "x"})))
            .unwrap();
        assert_eq!(created.status, 201, "{created:?}");
    }
    // One object is held by a finalizer of its own: the definition waits for it.
    let mut held = crontab("held", json!({"cronSpec": "x"}));
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    assert_eq!(client.post(CRONTABS, &held).unwrap().status, 201);

    // The first delete only marks the definition, with kube's finalizer and condition.
    let deleted = client.delete(DEFINITION).unwrap();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    let marked = deleted.json();
    assert!(
        marked["metadata"]["deletionTimestamp"].is_string(),
        "{marked}"
    );
    assert_eq!(
        marked["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"]),
        "{marked}"
    );

    // Its objects go (the held one is marked), and the definition waits, saying why.
    let held_back = || {
        let left = client.get(CRONTABS).unwrap().json();
        let items = left["items"].as_array().cloned().unwrap_or_default();
        (items.len() == 1 && items[0]["metadata"]["deletionTimestamp"].is_string()).then_some(())
    };
    wait_for(
        Duration::from_secs(10),
        "only the held object to be left, marked",
        || format!("{:?}", client.get(CRONTABS)),
        held_back,
    );
    let waiting = wait_for(
        Duration::from_secs(10),
        "the definition to say it waits",
        || format!("{:?}", client.get(DEFINITION)),
        || {
            condition(&client, "crontabs.stable.example.com", "Terminating")
                .filter(|c| c["reason"] == "InstanceDeletionInProgress")
        },
    );
    assert_eq!(
        waiting["message"], "CustomResource deletion is in progress",
        "{waiting}"
    );
    // While it terminates, its kind takes no new objects (kube's 405).
    let refused = client
        .post(CRONTABS, &crontab("late", json!({"cronSpec": "x"})))
        .unwrap();
    assert_eq!(refused.status, 405, "{refused:?}");
    let status = refused.json();
    assert_eq!(
        (&status["reason"], &status["message"]),
        (
            &json!("MethodNotAllowed"),
            &json!("create not allowed while custom resource definition is terminating")
        ),
        "{status}"
    );
    let left = client.get(CRONTABS).unwrap().json();
    let names: Vec<&str> = (left["items"].as_array().unwrap().iter())
        .map(|item| item["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["held"], "{left}");

    // Once its finalizer is off, the object goes, then the definition, then its kind.
    let released = client
        .request(
            "PATCH",
            &format!("{CRONTABS}/held"),
            "application/merge-patch+json",
            Some(r#"{"metadata":{"finalizers":null}}"#),
        )
        .unwrap();
    assert_eq!(released.status, 200, "{released:?}");
    wait_for(
        Duration::from_secs(10),
        "the definition to go",
        || format!("{:?}", client.get(DEFINITION)),
        || (client.get(DEFINITION).unwrap().status == 404).then_some(()),
    );
    wait_for(
        Duration::from_secs(10),
        "its kind to stop being served",
        String::new,
        || (client.get(CRONTABS).unwrap().status == 404).then_some(()),
    );

    // Defined again, the kind starts empty.
    client.post(DEFINITIONS, &crontab_definition()).unwrap();
    wait_established(&client, "crontabs.stable.example.com");
    let list = client.get(CRONTABS).unwrap().json();
    assert_eq!(list["items"], json!([]), "{list}");
}

/// Several replicas on one etcd: a definition created through one is served by the other
/// (each installs it from its own watch of the definitions), objects written through
/// either are read through both, and deleting it through the other stops both.
#[cfg(feature = "etcd")]
#[test]
fn two_replicas_on_etcd_serve_a_definition_made_through_either() {
    use support::etcd::Etcd;
    use support::server::etcd_args;

    let etcd = Etcd::start();
    let a = Server::start_with(&etcd_args(&etcd));
    let b = Server::start_with(&etcd_args(&etcd));
    let (client_a, client_b) = (a.client(), b.client());
    let created = client_a.post(DEFINITIONS, &crontab_definition()).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let started = std::time::Instant::now();
    wait_for(
        Duration::from_secs(5),
        "the other replica to serve the kind",
        || format!("{:?}", client_b.get(CRONTABS)),
        || (client_b.get(CRONTABS).unwrap().status == 200).then_some(()),
    );
    eprintln!("served by the other replica after {:?}", started.elapsed());
    // Each replica installs the kind from its own watch, the one it was created through
    // too: it may come second.
    wait_for(
        Duration::from_secs(5),
        "the first replica to serve the kind",
        || format!("{:?}", client_a.get(CRONTABS)),
        || (client_a.get(CRONTABS).unwrap().status == 200).then_some(()),
    );
    let created = client_b
        .post(CRONTABS, &crontab("x", json!({"cronSpec": "y"})))
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let read = client_a.get(&format!("{CRONTABS}/x")).unwrap();
    assert_eq!(read.status, 200, "{read:?}");
    assert_eq!(read.json()["spec"]["replicas"], 1);

    let deleted = client_b
        .delete(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
        )
        .unwrap();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    wait_for(
        Duration::from_secs(10),
        "both replicas to stop serving the kind",
        String::new,
        || {
            let gone = |client: &support::http::Client| client.get(CRONTABS).unwrap().status == 404;
            (gone(&client_a) && gone(&client_b)).then_some(())
        },
    );
    for server in [&a, &b] {
        let log = server.log().tail(2000);
        assert!(
            !log.contains("crd controller"),
            "a failed controller pass:\n{log}"
        );
    }
}

/// A definition with a `Webhook` conversion: v1 (`spec.cronSpec`, stored) and v2
/// (`spec.schedule`) served, each object converted by the test's webhook with a
/// ConversionReview v1 over HTTPS trusting the definition's caBundle; a failed conversion
/// is kube's 500 with the webhook's reason.
#[test]
fn a_conversion_webhook_converts_between_versions() {
    use base64::Engine as _;

    let pki = support::pki::Pki::new();
    let webhook = support::webhook::Webhook::start("conversion_webhook.py", &pki);
    let server = Server::start();
    let client = server.client();
    let version = |name: &str, storage: bool, field: &str| {
        json!({
            "name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {field: {"type": "string"}}}
            }}}
        })
    };
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(pki.ca_pem());
    let definition = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab"},
            "versions": [version("v1", true, "cronSpec"), version("v2", false, "schedule")],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": format!("https://127.0.0.1:{}/convert", webhook.port),
                    "caBundle": ca_bundle
                }
            }}
        }
    });
    let created = client.post(DEFINITIONS, &definition).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    wait_established(&client, "crontabs.stable.example.com");
    const V2: &str = "/apis/stable.example.com/v2/namespaces/default/crontabs";

    // Written in the storage version: no call. Read in v2: one review, v1 to v2 (the
    // first the webhook gets, so the create made none).
    let to_v2 = json!({"desired": "stable.example.com/v2", "from": ["stable.example.com/v1"]});
    let to_v1 = json!({"desired": "stable.example.com/v1", "from": ["stable.example.com/v2"]});
    let nightly = crontab("nightly", json!({"cronSpec": "0 0 * * *"}));
    assert_eq!(client.post(CRONTABS, &nightly).unwrap().status, 201);
    let read = client.get(&format!("{V2}/nightly")).unwrap();
    assert_eq!(read.status, 200, "{read:?}");
    let object = read.json();
    assert_eq!(object["apiVersion"], "stable.example.com/v2", "{object}");
    assert_eq!(object["spec"], json!({"schedule": "0 0 * * *"}), "{object}");
    assert_eq!(object["metadata"]["name"], "nightly", "{object}");
    assert_eq!(webhook.next(), to_v2);

    // Written in v2: converted to v1 to be stored (and back for the answer), read back in
    // v1 without a call.
    let mut hourly = crontab("hourly", json!({"schedule": "0 * * * *"}));
    hourly["apiVersion"] = json!("stable.example.com/v2");
    let created = client.post(V2, &hourly).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    assert_eq!(created.json()["spec"], json!({"schedule": "0 * * * *"}));
    assert_eq!((webhook.next(), webhook.next()), (to_v1, to_v2.clone()));
    let stored = client.get(&format!("{CRONTABS}/hourly")).unwrap().json();
    assert_eq!(stored["spec"], json!({"cronSpec": "0 * * * *"}), "{stored}");

    // A list in v2 converts every item (the next reviews: the read in v1 made none).
    let list = client.get(V2).unwrap().json();
    let schedules: Vec<&Value> = (list["items"].as_array().unwrap().iter())
        .map(|item| &item["spec"]["schedule"])
        .collect();
    assert_eq!(
        schedules,
        [&json!("0 * * * *"), &json!("0 0 * * *")],
        "{list}"
    );
    assert_eq!((webhook.next(), webhook.next()), (to_v2.clone(), to_v2));
    // The webhook refuses one: kube's 500 with its reason.
    let created = client.post(CRONTABS, &crontab("broken", json!({"cronSpec": "x"})));
    assert_eq!(created.unwrap().status, 201);
    let failed = client.get(&format!("{V2}/broken")).unwrap();
    assert_eq!(failed.status, 500, "{failed:?}");
    assert!(
        failed.body.contains(
            "conversion webhook for stable.example.com/v1, Kind=CronTab failed: response.result.status was 'Failure', not 'Success': cannot convert broken"
        ),
        "{failed:?}"
    );
}

/// The garbage collector follows a kind installed after it started: a ConfigMap owned by a
/// CronTab goes with it, and a CronTab owned by a ConfigMap with that.
#[test]
fn owner_references_to_and_from_a_defined_kind_are_collected() {
    let (_server, client) = serve_crontabs();
    const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
    let owner = client
        .post(CRONTABS, &crontab("owner", json!({"cronSpec": "x"})))
        .unwrap()
        .json();
    let reference = |object: &Value| {
        json!([{
            "apiVersion": object["apiVersion"], "kind": object["kind"],
            "name": object["metadata"]["name"], "uid": object["metadata"]["uid"]
        }])
    };
    let dependent = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "owned", "ownerReferences": reference(&owner)}});
    assert_eq!(client.post(CONFIGMAPS, &dependent).unwrap().status, 201);
    let holder = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "holder"}});
    let holder = client.post(CONFIGMAPS, &holder).unwrap().json();
    let mut owned = crontab("owned", json!({"cronSpec": "y"}));
    owned["metadata"]["ownerReferences"] = reference(&holder);
    assert_eq!(client.post(CRONTABS, &owned).unwrap().status, 201);

    assert_eq!(
        client.delete(&format!("{CRONTABS}/owner")).unwrap().status,
        200
    );
    assert_eq!(
        client
            .delete(&format!("{CONFIGMAPS}/holder"))
            .unwrap()
            .status,
        200
    );
    wait_for(
        Duration::from_secs(20),
        "both dependents to be collected",
        String::new,
        || {
            let gone = |path: &str| client.get(path).unwrap().status == 404;
            (gone(&format!("{CONFIGMAPS}/owned")) && gone(&format!("{CRONTABS}/owned")))
                .then_some(())
        },
    );
}

/// A changed definition ends the watches of its kind, as kube ends them: clients watch
/// again and get the kind as it now is (here, a new printer column).
#[test]
fn a_changed_definition_ends_the_watches_of_its_kind() {
    let (_server, client) = serve_crontabs();
    let created = client
        .post(CRONTABS, &crontab("nightly", json!({"cronSpec": "x"})))
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let mut watch = client
        .watch(
            &format!("{CRONTABS}?watch=true&resourceVersion=0"),
            "application/json",
        )
        .unwrap();
    assert_eq!(watch.next_event(Duration::from_secs(5))["type"], "ADDED");

    let path = format!("{DEFINITIONS}/crontabs.stable.example.com");
    let patch = json!({"spec": {"versions": [
        crontab_definition()["spec"]["versions"][0].clone(),
        {
            "name": "v1beta1", "served": false, "storage": false,
            "schema": crontab_definition()["spec"]["versions"][1]["schema"].clone(),
            "subresources": crontab_definition()["spec"]["versions"][1]["subresources"].clone(),
            "additionalPrinterColumns":
                crontab_definition()["spec"]["versions"][1]["additionalPrinterColumns"].clone()
        }
    ]}});
    let patched = client
        .request(
            "PATCH",
            &path,
            "application/merge-patch+json",
            Some(&patch.to_string()),
        )
        .unwrap();
    assert_eq!(patched.status, 200, "{patched:?}");
    // The stream ends (bookmarks aside) once the changed kind is installed.
    wait_for(
        Duration::from_secs(10),
        "the watch to end",
        String::new,
        || (watch.poll_line(Duration::from_millis(50)) == Some(None)).then_some(()),
    );
    // v1beta1 is no longer served.
    let beta = client
        .get("/apis/stable.example.com/v1beta1/namespaces/default/crontabs")
        .unwrap();
    assert_eq!(beta.status, 404, "{beta:?}");
}

/// A changed definition's printer columns make the rows of objects listed before the
/// change: no row keeps the cells of the old columns.
#[test]
fn changed_printer_columns_make_new_rows() {
    let (_server, client) = serve_crontabs();
    let made = client
        .post(
            CRONTABS,
            &crontab("nightly", json!({"cronSpec": "x", "replicas": 1})),
        )
        .unwrap();
    assert_eq!(made.status, 201, "{made:?}");
    // The table, or `None` while the kind is installed again (its route answers a Status
    // for a moment).
    let table = || -> Option<(usize, Value)> {
        let (_, table) = client
            .get_accepting(
                &format!("{CRONTABS}?resourceVersion=0"),
                "application/json;as=Table;v=v1;g=meta.k8s.io",
            )
            .unwrap();
        let table: Value = serde_json::from_slice(&table).unwrap();
        let columns = table["columnDefinitions"].as_array()?.len();
        Some((columns, table["rows"][0]["cells"].clone()))
    };
    // The rows are made, and kept with the object.
    assert_eq!(table(), Some((3, json!(["nightly", "x", 1]))));
    let mut definition = crontab_definition();
    definition["spec"]["versions"][0]["additionalPrinterColumns"] =
        json!([{"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}]);
    let path = format!("{DEFINITIONS}/crontabs.stable.example.com");
    let patch = json!({"spec": {"versions": definition["spec"]["versions"].clone()}});
    let patched = client.merge_patch(&path, &patch).unwrap();
    assert_eq!(patched.status, 200, "{patched:?}");
    wait_for(
        Duration::from_secs(10),
        "the new columns",
        String::new,
        || table().filter(|(columns, _)| *columns == 2),
    );
    assert_eq!(table(), Some((2, json!(["nightly", 1]))));
}

/// Each version's printer columns are its own, as a definition may give them.
#[test]
fn printer_columns_are_per_version() {
    let server = Server::start();
    let client = server.client();
    let mut definition = crontab_definition();
    definition["spec"]["versions"][1]["additionalPrinterColumns"] =
        json!([{"name": "Mode", "type": "string", "jsonPath": ".spec.mode"}]);
    let created = client.post(DEFINITIONS, &definition).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    wait_established(&client, "crontabs.stable.example.com");
    let made = client
        .post(CRONTABS, &crontab("nightly", json!({"cronSpec": "x"})))
        .unwrap();
    assert_eq!(made.status, 201, "{made:?}");
    let table = |path: &str| -> (Vec<String>, Value) {
        let (_, table) = client
            .get_accepting(path, "application/json;as=Table;v=v1;g=meta.k8s.io")
            .unwrap();
        let table: Value = serde_json::from_slice(&table).unwrap();
        let headers = (table["columnDefinitions"].as_array().unwrap().iter())
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect();
        (headers, table["rows"][0]["cells"].clone())
    };
    let v1 = (
        vec!["Name".to_owned(), "Spec".into(), "Replicas".into()],
        json!(["nightly", "x", 1]),
    );
    assert_eq!(table(CRONTABS), v1);
    let beta = "/apis/stable.example.com/v1beta1/namespaces/default/crontabs";
    assert_eq!(
        table(beta),
        (
            vec!["Name".to_owned(), "Mode".into()],
            json!(["nightly", "Slow"])
        )
    );
    // Rows made for one version are not served for the other.
    assert_eq!(table(CRONTABS), v1);
}
