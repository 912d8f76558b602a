//! kube's tests of its CEL libraries (`k8s.io/apiserver/pkg/cel/library`: IP, CIDR, URLs,
//! quantity, format), ported as data (`tests/data/kube/library/`), run against kapi's
//! engine: each expression's result or error, its runtime cost where kube's cost tests
//! give one, and the validation rules that use the libraries.
//!
//! A case kapi cannot pass carries a `"skip"` with the reason; a skipped case that passes
//! fails the test, so that the reason is removed with the cause.

use kapi_cel::environment::{KUBERNETES, Version, stored_expressions};
use kapi_cel::interpreter::Failure;
use kapi_cel::library::Env;
use kapi_cel::library::kube::cidr::CidrValue;
use kapi_cel::library::kube::ip::IpValue;
use kapi_cel::library::kube::quantity::QuantityValue;
use kapi_cel::program::compile;
use kapi_cel::validation::{RUNTIME_BUDGET, Validator};
use kapi_cel::value::Value;
use kapi_core::net::ip;
use kapi_core::quantity::Quantity;
use regex::Regex;
use serde_json::{Value as Json, json};

fn load(name: &str) -> Json {
    let path = format!(
        "{}/tests/data/kube/library/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).expect("a table")).expect("JSON")
}

/// What running one table found.
#[derive(Default)]
struct Tally {
    passed: usize,
    skipped: usize,
    /// Cases that failed, and skipped cases that passed: what differs.
    wrong: Vec<String>,
}

impl Tally {
    /// Records a case's outcome (`Err` says what differs), given whether it is skipped.
    fn record(&mut self, key: &str, skip: Option<&str>, outcome: Result<(), String>) {
        match (skip, outcome) {
            (None, Ok(())) => self.passed += 1,
            (None, Err(e)) => self.wrong.push(format!("{key}: {e}")),
            (Some(_), Err(_)) => self.skipped += 1,
            (Some(reason), Ok(())) => self
                .wrong
                .push(format!("{key}: passes, but is skipped ({reason})")),
        }
    }

    fn check(self, table: &str) {
        eprintln!(
            "{table}: {} passed, {} skipped, {} wrong",
            self.passed,
            self.skipped,
            self.wrong.len()
        );
        assert!(self.wrong.is_empty(), "{table}:\n{}", self.wrong.join("\n"));
    }
}

/// The environment of stored rules at kapi's Kubernetes version.
fn env() -> Env {
    Env::new(&stored_expressions(KUBERNETES))
}

/// Evaluates `expr` without variables: its value or error, and its runtime cost.
fn run(env: &Env, expr: &str) -> Result<(Result<Value, String>, u64), String> {
    let compiled = compile(expr, env).map_err(|e| format!("does not compile: {e}"))?;
    let (result, cost) = compiled.program.eval(&[], u64::MAX);
    let result = result.map_err(|f| match f {
        Failure::Error(e) => e.to_string(),
        Failure::CostLimitExceeded => "cost limit exceeded".to_owned(),
    });
    Ok((result, cost))
}

/// Whether `value` is what the table's `result` encodes, compared as kube's `Equal` does.
fn matches(value: &Value, expected: &Json) -> bool {
    let (kind, want) = expected
        .as_object()
        .and_then(|o| o.iter().next())
        .expect("a result");
    match (kind.as_str(), value) {
        ("bool", Value::Bool(b)) => want.as_bool() == Some(*b),
        ("int", Value::Int(i)) => want.as_i64() == Some(*i),
        ("double", Value::Double(d)) => want.as_f64() == Some(*d),
        ("string", Value::String(s)) => want.as_str() == Some(&**s),
        ("ip", v) => v
            .downcast::<IpValue>()
            .is_some_and(|a| want.as_str() == Some(&ip::format(a.0))),
        ("cidr", v) => v
            .downcast::<CidrValue>()
            .is_some_and(|c| want.as_str() == Some(&c.0.to_string())),
        ("quantity", v) => {
            let want = Quantity::parse(want.as_str().expect("a quantity")).expect("valid");
            v.downcast::<QuantityValue>().is_some_and(|q| q.0 == want)
        }
        ("optionalNone", Value::Optional(o)) => o.is_none(),
        ("optionalOf", Value::Optional(Some(v))) => {
            let want: Vec<Value> = (want.as_array().expect("strings").iter())
                .map(|s| Value::string(s.as_str().expect("a string")))
                .collect();
            v.equals(&Value::list(want))
        }
        _ => false,
    }
}

/// Runs a case of a library test: its compile errors, runtime error or result.
fn library_case(env: &Env, case: &Json) -> Result<(), String> {
    let expr = case["expr"].as_str().expect("an expression");
    if let Some(patterns) = case["compileErrors"].as_array() {
        let issues = match compile(expr, env) {
            Ok(_) => return Err("compiles; kube refuses it".to_owned()),
            Err(issues) => issues.0,
        };
        let patterns: Vec<Regex> = (patterns.iter())
            .map(|p| Regex::new(p.as_str().expect("a pattern")).expect("a regexp"))
            .collect();
        let messages: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
        let unmatched_pattern = patterns
            .iter()
            .find(|p| !messages.iter().any(|m| p.is_match(m)));
        let unmatched_issue = messages
            .iter()
            .find(|m| !patterns.iter().any(|p| p.is_match(m)));
        return match (unmatched_pattern, unmatched_issue) {
            (None, None) => Ok(()),
            _ => Err(format!("compile errors {messages:?}")),
        };
    }
    let (result, _) = run(env, expr)?;
    match (&result, case) {
        (Err(e), c) if c["error"].is_string() => (c["error"] == **e)
            .then_some(())
            .ok_or(format!("error {e:?}")),
        (Err(e), c) if c["errorMatches"].is_string() => {
            let pattern = Regex::new(c["errorMatches"].as_str().expect("a pattern")).unwrap();
            (pattern.is_match(e))
                .then_some(())
                .ok_or(format!("error {e:?}"))
        }
        (Ok(v), c) if !c["result"].is_null() => (matches(v, &c["result"]))
            .then_some(())
            .ok_or(format!("result {v}")),
        (other, _) => Err(format!("{other:?}")),
    }
}

/// Runs the cases of `cases` (a list under a table's key) with `run_case`.
fn each(
    tally: &mut Tally,
    label: &str,
    cases: &Json,
    run_case: impl Fn(&Json) -> Result<(), String>,
) {
    for (i, case) in cases.as_array().into_iter().flatten().enumerate() {
        let name = case["name"].as_str().unwrap_or_default();
        let expr = case["expr"].as_str().unwrap_or_default();
        let key = format!("{label}[{i}] {name} `{expr}`");
        tally.record(&key, case["skip"].as_str(), run_case(case));
    }
}

/// The runtime costs of kube's cost tests: the cost and no error.
fn costs(tally: &mut Tally, env: &Env, table: &Json) {
    for costs in table["costs"].as_array().into_iter().flatten() {
        let test = costs["source"]["test"].as_str().unwrap_or_default();
        each(tally, test, &costs["cases"], |case| {
            let (result, cost) = run(env, case["expr"].as_str().expect("an expression"))?;
            let want = case["runtimeCost"].as_u64().expect("a cost");
            match result {
                Ok(_) if cost == want => Ok(()),
                Ok(_) => Err(format!("runtime cost {cost}, kube's {want}")),
                Err(e) => Err(format!("error {e:?}")),
            }
        });
    }
}

/// Rules that must evaluate to true, without variables, in `env`.
fn true_rules(tally: &mut Tally, env: &Env, label: &str, rules: &Json, skips: &Json) {
    for rule in rules.as_array().into_iter().flatten() {
        let rule = rule.as_str().expect("a rule");
        let outcome = run(env, rule).and_then(|(result, _)| match result {
            Ok(Value::Bool(true)) => Ok(()),
            other => Err(format!("{other:?}")),
        });
        tally.record(&format!("{label} `{rule}`"), skips[rule].as_str(), outcome);
    }
}

/// A library table: its cases (and cases added later), costs and validation rules.
fn library_table(name: &str) {
    let table = load(name);
    let env = env();
    let mut tally = Tally::default();
    each(&mut tally, "cases", &table["cases"], |c| {
        library_case(&env, c)
    });
    for extra in ["casesAddedLater", "generatedCases"] {
        each(&mut tally, extra, &table[extra]["cases"], |c| {
            library_case(&env, c)
        });
    }
    costs(&mut tally, &env, &table);
    let rules = &table["validationRules"];
    true_rules(
        &mut tally,
        &env,
        "validationRules",
        &rules["valid"],
        &rules["skip"],
    );
    tally.check(name);
}

#[test]
fn ip() {
    library_table("ip.json");
}

#[test]
fn cidr() {
    library_table("cidr.json");
}

#[test]
fn quantity() {
    library_table("quantity.json");
}

#[test]
fn format() {
    library_table("format.json");
}

#[test]
fn urls() {
    let table = load("urls.json");
    let features = stored_expressions(KUBERNETES);
    let mut tally = Tally::default();
    let mut schema = table["schema"].clone();
    let mut validate = |rule: &str, object: &Json| {
        schema["x-kubernetes-validations"] = json!([{ "rule": rule }]);
        let validator = Validator::new(&schema, &features).ok_or("does not compile")?;
        let outcome = validator.validate(object, None, RUNTIME_BUDGET);
        let errors: Vec<String> = outcome.errors.iter().map(ToString::to_string).collect();
        match errors.is_empty() {
            true => Ok(RUNTIME_BUDGET as i64 - outcome.remaining),
            false => Err(format!("errors {errors:?}")),
        }
    };
    let skips = &table["skip"];
    for rule in table["valid"].as_array().into_iter().flatten() {
        let rule = rule.as_str().expect("a rule");
        let outcome = validate(rule, &table["object"]).map(|_| ());
        tally.record(&format!("valid `{rule}`"), skips[rule].as_str(), outcome);
    }
    let cost_rule = &table["costRule"];
    let rule = cost_rule["rule"].as_str().expect("a rule");
    let want = cost_rule["expectedCost"].as_i64().expect("a cost");
    let outcome = validate(rule, &cost_rule["object"]).and_then(|spent| {
        (spent == want)
            .then_some(())
            .ok_or(format!("cost {spent}, kube's {want}"))
    });
    tally.record(&format!("costRule `{rule}`"), skips[rule].as_str(), outcome);
    costs(&mut tally, &env(), &table);
    // In kube's environment of Kubernetes 1.23, which already had the URL library.
    let old = Env::new(&stored_expressions(Version(1, 23)));
    let rules = &table["environmentRules"];
    true_rules(&mut tally, &old, "environmentRules", &rules["exprs"], skips);
    tally.check("urls.json");
}
