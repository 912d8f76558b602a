//! CronTab, the CustomResourceDefinition of kube's documentation, as the custom-resource
//! tests define and serve it.

use std::time::Duration;

use serde_json::{Value, json};

use super::http::Client;
use super::{Server, wait_for};

/// Where CustomResourceDefinitions are created.
pub(crate) const DEFINITIONS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// The CronTabs of namespace `default`, in v1.
pub(crate) const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

/// CronTab in two versions with a `None` conversion, a schema with defaults, an enum, a
/// list map, nested objects and a subtree that keeps unknown fields, status and scale, and
/// printer columns.
pub(crate) fn crontab_definition() -> Value {
    let schema = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["cronSpec"],
                "properties": {
                    "cronSpec": {"type": "string", "minLength": 1},
                    "replicas": {"type": "integer", "default": 1, "minimum": 0},
                    "mode": {"type": "string", "enum": ["Fast", "Slow"], "default": "Slow"},
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": {"type": "string"},
                                "port": {"type": "integer"}
                            }
                        }
                    },
                    "template": {
                        "type": "object",
                        "maxProperties": 1,
                        "properties": {"image": {"type": "string"}, "tag": {"type": "string"}}
                    },
                    "interval": {
                        "type": "integer",
                        "multipleOf": 5,
                        "anyOf": [{"minimum": 60}, {"maximum": 10}]
                    },
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }
            },
            "status": {
                "type": "object",
                "properties": {"replicas": {"type": "integer"}}
            }
        }
    });
    let version = |name: &str, storage: bool| {
        json!({
            "name": name,
            "served": true,
            "storage": storage,
            "schema": {"openAPIV3Schema": schema},
            "subresources": {
                "status": {},
                "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
            },
            "additionalPrinterColumns": [
                {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
                {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}
            ]
        })
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [version("v1", true), version("v1beta1", false)]
        }
    })
}

/// The definition's condition `type`, once it has one.
pub(crate) fn condition(client: &Client, name: &str, type_: &str) -> Option<Value> {
    let crd = client
        .get(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
        ))
        .ok()?
        .json();
    let conditions = crd.pointer("/status/conditions")?.as_array()?;
    conditions.iter().find(|c| c["type"] == type_).cloned()
}

#[track_caller]
pub(crate) fn wait_established(client: &Client, name: &str) -> Value {
    wait_for(
        Duration::from_secs(10),
        "the definition to be Established",
        || {
            format!(
                "{:?}",
                client.get(&format!(
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
                ))
            )
        },
        || condition(client, name, "Established").filter(|c| c["status"] == "True"),
    )
}

/// A server serving CronTab (`crontab_definition`), Established.
pub(crate) fn serve_crontabs() -> (Server, Client) {
    let server = Server::start();
    let client = server.client();
    let created = client.post(DEFINITIONS, &crontab_definition()).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    wait_established(&client, "crontabs.stable.example.com");
    (server, client)
}

/// The definition's `NamesAccepted` condition, once it is `False`.
#[track_caller]
pub(crate) fn names_refused(client: &Client, name: &str) -> Value {
    wait_for(
        Duration::from_secs(10),
        "NamesAccepted to be False",
        String::new,
        || condition(client, name, "NamesAccepted").filter(|c| c["status"] == "False"),
    )
}

pub(crate) fn crontab(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": spec
    })
}
