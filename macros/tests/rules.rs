//! `#[kapi::rules]`'s real output: the rules of a struct and of its fields land in the
//! schema schemars derives, where kube would put them, with where each was written.

#![allow(unreachable_pub, missing_docs)]

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

/// Each source is this file, at the line and column where the rule's literal starts.
fn assert_sources(rules: &Value, sources: &[String]) {
    let file = include_str!("rules.rs");
    for (rule, source) in rules.as_array().unwrap().iter().zip(sources) {
        let literal = format!("\"{}\"", rule["rule"].as_str().unwrap());
        let (line, text) = (file.lines().enumerate())
            .find(|(_, text)| text.contains(&literal) && !text.contains("json!"))
            .unwrap();
        let column = text.find(&literal).unwrap() + 1;
        assert_eq!(
            *source,
            format!("macros/tests/rules.rs:{}:{column}", line + 1)
        );
    }
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
    assert_sources(&own, &sources);
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
    assert_sources(&field, &sources);
    assert!(
        schema["properties"]["minReplicas"]
            .get("x-kubernetes-validations")
            .is_none()
    );
}
