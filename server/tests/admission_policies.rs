//! Admission policies against the real `kapi-server`, driven by kubectl 1.32 and raw HTTPS:
//! a ValidatingAdmissionPolicy with a ConfigMap as its param refusing WebApps over the
//! param's limit (kube's message, reason and code), then, once its binding says
//! `[Warn, Audit]`, admitting them with kubectl's warning and kube's audit annotations; a
//! missing param under `parameterNotFoundAction: Deny`; all of it on the compiled WebApp
//! and on the same kind defined by a CustomResourceDefinition. Also: a policy asking the
//! server's authorizer, `namespaceObject` and `variables`, and webhooks skipped by their
//! `matchConditions` (the test webhook counts its calls) or failed by them per
//! `failurePolicy`; policies on deletes and evictions (`deletes_and_actions`); variables
//! evaluated only when read (`lazy_variables`).

mod deletes_and_actions;
mod e2e;
mod lazy_variables;
mod operations;
mod replay;

use crate::support;

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use support::http::{Client, Response};
use support::pki::{ALICE_TOKEN, Pki};
use support::webapps::{WebApps, on_both_kinds};
use support::webhook::Webhook;
use support::{Backend, Kubectl, Server, Version, wait_for};

const ADMISSION: &str = "/apis/admissionregistration.k8s.io/v1";

/// Audit every request's metadata (admission's annotations included).
const AUDIT_POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: Metadata
"#;

/// A secure server (RBAC, tokens) auditing into `dir`, serving WebApps of `kind`.
fn server(dir: &std::path::Path, kind: WebApps) -> (Server, std::path::PathBuf) {
    let policy = dir.join("audit.yaml");
    std::fs::write(&policy, AUDIT_POLICY).unwrap();
    let log = dir.join("audit.log");
    let server = Server::start_secure(
        Pki::new(),
        Backend::Embedded,
        &[
            "--audit-policy-file",
            policy.to_str().unwrap(),
            "--audit-log-path",
            log.to_str().unwrap(),
        ],
    );
    (kind.serve(server), log)
}

#[track_caller]
fn created(response: Result<Response, ureq::Error>) -> Value {
    let response = response.expect("a response");
    assert!(
        matches!(response.status, 200 | 201),
        "{}: {}",
        response.status,
        response.body
    );
    response.json()
}

fn webapp(kind: WebApps, name: &str, replicas: i64) -> Value {
    json!({"apiVersion": kind.api_version(), "kind": "WebApp",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "container": {"image": "nginx:1.27"}}})
}

/// A policy on creates and updates of WebApps of `kind`.
fn policy(name: &str, kind: WebApps, spec: Value) -> Value {
    let mut spec = spec;
    spec["matchConstraints"] = json!({"resourceRules": [{"apiGroups": [kind.group()],
        "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["webapps"]}]});
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name}, "spec": spec})
}

/// Creates a ValidatingAdmissionPolicy and a binding of it.
#[track_caller]
fn create_policy_and_binding(client: &Client, policy: &Value, binding: &Value) {
    for (resource, object) in [
        ("validatingadmissionpolicies", policy),
        ("validatingadmissionpolicybindings", binding),
    ] {
        let created = client
            .post(&format!("{ADMISSION}/{resource}"), object)
            .unwrap();
        assert_eq!(created.status, 201, "{created:?}");
    }
}

fn binding(name: &str, policy: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["policyName"] = json!(policy);
    json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name}, "spec": spec})
}

/// Waits until a dry-run create of `probe` in `namespace` answers as `ready` wants (the
/// policies reach admission through the watch cache, a moment after their writes).
#[track_caller]
fn wait_judged(
    client: &Client,
    kind: WebApps,
    namespace: &str,
    probe: &Value,
    ready: impl Fn(&Response) -> bool,
) {
    let path = format!("{}?dryRun=All", kind.collection_in(namespace));
    let last = std::cell::RefCell::new(String::new());
    wait_for(
        Duration::from_secs(10),
        "the policy to judge writes",
        || last.borrow().clone(),
        || {
            let response = client.post(&path, probe).ok()?;
            *last.borrow_mut() = format!("{}: {}", response.status, response.body);
            ready(&response).then_some(())
        },
    );
}

/// The audit events of the log once one satisfies `found`.
#[track_caller]
fn audited(log: &std::path::Path, found: impl Fn(&Value) -> bool) -> Value {
    wait_for(
        Duration::from_secs(10),
        "the audit event",
        || std::fs::read_to_string(log).unwrap_or_default(),
        || {
            let text = std::fs::read_to_string(log).ok()?;
            (text.lines())
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .find(|event| found(event))
        },
    )
}

fn params_deny_warn_and_audit(kind: WebApps) {
    let dir = tempfile::tempdir().unwrap();
    let (server, log) = server(dir.path(), kind);
    let admin = server.client();
    created(admin.post(
        "/api/v1/namespaces/default/configmaps",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits"},
            "data": {"max": "3"}}),
    ));
    let limit = policy(
        "replica-limit",
        kind,
        json!({
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{"expression": "object.spec.replicas <= int(params.data.max)",
                "messageExpression": "'replicas must be at most ' + params.data.max"}],
            "auditAnnotations": [{"key": "replicas",
                "valueExpression": "string(object.spec.replicas)"}],
        }),
    );
    let stored = created(admin.post(&format!("{ADMISSION}/validatingadmissionpolicies"), &limit));
    // kube's defaults.
    assert_eq!(stored["spec"]["failurePolicy"], "Fail");
    assert_eq!(
        stored["spec"]["matchConstraints"]["matchPolicy"],
        "Equivalent"
    );
    assert_eq!(stored["metadata"]["generation"], 1);
    let bound = binding(
        "replica-limit-binding",
        "replica-limit",
        json!({"paramRef": {"name": "limits", "namespace": "default",
            "parameterNotFoundAction": "Deny"}, "validationActions": ["Deny"]}),
    );
    created(admin.post(
        &format!("{ADMISSION}/validatingadmissionpolicybindings"),
        &bound,
    ));
    wait_judged(&admin, kind, "default", &webapp(kind, "probe", 9), |r| {
        r.status == 422
    });

    // Deny: kube's message, reason and code, through kubectl and raw HTTP.
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let big = kubectl.write_file(
        "big.yaml",
        &serde_json::to_string(&webapp(kind, "big", 5)).unwrap(),
    );
    let message = format!(
        "webapps.{} \"big\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with \
         binding 'replica-limit-binding' denied request: replicas must be at most 3",
        kind.group()
    );
    // kubectl shows an Invalid refusal by its one cause.
    kubectl
        .fails(&["create", "-f", &big, "-n", "default"])
        .stderr_has(&format!(
            "The webapps \"big\" is invalid: : {}",
            message.split_once("is forbidden: ").unwrap().1
        ));
    let refused = admin
        .post(&kind.collection(), &webapp(kind, "big", 5))
        .unwrap();
    assert_eq!(refused.status, 422);
    let status = refused.json();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["message"], message.as_str());
    assert_eq!(
        status["details"]["causes"][0]["message"],
        message.split_once("is forbidden: ").unwrap().1
    );
    let small = kubectl.write_file(
        "small.yaml",
        &serde_json::to_string(&webapp(kind, "small", 2)).unwrap(),
    );
    kubectl.ok(&["create", "-f", &small, "-n", "default"]);
    assert_eq!(
        admin
            .get(&format!("{}/big", kind.collection()))
            .unwrap()
            .status,
        404
    );

    // Warn and Audit: admitted, with kubectl's warning and the audit annotations.
    let actions = json!({"spec": {"validationActions": ["Warn", "Audit"]}});
    let path = format!("{ADMISSION}/validatingadmissionpolicybindings/replica-limit-binding");
    let changed = created(admin.merge_patch(&path, &actions));
    assert_eq!(
        changed["metadata"]["generation"], 2,
        "a spec change moves it"
    );
    wait_judged(&admin, kind, "default", &webapp(kind, "probe", 9), |r| {
        r.status == 201
    });
    let warned = kubectl.ok(&["create", "-f", &big, "-n", "default"]);
    warned.stderr_has(
        "Warning: Validation failed for ValidatingAdmissionPolicy 'replica-limit' with \
         binding 'replica-limit-binding': replicas must be at most 3",
    );
    let event = audited(&log, |e| {
        e["stage"] == "ResponseComplete"
            && e["verb"] == "create"
            && e["objectRef"]["resource"] == "webapps"
            && e["responseStatus"]["code"] == 201
            && e["annotations"]["replica-limit/replicas"] == "5"
    });
    let annotations = &event["annotations"];
    let failure: Value = serde_json::from_str(
        annotations["validation.policy.admission.k8s.io/validation_failure"]
            .as_str()
            .unwrap_or_else(|| panic!("no validation failure annotation: {event}")),
    )
    .unwrap();
    assert_eq!(
        failure,
        json!([{"message": "replicas must be at most 3", "policy": "replica-limit",
            "binding": "replica-limit-binding", "expressionIndex": 0,
            "validationActions": ["Warn", "Audit"]}])
    );
    assert_eq!(annotations["replica-limit/replicas"], "5");

    // A missing param under `parameterNotFoundAction: Deny`.
    let missing = json!({"spec": {"paramRef": {"name": "absent"}, "validationActions": ["Deny"]}});
    created(admin.merge_patch(&path, &missing));
    wait_judged(&admin, kind, "default", &webapp(kind, "probe", 1), |r| {
        r.status == 422
    });
    let refused = admin
        .post(&kind.collection(), &webapp(kind, "one", 1))
        .unwrap();
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(
        refused.json()["message"],
        format!(
            "webapps.{} \"one\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with \
             binding 'replica-limit-binding' denied request: failed to configure binding: no \
             params found for policy binding with `Deny` parameterNotFoundAction",
            kind.group()
        )
    );

    // A configuration error refuses under `failurePolicy: Fail` whatever the actions say:
    // once the binding only warns (its param found again, the warning shows it applied),
    // a missing param still refuses.
    let warn_only =
        json!({"spec": {"validationActions": ["Warn"], "paramRef": {"name": "limits"}}});
    created(admin.merge_patch(&path, &warn_only));
    wait_judged(&admin, kind, "default", &webapp(kind, "probe", 9), |r| {
        r.status == 201 && !r.warnings.is_empty()
    });
    let absent = json!({"spec": {"paramRef": {"name": "absent"}}});
    let still_warns = created(admin.merge_patch(&path, &absent));
    assert_eq!(still_warns["spec"]["validationActions"], json!(["Warn"]));
    wait_judged(&admin, kind, "default", &webapp(kind, "probe", 1), |r| {
        r.status == 422 && r.body.contains("no params found")
    });

    // kube's policy metrics.
    let metrics = admin.get("/metrics").unwrap().body;
    for action in ["deny", "warn", "audit"] {
        assert!(
            metrics.lines().any(|l| {
                l.starts_with("apiserver_validating_admission_policy_check_total")
                    && l.contains(r#"policy="replica-limit""#)
                    && l.contains(&format!(r#"enforcement_action="{action}""#))
            }),
            "{action}: {metrics}"
        );
    }
}

on_both_kinds! {
    params_deny_warn_and_audit =>
        policies_with_params_deny_warn_and_audit_compiled_webapps,
        policies_with_params_deny_warn_and_audit_defined_webapps;
}

/// Policies' own objects are checked as kube checks them.
#[test]
fn policies_and_bindings_are_validated() {
    let server = Server::start();
    let client = server.client();
    let wrong = policy(
        "wrong",
        WebApps::Compiled,
        json!({"validations": [{"expression": "object.spec.replicas", "reason": "Teapot"}],
            "variables": [{"name": "1x", "expression": "object.nope +"}]}),
    );
    let refused = client
        .post(&format!("{ADMISSION}/validatingadmissionpolicies"), &wrong)
        .unwrap();
    assert_eq!(refused.status, 422, "{}", refused.body);
    let message = refused.json()["message"].as_str().unwrap().to_owned();
    for expected in [
        "spec.variables[0].name: Invalid value: \"1x\": name is not a valid CEL identifier",
        "spec.variables[0].expression: Invalid value: \"object.nope +\": compilation failed: ERROR: <input>:1:14: Syntax error",
        "spec.validations[0].expression: Invalid value: \"object.spec.replicas\": must evaluate to bool but got dyn",
        "spec.validations[0].reason: Unsupported value: \"Teapot\": supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\"",
    ] {
        assert!(message.contains(expected), "{expected}\n in {message}");
    }
    let both = binding(
        "both",
        "p",
        json!({"validationActions": ["Deny", "Warn"],
            "paramRef": {"name": "a", "selector": {}}}),
    );
    let refused = client
        .post(
            &format!("{ADMISSION}/validatingadmissionpolicybindings"),
            &both,
        )
        .unwrap();
    assert_eq!(refused.status, 422, "{}", refused.body);
    let message = refused.json()["message"].as_str().unwrap().to_owned();
    for expected in [
        "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
        "spec.paramRef.parameterNotFoundAction: Required value",
        "spec.validationActions: Invalid value: [\"Deny\",\"Warn\"]: must not contain both Deny and Warn",
    ] {
        assert!(message.contains(expected), "{expected}\n in {message}");
    }
    // kubectl lists them with kube's columns.
    let kubectl = Kubectl::new(Version::V1_32, &server);
    created(client.post(
        &format!("{ADMISSION}/validatingadmissionpolicies"),
        &policy(
            "named",
            WebApps::Compiled,
            json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "validations": [{"expression": "true"}, {"expression": "1 < 2"}]}),
        ),
    ));
    let table = kubectl.ok(&["get", "validatingadmissionpolicies"]).table();
    assert_eq!(table.header, ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]);
    let row = table.row_where("NAME", "named").expect("the policy's row");
    assert_eq!(row["VALIDATIONS"], "2");
    assert_eq!(row["PARAMKIND"], "v1/ConfigMap");
}

/// `authorizer` asks the server's own authorizer about the requesting user: only users
/// who may delete WebApps may create them.
#[test]
fn a_policy_asks_the_servers_authorizer() {
    let server = Server::start_secure(Pki::new(), Backend::Embedded, &[]);
    let admin = server.client();
    let kind = WebApps::Compiled;
    let rules = |verbs: &[&str]| json!([{"apiGroups": [kind.group()], "resources": ["webapps"], "verbs": verbs}]);
    created(admin.post(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
        &json!({"metadata": {"name": "writer"}, "rules": rules(&["create", "get"])}),
    ));
    created(admin.post(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        &json!({"metadata": {"name": "alice-writes"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "writer"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]}),
    ));
    let check = format!(
        "authorizer.group('{}').resource('webapps').namespace(request.namespace)\
         .check('delete').allowed()",
        kind.group()
    );
    created(admin.post(
        &format!("{ADMISSION}/validatingadmissionpolicies"),
        &policy(
            "deleters-only",
            kind,
            json!({"validations": [{"expression": check,
                "message": "only users who may delete WebApps may create them",
                "reason": "Forbidden"}]}),
        ),
    ));
    created(admin.post(
        &format!("{ADMISSION}/validatingadmissionpolicybindings"),
        &binding(
            "deleters-only",
            "deleters-only",
            json!({"validationActions": ["Deny"]}),
        ),
    ));
    let alice = Client::with_tls(&server.url(), &server.pki().ca_pem(), ALICE_TOKEN);
    wait_judged(&alice, kind, "default", &webapp(kind, "probe", 1), |r| {
        r.status == 403 && r.body.contains("deleters-only")
    });
    let alice_kubectl = Kubectl::with_token(Version::V1_32, &server, ALICE_TOKEN);
    let manifest = alice_kubectl.write_file(
        "web.yaml",
        &serde_json::to_string(&webapp(kind, "alices", 1)).unwrap(),
    );
    alice_kubectl
        .fails(&["create", "-f", &manifest, "-n", "default"])
        .stderr_has(
            "is forbidden: ValidatingAdmissionPolicy 'deleters-only' with binding \
             'deleters-only' denied request: only users who may delete WebApps may create them",
        );
    // The administrator may delete, so may create.
    created(admin.post(&kind.collection(), &webapp(kind, "admins", 1)));
    // Once alice may delete, she may create.
    let role = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/writer";
    created(admin.merge_patch(role, &json!({"rules": rules(&["create", "get", "delete"])})));
    wait_judged(&alice, kind, "default", &webapp(kind, "probe", 1), |r| {
        r.status == 201
    });
    alice_kubectl.ok(&["create", "-f", &manifest, "-n", "default"]);
}

/// `namespaceObject` and `variables`: WebApps in namespaces labelled `env: prod` need two
/// replicas; policies and bindings are exempt from policies.
#[test]
fn namespace_object_and_variables() {
    let server = Server::start();
    let client = server.client();
    let kind = WebApps::Compiled;
    created(client.post(
        "/api/v1/namespaces",
        &json!({"metadata": {"name": "prod", "labels": {"env": "prod"}}}),
    ));
    created(client.post(
        &format!("{ADMISSION}/validatingadmissionpolicies"),
        &policy(
            "prod-replicas",
            kind,
            json!({
                "variables": [
                    {"name": "environment",
                     "expression": "namespaceObject.metadata.?labels.?env.orValue('dev')"},
                    {"name": "production", "expression": "variables.environment == 'prod'"}],
                "validations": [{"expression": "!variables.production || object.spec.replicas >= 2",
                    "messageExpression": "'WebApps in ' + namespaceObject.metadata.name + ' need two replicas'"}],
            }),
        ),
    ));
    created(client.post(
        &format!("{ADMISSION}/validatingadmissionpolicybindings"),
        &binding(
            "prod-replicas",
            "prod-replicas",
            json!({"validationActions": ["Deny"]}),
        ),
    ));
    wait_judged(&client, kind, "prod", &webapp(kind, "probe", 1), |r| {
        r.status == 422
    });
    let refused = client
        .post(&kind.collection_in("prod"), &webapp(kind, "one", 1))
        .unwrap();
    assert!(
        refused.json()["message"]
            .as_str()
            .unwrap()
            .ends_with("denied request: WebApps in prod need two replicas"),
        "{}",
        refused.body
    );
    created(client.post(&kind.collection_in("prod"), &webapp(kind, "two", 2)));
    created(client.post(&kind.collection(), &webapp(kind, "one", 1)));
    // A policy that would refuse every write does not refuse policies.
    created(client.post(
        &format!("{ADMISSION}/validatingadmissionpolicies"),
        &json!({"metadata": {"name": "nothing"}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"],
                "operations": ["*"], "resources": ["*"]}]},
            "validations": [{"expression": "false"}]}}),
    ));
    created(client.post(
        &format!("{ADMISSION}/validatingadmissionpolicybindings"),
        &binding("nothing", "nothing", json!({"validationActions": ["Deny"]})),
    ));
    wait_judged(&client, kind, "default", &webapp(kind, "probe", 1), |r| {
        r.status == 422
    });
    let deleted = client
        .delete(&format!(
            "{ADMISSION}/validatingadmissionpolicybindings/nothing"
        ))
        .unwrap();
    assert_eq!(deleted.status, 200, "{}", deleted.body);
}

/// A webhook whose match condition does not hold is not called; one whose condition
/// errs fails the write under `failurePolicy: Fail` and is skipped under `Ignore`.
#[test]
fn match_conditions_decide_whether_a_webhook_is_called() {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let server = Server::start();
    let client = server.client();
    let kind = WebApps::Compiled;
    let hook = |name: &str, condition: &str, failure: &str| {
        json!({"name": name,
            "clientConfig": {"url": webhook.url("/policy"),
                "caBundle": base64::engine::general_purpose::STANDARD.encode(pki.ca_pem())},
            "rules": [{"operations": ["CREATE"], "apiGroups": [kind.group()],
                "apiVersions": ["v1"], "resources": ["webapps"]}],
            "failurePolicy": failure,
            "matchConditions": [{"name": "named", "expression": condition}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"]})
    };
    let configure = |name: &str, hooks: Vec<Value>| {
        created(client.post(
            &format!("{ADMISSION}/validatingwebhookconfigurations"),
            &json!({"metadata": {"name": name}, "webhooks": hooks}),
        ))
    };
    configure(
        "checked",
        vec![hook(
            "checked.example.com",
            "object.metadata.name.startsWith('checked-')",
            "Fail",
        )],
    );
    // Called for names the condition accepts (a dry run waits for the configuration).
    wait_for(
        Duration::from_secs(10),
        "the webhook to be called",
        String::new,
        || {
            let path = format!("{}?dryRun=All", kind.collection());
            client.post(&path, &webapp(kind, "checked-probe", 1)).ok()?;
            (!webhook.drain().is_empty()).then_some(())
        },
    );
    created(client.post(&kind.collection(), &webapp(kind, "other", 1)));
    assert!(webhook.drain().is_empty(), "not called for `other`");
    created(client.post(&kind.collection(), &webapp(kind, "checked-one", 1)));
    let calls = webhook.drain();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["name"], "checked-one");
    let deleted = client
        .delete(&format!(
            "{ADMISSION}/validatingwebhookconfigurations/checked"
        ))
        .unwrap();
    assert_eq!(deleted.status, 200);

    // A condition that errs: Fail refuses with kube's 403, Ignore skips the webhook.
    let erring = "object.spec.nothing == 1";
    configure("erring", vec![hook("erring.example.com", erring, "Fail")]);
    let refused = wait_for(
        Duration::from_secs(10),
        "the erring condition to refuse",
        String::new,
        || {
            let response = client
                .post(&kind.collection(), &webapp(kind, "err", 1))
                .ok()?;
            (response.status == 403).then_some(response)
        },
    );
    assert_eq!(
        refused.json()["message"],
        "webapps.apps.example.dev \"err\" is forbidden: expression 'object.spec.nothing == 1' \
         resulted in error: no such key: nothing"
    );
    let path = format!("{ADMISSION}/validatingwebhookconfigurations/erring");
    let ignore = json!({"webhooks": [hook("erring.example.com", erring, "Ignore")]});
    created(client.merge_patch(&path, &ignore));
    wait_for(
        Duration::from_secs(10),
        "the erring condition to be ignored",
        String::new,
        || {
            (client
                .post(&kind.collection(), &webapp(kind, "err", 1))
                .ok()?
                .status
                == 201)
                .then_some(())
        },
    );
    assert!(
        webhook.drain().is_empty(),
        "a webhook skipped is not called"
    );
    let metrics = client.get("/metrics").unwrap().body;
    assert!(
        metrics.lines().any(|l| l
            .starts_with("apiserver_admission_match_condition_exclusions_total")
            && l.contains(r#"name="checked.example.com""#)),
        "{metrics}"
    );
}

/// A policy's status says which of its expressions name what the kinds it matches do not
/// have (kube's type checking), once per generation.
#[test]
fn type_checking_warns_about_fields_the_kinds_lack() {
    let server = Server::start();
    let client = server.client();
    let kind = WebApps::Compiled;
    let checked = policy(
        "typo",
        kind,
        json!({
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [
                {"expression": "object.spec.replicas <= int(params.data.max)"},
                {"expression": "object.spec.replicaz > 1",
                 "messageExpression": "'at most ' + params.nothing"}],
        }),
    );
    let path = format!("{ADMISSION}/validatingadmissionpolicies");
    created(client.post(&path, &checked));
    let last = std::cell::RefCell::new(Value::Null);
    let status = wait_for(
        Duration::from_secs(10),
        "the policy's status",
        || last.borrow().to_string(),
        || {
            let status = client.get(&format!("{path}/typo")).ok()?.json()["status"].clone();
            *last.borrow_mut() = status.clone();
            (status["observedGeneration"] == 1).then_some(status)
        },
    );
    let warnings = status["typeChecking"]["expressionWarnings"]
        .as_array()
        .unwrap_or_else(|| panic!("{status}"))
        .clone();
    let fields: Vec<&str> = (warnings.iter())
        .map(|w| w["fieldRef"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "spec.validations[1].expression",
            "spec.validations[1].messageExpression"
        ],
        "{status}"
    );
    let warning = warnings[0]["warning"].as_str().unwrap();
    assert!(
        warning.starts_with(
            "apps.example.dev/v1, Kind=WebApp: ERROR: <input>:1:12: undefined field 'replicaz'"
        ),
        "{warning}"
    );
    assert!(
        warnings[1]["warning"]
            .as_str()
            .unwrap()
            .contains("undefined field 'nothing'"),
        "{status}"
    );
    // A change of the spec is checked again.
    let fixed = json!({"spec": {"validations": [{"expression": "object.spec.replicas > 1"}]}});
    let changed = created(client.merge_patch(&format!("{path}/typo"), &fixed));
    assert_eq!(changed["metadata"]["generation"], 2);
    wait_for(
        Duration::from_secs(10),
        "the policy's status to be checked again",
        String::new,
        || {
            let status = client.get(&format!("{path}/typo")).ok()?.json()["status"].clone();
            (status["observedGeneration"] == 2
                && status["typeChecking"]["expressionWarnings"]
                    .as_array()
                    .is_none_or(Vec::is_empty))
            .then_some(())
        },
    );
}

/// Pointing a policy at params takes the right to read them (kube's strategies' checks):
/// a new `paramKind` asks `get` on all its objects, a binding's `paramRef` `get` on the
/// object it names.
#[test]
fn params_are_pointed_at_only_by_who_may_read_them() {
    let server = Server::start_secure(Pki::new(), Backend::Embedded, &[]);
    let admin = server.client();
    let alice = Client::with_tls(&server.url(), &server.pki().ca_pem(), ALICE_TOKEN);
    let rbac = "/apis/rbac.authorization.k8s.io/v1";
    let grant = |name: &str, rules: Value| {
        created(admin.post(
            &format!("{rbac}/clusterroles"),
            &json!({"metadata": {"name": name}, "rules": rules}),
        ));
        created(admin.post(
            &format!("{rbac}/clusterrolebindings"),
            &json!({"metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]}),
        ));
    };
    grant(
        "policy-writer",
        json!([{"apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["validatingadmissionpolicies", "validatingadmissionpolicybindings"],
            "verbs": ["create", "get"]}]),
    );
    let with_params = |name: &str, kind: &str| {
        policy(
            name,
            WebApps::Compiled,
            json!({"paramKind": {"apiVersion": "v1", "kind": kind},
                "validations": [{"expression": "true"}]}),
        )
    };
    let policies = format!("{ADMISSION}/validatingadmissionpolicies");
    let refused = wait_for(
        Duration::from_secs(10),
        "alice's RBAC to apply",
        String::new,
        || {
            let answer = alice
                .post(&policies, &with_params("limits", "ConfigMap"))
                .ok()?;
            (answer.status == 422).then_some(answer)
        },
    );
    let message = refused.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("spec.paramKind: Forbidden: user &{alice alice-uid [")
            && message.ends_with(
                "must have \"get\" permission on all objects of the referenced paramKind \
                 (kind=ConfigMap, apiVersion=v1)"
            ),
        "{message}"
    );
    // Once she may read ConfigMaps, she may point a policy and a binding at them.
    grant(
        "configmap-reader",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]),
    );
    wait_for(
        Duration::from_secs(10),
        "alice's new rights to apply",
        String::new,
        || {
            (alice
                .post(&policies, &with_params("limits", "ConfigMap"))
                .ok()?
                .status
                == 201)
                .then_some(())
        },
    );
    let bindings = format!("{ADMISSION}/validatingadmissionpolicybindings");
    let limits = binding(
        "limits",
        "limits",
        json!({"paramRef": {"name": "limits", "namespace": "default",
            "parameterNotFoundAction": "Deny"}, "validationActions": ["Deny"]}),
    );
    // (The binding is judged by the policy's param kind once the server's cache holds it.)
    wait_for(
        Duration::from_secs(10),
        "alice's binding",
        String::new,
        || (alice.post(&bindings, &limits).ok()?.status == 201).then_some(()),
    );
    // Secrets she may not read: the administrator's policy, and her binding refused.
    created(admin.post(&policies, &with_params("secrets", "Secret")));
    let secret = binding(
        "secret",
        "secrets",
        json!({"paramRef": {"name": "token", "namespace": "default",
            "parameterNotFoundAction": "Deny"}, "validationActions": ["Deny"]}),
    );
    let refused = alice.post(&bindings, &secret).unwrap();
    assert_eq!(refused.status, 422, "{}", refused.body);
    let message = refused.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("spec.paramRef: Forbidden: user &{alice alice-uid [")
            && message
                .ends_with("does not have \"get\" permission on the object referenced by paramRef"),
        "{message}"
    );
    // The administrator is not asked.
    created(admin.post(&bindings, &secret));
}
