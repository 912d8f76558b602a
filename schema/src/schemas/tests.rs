//! Unit tests of the module: its cases, beside it to keep the module readable.

use serde_json::json;

use super::*;

/// The schema `root` of the `components` given, compiled.
fn compile(components: Value) -> (Schemas, usize) {
    let components = components.as_object().unwrap().clone();
    let mut schemas = Schemas::default();
    let root = schemas
        .compile_component("test", &components, "Root")
        .unwrap();
    (schemas, root)
}

/// Defaults and validates `object` against `components["Root"]`; compares the errors'
/// `field: message` lines and, when given, the defaulted object.
#[track_caller]
fn check(components: Value, mut object: Value, expected: &[&str]) -> Value {
    let (schemas, root) = compile(components);
    let schema = KindSchema {
        schemas: &schemas,
        root,
    };
    schema.default(&mut object);
    let errors: Vec<String> = schema
        .validate(&object)
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors, expected, "object: {object}");
    object
}

fn webapp() -> Value {
    let document: Value = serde_json::from_str(include_str!(
        "../../../generated/openapi/v3/apis/apps.example.dev/v1.json"
    ))
    .unwrap();
    let mut components = document["components"]["schemas"].clone();
    let root = components["dev.example.apps.v1.WebApp"].clone();
    components["Root"] = root;
    components
}

#[test]
fn generated_webapp_schema_validates_and_defaults() {
    let defaulted = check(
        webapp(),
        json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
            "metadata": {"name": "web"},
            "spec": {"container": {"image": "nginx", "ports": [{"containerPort": 80}]}}}),
        &[],
    );
    assert_eq!(defaulted["spec"]["replicas"], json!(1));
    assert_eq!(defaulted["spec"]["paused"], json!(false));
    assert_eq!(
        defaulted["spec"]["container"]["ports"][0]["protocol"],
        json!("TCP")
    );
    check(
        webapp(),
        json!({"spec": {"replicas": -1, "container": {"image": "",
            "ports": [{"containerPort": 80}, {"containerPort": 0, "protocol": "SCTP"},
                      {"containerPort": 80, "protocol": "UDP"}]}}}),
        &[
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            "spec.container.image: Invalid value: \"\": should be at least 1 chars long",
            "spec.container.ports[1].containerPort: Invalid value: 0: must be greater than or equal to 1",
            "spec.container.ports[1].protocol: Unsupported value: \"SCTP\": supported values: \"TCP\", \"UDP\"",
            "spec.container.ports[2]: Duplicate value: map[string]interface {}{\"containerPort\":80}",
        ],
    );
    check(
        webapp(),
        json!({"spec": {"replicas": 1001, "container": {}}}),
        &[
            "spec.replicas: Invalid value: 1001: must be less than or equal to 1000",
            "spec.container.image: Required value",
        ],
    );
    check(webapp(), json!({}), &["spec: Required value"]);
    check(
        webapp(),
        json!({"spec": {"replicas": "two", "container": {"image": "x"}}}),
        &["spec.replicas: Invalid value: \"string\": must be of type integer: \"string\""],
    );
}

#[test]
fn every_keyword() {
    let components = json!({"Root": {"type": "object", "properties": {
        "exclusive": {"type": "number", "minimum": 0, "exclusiveMinimum": true,
                      "maximum": 10, "exclusiveMaximum": true},
        "short": {"type": "string", "maxLength": 3},
        "one": {"type": "string", "maxLength": 1},
        "dns": {"type": "string", "pattern": "^[a-z]+$"},
        "few": {"type": "array", "maxItems": 1, "items": {"type": "string"}},
        "many": {"type": "array", "minItems": 2, "items": {"type": "string"}},
        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "flag": {"type": "boolean"},
    }}});
    check(
        components.clone(),
        json!({"exclusive": 0, "short": "abcd", "one": "ab", "dns": "A", "few": ["a", "b"],
            "many": ["a"], "set": ["a", "b", "a"], "labels": {"k": 1}, "flag": "yes"}),
        &[
            "exclusive: Invalid value: 0: must be greater than 0",
            "short: Too long: may not be more than 3 bytes",
            "one: Too long: may not be more than 1 byte",
            "dns: Invalid value: \"A\": should match '^[a-z]+$'",
            "few: Too many: 2: must have at most 1 items",
            "many: Invalid value: 1: should have at least 2 items",
            "labels[k]: Invalid value: \"integer\": must be of type string: \"integer\"",
            "flag: Invalid value: \"string\": must be of type boolean: \"string\"",
            "set[2]: Duplicate value: \"a\"",
        ],
    );
    check(
        components,
        json!({"exclusive": 10, "short": "abc", "dns": "abc", "set": ["a", "b"]}),
        &["exclusive: Invalid value: 10: must be less than 10"],
    );
}

#[test]
fn defaults_apply_top_down_through_refs_and_lists() {
    let components = json!({
        "Root": {"type": "object", "properties": {
            "spec": {"default": {}, "allOf": [{"$ref": "#/components/schemas/Spec"}]},
            "items": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}},
            "gone": {"type": "string"},
            "kept": {"type": "string", "nullable": true},
        }},
        "Spec": {"type": "object", "properties": {
            "quota": {"default": {"max": 10}, "allOf": [{"$ref": "#/components/schemas/Quota"}]},
        }},
        "Quota": {"type": "object", "properties": {
            "max": {"type": "integer", "default": 10, "minimum": 0},
            "min": {"type": "integer", "default": 0},
        }},
        "Item": {"type": "object", "properties": {"protocol": {"type": "string", "default": "TCP"}}},
    });
    let defaulted = check(
        components.clone(),
        json!({"items": [{}, {"protocol": "UDP"}], "gone": null, "kept": null}),
        &[],
    );
    assert_eq!(
        defaulted,
        json!({"items": [{"protocol": "TCP"}, {"protocol": "UDP"}], "kept": null,
            "spec": {"quota": {"max": 10, "min": 0}}})
    );
    check(
        components,
        json!({"spec": {"quota": {"max": -1}}}),
        &["spec.quota.max: Invalid value: -1: must be greater than or equal to 0"],
    );
}

#[test]
fn immutable_fields_may_not_change_once_set() {
    let (schemas, root) = compile(json!({"Root": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "class": {"type": "string", "x-kapi-immutable": true},
            "size": {"type": "integer"},
        }},
    }}}));
    let schema = KindSchema {
        schemas: &schemas,
        root,
    };
    let messages = |new: Value, old: Value| -> Vec<String> {
        (schema.validate_update(&new, &old).iter())
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(
        messages(
            json!({"spec": {"class": "b", "size": 2}}),
            json!({"spec": {"class": "a", "size": 1}})
        ),
        ["spec.class: Invalid value: \"b\": field is immutable"]
    );
    assert_eq!(
        messages(json!({"spec": {}}), json!({"spec": {"class": "a"}})),
        ["spec.class: Invalid value: null: field is immutable"]
    );
    assert!(messages(json!({"spec": {"class": "a"}}), json!({"spec": {}})).is_empty());
}

#[test]
fn immutable_fields_inside_list_maps_and_maps_are_matched_by_key() {
    let (schemas, root) = compile(json!({"Root": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["port"],
            "items": {"type": "object", "properties": {
                "port": {"type": "integer"},
                "name": {"type": "string", "x-kapi-immutable": true},
            }}},
        "tags": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string", "x-kapi-immutable": true},
        }}},
        "volumes": {"type": "object", "additionalProperties": {"type": "object",
            "properties": {"size": {"type": "integer", "x-kapi-immutable": true}}}},
    }}}));
    let schema = KindSchema {
        schemas: &schemas,
        root,
    };
    let messages = |new: Value, old: Value| -> Vec<String> {
        (schema.validate_update(&new, &old).iter())
            .map(ToString::to_string)
            .collect()
    };
    let old = json!({
        "ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}],
        "tags": [{"name": "a"}],
        "volumes": {"data": {"size": 1}, "logs": {"size": 2}},
    });
    // Reordered, one item added (and one repeated: a duplicate, not a change), one entry
    // removed: no field of an item changed.
    assert!(
        messages(
            json!({"ports": [{"port": 443, "name": "https"}, {"port": 8080, "name": "x"},
                             {"port": 80, "name": "http"}, {"port": 80}],
                   "tags": [{"name": "b"}], "volumes": {"data": {"size": 1}}}),
            old.clone()
        )
        .is_empty()
    );
    assert_eq!(
        messages(
            json!({"ports": [{"port": 443, "name": "tls"}, {"port": 80}],
                   "volumes": {"data": {"size": 1}, "logs": {"size": 3}}}),
            old
        ),
        [
            "ports[0].name: Invalid value: \"tls\": field is immutable",
            "ports[1].name: Invalid value: null: field is immutable",
            "volumes[logs].size: Invalid value: 3: field is immutable",
        ]
    );
}

#[test]
fn unresolved_refs_fail_to_compile() {
    let components = json!({"Root": {"$ref": "#/components/schemas/Missing"}});
    let mut schemas = Schemas::default();
    let error = schemas
        .compile_component("test", components.as_object().unwrap(), "Root")
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "OpenAPI v3 document test: $ref \"Missing\" does not resolve"
    );
}
