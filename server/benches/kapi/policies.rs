//! What admission policies (CEL) cost a create: ConfigMap creates on one release server
//! before any policy, then with a ValidatingAdmissionPolicy bound to them (a ConfigMap as
//! its param, a variable, three validations with a message expression, an audit
//! annotation), every create admitted. "creates with the policy / without" is the
//! policy's cost; kube compiles policies once, so a create pays for evaluation only.
//! Then the same on a server with kube's `MutatingAdmissionPolicy` gate on, through a
//! MutatingAdmissionPolicy that labels each ConfigMap (an apply configuration, typed and
//! merged against the schema) and annotates it (a JSON patch): a mutation also makes the
//! mutating chain run a second time, as kube's reinvocation does.

use std::time::Duration;

use serde_json::{Value, json};

use super::common::{CLIENTS, Options, ServerProcess, agent, rate, run_threads_on, status_of};
use super::report::Report;

const ADMISSION: &str = "/apis/admissionregistration.k8s.io/v1";

/// Measures ConfigMap creates without and with a policy.
pub(crate) fn measure(options: &Options, report: &mut Report) {
    let dir = tempfile::tempdir().expect("a data directory");
    let server = ServerProcess::start(&["--data-dir".into(), dir.path().display().to_string()]);
    let without = creates(options, &server, "plain");
    install(&server);
    let with = creates(options, &server, "checked");
    let without = report.add("ConfigMap creates, no admission policy", without, "ops/s");
    let with = report.add(
        "ConfigMap creates through a ValidatingAdmissionPolicy (param, variable, 3 validations)",
        with,
        "ops/s",
    );
    report.share(
        "ConfigMap creates: with the policy / without",
        with,
        without,
    );
    let dir = tempfile::tempdir().expect("a data directory");
    let server = ServerProcess::start(&[
        "--data-dir".into(),
        dir.path().display().to_string(),
        "--feature-gates=MutatingAdmissionPolicy=true".into(),
        "--runtime-config=admissionregistration.k8s.io/v1beta1=true".into(),
    ]);
    let without = creates(options, &server, "plain");
    install_mutating(&server);
    let with = creates(options, &server, "mutated");
    let without = report.add(
        "ConfigMap creates, MutatingAdmissionPolicy gate on, no policy",
        without,
        "ops/s",
    );
    let with = report.add(
        "ConfigMap creates through a MutatingAdmissionPolicy (apply configuration, JSON patch)",
        with,
        "ops/s",
    );
    report.share(
        "ConfigMap creates: with the mutating policy / without",
        with,
        without,
    );
}

/// A mutating policy and its binding, once it labels what is created.
fn install_mutating(server: &ServerProcess) {
    let agent = agent();
    let post = |path: &str, body: Value| {
        let status = status_of(
            agent
                .post(&server.url(path))
                .send_json(&body)
                .expect("a create"),
        );
        assert_eq!(status, 201, "creating {path}");
    };
    let beta = "/apis/admissionregistration.k8s.io/v1beta1";
    let label = "Object{metadata: Object.metadata{labels: {'mutated': 'true'}}}";
    let annotate = "[JSONPatch{op: 'add', path: '/metadata/annotations', \
        value: {'keys': string(size(object.data))}}]";
    post(
        &format!("{beta}/mutatingadmissionpolicies"),
        json!({"metadata": {"name": "configmap-labels"}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}]},
            "reinvocationPolicy": "Never",
            "mutations": [
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": label}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression": annotate}}]}}),
    );
    post(
        &format!("{beta}/mutatingadmissionpolicybindings"),
        json!({"metadata": {"name": "configmap-labels"},
            "spec": {"policyName": "configmap-labels"}}),
    );
    let probe = server.url("/api/v1/namespaces/default/configmaps?dryRun=All");
    let body = json!({"metadata": {"name": "probe"}, "data": {"a": "1"}});
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut response = agent.post(&probe).send_json(&body).expect("a create");
        let created: Value = response.body_mut().read_json().expect("JSON");
        if created["metadata"]["labels"]["mutated"] == "true" {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the mutating policy never applied"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The policy, its param and its binding, once the policy refuses what it should.
fn install(server: &ServerProcess) {
    let agent = agent();
    let post = |path: &str, body: Value| {
        let status = status_of(
            agent
                .post(&server.url(path))
                .send_json(&body)
                .expect("a create"),
        );
        assert_eq!(status, 201, "creating {path}");
    };
    post(
        "/api/v1/namespaces/default/configmaps",
        json!({"metadata": {"name": "limits"}, "data": {"maxKeys": "8", "prefix": "checked-"}}),
    );
    post(
        &format!("{ADMISSION}/validatingadmissionpolicies"),
        json!({"metadata": {"name": "configmap-limits"}, "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}]},
            "variables": [{"name": "keys", "expression": "has(object.data) ? size(object.data) : 0"}],
            "validations": [
                {"expression": "variables.keys <= int(params.data.maxKeys)",
                 "messageExpression": "'at most ' + params.data.maxKeys + ' keys'"},
                {"expression": "object.metadata.name.startsWith(params.data.prefix) || object.metadata.name == 'limits'"},
                {"expression": "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)"}],
            "auditAnnotations": [{"key": "keys", "valueExpression": "string(variables.keys)"}]}}),
    );
    post(
        &format!("{ADMISSION}/validatingadmissionpolicybindings"),
        json!({"metadata": {"name": "configmap-limits"}, "spec": {
            "policyName": "configmap-limits", "validationActions": ["Deny"],
            "paramRef": {"name": "limits", "namespace": "default",
                "parameterNotFoundAction": "Deny"}}}),
    );
    let probe = server.url("/api/v1/namespaces/default/configmaps?dryRun=All");
    let refused = json!({"metadata": {"name": "unchecked"}});
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while status_of(agent.post(&probe).send_json(&refused).expect("a create")) != 422 {
        assert!(
            std::time::Instant::now() < deadline,
            "the policy never applied"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Creates of ConfigMaps named `<prefix>-...` per second, by [`CLIENTS`] clients.
fn creates(options: &Options, server: &ServerProcess, prefix: &str) -> f64 {
    let url = server.url("/api/v1/namespaces/default/configmaps");
    let (ops, elapsed) = run_threads_on(agent, CLIENTS, options.window(), |agent, client, i| {
        let body = json!({"metadata": {"name": format!("{prefix}-{client}-{i}"),
            "labels": {"app": "bench"}}, "data": {"a": "1", "b": "2"}});
        let status = status_of(agent.post(&url).send_json(&body).expect("a create"));
        assert_eq!(status, 201, "a ConfigMap create");
    });
    rate(ops, elapsed)
}
