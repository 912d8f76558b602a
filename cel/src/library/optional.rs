//! cel-go's optional values (`cel.OptionalTypes()`, which kube enables from 1.28):
//! `optional.of()`, `optional.none()`, `.hasValue()`, `.value()`, `.or()`, `.orValue()`,
//! `a.?b`, `a[?b]`; the parser expands the `optMap` / `optFlatMap` macros.

use std::sync::Arc;

use super::{Env, Error, Overload as O, Result, no_such_overload};
use crate::value::Value;

/// Overload ids the interpreter evaluates itself, as they short-circuit.
pub mod ids {
    /// `a.or(b)`.
    pub const OR: &str = "optional_or_optional";
    /// `a.orValue(b)`.
    pub const OR_VALUE: &str = "optional_orValue_value";
    /// `a.?b`.
    pub const SELECT: &str = "select_optional_field";
}

/// Adds the optional library to `env`.
pub fn install(env: &mut Env) {
    env.add(
        "optional.of",
        [O::new("optional_of", "(V) -> optional_type(V)", |a| {
            Ok(Value::Optional(Some(Arc::new(a[0].clone()))))
        })],
    );
    env.add(
        "optional.ofNonZeroValue",
        [O::new(
            "optional_ofNonZeroValue",
            "(V) -> optional_type(V)",
            |a| {
                Ok(Value::Optional(
                    (!is_zero(&a[0])).then(|| Arc::new(a[0].clone())),
                ))
            },
        )],
    );
    env.add(
        "optional.none",
        [O::new("optional_none", "() -> optional_type(V)", |_| {
            Ok(Value::Optional(None))
        })],
    );
    env.add(
        "value",
        [O::new(
            "optional_value",
            "optional_type(V).() -> V",
            |a| match &a[0] {
                Value::Optional(Some(v)) => Ok((**v).clone()),
                Value::Optional(None) => Err(Error::new("optional.none() dereference")),
                _ => Err(no_such_overload()),
            },
        )],
    );
    env.add(
        "hasValue",
        [O::new(
            "optional_hasValue",
            "optional_type(V).() -> bool",
            |a| match &a[0] {
                Value::Optional(o) => Ok(Value::Bool(o.is_some())),
                _ => Err(no_such_overload()),
            },
        )],
    );
    env.add(
        "or",
        [O::special(
            ids::OR,
            "optional_type(V).(optional_type(V)) -> optional_type(V)",
        )],
    );
    env.add(
        "orValue",
        [O::special(ids::OR_VALUE, "optional_type(V).(V) -> V")],
    );
    env.add(
        "_?._",
        [O::special(ids::SELECT, "(dyn, string) -> optional_type(V)")],
    );
    env.add(
        "_[?_]",
        [
            O::new(
                "list_optindex_optional_int",
                "(list(V), int) -> optional_type(V)",
                opt_index,
            ),
            O::new(
                "optional_list_optindex_optional_int",
                "(optional_type(list(V)), int) -> optional_type(V)",
                opt_index,
            ),
            O::new(
                "map_optindex_optional_value",
                "(map(K, V), K) -> optional_type(V)",
                opt_index,
            ),
            O::new(
                "optional_map_optindex_optional_value",
                "(optional_type(map(K, V)), K) -> optional_type(V)",
                opt_index,
            ),
        ],
    );
    env.add(
        "_[_]",
        [
            O::new(
                "optional_list_index_int",
                "(optional_type(list(V)), int) -> optional_type(V)",
                opt_index,
            ),
            O::new(
                "optional_map_index_value",
                "(optional_type(map(K, V)), K) -> optional_type(V)",
                opt_index,
            ),
        ],
    );
}

/// `a[?i]`: the element or entry, or none; on an optional `a`, none when it is.
fn opt_index(a: &[Value]) -> Result {
    let target = match &a[0] {
        Value::Optional(None) => return Ok(Value::Optional(None)),
        Value::Optional(Some(v)) => (**v).clone(),
        other => other.clone(),
    };
    match (&target, &a[1]) {
        (Value::List(l), Value::Int(i)) => Ok(Value::Optional(
            usize::try_from(*i)
                .ok()
                .and_then(|i| l.items.get(i))
                .map(|v| Arc::new(v.clone())),
        )),
        (Value::Map(m), key) => Ok(Value::Optional(m.get(key).map(|v| Arc::new(v.clone())))),
        _ => Err(no_such_overload()),
    }
}

/// Whether `v` is its type's zero value.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::Duration(d) => d.0 == 0,
        // Go's zero time: 0001-01-01T00:00:00Z.
        Value::Timestamp(t) => t.0 == -62_135_596_800 * 1_000_000_000,
        Value::List(l) => l.items.is_empty(),
        Value::Map(m) => m.entries.is_empty(),
        Value::Optional(o) => o.is_none(),
        Value::Type(_) | Value::Opaque(_) => false,
    }
}
