//! kube's own CEL test tables, ported as data (`tests/data/kube/`, see its README), run
//! against kapi's engine: the runtime costs of `TestCelCostStability` and the verdicts of
//! `TestValidationExpressions`. Cases kapi does not yet pass are listed, with their
//! reason, in `tests/data/kube/known_failures.json`; a listed case that passes, or an
//! unlisted one that fails, fails the test, so the list only ever shrinks.

use std::collections::BTreeSet;

use kapi_cel::environment::{KUBERNETES, stored_expressions};
use kapi_cel::validation::{RUNTIME_BUDGET, Validator};
use serde_json::{Value, json};

mod common;

use common::{compare, dump, load};

/// `schema` with its root's rules replaced by `rule`.
fn with_rule(schema: &Value, rule: &str) -> Value {
    let mut schema = schema.clone();
    schema["x-kubernetes-validations"] = json!([{"rule": rule}]);
    schema
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

/// Our error as kube's validator prints it under the root path `root`.
fn rooted(error: &kapi_cel::validation::RuleError) -> String {
    root_path(&error.to_string())
}

/// A message whose path is kapi's (`<nil>` at the root) with kube's root `root` before it.
fn root_path(text: &str) -> String {
    match text.strip_prefix("<nil>") {
        Some(rest) => format!("root{rest}"),
        None if text.starts_with('[') => format!("root{text}"),
        None => format!("root.{text}"),
    }
}

#[test]
fn validation_at_schema_levels() {
    let table = load("validation_at_schema_levels.json");
    let features = stored_expressions(KUBERNETES);
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        total += 1;
        let name = case["name"].as_str().unwrap().to_owned();
        let old = case.get("oldObject").filter(|o| !o.is_null());
        let errors: Vec<String> = Validator::new(&case["schema"], &features)
            .map(|v| v.validate(&case["object"], old, u64::MAX >> 1).errors)
            .unwrap_or_default()
            .iter()
            .map(rooted)
            .collect();
        let mut expected: Vec<&str> = (case["errors"].as_array().unwrap().iter())
            .map(|e| e.as_str().unwrap())
            .collect();
        let mut matched = errors.len() == expected.len();
        for error in &errors {
            match expected.iter().position(|e| error.contains(e)) {
                Some(at) => {
                    expected.remove(at);
                }
                None => matched = false,
            }
        }
        if !matched {
            dump(
                &name,
                &format!("kube: {:?}; kapi: {errors:?}", case["errors"]),
            );
            failures.insert(name);
        }
    }
    compare("validation_at_schema_levels", failures, total);
}

#[test]
fn message_expression() {
    let table = load("message_expression.json");
    let features = stored_expressions(KUBERNETES);
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        total += 1;
        let name = case["name"].as_str().unwrap().to_owned();
        let budget = case["costBudget"].as_u64().unwrap_or(RUNTIME_BUDGET);
        let limit = case
            .get("perCallLimit")
            .and_then(Value::as_u64)
            .unwrap_or(1_000_000);
        let outcome = Validator::new_at(&case["schema"], false, &features)
            .map(|v| v.validate_limited(&case["object"], None, budget, limit));
        let Some(outcome) = outcome else {
            failures.insert(name);
            continue;
        };
        let errors: Vec<String> = outcome.errors.iter().map(rooted).collect();
        let want = case["expectedValidationErr"].as_str().unwrap_or_default();
        let mut ok = errors.len() == 1 && errors[0].contains(want);
        if let Some(remaining) = case.get("expectedRemainingBudget").and_then(Value::as_i64)
            && remaining != 0
        {
            ok &= outcome.remaining == remaining;
        }
        match case.get("expectedLogErr").and_then(Value::as_str) {
            Some(log) => ok &= outcome.logs.iter().any(|l| l.contains(log)),
            None => ok &= outcome.logs.is_empty(),
        }
        if !ok {
            let detail = format!(
                "kube: {want:?}; kapi: {errors:?}, remaining {}, logs {:?}",
                outcome.remaining, outcome.logs
            );
            dump(&name, &detail);
            failures.insert(name);
        }
    }
    compare("message_expression", failures, total);
}

#[test]
fn reason_and_field_path() {
    let table = load("reason_and_field_path.json");
    let features = stored_expressions(KUBERNETES);
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        total += 1;
        let name = case["name"].as_str().unwrap().to_owned();
        let errors = Validator::new(&case["schema"], &features)
            .map(|v| v.validate(&case["object"], None, RUNTIME_BUDGET).errors)
            .unwrap_or_default();
        let mut got: Vec<(String, String)> = (errors.iter())
            .map(|e| {
                use kapi_cel::validation::ErrorKind;
                let kind = match e.kind {
                    ErrorKind::Invalid => "FieldValueInvalid",
                    ErrorKind::Forbidden => "FieldValueForbidden",
                    ErrorKind::Required => "FieldValueRequired",
                    ErrorKind::Duplicate => "FieldValueDuplicate",
                    ErrorKind::Internal => "InternalError",
                };
                let field = match e.path.as_str() {
                    "<nil>" => "root".to_owned(),
                    path => format!("root.{path}"),
                };
                (kind.to_owned(), field)
            })
            .collect();
        let mut want: Vec<(String, String)> = (case["errors"].as_array().unwrap().iter())
            .map(|e| {
                (
                    e["type"].as_str().unwrap().to_owned(),
                    e["field"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        got.sort();
        want.sort();
        if got != want {
            dump(&name, &format!("kube: {want:?}; kapi: {got:?}"));
            failures.insert(name);
        }
    }
    compare("reason_and_field_path", failures, total);
}

/// Whether `errors` match `expected` one to one by substring (each consumed once).
fn one_to_one(errors: &[String], expected: &[Value]) -> bool {
    let mut expected: Vec<&str> = expected.iter().filter_map(Value::as_str).collect();
    if errors.len() != expected.len() {
        return false;
    }
    errors.iter().all(
        |error| match expected.iter().position(|e| error.contains(e)) {
            Some(at) => {
                expected.remove(at);
                true
            }
            None => false,
        },
    )
}

#[test]
fn ratcheting() {
    let table = load("ratcheting.json");
    let features = stored_expressions(KUBERNETES);
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        total += 1;
        let name = case["name"].as_str().unwrap().to_owned();
        let budget = case
            .get("runtimeCostBudget")
            .and_then(Value::as_u64)
            .unwrap_or(RUNTIME_BUDGET);
        let old = case.get("oldObject").filter(|o| !o.is_null());
        let outcome = Validator::new_at(&case["schema"], false, &features)
            .map(|v| v.validate(&case["object"], old, budget))
            .unwrap_or_default();
        let errors: Vec<String> = outcome.errors.iter().map(rooted).collect();
        let warnings: Vec<String> = (outcome.warnings.iter()).map(|w| root_path(w)).collect();
        let expected = case["errors"].as_array().cloned().unwrap_or_default();
        let wanted: Vec<&str> = (case["warnings"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .collect();
        let ok = errors.len() == expected.len()
            && expected
                .iter()
                .filter_map(Value::as_str)
                .all(|e| errors.iter().any(|x| x.contains(e)))
            && warnings.len() == wanted.len()
            && wanted.iter().all(|w| warnings.iter().any(|x| x == w));
        if !ok {
            dump(
                &name,
                &format!(
                    "kube: errors {expected:?} warnings {wanted:?}; kapi: errors {errors:?} warnings {warnings:?}"
                ),
            );
            failures.insert(name);
        }
    }
    compare("ratcheting", failures, total);
}

#[test]
fn optional_old_self() {
    let features = stored_expressions(KUBERNETES);
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in load("optional_old_self.json")["cases"].as_array().unwrap() {
        total += 1;
        let name = format!("optional_old_self :: {}", case["name"].as_str().unwrap());
        let old = case.get("oldObject").filter(|o| !o.is_null());
        let errors: Vec<String> = Validator::new(&case["schema"], &features)
            .map(|v| v.validate(&case["object"], old, u64::MAX >> 1).errors)
            .unwrap_or_default()
            .iter()
            .map(rooted)
            .collect();
        if !one_to_one(&errors, case["errors"].as_array().unwrap()) {
            dump(
                &name,
                &format!("kube: {:?}; kapi: {errors:?}", case["errors"]),
            );
            failures.insert(name);
        }
    }
    for case in load("optional_old_self_check_for_null.json")["cases"]
        .as_array()
        .unwrap()
    {
        total += 1;
        let name = format!("check_for_null :: {}", case["name"].as_str().unwrap());
        let validator = Validator::new_at(&case["schema"], false, &features);
        let errors: Vec<String> = [None, Some(&case["oldObject"])]
            .into_iter()
            .flat_map(|old| {
                let outcome = validator
                    .as_ref()
                    .map(|v| v.validate(&case["object"], old, u64::MAX >> 1));
                outcome
                    .unwrap_or_default()
                    .errors
                    .iter()
                    .map(rooted)
                    .collect::<Vec<_>>()
            })
            .collect();
        if validator.is_none() || !errors.is_empty() {
            dump(&name, &format!("kube: no errors; kapi: {errors:?}"));
            failures.insert(name);
        }
    }
    for case in load("optional_old_self_is_optional_type.json")["cases"]
        .as_array()
        .unwrap()
    {
        total += 1;
        let name = format!("is_optional_type :: {}", case["name"].as_str().unwrap());
        let errors: Vec<String> = Validator::new_at(&case["schema"], false, &features)
            .map(|v| {
                v.validate(&case["object"], Some(&case["object"]), u64::MAX >> 1)
                    .errors
            })
            .unwrap_or_default()
            .iter()
            .map(rooted)
            .collect();
        if !one_to_one(&errors, case["errors"].as_array().unwrap()) {
            dump(
                &name,
                &format!("kube: {:?}; kapi: {errors:?}", case["errors"]),
            );
            failures.insert(name);
        }
    }
    compare("optional_old_self", failures, total);
}

/// Whether `compiled` meets one of the compilation table's matchers.
fn meets(compiled: &kapi_cel::validation::CompiledRule, matcher: &Value) -> bool {
    let contains = |result: &Result<Option<kapi_cel::program::Compiled>, String>| match result {
        Err(detail) => detail.contains(matcher["contains"].as_str().unwrap_or_default()),
        Ok(_) => false,
    };
    match matcher["kind"].as_str().unwrap_or_default() {
        "noError" => compiled.program.is_ok(),
        "error" => contains(&compiled.program),
        "messageExpressionError" => contains(&compiled.message),
        "usesOldSelf" => compiled.uses_old_self == matcher["value"].as_bool().unwrap_or_default(),
        "programIsNil" => matches!(compiled.program, Ok(None)),
        "all" => matcher["of"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| meets(compiled, m)),
        _ => false,
    }
}

#[test]
fn compilation() {
    use kapi_cel::environment::new_expressions;
    let table = load("compilation.json");
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        if case.get("skip").is_some() {
            continue;
        }
        total += 1;
        let name = case["name"].as_str().unwrap().to_owned();
        let features = match case["unmodified"].as_bool() == Some(true) {
            true => stored_expressions(KUBERNETES),
            false => new_expressions(KUBERNETES),
        };
        let compiled = kapi_cel::validation::compile_rules(&case["schema"], false, &features);
        let expected = case["expectedResults"].as_array().unwrap();
        let ok = compiled.len() == expected.len()
            && compiled.iter().zip(expected).all(|(c, m)| meets(c, m));
        if !ok {
            let got: Vec<String> = (compiled.iter())
                .map(|c| {
                    format!(
                        "{:?} / {:?} / oldSelf {}",
                        c.program.as_ref().err(),
                        c.message.as_ref().err(),
                        c.uses_old_self
                    )
                })
                .collect();
            dump(&name, &format!("kube: {expected:?}; kapi: {got:?}"));
            failures.insert(name);
        }
    }
    compare("compilation", failures, total);
}

#[test]
fn validate_field_path() {
    let table = load("validate_field_path.json");
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        total += 1;
        let name = format!(
            "{} :: {}",
            case["name"].as_str().unwrap(),
            case["fieldPath"].as_str().unwrap()
        );
        let got = kapi_cel::validation::valid_field_path(
            case["fieldPath"].as_str().unwrap(),
            &case["schema"],
        );
        let ok = match (
            &got,
            case["errDetail"].as_str(),
            case["validFieldPath"].as_str(),
        ) {
            (Err(e), Some(want), _) => e.contains(want),
            (Ok(path), None, Some(want)) => path == want,
            (Ok(_), None, None) => true,
            _ => false,
        };
        if !ok {
            dump(
                &name,
                &format!(
                    "kube: {:?} {:?}; kapi: {got:?}",
                    case["errDetail"], case["validFieldPath"]
                ),
            );
            failures.insert(name);
        }
    }
    compare("validate_field_path", failures, total);
}

#[test]
fn validation_limit() {
    let table = load("validation_limit.json");
    let features = stored_expressions(KUBERNETES);
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        for rule in case["valid"].as_array().unwrap() {
            total += 1;
            let rule = rule.as_str().unwrap();
            let name = format!("{} :: {rule}", case["name"].as_str().unwrap());
            let schema = with_rule(&case["schema"], rule);
            let out_of_budget = Validator::new_at(&schema, false, &features)
                .map(|v| v.validate(&case["object"], None, 0).errors)
                .unwrap_or_default();
            let out_of_limit = Validator::new(&schema, &features)
                .map(|v| {
                    v.validate_limited(&case["object"], None, RUNTIME_BUDGET, 0)
                        .errors
                })
                .unwrap_or_default();
            let budget = "validation failed due to running out of cost budget, no further validation rules will be run";
            let limit =
                "no further validation rules will be run due to call cost exceeds limit for rule";
            let ok = out_of_budget.len() == 1
                && out_of_budget[0].to_string().contains(budget)
                && out_of_limit.iter().any(|e| e.to_string().contains(limit));
            if !ok {
                dump(
                    &name,
                    &format!("kapi: {out_of_budget:?} / {out_of_limit:?}"),
                );
                failures.insert(name);
            }
        }
    }
    compare("validation_limit", failures, total);
}

#[test]
fn max_recursion_depth() {
    let table = load("max_recursion_depth.json");
    let features = stored_expressions(KUBERNETES);
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    for case in table["cases"].as_array().unwrap() {
        let as_list = |v: &Value| match v {
            Value::Array(items) => items.clone(),
            Value::String(_) => vec![v.clone()],
            _ => Vec::new(),
        };
        for rule in as_list(&case["valid"]) {
            total += 1;
            let rule = rule.as_str().unwrap();
            let errors = Validator::new_at(&with_rule(&case["schema"], rule), false, &features)
                .map(|v| v.validate(&case["object"], None, RUNTIME_BUDGET).errors);
            if errors.as_ref().is_none_or(|e| !e.is_empty()) {
                dump("valid", &format!("{errors:?}"));
                failures.insert("valid".to_owned());
            }
        }
        for (rule, expected) in case["errors"].as_object().into_iter().flatten() {
            total += 1;
            let expected = expected.as_str().unwrap_or_default();
            let errors = Validator::new(&with_rule(&case["schema"], rule), &features)
                .map(|v| v.validate(&case["object"], None, RUNTIME_BUDGET).errors)
                .unwrap_or_default();
            if !errors.iter().any(|e| e.to_string().contains(expected)) {
                let errors: Vec<String> = errors
                    .iter()
                    .map(|e| e.to_string().chars().take(300).collect())
                    .collect();
                dump("error", &format!("kube: {expected:?}; kapi: {errors:?}"));
                failures.insert("error".to_owned());
            }
        }
    }
    compare("max_recursion_depth", failures, total);
}
