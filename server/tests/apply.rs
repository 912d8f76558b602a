//! Server-side apply and field management, end to end: kubectl 1.32 against the real
//! `kapi-server` (`apply --server-side`, conflicts and `--force-conflicts`, two appliers on
//! one list-map, pruning, `--dry-run=server`, `kubectl label`'s Update entry,
//! `--show-managed-fields`), and raw HTTP for what kubectl does not show (the 409 body,
//! the options and body checks, malformed `managedFields`, ownership across versions).
//! Expected texts are kube-apiserver's, compared against the peer of `shared/peer/`. Every
//! scenario but the one across WebApp's versions runs on the compiled WebApp and on the
//! same kind defined by a CustomResourceDefinition (`*_compiled`, `*_defined`).

use crate::support;

use serde_json::{Value, json};
use support::http::{Client, Response};
use support::webapps::{WebApps, on_both_kinds};
use support::{Kubectl, Server, Version};

fn start(kind: WebApps) -> (Server, Kubectl) {
    Version::V1_32.binary();
    let server = kind.start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    (server, kubectl)
}

/// A v1 WebApp manifest of `kind`: `replicas` (none when `None`), one port per
/// `(port, name)`, and labels.
fn webapp(kind: WebApps, replicas: Option<i32>, ports: &[(i32, &str)], labels: &str) -> String {
    let replicas = replicas.map_or(String::new(), |r| format!("  replicas: {r}\n"));
    let ports: Vec<String> = (ports.iter())
        .map(|(port, name)| format!("{{containerPort: {port}, name: {name}}}"))
        .collect();
    let labels = match labels {
        "" => String::new(),
        labels => format!(", labels: {{{labels}}}"),
    };
    format!(
        "apiVersion: {}\nkind: WebApp\nmetadata: {{name: web{labels}}}\n\
         spec:\n{replicas}  container:\n    image: nginx:1.27\n    ports: [{}]\n",
        kind.api_version(),
        ports.join(", ")
    )
}

/// The object with its managedFields, as `kubectl get -o json --show-managed-fields`.
fn get(kubectl: &Kubectl, kind: WebApps) -> Value {
    let resource = kind.resource();
    kubectl
        .ok(&[
            "get",
            &resource,
            "web",
            "-o",
            "json",
            "--show-managed-fields",
        ])
        .json()
}

/// The managedFields entry of `manager` (and its operation), or a panic listing them.
#[track_caller]
fn entry<'a>(object: &'a Value, manager: &str, operation: &str) -> &'a Value {
    let entries = object["metadata"]["managedFields"].as_array();
    entries
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
        .unwrap_or_else(|| panic!("no {operation} entry of {manager}: {object:#}"))
}

fn managers(object: &Value) -> Vec<String> {
    let entries = object["metadata"]["managedFields"].as_array();
    (entries.into_iter().flatten())
        .map(|e| format!("{}/{}", e["manager"].as_str().unwrap_or(""), e["operation"]))
        .collect()
}

fn kubectl_server_side_apply_creates_updates_and_owns_fields(kind: WebApps) {
    let (_server, kubectl) = start(kind);
    let manifest = kubectl.write_file("web.yaml", &webapp(kind, Some(2), &[(80, "http")], ""));
    kubectl
        .ok(&["apply", "--server-side", "-f", &manifest])
        .stdout_is(&format!("webapp.{}/web serverside-applied", kind.group()));
    let object = get(&kubectl, kind);
    assert_eq!(object["spec"]["replicas"], 2);
    // Defaults (protocol, paused) are the server's: the applier owns what it sent.
    assert_eq!(object["spec"]["container"]["ports"][0]["protocol"], "TCP");
    let applied = entry(&object, "kubectl", "Apply");
    assert_eq!(applied["apiVersion"], kind.api_version());
    assert_eq!(applied["fieldsType"], "FieldsV1");
    assert_eq!(
        applied["fieldsV1"],
        json!({"f:spec": {
            "f:container": {"f:image": {}, "f:ports": {
                "k:{\"containerPort\":80}": {".": {}, "f:containerPort": {}, "f:name": {}}}},
            "f:replicas": {}}})
    );
    assert!(applied["time"].as_str().is_some_and(|t| t.ends_with('Z')));
    // `kubectl get -o yaml` hides managedFields unless asked; the server sends them.
    let plain = kubectl
        .ok(&["get", &kind.resource(), "web", "-o", "json"])
        .json();
    assert!(plain["metadata"].get("managedFields").is_none());

    let updated = kubectl.write_file("web3.yaml", &webapp(kind, Some(3), &[(80, "http")], ""));
    kubectl
        .ok(&["apply", "--server-side", "-f", &updated])
        .stdout_is(&format!("webapp.{}/web serverside-applied", kind.group()));
    let object = get(&kubectl, kind);
    assert_eq!(object["spec"]["replicas"], 3);
    assert_eq!(managers(&object), ["kubectl/\"Apply\""]);

    // `kubectl label` is an Update by `kubectl-label`, owning only its label.
    kubectl.ok(&["label", &kind.resource(), "web", "tier=web"]);
    let object = get(&kubectl, kind);
    assert_eq!(
        entry(&object, "kubectl-label", "Update")["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}, "f:tier": {}}}})
    );
    assert_eq!(
        managers(&object),
        ["kubectl/\"Apply\"", "kubectl-label/\"Update\""]
    );
}

fn conflicts_are_refused_with_kubes_text_and_force_takes_ownership(kind: WebApps) {
    let (_server, kubectl) = start(kind);
    let mine = kubectl.write_file("mine.yaml", &webapp(kind, Some(2), &[(80, "http")], ""));
    kubectl.ok(&["apply", "--server-side", "-f", &mine]);
    let before = get(&kubectl, kind);

    let theirs = kubectl.write_file("theirs.yaml", &webapp(kind, Some(5), &[(80, "http")], ""));
    kubectl
        .fails(&[
            "apply",
            "--server-side",
            "--field-manager=other",
            "-f",
            &theirs,
        ])
        .stderr_has(
            "error: Apply failed with 1 conflict: conflict with \"kubectl\": .spec.replicas\n\
             Please review the fields above--they currently have other managers.",
        );
    assert_eq!(
        get(&kubectl, kind),
        before,
        "a conflicting apply changes nothing"
    );

    kubectl
        .ok(&[
            "apply",
            "--server-side",
            "--field-manager=other",
            "--force-conflicts",
            "-f",
            &theirs,
        ])
        .stdout_is(&format!("webapp.{}/web serverside-applied", kind.group()));
    let object = get(&kubectl, kind);
    assert_eq!(object["spec"]["replicas"], 5);
    // `other` took replicas; the fields both apply with the same value are shared.
    let mine = &entry(&object, "kubectl", "Apply")["fieldsV1"]["f:spec"];
    assert!(mine.get("f:replicas").is_none(), "{object:#}");
    assert!(mine["f:container"].get("f:image").is_some());
    let theirs = &entry(&object, "other", "Apply")["fieldsV1"]["f:spec"];
    assert!(theirs.get("f:replicas").is_some());
    assert!(theirs["f:container"].get("f:image").is_some());

    // An Update's owner conflicts too, named with its version.
    kubectl.ok(&["create", "-f", &manifest_named(&kubectl, kind, "created")]);
    let apply = kubectl.write_file(
        "apply-created.yaml",
        &webapp(kind, Some(9), &[(80, "http")], "").replace("name: web", "name: created"),
    );
    kubectl
        .fails(&["apply", "--server-side", "-f", &apply])
        .stderr_has(&format!(
            "error: Apply failed with 1 conflict: conflict with \"kubectl-create\" using \
             {}: .spec.replicas",
            kind.api_version()
        ));
}

fn manifest_named(kubectl: &Kubectl, kind: WebApps, name: &str) -> String {
    kubectl.write_file(
        &format!("{name}.yaml"),
        &webapp(kind, Some(2), &[(80, "http")], "").replace("name: web", &format!("name: {name}")),
    )
}

fn two_appliers_share_a_list_map_and_each_prunes_only_its_own(kind: WebApps) {
    let (_server, kubectl) = start(kind);
    let first = kubectl.write_file(
        "first.yaml",
        &webapp(kind, Some(2), &[(80, "http")], "app: web"),
    );
    kubectl.ok(&["apply", "--server-side", "-f", &first]);
    let second = kubectl.write_file("second.yaml", &webapp(kind, None, &[(81, "alt")], ""));
    kubectl.ok(&[
        "apply",
        "--server-side",
        "--field-manager=other",
        "-f",
        &second,
    ]);
    let object = get(&kubectl, kind);
    let ports: Vec<&Value> = (object["spec"]["container"]["ports"]
        .as_array()
        .unwrap()
        .iter())
    .map(|p| &p["containerPort"])
    .collect();
    assert_eq!(ports, [&json!(80), &json!(81)], "both keys stay");

    // The first applier stops applying replicas and its label: they are removed (replicas
    // then defaulted back to 1), and the other applier's port stays.
    let fewer = kubectl.write_file("fewer.yaml", &webapp(kind, None, &[(80, "http")], ""));
    kubectl.ok(&["apply", "--server-side", "-f", &fewer]);
    let object = get(&kubectl, kind);
    assert_eq!(object["spec"]["replicas"], 1);
    assert!(
        object["metadata"]
            .get("labels")
            .is_none_or(|l| l.get("app").is_none())
    );
    assert_eq!(
        object["spec"]["container"]["ports"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // The other applier stops applying its port: only that item goes.
    let none = kubectl.write_file("none.yaml", &webapp(kind, None, &[], ""));
    kubectl.ok(&[
        "apply",
        "--server-side",
        "--field-manager=other",
        "-f",
        &none,
    ]);
    let object = get(&kubectl, kind);
    assert_eq!(
        object["spec"]["container"]["ports"],
        json!([{"containerPort": 80, "name": "http", "protocol": "TCP"}])
    );
}

fn server_dry_run_stores_nothing(kind: WebApps) {
    let (_server, kubectl) = start(kind);
    let manifest = kubectl.write_file("web.yaml", &webapp(kind, Some(2), &[(80, "http")], ""));
    kubectl
        .ok(&[
            "apply",
            "--server-side",
            "--dry-run=server",
            "-f",
            &manifest,
        ])
        .stdout_is(&format!(
            "webapp.{}/web serverside-applied (server dry run)",
            kind.group()
        ));
    kubectl
        .fails(&["get", &kind.resource(), "web"])
        .stderr_has("NotFound");
    kubectl.ok(&["apply", "--server-side", "-f", &manifest]);
    let before = get(&kubectl, kind);
    let other = kubectl.write_file("web7.yaml", &webapp(kind, Some(7), &[(80, "http")], ""));
    kubectl.ok(&["apply", "--server-side", "--dry-run=server", "-f", &other]);
    assert_eq!(get(&kubectl, kind), before);
}

/// A client for raw HTTP, and a WebApp `web` applied by `kubectl-like`.
fn http_with_webapp(server: &Server, kind: WebApps) -> Client {
    let client = Client::new(server.addr());
    let created = apply(
        &client,
        kind,
        "web",
        "owner",
        false,
        &json!({"spec": {"replicas": 2}}),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    client
}

/// `PATCH` with an apply configuration (a v1 WebApp of `kind` named `name`, `spec` merged
/// in).
fn apply(
    client: &Client,
    kind: WebApps,
    name: &str,
    manager: &str,
    force: bool,
    extra: &Value,
) -> Response {
    let mut config = json!({
        "apiVersion": kind.api_version(), "kind": "WebApp",
        "metadata": {"name": name},
        "spec": {"container": {"image": "nginx:1.27"}},
    });
    json_patch::merge(&mut config, extra);
    let force = if force { "&force=true" } else { "" };
    let path = format!("{}/{name}?fieldManager={manager}{force}", kind.collection());
    let yaml = serde_json::to_string(&config).expect("JSON is YAML");
    (client.send_raw("PATCH", &path, "application/apply-patch+yaml", &yaml)).expect("a response")
}

fn http_conflicts_options_and_bodies_answer_as_kube(kind: WebApps) {
    let server = kind.start();
    let client = http_with_webapp(&server, kind);

    // Updating with the same values is no conflict: both own the field.
    let same = apply(
        &client,
        kind,
        "web",
        "second",
        false,
        &json!({"spec": {"replicas": 2}}),
    );
    assert_eq!(same.status, 200, "{}", same.body);
    let conflict = apply(
        &client,
        kind,
        "web",
        "third",
        false,
        &json!({"spec": {"replicas": 4}}),
    );
    assert_eq!(conflict.status, 409);
    let body = conflict.json();
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Apply failed with 2 conflicts: conflicts with \"owner\":\n- .spec.replicas\nconflicts with \"second\":\n- .spec.replicas",
            "reason": "Conflict",
            "details": {"causes": [
                {"reason": "FieldManagerConflict", "message": "conflict with \"owner\"", "field": ".spec.replicas"},
                {"reason": "FieldManagerConflict", "message": "conflict with \"second\"", "field": ".spec.replicas"}]},
            "code": 409})
    );

    // Options: a manager is required; force only with apply (kube's 422s on PatchOptions).
    let path = format!("{}/web", kind.collection());
    let response = client
        .send_raw("PATCH", &path, "application/apply-patch+yaml", "{}")
        .expect("a response");
    assert_eq!(response.status, 422);
    assert_eq!(
        response.json()["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let response = client
        .send_raw(
            "PATCH",
            &format!("{path}?force=true"),
            "application/merge-patch+json",
            "{}",
        )
        .expect("a response");
    assert_eq!(response.status, 422);
    assert_eq!(
        response.json()["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );

    // Bodies: the request's type, no managedFields, the URL's name (kube's 400s).
    for (config, message) in [
        (
            json!({"apiVersion": format!("{}/v1beta1", kind.group()), "kind": "WebApp", "metadata": {"name": "web"}}),
            format!("invalid object type: {}/v1beta1, Kind=WebApp", kind.group()),
        ),
        (
            json!({"apiVersion": kind.api_version(), "kind": "WebApp",
                   "metadata": {"name": "web", "managedFields": []}}),
            "metadata.managedFields must be nil".to_owned(),
        ),
        (
            json!({"apiVersion": kind.api_version(), "kind": "WebApp", "metadata": {"name": "other"}}),
            "the name of the object (other) does not match the name on the URL (web)".to_owned(),
        ),
    ] {
        let response = client
            .send_raw(
                "PATCH",
                &format!("{path}?fieldManager=m"),
                "application/apply-patch+yaml",
                &config.to_string(),
            )
            .expect("a response");
        assert_eq!(
            (response.status, response.json()["message"].clone()),
            (400, json!(message))
        );
    }
    let not_yaml = client
        .send_raw(
            "PATCH",
            &format!("{path}?fieldManager=m"),
            "application/apply-patch+yaml",
            "a: [",
        )
        .expect("a response");
    assert_eq!(not_yaml.status, 400, "{}", not_yaml.body);
}

fn client_sent_managed_fields_are_validated_reset_or_kept(kind: WebApps) {
    let server = kind.start();
    let client = http_with_webapp(&server, kind);
    let path = format!("{}/web", kind.collection());
    let merge = |patch: Value| {
        client
            .send_raw(
                "PATCH",
                &format!("{path}?fieldManager=patcher"),
                "application/merge-patch+json",
                &patch.to_string(),
            )
            .expect("a response")
    };
    let malformed = merge(json!({"metadata": {"managedFields": [
        {"manager": "m", "operation": "Foo", "apiVersion": kind.api_version(), "fieldsType": "FieldsV1", "fieldsV1": {}}]}}));
    assert_eq!(malformed.status, 422);
    assert_eq!(
        malformed.json()["details"]["causes"],
        json!([{"reason": "FieldValueNotSupported",
                "message": "Unsupported value: \"Foo\": supported values: \"Apply\", \"Update\"",
                "field": "metadata.managedFields[0].operation"}])
    );
    let bad_type = merge(json!({"metadata": {"managedFields": [
        {"manager": "m", "operation": "Update", "apiVersion": kind.api_version(), "fieldsType": "FieldsV2"}]}}));
    assert_eq!(bad_type.status, 422);
    assert_eq!(
        bad_type.json()["details"]["causes"][0]["field"],
        "metadata.managedFields[0].fieldsType"
    );
    let stored = client.get(&path).expect("a response").json();
    assert_eq!(stored["metadata"]["managedFields"][0]["manager"], "owner");

    // A client may rewrite ownership: the valid entries replace the stored ones.
    let rewritten = merge(json!({"metadata": {"managedFields": [
        {"manager": "mine", "operation": "Update", "apiVersion": kind.api_version(),
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]}}));
    assert_eq!(rewritten.status, 200, "{}", rewritten.body);

    let entries = &rewritten.json()["metadata"]["managedFields"];
    assert_eq!(entries.as_array().map(Vec::len), Some(1), "{entries:#}");
    assert_eq!(entries[0]["manager"], "mine");

    // `[{}]` forgets ownership; the object stays untracked by updates...
    let reset = merge(json!({"metadata": {"managedFields": [{}]}}));
    assert_eq!(reset.status, 200);
    assert!(reset.json()["metadata"].get("managedFields").is_none());
    let untracked = merge(json!({"spec": {"replicas": 3}}));
    assert!(untracked.json()["metadata"].get("managedFields").is_none());
    // ...until someone applies: what was there belongs to `before-first-apply`.
    let conflict = apply(
        &client,
        kind,
        "web",
        "owner",
        false,
        &json!({"spec": {"replicas": 5}}),
    );
    assert_eq!(conflict.status, 409);
    assert_eq!(
        conflict.json()["message"],
        format!(
            "Apply failed with 1 conflict: conflict with \"before-first-apply\" using {}: .spec.replicas",
            kind.api_version()
        )
    );
}

#[test]
fn ownership_is_tracked_across_versions_through_the_hub() {
    let server = Server::start();
    let client = Client::new(server.addr());
    // An applier through v1beta1 owns `spec.replicas` there.
    let beta = json!({"apiVersion": "apps.example.dev/v1beta1", "kind": "WebApp",
        "metadata": {"name": "web"}, "spec": {"replicas": 2, "image": "nginx:1.27"}});
    let path = "/apis/apps.example.dev/v1beta1/namespaces/default/webapps/web?fieldManager=beta";
    let created = client
        .send_raw(
            "PATCH",
            path,
            "application/apply-patch+yaml",
            &beta.to_string(),
        )
        .expect("a response");
    assert_eq!(created.status, 201, "{}", created.body);
    let entries = &created.json()["metadata"]["managedFields"];
    assert_eq!(entries[0]["apiVersion"], "apps.example.dev/v1beta1");
    assert_eq!(entries[0]["fieldsV1"]["f:spec"]["f:replicas"], json!({}));

    // Another applier through v1 changing the same hub field conflicts with it.
    let conflict = apply(
        &client,
        WebApps::Compiled,
        "web",
        "alpha",
        false,
        &json!({"spec": {"replicas": 4}}),
    );
    assert_eq!(conflict.status, 409, "{}", conflict.body);
    assert_eq!(
        conflict.json()["message"],
        "Apply failed with 1 conflict: conflict with \"beta\": .spec.replicas"
    );
    // The same value through v1 is no conflict; ownership is then shared across versions.
    let same = apply(
        &client,
        WebApps::Compiled,
        "web",
        "alpha",
        false,
        &json!({"spec": {"replicas": 2}}),
    );
    assert_eq!(same.status, 200, "{}", same.body);
    let forced = apply(
        &client,
        WebApps::Compiled,
        "web",
        "alpha",
        true,
        &json!({"spec": {"replicas": 4}}),
    );
    assert_eq!(forced.status, 200, "{}", forced.body);
    let object = forced.json();
    assert_eq!(object["spec"]["replicas"], 4);
    let beta_entry = (object["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter())
    .find(|e| e["manager"] == "beta")
    .expect("beta still owns its image");
    assert!(beta_entry["fieldsV1"]["f:spec"].get("f:replicas").is_none());
    assert!(beta_entry["fieldsV1"]["f:spec"].get("f:image").is_some());
}

fn unknown_fields_follow_field_validation_and_are_never_owned(kind: WebApps) {
    let server = kind.start();
    let client = Client::new(server.addr());
    let config = |name: &str| {
        json!({"apiVersion": kind.api_version(), "kind": "WebApp", "metadata": {"name": name},
            "spec": {"foo": 1, "container": {"image": "nginx:1.27"}}})
        .to_string()
    };
    let send = |name: &str, validation: &str| {
        let path = format!(
            "{}/{name}?fieldManager=m&fieldValidation={validation}",
            kind.collection()
        );
        (client.send_raw(
            "PATCH",
            &path,
            "application/apply-patch+yaml",
            &config(name),
        ))
        .expect("a response")
    };
    let strict = send("strict", "Strict");
    assert_eq!(strict.status, 400);
    assert_eq!(
        strict.json()["message"],
        "WebApp in version \"v1\" cannot be handled as a WebApp: strict decoding error: unknown field \"spec.foo\""
    );
    for (name, validation, warnings) in [
        (
            "warn",
            "Warn",
            vec!["299 - \"unknown field \\\"spec.foo\\\"\"".to_owned()],
        ),
        ("ignore", "Ignore", vec![]),
    ] {
        let response = send(name, validation);
        assert_eq!(response.status, 201, "{}", response.body);
        assert_eq!(response.warnings, warnings);
        let object = response.json();
        assert!(object["spec"].get("foo").is_none());
        assert_eq!(
            object["metadata"]["managedFields"][0]["fieldsV1"],
            json!({"f:spec": {"f:container": {"f:image": {}}}}),
            "the unknown field is not owned"
        );
    }
}

on_both_kinds! {
    kubectl_server_side_apply_creates_updates_and_owns_fields =>
        kubectl_server_side_apply_creates_updates_and_owns_fields_compiled,
        kubectl_server_side_apply_creates_updates_and_owns_fields_defined;
    conflicts_are_refused_with_kubes_text_and_force_takes_ownership =>
        conflicts_are_refused_with_kubes_text_and_force_takes_ownership_compiled,
        conflicts_are_refused_with_kubes_text_and_force_takes_ownership_defined;
    two_appliers_share_a_list_map_and_each_prunes_only_its_own =>
        two_appliers_share_a_list_map_and_each_prunes_only_its_own_compiled,
        two_appliers_share_a_list_map_and_each_prunes_only_its_own_defined;
    server_dry_run_stores_nothing =>
        server_dry_run_stores_nothing_compiled,
        server_dry_run_stores_nothing_defined;
    http_conflicts_options_and_bodies_answer_as_kube =>
        http_conflicts_options_and_bodies_answer_as_kube_compiled,
        http_conflicts_options_and_bodies_answer_as_kube_defined;
    client_sent_managed_fields_are_validated_reset_or_kept =>
        client_sent_managed_fields_are_validated_reset_or_kept_compiled,
        client_sent_managed_fields_are_validated_reset_or_kept_defined;
    unknown_fields_follow_field_validation_and_are_never_owned =>
        unknown_fields_follow_field_validation_and_are_never_owned_compiled,
        unknown_fields_follow_field_validation_and_are_never_owned_defined;
}
