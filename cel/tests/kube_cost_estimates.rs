//! kube's tables of static cost estimates (`tests/data/kube/`, see its README), run against
//! kapi's estimator: `TestCelEstimatedCostStability` (exact maximum costs of rules on
//! schemas without bounds) and `TestCostEstimation` (maximum costs of rules on schemas
//! without and with `maxItems`/`maxProperties`/`maxLength`). Cases kapi does not pass yet
//! are listed, with what differs, in `tests/data/kube/known_failures.json`; a listed case
//! that passes, or an unlisted one that fails, fails the test.

use std::collections::BTreeSet;

use kapi_cel::environment::{KUBERNETES, new_expressions};
use kapi_cel::validation::compile_rules;
use serde_json::{Value, json};

mod common;

use common::{compare, dump, load};

/// The estimated maximum cost of the one rule of `schema` compiled as kube's tests compile
/// it (not a resource's root, the new expressions' environment), or the compile error.
fn max_cost(schema: &Value) -> Result<u64, String> {
    let rules = compile_rules(schema, false, &new_expressions(KUBERNETES));
    let [rule] = &rules[..] else {
        return Err(format!("{} results", rules.len()));
    };
    match &rule.program {
        Ok(Some(_)) => Ok(rule.max_cost),
        Ok(None) => Err("no program".to_owned()),
        Err(error) => Err(error.clone()),
    }
}

#[test]
fn estimated_cost_stability() {
    let table = load("estimated_cost_stability.json");
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        for (rule, expected) in case["expectCost"].as_object().unwrap() {
            total += 1;
            let key = format!("{} :: {rule}", case["name"].as_str().unwrap());
            let mut schema = case["schema"].clone();
            schema["x-kubernetes-validations"] = json!([{"rule": rule}]);
            let expected = expected.as_u64().unwrap();
            match max_cost(&schema) {
                Ok(cost) if cost == expected => {}
                Ok(cost) => {
                    dump(&key, &format!("estimate {cost}, kube's {expected}"));
                    failures.insert(key);
                }
                Err(error) => {
                    dump(&key, &format!("kube's {expected}; kapi: {error}"));
                    failures.insert(key);
                }
            }
        }
    }
    compare("estimated_cost_stability", failures, total);
}

#[test]
fn cost_estimation() {
    let table = load("cost_estimation.json");
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let variants = [
            (
                "calc",
                "schemaCalc",
                "expectedCalcCost",
                "expectCalcCostExceedsLimit",
            ),
            (
                "set",
                "schemaSet",
                "expectedSetCost",
                "expectedSetCostExceedsLimit",
            ),
        ];
        for (variant, schema, exact, at_least) in variants {
            total += 1;
            let key = format!("{name} :: {variant}");
            let exact = case[exact].as_u64().unwrap_or(0);
            let at_least = case[at_least].as_u64().unwrap_or(0);
            let detail = match max_cost(&case[schema]) {
                Ok(cost) if exact > 0 && cost != exact => {
                    format!("estimate {cost}, kube's {exact}")
                }
                Ok(cost) if at_least > 0 && cost < at_least => {
                    format!("estimate {cost}, kube's at least {at_least}")
                }
                Ok(_) => continue,
                Err(error) => format!("kapi: {error}"),
            };
            dump(&key, &detail);
            failures.insert(key);
        }
    }
    compare("cost_estimation", failures, total);
}
