//! Discovery documents of the fixture API, compared with what kube-apiserver serves for
//! an API of that shape (field names, key order, omitted empty fields, sort order).

mod glue_fixture;

use glue_fixture::{CONFIG_MAP, KINDS, TENANT, WEB_APP, model};
use kapi_codegen::discovery;
use serde_json::{Value, json};

/// Compares as pretty JSON, so a failure shows both documents and key order counts.
fn check(actual: Value, expected: Value) {
    let actual = serde_json::to_string_pretty(&actual).unwrap();
    let expected = serde_json::to_string_pretty(&expected).unwrap();
    assert!(
        actual == expected,
        "actual:\n{actual}\nexpected:\n{expected}"
    );
}

/// The one document at `path` of the right form.
fn document(kinds: &[&'static kapi_core::api::KindInfo], path: &str, aggregated: bool) -> Value {
    let documents = discovery::documents(&model(kinds));
    let mut found = documents
        .into_iter()
        .filter(|d| d.path == path && d.aggregated == aggregated);
    let document = found
        .next()
        .unwrap_or_else(|| panic!("no document at {path}"));
    assert!(found.next().is_none(), "two documents at {path}");
    document.body
}

#[test]
fn document_paths() {
    let paths: Vec<String> = (discovery::documents(&model(KINDS)).iter())
        .map(|d| {
            format!(
                "{}{}",
                if d.aggregated { "aggregated " } else { "" },
                d.path
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            "/api",
            "/api/v1",
            "/apis",
            "/apis/apps.example.dev",
            "/apis/apps.example.dev/v1",
            "/apis/apps.example.dev/v1beta1",
            "/apis/platform.example.dev",
            "/apis/platform.example.dev/v1",
            "aggregated /api",
            "aggregated /apis",
        ]
    );
}

#[test]
fn api_versions() {
    let expected = json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]
    });
    check(document(KINDS, "/api", false), expected.clone());
    // Without core kinds the core group still exists, empty.
    check(document(&[&TENANT], "/api", false), expected);
}

#[test]
fn core_resource_list_has_no_api_version() {
    check(
        document(KINDS, "/api/v1", false),
        json!({
            "kind": "APIResourceList",
            "groupVersion": "v1",
            "resources": [{
                "name": "configmaps",
                "singularName": "configmap",
                "namespaced": true,
                "kind": "ConfigMap",
                "verbs": ["create", "delete", "get", "list", "watch"],
                "shortNames": ["cm"],
                "storageVersionHash": "qFsyl6wFWjQ="
            }]
        }),
    );
}

#[test]
fn empty_core_resource_list() {
    check(
        document(&[&TENANT], "/api/v1", false),
        json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": []}),
    );
}

#[test]
fn group_list_prefers_ga_versions() {
    check(
        document(KINDS, "/apis", false),
        json!({
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [
                {
                    "name": "apps.example.dev",
                    "versions": [
                        {"groupVersion": "apps.example.dev/v1", "version": "v1"},
                        {"groupVersion": "apps.example.dev/v1beta1", "version": "v1beta1"}
                    ],
                    "preferredVersion": {"groupVersion": "apps.example.dev/v1", "version": "v1"}
                },
                {
                    "name": "platform.example.dev",
                    "versions": [{"groupVersion": "platform.example.dev/v1", "version": "v1"}],
                    "preferredVersion": {"groupVersion": "platform.example.dev/v1", "version": "v1"}
                }
            ]
        }),
    );
}

#[test]
fn group() {
    check(
        document(KINDS, "/apis/platform.example.dev", false),
        json!({
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": "platform.example.dev",
            "versions": [{"groupVersion": "platform.example.dev/v1", "version": "v1"}],
            "preferredVersion": {"groupVersion": "platform.example.dev/v1", "version": "v1"}
        }),
    );
}

#[test]
fn resource_list_with_subresources() {
    check(
        document(KINDS, "/apis/apps.example.dev/v1beta1", false),
        json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "apps.example.dev/v1beta1",
            "resources": [
                {
                    "name": "webapps",
                    "singularName": "webapp",
                    "namespaced": true,
                    "kind": "WebApp",
                    "verbs": ["create", "get", "list", "patch"],
                    "shortNames": ["wa"],
                    "categories": ["all"],
                    // The storage version's hash, in every served version.
                    "storageVersionHash": discovery::storage_version_hash("apps.example.dev", "v1", "WebApp")
                },
                {
                    "name": "webapps/scale",
                    "singularName": "",
                    "namespaced": true,
                    "group": "autoscaling",
                    "version": "v1",
                    "kind": "Scale",
                    "verbs": ["get", "patch", "update"]
                },
                {
                    "name": "webapps/status",
                    "singularName": "",
                    "namespaced": true,
                    "kind": "WebApp",
                    "verbs": ["get", "update"]
                }
            ]
        }),
    );
}

#[test]
fn cluster_scoped_resource() {
    check(
        document(KINDS, "/apis/platform.example.dev/v1", false),
        json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "platform.example.dev/v1",
            "resources": [{
                "name": "tenants",
                "singularName": "tenant",
                "namespaced": false,
                "kind": "Tenant",
                "verbs": ["get", "list", "update", "watch"],
                "shortNames": ["tn"],
                "storageVersionHash": discovery::storage_version_hash("platform.example.dev", "v1", "Tenant")
            }]
        }),
    );
}

#[test]
fn aggregated_api() {
    check(
        document(KINDS, "/api", true),
        json!({
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": [{
                "metadata": {},
                "versions": [{
                    "version": "v1",
                    "resources": [{
                        "resource": "configmaps",
                        "responseKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                        "scope": "Namespaced",
                        "singularResource": "configmap",
                        "verbs": ["create", "delete", "get", "list", "watch"],
                        "shortNames": ["cm"]
                    }],
                    "freshness": "Current"
                }]
            }]
        }),
    );
    check(
        document(&[&TENANT], "/api", true),
        json!({
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": [{"metadata": {}, "versions": [{"version": "v1", "freshness": "Current"}]}]
        }),
    );
}

#[test]
fn aggregated_apis() {
    let web_app = |version: &str, subresource_verbs: Value| {
        json!({
            "resource": "webapps",
            "responseKind": {"group": "apps.example.dev", "version": version, "kind": "WebApp"},
            "scope": "Namespaced",
            "singularResource": "webapp",
            "verbs": ["create", "get", "list", "patch"],
            "shortNames": ["wa"],
            "categories": ["all"],
            "subresources": [
                {
                    "subresource": "scale",
                    "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                    "verbs": ["get", "patch", "update"]
                },
                {
                    "subresource": "status",
                    "responseKind": {"group": "apps.example.dev", "version": version, "kind": "WebApp"},
                    "verbs": subresource_verbs
                }
            ]
        })
    };
    check(
        document(&[&CONFIG_MAP, &WEB_APP, &TENANT], "/apis", true),
        json!({
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": [
                {
                    "metadata": {"name": "apps.example.dev"},
                    "versions": [
                        {"version": "v1", "resources": [web_app("v1", json!(["get", "update"]))], "freshness": "Current"},
                        {"version": "v1beta1", "resources": [web_app("v1beta1", json!(["get", "update"]))], "freshness": "Current"}
                    ]
                },
                {
                    "metadata": {"name": "platform.example.dev"},
                    "versions": [{
                        "version": "v1",
                        "resources": [{
                            "resource": "tenants",
                            "responseKind": {"group": "platform.example.dev", "version": "v1", "kind": "Tenant"},
                            "scope": "Cluster",
                            "singularResource": "tenant",
                            "verbs": ["get", "list", "update", "watch"],
                            "shortNames": ["tn"]
                        }],
                        "freshness": "Current"
                    }]
                }
            ]
        }),
    );
}

#[test]
fn resources_are_sorted_by_name() {
    // By name, as kube-apiserver's installer sorts them: subresources follow their resource.
    let names = |document: Value| -> Vec<String> {
        (document["resources"].as_array().unwrap().iter())
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let gv = document(
        &[&TENANT, &WEB_APP, &CONFIG_MAP],
        "/apis/apps.example.dev/v1",
        false,
    );
    assert_eq!(names(gv), ["webapps", "webapps/scale", "webapps/status"]);
}
