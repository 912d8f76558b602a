//! kube's ValidatingAdmissionPolicy scenarios replayed against the real server, as data
//! (`kube_cases.json`): the integration test of kubernetes/kubernetes
//! (`test/integration/apiserver/cel/validatingadmissionpolicy_test.go`) and, written with
//! real expressions on kapi's kinds, the dispatcher cases of k8s.io/apiserver's
//! `admission_test.go`. Each case's params, policy and binding are created, the case waits
//! until a marker policy written after them refuses its marker (so the policies judging
//! writes include the case's), sends its request as a dry run, and checks kube's answer: allowed or not,
//! code, reason, message (exact, or contained where kube's test says so), warnings, audit
//! annotations; then the policy goes and the next case starts from none. Cases ported
//! elsewhere say where (`ported`); a case kapi cannot replay says why (`skip`).

use std::cell::RefCell;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::http::{Client, Response, collection};
use crate::support::{Server, wait_for};

const ADMISSION: &str = "/apis/admissionregistration.k8s.io/v1";
const MARKER: &str = "marker denied; policy is ready";

/// The path to create `object` of `resource` at.
fn path_of(resource: &Value, object: &Value) -> String {
    collection(resource, object["metadata"]["namespace"].as_str())
}

/// The policy of a case: kube's test helpers' shapes (`matchResources` a list of core
/// resources matched by every operation and version; or explicit rules).
fn policy(case: &Value) -> Value {
    let p = &case["policy"];
    let mut constraints = json!({});
    if let Some(resources) = p["matchResources"].as_array() {
        let mut rule = json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["*"],
            "resources": resources});
        if let Some(names) = p.get("resourceNames") {
            rule["resourceNames"] = names.clone();
        }
        constraints["resourceRules"] = json!([rule]);
    }
    for field in [
        "resourceRules",
        "excludeResourceRules",
        "matchPolicy",
        "objectSelector",
        "namespaceSelector",
    ] {
        if let Some(value) = p.get(field) {
            constraints[field] = value.clone();
        }
    }
    let mut spec = json!({"matchConstraints": constraints,
        "validations": p.get("validations").cloned().unwrap_or(json!([]))});
    for field in ["failurePolicy", "paramKind", "auditAnnotations"] {
        if let Some(value) = p.get(field).filter(|v| !v.is_null()) {
            spec[field] = value.clone();
        }
    }
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": p["name"]}, "spec": spec})
}

fn binding(case: &Value) -> Value {
    let b = &case["binding"];
    let mut spec = json!({"policyName": case["policy"]["name"],
        "validationActions": b["validationActions"]});
    for field in ["paramRef", "matchResources"] {
        if let Some(value) = b.get(field).filter(|v| !v.is_null()) {
            spec[field] = value.clone();
        }
    }
    json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": b["name"]},
        "spec": spec})
}

/// Creates `object` at `path`, whatever exists already.
#[track_caller]
fn ensure(client: &Client, path: &str, object: &Value) {
    let response = client.post(path, object).unwrap();
    assert!(
        matches!(response.status, 201 | 409),
        "{path}: {}: {}",
        response.status,
        response.body
    );
}

/// Waits until a dry run of `object` is refused with `refusal`.
fn wait_probe(client: &Client, resource: &Value, object: &Value, refusal: &str) {
    let path = format!("{}?dryRun=All", path_of(resource, object));
    let last = RefCell::new(String::new());
    wait_for(
        Duration::from_secs(10),
        "the probe's answer",
        || last.borrow().clone(),
        || {
            let response = client.post(&path, object).ok()?;
            *last.borrow_mut() = format!("{}: {}", response.status, response.body);
            (response.status >= 400 && response.body.contains(refusal)).then_some(())
        },
    );
}

/// Sends the case's request (a dry run).
fn request(client: &Client, case: &Value) -> Response {
    if case.get("replay").is_some() {
        // The policy itself, updated.
        let name = case["policy"]["name"].as_str().unwrap();
        let path = format!("{ADMISSION}/validatingadmissionpolicies/{name}?dryRun=All");
        return client
            .merge_patch(&path, &json!({"metadata": {"labels": {"updated": "yes"}}}))
            .unwrap();
    }
    let path = format!("{}?dryRun=All", path_of(&case["resource"], &case["object"]));
    client.post(&path, &case["object"]).unwrap()
}

/// What is wrong with `response` as the answer to `case`, if anything.
fn check(case: &Value, response: &Response, log: &std::path::Path) -> Option<String> {
    let expect = &case["expect"];
    let allowed = expect["allowed"].as_bool().unwrap();
    let status = response.status;
    if allowed != (200..300).contains(&status) {
        return Some(format!(
            "allowed {allowed}, answered {status}: {}",
            response.body
        ));
    }
    if let Some(code) = expect["code"].as_u64()
        && !allowed
        && u64::from(status) != code
    {
        return Some(format!("code {code}, answered {status}: {}", response.body));
    }
    let body = if allowed { json!({}) } else { response.json() };
    if let Some(reason) = expect["reason"].as_str()
        && body["reason"] != reason
    {
        return Some(format!("reason {reason}: {}", response.body));
    }
    if let Some(message) = expect["message"].as_str() {
        let got = body["message"].as_str().unwrap_or_default();
        let ok = match expect["messageMatch"].as_str() {
            Some("contains") => got.contains(message),
            // Names kube generates differ; the rest is kube's.
            _ if case["object"]["metadata"]["generateName"].is_string() => got.ends_with(
                message
                    .split_once("is forbidden: ")
                    .map_or(message, |m| m.1),
            ),
            _ => got == message,
        };
        if !ok {
            return Some(format!("message {message:?}, answered {got:?}"));
        }
    }
    if let Some(warnings) = expect["warnings"].as_array() {
        let wanted: Vec<&str> = warnings.iter().filter_map(Value::as_str).collect();
        // `Warning: 299 - "<text>"`.
        let got: Vec<&str> = (response.warnings.iter())
            .map(|w| w.trim_start_matches("299 - \"").trim_end_matches('"'))
            .collect();
        if got != wanted {
            return Some(format!("warnings {wanted:?}, answered {got:?}"));
        }
    }
    if let Some(annotations) = expect["auditAnnotations"].as_object() {
        let id = response.audit_id.as_deref().unwrap_or_default();
        let event = wait_for(
            Duration::from_secs(10),
            "the request's audit event",
            String::new,
            || {
                let text = std::fs::read_to_string(log).ok()?;
                (text.lines())
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .find(|e| e["auditID"] == id && e["stage"] == "ResponseComplete")
            },
        );
        for (key, value) in annotations {
            if event["annotations"][key] != *value {
                return Some(format!("audit annotation {key}={value}: {event}"));
            }
        }
    }
    None
}

/// Plays one case; what went wrong, if anything.
fn play(client: &Client, case: &Value, log: &std::path::Path, n: &mut u32) -> Option<String> {
    if let Some(namespace) = case["object"]["metadata"]["namespace"].as_str() {
        ensure(
            client,
            "/api/v1/namespaces",
            &json!({"metadata": {"name": namespace}}),
        );
    }
    let params: Vec<Value> = match &case["params"] {
        Value::Array(params) => params.clone(),
        Value::Object(_) => vec![case["params"].clone()],
        _ => Vec::new(),
    };
    for param in &params {
        let (group, version) = match param["apiVersion"].as_str().unwrap().split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", param["apiVersion"].as_str().unwrap()),
        };
        let plural = format!("{}s", param["kind"].as_str().unwrap().to_lowercase());
        let resource = json!({"group": group, "version": version, "resource": plural});
        ensure(client, &path_of(&resource, param), param);
    }
    let created = client
        .post(
            &format!("{ADMISSION}/validatingadmissionpolicies"),
            &policy(case),
        )
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let created = client
        .post(
            &format!("{ADMISSION}/validatingadmissionpolicybindings"),
            &binding(case),
        )
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    settle(client, n);
    let response = request(client, case);
    let wrong = check(case, &response, log);
    // The next case starts without this one's policy.
    let policy = case["policy"]["name"].as_str().unwrap();
    let binding = case["binding"]["name"].as_str().unwrap();
    for path in [
        format!("{ADMISSION}/validatingadmissionpolicybindings/{binding}"),
        format!("{ADMISSION}/validatingadmissionpolicies/{policy}"),
    ] {
        assert_eq!(client.delete(&path).unwrap().status, 200);
    }
    settle(client, n);
    wrong
}

/// Waits until what was written before is what policies judge writes by: a marker policy
/// of its own name (`settle-<n>`, on WebApps, which no case's policy names before it),
/// written after, refuses its marker; then it goes.
fn settle(client: &Client, n: &mut u32) {
    *n += 1;
    let name = format!("settle-{n}");
    let marker = json!({"policy": {"name": name, "failurePolicy": "Fail",
        "resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps.example.dev"],
            "apiVersions": ["v1"], "resources": ["webapps"]}],
        "validations": [{"expression": "false", "message": MARKER}]},
        "binding": {"name": name, "validationActions": ["Deny"]}});
    let resource = json!({"group": "apps.example.dev", "version": "v1", "resource": "webapps"});
    let object = json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
        "metadata": {"name": "marker", "namespace": "default"},
        "spec": {"container": {"image": "nginx"}}});
    let policies = format!("{ADMISSION}/validatingadmissionpolicies");
    let bindings = format!("{ADMISSION}/validatingadmissionpolicybindings");
    assert_eq!(
        client.post(&policies, &policy(&marker)).unwrap().status,
        201
    );
    assert_eq!(
        client.post(&bindings, &binding(&marker)).unwrap().status,
        201
    );
    let refusal = format!("ValidatingAdmissionPolicy '{name}'");
    wait_probe(client, &resource, &object, &refusal);
    assert_eq!(
        client.delete(&format!("{bindings}/{name}")).unwrap().status,
        200
    );
    assert_eq!(
        client.delete(&format!("{policies}/{name}")).unwrap().status,
        200
    );
}

/// The Panda kind of kube's test: cluster-scoped, served in v1 (stored) and v2.
fn define_pandas(client: &Client) {
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage, "schema": {"openAPIV3Schema":
            {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
    };
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "pandas.awesome.bears.com"},
        "spec": {"group": "awesome.bears.com", "scope": "Cluster",
            "names": {"plural": "pandas", "singular": "panda", "kind": "Panda"},
            "versions": [version("v1", true), version("v2", false)]}});
    let created = client
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd,
        )
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    wait_for(
        Duration::from_secs(10),
        "pandas to be served",
        String::new,
        || {
            let served = |v| {
                client
                    .get(&format!("/apis/awesome.bears.com/{v}/pandas"))
                    .ok()
            };
            (served("v1")?.status == 200 && served("v2")?.status == 200).then_some(())
        },
    );
}

#[test]
fn kubes_policy_scenarios_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let audit_policy = dir.path().join("audit.yaml");
    std::fs::write(
        &audit_policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    )
    .unwrap();
    let log = dir.path().join("audit.log");
    let server = Server::start_with(&[
        "--audit-policy-file",
        audit_policy.to_str().unwrap(),
        "--audit-log-path",
        log.to_str().unwrap(),
    ]);
    let client = server.client();
    define_pandas(&client);
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("kube_cases.json")).expect("the cases");
    let (mut played, mut elsewhere, mut skipped, mut failures) = (0, 0, 0, Vec::new());
    let mut settled = 0;
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        if case.get("skip").is_some() {
            skipped += 1;
            continue;
        }
        if case.get("ported").is_some() {
            elsewhere += 1;
            continue;
        }
        played += 1;
        if let Some(wrong) = play(&client, case, &log, &mut settled) {
            failures.push(format!("{name}: {wrong}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(played + elsewhere + skipped, cases.len());
    assert!(
        played >= 40,
        "{played} played, {elsewhere} elsewhere, {skipped} skipped"
    );
}
