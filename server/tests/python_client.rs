//! The official Python client (`kubernetes` on PyPI, pinned in
//! [`support::python::PYTHON_KUBERNETES`]) against the real `kapi-server`, unchanged:
//! `kubernetes.dynamic.DynamicClient` for discovery, CRUD, both WebApp versions,
//! validation errors, pagination, and `kubernetes.watch` for watches, live and expired;
//! the typed APIs (`VersionApi`, `CoreV1Api`, `CustomObjectsApi`, ...) too.
//!
//! Each test runs one script of `tests/python/` (the checks a Python user would write,
//! failing with a message) and then checks what it printed against kube-apiserver's
//! answers. The module must be importable: `cargo xtask test` installs it; without it
//! these tests fail saying so, they never skip.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::Server;
use support::http::Client;
use support::python::Script;

/// How long the watch script may take to report an event the test caused.
const EVENT: Duration = Duration::from_secs(30);

/// The line whose `key` is `value`.
#[track_caller]
fn line<'a>(lines: &'a [Value], key: &str, value: &str) -> &'a Value {
    (lines.iter().find(|line| line[key] == value))
        .unwrap_or_else(|| panic!("no line with {key} = {value:?} in {lines:#?}"))
}

/// `/version`, `/apis` and each group-version, as the dynamic client reads them: every
/// kind found at its version with kube's scope, verbs and subresources, and the preferred
/// version recognised.
#[test]
fn discovery_finds_every_kind_and_the_preferred_version() {
    let server = Server::start();
    let lines = Script::run("discovery.py", &server);
    let git_version = lines[0]["version"]["gitVersion"]
        .as_str()
        .unwrap_or_default();
    assert!(git_version.starts_with("v1."), "{lines:#?}");

    let crud = [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    let kind = |api_version: &str, kind: &str| -> &Value {
        (lines.iter())
            .find(|line| line["apiVersion"] == api_version && line["kind"] == kind)
            .unwrap_or_else(|| panic!("{api_version} {kind} not reported: {lines:#?}"))
    };
    let web_v1 = kind("apps.example.dev/v1", "WebApp");
    assert_eq!(web_v1["name"], "webapps");
    assert_eq!(web_v1["namespaced"], true);
    assert_eq!(web_v1["preferred"], true, "{web_v1}");
    assert_eq!(web_v1["shortNames"], json!(["wa"]));
    assert_eq!(web_v1["verbs"], json!(crud));
    assert_eq!(web_v1["subresources"], json!(["scale", "status"]));
    assert_eq!(
        web_v1["path"],
        "/apis/apps.example.dev/v1/namespaces/ns/webapps/x"
    );
    let web_v1beta1 = kind("apps.example.dev/v1beta1", "WebApp");
    assert_eq!(web_v1beta1["preferred"], false, "{web_v1beta1}");
    assert_eq!(
        web_v1beta1["path"],
        "/apis/apps.example.dev/v1beta1/namespaces/ns/webapps/x"
    );
    let configmap = kind("v1", "ConfigMap");
    assert_eq!(configmap["name"], "configmaps");
    assert_eq!(configmap["namespaced"], true);
    assert_eq!(configmap["path"], "/api/v1/namespaces/ns/configmaps/x");
    let namespace = kind("v1", "Namespace");
    assert_eq!(namespace["namespaced"], false);
    assert_eq!(namespace["subresources"], json!(["finalize", "status"]));
    assert_eq!(namespace["path"], "/api/v1/namespaces/x");
    let tenant = kind("platform.example.dev/v1", "Tenant");
    assert_eq!(tenant["name"], "tenants");
    assert_eq!(tenant["namespaced"], false);
    assert_eq!(tenant["preferred"], true);
    assert_eq!(tenant["shortNames"], json!(["tn"]));
    assert_eq!(tenant["path"], "/apis/platform.example.dev/v1/tenants/x");

    let versions = &lines
        .iter()
        .find(|l| l["webappVersions"].is_array())
        .unwrap();
    assert_eq!(
        versions["webappVersions"],
        json!(["apps.example.dev/v1", "apps.example.dev/v1beta1"])
    );
    let groups = &lines
        .iter()
        .find(|l| l["groupVersions"].is_array())
        .unwrap();
    assert_eq!(
        groups["groupVersions"],
        json!([
            "admissionregistration.k8s.io/v1",
            "apiextensions.k8s.io/v1",
            "apiregistration.k8s.io/v1",
            "apps.example.dev/v1",
            "apps.example.dev/v1beta1",
            "apps/v1",
            "authentication.k8s.io/v1",
            "authorization.k8s.io/v1",
            "autoscaling/v1",
            "autoscaling/v2",
            "batch/v1",
            "certificates.k8s.io/v1",
            "coordination.k8s.io/v1",
            "discovery.k8s.io/v1",
            "events.k8s.io/v1",
            "flowcontrol.apiserver.k8s.io/v1",
            "networking.k8s.io/v1",
            "node.k8s.io/v1",
            "platform.example.dev/v1",
            "policy/v1",
            "rbac.authorization.k8s.io/v1",
            "scheduling.k8s.io/v1",
            "storage.k8s.io/v1",
            "v1"
        ])
    );
}

/// Create, get, list with selectors, replace (and a stale one), merge patch, the status
/// and scale subresources, delete: each answer as kube-apiserver gives it.
#[test]
fn a_webapp_lives_and_dies_through_the_dynamic_client() {
    let server = Server::start();
    let lines = Script::run("crud.py", &server);

    let created = &line(&lines, "step", "create")["object"];
    assert_eq!(
        created["spec"],
        json!({
            "replicas": 1,
            "paused": false,
            "container": {"image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
        }),
        "defaults filled in: {created}"
    );
    assert_eq!(created["metadata"]["namespace"], "python");

    let lists = &line(&lines, "step", "list")["lists"];
    assert_eq!(
        *lists,
        json!({
            "all": ["other", "web"],
            "tier=front": ["web"],
            "app in (web,other),tier!=front": ["other"],
            "spec.container.image=busybox:1.36": ["other"],
            "metadata.name=web": ["web"],
            "all namespaces": ["other", "web"],
        })
    );

    let conflict = &line(&lines, "step", "conflict")["status"];
    assert_eq!(
        conflict["message"],
        "Operation cannot be fulfilled on webapps.apps.example.dev \"web\": the object has \
         been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(
        conflict["details"],
        json!({"name": "web", "group": "apps.example.dev", "kind": "webapps"})
    );

    // The client's default patch type, strategic merge: labels merge with those there.
    let strategic = &line(&lines, "step", "strategic-merge-patch")["object"];
    assert_eq!(strategic["metadata"]["labels"]["via"], "strategic");
    assert!(
        strategic["metadata"]["labels"]
            .as_object()
            .is_some_and(|l| l.len() > 1),
        "the earlier labels stay: {strategic:#}"
    );

    let after_status = &line(&lines, "step", "status")["object"];
    assert_eq!(
        after_status["status"],
        json!({"replicas": 3, "readyReplicas": 3, "observedGeneration": 3})
    );
    assert_eq!(after_status["spec"]["replicas"], 2);
    assert_eq!(after_status["spec"]["paused"], true);
    assert_eq!(after_status["metadata"]["generation"], 4);

    let scale = &line(&lines, "step", "scale")["scale"];
    assert_eq!(scale["spec"], json!({"replicas": 5}), "{scale}");
    assert_eq!(scale["status"]["replicas"], 3, "{scale}");

    let deleted = &line(&lines, "step", "delete")["response"];
    assert_eq!(deleted["metadata"]["name"], "web", "{deleted}");

    let not_found = &line(&lines, "step", "not-found")["status"];
    assert_eq!(
        not_found["message"],
        "webapps.apps.example.dev \"web\" not found"
    );
    assert_eq!(
        not_found["details"],
        json!({"name": "web", "group": "apps.example.dev", "kind": "webapps"})
    );
}

/// One object through both versions: v1beta1's `spec.image` and `spec.port` are v1's
/// `spec.container.image` and first container port, whichever version writes.
#[test]
fn a_webapp_reads_and_writes_through_both_versions() {
    let server = Server::start();
    let lines = Script::run("versions.py", &server);

    let created = line(&lines, "step", "created-through-v1beta1");
    assert_eq!(
        created["v1beta1"]["spec"],
        json!({"image": "nginx:1.26", "port": 8081, "replicas": 2})
    );
    assert_eq!(
        created["v1"]["spec"]["container"],
        json!({"image": "nginx:1.26", "ports": [{"containerPort": 8081, "protocol": "TCP"}]})
    );

    let replaced = line(&lines, "step", "replaced-through-v1beta1");
    assert_eq!(
        replaced["v1beta1"]["spec"],
        json!({"image": "nginx:1.27", "port": 9090, "replicas": 2})
    );
    assert_eq!(
        replaced["v1"]["spec"]["container"]["ports"],
        json!([
            {"containerPort": 9090, "name": "http", "protocol": "UDP"},
            {"containerPort": 9000, "protocol": "TCP"},
        ])
    );
    assert_eq!(
        replaced["v1"]["metadata"]["resourceVersion"],
        replaced["v1beta1"]["metadata"]["resourceVersion"]
    );
}

/// Invalid objects: 422 `Invalid` with kube's message and one cause per field.
#[test]
fn invalid_webapps_raise_422_with_the_causes() {
    let server = Server::start();
    let lines = Script::run("validation.py", &server);
    let web = "WebApp.apps.example.dev";

    let replicas = &line(&lines, "case", "replicas")["status"];
    assert_eq!(
        replicas["message"],
        format!(
            "{web} \"bad\" is invalid: spec.replicas: Invalid value: -1: must be greater than \
             or equal to 0"
        )
    );
    assert_eq!(
        replicas["details"],
        json!({
            "name": "bad",
            "group": "apps.example.dev",
            "kind": "WebApp",
            "causes": [{
                "reason": "FieldValueInvalid",
                "field": "spec.replicas",
                "message": "Invalid value: -1: must be greater than or equal to 0",
            }],
        })
    );

    let several = &line(&lines, "case", "several")["status"];
    let fields: Vec<&Value> = (several["details"]["causes"].as_array().unwrap().iter())
        .map(|cause| &cause["field"])
        .collect();
    assert_eq!(
        fields,
        [
            "spec.replicas",
            "spec.container.image",
            "spec.container.ports[0].containerPort"
        ],
        "{several}"
    );
    assert_eq!(
        several["message"],
        format!(
            "{web} \"worse\" is invalid: [spec.replicas: Invalid value: -1: must be greater \
             than or equal to 0, spec.container.image: Invalid value: \"\": should be at least \
             1 chars long, spec.container.ports[0].containerPort: Invalid value: 70000: must \
             be less than or equal to 65535]"
        )
    );

    let patch = &line(&lines, "case", "patch")["status"];
    assert_eq!(
        patch["details"]["causes"],
        json!([{
            "reason": "FieldValueInvalid",
            "field": "spec.replicas",
            "message": "Invalid value: 1001: must be less than or equal to 1000",
        }])
    );

    // The validation rule on WebApp v1's spec, reported at its field path.
    let rule = &line(&lines, "case", "rule")["status"];
    assert_eq!(
        rule["message"],
        format!(
            "{web} \"latest\" is invalid: spec.container.image: Invalid value: \"object\": \
             the image must name a tag other than latest"
        )
    );
    assert_eq!(
        rule["details"]["causes"],
        json!([{
            "reason": "FieldValueInvalid",
            "field": "spec.container.image",
            "message": "Invalid value: \"object\": the image must name a tag other than latest",
        }])
    );
}

/// `limit=2` and `_continue` over five ConfigMaps: three pages at one resourceVersion.
#[test]
fn pages_of_two_walk_five_configmaps() {
    let server = Server::start();
    let pages = Script::run("pagination.py", &server);
    let names: Vec<&Value> = pages.iter().map(|page| &page["names"]).collect();
    assert_eq!(
        names,
        [
            &json!(["cm-0", "cm-1"]),
            &json!(["cm-2", "cm-3"]),
            &json!(["cm-4"])
        ]
    );
    let remaining: Vec<&Value> = pages.iter().map(|p| &p["remainingItemCount"]).collect();
    assert_eq!(remaining, [&json!(3), &json!(1), &Value::Null]);
    let continues: Vec<&Value> = pages.iter().map(|p| &p["hasContinue"]).collect();
    assert_eq!(continues, [&json!(true), &json!(true), &json!(false)]);
    assert!(
        pages
            .iter()
            .all(|page| page["resourceVersion"] == pages[0]["resourceVersion"]),
        "every page at the first page's resourceVersion: {pages:#?}"
    );
}

/// A Python watch sees another client's changes, each as it happens and in order: the
/// test makes the next change only once the script has reported the previous event.
/// Then `Watch().stream` replays the same events from the list's resourceVersion.
#[test]
fn a_python_watch_sees_another_clients_changes_in_order() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let mut script = Script::start("watch.py", &server, &[]);
    let ready = script.next(EVENT);
    assert_eq!(ready["step"], "ready", "{ready}");

    let collection = "/apis/apps.example.dev/v1/namespaces/watched/webapps";
    let created = client
        .post(
            collection,
            &json!({
                "apiVersion": "apps.example.dev/v1",
                "kind": "WebApp",
                "metadata": {"name": "web"},
                "spec": {"container": {"image": "nginx:1.27"}},
            }),
        )
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let mut web = created.json();
    let added = script.next(EVENT);

    web["spec"]["replicas"] = json!(4);
    let replaced = client.put(&format!("{collection}/web"), &web).unwrap();
    assert_eq!(replaced.status, 200, "{replaced:?}");
    let modified = script.next(EVENT);

    let deleted_response = client.delete(&format!("{collection}/web")).unwrap();
    assert_eq!(deleted_response.status, 200, "{deleted_response:?}");
    let deleted = script.next(EVENT);

    let event = |type_: &str, object: &Value, replicas: i64| {
        json!({
            "step": "event",
            "type": type_,
            "name": "web",
            "apiVersion": "apps.example.dev/v1",
            "replicas": replicas,
            "resourceVersion": object["metadata"]["resourceVersion"],
        })
    };
    assert_eq!(added, event("ADDED", &web, 1));
    assert_eq!(modified, event("MODIFIED", &replaced.json(), 4));
    assert_eq!(deleted, event("DELETED", &deleted_response.json(), 4));

    let rest = script.finish();
    assert_eq!(rest, [json!({"step": "replayed", "events": 3})]);
}

/// A watch from before the watch cache's history: the client raises `ApiException(410)`
/// from kube's `Expired` ERROR event; a relist and a watch from it recover.
#[test]
fn a_python_watch_from_an_expired_resource_version_raises_410() {
    let server = Server::start_with(&["--watch-cache-history=2"]);
    let lines = Script::run("watch_expired.py", &server);
    for step in ["dynamic-watch", "watch-stream"] {
        let gone = line(&lines, "step", step);
        assert_eq!(gone["status"], 410, "{gone}");
        // The ERROR event's reason and message, as the client joins them.
        let reason = gone["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("Expired: too old resource version: "),
            "{gone}"
        );
    }
    let recovered = line(&lines, "step", "recovered");
    assert_eq!(recovered["type"], "ADDED");
    assert_eq!(recovered["name"], "late");
}

/// The typed (generated) APIs, which call kube's paths as its OpenAPI names them:
/// `/version/`, `/api/`, `/apis/`, `/api/v1/` (a 404 there before the discovery routes
/// answered with a trailing slash), ConfigMaps through `CoreV1Api` (a delete answering
/// kube's Success Status), WebApps through `CustomObjectsApi`.
#[test]
fn the_typed_apis_reach_discovery_core_kinds_and_custom_objects() {
    let server = Server::start();
    let lines = Script::run("typed.py", &server);

    let discovery = line(&lines, "api", "discovery");
    assert_eq!(discovery["coreVersions"], json!(["v1"]));
    assert_eq!(
        discovery["groups"],
        json!({
            "admissionregistration.k8s.io": "admissionregistration.k8s.io/v1",
            "apiextensions.k8s.io": "apiextensions.k8s.io/v1",
            "apiregistration.k8s.io": "apiregistration.k8s.io/v1",
            "apps": "apps/v1",
            "apps.example.dev": "apps.example.dev/v1",
            "authentication.k8s.io": "authentication.k8s.io/v1",
            "authorization.k8s.io": "authorization.k8s.io/v1",
            "autoscaling": "autoscaling/v2",
            "batch": "batch/v1",
            "certificates.k8s.io": "certificates.k8s.io/v1",
            "coordination.k8s.io": "coordination.k8s.io/v1",
            "discovery.k8s.io": "discovery.k8s.io/v1",
            "events.k8s.io": "events.k8s.io/v1",
            "flowcontrol.apiserver.k8s.io": "flowcontrol.apiserver.k8s.io/v1",
            "networking.k8s.io": "networking.k8s.io/v1",
            "node.k8s.io": "node.k8s.io/v1",
            "platform.example.dev": "platform.example.dev/v1",
            "policy": "policy/v1",
            "rbac.authorization.k8s.io": "rbac.authorization.k8s.io/v1",
            "scheduling.k8s.io": "scheduling.k8s.io/v1",
            "storage.k8s.io": "storage.k8s.io/v1",
        })
    );
    assert_eq!(
        discovery["coreResources"],
        json!([
            "bindings",
            "componentstatuses",
            "configmaps",
            "endpoints",
            "events",
            "limitranges",
            "namespaces",
            "namespaces/finalize",
            "namespaces/status",
            "nodes",
            "nodes/proxy",
            "nodes/status",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "persistentvolumes",
            "persistentvolumes/status",
            "pods",
            "pods/attach",
            "pods/binding",
            "pods/ephemeralcontainers",
            "pods/eviction",
            "pods/exec",
            "pods/log",
            "pods/portforward",
            "pods/proxy",
            "pods/status",
            "podtemplates",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
            "secrets",
            "serviceaccounts",
            "serviceaccounts/token",
            "services",
            "services/proxy",
            "services/status"
        ])
    );
    assert_eq!(
        discovery["webappResources"],
        json!(["webapps", "webapps/scale", "webapps/status"])
    );

    let deleted = &line(&lines, "api", "core")["deleted"];
    let uid = &deleted["details"]["uid"];
    assert!(uid.is_string(), "{deleted}");
    assert_eq!(
        *deleted,
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {"name": "settings", "kind": "configmaps", "uid": uid},
        })
    );
    assert_eq!(
        line(&lines, "api", "watch")["events"],
        json!(["MODIFIED", "DELETED"])
    );
    let custom = &line(&lines, "api", "custom")["deleted"];
    assert_eq!(custom["kind"], "WebApp", "{custom}");
    assert_eq!(custom["spec"]["replicas"], 3, "{custom}");
}

/// A secure server (HTTPS, token authentication, RBAC): the client authenticates with a
/// bearer token and trusts the server's CA; a user without bindings gets kube's 403, a
/// wrong token 401.
#[test]
fn the_client_authenticates_and_is_authorized() {
    let server = Server::start_secure(support::pki::Pki::new(), support::Backend::Embedded, &[]);
    let lines = Script::start("secure.py", &server, &[support::pki::ALICE_TOKEN]).finish();
    assert_eq!(line(&lines, "created", "secure")["created"], "secure");
    let forbidden = lines.iter().find(|l| l["forbidden"].is_string()).unwrap();
    assert_eq!(
        forbidden["forbidden"],
        "configmaps \"secure\" is forbidden: User \"alice\" cannot get resource \
         \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    assert!(lines.iter().any(|l| l["unauthorized"] == true));
}

/// A kind a CustomResourceDefinition installs, through the DynamicClient: waited for until
/// Established, found by discovery, created (defaulted, pruned), listed, merge-patched,
/// and deleted with its definition.
#[test]
fn a_defined_kind_lives_and_dies_through_the_dynamic_client() {
    let server = Server::start();
    let lines = Script::run("custom_resource.py", &server);
    let established = &line(&lines, "step", "established")["conditions"];
    assert_eq!(established["NamesAccepted"], "True", "{established}");
    let created = &line(&lines, "step", "create")["object"];
    assert_eq!(
        created["spec"],
        json!({"cronSpec": "0 0 * * *", "replicas": 1})
    );
    assert_eq!(created["apiVersion"], "stable.example.com/v1");
    line(&lines, "step", "gone");
}
