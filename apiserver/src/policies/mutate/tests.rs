//! kube's mutating policy cases (`testdata/kube_cases.json`, from k8s.io/apiserver
//! v0.34.1's `patch/json_patch_test.go`, `patch/smd_test.go`, `compilation_test.go` and
//! `dispatcher_test.go`), run through `invoke` on an apps/v1 Deployment typed by its
//! schema in this server's OpenAPI v3 document, and compared as kube compares them (null,
//! empty maps and lists the same as absent).
//!
//! The dispatcher's cases run their policies in kube's order, each binding's invocation
//! on what the previous ones left (their match constraints all match the Deployment);
//! kube's fake defaulter (`spec.strategy.type: RollingUpdate`) stands in for defaulting
//! where a case says so.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use kapi_cel::admission::{Inputs, value};
use kapi_cel::library::kube::authz::{Authorize, AuthorizerValue, Decision, Request};
use kapi_core::user::UserInfo;
use kapi_kinds::admissionregistration::MutatingAdmissionPolicy;
use kapi_registry::{KindSchema, Schemas};

use super::compile::CompiledPolicy;
use super::invoke::invoke;
use super::patch::Target;

/// kube's `fakeAuthorizer`: every check allowed.
struct AllowAll;

impl Authorize for AllowAll {
    fn authorize(&self, _: &Request) -> Decision {
        Decision {
            allowed: true,
            ..Decision::default()
        }
    }
}

/// The apps/v1 Deployment schema, from the checked-in OpenAPI v3 document.
fn deployment_schemas() -> (Schemas, usize) {
    let document: Value = serde_json::from_str(include_str!(
        "../../../../generated/openapi/v3/apis/apps/v1.json"
    ))
    .unwrap();
    let components = document["components"]["schemas"]
        .as_object()
        .unwrap()
        .clone();
    let root = json!({"$ref": "#/components/schemas/io.k8s.api.apps.v1.Deployment"});
    Schemas::standalone(&root, &components).unwrap()
}

/// `value` without nulls, empty maps and empty lists (kube's comparisons cannot tell
/// them from absent), nor `apiVersion` and `kind` at the root.
fn normalized(value: &Value, root: bool) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::Object(map) => {
            let kept: Map<String, Value> = (map.iter())
                .filter(|(k, _)| !(root && (*k == "apiVersion" || *k == "kind")))
                .filter_map(|(k, v)| Some((k.clone(), normalized(v, false)?)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        Value::Array(items) => {
            let kept: Vec<Value> = items
                .iter()
                .map(|v| normalized(v, false).unwrap_or(json!({})))
                .collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        other => Some(other.clone()),
    }
}

/// The policies of a case: its `policies`, or the one its own fields describe.
fn policies(case: &Value) -> Vec<(CompiledPolicy, Vec<String>)> {
    let described = match case.get("policies") {
        Some(policies) => policies.as_array().unwrap().clone(),
        None => vec![json!({
            "name": "policy",
            "paramKind": case["paramKind"],
            "variables": case["variables"],
            "mutations": case["mutations"],
            "matchConditions": case.get("matchConditions").cloned().unwrap_or(json!([])),
            "failurePolicy": case.get("failurePolicy").cloned().unwrap_or(json!("Fail")),
            "reinvocationPolicy": case.get("reinvocationPolicy").cloned().unwrap_or(json!("Never")),
        })],
    };
    let bindings = case["bindings"].as_array().cloned().unwrap_or_default();
    (described.iter())
        .map(|p| {
            let mut spec = p.clone();
            let name = spec.as_object_mut().unwrap().remove("name").unwrap();
            // The table writes a mutation's expression beside its type.
            for mutation in spec["mutations"].as_array_mut().into_iter().flatten() {
                let expression = json!({"expression": mutation["expression"].take()});
                let field = match mutation["patchType"].as_str() {
                    Some("JSONPatch") => "jsonPatch",
                    _ => "applyConfiguration",
                };
                mutation[field] = expression;
                mutation.as_object_mut().unwrap().remove("expression");
            }
            spec.as_object_mut().unwrap().retain(|_, v| !v.is_null());
            let policy: MutatingAdmissionPolicy =
                serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap();
            let named: Vec<String> = (bindings.iter())
                .filter(|b| b["policyName"] == name)
                .map(|b| b["name"].as_str().unwrap().to_owned())
                .collect();
            let named = match (named.is_empty(), case.get("policies")) {
                (true, None) => vec!["binding".to_owned()],
                _ => named,
            };
            (CompiledPolicy::new(&policy), named)
        })
        .collect()
}

/// What a case's policies make of its object: the object, or the errors.
fn run(case: &Value, schemas: &(Schemas, usize)) -> Result<Value, Vec<String>> {
    let schema = KindSchema::of(&schemas.0, schemas.1);
    // The Deployment through its type: what its schema declares (kube's Go type).
    let through_type = |object: &Value| {
        let mut typed = object.clone();
        schema.prune(&mut typed);
        Ok(typed)
    };
    let target = Target {
        schema: Some(schema),
        gvk: "apps/v1, Kind=Deployment",
        typed: Some(&through_type),
        served_without_schema: false,
    };
    let fake_defaulter = case.get("defaulter").is_some();
    let default = |mut patched: Value| -> Result<Value, String> {
        if fake_defaulter
            && patched["spec"]["strategy"]["type"]
                .as_str()
                .is_none_or(str::is_empty)
        {
            patched["spec"]["strategy"]["type"] = json!("RollingUpdate");
        }
        Ok(patched)
    };
    let request = json!({"operation": case["operation"], "kind": {"group": "apps", "version": "v1",
        "kind": "Deployment"}, "resource": {"group": "apps", "version": "v1",
        "resource": "deployments"}});
    // kube's fake authorizer allows everything.
    let authorizer = case.get("authorizer").map(|_| {
        let allow: Arc<dyn Authorize> = Arc::new(AllowAll);
        let user = UserInfo::default();
        (
            AuthorizerValue::value(Arc::clone(&allow), user.clone()),
            AuthorizerValue::request_resource(allow, user, &Default::default()),
        )
    });
    let inputs = Inputs {
        object: kapi_cel::value::Value::Null,
        old_object: value(&case["oldObject"]),
        request: value(&request),
        params: value(&case["params"]),
        namespace_object: value(&case["namespace"]),
        authorizer,
    };
    let mut object = case["object"].clone();
    let mut errors = Vec::new();
    for (policy, bindings) in policies(case) {
        for _ in bindings {
            match invoke(
                &policy,
                &inputs,
                &inputs.request,
                &mut object,
                target,
                &default,
            ) {
                Ok(invocation) => errors.extend(invocation.errors),
                Err(error) => errors.push(error.to_status().message.unwrap_or_default()),
            }
        }
    }
    match errors.is_empty() {
        true => Ok(object),
        false => Err(errors),
    }
}

#[test]
fn kubes_mutating_policy_cases() {
    let data: Value = serde_json::from_str(include_str!("testdata/kube_cases.json")).unwrap();
    let schemas = deployment_schemas();
    let cases = data["cases"].as_array().unwrap();
    let (mut passed, mut skipped, mut failures) = (0, 0, Vec::new());
    for case in cases {
        let name = case["name"].as_str().unwrap();
        if case.get("skip").is_some() {
            skipped += 1;
            continue;
        }
        let expect = &case["expect"];
        let got = run(case, &schemas);
        let ok = match (&got, expect.get("object")) {
            (Ok(object), Some(wanted)) => normalized(object, true) == normalized(wanted, true),
            (Err(errors), None) => {
                let wanted = (expect.get("error").or(expect.get("compileError")))
                    .and_then(Value::as_str)
                    .unwrap_or("<no expectation>");
                errors.iter().any(|e| e.contains(wanted))
            }
            _ => false,
        };
        match ok {
            true => passed += 1,
            false => failures.push(format!("{name}: expected {expect}\n  got {got:?}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(passed + skipped, cases.len());
    assert!(passed >= 56, "{passed} passed, {skipped} skipped");
}
