//! The test support behind the generated round-trip tests (`generated/src/round_trip.rs`):
//! the schema-driven generator stays within the schema and reaches the interesting shapes,
//! and the round-trip properties fail on conversions that lose or invent something.

use std::panic::{AssertUnwindSafe, catch_unwind};

use api_types::apps::{self, v1, v1beta1};
use kapi::Convert;
use kapi::registry::Schemas;
use kapi::scheme::{KindEntry, Scheme};
use kapi::testing::{RoundTrip, arbitrary};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde::{Deserialize, Serialize};
use serde_json::Value;

fn schemas() -> (Scheme, Schemas) {
    let scheme = kapi_generated::scheme();
    let documents = kapi_generated::documents::SCHEMAS_V3;
    let schemas = Schemas::compiled_in(&scheme, documents).unwrap();
    (scheme, schemas)
}

/// `count` objects of `kind` in `version`, from a deterministic runner.
fn samples(schemas: &Schemas, group: &str, version: &str, kind: &str, count: usize) -> Vec<Value> {
    let schema = schemas.kind(group, version, kind).unwrap();
    let strategy = arbitrary::object(schema);
    let mut runner = TestRunner::deterministic();
    (0..count)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect()
}

#[test]
fn generated_objects_are_valid_in_every_kind_and_version() {
    let (scheme, schemas) = schemas();
    for kind in scheme.kinds() {
        for version in kind.versions() {
            let info = kind.info;
            let schema = schemas.kind(info.group, version, info.kind).unwrap();
            for mut object in samples(&schemas, info.group, version, info.kind, 100) {
                schema.default(&mut object);
                let errors = schema.validate(&object);
                assert!(
                    errors.is_empty(),
                    "{} {version}: {errors:?} in {object}",
                    info.kind
                );
            }
        }
    }
}

#[test]
fn generated_webapps_reach_every_shape_of_the_schema() {
    let (_, schemas) = schemas();
    let objects = samples(&schemas, "apps.example.dev", "v1", "WebApp", 200);
    let some = |what: &str, test: &dyn Fn(&Value) -> bool| {
        assert!(
            objects.iter().any(test),
            "no generated v1 WebApp has {what}"
        );
    };
    let ports = |o: &Value| {
        o.pointer("/spec/container/ports")
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    };
    some("three ports", &|o| ports(o) >= 3);
    some("no ports", &|o| ports(o) == 0);
    some("env", &|o| {
        o.pointer("/spec/container/env/0/name").is_some()
    });
    some("paused", &|o| {
        o.pointer("/spec/paused") == Some(&Value::Bool(true))
    });
    some("no replicas (defaulted)", &|o| {
        o.pointer("/spec/replicas").is_none()
    });
    some("the most replicas", &|o| {
        o.pointer("/spec/replicas") == Some(&1000.into())
    });
    some("the highest port", &|o| {
        o.pointer("/spec/container/ports/0/containerPort") == Some(&65535.into())
    });
    some("conditions", &|o| {
        o.pointer("/status/conditions/0/type").is_some()
    });
    some("labels", &|o| {
        o.pointer("/metadata/labels")
            .is_some_and(|l| l.as_object().is_some_and(|l| !l.is_empty()))
    });
    some("managed fields", &|o| {
        o.pointer("/metadata/managedFields/0").is_some()
    });
    for object in &objects {
        let ports = object
            .pointer("/spec/container/ports")
            .and_then(Value::as_array);
        let numbers: Vec<&Value> = ports
            .into_iter()
            .flatten()
            .map(|p| &p["containerPort"])
            .collect();
        let unique: std::collections::HashSet<String> =
            numbers.iter().map(|n| n.to_string()).collect();
        assert_eq!(
            unique.len(),
            numbers.len(),
            "list-map keys repeat in {object}"
        );
        let image = object
            .pointer("/spec/container/image")
            .and_then(Value::as_str)
            .unwrap();
        assert!(!image.is_empty(), "minLength 1: {object}");
    }
}

/// `check` panics, with a message containing `expected`.
#[track_caller]
fn fails(round_trip: &RoundTrip, version: &str, expected: &str) {
    let result = catch_unwind(AssertUnwindSafe(|| {
        round_trip.check("apps.example.dev", "WebApp", version)
    }));
    let panic = result.expect_err("the round-trip check passed on a broken conversion");
    let message = (panic.downcast_ref::<String>().cloned()).unwrap_or_default();
    assert!(message.contains(expected), "{message}");
}

/// The v1 WebApp scheme with `V` as version `name` instead of the real one.
fn scheme_with<V>(name: &'static str) -> Scheme
where
    V: Convert<apps::WebApp> + Serialize + for<'de> Deserialize<'de> + 'static,
{
    let mut kind = KindEntry::new::<apps::WebApp>();
    for version in ["v1", "v1beta1"] {
        kind = match (version == name, version) {
            (true, _) => kind.version::<apps::WebApp, V>(name),
            (false, "v1") => kind.version::<apps::WebApp, v1::WebApp>("v1"),
            (false, _) => kind.version::<apps::WebApp, v1beta1::WebApp>("v1beta1"),
        };
    }
    Scheme::new().add(kind)
}

/// A v1 that forgets `paused` on the way to the hub.
#[derive(Serialize, Deserialize)]
#[serde(transparent)]
struct ForgetsPaused(v1::WebApp);

impl Convert<apps::WebApp> for ForgetsPaused {
    fn into_hub(self, hub: &mut apps::WebApp) {
        self.0.into_hub(hub);
        hub.spec.paused = false;
    }
    fn from_hub(hub: &apps::WebApp) -> Self {
        ForgetsPaused(v1::WebApp::from_hub(hub))
    }
}

/// A v1beta1 that clears `env`, which it cannot express, instead of leaving it alone.
#[derive(Serialize, Deserialize)]
#[serde(transparent)]
struct ClearsEnv(v1beta1::WebApp);

impl Convert<apps::WebApp> for ClearsEnv {
    fn into_hub(self, hub: &mut apps::WebApp) {
        self.0.into_hub(hub);
        hub.spec.container.env.clear();
    }
    fn from_hub(hub: &apps::WebApp) -> Self {
        ClearsEnv(v1beta1::WebApp::from_hub(hub))
    }
}

#[test]
fn a_version_that_loses_a_field_fails_the_identity() {
    let round_trip = RoundTrip::new(
        scheme_with::<ForgetsPaused>("v1"),
        kapi_generated::documents::SCHEMAS_V3,
    );
    fails(&round_trip, "v1", "v1 -> hub -> v1 is not the identity");
    fails(
        &round_trip,
        "v1",
        "first difference at .spec.paused: true vs false",
    );
}

#[test]
fn a_version_that_overwrites_what_it_cannot_express_fails_the_no_loss_property() {
    let round_trip = RoundTrip::new(
        scheme_with::<ClearsEnv>("v1beta1"),
        kapi_generated::documents::SCHEMAS_V3,
    );
    // Its own identity holds: v1beta1 has no env.
    fails(
        &round_trip,
        "v1beta1",
        "hub -> v1beta1 -> onto the same hub loses or changes something",
    );
    fails(
        &round_trip,
        "v1beta1",
        "first difference at .spec.container.env",
    );
}
