//! kube's list library: `isSorted()`, `sum()`, `min()`, `max()`, `indexOf()`,
//! `lastIndexOf()` on lists of comparable (or summable) element types.

use std::cmp::Ordering;

use crate::library::{Env, Error, Implementation, Overload as O, Result, list, no_such_overload};
use crate::value::{Duration, Value};

/// Element types `isSorted`, `min` and `max` take, as kube names them in overload ids.
const COMPARABLE: &[(&str, &str)] = &[
    ("int", "int"),
    ("uint", "uint"),
    ("double", "double"),
    ("bool", "bool"),
    ("duration", "google.protobuf.Duration"),
    ("timestamp", "google.protobuf.Timestamp"),
    ("string", "string"),
    ("bytes", "bytes"),
];

/// Adds the list library to `env`.
pub fn install(env: &mut Env) {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let each =
        |name: &str, id: fn(&str) -> String, result: fn(&str) -> String, imp: Implementation| {
            (COMPARABLE.iter())
                .map(|(n, t)| O::new(leak(id(n)), &format!("list({t}).() -> {}", result(t)), imp))
                .collect::<Vec<_>>()
                .into_iter()
                .map(move |o| (name.to_owned(), o))
                .collect::<Vec<_>>()
        };
    let mut all = Vec::new();
    all.extend(each(
        "isSorted",
        |n| format!("list_{n}_is_sorted_bool"),
        |_| "bool".into(),
        is_sorted,
    ));
    let sums: [(&str, &str, Implementation); 4] = [
        ("int", "int", |a| sum(a, Value::Int(0))),
        ("uint", "uint", |a| sum(a, Value::Uint(0))),
        ("double", "double", |a| sum(a, Value::Double(0.0))),
        ("duration", "google.protobuf.Duration", |a| {
            sum(a, Value::Duration(Duration(0)))
        }),
    ];
    for (n, t, implementation) in sums {
        let id = leak(format!("list_{n}_sum_{n}"));
        all.push((
            "sum".to_owned(),
            O::new(id, &format!("list({t}).() -> {t}"), implementation),
        ));
    }
    all.extend(each(
        "max",
        |n| format!("list_{n}_max_{n}"),
        |t| t.into(),
        |a| extreme(a, "max", Ordering::Less),
    ));
    all.extend(each(
        "min",
        |n| format!("list_{n}_min_{n}"),
        |t| t.into(),
        |a| extreme(a, "min", Ordering::Greater),
    ));
    for (name, overload) in all {
        env.add(&name, [overload]);
    }
    env.add(
        "indexOf",
        [O::new("list_a_index_of_int", "list(A).(A) -> int", |a| {
            let items = list(a, 0)?;
            Ok(Value::Int(
                items
                    .iter()
                    .position(|v| v.equals(&a[1]))
                    .map_or(-1, |i| i as i64),
            ))
        })],
    );
    env.add(
        "lastIndexOf",
        [O::new(
            "list_a_last_index_of_int",
            "list(A).(A) -> int",
            |a| {
                let items = list(a, 0)?;
                Ok(Value::Int(
                    items
                        .iter()
                        .rposition(|v| v.equals(&a[1]))
                        .map_or(-1, |i| i as i64),
                ))
            },
        )],
    );
}

fn is_sorted(a: &[Value]) -> Result {
    let items = list(a, 0)?;
    for pair in items.windows(2) {
        match pair[0].compare(&pair[1]) {
            Some(Ordering::Greater) => return Ok(Value::Bool(false)),
            Some(_) => {}
            None => return Err(no_such_overload()),
        }
    }
    Ok(Value::Bool(true))
}

/// `sum()`: from the element type's `zero`.
fn sum(a: &[Value], zero: Value) -> Result {
    let Value::List(l) = &a[0] else {
        return Err(no_such_overload());
    };
    let mut total: Option<Value> = None;
    for item in &l.items {
        total = Some(match (total, item) {
            (None, v) => v.clone(),
            (Some(Value::Int(x)), Value::Int(y)) => Value::Int(
                x.checked_add(*y)
                    .ok_or_else(|| Error::new("integer overflow"))?,
            ),
            (Some(Value::Uint(x)), Value::Uint(y)) => Value::Uint(
                x.checked_add(*y)
                    .ok_or_else(|| Error::new("unsigned integer overflow"))?,
            ),
            (Some(Value::Double(x)), Value::Double(y)) => Value::Double(x + y),
            (Some(Value::Duration(x)), Value::Duration(y)) => Value::Duration(Duration(x.0 + y.0)),
            _ => return Err(no_such_overload()),
        });
    }
    Ok(total.unwrap_or(zero))
}

/// `min()` / `max()`: the element that `replace_when` the current one compares so.
fn extreme(a: &[Value], name: &str, replace_when: Ordering) -> Result {
    let items = list(a, 0)?;
    let mut best: Option<&Value> = None;
    for item in items {
        best = match best {
            None => Some(item),
            Some(b) => match b.compare(item) {
                Some(o) if o == replace_when => Some(item),
                Some(_) => Some(b),
                None => return Err(no_such_overload()),
            },
        };
    }
    best.cloned()
        .ok_or_else(|| Error::new(format!("{name} called on empty list")))
}
