//! WebApp as a CustomResourceDefinition for a real kube-apiserver (the peer of
//! `shared/peer/`): the differential tables and the benchmark compare kapi with a
//! kube-apiserver that serves WebApp with the schema kapi publishes.

use std::path::Path;

use serde_json::{Map, Value, json};

/// WebApp's CustomResourceDefinition, with WebApp's published v1 schema
/// (`generated/openapi/v3` under the workspace `root`), `$ref`s inlined and what a CRD
/// schema cannot carry left out (kapi's own extensions, patch hints, kube 1.20's refusal
/// of empty-string defaults).
pub(crate) fn webapp_crd(root: &Path) -> Value {
    let document = root.join("generated/openapi/v3/apis/apps.example.dev/v1.json");
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(document).expect("the v1 document"))
            .expect("JSON");
    let components = document["components"]["schemas"].clone();
    fn inline(schema: &Value, components: &Value) -> Value {
        match schema {
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, value) in map {
                    match key.as_str() {
                        "$ref" => {
                            let name = value
                                .as_str()
                                .unwrap_or("")
                                .rsplit('/')
                                .next()
                                .unwrap_or("");
                            if let Value::Object(target) = inline(&components[name], components) {
                                out.extend(target);
                            }
                        }
                        "allOf" if value.as_array().is_some_and(|a| a.len() == 1) => {
                            if let Value::Object(only) = inline(&value[0], components) {
                                out.extend(only);
                            }
                        }
                        "x-kubernetes-group-version-kind"
                        | "x-kapi-immutable"
                        | "x-kubernetes-patch-strategy"
                        | "x-kubernetes-patch-merge-key" => {}
                        "default" if value.is_null() || value == "" => {}
                        _ => {
                            out.insert(key.clone(), inline(value, components));
                        }
                    }
                }
                Value::Object(out)
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|i| inline(i, components)).collect())
            }
            other => other.clone(),
        }
    }
    let mut schema = inline(&components["dev.example.apps.v1.WebApp"], &components);
    schema["properties"]["metadata"] = json!({"type": "object"});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "webapps.apps.example.dev"},
        "spec": {"group": "apps.example.dev", "scope": "Namespaced",
            "names": {"plural": "webapps", "singular": "webapp", "kind": "WebApp", "shortNames": ["wa"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": schema},
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]},
    })
}
