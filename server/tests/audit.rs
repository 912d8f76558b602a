//! Auditing end to end: a secure server with `--audit-policy-file` and `--audit-log-path`,
//! driven over raw HTTPS and by kubectl; the log holds one `audit.k8s.io/v1` Event line per
//! stage, with the user, verb, objectRef and code, denials and failed authentications
//! included, bodies at the `Request` and `RequestResponse` levels, nothing for `None`
//! rules, and each response's `Audit-Id`.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::Client;
use support::pki::{ALICE_TOKEN, Pki};
use support::{Backend, Kubectl, Server, Version, wait_for};

const POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: None
  resources: [{group: "", resources: [events]}]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
- level: Request
  resources: [{group: apps.example.dev, resources: [webapps]}]
  omitStages: [RequestReceived]
- level: Metadata
"#;

/// The log's events, once `condition` holds for them (the writer is a thread of its own).
#[track_caller]
fn events_until(
    log: &std::path::Path,
    what: &str,
    condition: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    wait_for(
        Duration::from_secs(10),
        what,
        || std::fs::read_to_string(log).unwrap_or_default(),
        || {
            let text = std::fs::read_to_string(log).ok()?;
            let events: Vec<Value> = (text.lines())
                .map(|line| serde_json::from_str(line).expect("every line is one JSON event"))
                .collect();
            condition(&events).then_some(events)
        },
    )
}

/// A secure server auditing per `policy` into `dir`'s `logs/audit.log` (which it returns).
fn audited_server(dir: &std::path::Path, policy: &str) -> (Server, std::path::PathBuf) {
    let policy_file = dir.join("policy.yaml");
    std::fs::write(&policy_file, policy).unwrap();
    let log = dir.join("logs/audit.log");
    let server = Server::start_secure(
        Pki::new(),
        Backend::Embedded,
        &[
            "--audit-policy-file",
            policy_file.to_str().unwrap(),
            "--audit-log-path",
            log.to_str().unwrap(),
        ],
    );
    (server, log)
}

fn of_id<'a>(events: &'a [Value], id: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["auditID"] == id).collect()
}

#[test]
fn requests_are_audited_per_policy() {
    let dir = tempfile::tempdir().unwrap();
    let (server, log) = audited_server(dir.path(), POLICY);
    let admin = server.client();
    let ca = server.pki().ca_pem();
    let alice = Client::with_tls(&server.url(), &ca, ALICE_TOKEN);
    let stranger = Client::with_tls(&server.url(), &ca, "not-a-token");

    // RequestResponse: both bodies, without managedFields (omitManagedFields).
    let created = admin
        .post(
            "/api/v1/namespaces/default/configmaps",
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "audited"}, "data": {"k": "v"}}),
        )
        .unwrap();
    assert_eq!(created.status, 201);
    let create_id = created.audit_id.clone().expect("an Audit-Id header");
    // Metadata (the last rule), denied: the decision is annotated.
    let denied = alice.get("/api/v1/namespaces/default").unwrap();
    assert_eq!(denied.status, 403);
    let denied_id = denied.audit_id.clone().expect("an Audit-Id header");
    // Failed authentication: one event, no user.
    let refused = stranger.get("/api/v1/namespaces").unwrap();
    assert_eq!(refused.status, 401);
    let refused_id = refused.audit_id.clone().expect("an Audit-Id header");
    // None: no event (the response has its audit id all the same, as every response).
    let events_request = admin.get("/api/v1/namespaces/default/events").unwrap();
    assert_eq!(events_request.status, 200);
    let unaudited_id = events_request.audit_id.clone().expect("an Audit-Id header");
    // Request level without RequestReceived, impersonated by kubectl --as (and denied:
    // alice and devs hold nothing here).
    let kubectl = Kubectl::new(Version::V1_32, &server);
    kubectl.fails(&[
        "get",
        "webapps",
        "-n",
        "default",
        "--as",
        "alice",
        "--as-group",
        "devs",
    ]);

    // A watch (long-running): ResponseStarted when it starts, ResponseComplete when the
    // server ends it.
    kubectl.ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
    ]);

    let events = events_until(&log, "the audit events of every request", |events| {
        [&create_id, &denied_id, &refused_id].iter().all(|id| {
            events
                .iter()
                .any(|e| e["auditID"] == **id && e["stage"] != "RequestReceived")
        }) && events.iter().any(|e| {
            e["impersonatedUser"]["username"] == "alice" && e["objectRef"]["resource"] == "webapps"
        }) && events
            .iter()
            .any(|e| e["verb"] == "watch" && e["stage"] == "ResponseComplete")
    });

    let create = of_id(&events, &create_id);
    let stages: Vec<&Value> = create.iter().map(|e| &e["stage"]).collect();
    assert_eq!(
        stages,
        ["RequestReceived", "ResponseComplete"],
        "{create:#?}"
    );
    let complete = create[1];
    assert_eq!(complete["level"], "RequestResponse");
    assert_eq!(complete["verb"], "create");
    assert_eq!(complete["user"]["username"], "admin");
    assert_eq!(
        complete["user"]["groups"],
        json!(["system:masters", "system:authenticated"])
    );
    assert_eq!(
        complete["objectRef"],
        json!({"resource": "configmaps", "namespace": "default", "apiVersion": "v1"})
    );
    assert_eq!(
        complete["responseStatus"],
        json!({"metadata": {}, "code": 201})
    );
    assert_eq!(complete["requestObject"]["data"], json!({"k": "v"}));
    assert_eq!(complete["responseObject"]["metadata"]["name"], "audited");
    assert!(
        complete["responseObject"]["metadata"]
            .get("managedFields")
            .is_none()
    );
    assert_eq!(complete["sourceIPs"], json!(["127.0.0.1"]));
    assert_eq!(
        complete["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
    assert!(
        complete["requestReceivedTimestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );

    let denial = of_id(&events, &denied_id);
    let last = denial.last().unwrap();
    assert_eq!(last["level"], "Metadata");
    assert!(last.get("requestObject").is_none());
    assert_eq!(last["user"]["username"], "alice");
    assert_eq!(
        last["responseStatus"],
        json!({"metadata": {}, "status": "Failure", "reason": "Forbidden", "code": 403})
    );
    assert_eq!(
        last["annotations"]["authorization.k8s.io/decision"],
        "forbid"
    );
    assert_eq!(
        last["objectRef"],
        json!({"resource": "namespaces", "namespace": "default", "name": "default", "apiVersion": "v1"})
    );

    let refusal = of_id(&events, &refused_id);
    assert_eq!(refusal.len(), 1, "{refusal:#?}");
    assert_eq!(refusal[0]["stage"], "ResponseStarted");
    assert_eq!(refusal[0]["user"], json!({}));
    assert_eq!(
        refusal[0]["responseStatus"],
        json!({"metadata": {}, "status": "Failure", "reason": "Unauthorized", "code": 401})
    );

    assert!(
        !events
            .iter()
            .any(|e| e["objectRef"]["resource"] == "events")
    );
    assert!(of_id(&events, &unaudited_id).is_empty());
    assert!(
        !events
            .iter()
            .any(|e| e["requestURI"].as_str().unwrap().starts_with("/readyz"))
    );

    let impersonated: Vec<&Value> = (events.iter())
        .filter(|e| e["impersonatedUser"]["username"] == "alice")
        .filter(|e| e["objectRef"]["resource"] == "webapps")
        .collect();
    assert_eq!(
        impersonated.len(),
        1,
        "Request level omits RequestReceived: {impersonated:#?}"
    );
    assert_eq!(impersonated[0]["level"], "Request");
    assert_eq!(impersonated[0]["user"]["username"], "admin");
    assert_eq!(
        impersonated[0]["impersonatedUser"]["groups"],
        json!(["devs", "system:authenticated"])
    );
    let watch: Vec<&Value> = (events.iter()).filter(|e| e["verb"] == "watch").collect();
    let stages: Vec<&Value> = watch.iter().map(|e| &e["stage"]).collect();
    assert_eq!(
        stages,
        ["RequestReceived", "ResponseStarted", "ResponseComplete"],
        "{watch:#?}"
    );
    assert_eq!(watch[2]["responseStatus"]["code"], 200);
    assert!(watch[2].get("responseObject").is_none());

    assert_eq!(impersonated[0]["verb"], "list");
    assert_eq!(impersonated[0]["stage"], "ResponseComplete");
    assert_eq!(impersonated[0]["responseStatus"]["code"], 403);
}

/// Admission's audit annotations (kube's PodSecurity): a Pod's event names the policy it
/// was admitted under, even in a namespace privileged in every mode, and what the
/// namespace's audit level would refuse; the authorization decision stays beside them.
#[test]
fn admission_annotates_the_audit_events_of_pods() {
    let dir = tempfile::tempdir().unwrap();
    let metadata = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n";
    let (server, log) = audited_server(dir.path(), metadata);
    let admin = server.client();
    let namespace = json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "audited", "labels": {"pod-security.kubernetes.io/audit": "restricted"}}
    });
    assert_eq!(
        admin.post("/api/v1/namespaces", &namespace).unwrap().status,
        201
    );
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "root"},
        "spec": {"containers": [{"name": "app", "image": "nginx", "securityContext": {"privileged": true}}]}
    });
    let audited = admin.post("/api/v1/namespaces/audited/pods", &pod).unwrap();
    assert_eq!(audited.status, 201, "{audited:?}");
    let audited = audited.audit_id.clone().expect("an Audit-Id header");
    let plain = admin.post("/api/v1/namespaces/default/pods", &pod).unwrap();
    assert_eq!(plain.status, 201, "{plain:?}");
    let plain = plain.audit_id.clone().expect("an Audit-Id header");
    let events = events_until(&log, "both creates' last stage", |events| {
        [&audited, &plain].iter().all(|id| {
            events
                .iter()
                .any(|e| e["auditID"] == **id && e["stage"] == "ResponseComplete")
        })
    });
    let annotations = |id: &str| {
        let last = of_id(&events, id)
            .into_iter()
            .find(|e| e["stage"] == "ResponseComplete");
        last.expect("a ResponseComplete event")["annotations"].clone()
    };
    let of_audited = annotations(&audited);
    assert_eq!(
        of_audited["pod-security.kubernetes.io/enforce-policy"], "privileged:latest",
        "{of_audited}"
    );
    let violations = of_audited["pod-security.kubernetes.io/audit-violations"]
        .as_str()
        .unwrap_or_default();
    assert!(
        violations.starts_with("would violate PodSecurity \"restricted:latest\": ")
            && violations.contains(
                "privileged (container \"app\" must not set securityContext.privileged=true)"
            ),
        "{of_audited}"
    );
    assert_eq!(of_audited["authorization.k8s.io/decision"], "allow");
    let of_plain = annotations(&plain);
    assert_eq!(
        of_plain["pod-security.kubernetes.io/enforce-policy"], "privileged:latest",
        "{of_plain}"
    );
    assert!(
        of_plain
            .get("pod-security.kubernetes.io/audit-violations")
            .is_none(),
        "{of_plain}"
    );
}
