//! `#[kapi::rules]`'s real output: the rules of a struct and of its fields land in the
//! schema schemars derives, where kube would put them, with where each was written.

#![allow(unreachable_pub)]

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[kapi::rules]
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[rule(
    "self.minReplicas <= self.maxReplicas",
    message = "minReplicas must not exceed maxReplicas",
    field_path = ".minReplicas",
    reason = "FieldValueForbidden"
)]
#[rule(rule = "!has(self.__namespace__) || self.__namespace__ != ''")]
pub struct Scaling {
    pub min_replicas: i32,
    pub max_replicas: i32,
    #[serde(default)]
    pub namespace: Option<String>,
    #[rule("self == oldSelf", message = "displayName is immutable")]
    #[rule(
        "oldSelf.hasValue() || self.size() > 0",
        optional_old_self,
        message_expression = "'bad name: ' + self"
    )]
    #[serde(default)]
    pub display_name: Option<String>,
}

fn without_sources(mut rules: Value) -> (Value, Vec<String>) {
    let mut sources = Vec::new();
    for rule in rules.as_array_mut().unwrap() {
        let source = rule
            .as_object_mut()
            .unwrap()
            .remove("x-kapi-source")
            .unwrap();
        sources.push(source.as_str().unwrap().to_owned());
    }
    (rules, sources)
}

#[test]
fn rules_are_published_where_they_are_written() {
    let schema = schemars::schema_for!(Scaling).to_value();
    let (own, sources) = without_sources(schema["x-kubernetes-validations"].clone());
    assert_eq!(
        own,
        json!([
            {"rule": "self.minReplicas <= self.maxReplicas",
             "message": "minReplicas must not exceed maxReplicas",
             "reason": "FieldValueForbidden", "fieldPath": ".minReplicas"},
            {"rule": "!has(self.__namespace__) || self.__namespace__ != ''"},
        ])
    );
    // Where each rule's expression starts.
    assert_eq!(
        sources,
        ["macros/tests/rules.rs:13:8", "macros/tests/rules.rs:15:15"]
    );
    let field = &schema["properties"]["displayName"]["x-kubernetes-validations"];
    let (field, sources) = without_sources(field.clone());
    assert_eq!(
        field,
        json!([
            {"rule": "self == oldSelf", "message": "displayName is immutable"},
            {"rule": "oldSelf.hasValue() || self.size() > 0", "optionalOldSelf": true,
             "messageExpression": "'bad name: ' + self"},
        ])
    );
    assert_eq!(
        sources,
        ["macros/tests/rules.rs:21:12", "macros/tests/rules.rs:22:12"]
    );
    assert!(
        schema["properties"]["minReplicas"]
            .get("x-kubernetes-validations")
            .is_none()
    );
}
