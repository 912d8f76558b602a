//! kube's ValidatingAdmissionPolicy end-to-end scenarios (kubernetes/kubernetes
//! `test/e2e/apimachinery/validatingadmissionpolicy.go`, the admissionregistration.k8s.io/v1
//! version of 1.30 and later) against the real server: the policy scenarios replayed from
//! data (`kube_e2e.json`) over raw HTTP, each in a namespace of its own labelled as kube's
//! framework labels it; the two conformance scenarios of API operations followed step by
//! step with kube-rs, as client-go drives them in kube's test.
//!
//! A scenario's policy matches namespaces labelled `<unique>: "true"` (`${unique}` in the
//! data). The binding is kube's `createBinding` (that label, `Deny`); the marker is created
//! until it is refused as invalid (kube's `waiting until the marker is denied`), then each
//! request is sent and must be admitted; a type check waits for the policy's
//! `status.typeChecking` and compares its warnings (field reference, and the text kube's
//! test looks for in the warning).

use std::cell::RefCell;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::http::Client;
use crate::support::{Server, wait_for};

const ADMISSION: &str = "/apis/admissionregistration.k8s.io/v1";

/// `path` in `namespace` for the apps/v1 `resource`.
fn apps(namespace: &str, resource: &str) -> String {
    format!("/apis/apps/v1/namespaces/{namespace}/{resource}")
}

/// The status of `POST path`, and its body.
fn post(client: &Client, path: &str, object: &Value) -> (u16, Value) {
    let response = client.post(path, object).unwrap();
    let body = serde_json::from_str(&response.body).unwrap_or(Value::Null);
    (response.status, body)
}

#[track_caller]
fn create(client: &Client, path: &str, object: &Value) {
    let (status, body) = post(client, path, object);
    assert_eq!(status, 201, "{path}: {body}");
}

/// kube's `createBinding`: the policy bound in the scenario's namespaces, denying.
fn binding(unique: &str, policy: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": format!("{unique}.binding.example.com")},
        "spec": {"policyName": policy, "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {unique: "true"}}}}})
}

/// Creates the marker until it is refused as invalid (deleting it whenever it was not).
fn wait_marker(client: &Client, namespace: &str, marker: &Value) {
    let path = apps(namespace, marker["resource"].as_str().unwrap());
    let object = &marker["object"];
    let name = object["metadata"]["name"].as_str().unwrap();
    let last = RefCell::new(String::new());
    wait_for(
        Duration::from_secs(10),
        "the marker to be denied",
        || last.borrow().clone(),
        || {
            let (status, body) = post(client, &path, object);
            *last.borrow_mut() = format!("{status}: {body}");
            if status == 201 {
                client.delete(&format!("{path}/{name}")).ok()?;
            }
            (status == 422 && body["reason"] == "Invalid").then_some(())
        },
    );
}

/// Waits for `name`'s type check, and returns its warnings.
fn type_checked(client: &Client, name: &str) -> Vec<Value> {
    let path = format!("{ADMISSION}/validatingadmissionpolicies/{name}");
    let last = RefCell::new(String::new());
    wait_for(
        Duration::from_secs(10),
        "the policy's type check",
        || last.borrow().clone(),
        || {
            let policy = client.get(&path).ok()?.json();
            *last.borrow_mut() = policy["status"].to_string();
            let checked = &policy["status"]["typeChecking"];
            checked
                .is_object()
                .then(|| (checked["expressionWarnings"].as_array().cloned()).unwrap_or_default())
        },
    )
}

/// Plays one scenario in namespace `unique`; what went wrong, if anything.
fn play(client: &Client, case: &Value, unique: &str) -> Vec<String> {
    let case: Value = serde_json::from_str(&case.to_string().replace("${unique}", unique)).unwrap();
    let mut wrong = Vec::new();
    let namespace = json!({"metadata": {"name": unique, "labels": {unique: "true"}}});
    create(client, "/api/v1/namespaces", &namespace);
    if let Some(crd) = case.get("crd") {
        create(
            client,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            crd,
        );
        // kube waits for the group-version's OpenAPI v3 document.
        let key = format!("apis/{}/v1", crd["spec"]["group"].as_str().unwrap());
        wait_for(
            Duration::from_secs(10),
            "the definition's OpenAPI document",
            String::new,
            || {
                let index = client.get("/openapi/v3").ok()?.json();
                index["paths"].get(&key).map(|_| ())
            },
        );
    }
    let policies = format!("{ADMISSION}/validatingadmissionpolicies");
    if let Some(policy) = case.get("policy") {
        create(client, &policies, policy);
        let name = policy["metadata"]["name"].as_str().unwrap();
        if case["bind"] == true {
            let bindings = format!("{ADMISSION}/validatingadmissionpolicybindings");
            create(client, &bindings, &binding(unique, name));
        }
    }
    if let Some(marker) = case.get("marker") {
        wait_marker(client, unique, marker);
    }
    for request in case["requests"].as_array().into_iter().flatten() {
        let path = apps(unique, request["resource"].as_str().unwrap());
        let (status, body) = post(client, &path, &request["object"]);
        if request["expect"] == "allowed" && status != 201 {
            wrong.push(format!("{path}: allowed, answered {status}: {body}"));
        }
    }
    for check in case["typeChecks"].as_array().into_iter().flatten() {
        let policy = &check["policy"];
        create(client, &policies, policy);
        let name = policy["metadata"]["name"].as_str().unwrap();
        let got = type_checked(client, name);
        let wanted = check["warnings"].as_array().unwrap();
        let matches = got.len() == wanted.len()
            && got.iter().zip(wanted).all(|(got, wanted)| {
                got["fieldRef"] == wanted["fieldRef"]
                    && (got["warning"].as_str().unwrap_or_default())
                        .contains(wanted["contains"].as_str().unwrap())
            });
        if !matches {
            wrong.push(format!("{name}: warnings {wanted:?}, got {got:?}"));
        }
    }
    wrong
}

#[test]
fn kubes_end_to_end_scenarios_replayed() {
    let server = Server::start();
    let client = server.client();
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("kube_e2e.json")).expect("the scenarios");
    let mut failures = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        let unique = format!("vap-e2e-{index}");
        for wrong in play(&client, case, &unique) {
            failures.push(format!("{}: {wrong}", case["name"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(cases.len(), 4);
}
