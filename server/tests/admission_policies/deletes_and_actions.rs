//! Admission policies on deletes and on the creates an action answers, against the real
//! `kapi-server`: a `Warn` binding on ConfigMap deletes reaches the client as a warning
//! (kubectl 1.32 prints it; a collection delete's response carries one per object); an
//! eviction is judged as the create of `pods/eviction`, its object an `Eviction` of
//! `policy/v1` (a `policy/v1beta1` one converted), with the policies' warnings, and not as
//! a delete of its pod (kube's eviction deletes the pod without
//! admitting the delete again): a policy refusing pod deletes leaves evictions be.

use serde_json::{Value, json};

use crate::support::http::{Client, Response, wait_for_answer};
use crate::support::{Kubectl, Server, Version};

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const PODS: &str = "/api/v1/namespaces/default/pods";

/// A policy on the core group's `resources` for `operations` with `validations`, and its
/// binding `<name>-binding` with `actions`.
fn install(
    client: &Client,
    name: &str,
    rule: (&[&str], &[&str]),
    validations: Value,
    actions: &[&str],
) {
    let (resources, operations) = rule;
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
        "spec": {"failurePolicy": "Fail", "validations": validations,
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": operations, "resources": resources}]}}});
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": format!("{name}-binding")},
        "spec": {"policyName": name, "validationActions": actions}});
    super::create_policy_and_binding(client, &policy, &binding);
}

fn create(client: &Client, path: &str, object: Value) {
    let created = client.post(path, &object).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
}

#[test]
fn warnings_of_deletes_reach_the_client() {
    let server = Server::start();
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    for (name, group) in [
        ("important", "one"),
        ("probe", "one"),
        ("a", "x"),
        ("b", "x"),
    ] {
        let map = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"group": group}}});
        create(&client, CONFIGMAPS, map);
    }
    let validations = json!([{"expression": "false",
        "messageExpression": "'deleting ' + oldObject.metadata.name"}]);
    install(
        &client,
        "deletes",
        (&["configmaps"], &["DELETE"]),
        validations,
        &["Warn"],
    );
    let probe = || {
        client
            .delete(&format!("{CONFIGMAPS}/probe?dryRun=All"))
            .unwrap()
    };
    wait_for_answer("the policy to judge the request", probe, |r| {
        r.status == 200 && !r.warnings.is_empty()
    });

    let warned = "Validation failed for ValidatingAdmissionPolicy 'deletes' with binding \
        'deletes-binding': deleting important";
    let run = kubectl.ok(&["delete", "configmap", "important"]);
    assert!(
        run.stderr.contains(&format!("Warning: {warned}")),
        "{}",
        run.stderr
    );
    let gone = client.get(&format!("{CONFIGMAPS}/important")).unwrap();
    assert_eq!(gone.status, 404, "{gone:?}");
    // A collection delete warns of each object it deletes.
    let deleted = client
        .delete(&format!("{CONFIGMAPS}?labelSelector=group%3Dx"))
        .unwrap();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    let mut warnings = deleted.warnings.clone();
    warnings.sort();
    let expected: Vec<String> = ["a", "b"]
        .iter()
        .map(|name| {
            format!(
                "299 - \"Validation failed for ValidatingAdmissionPolicy 'deletes' with \
                 binding 'deletes-binding': deleting {name}\""
            )
        })
        .collect();
    assert_eq!(warnings, expected, "{deleted:?}");
}

#[test]
fn evictions_are_admitted_as_creates_of_their_subresource() {
    let server = Server::start();
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    for name in ["web", "guarded"] {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}});
        create(&client, PODS, pod);
    }
    let noted = json!([{"expression": "false",
        "messageExpression": "'evicting ' + object.metadata.name"}]);
    // Installed first: once the policies after it judge, it does (the same watch caches).
    install(
        &client,
        "evictions-noted",
        (&["pods/eviction"], &["CREATE"]),
        noted,
        &["Warn"],
    );
    let no_deletes = json!([{"expression": "false", "message": "pods are not deleted here"}]);
    install(
        &client,
        "no-pod-deletes",
        (&["pods"], &["DELETE"]),
        no_deletes,
        &["Deny"],
    );
    let evictions = json!([
        {"expression": "request.kind.group == 'policy' && request.kind.version == 'v1' && \
            request.kind.kind == 'Eviction' && request.subResource == 'eviction' && \
            object.apiVersion == 'policy/v1' && object.kind == 'Eviction' && \
            request.name == object.metadata.name",
         "message": "not the eviction sent"},
        {"expression": "object.metadata.name != 'guarded'",
         "messageExpression": "'pod ' + object.metadata.name + ' stays'"}]);
    install(
        &client,
        "guarded-evictions",
        (&["pods/eviction"], &["CREATE"]),
        evictions,
        &["Deny"],
    );
    let evict = |name: &str| {
        let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": name, "namespace": "default"}});
        client
            .post(&format!("{PODS}/{name}/eviction"), &eviction)
            .unwrap()
    };
    let message = |r: &Response| r.json()["message"].as_str().unwrap_or_default().to_owned();
    let delete_web = || client.delete(&format!("{PODS}/web?dryRun=All")).unwrap();
    // kube's status for a policy's refusal without a reason: 422 Invalid.
    wait_for_answer("the policy to judge the request", delete_web, |r| {
        r.status == 422
    });
    wait_for_answer(
        "the policy to judge the request",
        || evict("guarded"),
        |r| r.status == 422,
    );

    kubectl
        .fails(&["delete", "pod", "web"])
        .stderr_has("pods are not deleted here");
    let refused = evict("guarded");
    assert_eq!(refused.status, 422, "{refused:?}");
    assert_eq!(
        message(&refused),
        "pods \"guarded\" is forbidden: ValidatingAdmissionPolicy 'guarded-evictions' with \
         binding 'guarded-evictions-binding' denied request: pod guarded stays"
    );
    assert_eq!(client.get(&format!("{PODS}/guarded")).unwrap().status, 200);
    // The eviction of a pod no node runs deletes it at once, the delete not admitted again.
    // kubectl 1.20's drain sends `policy/v1beta1` Evictions: admitted as `policy/v1`.
    let eviction = json!({"apiVersion": "policy/v1beta1", "kind": "Eviction",
        "metadata": {"name": "web", "namespace": "default"}});
    let evicted = client
        .post(&format!("{PODS}/web/eviction"), &eviction)
        .unwrap();
    assert_eq!(evicted.status, 201, "{evicted:?}");
    assert_eq!(
        evicted.warnings,
        [
            "299 - \"Validation failed for ValidatingAdmissionPolicy 'evictions-noted' with \
          binding 'evictions-noted-binding': evicting web\""
        ],
        "{evicted:?}"
    );
    let gone = client.get(&format!("{PODS}/web")).unwrap();
    assert_eq!(gone.status, 404, "{gone:?}");
}
