//! CEL's standard library, as cel-go v0.22 declares it: operators, conversions, sizes,
//! string tests, regular expressions, time accessors; with cel-go's overload ids, errors
//! and runtime costs (strings and bytes cost a tenth of their length to traverse;
//! `matches` the product of the string's and the pattern's).

use std::sync::Arc;

use super::{Env, Error, Overload as O, Result, int, no_such_overload, string, traversal};
use crate::library::regex;
use crate::time::{Duration, Timestamp, zone_offset};
use crate::value::{Key, List, ListKind, Map, Value};

/// The ids of overloads the interpreter evaluates itself.
pub mod ids {
    /// `_&&_`.
    pub const AND: &str = "logical_and";
    /// `_||_`.
    pub const OR: &str = "logical_or";
    /// `_?_:_`.
    pub const CONDITIONAL: &str = "conditional";
    /// `@not_strictly_false`.
    pub const NOT_STRICTLY_FALSE: &str = "not_strictly_false";
    /// `@in` on a list.
    pub const IN_LIST: &str = "in_list";
}

/// Adds the standard library to `env`.
pub fn install(env: &mut Env) {
    env.add("_&&_", [O::special(ids::AND, "(bool, bool) -> bool")]);
    env.add("_||_", [O::special(ids::OR, "(bool, bool) -> bool")]);
    env.add("_?_:_", [O::special(ids::CONDITIONAL, "(bool, A, A) -> A")]);
    env.add(
        "@not_strictly_false",
        [O::special(ids::NOT_STRICTLY_FALSE, "(bool) -> bool")],
    );
    env.add(
        "!_",
        [O::new("logical_not", "(bool) -> bool", |a| match a[0] {
            Value::Bool(b) => Ok(Value::Bool(!b)),
            _ => Err(no_such_overload()),
        })],
    );
    env.add(
        "_==_",
        [O::new("equals", "(A, A) -> bool", |a| {
            Ok(Value::Bool(a[0].equals(&a[1])))
        })
        .cost(equality_cost)],
    );
    env.add(
        "_!=_",
        [O::new("not_equals", "(A, A) -> bool", |a| {
            Ok(Value::Bool(!a[0].equals(&a[1])))
        })
        .cost(equality_cost)],
    );
    comparisons(env);
    arithmetic(env);
    env.add(
        "-_",
        [
            O::new("negate_int64", "(int) -> int", |a| {
                int(a, 0)?
                    .checked_neg()
                    .map(Value::Int)
                    .ok_or_else(int_overflow)
            }),
            O::new("negate_double", "(double) -> double", |a| match a[0] {
                Value::Double(d) => Ok(Value::Double(-d)),
                _ => Err(no_such_overload()),
            }),
        ],
    );
    env.add(
        "_[_]",
        [
            O::new("index_list", "(list(A), int) -> A", index),
            O::new("index_map", "(map(K, V), K) -> V", index),
        ],
    );
    env.add(
        "@in",
        [
            O::new("in_list", "(A, list(A)) -> bool", |a| match &a[1] {
                Value::List(l) => Ok(Value::Bool(l.items.iter().any(|x| x.equals(&a[0])))),
                _ => Err(no_such_overload()),
            })
            .cost(|a, _| a[1].size()),
            O::new("in_map", "(K, map(K, V)) -> bool", |a| match &a[1] {
                Value::Map(m) => Ok(Value::Bool(m.get(&a[0]).is_some())),
                _ => Err(no_such_overload()),
            }),
        ],
    );
    let size = |a: &[Value]| Ok(Value::Int(a[0].size() as i64));
    env.add(
        "size",
        [
            O::new("size_string", "(string) -> int", size),
            O::new("size_bytes", "(bytes) -> int", size),
            O::new("size_list", "(list(A)) -> int", size),
            O::new("size_map", "(map(K, V)) -> int", size),
            O::new("string_size", "string.() -> int", size),
            O::new("bytes_size", "bytes.() -> int", size),
            O::new("list_size", "list(A).() -> int", size),
            O::new("map_size", "map(K, V).() -> int", size),
        ],
    );
    env.add(
        "contains",
        [O::new("contains_string", "string.(string) -> bool", |a| {
            Ok(Value::Bool(string(a, 0)?.contains(&**string(a, 1)?)))
        })
        .cost(|a, _| traversal(a[0].size()) * traversal(a[1].size()))],
    );
    env.add(
        "startsWith",
        [
            O::new("starts_with_string", "string.(string) -> bool", |a| {
                Ok(Value::Bool(string(a, 0)?.starts_with(&**string(a, 1)?)))
            })
            .cost(|a, _| traversal(a[0].size())),
        ],
    );
    env.add(
        "endsWith",
        [O::new("ends_with_string", "string.(string) -> bool", |a| {
            Ok(Value::Bool(string(a, 0)?.ends_with(&**string(a, 1)?)))
        })
        .cost(|a, _| traversal(a[0].size()))],
    );
    let matches = |a: &[Value]| {
        let re = regex::compile(string(a, 1)?)?;
        Ok(Value::Bool(re.is_match(string(a, 0)?)))
    };
    env.add(
        "matches",
        [
            O::new("matches", "(string, string) -> bool", matches).cost(matches_cost),
            O::new("matches_string", "string.(string) -> bool", matches).cost(matches_cost),
        ],
    );
    conversions(env);
    time_accessors(env);
}

/// `==`: the smaller operand's traversal (1 for scalars).
fn equality_cost(a: &[Value], _: &Value) -> u64 {
    traversal(a[0].size().min(a[1].size()))
}

/// `matches`: the string's traversal (plus one) times a quarter of the pattern's length.
fn matches_cost(a: &[Value], _: &Value) -> u64 {
    let string = ((1.0 + a[0].size() as f64) * 0.1).ceil() as u64;
    let pattern = (a[1].size() as f64 * 0.25).ceil() as u64;
    string * pattern
}

/// cel-go's error for a value that does not convert.
fn conversion(from: &str, to: &str) -> Error {
    Error::new(format!("type conversion error from '{from}' to '{to}'"))
}

fn int_overflow() -> Error {
    Error::new("integer overflow")
}

fn uint_overflow() -> Error {
    Error::new("unsigned integer overflow")
}

/// `_<_`, `_<=_`, `_>_`, `_>=_` on every ordered type and across numeric types.
fn comparisons(env: &mut Env) {
    type Test = fn(std::cmp::Ordering) -> bool;
    let ops: [(&str, &str, Test); 4] = [
        ("_<_", "less", |o| o.is_lt()),
        ("_<=_", "less_equals", |o| o.is_le()),
        ("_>_", "greater", |o| o.is_gt()),
        ("_>=_", "greater_equals", |o| o.is_ge()),
    ];
    for (function, prefix, _) in ops {
        let overloads = [
            ("bool", "bool", "bool"),
            ("int64", "int", "int"),
            ("uint64", "uint", "uint"),
            ("double", "double", "double"),
            ("string", "string", "string"),
            ("bytes", "bytes", "bytes"),
            (
                "timestamp",
                "google.protobuf.Timestamp",
                "google.protobuf.Timestamp",
            ),
            (
                "duration",
                "google.protobuf.Duration",
                "google.protobuf.Duration",
            ),
            ("int64_uint64", "int", "uint"),
            ("int64_double", "int", "double"),
            ("uint64_int64", "uint", "int"),
            ("uint64_double", "uint", "double"),
            ("double_int64", "double", "int"),
            ("double_uint64", "double", "uint"),
        ];
        let mut list = Vec::new();
        for (suffix, a, b) in overloads {
            let id: &'static str = Box::leak(format!("{prefix}_{suffix}").into_boxed_str());
            let implementation: super::Implementation = match function {
                "_<_" => |a| compare(a, |o| o.is_lt()),
                "_<=_" => |a| compare(a, |o| o.is_le()),
                "_>_" => |a| compare(a, |o| o.is_gt()),
                _ => |a| compare(a, |o| o.is_ge()),
            };
            let mut overload = O::new(id, &format!("({a}, {b}) -> bool"), implementation);
            if matches!(suffix, "string" | "bytes") {
                overload = overload.cost(equality_cost);
            }
            list.push(overload);
        }
        env.add(function, list);
    }
}

fn compare(a: &[Value], test: fn(std::cmp::Ordering) -> bool) -> Result {
    match a[0].compare(&a[1]) {
        Some(order) => Ok(Value::Bool(test(order))),
        // NaN compares false with everything.
        None if matches!(a[0], Value::Double(_)) || matches!(a[1], Value::Double(_)) => {
            Ok(Value::Bool(false))
        }
        None => Err(no_such_overload()),
    }
}

/// `+`, `-`, `*`, `/`, `%`.
fn arithmetic(env: &mut Env) {
    env.add("_+_", [
        O::new("add_int64", "(int, int) -> int", |a| int(a, 0)?.checked_add(int(a, 1)?).map(Value::Int).ok_or_else(int_overflow)),
        O::new("add_uint64", "(uint, uint) -> uint", |a| uint_op(a, u64::checked_add)),
        O::new("add_double", "(double, double) -> double", |a| double_op(a, |x, y| x + y)),
        O::new("add_string", "(string, string) -> string", |a| {
            Ok(Value::string(format!("{}{}", string(a, 0)?, string(a, 1)?)))
        })
        .cost(|a, _| traversal(a[0].size() + a[1].size())),
        O::new("add_bytes", "(bytes, bytes) -> bytes", |a| match (&a[0], &a[1]) {
            (Value::Bytes(x), Value::Bytes(y)) => Ok(Value::Bytes([&x[..], &y[..]].concat().into())),
            _ => Err(no_such_overload()),
        })
        .cost(|a, _| traversal(a[0].size() + a[1].size())),
        O::new("add_list", "(list(A), list(A)) -> list(A)", add_lists),
        O::new("add_timestamp_duration", "(google.protobuf.Timestamp, google.protobuf.Duration) -> google.protobuf.Timestamp", |a| match (&a[0], &a[1]) {
            (Value::Timestamp(t), Value::Duration(d)) => timestamp_at(t.0 + d.0, t.1),
            _ => Err(no_such_overload()),
        }),
        O::new("add_duration_timestamp", "(google.protobuf.Duration, google.protobuf.Timestamp) -> google.protobuf.Timestamp", |a| match (&a[0], &a[1]) {
            (Value::Duration(d), Value::Timestamp(t)) => timestamp_at(t.0 + d.0, t.1),
            _ => Err(no_such_overload()),
        }),
        O::new("add_duration_duration", "(google.protobuf.Duration, google.protobuf.Duration) -> google.protobuf.Duration", |a| match (&a[0], &a[1]) {
            (Value::Duration(x), Value::Duration(y)) => duration(x.0 + y.0),
            _ => Err(no_such_overload()),
        }),
    ]);
    env.add("_-_", [
        O::new("subtract_int64", "(int, int) -> int", |a| int(a, 0)?.checked_sub(int(a, 1)?).map(Value::Int).ok_or_else(int_overflow)),
        O::new("subtract_uint64", "(uint, uint) -> uint", |a| uint_op(a, u64::checked_sub)),
        O::new("subtract_double", "(double, double) -> double", |a| double_op(a, |x, y| x - y)),
        O::new("subtract_timestamp_timestamp", "(google.protobuf.Timestamp, google.protobuf.Timestamp) -> google.protobuf.Duration", |a| match (&a[0], &a[1]) {
            (Value::Timestamp(x), Value::Timestamp(y)) => duration(x.0 - y.0),
            _ => Err(no_such_overload()),
        }),
        O::new("subtract_timestamp_duration", "(google.protobuf.Timestamp, google.protobuf.Duration) -> google.protobuf.Timestamp", |a| match (&a[0], &a[1]) {
            (Value::Timestamp(t), Value::Duration(d)) => timestamp_at(t.0 - d.0, t.1),
            _ => Err(no_such_overload()),
        }),
        O::new("subtract_duration_duration", "(google.protobuf.Duration, google.protobuf.Duration) -> google.protobuf.Duration", |a| match (&a[0], &a[1]) {
            (Value::Duration(x), Value::Duration(y)) => duration(x.0 - y.0),
            _ => Err(no_such_overload()),
        }),
    ]);
    env.add(
        "_*_",
        [
            O::new("multiply_int64", "(int, int) -> int", |a| {
                int(a, 0)?
                    .checked_mul(int(a, 1)?)
                    .map(Value::Int)
                    .ok_or_else(int_overflow)
            }),
            O::new("multiply_uint64", "(uint, uint) -> uint", |a| {
                uint_op(a, u64::checked_mul)
            }),
            O::new("multiply_double", "(double, double) -> double", |a| {
                double_op(a, |x, y| x * y)
            }),
        ],
    );
    env.add(
        "_/_",
        [
            O::new("divide_int64", "(int, int) -> int", |a| match int(a, 1)? {
                0 => Err(Error::new("division by zero")),
                y => int(a, 0)?
                    .checked_div(y)
                    .map(Value::Int)
                    .ok_or_else(int_overflow),
            }),
            O::new("divide_uint64", "(uint, uint) -> uint", |a| match a[1] {
                Value::Uint(0) => Err(Error::new("division by zero")),
                _ => uint_op(a, u64::checked_div),
            }),
            O::new("divide_double", "(double, double) -> double", |a| {
                double_op(a, |x, y| x / y)
            }),
        ],
    );
    env.add(
        "_%_",
        [
            O::new("modulo_int64", "(int, int) -> int", |a| match int(a, 1)? {
                0 => Err(Error::new("modulus by zero")),
                y => int(a, 0)?
                    .checked_rem(y)
                    .map(Value::Int)
                    .ok_or_else(int_overflow),
            }),
            O::new("modulo_uint64", "(uint, uint) -> uint", |a| match a[1] {
                Value::Uint(0) => Err(Error::new("modulus by zero")),
                _ => uint_op(a, u64::checked_rem),
            }),
        ],
    );
}

fn uint_op(a: &[Value], op: fn(u64, u64) -> Option<u64>) -> Result {
    match (&a[0], &a[1]) {
        (Value::Uint(x), Value::Uint(y)) => op(*x, *y).map(Value::Uint).ok_or_else(uint_overflow),
        _ => Err(no_such_overload()),
    }
}

fn double_op(a: &[Value], op: fn(f64, f64) -> f64) -> Result {
    match (&a[0], &a[1]) {
        (Value::Double(x), Value::Double(y)) => Ok(Value::Double(op(*x, *y))),
        _ => Err(no_such_overload()),
    }
}

/// A timestamp keeping the offset of the one it was computed from.
fn timestamp_at(nanos: i128, offset: i32) -> Result {
    match timestamp(nanos)? {
        Value::Timestamp(t) => Ok(Value::Timestamp(crate::time::Timestamp(t.0, offset))),
        other => Ok(other),
    }
}

fn timestamp(nanos: i128) -> Result {
    Timestamp::checked(nanos)
        .map(Value::Timestamp)
        .ok_or_else(|| Error::new("timestamp overflow"))
}

fn duration(nanos: i128) -> Result {
    Duration::checked(nanos)
        .map(Value::Duration)
        .ok_or_else(|| Error::new("duration overflow"))
}

/// `+` on lists: concatenation; a union for set lists and a merge by key for map lists
/// (kube's unstructured lists).
fn add_lists(a: &[Value]) -> Result {
    let (Value::List(x), Value::List(y)) = (&a[0], &a[1]) else {
        return Err(no_such_overload());
    };
    let mut items = x.items.clone();
    match &x.kind {
        ListKind::Atomic => items.extend(y.items.iter().cloned()),
        ListKind::Set => {
            for item in &y.items {
                if !items.iter().any(|i| i.equals(item)) {
                    items.push(item.clone());
                }
            }
        }
        ListKind::Map(keys) => {
            for item in &y.items {
                let key = crate::value::map_list_key(item, keys);
                match items
                    .iter()
                    .position(|i| crate::value::map_list_key(i, keys) == key)
                {
                    Some(at) => items[at] = item.clone(),
                    None => items.push(item.clone()),
                }
            }
        }
    }
    Ok(Value::List(Arc::new(List {
        items,
        kind: x.kind.clone(),
    })))
}

/// `_[_]` on a list or a map.
pub fn index(a: &[Value]) -> Result {
    match (&a[0], &a[1]) {
        (Value::List(l), i) => {
            let at = match i {
                Value::Int(i) => *i,
                Value::Uint(u) => i64::try_from(*u).unwrap_or(i64::MAX),
                Value::Double(d) if d.fract() == 0.0 => *d as i64,
                _ => {
                    return Err(Error::new(format!(
                        "unsupported index type '{}' in list",
                        i.type_name()
                    )));
                }
            };
            usize::try_from(at)
                .ok()
                .and_then(|at| l.items.get(at))
                .cloned()
                .ok_or_else(|| Error::new(format!("index out of bounds: {at}")))
        }
        (Value::Map(m), key) => m.get(key).cloned().ok_or_else(|| no_such_key(key)),
        _ => Err(no_such_overload()),
    }
}

/// cel-go's error for a missing map key or object field.
pub fn no_such_key(key: &Value) -> Error {
    Error::new(format!("no such key: {key}"))
}

/// Type conversions: `int()`, `uint()`, `double()`, `string()`, `bytes()`, `bool()`,
/// `dyn()`, `type()`, `duration()`, `timestamp()`.
fn conversions(env: &mut Env) {
    env.add(
        "int",
        [
            O::new("int64_to_int64", "(int) -> int", |a| Ok(a[0].clone())),
            O::new("uint64_to_int64", "(uint) -> int", |a| match a[0] {
                Value::Uint(u) => i64::try_from(u).map(Value::Int).map_err(|_| int_overflow()),
                _ => Err(no_such_overload()),
            }),
            O::new("double_to_int64", "(double) -> int", |a| match a[0] {
                Value::Double(d)
                    if d.is_finite() && d > -9.223372036854776e18 && d < 9.223372036854776e18 =>
                {
                    Ok(Value::Int(d as i64))
                }
                Value::Double(_) => Err(int_overflow()),
                _ => Err(no_such_overload()),
            }),
            O::new("string_to_int64", "(string) -> int", |a| {
                let s = string(a, 0)?;
                s.parse::<i64>()
                    .map(Value::Int)
                    .map_err(|_| conversion("string", "int"))
            }),
            O::new(
                "timestamp_to_int64",
                "(google.protobuf.Timestamp) -> int",
                |a| match a[0] {
                    Value::Timestamp(t) => Ok(Value::Int(t.0.div_euclid(1_000_000_000) as i64)),
                    _ => Err(no_such_overload()),
                },
            ),
        ],
    );
    env.add(
        "uint",
        [
            O::new("uint64_to_uint64", "(uint) -> uint", |a| Ok(a[0].clone())),
            O::new("int64_to_uint64", "(int) -> uint", |a| {
                u64::try_from(int(a, 0)?)
                    .map(Value::Uint)
                    .map_err(|_| uint_overflow())
            }),
            O::new("double_to_uint64", "(double) -> uint", |a| match a[0] {
                Value::Double(d) if d.is_finite() && d > -1.0 && d < 1.8446744073709552e19 => {
                    Ok(Value::Uint(d as u64))
                }
                Value::Double(_) => Err(uint_overflow()),
                _ => Err(no_such_overload()),
            }),
            O::new("string_to_uint64", "(string) -> uint", |a| {
                let s = string(a, 0)?;
                s.parse::<u64>()
                    .map(Value::Uint)
                    .map_err(|_| conversion("string", "uint"))
            }),
        ],
    );
    env.add(
        "double",
        [
            O::new("double_to_double", "(double) -> double", |a| {
                Ok(a[0].clone())
            }),
            O::new("int64_to_double", "(int) -> double", |a| {
                Ok(Value::Double(int(a, 0)? as f64))
            }),
            O::new("uint64_to_double", "(uint) -> double", |a| match a[0] {
                Value::Uint(u) => Ok(Value::Double(u as f64)),
                _ => Err(no_such_overload()),
            }),
            O::new("string_to_double", "(string) -> double", |a| {
                let s = string(a, 0)?;
                s.parse::<f64>()
                    .map(Value::Double)
                    .map_err(|_| conversion("string", "double"))
            }),
        ],
    );
    env.add(
        "string",
        [
            O::new("string_to_string", "(string) -> string", |a| {
                Ok(a[0].clone())
            }),
            O::new("int64_to_string", "(int) -> string", |a| {
                Ok(Value::string(a[0].to_string()))
            }),
            O::new("uint64_to_string", "(uint) -> string", |a| {
                Ok(Value::string(a[0].to_string()))
            }),
            O::new("double_to_string", "(double) -> string", |a| match a[0] {
                Value::Double(d) => Ok(Value::string(format_double(d))),
                _ => Err(no_such_overload()),
            }),
            O::new("bool_to_string", "(bool) -> string", |a| {
                Ok(Value::string(a[0].to_string()))
            }),
            O::new("bytes_to_string", "(bytes) -> string", |a| match &a[0] {
                Value::Bytes(b) => std::str::from_utf8(b)
                    .map(Value::string)
                    .map_err(|_| Error::new("invalid UTF-8 in bytes, cannot convert to string")),
                _ => Err(no_such_overload()),
            })
            .cost(|a, _| traversal(a[0].size())),
            O::new(
                "timestamp_to_string",
                "(google.protobuf.Timestamp) -> string",
                |a| Ok(Value::string(a[0].to_string())),
            ),
            O::new(
                "duration_to_string",
                "(google.protobuf.Duration) -> string",
                |a| Ok(Value::string(a[0].to_string())),
            ),
        ],
    );
    env.add(
        "bytes",
        [
            O::new("bytes_to_bytes", "(bytes) -> bytes", |a| Ok(a[0].clone())),
            O::new("string_to_bytes", "(string) -> bytes", |a| {
                Ok(Value::Bytes(string(a, 0)?.as_bytes().into()))
            })
            .cost(|a, _| traversal(a[0].size())),
        ],
    );
    env.add(
        "bool",
        [
            O::new("bool_to_bool", "(bool) -> bool", |a| Ok(a[0].clone())),
            O::new("string_to_bool", "(string) -> bool", |a| {
                match &**string(a, 0)? {
                    "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(Value::Bool(true)),
                    "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(Value::Bool(false)),
                    _ => Err(conversion("string", "bool")),
                }
            }),
        ],
    );
    env.add(
        "dyn",
        [O::new("to_dyn", "(A) -> dyn", |a| Ok(a[0].clone()))],
    );
    env.add(
        "type",
        [O::new("type", "(A) -> type(A)", |a| {
            Ok(Value::Type(a[0].type_name().into()))
        })],
    );
    env.add(
        "duration",
        [
            O::new(
                "duration_to_duration",
                "(google.protobuf.Duration) -> google.protobuf.Duration",
                |a| Ok(a[0].clone()),
            ),
            O::new(
                "string_to_duration",
                "(string) -> google.protobuf.Duration",
                |a| {
                    let d = Duration::parse(string(a, 0)?)
                        .map_err(|_| conversion("string", "google.protobuf.Duration"))?;
                    duration(d.0)
                },
            ),
        ],
    );
    env.add(
        "timestamp",
        [
            O::new(
                "timestamp_to_timestamp",
                "(google.protobuf.Timestamp) -> google.protobuf.Timestamp",
                |a| Ok(a[0].clone()),
            ),
            O::new(
                "string_to_timestamp",
                "(string) -> google.protobuf.Timestamp",
                |a| {
                    Timestamp::parse(string(a, 0)?)
                        .map(Value::Timestamp)
                        .map_err(|_| conversion("string", "google.protobuf.Timestamp"))
                },
            ),
            O::new(
                "int64_to_timestamp",
                "(int) -> google.protobuf.Timestamp",
                |a| timestamp(int(a, 0)? as i128 * 1_000_000_000),
            ),
        ],
    );
}

/// A double as Go's `strconv.FormatFloat(d, 'g', -1, 64)` writes it, as cel-go converts
/// doubles to strings.
pub fn format_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if d == 0.0 {
        return if d.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Shortest digits and exponent, as Rust's `{:e}` finds them.
    let sci = format!("{d:e}");
    let (mantissa, exponent) = sci.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    // `%g` switches to an exponent below 1e-4 and from 1e6 (precision 6 when shortest).
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exponent.abs());
    }
    format!("{d}")
}

/// The calendar accessors of timestamps (in UTC or a given zone) and the unit
/// accessors of durations.
fn time_accessors(env: &mut Env) {
    macro_rules! timestamp_field {
        ($name:literal, $id:literal, $field:expr) => {
            env.add(
                $name,
                [
                    O::new(
                        concat!("timestamp_to_", $id),
                        "google.protobuf.Timestamp.() -> int",
                        |a| field(a, 0, $field),
                    ),
                    O::new(
                        concat!("timestamp_to_", $id, "_with_tz"),
                        "google.protobuf.Timestamp.(string) -> int",
                        |a| {
                            let offset = zone_offset(string(a, 1)?).map_err(Error::new)?;
                            field(a, offset, $field)
                        },
                    ),
                ],
            );
        };
    }
    timestamp_field!("getFullYear", "year", |f| f.year);
    timestamp_field!("getMonth", "month", |f| f.month - 1);
    timestamp_field!("getDayOfYear", "day_of_year", |f| f.day_of_year);
    timestamp_field!("getDayOfMonth", "day_of_month_zero_based", |f| f.day - 1);
    timestamp_field!("getDate", "day_of_month_one_based", |f| f.day);
    timestamp_field!("getDayOfWeek", "day_of_week", |f| f.day_of_week);
    let units: [(
        &str,
        &'static str,
        &'static str,
        Option<super::Implementation>,
    ); 4] = [
        (
            "getHours",
            "timestamp_to_hours",
            "duration_to_hours",
            Some(|a| duration_in(a, 3_600_000_000_000)),
        ),
        (
            "getMinutes",
            "timestamp_to_minutes",
            "duration_to_minutes",
            Some(|a| duration_in(a, 60_000_000_000)),
        ),
        (
            "getSeconds",
            "timestamp_to_seconds",
            "duration_to_seconds",
            Some(|a| duration_in(a, 1_000_000_000)),
        ),
        (
            "getMilliseconds",
            "timestamp_to_milliseconds",
            "duration_to_milliseconds",
            Some(|a| duration_in(a, 1_000_000)),
        ),
    ];
    for (name, t_id, d_id, d_impl) in units {
        let t_impl: super::Implementation = match name {
            "getHours" => |a| field(a, 0, |f| f.hour),
            "getMinutes" => |a| field(a, 0, |f| f.minute),
            "getSeconds" => |a| field(a, 0, |f| f.second),
            _ => |a| field(a, 0, |f| f.nanos / 1_000_000),
        };
        let t_tz_impl: super::Implementation = match name {
            "getHours" => |a| field(a, zone(a)?, |f| f.hour),
            "getMinutes" => |a| field(a, zone(a)?, |f| f.minute),
            "getSeconds" => |a| field(a, zone(a)?, |f| f.second),
            _ => |a| field(a, zone(a)?, |f| f.nanos / 1_000_000),
        };
        let tz_id: &'static str = Box::leak(format!("{t_id}_with_tz").into_boxed_str());
        env.add(
            name,
            [
                O::new(t_id, "google.protobuf.Timestamp.() -> int", t_impl),
                O::new(
                    tz_id,
                    "google.protobuf.Timestamp.(string) -> int",
                    t_tz_impl,
                ),
                O::new(
                    d_id,
                    "google.protobuf.Duration.() -> int",
                    d_impl.expect("set above"),
                ),
            ],
        );
    }
}

fn zone(a: &[Value]) -> Result<i128> {
    zone_offset(string(a, 1)?).map_err(Error::new)
}

fn field(a: &[Value], offset: i128, get: fn(&crate::time::Fields) -> i128) -> Result {
    match a[0] {
        Value::Timestamp(t) => Ok(Value::Int(get(&t.fields(offset)) as i64)),
        _ => Err(no_such_overload()),
    }
}

fn duration_in(a: &[Value], unit: i128) -> Result {
    match a[0] {
        Value::Duration(d) => Ok(Value::Int(d.in_units(unit))),
        _ => Err(no_such_overload()),
    }
}

/// A map value from string keys.
pub fn string_map(entries: impl IntoIterator<Item = (String, Value)>) -> Value {
    Value::Map(Arc::new(Map {
        entries: entries
            .into_iter()
            .map(|(k, v)| (Key::String(k.into()), v))
            .collect(),
        type_name: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_go_prints_them() {
        for (d, text) in [
            (1.0, "1"),
            (1.5, "1.5"),
            (1e21, "1e+21"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (-2.5e-7, "-2.5e-07"),
        ] {
            assert_eq!(format_double(d), text);
        }
    }
}
