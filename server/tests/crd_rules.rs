//! CustomResourceDefinitions with validation rules (`x-kubernetes-validations`, CEL),
//! against the real `kapi-server` with kubectl 1.32, on the embedded store and on etcd:
//! cross-field rules, a transition rule keeping a field immutable, list rules, regular
//! expressions, quantities and IP addresses, `messageExpression` and `reason`, through create, merge patch and
//! server-side apply; a rule that does not compile refused with cel-go's error; an object
//! whose rule runs past kube's per-rule cost limit refused with kube's message.

use crate::support;

use serde_json::{Value, json};
use support::crontabs::{DEFINITIONS, wait_established};
use support::{Backend, Kubectl, Server, Version, on_both_backends};

on_both_backends! {
    rules_judge_objects_through_kubectl => rules_judge_objects();
}

/// The Gadget definition, its `spec` carrying `rules`.
fn gadget_definition(spec_rules: Value) -> Value {
    let properties = spec_properties();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.rules.example.com"},
        "spec": {
            "group": "rules.example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {
                        "type": "object",
                        "x-kubernetes-validations": spec_rules,
                        "properties": properties,
                    }}
                }}
            }]
        }
    })
}

/// The properties of a Gadget's `spec`, with their own rules.
fn spec_properties() -> Value {
    json!({
        "mode": {"type": "string"},
        "cpu": {
            "type": "string", "maxLength": 16,
            "x-kubernetes-validations": [{
                "rule": "isQuantity(self) && quantity(self).isLessThan(quantity('4'))",
                "message": "cpu must be a quantity under 4"
            }]
        },
        "address": {
            "type": "string", "maxLength": 45,
            "x-kubernetes-validations": [{
                "rule": "isIP(self) && ip(self).family() == 4",
                "message": "address must be an IPv4 address"
            }]
        },
        "minReplicas": {"type": "integer"},
        "maxReplicas": {"type": "integer"},
        "name": {
            "type": "string", "maxLength": 63,
            "x-kubernetes-validations": [{
                "rule": "self.matches('^[a-z]+$')",
                "messageExpression": "'name ' + self + ' must be lower case letters'"
            }]
        },
        "tags": {
            "type": "array", "maxItems": 800,
            "items": {"type": "string", "maxLength": 8},
            "x-kubernetes-validations": [{
                "rule": "self.all(a, self.all(b, a != b || a == b))",
                "message": "tags are checked pairwise"
            }]
        },
        "ports": {
            "type": "array", "maxItems": 10,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "x-kubernetes-validations": [{
                "rule": "self.all(p, p.port > 0 && p.port < 65536)",
                "message": "every port must be between 1 and 65535"
            }],
            "items": {
                "type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}
            }
        }
    })
}

fn gadget(name: &str, spec: Value) -> String {
    json!({"apiVersion": "rules.example.com/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": spec})
        .to_string()
}

fn rules_judge_objects(backend: Backend) {
    let server = Server::start_on(backend);
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);

    // A rule that does not compile: refused with cel-go's error, at its path.
    let broken = gadget_definition(json!([{"rule": "self.nope > 1"}]));
    let file = kubectl.write_file("broken.json", &broken.to_string());
    kubectl.fails(&["apply", "-f", &file]).stderr_has(
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: \
         Invalid value: apiextensions.ValidationRule{Rule:\"self.nope > 1\", Message:\"\", \
         MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), \
         FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: \
         undefined field 'nope'",
    );

    // A rule nested deeper than CEL allows: refused, and the server goes on.
    let deep = vec!["self.minReplicas"; 400].join(" == ");
    let too_deep = gadget_definition(json!([{"rule": deep}]));
    let file = kubectl.write_file("deep.json", &too_deep.to_string());
    kubectl
        .fails(&["apply", "-f", &file])
        .stderr_has("compilation failed: ERROR: <input>:1:0: max recursion depth exceeded");

    // A rule whose estimated cost, on a list without a bound, passes kube's limit.
    let mut unbounded = gadget_definition(json!([]));
    let tags = &mut unbounded["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"]["tags"];
    tags.as_object_mut().unwrap().remove("maxItems");
    let file = kubectl.write_file("unbounded.json", &unbounded.to_string());
    kubectl.fails(&["apply", "-f", &file]).stderr_has(
        "spec.validation.openAPIV3Schema.properties[spec].properties[tags].x-kubernetes-validations[0].rule: \
         Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the \
         rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
    );

    let definition = gadget_definition(json!([
        {"rule": "self.minReplicas <= self.maxReplicas", "message": "minReplicas must not exceed maxReplicas"},
        {"rule": "self.mode == oldSelf.mode", "message": "mode is immutable", "reason": "FieldValueForbidden"}
    ]));
    let file = kubectl.write_file("gadgets.json", &definition.to_string());
    kubectl.ok(&["apply", "-f", &file]);
    wait_established(&client, "gadgets.rules.example.com");

    let spec = json!({"mode": "fast", "minReplicas": 1, "maxReplicas": 3, "name": "alpha",
        "cpu": "500m", "address": "10.0.0.1", "ports": [{"name": "http", "port": 80}]});
    let file = kubectl.write_file("good.json", &gadget("good", spec));
    kubectl
        .ok(&["create", "-f", &file, "-n", "default"])
        .stdout_is("gadget.rules.example.com/good created");

    // Cross-field, list, and regex rules with their messages.
    let refusals = [
        (
            json!({"mode": "m", "minReplicas": 5, "maxReplicas": 3}),
            "spec: Invalid value: \"object\": minReplicas must not exceed maxReplicas",
        ),
        (
            json!({"mode": "m", "minReplicas": 1, "maxReplicas": 3, "name": "Alpha1"}),
            "spec.name: Invalid value: \"string\": name Alpha1 must be lower case letters",
        ),
        (
            json!({"mode": "m", "minReplicas": 1, "maxReplicas": 3, "ports": [{"name": "x", "port": 70000}]}),
            "spec.ports: Invalid value: \"array\": every port must be between 1 and 65535",
        ),
        (
            json!({"mode": "m", "minReplicas": 1, "maxReplicas": 3, "cpu": "8"}),
            "spec.cpu: Invalid value: \"string\": cpu must be a quantity under 4",
        ),
        (
            json!({"mode": "m", "minReplicas": 1, "maxReplicas": 3, "address": "::1"}),
            "spec.address: Invalid value: \"string\": address must be an IPv4 address",
        ),
    ];
    for (i, (spec, message)) in refusals.into_iter().enumerate() {
        let file = kubectl.write_file(&format!("bad{i}.json"), &gadget(&format!("bad{i}"), spec));
        kubectl
            .fails(&["create", "-f", &file, "-n", "default"])
            .stderr_has(message);
    }

    // The transition rule, through a merge patch and server-side apply.
    kubectl
        .fails(&[
            "patch",
            "gadget",
            "good",
            "-n",
            "default",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"mode":"slow"}}"#,
        ])
        .stderr_has("spec: Forbidden: mode is immutable");
    kubectl.ok(&[
        "patch",
        "gadget",
        "good",
        "-n",
        "default",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"maxReplicas":4}}"#,
    ]);
    let applied = json!({"mode": "fast", "minReplicas": 9, "maxReplicas": 4, "name": "alpha"});
    let file = kubectl.write_file("apply.json", &gadget("good", applied));
    kubectl
        .fails(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            &file,
            "-n",
            "default",
        ])
        .stderr_has("minReplicas must not exceed maxReplicas");
    let stored = client
        .get("/apis/rules.example.com/v1/namespaces/default/gadgets/good")
        .unwrap()
        .json();
    assert_eq!(stored["spec"]["maxReplicas"], 4);
    assert_eq!(stored["spec"]["mode"], "fast");

    // Ratcheting: a rule added later that a stored value breaks holds the value only where
    // it changes; unchanged, its failure is a warning.
    let mut tightened = definition.clone();
    tightened["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["name"]
        ["x-kubernetes-validations"]
        .as_array_mut()
        .unwrap()
        .push(json!({"rule": "self.size() < 5", "message": "name must be short"}));
    let file = kubectl.write_file("tightened.json", &tightened.to_string());
    let mut attempt = 0;
    kubectl.ok(&["apply", "-f", &file]);
    support::wait_for(
        std::time::Duration::from_secs(10),
        "the tightened rule to apply",
        || "still the old rules".to_owned(),
        || {
            // A new value each time: a patch that changes nothing may not be validated.
            attempt += 1;
            let patch = format!(r#"{{"spec":{{"minReplicas":{}}}}}"#, 1 + attempt % 2);
            let run = kubectl.run(&[
                "patch", "gadget", "good", "-n", "default", "--type", "merge", "-p", &patch,
            ]);
            run.stderr
                .contains("Warning: spec.name: Invalid value: \"string\": name must be short")
                .then_some(run)
        },
    )
    .stdout_has("gadget.rules.example.com/good patched");
    kubectl
        .fails(&[
            "patch",
            "gadget",
            "good",
            "-n",
            "default",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"name":"bravo"}}"#,
        ])
        .stderr_has("spec.name: Invalid value: \"string\": name must be short");

    // A rule whose evaluation passes kube's per-rule cost limit: refused, and the server
    // goes on serving.
    let tags: Vec<String> = (0..800).map(|i| format!("t{i}")).collect();
    let spec = json!({"mode": "m", "minReplicas": 1, "maxReplicas": 2, "tags": tags});
    let refused = client
        .post(
            "/apis/rules.example.com/v1/namespaces/default/gadgets",
            &serde_json::from_str(&gadget("costly", spec)).unwrap(),
        )
        .unwrap();
    assert_eq!(refused.status, 422, "{refused:?}");
    assert!(
        refused.body.contains(
            "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: tags are checked pairwise"
        ),
        "{refused:?}"
    );
    assert_eq!(client.get(DEFINITIONS).unwrap().status, 200);
}
