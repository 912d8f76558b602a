//! Field paths: the steps from an object's root to one of its fields, as server-side apply
//! names them (sigs.k8s.io/structured-merge-diff `fieldpath`).
//!
//! A step is a field of a struct or a key of a map ([`PathElement::Field`]), an item of a
//! list-map named by its keys ([`PathElement::Key`]), an item of a set named by its value
//! ([`PathElement::Value`]) or an item of an atomic list by position
//! ([`PathElement::Index`]). Elements are totally ordered as structured-merge-diff orders
//! them (fields, then keys, then values, then indices), because that order is visible: it
//! is the order of `fieldsV1` and of conflict messages.

use std::cmp::Ordering;
use std::fmt;

use serde_json::{Number, Value};

/// One step of a field path.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// A struct field or map key: `.spec`.
    Field(String),
    /// A list-map item by its key fields, sorted by name: `[name="a",port=80]`.
    Key(Vec<(String, Value)>),
    /// A set item by its value: `[="a"]`.
    Value(Value),
    /// An item by position (atomic lists): `[0]`.
    Index(usize),
}

impl PathElement {
    /// A list-map item's element from its key fields (sorted here, numbers normalised).
    pub fn key(mut fields: Vec<(String, Value)>) -> PathElement {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, value) in &mut fields {
            *value = normalize(value.clone());
        }
        PathElement::Key(fields)
    }

    /// A set item's element (numbers normalised).
    pub fn value(value: Value) -> PathElement {
        PathElement::Value(normalize(value))
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }
}

/// A float with an integral value is that integer: Go's decoders read `80` and `80.0`
/// alike into an element, and both print as `80`.
fn normalize(value: Value) -> Value {
    match &value {
        Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => value,
        },
        Value::Array(items) => Value::Array(items.iter().cloned().map(normalize).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), normalize(v.clone())))
                .collect(),
        ),
        _ => value,
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.as_bytes().cmp(b.as_bytes()),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((an, av), (bn, bv)) in a.iter().zip(b) {
                    let order = an
                        .as_bytes()
                        .cmp(bn.as_bytes())
                        .then_with(|| compare(av, bv));
                    if order != Ordering::Equal {
                        return order;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => compare(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
}

/// structured-merge-diff's total order of values: numbers (compared numerically) before
/// strings, booleans, lists, maps and null.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    fn rank(value: &Value) -> u8 {
        match value {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y),
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (x, y) in x.iter().zip(y) {
                let order = compare(x, y);
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut x: Vec<_> = x.iter().collect();
            let mut y: Vec<_> = y.iter().collect();
            x.sort_by(|a, b| a.0.cmp(b.0));
            y.sort_by(|a, b| a.0.cmp(b.0));
            for ((xk, xv), (yk, yv)) in x.iter().zip(&y) {
                let order = xk.cmp(yk).then_with(|| compare(xv, yv));
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        (x, y) => rank(x).cmp(&rank(y)),
    }
}

fn compare_numbers(x: &Number, y: &Number) -> Ordering {
    match (x.as_i64(), y.as_i64()) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

/// Values as structured-merge-diff's `value.ToString` prints them in paths: strings quoted
/// (Go's `%q`), the rest as they are.
fn to_string(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(to_string).collect::<Vec<_>>().join(",")
        ),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", to_string(v)))
            .collect(),
        other => other.to_string(),
    }
}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(name, value)| format!("{name}={}", to_string(value)))
                    .collect();
                write!(f, "[{}]", fields.join(","))
            }
            PathElement::Value(value) => write!(f, "[={}]", to_string(value)),
            PathElement::Index(index) => write!(f, "[{index}]"),
        }
    }
}

/// A path: the elements from the root, printed as `.spec.ports[containerPort=80].name`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Path(pub Vec<PathElement>);

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|element| element.fmt(f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn elements_order_as_structured_merge_diff_orders_them() {
        let mut elements = [
            PathElement::Index(0),
            PathElement::value(json!("a")),
            PathElement::value(json!(2)),
            PathElement::key(vec![("name".into(), json!("b"))]),
            PathElement::key(vec![("name".into(), json!("a"))]),
            PathElement::Field("b".into()),
            PathElement::Field("a".into()),
        ];
        elements.sort();
        let printed: Vec<String> = elements.iter().map(ToString::to_string).collect();
        assert_eq!(
            printed,
            [
                ".a",
                ".b",
                "[name=\"a\"]",
                "[name=\"b\"]",
                "[=2]",
                "[=\"a\"]",
                "[0]"
            ]
        );
    }

    #[test]
    fn keys_sort_their_fields_and_numbers_compare_numerically() {
        let key = PathElement::key(vec![
            ("protocol".into(), json!("TCP")),
            ("port".into(), json!(80.0)),
        ]);
        assert_eq!(key.to_string(), "[port=80,protocol=\"TCP\"]");
        assert_eq!(PathElement::value(json!(2.0)), PathElement::value(json!(2)));
        assert_eq!(compare(&json!(1), &json!(1.5)), Ordering::Less);
        let path = Path(vec![
            PathElement::Field("spec".into()),
            PathElement::value(json!("x")),
        ]);
        assert_eq!(path.to_string(), ".spec[=\"x\"]");
    }
}
