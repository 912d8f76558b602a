//! API Priority and Fairness through the real binary: kube's mandatory and suggested
//! FlowSchemas and PriorityLevelConfigurations made at start and kept as kube keeps them
//! (a mandatory one's spec put back); every request answered with the uids of the
//! FlowSchema and priority level it matched (`X-Kubernetes-PF-*`, which `kubectl -v=8`
//! shows), classified as the user it acts as, before authorization; Kubernetes' e2e
//! classification scenario (a FlowSchema and level made for one user); a FlowSchema whose
//! level is missing marked `Dangling` and not matched.

use std::time::Duration;

use crate::support;

use serde_json::{Value, json};
use support::http::Client;
use support::pki::Pki;
use support::{Backend, Kubectl, Server, Version, wait_for};

const SCHEMAS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
const LEVELS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";

fn uid(client: &Client, path: &str) -> String {
    let object = client.get(path).unwrap().json();
    object["metadata"]["uid"]
        .as_str()
        .unwrap_or_else(|| panic!("{path}: {object}"))
        .to_owned()
}

/// The uids a request of `client` (as `user`, impersonated, when given) is answered with.
fn classified(client: &Client, user: Option<&str>) -> Option<(String, String)> {
    let headers: Vec<(&str, &str)> = user.map(|u| ("Impersonate-User", u)).into_iter().collect();
    let response = client
        .request_with_headers("GET", "/api/v1/namespaces", None, &headers)
        .unwrap();
    response.priority_and_fairness
}

fn names(list: &Value) -> Vec<&str> {
    (list["items"].as_array().into_iter().flatten())
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect()
}

#[test]
fn requests_are_classified_into_flow_schemas_as_kube_classifies_them() {
    let server = Server::start_secure(Pki::new(), Backend::Embedded, &[]);
    let admin = server.client();
    let schemas = admin.get(SCHEMAS).unwrap().json();
    assert_eq!(
        names(&schemas),
        [
            "catch-all",
            "endpoint-controller",
            "exempt",
            "global-default",
            "kube-controller-manager",
            "kube-scheduler",
            "kube-system-service-accounts",
            "probes",
            "service-accounts",
            "system-leader-election",
            "system-node-high",
            "system-nodes",
            "workload-leader-election",
        ]
    );
    let levels = admin.get(LEVELS).unwrap().json();
    assert_eq!(
        names(&levels),
        [
            "catch-all",
            "exempt",
            "global-default",
            "leader-election",
            "node-high",
            "system",
            "workload-high",
            "workload-low"
        ]
    );
    let exempt = (
        uid(&admin, &format!("{SCHEMAS}/exempt")),
        uid(&admin, &format!("{LEVELS}/exempt")),
    );
    let global = (
        uid(&admin, &format!("{SCHEMAS}/global-default")),
        uid(&admin, &format!("{LEVELS}/global-default")),
    );
    // The administrator (system:masters) is exempt; another user is the global default's,
    // though authorization then refuses them.
    assert_eq!(classified(&admin, None), Some(exempt.clone()));
    let headers = [("Impersonate-User", "bob")];
    let bob = admin
        .request_with_headers("GET", "/api/v1/namespaces", None, &headers)
        .unwrap();
    assert_eq!(bob.status, 403, "{bob:?}");
    assert_eq!(bob.priority_and_fairness, Some(global.clone()));
    let dangling = |name: &str| {
        let schema = admin.get(&format!("{SCHEMAS}/{name}")).unwrap().json();
        (schema["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten())
        .find(|c| c["type"] == "Dangling")
        .cloned()
    };
    let found = wait_for(
        Duration::from_secs(20),
        "global-default's Dangling condition",
        String::new,
        || dangling("global-default"),
    );
    assert_eq!(found["status"], "False");
    assert_eq!(found["reason"], "Found");
    assert_eq!(
        found["message"],
        "This FlowSchema references the PriorityLevelConfiguration object named \"global-default\" and it exists"
    );

    // Kubernetes' e2e scenario: a level and a schema for one user.
    let level = admin
        .post(LEVELS, &json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "e2e-level"},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 10, "limitResponse": {"type": "Reject"}}}}))
        .unwrap();
    assert_eq!(level.status, 201, "{level:?}");
    let rules = json!([{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": true, "namespaces": ["*"]}]}]);
    let schema = admin
        .post(SCHEMAS, &json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "e2e-schema"},
            "spec": {"priorityLevelConfiguration": {"name": "e2e-level"}, "matchingPrecedence": 999, "rules": rules}}))
        .unwrap();
    assert_eq!(schema.status, 201, "{schema:?}");
    let mine = (
        schema.json()["metadata"]["uid"]
            .as_str()
            .unwrap()
            .to_owned(),
        level.json()["metadata"]["uid"].as_str().unwrap().to_owned(),
    );
    wait_for(
        Duration::from_secs(20),
        "alice's requests to match e2e-schema",
        String::new,
        || (classified(&admin, Some("alice")) == Some(mine.clone())).then_some(()),
    );
    assert_eq!(classified(&admin, Some("bob")), Some(global.clone()));

    // A schema whose level is missing dangles, and is not matched.
    let missing = admin
        .post(SCHEMAS, &json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "lost"},
            "spec": {"priorityLevelConfiguration": {"name": "nowhere"}, "matchingPrecedence": 10,
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "carol"}}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": true, "namespaces": ["*"]}]}]}}))
        .unwrap();
    assert_eq!(missing.status, 201, "{missing:?}");
    let condition = wait_for(
        Duration::from_secs(20),
        "lost's Dangling condition",
        String::new,
        || dangling("lost").filter(|c| c["status"] == "True"),
    );
    assert_eq!(condition["reason"], "NotFound");
    assert_eq!(
        condition["message"],
        "This FlowSchema references the PriorityLevelConfiguration object named \"nowhere\" but there is no such object"
    );
    assert_eq!(classified(&admin, Some("carol")), Some(global.clone()));

    // A mandatory schema's spec is put back when the keeper next runs (at start).
    let changed = admin
        .merge_patch(
            &format!("{SCHEMAS}/catch-all"),
            &json!({"spec": {"matchingPrecedence": 9999}}),
        )
        .unwrap();
    assert_eq!(changed.status, 200, "{changed:?}");

    // kubectl -v=8 shows the headers.
    let kubectl = Kubectl::new(Version::V1_32, &server);
    kubectl
        .ok(&["get", "--raw", "/api/v1/namespaces", "-v=8"])
        .stderr_has(&format!("X-Kubernetes-Pf-Flowschema-Uid: {}", exempt.0));
    let mut server = server;
    server.restart();
    let admin = server.client();
    let catch_all = admin.get(&format!("{SCHEMAS}/catch-all")).unwrap().json();
    assert_eq!(
        catch_all["spec"]["matchingPrecedence"], 10000,
        "{catch_all}"
    );
}
