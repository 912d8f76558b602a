//! `--feature-gates` and kube's beta APIs off by default: admissionregistration.k8s.io/v1beta1
//! is not served without `--runtime-config` turning it on, and its MutatingAdmissionPolicies
//! only with the `MutatingAdmissionPolicy` gate on too, as kube-apiserver 1.34 serves them; a
//! gate the server does not know is a start-up error with kube's message.

use crate::support;

use serde_json::Value;
use support::{Kubectl, Server, Version};

const GROUP: &str = "/apis/admissionregistration.k8s.io";

/// The versions the group's discovery document lists.
fn versions(server: &Server) -> Vec<String> {
    let group = server.client().get(GROUP).unwrap().json();
    (group["versions"].as_array().unwrap().iter())
        .map(|v| v["version"].as_str().unwrap().to_owned())
        .collect()
}

/// The status of `GET path`.
fn status(server: &Server, path: &str) -> u16 {
    match server.client().get(path) {
        Ok(response) => response.status,
        Err(ureq::Error::StatusCode(code)) => code,
        Err(e) => panic!("GET {path}: {e}"),
    }
}

/// Whether the OpenAPI documents describe the group's v1beta1: in the v3 index, and in v2.
fn described(server: &Server) -> (bool, bool) {
    let index = server.client().get("/openapi/v3").unwrap().json();
    let v3 = (index["paths"].as_object().unwrap())
        .contains_key("apis/admissionregistration.k8s.io/v1beta1");
    let v2 = server.client().get("/openapi/v2").unwrap().json();
    let v2 = (v2["definitions"].as_object().unwrap())
        .contains_key("io.k8s.api.admissionregistration.v1beta1.MutatingAdmissionPolicy");
    (v3, v2)
}

/// What `kubectl api-resources` lists of the group.
fn api_resources(server: &Server) -> String {
    let kubectl = Kubectl::new(Version::V1_32, server);
    let args = [
        "api-resources",
        "--api-group=admissionregistration.k8s.io",
        "-o",
        "name",
    ];
    kubectl.ok(&args).stdout.clone()
}

#[test]
fn v1beta1_is_off_by_default() {
    let server = Server::start();
    assert_eq!(versions(&server), ["v1"]);
    assert_eq!(status(&server, &format!("{GROUP}/v1beta1")), 404);
    // The documents are the generated ones, which describe what is served by default.
    assert_eq!(described(&server), (false, false));
    assert_eq!(
        status(
            &server,
            "/openapi/v3/apis/admissionregistration.k8s.io/v1beta1"
        ),
        404
    );
    assert_eq!(
        status(
            &server,
            &format!("{GROUP}/v1beta1/mutatingadmissionpolicies")
        ),
        404
    );
    let resources = api_resources(&server);
    assert!(
        resources.contains("validatingadmissionpolicies"),
        "{resources}"
    );
    assert!(
        !resources.contains("mutatingadmissionpolicies"),
        "{resources}"
    );
}

#[test]
fn the_gate_and_the_version_on_serve_mutating_admission_policies() {
    let server = Server::start_with(&[
        "--feature-gates=MutatingAdmissionPolicy=true",
        "--runtime-config=admissionregistration.k8s.io/v1beta1=true",
    ]);
    assert_eq!(versions(&server), ["v1", "v1beta1"]);
    // Rendered for what is served, the schemas of the kinds off by default included.
    assert_eq!(described(&server), (true, true));
    let document = server
        .client()
        .get("/openapi/v3/apis/admissionregistration.k8s.io/v1beta1")
        .unwrap()
        .json();
    assert!(
        document["components"]["schemas"]
            ["io.k8s.api.admissionregistration.v1beta1.MutatingAdmissionPolicy"]
            .is_object()
    );
    let v1beta1: Value = server
        .client()
        .get(&format!("{GROUP}/v1beta1"))
        .unwrap()
        .json();
    let names: Vec<&str> = (v1beta1["resources"].as_array().unwrap().iter())
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"mutatingadmissionpolicies"), "{names:?}");
    assert!(
        names.contains(&"mutatingadmissionpolicybindings"),
        "{names:?}"
    );
    assert_eq!(
        status(
            &server,
            &format!("{GROUP}/v1beta1/mutatingadmissionpolicies")
        ),
        200
    );
    let resources = api_resources(&server);
    for name in [
        "mutatingadmissionpolicies.admissionregistration.k8s.io",
        "mutatingadmissionpolicybindings.admissionregistration.k8s.io",
    ] {
        assert!(resources.lines().any(|r| r == name), "{resources}");
    }
}

#[test]
fn the_version_without_the_gate_serves_no_mutating_admission_policies() {
    let server =
        Server::start_with(&["--runtime-config=admissionregistration.k8s.io/v1beta1=true"]);
    assert!(!versions(&server).contains(&"v1beta1".to_owned()));
    assert_eq!(
        status(
            &server,
            &format!("{GROUP}/v1beta1/mutatingadmissionpolicies")
        ),
        404
    );
    // The gate without the version serves none either.
    let server = Server::start_with(&["--feature-gates=MutatingAdmissionPolicy=true"]);
    assert_eq!(versions(&server), ["v1"]);
    assert_eq!(described(&server), (false, false));
}

#[test]
fn gates_kube_refuses_are_start_up_errors() {
    for (gates, message) in [
        (
            "Nope=true",
            "--feature-gates: unrecognized feature gate: Nope",
        ),
        // Gone from kube before 1.34.
        (
            "ValidatingAdmissionPolicy=true",
            "--feature-gates: unrecognized feature gate: ValidatingAdmissionPolicy",
        ),
        (
            "APIServerTracing=false",
            "cannot set feature gate APIServerTracing to false, feature is locked to true",
        ),
        (
            "MutatingAdmissionPolicy=maybe",
            "invalid value of MutatingAdmissionPolicy=maybe, err: strconv.ParseBool: parsing \
             \"maybe\": invalid syntax",
        ),
    ] {
        let (code, stderr) = support::start_refused(&[&format!("--feature-gates={gates}")]);
        assert_eq!(code, Some(2), "{gates}: {stderr}");
        assert!(stderr.contains(message), "{gates}: {stderr}");
    }
}

/// kube 1.34's other gates are accepted as kube accepts them, with kube's warning of a GA
/// gate set and kapi's of a gate it does not act on set off its default.
#[test]
fn kubes_other_gates_are_accepted_and_warned_of() {
    let server = Server::start_with(&[
        "--feature-gates=APIServerTracing=true,APIResponseCompression=false",
        "--feature-gates=MutatingAdmissionPolicy=true",
        "--runtime-config=admissionregistration.k8s.io/v1beta1=true",
    ]);
    assert_eq!(versions(&server), ["v1", "v1beta1"]);
    let log = server.log();
    let warned = [
        "Setting GA feature gate APIServerTracing=true. It will be removed in a future release.",
        "kapi does not implement feature gate APIResponseCompression: setting it to false \
         changes nothing",
    ];
    support::wait_for(
        std::time::Duration::from_secs(10),
        "the warnings in the server's log",
        || log.tail(40),
        || {
            let text = log.tail(400);
            warned.iter().all(|w| text.contains(w)).then_some(())
        },
    );
}
