//! kube's admission expression cases (`k8s.io/apiserver` v0.32.1,
//! `pkg/admission/plugin/cel/condition_test.go` `TestCondition` and `composition_test.go`
//! `TestCompositedPolicies`), as data (`data/admission-cases.json`): each case's
//! expressions compiled in the policy environment with its variables, evaluated on its
//! object, old object, params, namespace object and request, and compared with kube's
//! results (a boolean, or an error containing kube's text). A case kapi cannot run as
//! kube's test does says why (`skip`).

use std::sync::Arc;

use kapi_cel::admission::{
    Compiler, Declarations, Evaluation, Inputs, Outcome, POLICY_BUDGET, Returns, value,
};
use kapi_cel::environment::{KUBERNETES, stored_expressions};
use kapi_cel::library::kube::authz::{Authorize, AuthorizerValue, Decision, Request};
use kapi_cel::value::Value;
use kapi_core::user::UserInfo;
use serde_json::Value as Json;

/// kube's fake authorizers: one decision for every check.
struct Fixed(Decision);

impl Authorize for Fixed {
    fn authorize(&self, _: &Request) -> Decision {
        self.0.clone()
    }
}

fn authorizer(case: &Json) -> Option<(Value, Value)> {
    let fake = &case["authorizer"];
    let decision = Decision {
        allowed: fake["allowed"].as_bool().unwrap_or(false),
        reason: fake["reason"].as_str().unwrap_or_default().to_owned(),
        error: fake["error"].as_str().map(str::to_owned),
    };
    let fixed: Arc<dyn Authorize> = Arc::new(Fixed(decision));
    let user = UserInfo::default();
    Some((
        AuthorizerValue::value(Arc::clone(&fixed), user.clone()),
        AuthorizerValue::request_resource(fixed, user, &Request::default()),
    ))
}

/// What one expression gave: its result, or its error (compile errors included).
fn results(case: &Json) -> Result<Vec<Result<bool, String>>, String> {
    let mut compiler = Compiler::new(
        &stored_expressions(KUBERNETES),
        Declarations {
            params: case["params_declared"].as_bool().unwrap_or(false),
            authorizer: true,
            ..Default::default()
        },
    );
    let mut variables = Vec::new();
    for variable in case["variables"].as_array().into_iter().flatten() {
        let name = variable["name"].as_str().unwrap().to_owned();
        let compiled = compiler.variable(&name, variable["expression"].as_str().unwrap());
        variables.push((name, compiled));
    }
    let bound: Vec<(&str, Result<&kapi_cel::program::Compiled, &str>)> = (variables.iter())
        .map(|(name, compiled)| (name.as_str(), compiled.as_ref().map_err(String::as_str)))
        .collect();
    let input = |key: &str| case.get(key).map_or(Value::Null, value);
    let inputs = Inputs {
        object: input("object"),
        old_object: input("oldObject"),
        request: input("request"),
        params: input("params"),
        namespace_object: input("namespaceObject"),
        authorizer: authorizer(case),
    };
    let budget = case["budget"].as_u64().unwrap_or(POLICY_BUDGET);
    let mut evaluation = Evaluation::new(inputs, &bound, budget);
    let mut out = Vec::new();
    for source in case["expressions"].as_array().unwrap() {
        let source = source.as_str().unwrap();
        let result = match compiler.compile(source, Returns::Bool) {
            Err(error) => Err(format!("compilation error: {error}")),
            Ok(program) => match evaluation.eval(&program, source)? {
                Outcome::Value(Value::Bool(b)) => Ok(b),
                Outcome::Value(other) => Err(format!("not a bool: {other:?}")),
                Outcome::Error(error) => Err(error),
            },
        };
        out.push(result);
    }
    Ok(out)
}

#[test]
fn kubes_admission_expression_cases() {
    let text = include_str!("data/admission-cases.json");
    let cases: Vec<Json> = serde_json::from_str(text).unwrap();
    let (mut passed, mut skipped, mut failures) = (0, 0, Vec::new());
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        if case.get("skip").is_some() {
            skipped += 1;
            continue;
        }
        let expect = &case["expect"];
        let got = results(case);
        let ok = match (expect.get("results"), expect.get("error"), &got) {
            (Some(wanted), _, Ok(got)) => {
                let wanted = wanted.as_array().unwrap();
                wanted.len() == got.len()
                    && wanted.iter().zip(got).all(|(w, g)| match (w, g) {
                        (Json::Bool(w), Ok(g)) => w == g,
                        (w, Err(e)) => w["error"].as_str().is_some_and(|t| e.contains(t)),
                        _ => false,
                    })
            }
            // An error anywhere: a compile or evaluation error, or the budget.
            (None, Some(text), got) => {
                let text = text.as_str().unwrap();
                match got {
                    Err(e) => e.contains(text),
                    Ok(got) => got
                        .iter()
                        .any(|g| g.as_ref().is_err_and(|e| e.contains(text))),
                }
            }
            _ => false,
        };
        match ok {
            true => passed += 1,
            false => failures.push(format!("{name}: expected {expect}, got {got:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(passed + skipped, cases.len());
    assert!(passed >= 29, "{passed} passed, {skipped} skipped");
}
