//! What `cargo xtask generate` says of validation rules the attribute cannot judge alone:
//! each mistake is a small kind declared as users declare them, and the model refuses it
//! with kube's error, prefixed with the file, line and column of the rule's literal (and,
//! for a cost, the fields that need a bound). A kind whose rules reach into nested types,
//! lists, maps, optional fields and int-or-string values passes.

#![allow(missing_docs, unreachable_pub)]

use kapi::Resource;
use kapi::api::KindInfo;
use kapi::meta::ObjectMeta;
use kapi_codegen::ApiModel;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Declares a kind `$kind` of group `rules.example.dev` whose spec is `$spec`.
macro_rules! kind {
    ($kind:ident, $spec:ty) => {
        #[derive(Clone, Default, Serialize, Deserialize, JsonSchema, Resource)]
        #[resource(group = "rules.example.dev", namespaced, version(name = "v1", storage))]
        pub struct $kind {
            #[serde(default)]
            pub metadata: ObjectMeta,
            pub spec: $spec,
        }
    };
}

#[kapi::rules]
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Container {
    pub image: String,
}

#[kapi::rules]
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
#[rule("self.container.imag != ''")]
pub struct NestedTypoSpec {
    pub container: Container,
}
kind!(NestedTypo, NestedTypoSpec);

#[kapi::rules]
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct WrongTypeSpec {
    #[rule("self == 'three'")]
    pub replicas: i32,
}
kind!(WrongType, WrongTypeSpec);

#[kapi::rules]
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Item {
    #[rule("self == oldSelf", message = "names are immutable")]
    pub name: String,
}

#[kapi::rules]
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct UncorrelatedSpec {
    pub items: Vec<Item>,
}
kind!(Uncorrelated, UncorrelatedSpec);

#[kapi::rules]
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct CostlySpec {
    #[rule(
        "self.all(a, self.all(b, self.all(c, a + b + c != '')))",
        message = "too dear"
    )]
    pub tags: Vec<String>,
}
kind!(Costly, CostlySpec);

/// Every shape of schema a rule may reach, used correctly.
#[kapi::rules]
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[rule("!has(self.display) || self.display.size() <= 20")]
#[rule("self.ports.all(p, p.port > 0)", message = "ports are positive")]
#[rule("self.labels.all(k, self.labels[k] != '')")]
#[rule("type(self.budget) == int ? self.budget >= 0 : self.budget.endsWith('%')")]
pub struct FineSpec {
    #[serde(default)]
    pub display: Option<String>,
    #[schemars(length(max = 8), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["port"]))]
    pub ports: Vec<Port>,
    #[schemars(extend("maxProperties" = 8))]
    pub labels: BTreeMap<String, String>,
    pub budget: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
}

#[kapi::rules]
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Port {
    #[rule("self == oldSelf", message = "ports are fixed")]
    pub port: i32,
}
kind!(Fine, FineSpec);

/// The model's refusal of `kind`, as `generate` prints it.
fn refusal(kind: &'static KindInfo) -> String {
    match ApiModel::build(&[kind]) {
        Ok(_) => panic!("{} was accepted", kind.kind),
        Err(e) => e.to_string(),
    }
}

/// `file:line:column` of the literal `rule` in this file (its first, on a declaration).
fn at(rule: &str) -> String {
    let literal = format!("{rule:?}");
    let file = include_str!("rules.rs");
    let (line, text) = (file.lines().enumerate())
        .find(|(_, text)| text.contains(&literal))
        .unwrap_or_else(|| panic!("{literal} is in this file"));
    format!(
        "codegen/tests/rules.rs:{}:{}",
        line + 1,
        text.find(&literal).unwrap() + 1
    )
}

#[test]
fn a_field_of_a_nested_type_that_does_not_exist() {
    let error = refusal(NestedTypo::INFO);
    let expected = format!(
        "{}: rule \"self.container.imag != ''\": openAPIV3Schema.properties[spec]",
        at("self.container.imag != ''")
    );
    assert!(error.contains(&expected), "{error}");
    assert!(
        error.contains("compilation failed: ERROR: <input>:1:15: undefined field 'imag'"),
        "{error}"
    );
}

#[test]
fn a_comparison_of_the_wrong_types() {
    let error = refusal(WrongType::INFO);
    assert!(error.contains(&at("self == 'three'")), "{error}");
    assert!(
        error.contains(".properties[replicas].x-kubernetes-validations[0].rule"),
        "{error}"
    );
    assert!(
        error.contains("found no matching overload for '_==_' applied to '(int, string)'"),
        "{error}"
    );
}

#[test]
fn old_self_where_old_values_cannot_be_matched() {
    let error = refusal(Uncorrelated::INFO);
    assert!(error.contains(&at("self == oldSelf")), "{error}");
    assert!(
        error.contains("oldSelf cannot be used on the uncorrelatable portion of the schema within openAPIV3Schema.properties[spec].properties[items]"),
        "{error}"
    );
}

#[test]
fn a_cost_past_kubes_limit_names_the_fields_to_bound() {
    let error = refusal(Costly::INFO);
    let rule = "self.all(a, self.all(b, self.all(c, a + b + c != '')))";
    assert!(error.contains(&at(rule)), "{error}");
    assert!(
        error.contains("estimated rule cost exceeds budget by factor of"),
        "{error}"
    );
    assert!(
        error.contains("give these a bound: .spec.tags (maxItems), .spec.tags[*] (maxLength)"),
        "{error}"
    );
}

#[test]
fn rules_through_options_lists_maps_and_int_or_string_pass() {
    let model = ApiModel::build(&[Fine::INFO]).unwrap();
    let (gv, _) = model.resources().next().unwrap();
    let spec = &gv.schemas["dev.example.rules.v1.FineSpec"];
    assert_eq!(
        spec["x-kubernetes-validations"].as_array().unwrap().len(),
        4
    );
    // Where they were written is not published.
    assert!(
        !serde_json::to_string(&gv.schemas)
            .unwrap()
            .contains("x-kapi-source")
    );
}
