//! The "simple" conformance tests of cel-spec, ported as data (`tests/data/cel-spec/`, each
//! file naming the repository, commit and file it was converted from), run against kapi's
//! engine in the environment of kube's stored expressions. Cases that need what kube 1.32
//! does not give CEL (protobuf messages and enums, containers, extension libraries it does
//! not enable) are skipped, with their reason, by [`SKIPS`]. Cases kapi does not yet pass
//! are listed under `cel_spec` in `tests/data/kube/known_failures.json`; a listed case that
//! passes, or an unlisted one that fails, fails the test.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kapi_cel::environment::{KUBERNETES, stored_expressions};
use kapi_cel::interpreter::Failure;
use kapi_cel::library::Env;
use kapi_cel::program::compile;
use kapi_cel::ty::Type;
use kapi_cel::value::{Duration, Key, List, Map, Timestamp, Value};
use serde_json::Value as Json;

mod common;

use common::{compare, dump};

/// The files ported, in `tests/data/cel-spec/`.
const FILES: &[&str] = &[
    "basic",
    "comparisons",
    "conversions",
    "integer_math",
    "fp_math",
    "lists",
    "logic",
    "macros",
    "string",
    "string_ext",
    "timestamps",
    "optionals",
    "parse",
];

/// Cases skipped: those of `file` (any if empty), `section` (any if empty) and `name`
/// (any if empty) whose expression contains `expr` (any if empty), for `reason`.
struct Skip {
    file: &'static str,
    section: &'static str,
    name: &'static str,
    expr: &'static str,
    reason: &'static str,
}

const PROTO: &str = "protobuf messages or enums (kube has none)";
const WRAPPERS: &str = "google.protobuf wrapper, Any or Struct types (kube has none)";

const HOMOGENEOUS: &str = "list or map literals of mixed types (kube checks that literals are \
     homogeneous: cel-go's HomogeneousAggregateLiterals)";

const SKIPS: &[Skip] = &[
    Skip {
        file: "comparisons",
        section: "eq_literal",
        name: "not_eq_list_null",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "eq_literal",
        name: "eq_list_mixed_type_numbers",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "eq_literal",
        name: "not_eq_list_mixed_type_numbers",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "eq_literal",
        name: "not_eq_list_false_vs_types",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "eq_literal",
        name: "not_eq_map_null",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "eq_literal",
        name: "eq_map_mixed_type_numbers",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "eq_literal",
        name: "not_eq_map_false_vs_types",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "eq_literal",
        name: "eq_map_value_mixed_types",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "eq_literal",
        name: "not_eq_list_elem_null",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "eq_literal",
        name: "not_eq_map_value_null",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "in_list_literal",
        name: "elem_in_mixed_type_list",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "in_list_literal",
        name: "elem_in_mixed_type_list_cross_type",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "in_map_literal",
        name: "key_in_mixed_key_type_map",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "comparisons",
        section: "in_map_literal",
        name: "key_in_mixed_key_type_map_cross_type",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "conversions",
        section: "dyn",
        name: "dyn_heterogeneous_list",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "macros",
        section: "exists",
        name: "list_elem_type_shortcircuit",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "macros",
        section: "exists",
        name: "list_elem_type_exhaustive",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "macros",
        section: "exists",
        name: "map_key_type_shortcircuit",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "macros",
        section: "exists",
        name: "map_key_type_exhaustive",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "macros",
        section: "all",
        name: "list_elem_type_shortcircuit",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "string_ext",
        section: "format",
        name: "dyntype support for lists",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "optionals",
        section: "optionals",
        name: "optional_chaining_13",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "optionals",
        section: "optionals",
        name: "map_key_mixed_type_optindex_value",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "optionals",
        section: "optionals",
        name: "map_key_mixed_numbers_double_key_optindex_value",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "optionals",
        section: "optionals",
        name: "map_key_mixed_numbers_uint_key_optindex_value",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "optionals",
        section: "optionals",
        name: "map_key_mixed_numbers_int_key_optindex_value",
        expr: "",
        reason: HOMOGENEOUS,
    },
    Skip {
        file: "string_ext",
        section: "reverse",
        name: "",
        expr: "",
        reason: "reverse() is strings v3; kube 1.32 enables strings v2",
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "TestAllTypes",
        reason: PROTO,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "cel.expr.conformance",
        reason: PROTO,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "GlobalEnum",
        reason: PROTO,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "NestedEnum",
        reason: PROTO,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.Int",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.UInt",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.Float",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.Double",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.Bool",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.String",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.Bytes",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.Any",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.Struct",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.Value",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.ListValue",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "google.protobuf.NullValue",
        reason: WRAPPERS,
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "math.",
        reason: "the math extension (kube 1.32 does not enable it)",
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "base64.",
        reason: "the encoders extension (kube 1.32 does not enable it)",
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "cel.bind",
        reason: "the bindings extension (kube 1.32 does not enable it)",
    },
    Skip {
        file: "",
        section: "",
        name: "",
        expr: "cel.block",
        reason: "the block extension (kube 1.32 does not enable it)",
    },
];

/// Why `case` of `file` is skipped, if it is.
fn skipped(file: &str, case: &Json) -> Option<&'static str> {
    let section = case["section"].as_str().unwrap();
    let name = case["name"].as_str().unwrap();
    let expr = case["expr"].as_str().unwrap();
    if case.get("container").is_some() {
        return Some("a container (kube's expressions have none)");
    }
    if case["value"].get("object_value").is_some() {
        return Some(PROTO);
    }
    if (case["type_env"].as_object().into_iter().flatten())
        .any(|(_, t)| !simple_type(t.as_str().unwrap()))
    {
        return Some("a declaration of a type kube has not");
    }
    if case.get("other_result").is_some() {
        return Some("an unknown or any-of result (not compared)");
    }
    SKIPS
        .iter()
        .find(|s| {
            (s.file.is_empty() || s.file == file)
                && (s.section.is_empty() || s.section == section)
                && (s.name.is_empty() || s.name == name)
                && (s.expr.is_empty() || expr.contains(s.expr))
        })
        .map(|s| s.reason)
}

/// Whether a declared type is one of kube's: primitives, lists and maps of them,
/// durations and timestamps.
fn simple_type(t: &str) -> bool {
    t == "google.protobuf.Duration"
        || t == "google.protobuf.Timestamp"
        || t.chars()
            .all(|c| c.is_ascii_lowercase() || c == '_' || "(), ".contains(c))
}

/// A ported file.
fn load(file: &str) -> Json {
    let path = format!(
        "{}/tests/data/cel-spec/{file}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).expect("a file")).expect("JSON")
}

/// A double written as a JSON number or as `NaN`, `Infinity`, `-Infinity`.
fn double(v: &Json) -> f64 {
    match v.as_str() {
        Some("NaN") => f64::NAN,
        Some("Infinity") => f64::INFINITY,
        Some("-Infinity") => f64::NEG_INFINITY,
        _ => v.as_f64().unwrap(),
    }
}

/// Bytes written in hexadecimal.
fn bytes(v: &Json) -> Vec<u8> {
    let hex = v.as_str().unwrap().as_bytes();
    (hex.chunks(2))
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

/// Nanoseconds of a `{seconds, nanos}`.
fn nanos(v: &Json) -> i128 {
    i128::from(v["seconds"].as_i64().unwrap()) * 1_000_000_000
        + i128::from(v["nanos"].as_i64().unwrap())
}

/// The CEL value of a typed value of the data (for bindings).
fn to_value(v: &Json) -> Value {
    let (kind, v) = v.as_object().unwrap().iter().next().unwrap();
    match kind.as_str() {
        "null_value" => Value::Null,
        "bool_value" => Value::Bool(v.as_bool().unwrap()),
        "int64_value" => Value::Int(v.as_i64().unwrap()),
        "uint64_value" => Value::Uint(v.as_u64().unwrap()),
        "double_value" => Value::Double(double(v)),
        "string_value" => Value::string(v.as_str().unwrap()),
        "bytes_value" => Value::Bytes(bytes(v).into()),
        "type_value" => Value::Type(v.as_str().unwrap().into()),
        "duration_value" => Value::Duration(Duration(nanos(v))),
        "timestamp_value" => Value::Timestamp(Timestamp(nanos(v), 0)),
        "list_value" => Value::list(v.as_array().unwrap().iter().map(to_value).collect()),
        "map_value" => {
            let entries: BTreeMap<Key, Value> = (v.as_array().unwrap().iter())
                .map(|e| {
                    (
                        Key::of(&to_value(&e["key"])).unwrap(),
                        to_value(&e["value"]),
                    )
                })
                .collect();
            Value::Map(Arc::new(Map {
                entries,
                type_name: None,
            }))
        }
        other => panic!("a binding of {other}"),
    }
}

/// Whether `actual` is the typed value `expected`: of the same type (no numeric
/// equivalence), NaN matching NaN.
fn matches(actual: &Value, expected: &Json) -> bool {
    let (kind, v) = expected.as_object().unwrap().iter().next().unwrap();
    match (kind.as_str(), actual) {
        ("null_value", Value::Null) => true,
        ("bool_value", Value::Bool(b)) => v.as_bool() == Some(*b),
        ("int64_value", Value::Int(i)) => v.as_i64() == Some(*i),
        ("uint64_value", Value::Uint(u)) => v.as_u64() == Some(*u),
        ("double_value", Value::Double(d)) => {
            let want = double(v);
            (want.is_nan() && d.is_nan()) || want == *d
        }
        ("string_value", Value::String(s)) => v.as_str() == Some(&**s),
        ("bytes_value", Value::Bytes(b)) => bytes(v) == **b,
        ("type_value", Value::Type(t)) => v.as_str() == Some(&**t),
        ("duration_value", Value::Duration(d)) => nanos(v) == d.0,
        ("timestamp_value", Value::Timestamp(t)) => nanos(v) == t.0,
        ("list_value", Value::List(l)) => {
            let want = v.as_array().unwrap();
            let List { items, .. } = &**l;
            want.len() == items.len() && want.iter().zip(items).all(|(w, a)| matches(a, w))
        }
        ("map_value", Value::Map(m)) => {
            let want = v.as_array().unwrap();
            want.len() == m.entries.len()
                && want.iter().all(|e| {
                    Key::of(&to_value(&e["key"]))
                        .and_then(|k| m.entries.get(&k))
                        .is_some_and(|a| matches(a, &e["value"]))
                })
        }
        _ => false,
    }
}

/// How [`run`] starts what it reports for a case cel-spec evaluates without checking it
/// that kapi's checker refuses: kube always checks, so such a case is skipped.
const UNCHECKED: &str = "unchecked: ";

/// What differs when `case` runs, if anything.
fn run(case: &Json, features: &[kapi_cel::environment::Feature]) -> Option<String> {
    let mut env = Env::new(features);
    let bindings: Vec<(String, Value)> = (case["bindings"].as_object().into_iter().flatten())
        .map(|(name, v)| (name.clone(), to_value(v)))
        .collect();
    for (name, _) in &bindings {
        let ty = case["type_env"][name]
            .as_str()
            .map_or(Type::Dyn, Type::parse);
        env.variable(name, ty);
    }
    for (name, ty) in case["type_env"].as_object().into_iter().flatten() {
        env.variable(name, Type::parse(ty.as_str().unwrap()));
    }
    let expect_error = case.get("eval_error").is_some();
    let compiled = match compile(case["expr"].as_str().unwrap(), &env) {
        Ok(compiled) => compiled,
        // An error found when compiling is the error expected (kube validates literals of
        // durations and timestamps then).
        Err(_) if expect_error => return None,
        Err(issues) => {
            let issues = issues.to_string();
            if case.get("disable_check").is_some() && !issues.contains("Syntax error") {
                return Some(format!("{UNCHECKED}{issues}"));
            }
            return Some(format!("does not compile: {issues}"));
        }
    };
    let activation: Vec<(&str, Value)> = (bindings.iter())
        .map(|(n, v)| (n.as_str(), v.clone()))
        .collect();
    let (result, _) = compiled.program.eval(&activation, u64::MAX);
    match (result, expect_error) {
        (Err(_), true) => None,
        (Ok(value), true) => Some(format!(
            "an error expected ({}); got {value:?}",
            case["eval_error"]
        )),
        (Err(Failure::Error(e)), false) => {
            Some(format!("expected {}; error {:?}", case["value"], e.0))
        }
        (Err(Failure::CostLimitExceeded), false) => Some("cost limit exceeded".to_owned()),
        (Ok(value), false) => (!matches(&value, &case["value"]))
            .then(|| format!("expected {}; got {value:?}", case["value"])),
    }
}

#[test]
fn cel_spec_simple() {
    // Deeply nested expressions (`parse`'s `nest` and `repeat`) on a large stack, as kube's
    // parser allows them.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(run_all)
        .unwrap()
        .join()
        .unwrap();
}

fn run_all() {
    // Panics are failures, recorded; their messages would only clutter the output.
    std::panic::set_hook(Box::new(|_| {}));
    let features = stored_expressions(KUBERNETES);
    let (mut failures, mut total) = (BTreeSet::new(), 0);
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for file in FILES {
        let data = load(file);
        let (mut passed, mut skips, mut failed) = (0, 0, 0);
        for case in data["tests"].as_array().unwrap() {
            if let Some(reason) = skipped(file, case) {
                skips += 1;
                *reasons.entry(reason).or_default() += 1;
                continue;
            }
            total += 1;
            let key = format!(
                "{file} :: {} :: {}",
                case["section"].as_str().unwrap(),
                case["name"].as_str().unwrap()
            );
            if std::env::var_os("KAPI_CEL_TRACE").is_some() {
                eprintln!("running {key}");
            }
            let outcome = std::panic::catch_unwind(|| run(case, &features))
                .unwrap_or_else(|_| Some("panicked".to_owned()));
            match outcome {
                None => passed += 1,
                Some(detail) if detail.starts_with(UNCHECKED) => {
                    total -= 1;
                    skips += 1;
                    *reasons
                        .entry("evaluation unchecked, of what the checker refuses (kube always checks)")
                        .or_default() += 1;
                }
                Some(detail) => {
                    failed += 1;
                    dump(&key, &format!("{}: {detail}", case["expr"]));
                    failures.insert(key);
                }
            }
        }
        eprintln!("{file}: {passed} passed, {skips} skipped, {failed} known failures");
    }
    for (reason, count) in reasons {
        eprintln!("skipped {count}: {reason}");
    }
    let _ = std::panic::take_hook();
    compare("cel_spec", failures, total);
}
