//! The field-management conformance table: `fieldmanager/tests/field_management/scenarios.yaml`,
//! scenarios of sigs.k8s.io/structured-merge-diff's own tests (several managers, applies,
//! updates, forced applies, atomic/set/map lists, nested maps, removal, conflicts) with the
//! objects, owners and conflicts upstream expects, replayed through [`Updater`].

use serde_json::{Map, Value};

use super::set::Set;
use super::typed::{self, TypeRef};
use super::updater::{Failure, ManagerId, Managers, Operation, Updater, Versions};
use kapi_schema::{KindSchema, Schemas};

const SCENARIOS: &str = include_str!("../tests/field_management/scenarios.yaml");

/// Every version has the scenario's one schema; conversion is the identity (upstream's
/// versions in these scenarios are labels).
struct OneSchema<'a>(KindSchema<'a>);

impl Versions for OneSchema<'_> {
    fn convert(&self, object: &Value, _from: &str, _to: &str) -> Option<Value> {
        Some(object.clone())
    }

    fn type_of(&self, _version: &str) -> Option<TypeRef<'_>> {
        Some(TypeRef::root(self.0))
    }
}

/// Runs one scenario; returns what differs from upstream's expectations.
fn check(scenario: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let (schemas, root) =
        Schemas::standalone(&scenario["schema"], &Map::new()).expect("the scenario's schema");
    let versions = OneSchema(KindSchema::of(&schemas, root));
    let updater = Updater {
        versions: &versions,
        scope: Default::default(),
        stripped: &Set::new(),
    };
    let mut live = Value::Null;
    let mut managers = Managers::new();
    for (index, op) in scenario["ops"].as_array().expect("ops").iter().enumerate() {
        let (verb, args) = ["apply", "forceApply", "update"]
            .iter()
            .find_map(|verb| Some((*verb, op.get(*verb)?)))
            .expect("an op is apply, forceApply or update");
        let manager = args["manager"].as_str().expect("manager").to_owned();
        let version = args["apiVersion"].as_str().expect("apiVersion");
        let object = &args["object"];
        let id = match verb {
            "update" => ManagerId {
                manager,
                operation: Operation::Update,
                api_version: Some(version.to_owned()),
                subresource: String::new(),
            },
            _ => ManagerId {
                manager,
                operation: Operation::Apply,
                api_version: None,
                subresource: String::new(),
            },
        };
        let expected_conflicts = op.get("conflicts").and_then(Value::as_array);
        let before = (live.clone(), managers.clone());
        let result = match verb {
            "update" => updater
                .update(&live, object, version, &mut managers, &id)
                .map(|_| Some(object.clone())),
            _ => updater.apply(
                &live,
                object,
                version,
                &mut managers,
                &id,
                verb == "forceApply",
            ),
        };
        match (result, expected_conflicts) {
            (Ok(new), None) => {
                if let Some(new) = new {
                    live = new;
                }
            }
            (Ok(_), Some(expected)) => problems.push(format!(
                "op {index}: expected conflicts {expected:?}, got none"
            )),
            (Err(Failure::Conflicts(conflicts)), Some(expected)) => {
                let mut got: Vec<(String, String)> = (conflicts.0.iter())
                    .map(|(id, path)| (id.manager.clone(), path.to_string()))
                    .collect();
                let mut want: Vec<(String, String)> = (expected.iter())
                    .map(|c| {
                        let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                        (text("manager"), text("path"))
                    })
                    .collect();
                got.sort();
                want.sort();
                if got != want {
                    problems.push(format!(
                        "op {index}: conflicts\n  expected {want:?}\n  got      {got:?}"
                    ));
                }
                if (live.clone(), managers.clone()) != before {
                    problems.push(format!("op {index}: a conflicting apply changed something"));
                }
            }
            (Err(failure), _) => problems.push(format!("op {index}: failed: {failure:?}")),
        }
    }
    if let Some(expected) = scenario.get("object") {
        let empty = |v: &Value| v.is_null() || v.as_object().is_some_and(Map::is_empty);
        if !(typed::equal(expected, &live) || (empty(expected) && empty(&live))) {
            problems.push(format!("object\n  expected {expected}\n  got      {live}"));
        }
    }
    if let Some(expected) = scenario.get("managed").and_then(Value::as_object) {
        let got: Map<String, Value> = (managers.iter())
            .map(|(id, owned)| {
                (
                    id.manager.clone(),
                    serde_json::json!({
                        "operation": id.operation.as_str(),
                        "apiVersion": owned.api_version,
                        "fields": owned.set.to_fields_v1(),
                    }),
                )
            })
            .collect();
        let want = Value::Object(expected.clone());
        if Value::Object(got.clone()) != want {
            problems.push(format!(
                "managed\n  expected {want}\n  got      {}",
                Value::Object(got)
            ));
        }
    }
    problems
}

#[test]
fn structured_merge_diff_scenarios() {
    let table: serde_yaml_ng::Value = serde_yaml_ng::from_str(SCENARIOS).expect("YAML");
    let table: Value = serde_json::to_value(table).expect("JSON");
    let scenarios = table["scenarios"].as_array().expect("scenarios");
    assert!(
        scenarios.len() >= 40,
        "the table has {} scenarios",
        scenarios.len()
    );
    let mut failures = Vec::new();
    for scenario in scenarios {
        let problems = check(scenario);
        if !problems.is_empty() {
            failures.push(format!(
                "{} ({}):\n{}",
                scenario["name"].as_str().unwrap_or("?"),
                scenario["source"].as_str().unwrap_or("?"),
                problems.join("\n")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scenarios differ from structured-merge-diff:\n\n{}",
        failures.len(),
        scenarios.len(),
        failures.join("\n\n")
    );
}
