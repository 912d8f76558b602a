//! Gateway API v1.3.0 on the real `kapi-server` with kubectl 1.32 (`manifests/gateway-api`):
//! its CustomResourceDefinitions, full of validation rules, install; every object of its
//! standard examples is accepted; every one of its invalid examples, which its CI expects
//! an API server to refuse, is refused.

use crate::support;

use std::path::Path;
use std::time::Duration;

use support::crontabs::wait_established;
use support::{Kubectl, Server, Version, wait_for};

/// The directory of the Gateway API test data.
fn data() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/manifests/gateway-api"
    ))
}

#[test]
fn gateway_api_crds_install_and_judge_the_projects_examples() {
    let server = Server::start();
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let crds = data().join("crds.yaml");
    // Server-side: the HTTPRoute definition is too large for the annotation client-side
    // apply keeps, as on a kube-apiserver.
    kubectl.ok(&["apply", "--server-side", "-f", crds.to_str().unwrap()]);
    for plural in [
        "gatewayclasses",
        "gateways",
        "grpcroutes",
        "httproutes",
        "referencegrants",
    ] {
        wait_established(&client, &format!("{plural}.gateway.networking.k8s.io"));
    }
    for namespace in [
        "bar",
        "foo",
        "gateway-api-example-ns1",
        "gateway-api-example-ns2",
        "infra-ns",
        "site-ns",
        "store-ns",
    ] {
        kubectl.ok(&["create", "namespace", namespace]);
    }
    // The examples: several files declare the same object, so they are applied.
    let valid = data().join("valid.yaml");
    wait_for(
        Duration::from_secs(10),
        "the examples to be accepted",
        || "refused".to_owned(),
        || {
            let run = kubectl.run(&[
                "apply",
                "--server-side",
                "--force-conflicts",
                "-f",
                valid.to_str().unwrap(),
            ]);
            run.succeeded().then_some(run)
        },
    );

    let mut accepted = Vec::new();
    let mut invalid: Vec<_> = std::fs::read_dir(data().join("invalid"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    invalid.sort();
    for path in &invalid {
        let run = kubectl.run(&["create", "-n", "default", "-f", path.to_str().unwrap()]);
        if run.succeeded() {
            accepted.push(path.file_name().unwrap().to_string_lossy().into_owned());
        } else {
            assert!(
                run.stderr.contains("is invalid"),
                "{}: {}",
                path.display(),
                run.stderr
            );
        }
    }
    assert!(
        accepted.is_empty(),
        "invalid examples accepted: {accepted:#?}"
    );
}
