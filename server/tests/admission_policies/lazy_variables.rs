//! Variables evaluated lazily, as kube's composition environment evaluates them, against
//! the real `kapi-server`: a policy whose variables together cost more than kube's budget
//! for one evaluation admits what its validation judges without reading them (kubectl 1.32
//! creates it), and the same variables read by a validation run out of the budget (kube's
//! refusal), so they do cost what they would.

use serde_json::{Value, json};

use crate::support::http::{Client, wait_for_answer};
use crate::support::{Kubectl, Server, Version};

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// Variables that cost about 740,000 each in kube's units (under kube's 1,000,000 per
/// call), 14 of them more than its 10,000,000 per evaluation, and `limit`.
fn variables() -> Vec<Value> {
    let list: Vec<String> = (1..=16).map(|i| i.to_string()).collect();
    let list = format!("[{}]", list.join(","));
    let heavy =
        format!("{list}.all(a, {list}.all(b, {list}.all(c, {list}.all(d, a + b + c + d > 0))))");
    let mut variables: Vec<Value> = (0..14)
        .map(|i| json!({"name": format!("heavy{i}"), "expression": heavy}))
        .collect();
    variables.push(json!({"name": "limit", "expression": "3"}));
    variables
}

/// A policy on creates of ConfigMaps labelled `policy: <name>`, with [`variables`] and
/// `validation`, bound with `Deny`.
fn install(client: &Client, name: &str, validation: Value) {
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
        "spec": {"failurePolicy": "Fail", "variables": variables(),
            "validations": [validation],
            "matchConstraints": {
                "objectSelector": {"matchLabels": {"policy": name}},
                "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["configmaps"]}]}}});
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": format!("{name}-binding")},
        "spec": {"policyName": name, "validationActions": ["Deny"]}});
    super::create_policy_and_binding(client, &policy, &binding);
}

/// A ConfigMap labelled for `policy`, with `entries` entries of data.
fn configmap(name: &str, policy: &str, entries: usize) -> Value {
    let data: serde_json::Map<String, Value> = (0..entries)
        .map(|i| (format!("k{i}"), json!("v")))
        .collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"policy": policy}}, "data": data})
}

#[test]
fn unread_variables_cost_nothing() {
    let server = Server::start();
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let reads_limit = json!({"expression": "size(object.data) <= variables.limit",
        "messageExpression": "'at most ' + string(variables.limit) + ' entries'"});
    let reads_all: Vec<String> = (0..14).map(|i| format!("variables.heavy{i}")).collect();
    // `eager` first: its policy and binding come before `lazy`'s through the same watch
    // caches, so once `lazy` judges, `eager` does too.
    install(
        &client,
        "eager",
        json!({"expression": reads_all.join(" && ")}),
    );
    install(&client, "lazy", reads_limit);

    // The policy judges: too much data is refused.
    let dry_run = format!("{CONFIGMAPS}?dryRun=All");
    let probe = || {
        client
            .post(&dry_run, &configmap("probe", "lazy", 4))
            .unwrap()
    };
    wait_for_answer("the policy to judge creates", probe, |r| {
        r.status == 422 && r.body.contains("at most 3 entries")
    });
    // What it admits is judged without the heavy variables, which nothing read.
    let path = kubectl.write_file("small.json", &configmap("small", "lazy", 2).to_string());
    kubectl.ok(&["create", "-f", &path]);
    // Read, they run out of kube's budget.
    let refused = client
        .post(CONFIGMAPS, &configmap("heavy", "eager", 0))
        .unwrap();
    assert_eq!(refused.status, 422, "{refused:?}");
    let message = refused.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with(
            "configmaps \"heavy\" is forbidden: ValidatingAdmissionPolicy 'eager' with binding \
             'eager-binding' denied request: "
        ) && message.contains("cost budget"),
        "{message}"
    );
}
