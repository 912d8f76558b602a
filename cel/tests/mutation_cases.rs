//! kube's cases of the types mutating admission policies build (`k8s.io/apiserver`
//! v0.34.1, `pkg/cel/mutation/typeresolver_test.go` `TestTypeResolver` and
//! `TestCELOptional`, and `jsonpatch.escapeKey`), as data (`data/mutation-cases.json`):
//! each expression compiled in the environment of a mutation and evaluated, its value
//! (read back as JSON) and type name compared with kube's, or its compile error.

use kapi_cel::admission::{
    Compiler, Declarations, Evaluation, Inputs, Outcome, POLICY_BUDGET, Returns, patches,
};
use kapi_cel::environment::{KUBERNETES, stored_expressions};
use kapi_cel::value::Value;
use serde_json::Value as Json;

/// The case's outcome against its expectation: `None` when it matches.
fn mismatch(case: &Json) -> Option<String> {
    let compiler = Compiler::new(
        &stored_expressions(KUBERNETES),
        Declarations {
            patch_types: true,
            ..Default::default()
        },
    );
    let source = case["expression"].as_str().unwrap();
    let expect = &case["expect"];
    let program = match (
        compiler.compile(source, Returns::Any),
        expect.get("compileError"),
    ) {
        (Err(error), Some(wanted)) => {
            let wanted = wanted.as_str().unwrap();
            return (!error.contains(wanted)).then(|| format!("compile error {error:?}"));
        }
        (Err(error), None) => return Some(format!("does not compile: {error}")),
        (Ok(_), Some(_)) => return Some("compiles".to_owned()),
        (Ok(program), None) => program,
    };
    let mut evaluation = Evaluation::new(Inputs::default(), &[], POLICY_BUDGET);
    let value = match evaluation.eval(&program, source) {
        Ok(Outcome::Value(value)) => value,
        other => return Some(format!("evaluated to {other:?}")),
    };
    let (value, type_name) = match value {
        Value::Optional(None) => return (expect["none"] != true).then(|| "none".to_owned()),
        Value::Optional(Some(v)) => ((*v).clone(), "optional".to_owned()),
        v => {
            let name = v.type_name().to_owned();
            (v, name)
        }
    };
    if let Some(wanted) = expect["type"].as_str()
        && wanted != type_name
    {
        return Some(format!("of type {type_name}"));
    }
    match patches::to_json(&value) {
        Ok(json) => (json != expect["value"]).then(|| format!("value {json}")),
        Err(error) => Some(format!("not JSON: {error}")),
    }
}

#[test]
fn kubes_mutation_type_cases() {
    let text = include_str!("data/mutation-cases.json");
    let data: Json = serde_json::from_str(text).unwrap();
    let cases = data["cases"].as_array().unwrap();
    let mut failures = Vec::new();
    for case in cases {
        if let Some(why) = mismatch(case) {
            failures.push(format!("{}: {why}", case["name"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(cases.len() >= 34);
}

#[test]
fn nested_objects_must_be_named_for_their_fields() {
    let compiler = Compiler::new(
        &stored_expressions(KUBERNETES),
        Declarations {
            patch_types: true,
            ..Default::default()
        },
    );
    let run = |source: &str| {
        let program = compiler.compile(source, Returns::Object).unwrap();
        let mut evaluation = Evaluation::new(Inputs::default(), &[], POLICY_BUDGET);
        match evaluation.eval(&program, source).unwrap() {
            Outcome::Value(value) => patches::apply_configuration(&value),
            Outcome::Error(error) => Err(error),
        }
    };
    let containers = "Object{spec: Object.spec{containers: [Object.spec.containers{name: 'a'}]}}";
    assert_eq!(
        run(containers).unwrap(),
        serde_json::json!({"spec": {"containers": [{"name": "a"}]}})
    );
    assert_eq!(
        run("Object{spec: Object.specx{replicas: 1}}").unwrap_err(),
        "type mismatch: unexpected type name \"Object.specx\", expected \"Object.spec\", \
         which matches field name path from root Object type"
    );
    assert_eq!(
        compiler
            .compile("Object.spec{}", Returns::Object)
            .err()
            .unwrap(),
        "must evaluate to Object but got Object.spec"
    );
    assert_eq!(
        compiler.compile("'x'", Returns::JsonPatches).err().unwrap(),
        "must evaluate to list(JSONPatch) but got string"
    );
}
