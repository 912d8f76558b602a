//! `--runtime-config` (kube's API enablement): group-versions switched off at start have no
//! routes and are in neither discovery nor the OpenAPI documents, so kubectl 1.32 does not
//! see them while the rest is served as before; `api/all=false` with a group switched back
//! on serves the core group and that group; what kapi cannot switch off (the core group,
//! one version of a kind served in two) and what the server does not serve are start-up
//! errors that say so.

use crate::support;

use serde_json::Value;
use support::{Kubectl, Server, Version};

/// The groups `/apis` lists.
fn groups(server: &Server) -> Vec<String> {
    let apis = server.client().get("/apis").unwrap().json();
    (apis["groups"].as_array().unwrap().iter())
        .map(|g| g["name"].as_str().unwrap().to_owned())
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

#[test]
fn switched_off_group_versions_are_not_served_anywhere() {
    let server = Server::start_with(&[
        "--runtime-config=rbac.authorization.k8s.io/v1=false,apiextensions.k8s.io/v1=false",
    ]);
    let groups = groups(&server);
    for off in ["rbac.authorization.k8s.io", "apiextensions.k8s.io"] {
        assert!(!groups.iter().any(|g| g == off), "{off} in {groups:?}");
    }
    for on in [
        "apps.example.dev",
        "platform.example.dev",
        "coordination.k8s.io",
    ] {
        assert!(groups.iter().any(|g| g == on), "{on} not in {groups:?}");
    }
    for path in [
        "/apis/rbac.authorization.k8s.io",
        "/apis/rbac.authorization.k8s.io/v1",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "/openapi/v3/apis/rbac.authorization.k8s.io/v1",
    ] {
        assert_eq!(status(&server, path), 404, "{path}");
    }
    let v3 = server.client().get("/openapi/v3").unwrap().json();
    let paths: Vec<&String> = v3["paths"].as_object().unwrap().keys().collect();
    assert!(
        paths.iter().any(|p| *p == "apis/apps.example.dev/v1"),
        "{paths:?}"
    );
    assert!(
        !paths
            .iter()
            .any(|p| p.contains("rbac") || p.contains("apiextensions")),
        "{paths:?}"
    );
    let v2 = server.client().get("/openapi/v2").unwrap().json();
    let definitions: Vec<&String> = v2["definitions"].as_object().unwrap().keys().collect();
    assert!(
        !definitions.iter().any(|d| d.contains(".rbac.")),
        "{definitions:?}"
    );

    // kubectl sees the rest, and only the rest.
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let resources = kubectl.ok(&["api-resources", "-o", "name"]).stdout.clone();
    assert!(
        resources.lines().any(|r| r == "webapps.apps.example.dev"),
        "{resources}"
    );
    assert!(!resources.contains("clusterroles"), "{resources}");
    kubectl.ok(&["create", "namespace", "team-a"]);
    kubectl.ok(&["get", "webapps", "-A"]);
    let denied = kubectl.fails(&["get", "clusterroles"]);
    assert!(
        denied
            .stderr
            .contains("the server doesn't have a resource type \"clusterroles\""),
        "{}",
        denied.stderr
    );
}

#[test]
fn api_all_false_serves_the_core_group_and_the_groups_switched_back_on() {
    let server = Server::start_with(&[
        "--runtime-config=api/all=false,apps.example.dev/v1=true,apps.example.dev/v1beta1=true",
    ]);
    assert_eq!(groups(&server), ["apps.example.dev"]);
    let core: Value = server.client().get("/api/v1").unwrap().json();
    let names: Vec<&str> = (core["resources"].as_array().unwrap().iter())
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"namespaces"), "{names:?}");
    let list = server
        .client()
        .get("/apis/apps.example.dev/v1/webapps")
        .unwrap();
    assert_eq!(list.status, 200);
    assert_eq!(status(&server, "/apis/coordination.k8s.io/v1/leases"), 404);
}

#[test]
fn what_cannot_be_switched_off_is_a_start_up_error() {
    let run = |config: &str| support::start_refused(&[&format!("--runtime-config={config}")]);
    for (config, code, message) in [
        (
            "api/v1=false",
            2,
            "\"api/v1=false\": the core group is always served",
        ),
        ("api/legacy=false", 2, "the core group is always served"),
        (
            "apps.example.dev/v1=maybe",
            2,
            "the value must be true or false",
        ),
        (
            "apps.example.dev=false",
            2,
            "a key is <group>/<version>, api/all",
        ),
        (
            "apps.example.dev/v1beta1=false",
            2,
            "--runtime-config serves WebApp (apps.example.dev) in v1 but not in v1beta1; kapi \
             switches a kind's versions on and off together",
        ),
        (
            "api/beta=false",
            2,
            "--runtime-config serves WebApp (apps.example.dev) in v1 but not in v1beta1",
        ),
        (
            "widgets.example.com/v1=false",
            2,
            "--runtime-config: widgets.example.com/v1 is not an API of this server",
        ),
    ] {
        let (status, stderr) = run(config);
        assert_eq!(status, Some(code), "{config}: {stderr}");
        assert!(stderr.contains(message), "{config}: {stderr}");
    }
}

#[test]
fn a_switched_off_kind_keeps_its_names_from_definitions() {
    use support::crontabs::{DEFINITIONS, crontab_definition, names_refused};

    let server = Server::start_with(&["--runtime-config=platform.example.dev/v1=false"]);
    let client = server.client();
    // A definition wanting the switched-off Tenants' plural: its objects are Tenants,
    // stored under the same keys, so it is not accepted.
    let mut tenants = crontab_definition();
    tenants["metadata"]["name"] = serde_json::json!("tenants.platform.example.dev");
    tenants["spec"]["group"] = serde_json::json!("platform.example.dev");
    tenants["spec"]["names"] = serde_json::json!({"plural": "tenants", "kind": "Renter"});
    let created = client.post(DEFINITIONS, &tenants).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let refused = names_refused(&client, "tenants.platform.example.dev");
    assert_eq!(refused["reason"], "PluralConflict", "{refused}");
    assert_eq!(
        status(&server, "/apis/platform.example.dev/v1/tenants"),
        404
    );
}
