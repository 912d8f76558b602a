//! Defaulting and validation against the versions' OpenAPI v3 schemas, with kubectl 1.32
//! against the real `kapi-server`: invalid manifests (`manifests/invalid-*.yaml`) are
//! rejected with the message kubectl prints for kube-apiserver's 422, in create, replace,
//! patch and apply; defaults show up in what is stored; server-side dry runs change
//! nothing; unknown fields are rejected with kubectl's default flags; `kubectl explain`
//! (1.32 and 1.20) shows the defaults; immutable fields inside lists and the kind's own
//! cross-field rule (paths in the request's version); and, with raw HTTP where kubectl
//! cannot go, `fieldValidation` (repeated and unknown fields) and `dryRun=All` on create,
//! update and patch.

use crate::support;

use serde_json::{Value, json};
use support::http::{Client, Response};
use support::{Kubectl, Server, Version, manifest};

/// A fresh server and kubectl 1.32 pointed at it.
fn start() -> (Server, Kubectl) {
    start_with(Version::V1_32)
}

/// A fresh server and kubectl `version` pointed at it.
fn start_with(version: Version) -> (Server, Kubectl) {
    version.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    (server, kubectl)
}

/// One rule of the schema per manifest, and the message kubectl prints for it.
#[test]
fn invalid_manifests_are_rejected_with_kubes_messages() {
    let (_server, kubectl) = start();
    let web = "The WebApp \"web\" is invalid: ";
    // An error that blocks the kind's validation rules (a missing value, one of the wrong
    // type, too long or too many) comes with kube's note that they were not run.
    let noted = |object: &str, cause: &str| {
        format!(
            "{object}\n* {cause}\n* <nil>: Invalid value: \"null\": some validation rules were \
             not checked because the object was invalid; correct the existing errors to \
             complete validation"
        )
    };
    let tenant = "The Tenant \"acme\" is invalid: ";
    for (file, expected) in [
        (
            "invalid-replicas.yaml",
            format!("{web}spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        ),
        (
            "invalid-replicas-max.yaml",
            format!("{web}spec.replicas: Invalid value: 1001: must be less than or equal to 1000"),
        ),
        (
            "invalid-image-missing.yaml",
            noted(web, "spec.container.image: Required value"),
        ),
        (
            "invalid-image-empty.yaml",
            format!(
                "{web}spec.container.image: Invalid value: \"\": should be at least 1 chars long"
            ),
        ),
        (
            "invalid-protocol.yaml",
            noted(
                web,
                "spec.container.ports[1].protocol: Unsupported value: \"SCTP\": supported \
                 values: \"TCP\", \"UDP\"",
            ),
        ),
        (
            "invalid-duplicate-port.yaml",
            format!(
                "{web}spec.container.ports[1]: Duplicate value: \
                 map[string]interface {{}}{{\"containerPort\":80}}"
            ),
        ),
        (
            "invalid-type.yaml",
            noted(
                web,
                "spec.replicas: Invalid value: \"string\": must be of type integer: \"string\"",
            ),
        ),
        (
            "invalid-several.yaml",
            format!(
                "{web}\n\
                 * spec.replicas: Invalid value: -1: must be greater than or equal to 0\n\
                 * spec.container.image: Invalid value: \"\": should be at least 1 chars long\n\
                 * spec.container.ports[0].containerPort: Invalid value: 70000: \
                 must be less than or equal to 65535"
            ),
        ),
        (
            "invalid-v1beta1-port.yaml",
            "The WebApp \"legacy\" is invalid: spec.port: Invalid value: 0: \
             must be greater than or equal to 1"
                .to_owned(),
        ),
        (
            "invalid-env-name.yaml",
            format!(
                "{web}spec.container.env[0].name: Invalid value: \"1ST_VALUE\": \
                 should match '^[A-Za-z_][A-Za-z0-9_]*$'"
            ),
        ),
        (
            "invalid-display-name.yaml",
            noted(
                tenant,
                "spec.displayName: Too long: may not be more than 63 bytes",
            ),
        ),
        (
            "invalid-owners-empty.yaml",
            "The Tenant \"acme\" is invalid: spec.owners: Invalid value: 0: should have at \
             least 1 items"
                .to_owned(),
        ),
        (
            "invalid-owners-many.yaml",
            noted(
                tenant,
                "spec.owners: Too many: 11: must have at most 10 items",
            ),
        ),
        (
            "invalid-cpu.yaml",
            "The Tenant \"acme\" is invalid: spec.quota.cpu: Invalid value: 0: must be \
             greater than 0"
                .to_owned(),
        ),
        (
            "invalid-cpu-max.yaml",
            "The Tenant \"acme\" is invalid: spec.quota.cpu: Invalid value: 1024: must be \
             less than 1024"
                .to_owned(),
        ),
        (
            "invalid-tenant.yaml",
            "The Tenant \"acme\" is invalid: \n\
             * spec.quota.maxWebApps: Invalid value: -5: must be greater than or equal to 0\n\
             * spec.owners[1]: Duplicate value: \"alice@example.dev\""
                .to_owned(),
        ),
    ] {
        let path = manifest(file);
        kubectl
            .fails(&["create", "-f", &path])
            .stderr_has(&expected);
        kubectl
            .fails(&["apply", "-f", &path, "--dry-run=server"])
            .stderr_has(&expected);
    }
    kubectl
        .ok(&["get", "wa,tn", "-A", "-o", "name"])
        .stdout_is("");
}

/// Updates are validated too: replace, merge and JSON patches, apply; nothing changes.
#[test]
fn updates_and_patches_are_validated() {
    let (_server, kubectl) = start();
    kubectl.ok(&["create", "-f", &manifest("webapp.yaml")]);
    let before = kubectl.ok(&["get", "wa", "web", "-o", "json"]).json();

    let below = "The WebApp \"web\" is invalid: \
                 spec.replicas: Invalid value: -1: must be greater than or equal to 0";
    let invalid = manifest("invalid-replicas.yaml");
    kubectl
        .fails(&["replace", "-f", &invalid])
        .stderr_has(below);
    kubectl.fails(&["apply", "-f", &invalid]).stderr_has(below);
    kubectl
        .fails(&[
            "patch",
            "wa",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":-1}}"#,
        ])
        .stderr_has(below);
    kubectl
        .fails(&[
            "patch",
            "wa",
            "web",
            "--type=json",
            "-p",
            r#"[{"op":"add","path":"/spec/container/ports/-","value":{"containerPort":80}}]"#,
        ])
        .stderr_has(
            "The WebApp \"web\" is invalid: spec.container.ports[1]: Duplicate value: \
             map[string]interface {}{\"containerPort\":80}",
        );
    kubectl
        .fails(&[
            "patch",
            "wa",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"container":{"image":""}}}"#,
        ])
        .stderr_has(
            "The WebApp \"web\" is invalid: spec.container.image: Invalid value: \"\": \
             should be at least 1 chars long",
        );

    let after = kubectl.ok(&["get", "wa", "web", "-o", "json"]).json();
    assert_eq!(after, before, "failed updates should change nothing");

    // A valid patch still goes through, and a patch that sets a defaulted field to null
    // gets its default back.
    kubectl
        .ok(&[
            "patch",
            "wa",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":null}}"#,
        ])
        .stdout_is("webapp.apps.example.dev/web patched");
    let run = kubectl.ok(&["get", "wa", "web", "-o", "json"]);
    run.check(
        run.json()["spec"]["replicas"] == 1,
        "replicas defaulted to 1",
    );
}

/// Fields left out get their schema defaults, in every version.
#[test]
fn defaults_are_applied() {
    let (_server, kubectl) = start();
    let bare = kubectl.write_file(
        "bare.yaml",
        "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata:\n  name: bare\n\
         spec:\n  container:\n    image: nginx:1.25\n    ports:\n      - containerPort: 80\n",
    );
    kubectl.ok(&["create", "-f", &bare]);
    let run = kubectl.ok(&["get", "wa", "bare", "-o", "yaml"]);
    run.stdout_has("  replicas: 1\n")
        .stdout_has("protocol: TCP\n");

    let legacy = kubectl.write_file(
        "legacy.yaml",
        "apiVersion: apps.example.dev/v1beta1\nkind: WebApp\nmetadata:\n  name: legacy\n\
         spec:\n  image: httpd:2.4\n",
    );
    kubectl.ok(&["create", "-f", &legacy]);
    let run = kubectl.ok(&[
        "get",
        "webapps.v1beta1.apps.example.dev",
        "legacy",
        "-o",
        "json",
    ]);
    run.check(
        run.json()["spec"]["port"] == 8080 && run.json()["spec"]["replicas"] == 1,
        "v1beta1 port defaulted to 8080, replicas to 1",
    );

    let tenant = kubectl.write_file(
        "tenant.yaml",
        "apiVersion: platform.example.dev/v1\nkind: Tenant\nmetadata:\n  name: bare\nspec: {}\n",
    );
    kubectl.ok(&["create", "-f", &tenant]);
    let run = kubectl.ok(&["get", "tn", "bare", "-o", "json"]);
    run.check(
        run.json()["spec"]["quota"] == json!({"maxWebApps": 10}),
        "quota.maxWebApps defaulted to 10",
    );
}

/// Objects already in storage without fields that have defaults (written before those
/// fields existed, say) are defaulted when read, as kube-apiserver defaults on decoding
/// from etcd: through get, list and watch, in every version. Nothing is written back.
#[test]
fn stored_objects_are_defaulted_on_read() {
    use kapi::storage::Storage;
    use kapi::storage::embedded::EmbeddedStorage;

    let (mut server, _) = start();
    server.kill_9();
    let stored = [
        (
            "/registry/apps.example.dev/webapps/default/old",
            json!({
                "apiVersion": "apps.example.dev/v1", "kind": "WebApp",
                "metadata": {"name": "old", "namespace": "default",
                             "uid": "3e2c1d1c-0000-4000-8000-000000000001",
                             "creationTimestamp": "2024-01-01T00:00:00Z"},
                "spec": {"container": {"image": "nginx:1.20", "ports": [{"containerPort": 80}]}},
            }),
        ),
        (
            "/registry/platform.example.dev/tenants/old",
            json!({
                "apiVersion": "platform.example.dev/v1", "kind": "Tenant",
                "metadata": {"name": "old", "uid": "3e2c1d1c-0000-4000-8000-000000000002",
                             "creationTimestamp": "2024-01-01T00:00:00Z"},
                "spec": {},
            }),
        ),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let storage = EmbeddedStorage::open(server.data_dir()).expect("opening the store");
        for (key, object) in &stored {
            let bytes = serde_json::to_vec(object).unwrap();
            storage.create(key, bytes.into()).await.expect("writing");
        }
    });
    server.restart();
    let kubectl = Kubectl::new(Version::V1_32, &server);

    let check_v1 = |object: &Value, how: &str| {
        let spec = &object["spec"];
        assert_eq!(
            (
                &spec["replicas"],
                &spec["paused"],
                &spec["container"]["ports"][0]["protocol"]
            ),
            (&json!(1), &json!(false), &json!("TCP")),
            "{how}: {object:#}"
        );
    };
    check_v1(
        &kubectl.ok(&["get", "wa", "old", "-o", "json"]).json(),
        "get",
    );
    check_v1(
        &kubectl.ok(&["get", "wa", "-o", "json"]).json()["items"][0],
        "list",
    );
    let legacy = kubectl
        .ok(&[
            "get",
            "webapps.v1beta1.apps.example.dev",
            "old",
            "-o",
            "json",
        ])
        .json();
    assert_eq!(
        (&legacy["spec"]["replicas"], &legacy["spec"]["port"]),
        (&json!(1), &json!(80)),
        "v1beta1: {legacy:#}"
    );
    let tenant = kubectl.ok(&["get", "tn", "old", "-o", "json"]).json();
    assert_eq!(
        tenant["spec"]["quota"],
        json!({"maxWebApps": 10}),
        "{tenant:#}"
    );

    // A watch's initial events too.
    let client = Client::new(server.addr());
    let mut watch = client
        .watch(
            "/apis/apps.example.dev/v1/namespaces/default/webapps?watch=true&resourceVersion=0",
            "application/json",
        )
        .expect("watch");
    let event = watch.next_event(std::time::Duration::from_secs(10));
    assert_eq!(event["type"], "ADDED", "{event}");
    check_v1(&event["object"], "watch");
}

/// Defaults are published in the schemas' descriptions too, since `kubectl explain` (1.32
/// from OpenAPI v3, 1.20 from v2) prints descriptions but not `default`.
fn explain_shows_defaults(version: Version) {
    let (_server, kubectl) = start_with(version);
    for (args, expected) in [
        (
            &["webapps.spec.replicas"][..],
            "How many instances to run. Defaults to 1.",
        ),
        (
            &["webapps.spec.paused"],
            "Stop reconciling while true. Defaults to false.",
        ),
        (
            &["webapps.spec.container.ports.protocol"],
            "`TCP` or `UDP`. Defaults to \"TCP\".",
        ),
        (
            &[
                "webapps.spec.port",
                "--api-version=apps.example.dev/v1beta1",
            ],
            "Defaults to 8080.",
        ),
        (
            &[
                "webapps.spec.replicas",
                "--api-version=apps.example.dev/v1beta1",
            ],
            "How many instances to run. Defaults to 1.",
        ),
        (&["tenants.spec.quota.maxWebApps"], "Defaults to 10."),
    ] {
        let run = kubectl.ok(&[&["explain"], args].concat());
        // Descriptions are wrapped: compare words.
        let words = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        run.check(
            words.contains(expected),
            &format!(
                "`kubectl explain {}` should say {expected:?}",
                args.join(" ")
            ),
        );
    }
}

#[test]
fn kubectl_1_32_explain_shows_defaults() {
    explain_shows_defaults(Version::V1_32);
}

#[test]
fn kubectl_1_20_explain_shows_defaults() {
    explain_shows_defaults(Version::V1_20);
}

/// The kind's own cross-field rule (`Strategy::validate`: an image tagged `latest` runs at
/// most one replica) is reported at the image's path in the version the client wrote: v1's
/// `spec.container.image` (beside the validation rule on v1's spec, which refuses the tag
/// whatever the replicas), v1beta1's `spec.image`; on create and on update.
fn cross_field_rule_paths_are_in_the_request_version(version: Version) {
    let (_server, kubectl) = start_with(version);
    let message = |path: &str| {
        format!(
            "The WebApp \"web\" is invalid: {path}: Invalid value: \"nginx:latest\": an image \
             tagged `latest` may run only one replica: pin a version or a digest"
        )
    };
    let v1 = kubectl.write_file(
        "latest-v1.yaml",
        "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata:\n  name: web\n\
         spec:\n  replicas: 2\n  container:\n    image: nginx:latest\n",
    );
    // v1 also refuses the tag outright, by the validation rule on its spec, which the
    // schema checks report first.
    kubectl
        .fails(&["create", "-f", &v1])
        .stderr_has(
            "* spec.container.image: Invalid value: \"object\": the image must name a tag \
             other than latest",
        )
        .stderr_has(
            "* spec.container.image: Invalid value: \"nginx:latest\": an image tagged \
             `latest` may run only one replica: pin a version or a digest",
        );
    let beta = |replicas: u32| {
        format!(
            "apiVersion: apps.example.dev/v1beta1\nkind: WebApp\nmetadata:\n  name: web\n\
             spec:\n  replicas: {replicas}\n  image: nginx:latest\n"
        )
    };
    let two = kubectl.write_file("latest-v1beta1.yaml", &beta(2));
    kubectl
        .fails(&["create", "-f", &two])
        .stderr_has(&message("spec.image"));

    // An update through v1beta1: one replica is fine, two are not.
    let one = kubectl.write_file("latest-one.yaml", &beta(1));
    kubectl.ok(&["create", "-f", &one]);
    kubectl
        .fails(&["replace", "-f", &two])
        .stderr_has(&message("spec.image"));
    kubectl
        .fails(&["scale", "wa", "web", "--replicas=3"])
        .stderr_has("is invalid: ");
}

#[test]
fn kubectl_1_32_cross_field_rule_paths_are_in_the_request_version() {
    cross_field_rule_paths_are_in_the_request_version(Version::V1_32);
}

#[test]
fn kubectl_1_20_cross_field_rule_paths_are_in_the_request_version() {
    cross_field_rule_paths_are_in_the_request_version(Version::V1_20);
}

/// A port's name (`x-kapi-immutable`, inside the `ports` list-map) cannot change once set,
/// through replace or apply; ports are matched by their key, so reordering them or adding
/// one is fine.
#[test]
fn immutable_fields_inside_lists_cannot_change() {
    let (_server, kubectl) = start();
    let web = |ports: &str| {
        format!(
            "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata:\n  name: web\n\
             spec:\n  container:\n    image: nginx:1.27\n    ports:\n{ports}"
        )
    };
    let http = "    - {name: http, containerPort: 80}\n";
    let tls = "    - {name: tls, containerPort: 443}\n";
    let created = kubectl.write_file("named.yaml", &web(http));
    kubectl.ok(&["apply", "-f", &created]);
    let reordered = kubectl.write_file("reordered.yaml", &web(&format!("{tls}{http}")));
    kubectl.ok(&["apply", "-f", &reordered]);

    let renamed = web(&format!("{tls}    - {{name: web, containerPort: 80}}\n"));
    let renamed = kubectl.write_file("renamed.yaml", &renamed);
    let expected = "The WebApp \"web\" is invalid: spec.container.ports[1].name: Invalid value: \
                    \"web\": field is immutable";
    kubectl
        .fails(&["apply", "-f", &renamed])
        .stderr_has(expected);
    kubectl
        .fails(&["replace", "-f", &renamed])
        .stderr_has(expected);
    kubectl
        .fails(&[
            "patch",
            "wa",
            "web",
            "--type=json",
            "-p",
            r#"[{"op": "replace", "path": "/spec/container/ports/1/name", "value": "web"}]"#,
        ])
        .stderr_has(expected);
    // Through v1beta1, which cannot express port names, the v1 rule still holds: its port
    // maps onto the first port, whose name (tls) stays as it is.
    kubectl.ok(&[
        "patch",
        "webapps.v1beta1.apps.example.dev",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec": {"port": 8443}}"#,
    ]);
    let run = kubectl.ok(&["get", "wa", "web", "-o", "json"]);
    run.check(
        run.json()["spec"]["container"]["ports"][0]
            == serde_json::json!({"name": "tls", "containerPort": 8443, "protocol": "TCP"}),
        "a v1beta1 port change keeps the first port's name and protocol",
    );
    run.check(
        run.json()["spec"]["container"]["ports"][1]["name"] == "http",
        "the name stays http",
    );
}

/// `--dry-run=server` runs defaulting and validation but stores nothing.
#[test]
fn server_dry_runs_change_nothing() {
    let (_server, kubectl) = start();
    kubectl
        .ok(&["apply", "-f", &manifest("webapp.yaml"), "--dry-run=server"])
        .stdout_is("webapp.apps.example.dev/web created (server dry run)");
    kubectl
        .fails(&["get", "wa", "web"])
        .stderr_has("(NotFound)");

    kubectl.ok(&["apply", "-f", &manifest("webapp.yaml")]);
    let before = kubectl.ok(&["get", "wa", "web", "-o", "json"]).json();
    kubectl
        .ok(&[
            "apply",
            "-f",
            &manifest("webapp-updated.yaml"),
            "--dry-run=server",
        ])
        .stdout_is("webapp.apps.example.dev/web configured (server dry run)");
    let run = kubectl.ok(&["get", "wa", "web", "-o", "json"]);
    run.check(
        run.json() == before,
        "a server dry run should store nothing",
    );
}

/// Unknown fields are an error with kubectl's default flags (`fieldValidation=Strict`), in
/// a create and in the patch of an apply.
#[test]
fn unknown_fields_are_rejected() {
    let (_server, kubectl) = start();
    kubectl
        .fails(&["create", "-f", &manifest("webapp-unknown-field.yaml")])
        .stderr_has("Error from server (BadRequest): ")
        .stderr_has("unknown field \"spec.replica\"");
    kubectl.ok(&["create", "-f", &manifest("webapp.yaml")]);
    let typo = kubectl.write_file(
        "typo.yaml",
        "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata:\n  name: web\n\
         spec:\n  replica: 3\n  container:\n    image: nginx:1.25\n",
    );
    kubectl
        .fails(&["apply", "-f", &typo])
        .stderr_has("Error from server (BadRequest): ")
        .stderr_has("unknown field \"spec.replica\"");
}

/// Every kind and served version of the example API has a schema in the generated
/// documents; one missing is an error when the server starts, not when a request comes.
#[test]
fn schemas_compile_at_start_up() {
    use kapi::registry::Schemas;
    use kapi_generated::documents::SCHEMAS_V3;

    let scheme = kapi_generated::scheme();
    let schemas = Schemas::compiled_in(&scheme, SCHEMAS_V3).expect("every version has a schema");
    for (group, version, kind) in [
        ("apps.example.dev", "v1", "WebApp"),
        ("apps.example.dev", "v1beta1", "WebApp"),
        ("platform.example.dev", "v1", "Tenant"),
        ("", "v1", "ConfigMap"),
        ("", "v1", "Namespace"),
    ] {
        assert!(
            schemas.kind(group, version, kind).is_some(),
            "{group}/{version} {kind}"
        );
    }

    let without_core: Vec<_> = (SCHEMAS_V3.iter())
        .filter(|d| d.path != "api/v1")
        .copied()
        .collect();
    let error = Schemas::compiled_in(&scheme, &without_core).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("no OpenAPI v3 schema for v1 "),
        "{error}"
    );
}

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";

/// kube's note that a kind's validation rules were not run, after an error that blocks
/// them.
const NOT_CHECKED: (&str, &str, &str) = (
    "FieldValueInvalid",
    "<nil>",
    "Invalid value: \"null\": some validation rules were not checked because the object was \
     invalid; correct the existing errors to complete validation",
);

/// One `422 Invalid` Status names the object and carries one cause per field, with
/// kube-apiserver's cause reasons (what clients other than kubectl read), field paths and
/// messages.
#[test]
fn invalid_objects_get_one_cause_per_field() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let check = |path: &str, body: Value, details: Value, causes: &[(&str, &str, &str)]| {
        let response = client.post(path, &body).unwrap();
        let status = response.json();
        assert_eq!(
            (response.status, &status["reason"], &status["code"]),
            (422, &json!("Invalid"), &json!(422)),
            "{response:?}"
        );
        let mut expected = details.as_object().unwrap().clone();
        expected.insert(
            "causes".into(),
            causes
                .iter()
                .map(|(reason, field, message)| {
                    json!({"reason": reason, "field": field, "message": message})
                })
                .collect(),
        );
        assert_eq!(status["details"], Value::Object(expected), "{status:#}");
    };

    check(
        WEBAPPS,
        json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp", "metadata": {"name": "web"},
            "spec": {"replicas": -1, "container": {"ports": [
                {"containerPort": 80}, {"containerPort": 80}, {"containerPort": 81, "protocol": "SCTP"}]}}}),
        json!({"name": "web", "group": "apps.example.dev", "kind": "WebApp"}),
        &[
            (
                "FieldValueInvalid",
                "spec.replicas",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "FieldValueRequired",
                "spec.container.image",
                "Required value",
            ),
            (
                "FieldValueNotSupported",
                "spec.container.ports[2].protocol",
                "Unsupported value: \"SCTP\": supported values: \"TCP\", \"UDP\"",
            ),
            // List-map keys are checked after the schema, as kube-apiserver does.
            (
                "FieldValueDuplicate",
                "spec.container.ports[1]",
                "Duplicate value: map[string]interface {}{\"containerPort\":80}",
            ),
            NOT_CHECKED,
        ],
    );
    check(
        "/apis/platform.example.dev/v1/tenants",
        json!({"apiVersion": "platform.example.dev/v1", "kind": "Tenant", "metadata": {"name": "acme"},
            "spec": {"displayName": "x".repeat(64),
                     "owners": (0..11).map(|i| format!("u{i}@example.dev")).collect::<Vec<_>>()}}),
        json!({"name": "acme", "group": "platform.example.dev", "kind": "Tenant"}),
        &[
            (
                "FieldValueTooLong",
                "spec.displayName",
                "Too long: may not be more than 63 bytes",
            ),
            (
                "FieldValueTooMany",
                "spec.owners",
                "Too many: 11: must have at most 10 items",
            ),
            NOT_CHECKED,
        ],
    );
}

/// A v1 WebApp body that repeats `spec.replicas` (the last, `replicas`, wins) and has an
/// unknown field `spec.bogus`: what no `Value`, and so no kubectl, can send.
fn repeating_body(name: &str, resource_version: Option<&str>, replicas: u32) -> String {
    let version =
        resource_version.map_or(String::new(), |rv| format!(",\"resourceVersion\":\"{rv}\""));
    format!(
        r#"{{"apiVersion":"apps.example.dev/v1","kind":"WebApp","metadata":{{"name":"{name}"{version}}},"spec":{{"replicas":1,"replicas":{replicas},"bogus":true,"container":{{"image":"nginx:1.27"}}}}}}"#
    )
}

/// A merge patch that repeats `spec.replicas` and has an unknown field.
fn repeating_patch(replicas: u32) -> String {
    format!(r#"{{"spec":{{"replicas":1,"replicas":{replicas},"bogus":true}}}}"#)
}

const MERGE_PATCH: &str = "application/merge-patch+json";

fn get_webapp(client: &Client, name: &str) -> Response {
    client.get(&format!("{WEBAPPS}/{name}")).unwrap()
}

/// `fieldValidation` on create, update and (merge) patch, with raw HTTP: `Strict` fails with
/// one 400 listing the repeated and the unknown field, `Warn` (also the default) succeeds
/// with one `Warning` header each, `Ignore` succeeds silently; the last of a repeated field
/// wins.
#[test]
fn field_validation_on_create_update_and_patch() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let strict = "WebApp in version \"v1\" cannot be handled as a WebApp: strict decoding \
                  error: duplicate field \"spec.replicas\", unknown field \"spec.bogus\"";
    let warnings = [
        r#"299 - "duplicate field \"spec.replicas\"""#,
        r#"299 - "unknown field \"spec.bogus\"""#,
    ];
    for (mode, query) in [
        ("strict", "?fieldValidation=Strict"),
        ("warn", "?fieldValidation=Warn"),
        ("default", ""),
        ("ignore", "?fieldValidation=Ignore"),
    ] {
        let name = format!("web-{mode}");
        let check = |op: &str, response: &Response, ok: u16, replicas: u32| {
            let context = format!("{op} with {mode:?}: {response:?}");
            match mode {
                "strict" => {
                    assert_eq!(response.status, 400, "{context}");
                    assert_eq!(response.json()["message"], strict, "{context}");
                    assert_eq!(response.json()["reason"], "BadRequest", "{context}");
                }
                _ => {
                    assert_eq!(response.status, ok, "{context}");
                    assert_eq!(response.json()["spec"]["replicas"], replicas, "{context}");
                    assert_eq!(response.json()["spec"].get("bogus"), None, "{context}");
                    let expected: &[&str] = if mode == "ignore" { &[] } else { &warnings };
                    assert_eq!(response.warnings, expected, "{context}");
                }
            }
        };

        let created = client
            .send_raw(
                "POST",
                &format!("{WEBAPPS}{query}"),
                "application/json",
                &repeating_body(&name, None, 3),
            )
            .unwrap();
        check("create", &created, 201, 3);
        if mode == "strict" {
            assert_eq!(get_webapp(&client, &name).status, 404, "nothing created");
            let plain = json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
                "metadata": {"name": name}, "spec": {"replicas": 3, "container": {"image": "nginx:1.27"}}});
            assert_eq!(client.post(WEBAPPS, &plain).unwrap().status, 201);
        }
        let before = get_webapp(&client, &name).json();
        let rv = before["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned();

        let path = format!("{WEBAPPS}/{name}{query}");
        let updated = client
            .send_raw(
                "PUT",
                &path,
                "application/json",
                &repeating_body(&name, Some(&rv), 4),
            )
            .unwrap();
        check("update", &updated, 200, 4);
        let patched = client
            .send_raw("PATCH", &path, MERGE_PATCH, &repeating_patch(5))
            .unwrap();
        check("patch", &patched, 200, 5);
        if mode == "strict" {
            assert_eq!(
                get_webapp(&client, &name).json(),
                before,
                "a strict failure changes nothing"
            );
        }
    }
}

/// A JSON patch (RFC 6902) that adds an unknown field is judged on the patched object, as
/// kube does: 400 under `Strict`, a warning under `Warn`, nothing stored either way.
#[test]
fn field_validation_of_json_patches() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let web = json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp", "metadata": {"name": "web"},
        "spec": {"container": {"image": "nginx:1.27"}}});
    assert_eq!(client.post(WEBAPPS, &web).unwrap().status, 201);
    let before = get_webapp(&client, "web").json();
    let patch = r#"[{"op": "add", "path": "/spec/bogus", "value": true}]"#;
    let path = format!("{WEBAPPS}/web");
    let strict = client
        .send_raw(
            "PATCH",
            &format!("{path}?fieldValidation=Strict"),
            "application/json-patch+json",
            patch,
        )
        .unwrap();
    assert_eq!(strict.status, 400, "{strict:?}");
    assert_eq!(
        strict.json()["message"],
        "WebApp in version \"v1\" cannot be handled as a WebApp: strict decoding error: \
         unknown field \"spec.bogus\"",
        "{strict:?}"
    );
    let warn = client
        .send_raw("PATCH", &path, "application/json-patch+json", patch)
        .unwrap();
    assert_eq!(warn.status, 200, "{warn:?}");
    assert_eq!(
        warn.warnings,
        [r#"299 - "unknown field \"spec.bogus\"""#],
        "{warn:?}"
    );
    let after = get_webapp(&client, "web").json();
    assert_eq!(
        after["spec"], before["spec"],
        "the unknown field is dropped"
    );
}

/// `dryRun=All` runs the whole pipeline (defaulting, validation, conversion) and answers
/// with the object as it would be, on create, update and patch; nothing is stored.
#[test]
fn dry_run_on_create_update_and_patch_stores_nothing() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let web = |replicas: Value| {
        json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "container": {"image": "nginx:1.27", "ports": [{"containerPort": 80}]}}})
    };
    let dry = format!("{WEBAPPS}?dryRun=All");
    let created = client.post(&dry, &web(json!(2))).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let object = created.json();
    assert_eq!(
        object["spec"]["container"]["ports"][0]["protocol"], "TCP",
        "defaulted"
    );
    assert_eq!(object["metadata"]["name"], "web");
    assert_eq!(
        get_webapp(&client, "web").status,
        404,
        "a dry-run create stores nothing"
    );
    let invalid = client.post(&dry, &web(json!(-1))).unwrap();
    assert_eq!(invalid.status, 422, "a dry run validates: {invalid:?}");

    assert_eq!(client.post(WEBAPPS, &web(json!(2))).unwrap().status, 201);
    let before = get_webapp(&client, "web").json();
    let mut changed = before.clone();
    changed["spec"]["replicas"] = json!(7);
    let dry = format!("{WEBAPPS}/web?dryRun=All");
    let updated = client.put(&dry, &changed).unwrap();
    assert_eq!(
        (updated.status, &updated.json()["spec"]["replicas"]),
        (200, &json!(7)),
        "{updated:?}"
    );
    let patched = client
        .send_raw("PATCH", &dry, MERGE_PATCH, r#"{"spec":{"replicas":8}}"#)
        .unwrap();
    assert_eq!(
        (patched.status, &patched.json()["spec"]["replicas"]),
        (200, &json!(8)),
        "{patched:?}"
    );
    let beta = client
        .send_raw(
            "PATCH",
            "/apis/apps.example.dev/v1beta1/namespaces/default/webapps/web?dryRun=All",
            MERGE_PATCH,
            r#"{"spec":{"image":"nginx:1.28"}}"#,
        )
        .unwrap();
    assert_eq!(
        (beta.status, &beta.json()["spec"]["image"]),
        (200, &json!("nginx:1.28")),
        "{beta:?}"
    );
    assert_eq!(
        get_webapp(&client, "web").json(),
        before,
        "dry runs store nothing"
    );
}
