//! k8s.io/api's round-trip fixtures (`testdata/HEAD` at the tag kube 1.32 ships, or the
//! later tag a kind is read at, copied into `data/` by `cargo xtask builtin-inputs`): one
//! fully populated object of each kind
//! in JSON, YAML and protobuf. Each decodes to the same object, and encodes again to the
//! same JSON document and the same protobuf bytes, except where `known_differences.json`
//! says why kapi's encoding differs (a list that may only shrink: a case listed that
//! passes fails the test too).

use std::collections::BTreeMap;
use std::path::Path;

use kapi_core::api::protobuf::{self, Protobuf};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What differs for one fixture, in words; empty when nothing does.
fn check<T>(name: &str) -> Vec<String>
where
    T: Serialize + DeserializeOwned + Protobuf + PartialEq + std::fmt::Debug,
{
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/roundtrip/data");
    let read = |extension: &str| {
        std::fs::read(dir.join(format!("{name}.{extension}")))
            .unwrap_or_else(|e| panic!("{name}.{extension}: {e}"))
    };
    let mut problems = Vec::new();
    let json: Value = serde_json::from_slice(&read("json")).expect("the JSON fixture parses");
    let typed: T = match serde_json::from_value(json.clone()) {
        Ok(typed) => typed,
        Err(e) => return vec![format!("JSON does not decode: {e}")],
    };
    // JSON: the same document again, with the type meta the types do not carry.
    let mut again = serde_json::to_value(&typed).expect("encodes");
    for key in ["apiVersion", "kind"] {
        if let (Some(value), Value::Object(again)) = (json.get(key), &mut again) {
            again.insert(key.to_owned(), value.clone());
        }
    }
    for difference in differences(&json, &again, String::new()) {
        problems.push(format!("JSON: {difference}"));
    }
    // YAML: the same object.
    let yaml: Value = serde_yaml_ng::from_slice(&read("yaml")).expect("the YAML fixture parses");
    match serde_json::from_value::<T>(yaml) {
        Ok(from_yaml) if from_yaml == typed => {}
        Ok(_) => problems.push("YAML decodes to another object".into()),
        Err(e) => problems.push(format!("YAML does not decode: {e}")),
    }
    // Protobuf: the same object, and the same bytes.
    let pb = read("pb");
    match protobuf::decode_body(T::MESSAGE, &pb) {
        Err(e) => problems.push(format!("protobuf does not decode: {e}")),
        Ok(decoded) => match serde_json::from_value::<T>(decoded.clone()) {
            Err(e) => problems.push(format!("protobuf's JSON does not decode: {e}")),
            Ok(from_pb) if from_pb == typed => {}
            Ok(from_pb) => {
                let from_pb = serde_json::to_value(&from_pb).expect("encodes");
                let typed = serde_json::to_value(&typed).expect("encodes");
                for difference in differences(&typed, &from_pb, String::new()) {
                    problems.push(format!("protobuf decodes to another object: {difference}"));
                }
            }
        },
    }
    match protobuf::encode::object(T::MESSAGE, &again) {
        Err(e) => problems.push(format!("protobuf does not encode: {e}")),
        Ok(bytes) if bytes == pb => {}
        Ok(bytes) => {
            let at = bytes.iter().zip(&pb).take_while(|(a, b)| a == b).count();
            problems.push(format!(
                "protobuf bytes differ from byte {at} ({} bytes, kube's {})",
                bytes.len(),
                pb.len()
            ));
        }
    }
    problems
}

/// Where two documents differ, by JSON path.
fn differences(expected: &Value, actual: &Value, path: String) -> Vec<String> {
    match (expected, actual) {
        (Value::Object(a), Value::Object(b)) => {
            let mut out = Vec::new();
            for (key, value) in a {
                let here = format!("{path}.{key}");
                match b.get(key) {
                    Some(other) => out.extend(differences(value, other, here)),
                    None => out.push(format!("{here} is missing")),
                }
            }
            for key in b.keys().filter(|k| !a.contains_key(*k)) {
                out.push(format!("{path}.{key} is extra"));
            }
            out
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .flat_map(|(i, (a, b))| differences(a, b, format!("{path}[{i}]")))
            .collect(),
        (a, b) if a == b => Vec::new(),
        (a, b) => vec![format!("{path}: {a} became {b}")],
    }
}

macro_rules! kinds {
    ($($name:literal => $ty:path),* $(,)?) => {
        fn results() -> BTreeMap<&'static str, Vec<String>> {
            let mut results = BTreeMap::new();
            $(results.insert($name, check::<$ty>($name));)*
            results
        }
    };
}

include!("kinds.rs");

#[test]
fn fixtures_round_trip() {
    let known: BTreeMap<String, String> =
        serde_json::from_str(include_str!("known_differences.json"))
            .expect("known_differences.json parses");
    let mut failures = Vec::new();
    let results = results();
    for (name, problems) in &results {
        match (problems.is_empty(), known.get(*name)) {
            (true, None) | (false, Some(_)) => {}
            (true, Some(reason)) => failures.push(format!(
                "{name} round-trips now: remove it from known_differences.json ({reason})"
            )),
            (false, None) => failures.push(format!("{name}:\n  {}", problems.join("\n  "))),
        }
    }
    for name in known.keys().filter(|n| !results.contains_key(n.as_str())) {
        failures.push(format!(
            "{name} is listed in known_differences.json but not tested"
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(results.len() >= 39, "every served kind has a fixture");
}
