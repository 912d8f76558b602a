//! kube's MutatingAdmissionPolicy integration scenarios replayed against the real server,
//! as data (`kube_cases.json`: kubernetes/kubernetes
//! `test/integration/apiserver/cel/mutatingadmissionpolicy_test.go`, the v1beta1 run of its
//! table tests and its custom-resource scenario). Each case's params, policies and
//! bindings are created as kube's test creates them; a case kube waits for with its
//! marker (an Endpoints `test-marker` its policies label once they apply) is waited for
//! the same way, the others (kube's `_Slow` cases) by repeating the request until it
//! answers as expected or 10 s pass. The request is sent (a dry run where kube's is) and
//! the answer compared as kube compares it: the whole object less the fields the server
//! sets (`apiVersion`, `kind`, `resourceVersion`, `uid`, `creationTimestamp`,
//! `managedFields`), empty values equal to absent ones; then the case's objects go.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::http::{Client, Response, collection};
use crate::support::{Server, wait_for};

const ADMISSION: &str = "/apis/admissionregistration.k8s.io/v1beta1";

#[track_caller]
fn created(response: Response) {
    assert!(
        matches!(response.status, 200 | 201),
        "{}: {}",
        response.status,
        response.body
    );
}

/// `value` without what kube's `wipeUncheckedFields` clears and what `EquateEmpty`
/// ignores (empty maps, lists and strings, and nulls).
fn comparable(value: &Value, top: bool) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (key, item) in map {
                if top && matches!(key.as_str(), "apiVersion" | "kind") {
                    continue;
                }
                if matches!(
                    key.as_str(),
                    "resourceVersion" | "uid" | "creationTimestamp" | "managedFields"
                ) && !top
                {
                    continue;
                }
                let item = comparable(item, false);
                let empty = match &item {
                    Value::Null => true,
                    Value::Object(m) => m.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    Value::String(s) => s.is_empty(),
                    _ => false,
                };
                if !empty {
                    out.insert(key.clone(), item);
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| comparable(v, false)).collect()),
        other => other.clone(),
    }
}

/// Sends one request of a case: its answer.
fn send(client: &Client, request: &Value) -> Response {
    let namespace = request["namespace"].as_str();
    let mut path = collection(&request["resource"], namespace);
    let name = request["object"]["metadata"]["name"].as_str().unwrap();
    let mut query = vec!["fieldManager=integration-test".to_owned()];
    if request["dryRun"] == true {
        query.push("dryRun=All".to_owned());
    }
    let query = query.join("&");
    match request["operation"].as_str().unwrap() {
        "UPDATE" => {
            path = format!("{path}/{name}");
            if let Some(sub) = request["subresource"].as_str() {
                path = format!("{path}/{sub}");
            }
            client
                .put(&format!("{path}?{query}"), &request["object"])
                .unwrap()
        }
        _ => client
            .post(&format!("{path}?{query}"), &request["object"])
            .unwrap(),
    }
}

/// What is wrong with `response` as the answer `request` expects, if anything.
fn wrong(request: &Value, response: &Response) -> Option<String> {
    if !matches!(response.status, 200 | 201) {
        return Some(format!("{}: {}", response.status, response.body));
    }
    let got = response.json();
    let expected = &request["expect"]["object"];
    let only_labels = (request["expect"]["compare"].as_str())
        .is_some_and(|c| c.starts_with("Only metadata.labels"));
    let same = match only_labels {
        true => (expected["metadata"]["labels"].as_object().unwrap().iter())
            .all(|(key, value)| got["metadata"]["labels"][key] == *value),
        false => comparable(&got, true) == comparable(expected, true),
    };
    (!same).then(|| format!("expected {expected}, got {got}"))
}

/// Waits until kube's marker for `id` comes back labelled by the case's policies.
fn wait_marker(client: &Client, id: &str) {
    let marker = json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "test-marker", "namespace": "default",
            "labels": {"mutation-marker": id}}});
    let path =
        "/api/v1/namespaces/default/endpoints?dryRun=All&fieldManager=mutation-marker-sender";
    let last = RefCell::new(String::new());
    wait_for(
        Duration::from_secs(10),
        "the marker to be mutated",
        || last.borrow().clone(),
        || {
            let response = client.post(path, &marker).ok()?;
            *last.borrow_mut() = format!("{}: {}", response.status, response.body);
            (response.json()["metadata"]["labels"]["mutated"] == id).then_some(())
        },
    );
}

/// Plays one case; what went wrong, if anything.
fn play(client: &Client, case: &Value, n: usize) -> Vec<String> {
    // kube names each binding with a uuid of its own.
    let mut parts = case.to_string();
    let mut i = 0;
    while parts.contains("<uuid>") {
        parts = parts.replacen("<uuid>", &format!("case-{n}-{i}"), 1);
        i += 1;
    }
    let text = parts;
    let case: Value = serde_json::from_str(&text).unwrap();
    let mut made: Vec<String> = Vec::new();
    for crd in case["setup_crds"].as_array().into_iter().flatten() {
        let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        created(client.post(path, crd).unwrap());
        // kube's test retries its creates until the definition is served.
        let spec = &crd["spec"];
        for version in spec["versions"].as_array().unwrap() {
            let resource = json!({"group": spec["group"], "version": version["name"],
                "resource": spec["names"]["plural"]});
            let path = collection(&resource, None);
            wait_for(
                Duration::from_secs(10),
                "the definition to be served",
                String::new,
                || (client.get(&path).ok()?.status == 200).then_some(()),
            );
        }
    }
    for param in case["params"].as_array().into_iter().flatten() {
        let plural = format!("{}s", param["kind"].as_str().unwrap().to_lowercase());
        let resource = json!({"group": "", "version": "v1", "resource": plural});
        let path = collection(&resource, param["metadata"]["namespace"].as_str());
        created(client.post(&path, param).unwrap());
        made.push(format!(
            "{path}/{}",
            param["metadata"]["name"].as_str().unwrap()
        ));
    }
    let marked = case.get("marker_test_ids").is_some();
    let policies = match marked {
        true => &case["policies_as_created_by_test"],
        false => &case["policies"],
    };
    for (kind, objects) in [
        ("mutatingadmissionpolicies", policies),
        ("mutatingadmissionpolicybindings", &case["bindings"]),
    ] {
        for object in objects.as_array().unwrap() {
            let path = format!("{ADMISSION}/{kind}");
            created(
                client
                    .post(&format!("{path}?fieldManager=integration-test"), object)
                    .unwrap(),
            );
            made.push(format!(
                "{path}/{}",
                object["metadata"]["name"].as_str().unwrap()
            ));
        }
    }
    for id in case["marker_test_ids"].as_array().into_iter().flatten() {
        wait_marker(client, id.as_str().unwrap());
    }
    let mut failures = Vec::new();
    for request in case["requests"].as_array().unwrap() {
        if let Some(initial) = request.get("initial_object") {
            let path = collection(&request["resource"], request["namespace"].as_str());
            created(client.post(&path, initial).unwrap());
            made.push(format!(
                "{path}/{}",
                initial["metadata"]["name"].as_str().unwrap()
            ));
        }
        // kube's marked cases send once; the others are repeated until they answer as
        // expected (their policies take effect a moment after their writes).
        let deadline = Instant::now() + Duration::from_secs(if marked { 0 } else { 10 });
        let failure = loop {
            let response = send(client, request);
            match wrong(request, &response) {
                None => break None,
                Some(wrong) if Instant::now() >= deadline => break Some(wrong),
                Some(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        failures.extend(failure);
        // Real creates (the custom resources) go with the case.
        if request["dryRun"] != true {
            let path = collection(&request["resource"], request["namespace"].as_str());
            made.push(format!(
                "{path}/{}",
                request["object"]["metadata"]["name"].as_str().unwrap()
            ));
        }
    }
    // The next case starts from none of this one's objects.
    for path in made.iter().rev() {
        let _ = client.delete(path);
    }
    failures
}

#[test]
fn kubes_mutating_policy_scenarios_replayed() {
    let server = Server::start_with(&super::ENABLED);
    let client = server.client();
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("kube_cases.json")).expect("the cases");
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        for wrong in play(&client, case, n) {
            failures.push(format!("{}: {wrong}", case["name"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(cases.len(), 17);
}
