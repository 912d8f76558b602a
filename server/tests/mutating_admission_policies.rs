//! MutatingAdmissionPolicies (admissionregistration.k8s.io/v1beta1) against the real
//! `kapi-server` with kube's `MutatingAdmissionPolicy` feature gate and the beta API on,
//! driven by kubectl 1.32 and raw HTTP: a policy adding a label through an apply
//! configuration and a default through a JSON patch, on the compiled WebApp and on the
//! same kind defined by a CustomResourceDefinition (what it set in the stored object and
//! owned by no manager, as kube's field manager runs before admission); a failing
//! mutation refusing the write under `failurePolicy: Fail` (kube's 403, reason `Invalid`)
//! and skipped under `Ignore`; kube's reinvocation of `IfNeeded` policies; kubectl's
//! table of the policies; policies on connects (their options mutated), never on deletes;
//! kube's integration scenarios replayed as data (`replay`).

mod replay;

use crate::support;

use std::time::Duration;

use crate::admission::{configure, hook};
use serde_json::{Value, json};
use support::http::{Client, Response, wait_for_answer};
use support::pki::Pki;
use support::webapps::{WebApps, on_both_kinds};
use support::webhook::Webhook;
use support::{Kubectl, Server, Version, wait_for};

/// The flags kube 1.34 needs to serve and run the policies.
const ENABLED: [&str; 2] = [
    "--feature-gates=MutatingAdmissionPolicy=true",
    "--runtime-config=admissionregistration.k8s.io/v1beta1=true",
];

const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicybindings";

/// A policy on creates and updates of WebApps of `kind`, with `spec`'s mutations.
fn policy(name: &str, kind: WebApps, spec: Value) -> Value {
    let mut spec = spec;
    spec["matchConstraints"] = json!({"resourceRules": [{"apiGroups": [kind.group()],
        "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["webapps"]}]});
    json!({"apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "MutatingAdmissionPolicy", "metadata": {"name": name}, "spec": spec})
}

/// Creates `policy` and a binding of it, both through kubectl.
fn install(kubectl: &Kubectl, policy: &Value) {
    let name = policy["metadata"]["name"].as_str().unwrap();
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": format!("{name}-binding")},
        "spec": {"policyName": name}});
    for (file, object) in [("policy", policy), ("binding", &binding)] {
        let path = kubectl.write_file(&format!("{name}-{file}.json"), &object.to_string());
        kubectl.ok(&["create", "-f", &path]);
    }
}

fn webapp(kind: WebApps, name: &str) -> Value {
    json!({"apiVersion": kind.api_version(), "kind": "WebApp", "metadata": {"name": name},
        "spec": {"replicas": 2, "container": {"image": "nginx:1.27"}}})
}

/// Waits until a dry-run create of a WebApp answers as `ready` wants (policies reach
/// admission through the watch cache, a moment after their writes).
#[track_caller]
fn wait_admitted(client: &Client, kind: WebApps, ready: impl Fn(&Response) -> bool) {
    let path = format!("{}?dryRun=All", kind.collection());
    let probe = webapp(kind, "probe");
    let last = std::cell::RefCell::new(String::new());
    wait_for(
        Duration::from_secs(10),
        "the policy to mutate writes",
        || last.borrow().clone(),
        || {
            let response = client.post(&path, &probe).ok()?;
            *last.borrow_mut() = format!("{}: {}", response.status, response.body);
            ready(&response).then_some(())
        },
    );
}

fn label_and_default(kind: WebApps) {
    let server = kind.serve(Server::start_with(&ENABLED));
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let labels = "Object{metadata: Object.metadata{labels: {'mutated-by': 'policy'}}}";
    let default = "object.spec.paused ? [] : \
        [JSONPatch{op: 'replace', path: '/spec/paused', value: true}, \
         JSONPatch{op: 'add', path: '/metadata/annotations', value: {}}, \
         JSONPatch{op: 'add', path: '/metadata/annotations/' + \
           jsonpatch.escapeKey('example.com/replicas'), value: string(object.spec.replicas)}]";
    install(
        &kubectl,
        &policy(
            "defaults",
            kind,
            json!({"reinvocationPolicy": "Never", "mutations": [
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": labels}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression": default}},
            ]}),
        ),
    );
    wait_admitted(&client, kind, |r| {
        r.status == 201 && r.json()["metadata"]["labels"]["mutated-by"] == "policy"
    });
    let path = kubectl.write_file("app.json", &webapp(kind, "app").to_string());
    kubectl.ok(&["create", "-f", &path]);
    let app: Value = serde_json::from_str(
        &kubectl
            .ok(&[
                "get",
                &kind.resource(),
                "app",
                "-o",
                "json",
                "--show-managed-fields",
            ])
            .stdout,
    )
    .unwrap();
    assert_eq!(app["metadata"]["labels"]["mutated-by"], "policy", "{app}");
    assert_eq!(app["spec"]["paused"], true, "{app}");
    assert_eq!(
        app["metadata"]["annotations"]["example.com/replicas"], "2",
        "{app}"
    );
    // kube's field manager runs before admission: the creator owns what it sent, and
    // what the policy set is nobody's.
    let managed = app["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(managed.len(), 1, "{app}");
    assert_eq!(managed[0]["manager"], "kubectl-create");
    let fields = &managed[0]["fieldsV1"];
    assert!(fields["f:spec"]["f:replicas"].is_object(), "{fields}");
    assert!(fields.get("f:metadata").is_none(), "{fields}");
    // An update keeps what was sent, and the policy applies again.
    let mut changed = app.clone();
    changed["spec"]["replicas"] = json!(3);
    changed["metadata"]["labels"] = json!({});
    let path = format!("{}/app", kind.collection());
    let response = client.put(&path, &changed).unwrap();
    assert_eq!(response.status, 200, "{}", response.body);
    let updated = response.json();
    assert_eq!(updated["metadata"]["labels"]["mutated-by"], "policy");
    assert_eq!(updated["spec"]["replicas"], 3);
}

on_both_kinds! {
    label_and_default => policies_label_and_default_compiled_webapps,
        policies_label_and_default_defined_webapps;
}

/// A mutation that fails refuses the write under `Fail` with kube's 403, and is skipped
/// under `Ignore`.
#[test]
fn failing_mutations_follow_the_failure_policy() {
    let kind = WebApps::Compiled;
    let server = kind.serve(Server::start_with(&ENABLED));
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let undeclared = "Object{spec: Object.spec{replicasx: 1}}";
    let labelled = "Object{metadata: Object.metadata{labels: {'next': 'ran'}}}";
    let mistyped = "Object{spec: Object.spec{replicas: 'three'}}";
    let mut failing = policy(
        "undeclared",
        kind,
        json!({"failurePolicy": "Fail", "reinvocationPolicy": "Never", "mutations": [
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": undeclared}},
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": labelled}},
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": mistyped}}]}),
    );
    install(&kubectl, &failing);
    wait_admitted(&client, kind, |r| r.status == 403);
    let refused = client
        .post(&kind.collection(), &webapp(kind, "refused"))
        .unwrap();
    assert_eq!(refused.status, 403, "{}", refused.body);
    let status = refused.json();
    assert_eq!(status["reason"], "Invalid", "{status}");
    assert_eq!(
        status["message"],
        "policy 'undeclared' with binding 'undeclared-binding' denied request: error applying \
         patch: failed to convert patch object to typed object: .spec.replicasx: field not \
         declared in schema"
    );
    // Every error is a cause: the mutation after the first failure still ran.
    let causes = status["details"]["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 2, "{status}");
    let second = causes[1]["message"].as_str().unwrap();
    assert!(
        second.ends_with(".spec.replicas: expected numeric (int or float), got string"),
        "{second}"
    );
    assert_eq!(status["details"]["kind"], "webapps", "{status}");
    assert_eq!(status["details"]["name"], "refused", "{status}");
    // kubectl prints kube's message.
    let path = kubectl.write_file("refused.json", &webapp(kind, "refused").to_string());
    let run = kubectl.fails(&["create", "-f", &path]);
    assert!(
        run.stderr.contains("denied request: error applying patch"),
        "{}",
        run.stderr
    );
    // Nothing was stored.
    let missing = client
        .get(&format!("{}/refused", kind.collection()))
        .unwrap();
    assert_eq!(missing.status, 404, "{}", missing.body);
    // Under `Ignore` the write goes through unchanged.
    failing["spec"]["failurePolicy"] = json!("Ignore");
    let current = client
        .get(&format!("{POLICIES}/undeclared"))
        .unwrap()
        .json();
    failing["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
    let response = client
        .put(&format!("{POLICIES}/undeclared"), &failing)
        .unwrap();
    assert_eq!(response.status, 200, "{}", response.body);
    wait_admitted(&client, kind, |r| r.status == 201);
    let created = client
        .post(&kind.collection(), &webapp(kind, "admitted"))
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    // The policy ran: its failing mutations were skipped, the one between them applied.
    let created = created.json();
    assert!(created["spec"].get("replicasx").is_none(), "{created}");
    assert_eq!(created["spec"]["replicas"], 2, "{created}");
    assert_eq!(created["metadata"]["labels"]["next"], "ran", "{created}");
}

/// kube's reinvocation: three policies incrementing an annotation, two of them
/// `IfNeeded`, make it 5 (three in the first pass, the two again in the second).
#[test]
fn if_needed_policies_are_reinvoked_once() {
    let kind = WebApps::Compiled;
    let server = kind.serve(Server::start_with(&ENABLED));
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let increment = "Object{metadata: Object.metadata{annotations: {'count': \
        string(int(object.metadata.?annotations['count'].orValue('0')) + 1)}}}";
    for (name, reinvocation) in [("p1", "IfNeeded"), ("p2", "IfNeeded"), ("p3", "Never")] {
        install(
            &kubectl,
            &policy(
                name,
                kind,
                json!({"reinvocationPolicy": reinvocation, "mutations": [{
                    "patchType": "ApplyConfiguration",
                    "applyConfiguration": {"expression": increment}}]}),
            ),
        );
    }
    wait_admitted(&client, kind, |r| {
        r.status == 201 && r.json()["metadata"]["annotations"]["count"] == "5"
    });
    let created = client
        .post(&kind.collection(), &webapp(kind, "counted"))
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.json()["metadata"]["annotations"]["count"], "5");
    // kubectl lists the policies with kube's columns.
    let table = kubectl.ok(&["get", "mutatingadmissionpolicies"]).stdout;
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "MUTATIONS", "PARAMKIND", "AGE"], "{table}");
    assert!(table.contains("p1"), "{table}");
    let bindings = client.get(BINDINGS).unwrap().json();
    assert_eq!(bindings["items"].as_array().unwrap().len(), 3);
}

/// kube's reinvocation across policies and webhooks: a policy counting its runs and a
/// labelling webhook, both `IfNeeded`, each change the object after the other ran, so
/// that both run again in the second pass (the count is 2, the webhook sees it).
#[test]
fn policies_and_webhooks_reinvoke_each_other() {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let kind = WebApps::Compiled;
    let server = kind.serve(Server::start_with(&ENABLED));
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let increment = "Object{metadata: Object.metadata{annotations: {'count': \
        string(int(object.metadata.?annotations['count'].orValue('0')) + 1)}}}";
    install(
        &kubectl,
        &policy(
            "count",
            kind,
            json!({"reinvocationPolicy": "IfNeeded", "mutations": [{
                "patchType": "ApplyConfiguration",
                "applyConfiguration": {"expression": increment}}]}),
        ),
    );
    let mut label = hook(
        "label.example.com",
        webhook.url("/label"),
        &pki,
        kind,
        &["CREATE"],
    );
    label["reinvocationPolicy"] = json!("IfNeeded");
    configure(
        &client,
        "mutatingwebhookconfigurations",
        "label",
        vec![label],
    );
    wait_admitted(&client, kind, |r| {
        let object = r.json();
        r.status == 201
            && object["metadata"]["labels"]["admitted-by"] == "test"
            && object["metadata"]["annotations"]["count"] == "2"
    });
    webhook.drain();
    let created = client
        .post(&kind.collection(), &webapp(kind, "both"))
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.json()["metadata"]["annotations"]["count"], "2");
    let seen: Vec<Value> = (0..2)
        .map(|_| webhook.next_for("both")["annotations"].clone())
        .collect();
    assert_eq!(seen, [json!({"count": "1"}), json!({"count": "2"})]);
    let later = webhook.drain();
    assert!(later.iter().all(|r| r["name"] != "both"), "no third call");
}

/// A policy named `name` on `resources` of the core group for `operations`, with `spec`.
fn core_policy(name: &str, resources: &[&str], operations: &[&str], spec: Value) -> Value {
    let mut spec = spec;
    spec["failurePolicy"] = json!("Fail");
    spec["reinvocationPolicy"] = json!("Never");
    spec["matchConstraints"] = json!({"resourceRules": [{"apiGroups": [""],
        "apiVersions": ["v1"], "operations": operations, "resources": resources}]});
    json!({"apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "MutatingAdmissionPolicy", "metadata": {"name": name}, "spec": spec})
}

/// Waits until `probe` answers `status` with a message containing `text`: its message.
#[track_caller]
fn wait_answer(probe: impl Fn() -> Response, status: u16, text: &str) -> String {
    let message = |r: &Response| r.json()["message"].as_str().unwrap_or_default().to_owned();
    let answer = wait_for_answer("the policy to judge the request", probe, |r| {
        r.status == status && message(r).contains(text)
    });
    message(&answer)
}

/// A policy on `pods/exec` sends every exec to the container `app` (a JSON patch of the
/// `PodExecOptions`), and the connect goes there: an exec of a container the pod lacks
/// reaches the pod (kubectl 1.32 shows the pod's answer). An apply configuration cannot be
/// typed against options kube has no schema for: the policy's error, refusing the attach
/// under `Fail`. A policy on every operation of ConfigMaps mutates creates, refuses one its
/// match condition fails on (counted in kube's match condition metrics), and never sees a
/// delete, though its condition would fail on one: kube's plugin does not handle deletes.
#[test]
fn policies_mutate_connects_and_never_see_deletes() {
    let server = Server::start_with(&ENABLED);
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let pods = "/api/v1/namespaces/default/pods";
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}});
    assert_eq!(client.post(pods, &pod).unwrap().status, 201);
    let map =
        |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    assert_eq!(client.post(configmaps, &map("keep")).unwrap().status, 201);
    let connect = |subresource: &str| {
        let path = format!("{pods}/web/{subresource}?container=nope&stdout=true&command=true");
        client.request("POST", &path, "", None).unwrap()
    };
    assert_eq!(connect("exec").status, 400);

    let to_app = "[JSONPatch{op: 'add', path: '/container', value: 'app'}]";
    let typed = "Object{container: 'app'}";
    // Fails on a delete (no object) and on a create of `broken` (no old object).
    let reads_objects = "request.operation == 'DELETE' ? object.metadata.name == '' : \
        (object.metadata.name != 'broken' || oldObject.metadata.name == '')";
    let label = "Object{metadata: Object.metadata{labels: {'seen': 'yes'}}}";
    for policy in [
        core_policy(
            "exec-in-app",
            &["pods/exec"],
            &["CONNECT"],
            json!({"mutations": [
            {"patchType": "JSONPatch", "jsonPatch": {"expression": to_app}}]}),
        ),
        core_policy(
            "attach-typed",
            &["pods/attach"],
            &["CONNECT"],
            json!({"mutations": [
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": typed}}]}),
        ),
        core_policy(
            "configmaps",
            &["configmaps"],
            &["*"],
            json!({
            "matchConditions": [{"name": "reads-objects", "expression": reads_objects}],
            "mutations": [{"patchType": "ApplyConfiguration",
                "applyConfiguration": {"expression": label}}]}),
        ),
    ] {
        install(&kubectl, &policy);
    }

    wait_answer(
        || connect("exec"),
        400,
        "pod web does not have a host assigned",
    );
    kubectl
        .fails(&["exec", "web", "-c", "nope", "--", "true"])
        .stderr_has("pod web does not have a host assigned");
    let refused = wait_answer(|| connect("attach"), 403, "attach-typed");
    assert_eq!(
        refused,
        "policy 'attach-typed' with binding 'attach-typed-binding' denied request: error \
         applying patch: failed to convert patch object to typed object: no corresponding \
         type for /v1, Kind=PodAttachOptions"
    );

    // Creates are mutated; one the condition fails on is refused.
    let dry_run = format!("{configmaps}?dryRun=All");
    wait_for(
        Duration::from_secs(10),
        "the policy to label ConfigMaps",
        String::new,
        || {
            let created = client.post(&dry_run, &map("fine")).ok()?;
            (created.status == 201 && created.json()["metadata"]["labels"]["seen"] == "yes")
                .then_some(())
        },
    );
    let refused = client.post(configmaps, &map("broken")).unwrap();
    assert_eq!(refused.status, 403, "{refused:?}");
    let message = refused.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message
            .starts_with("policy 'configmaps' with binding 'configmaps-binding' denied request: "),
        "{message}"
    );
    // Counted as kube's matcher of a policy counts it.
    let metrics = client.get("/metrics").unwrap().body;
    let counted = |name: &str| {
        metrics.lines().any(|l| {
            l.starts_with(name)
                && l.contains(r#"kind="policy""#)
                && l.contains(r#"name="configmaps""#)
                && l.contains(r#"operation="CREATE""#)
                && l.contains(r#"type="validate""#)
        })
    };
    assert!(
        counted("apiserver_admission_match_condition_evaluation_errors_total")
            && counted("apiserver_admission_match_condition_evaluation_seconds_count"),
        "{metrics}"
    );
    // A delete is not the plugin's: its condition, which would fail, is not evaluated.
    kubectl.ok(&["delete", "configmap", "keep"]);
    let gone = client.get(&format!("{configmaps}/keep")).unwrap();
    assert_eq!(gone.status, 404, "{gone:?}");
}
