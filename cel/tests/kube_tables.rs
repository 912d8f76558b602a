//! kube's own CEL test tables, ported as data (`tests/data/kube/`, see its README), run
//! against kapi's engine: the runtime costs of `TestCelCostStability` and the verdicts of
//! `TestValidationExpressions`. Cases kapi does not yet pass are listed, with their
//! reason, in `tests/data/kube/known_failures.json`; a listed case that passes, or an
//! unlisted one that fails, fails the test, so the list only ever shrinks.

use std::collections::BTreeSet;

use kapi_cel::environment::{KUBERNETES, stored_expressions};
use kapi_cel::validation::{RUNTIME_BUDGET, Validator};
use serde_json::{Value, json};

fn load(name: &str) -> Value {
    let path = format!("{}/tests/data/kube/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("a table")).expect("JSON")
}

/// `schema` with its root's rules replaced by `rule`.
fn with_rule(schema: &Value, rule: &str) -> Value {
    let mut schema = schema.clone();
    schema["x-kubernetes-validations"] = json!([{"rule": rule}]);
    schema
}

/// The known failures of `table`: case and rule, joined by ` :: `.
fn known(table: &str) -> BTreeSet<String> {
    let known = load("known_failures.json");
    (known[table]["cases"].as_object().into_iter().flatten())
        .map(|(k, _)| k.clone())
        .collect()
}

/// Checks the failures found against the known ones, both ways.
fn compare(table: &str, failures: BTreeSet<String>, total: usize) {
    let known = known(table);
    let new: Vec<_> = failures.difference(&known).collect();
    let fixed: Vec<_> = known.difference(&failures).collect();
    eprintln!(
        "{table}: {} of {total} pass, {} known failures",
        total - failures.len(),
        known.len()
    );
    assert!(
        new.is_empty() && fixed.is_empty(),
        "{table}: new failures {new:#?}\nfixed (remove from known_failures.json) {fixed:#?}"
    );
}

/// With `KAPI_CEL_DUMP` set, prints a failure and what differs, one per line (to update
/// `known_failures.json`).
fn dump(key: &str, detail: &str) {
    if std::env::var_os("KAPI_CEL_DUMP").is_some() {
        println!("DUMP\t{key}\t{}", detail.replace(['\t', '\n'], " "));
    }
}

#[test]
fn cost_stability() {
    let table = load("cost_stability.json");
    let features = stored_expressions(KUBERNETES);
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        for (rule, cost) in case["expectCost"].as_object().unwrap() {
            total += 1;
            let key = format!("{} :: {rule}", case["name"].as_str().unwrap());
            let Some(validator) = Validator::new(&with_rule(&case["schema"], rule), &features)
            else {
                failures.insert(key);
                continue;
            };
            let outcome = validator.validate(&case["object"], None, RUNTIME_BUDGET);
            let spent = RUNTIME_BUDGET as i64 - outcome.remaining;
            if !outcome.errors.is_empty() || spent != cost.as_i64().unwrap() {
                let errors: Vec<String> = outcome.errors.iter().map(ToString::to_string).collect();
                dump(
                    &key,
                    &format!("cost {spent}, kube's {cost}; errors {errors:?}"),
                );
                failures.insert(key);
            }
        }
    }
    compare("cost_stability", failures, total);
}

#[test]
fn validation_expressions() {
    let table = load("validation_expressions.json");
    let features = stored_expressions(KUBERNETES);
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let old = case.get("oldObject").filter(|o| !o.is_null());
        for rule in case["valid"].as_array().into_iter().flatten() {
            let rule = rule.as_str().unwrap();
            total += 1;
            let errors = Validator::new(&with_rule(&case["schema"], rule), &features)
                .map(|v| v.validate(&case["object"], old, RUNTIME_BUDGET).errors);
            if errors.as_ref().is_none_or(|e| !e.is_empty()) {
                let key = format!("{name} :: {rule}");
                let errors: Vec<String> = errors
                    .unwrap_or_default()
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                dump(&key, &format!("valid in kube; kapi: {errors:?}"));
                failures.insert(key);
            }
        }
        for (rule, expected) in case["errors"].as_object().into_iter().flatten() {
            total += 1;
            let expected = expected.as_str().unwrap();
            let errors = Validator::new(&with_rule(&case["schema"], rule), &features)
                .map(|v| v.validate(&case["object"], old, RUNTIME_BUDGET).errors)
                .unwrap_or_default();
            if errors.is_empty() || !errors.iter().all(|e| e.to_string().contains(expected)) {
                let key = format!("{name} :: {rule}");
                let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
                dump(&key, &format!("kube: {expected:?}; kapi: {errors:?}"));
                failures.insert(key);
            }
        }
    }
    compare("validation_expressions", failures, total);
}
