//! Admission expressions: declarations, compile errors, variables, budgets and the
//! authorizer library, against kube's wording.

use std::sync::{Arc, Mutex};

use serde_json::json;

use super::*;
use crate::environment::{KUBERNETES, stored_expressions};
use crate::library::kube::authz::{Authorize, AuthorizerValue, Decision, Request};
use kapi_core::user::UserInfo;

fn compiler(declarations: Declarations) -> Compiler {
    Compiler::new(&stored_expressions(KUBERNETES), declarations)
}

fn inputs() -> Inputs {
    Inputs {
        object: value(&json!({"metadata": {"name": "web", "labels": {"app": "a"}},
            "spec": {"replicas": 3}})),
        request: value(&json!({"operation": "CREATE", "name": "web",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "userInfo": {"username": "alice"}})),
        params: value(&json!({"data": {"max": "5"}})),
        ..Inputs::default()
    }
}

fn run(compiler: &Compiler, source: &str) -> Outcome {
    let program = compiler.compile(source, Returns::Any).expect(source);
    let mut evaluation = Evaluation::new(inputs(), &[], POLICY_BUDGET);
    evaluation.eval(&program, source).unwrap()
}

#[test]
fn expressions_see_the_object_request_and_params() {
    let c = compiler(Declarations {
        params: true,
        authorizer: false,
        ..Default::default()
    });
    let yes = Outcome::Value(Value::Bool(true));
    assert_eq!(run(&c, "object.spec.replicas <= int(params.data.max)"), yes);
    assert_eq!(run(&c, "request.operation == 'CREATE'"), yes);
    assert_eq!(run(&c, "request.userInfo.username == 'alice'"), yes);
    // A keyword names its field plainly, as the JSON does.
    assert_eq!(run(&c, "!has(request.namespace)"), yes);
    assert_eq!(run(&c, "oldObject == null"), yes);
    assert_eq!(run(&c, "namespaceObject == null"), yes);
}

#[test]
fn compile_errors_are_worded_as_kube_words_them() {
    let c = compiler(Declarations::default());
    let error = c.compile("params.x == 1", Returns::Bool).unwrap_err();
    assert!(
        error.starts_with(
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'"
        ),
        "{error}"
    );
    assert_eq!(
        c.compile("'a'", Returns::Bool).unwrap_err(),
        "must evaluate to bool but got string"
    );
    assert!(
        c.compile("object.x", Returns::Bool).is_err(),
        "dyn is not bool"
    );
    let error = c.compile("request.nope == 1", Returns::Bool).unwrap_err();
    assert!(error.contains("undefined field 'nope'"), "{error}");
    let error = c
        .compile(
            "namespaceObject.metadata.managedFields == []",
            Returns::Bool,
        )
        .unwrap_err();
    assert!(error.contains("undefined field 'managedFields'"), "{error}");
    assert!(c.compile("'x'", Returns::StringOrNull).is_ok());
    assert!(c.compile("null", Returns::StringOrNull).is_ok());
}

#[test]
fn variables_are_typed_in_order_and_fail_only_where_read() {
    let mut c = compiler(Declarations::default());
    let replicas = c.variable("replicas", "object.spec.replicas").unwrap();
    let double = c.variable("double", "variables.replicas * 2").unwrap();
    let broken = c.variable("broken", "object.spec.missing + 1").unwrap();
    assert!(
        c.compile("variables.later == 1", Returns::Bool)
            .unwrap_err()
            .contains("undefined field 'later'")
    );
    let variables = [
        ("replicas", Ok(&replicas)),
        ("double", Ok(&double)),
        ("broken", Ok(&broken)),
    ];
    let mut evaluation = Evaluation::new(inputs(), &variables, POLICY_BUDGET);
    let reads = c.compile("variables.double == 6", Returns::Bool).unwrap();
    assert_eq!(
        evaluation.eval(&reads, "variables.double == 6").unwrap(),
        Outcome::Value(Value::Bool(true))
    );
    let fails = c.compile("variables.broken > 0", Returns::Bool).unwrap();
    match evaluation.eval(&fails, "variables.broken > 0").unwrap() {
        Outcome::Error(error) => assert!(
            error.starts_with(
                "expression 'variables.broken > 0' resulted in error: composited variable \"broken\" fails to evaluate: no such key: missing"
            ),
            "{error}"
        ),
        other => panic!("{other:?}"),
    }
}

/// kube's variables are lazy: one nothing reads costs nothing, one read twice is
/// evaluated once, and what it costs is charged to the budget when it is first read.
#[test]
fn variables_are_evaluated_when_first_read() {
    let mut c = compiler(Declarations::default());
    let heavy = c
        .variable(
            "heavy",
            "[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, a * b))",
        )
        .unwrap();
    let ten = c.variable("ten", "variables.heavy[0].size()").unwrap();
    let variables = [("heavy", Ok(&heavy)), ("ten", Ok(&ten))];
    let light = c.compile("1 + 1 == 2", Returns::Bool).unwrap();
    let reads = c.compile("variables.ten == 10", Returns::Bool).unwrap();
    // Read twice, they are evaluated (and charged) once.
    let mut evaluation = Evaluation::new(inputs(), &variables, POLICY_BUDGET);
    let mut spent = Vec::new();
    for _ in 0..2 {
        let before = evaluation.remaining();
        let outcome = evaluation.eval(&reads, "variables.ten == 10").unwrap();
        assert_eq!(outcome, Outcome::Value(Value::Bool(true)));
        spent.push(before - evaluation.remaining());
    }
    let (first, again) = (spent[0], spent[1]);
    assert!(first > 100 * again, "{spent:?}");
    // Unread, they cost nothing: a budget too small for them is enough.
    let mut evaluation = Evaluation::new(inputs(), &variables, again);
    let outcome = evaluation.eval(&light, "1 + 1 == 2").unwrap();
    assert_eq!(outcome, Outcome::Value(Value::Bool(true)));
    // Read, they spend the budget.
    let mut poor = Evaluation::new(inputs(), &variables, first - 1);
    assert_eq!(poor.eval(&reads, "").unwrap_err(), OUT_OF_BUDGET);
    // A variable reading the whole map sees those before it, never itself.
    let whole = c
        .variable("whole", "has(variables.ten) && [variables].size() == 1")
        .unwrap();
    let variables = [
        ("heavy", Ok(&heavy)),
        ("ten", Ok(&ten)),
        ("whole", Ok(&whole)),
    ];
    let reads_whole = c.compile("variables.whole", Returns::Bool).unwrap();
    let mut evaluation = Evaluation::new(inputs(), &variables, POLICY_BUDGET);
    let outcome = evaluation.eval(&reads_whole, "variables.whole").unwrap();
    assert_eq!(outcome, Outcome::Value(Value::Bool(true)));
    // A field tested reads every one.
    let tests = c.compile("has(variables.ten)", Returns::Bool).unwrap();
    let mut evaluation = Evaluation::new(inputs(), &variables, POLICY_BUDGET);
    let outcome = evaluation.eval(&tests, "has(variables.ten)").unwrap();
    assert_eq!(outcome, Outcome::Value(Value::Bool(true)));
    assert!(POLICY_BUDGET - evaluation.remaining() > first - again);
}

#[test]
fn the_budget_is_shared_and_the_per_call_limit_is_an_error() {
    let c = compiler(Declarations::default());
    let source = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, \
                  [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, \
                  [1,2,3,4,5,6,7,8,9,10].all(e, a + b + c + d + e > 0)))))";
    let heavy = c.compile(source, Returns::Bool).unwrap();
    let mut evaluation = Evaluation::new(inputs(), &[], POLICY_BUDGET);
    match evaluation.eval(&heavy, source).unwrap() {
        Outcome::Error(error) => assert!(
            error.ends_with("resulted in error: operation cancelled: actual cost limit exceeded"),
            "{error}"
        ),
        other => panic!("{other:?}"),
    }
    let light = c.compile("1 + 1 == 2", Returns::Bool).unwrap();
    let mut poor = Evaluation::new(inputs(), &[], 1);
    assert_eq!(poor.eval(&light, "1 + 1 == 2").unwrap_err(), OUT_OF_BUDGET);
}

/// Allows `alice` to `get` `apps/deployments` in `ns`, and the path `/healthz`; records
/// what it was asked.
#[derive(Default)]
struct Fake(Mutex<Vec<Request>>);

impl Authorize for Fake {
    fn authorize(&self, request: &Request) -> Decision {
        self.0.lock().unwrap().push(request.clone());
        let allowed = request.user.name == "alice"
            && ((request.verb == "get"
                && request.group == "apps"
                && request.resource == "deployments"
                && request.namespace == "ns")
                || request.path.as_deref() == Some("/healthz"));
        Decision {
            allowed,
            reason: if allowed { "granted" } else { "" }.to_owned(),
            error: None,
        }
    }
}

#[test]
fn the_authorizer_asks_the_servers_authorizer_for_the_requesting_user() {
    let c = compiler(Declarations {
        params: false,
        authorizer: true,
        ..Default::default()
    });
    let fake = Arc::new(Fake::default());
    let alice = UserInfo {
        name: "alice".into(),
        ..UserInfo::default()
    };
    let target = Request {
        group: "apps".into(),
        resource: "deployments".into(),
        namespace: "ns".into(),
        name: "web".into(),
        ..Request::default()
    };
    let mut bound = inputs();
    bound.authorizer = Some((
        AuthorizerValue::value(fake.clone(), alice.clone()),
        AuthorizerValue::request_resource(fake.clone(), alice, &target),
    ));
    let mut evaluation = Evaluation::new(bound, &[], POLICY_BUDGET);
    let mut eval = |source: &str| {
        let program = c.compile(source, Returns::Any).expect(source);
        match evaluation.eval(&program, source).unwrap() {
            Outcome::Value(v) => v,
            Outcome::Error(e) => panic!("{e}"),
        }
    };
    let yes = |v: Value| matches!(v, Value::Bool(true));
    assert!(yes(eval(
        "authorizer.group('apps').resource('deployments').namespace('ns').check('get').allowed()"
    )));
    assert!(yes(eval(
        "!authorizer.group('apps').resource('deployments').namespace('other').check('get').allowed()"
    )));
    assert!(yes(eval(
        "authorizer.requestResource.check('get').reason() == 'granted'"
    )));
    assert!(yes(eval(
        "authorizer.path('/healthz').check('get').allowed()"
    )));
    assert!(yes(eval(
        "!authorizer.serviceAccount('ns', 'robot').path('/healthz').check('get').allowed() \
         && !authorizer.path('/healthz').check('get').errored()"
    )));
    let asked = fake.0.lock().unwrap();
    assert_eq!(asked[2].name, "web", "requestResource names the object");
    let robot = &asked[4].user;
    assert_eq!(robot.name, "system:serviceaccount:ns:robot");
    assert_eq!(
        robot.groups,
        ["system:serviceaccounts", "system:serviceaccounts:ns"]
    );
}

#[test]
fn a_check_costs_what_kube_says() {
    let c = compiler(Declarations {
        params: false,
        authorizer: true,
        ..Default::default()
    });
    let fake: Arc<dyn Authorize> = Arc::new(Fake::default());
    let mut bound = inputs();
    bound.authorizer = Some((
        AuthorizerValue::value(fake.clone(), UserInfo::default()),
        AuthorizerValue::request_resource(fake, UserInfo::default(), &Request::default()),
    ));
    let source = "authorizer.path('/healthz').check('get').allowed()";
    let program = c.compile(source, Returns::Bool).unwrap();
    let mut evaluation = Evaluation::new(bound, &[], POLICY_BUDGET);
    evaluation.eval(&program, source).unwrap();
    // kube's cost test: 350003 for this expression.
    assert_eq!(POLICY_BUDGET - evaluation.remaining(), 350_003);
}
