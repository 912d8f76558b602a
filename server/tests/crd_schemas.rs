//! What a CustomResourceDefinition's schema may say, and what it does to the objects of
//! its kind, against the real `kapi-server` over raw HTTP: schemas kube refuses (defaults
//! that do not validate where they sit), and embedded resources
//! (`x-kubernetes-embedded-resource`), whose `metadata` is read as an `ObjectMeta`
//! (unknown fields dropped) and which need an `apiVersion` and a `kind`.
//!
//! The messages of the refused definitions are also rows of the differential table
//! (`differential/builtin.yaml`), recorded from a real kube-apiserver.

use crate::support;

use serde_json::{Value, json};
use support::Server;
use support::crontabs::{DEFINITIONS, crontab_definition, wait_established};

/// The `openAPIV3Schema` of the definition's version `index`.
fn schema(definition: &mut Value, index: usize) -> &mut Value {
    &mut definition["spec"]["versions"][index]["schema"]["openAPIV3Schema"]
}

#[test]
fn defaults_must_be_pruned_and_valid_where_they_sit() {
    let server = Server::start();
    let client = server.client();
    let mut definition = crontab_definition();
    for version in 0..2 {
        let spec = &mut schema(&mut definition, version)["properties"]["spec"];
        spec["properties"]["replicas"]["default"] = json!(-1);
        // Not pruned (`size` is no property), and more properties than allowed.
        spec["properties"]["template"]["default"] = json!({"image": "x", "size": 2});
    }
    let refused = client.post(DEFINITIONS, &definition).unwrap();
    assert_eq!(refused.status, 422, "{refused:?}");
    let status = refused.json();
    let causes: Vec<String> = (status["details"]["causes"].as_array().unwrap().iter())
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap(),
                c["message"].as_str().unwrap()
            )
        })
        .collect();
    // Both versions have the same schema: kube reports it once, as its internal
    // `spec.validation`.
    let at = "spec.validation.openAPIV3Schema.properties[spec].properties";
    assert_eq!(
        causes,
        [
            format!(
                "{at}[replicas].default: Invalid value: -1: must be greater than or equal to 0"
            ),
            format!(
                "{at}[template].default: Invalid value: map[string]interface {{}}\
                 {{\"image\":\"x\", \"size\":2}}: must not have unknown fields"
            ),
            format!(
                "{at}[template].default: Invalid value: map[string]interface {{}}\
                 {{\"image\":\"x\", \"size\":2}}: should have at most 1 properties"
            ),
        ],
        "{status}"
    );
}

/// A definition with an embedded resource, `spec.template`, that keeps unknown fields.
fn serve_boxes() -> (Server, support::http::Client) {
    let server = Server::start();
    let client = server.client();
    let definition = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "boxes.example.dev"},
        "spec": {"group": "example.dev", "scope": "Namespaced",
            "names": {"plural": "boxes", "kind": "Box"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                            "x-kubernetes-preserve-unknown-fields": true}}}}}}}]},
    });
    let created = client.post(DEFINITIONS, &definition).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    wait_established(&client, "boxes.example.dev");
    (server, client)
}

fn a_box(template: Value) -> Value {
    json!({"apiVersion": "example.dev/v1", "kind": "Box", "metadata": {"name": "b"},
        "spec": {"template": template}})
}

const BOXES: &str = "/apis/example.dev/v1/namespaces/default/boxes";

#[test]
fn embedded_resources_keep_object_meta_and_need_a_kind() {
    let (_server, client) = serve_boxes();

    // Unknown metadata fields go; the rest of the embedded object is kept.
    let created = client
        .post(
            BOXES,
            &a_box(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "labels": {"a": "b"}, "bogus": 1},
                "spec": {"anything": true}})),
        )
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    assert_eq!(
        created.json()["spec"]["template"],
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"anything": true}})
    );
    let stored = client.get(&format!("{BOXES}/b")).unwrap().json();
    assert_eq!(
        stored["spec"]["template"],
        created.json()["spec"]["template"]
    );

    // No kind, a kind that is no DNS label, metadata that is no ObjectMeta, a bad name.
    for (template, message) in [
        (
            json!({"apiVersion": "v1", "metadata": {"name": "p"}}),
            "spec.template.kind: Required value: must not be empty",
        ),
        (
            json!({"apiVersion": "a/b/c", "kind": "Pod_Kind"}),
            "[spec.template.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion \
             string: a/b/c, spec.template.kind: Invalid value: \"Pod_Kind\": may have mixed \
             case, but should otherwise match: a DNS-1035 label must consist of lower case \
             alphanumeric characters or '-', start with an alphabetic character, and end with \
             an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for \
             validation is '[a-z]([-a-z0-9]*[a-z0-9])?')]",
        ),
        (
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"a": 1}}}),
            "spec.template.metadata: Invalid value: map[string]interface {}{\"labels\":\
             map[string]interface {}{\"a\":1}}: invalid type: integer `1`, expected a string",
        ),
        (
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a/b"}}),
            "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
        ),
    ] {
        let refused = client.post(BOXES, &a_box(template.clone())).unwrap();
        assert_eq!(refused.status, 422, "{template}: {refused:?}");
        assert_eq!(
            refused.json()["message"],
            format!("Box.example.dev \"b\" is invalid: {message}"),
            "{template}"
        );
    }
}
