//! Validation rules written on compiled kinds (`#[kapi::rules]`), against the real
//! `kapi-server`: WebApp v1 refuses an image tagged `latest` (a rule on its spec with a
//! field path) through kubectl 1.32 and 1.20, on the embedded store and on etcd; a Tenant's
//! `displayName` cannot change once set (a transition rule); both rules are in
//! `/openapi/v2` and `/openapi/v3` where kube puts them, which `kubectl explain` reads; and
//! a program judging a WebApp with the generated `validator()`, with no server, gets the
//! `Status` the server answers. (The Python client's view is `python/validation.py`.)

use crate::support;

use serde_json::{Value, json};
use support::{Backend, Kubectl, Server, Version, on_both_backends};

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";
const TENANTS: &str = "/apis/platform.example.dev/v1/tenants";
/// The rule's refusal, as kubectl prints kube's 422.
const LATEST_REFUSED: &str = "The WebApp \"web\" is invalid: spec.container.image: Invalid \
                              value: \"object\": the image must name a tag other than latest";

on_both_backends! {
    webapps_tagged_latest_are_refused_through_kubectl => images_tagged_latest_are_refused();
}

fn webapp(image: &str) -> String {
    format!(
        "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata:\n  name: web\n\
         spec:\n  container:\n    image: {image}\n"
    )
}

fn images_tagged_latest_are_refused(backend: Backend) {
    let server = Server::start_on(backend);
    for version in [Version::V1_32, Version::V1_20] {
        let kubectl = Kubectl::new(version, &server);
        let latest = kubectl.write_file("latest.yaml", &webapp("nginx:latest"));
        kubectl
            .fails(&["create", "-f", &latest])
            .stderr_has(LATEST_REFUSED);
        kubectl
            .fails(&["apply", "-f", &latest])
            .stderr_has(LATEST_REFUSED);
    }
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let pinned = kubectl.write_file("pinned.yaml", &webapp("nginx:1.27"));
    kubectl.ok(&["create", "-f", &pinned]);
    // An update is judged too: a merge patch, a server-side apply.
    let patch = r#"{"spec":{"container":{"image":"nginx:latest"}}}"#;
    kubectl
        .fails(&["patch", "webapp", "web", "--type", "merge", "-p", patch])
        .stderr_has(LATEST_REFUSED);
    let latest = kubectl.write_file("latest.yaml", &webapp("nginx:latest"));
    kubectl
        .fails(&["apply", "--server-side", "--force-conflicts", "-f", &latest])
        .stderr_has(LATEST_REFUSED);
    let image = kubectl.ok(&[
        "get",
        "webapp",
        "web",
        "-o",
        "jsonpath={.spec.container.image}",
    ]);
    assert_eq!(image.stdout, "nginx:1.27");
    // The rule is v1's: v1beta1 has none.
    let beta = "apiVersion: apps.example.dev/v1beta1\nkind: WebApp\nmetadata:\n  name: beta\n\
                spec:\n  image: nginx:latest\n";
    let beta = kubectl.write_file("beta.yaml", beta);
    kubectl.ok(&["create", "-f", &beta]);
}

/// A Tenant's `displayName` may be set once, then never changed (kube's transition rule:
/// `oldSelf` is the value before the update).
#[test]
fn a_tenants_display_name_cannot_change_once_set() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let tenant = |name: &str, display: &str| {
        format!(
            "apiVersion: platform.example.dev/v1\nkind: Tenant\nmetadata:\n  name: {name}\n\
             spec:\n  displayName: {display:?}\n"
        )
    };
    let acme = kubectl.write_file("acme.yaml", &tenant("acme", "Acme"));
    kubectl.ok(&["create", "-f", &acme]);
    let immutable = "The Tenant \"acme\" is invalid: spec.displayName: Invalid value: \
                     \"string\": displayName is immutable";
    kubectl
        .fails(&[
            "patch",
            "tenant",
            "acme",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"displayName":"Other"}}"#,
        ])
        .stderr_has(immutable);
    let other = kubectl.write_file("other.yaml", &tenant("acme", "Other"));
    kubectl
        .fails(&["apply", "--server-side", "--force-conflicts", "-f", &other])
        .stderr_has(immutable);
    // Kubectl 1.20 reads the same refusal.
    Kubectl::new(Version::V1_20, &server)
        .fails(&["replace", "-f", &other])
        .stderr_has(immutable);
    // Other fields still change, and an unset name may be set.
    kubectl.ok(&[
        "patch",
        "tenant",
        "acme",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"owners":["ann"]}}"#,
    ]);
    let blank = kubectl.write_file("blank.yaml", &tenant("blank", ""));
    kubectl.ok(&["create", "-f", &blank]);
    kubectl.ok(&[
        "patch",
        "tenant",
        "blank",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"displayName":"Blank"}}"#,
    ]);
    let shown = kubectl.ok(&[
        "get",
        "tenants",
        "-o",
        "jsonpath={.items[*].spec.displayName}",
    ]);
    assert_eq!(shown.stdout, "Acme Blank");
}

/// Both rules are published as kube publishes a definition's: on the schema they sit on,
/// in the documents kubectl reads (`kubectl explain` too, which prints no rules itself).
#[test]
fn the_rules_are_in_the_openapi_documents() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let spec_rules = json!([{
        "rule": "!self.container.image.endsWith(':latest')",
        "message": "the image must name a tag other than latest",
        "fieldPath": ".container.image",
    }]);
    let name_rules = json!([{"rule": "oldSelf == '' || self == oldSelf", "message": "displayName is immutable"}]);
    let raw = |path: &str| -> Value {
        serde_json::from_str(&kubectl.ok(&["get", "--raw", path]).stdout).unwrap()
    };

    let v2 = raw("/openapi/v2");
    let definitions = &v2["definitions"];
    assert_eq!(
        definitions["dev.example.apps.v1.WebAppSpec"]["x-kubernetes-validations"],
        spec_rules
    );
    let tenant_spec = &definitions["dev.example.platform.v1.TenantSpec"];
    assert_eq!(
        tenant_spec["properties"]["displayName"]["x-kubernetes-validations"],
        name_rules
    );
    // Where they are written is for `cargo xtask generate` alone.
    assert!(!v2.to_string().contains("x-kapi-source"));

    let v3 = raw("/openapi/v3/apis/apps.example.dev/v1");
    let schemas = &v3["components"]["schemas"];
    assert_eq!(
        schemas["dev.example.apps.v1.WebAppSpec"]["x-kubernetes-validations"],
        spec_rules
    );
    let v3 = raw("/openapi/v3/apis/platform.example.dev/v1");
    let tenant_spec = &v3["components"]["schemas"]["dev.example.platform.v1.TenantSpec"];
    assert_eq!(
        tenant_spec["properties"]["displayName"]["x-kubernetes-validations"],
        name_rules
    );

    for version in [Version::V1_32, Version::V1_20] {
        Kubectl::new(version, &server)
            .ok(&["explain", "webapps.spec.container.image"])
            .stdout_has("Container image reference.");
        Kubectl::new(version, &server)
            .ok(&["explain", "tenants.spec.displayName"])
            .stdout_has("Once set, it cannot change.");
    }
}

/// A program validates a WebApp with the generated `validator()` (no server) and gets the
/// `Status` the server answers for the same object; a valid one passes both.
#[test]
fn the_generated_validator_answers_as_the_server() {
    use api_types::apps::v1;

    let server = Server::start();
    let client = server.client();
    let web = |name: &str, image: &str| v1::WebApp {
        metadata: kapi::meta::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: v1::WebAppSpec {
            replicas: 1,
            container: v1::Container {
                image: image.into(),
                ..Default::default()
            },
            paused: false,
        },
        status: None,
    };
    let validator = kapi_generated::validator();
    let sent = |object: &v1::WebApp| {
        let mut body = serde_json::to_value(object).unwrap();
        body["apiVersion"] = json!("apps.example.dev/v1");
        body["kind"] = json!("WebApp");
        client.post(WEBAPPS, &body).unwrap()
    };

    let latest = web("latest", "nginx:latest");
    let offline = validator.create(&latest).expect_err("the rule refuses it");
    let answered = sent(&latest);
    assert_eq!(answered.status, 422);
    let offline = serde_json::to_value(offline.to_status()).unwrap();
    assert_eq!(offline, answered.json());
    assert_eq!(
        offline["details"]["causes"],
        json!([{"reason": "FieldValueInvalid", "field": "spec.container.image",
                "message": "Invalid value: \"object\": the image must name a tag other than latest"}])
    );

    // Schema checks and rules together, in the server's order.
    let mut worse = web("worse", "nginx:latest");
    worse.spec.replicas = -1;
    let offline = serde_json::to_value(validator.create(&worse).unwrap_err().to_status()).unwrap();
    assert_eq!(offline, sent(&worse).json());

    let pinned = web("pinned", "nginx:1.27");
    assert_eq!(validator.create(&pinned).unwrap(), Vec::<String>::new());
    assert_eq!(sent(&pinned).status, 201);

    // A transition rule needs the old object: `update`.
    let tenant = |display: &str| {
        json!({"apiVersion": "platform.example.dev/v1", "kind": "Tenant",
               "metadata": {"name": "acme"}, "spec": {"displayName": display}})
    };
    assert_eq!(client.post(TENANTS, &tenant("Acme")).unwrap().status, 201);
    let offline = validator
        .json(&tenant("Other"), Some(&tenant("Acme")))
        .unwrap_err();
    let mut changed = client.get(&format!("{TENANTS}/acme")).unwrap().json();
    changed["spec"]["displayName"] = json!("Other");
    let answered = client.put(&format!("{TENANTS}/acme"), &changed).unwrap();
    assert_eq!(
        serde_json::to_value(offline.to_status()).unwrap(),
        answered.json()
    );
}

/// The kinds exported as CustomResourceDefinitions (`generated/crds/`) carry their rules
/// where a definition holds them, and pass kube's definition checks as kapi runs them
/// (structure, defaults, rules' compilation and costs): a dry-run create is accepted.
#[test]
fn the_exported_definitions_carry_the_rules_and_pass_kubes_checks() {
    let server = Server::start();
    let client = server.client();
    let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/crds");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&directory).unwrap() {
        let path = entry.unwrap().path();
        let definition: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let answer = client
            .post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All",
                &definition,
            )
            .unwrap();
        assert_eq!(answer.status, 201, "{}: {}", path.display(), answer.body);
        names.push(definition["metadata"]["name"].as_str().unwrap().to_owned());
        assert!(
            !definition.to_string().contains("x-kapi-"),
            "{}",
            path.display()
        );
        let schema = |version: usize| {
            definition["spec"]["versions"][version]["schema"]["openAPIV3Schema"].clone()
        };
        match names.last().unwrap().as_str() {
            "webapps.apps.example.dev" => {
                let v1 = (0..2)
                    .map(schema)
                    .find(|s| {
                        s["properties"]["spec"]["properties"]
                            .get("container")
                            .is_some()
                    })
                    .unwrap();
                assert_eq!(
                    v1["properties"]["spec"]["x-kubernetes-validations"][0]["rule"],
                    "!self.container.image.endsWith(':latest')"
                );
            }
            "tenants.platform.example.dev" => assert_eq!(
                schema(0)["properties"]["spec"]["properties"]["displayName"]["x-kubernetes-validations"]
                    [0]["message"],
                "displayName is immutable"
            ),
            other => panic!("unexpected definition {other}"),
        }
    }
    names.sort();
    assert_eq!(
        names,
        ["tenants.platform.example.dev", "webapps.apps.example.dev"]
    );
}
