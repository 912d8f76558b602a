//! CEL values, and what the language defines on all of them: equality (numbers equal
//! across types, lists of `x-kubernetes-list-type: set` and `map` equal whatever their
//! order, as kube's unstructured lists are), order, size (what runtime costs are counted
//! in), and each value's type name.

use std::any::Any;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

pub use crate::time::{Duration, Timestamp};

/// A CEL value.
#[derive(Clone, Debug)]
pub enum Value {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    Uint(u64),
    /// A double.
    Double(f64),
    /// A string.
    String(Arc<str>),
    /// Bytes.
    Bytes(Arc<[u8]>),
    /// A duration.
    Duration(Duration),
    /// A timestamp.
    Timestamp(Timestamp),
    /// A list.
    List(Arc<List>),
    /// A map (and a schema object).
    Map(Arc<Map>),
    /// A type, by name (`int`, `list`, `google.protobuf.Duration`).
    Type(Arc<str>),
    /// An optional value.
    Optional(Option<Arc<Value>>),
    /// A library's value (a quantity, an IP address, ...).
    Opaque(Arc<dyn Opaque>),
}

/// A library's value type.
pub trait Opaque: fmt::Debug + Send + Sync + Any {
    /// Its CEL type name.
    fn type_name(&self) -> &'static str;
    /// Whether it equals `other` (a value of any opaque type).
    fn equals(&self, other: &dyn Opaque) -> bool;
    /// Itself, to downcast.
    fn as_any(&self) -> &dyn Any;
}

/// A list: its items, and how a schema says to compare it.
#[derive(Clone, Debug, Default)]
pub struct List {
    /// The items.
    pub items: Vec<Value>,
    /// Atomic, set or map.
    pub kind: ListKind,
}

/// How a list compares and merges (`x-kubernetes-list-type`).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ListKind {
    /// In order.
    #[default]
    Atomic,
    /// As a set: order ignored; `+` is union.
    Set,
    /// As a map keyed by these (escaped) fields: order ignored; `+` merges by key.
    Map(Arc<[String]>),
}

/// A map's key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// A boolean key.
    Bool(bool),
    /// An integer key.
    Int(i64),
    /// An unsigned key.
    Uint(u64),
    /// A string key.
    String(Arc<str>),
}

/// A map, ordered by key (iteration order is then stable).
#[derive(Clone, Debug, Default)]
pub struct Map {
    /// The entries.
    pub entries: BTreeMap<Key, Value>,
    /// The struct type it was made as (`Object.spec{...}`), if any: kube checks the names
    /// of nested `Object` values against their fields when it reads them.
    pub type_name: Option<Arc<str>>,
}

impl Key {
    /// The key a value is, if it can be one.
    pub fn of(value: &Value) -> Option<Key> {
        Some(match value {
            Value::Bool(b) => Key::Bool(*b),
            Value::Int(i) => Key::Int(*i),
            Value::Uint(u) => Key::Uint(*u),
            Value::String(s) => Key::String(s.clone()),
            _ => return None,
        })
    }

    /// The key as a value.
    pub fn to_value(&self) -> Value {
        match self {
            Key::Bool(b) => Value::Bool(*b),
            Key::Int(i) => Value::Int(*i),
            Key::Uint(u) => Value::Uint(*u),
            Key::String(s) => Value::String(s.clone()),
        }
    }
}

impl Map {
    /// The value at `key`, numbers matching across int, uint and whole doubles.
    pub fn get(&self, key: &Value) -> Option<&Value> {
        match key {
            Value::Int(i) => (self.entries.get(&Key::Int(*i))).or_else(|| {
                u64::try_from(*i)
                    .ok()
                    .and_then(|u| self.entries.get(&Key::Uint(u)))
            }),
            Value::Uint(u) => (self.entries.get(&Key::Uint(*u))).or_else(|| {
                i64::try_from(*u)
                    .ok()
                    .and_then(|i| self.entries.get(&Key::Int(i)))
            }),
            Value::Double(d) if d.fract() == 0.0 => {
                if *d >= 0.0 && *d < 18446744073709551616.0 {
                    self.get(&Value::Uint(*d as u64))
                } else if *d >= -9223372036854775808.0 && *d < 0.0 {
                    self.get(&Value::Int(*d as i64))
                } else {
                    None
                }
            }
            _ => Key::of(key).and_then(|k| self.entries.get(&k)),
        }
    }

    /// The value of a string key.
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.entries.get(&Key::String(name.into()))
    }
}

impl Value {
    /// A string value.
    pub fn string(s: impl Into<Arc<str>>) -> Value {
        Value::String(s.into())
    }

    /// A list value of plain items.
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(List {
            items,
            kind: ListKind::Atomic,
        }))
    }

    /// The name of the value's type, as `type()` gives it.
    pub fn type_name(&self) -> &str {
        match self {
            Value::Null => "null_type",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Double(_) => "double",
            Value::String(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::Duration(_) => "google.protobuf.Duration",
            Value::Timestamp(_) => "google.protobuf.Timestamp",
            Value::List(_) => "list",
            Value::Map(m) => m.type_name.as_deref().unwrap_or("map"),
            Value::Type(_) => "type",
            Value::Optional(_) => "optional_type",
            Value::Opaque(o) => o.type_name(),
        }
    }

    /// What runtime costs count: a string's characters, bytes' length, a list's items, a
    /// map's entries; 1 for everything else (cel-go's `Sizer`).
    pub fn size(&self) -> u64 {
        match self {
            Value::String(s) => s.chars().count() as u64,
            Value::Bytes(b) => b.len() as u64,
            Value::List(l) => l.items.len() as u64,
            Value::Map(m) => m.entries.len() as u64,
            _ => 1,
        }
    }

    /// CEL equality: `None` when the two cannot be compared (an error in CEL).
    pub fn equals(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::Duration(a), Value::Duration(b)) => a == b,
            (Value::Timestamp(a), Value::Timestamp(b)) => a == b,
            (Value::Type(a), Value::Type(b)) => a == b,
            (Value::Optional(a), Value::Optional(b)) => match (a, b) {
                (Some(a), Some(b)) => a.equals(b),
                (None, None) => true,
                _ => false,
            },
            (Value::Opaque(a), Value::Opaque(b)) => a.equals(&**b),
            (Value::List(a), Value::List(b)) => list_equals(a, b),
            (Value::Map(a), Value::Map(b)) => {
                a.entries.len() == b.entries.len()
                    && (a.entries.iter())
                        .all(|(k, v)| b.get(&k.to_value()).is_some_and(|w| v.equals(w)))
            }
            _ => self.compare_numbers(other) == Some(Ordering::Equal),
        }
    }

    /// The order of two numbers of any numeric types (CEL's cross-type comparisons).
    pub fn compare_numbers(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => Some(a.cmp(b)),
            (Value::Uint(a), Value::Uint(b)) => Some(a.cmp(b)),
            (Value::Double(a), Value::Double(b)) => a.partial_cmp(b),
            (Value::Int(a), Value::Uint(b)) => Some((*a as i128).cmp(&(*b as i128))),
            (Value::Uint(a), Value::Int(b)) => Some((*a as i128).cmp(&(*b as i128))),
            (Value::Int(a), Value::Double(b)) => compare_int_double(*a as i128, *b),
            (Value::Uint(a), Value::Double(b)) => compare_int_double(*a as i128, *b),
            (Value::Double(a), Value::Int(b)) => {
                compare_int_double(*b as i128, *a).map(Ordering::reverse)
            }
            (Value::Double(a), Value::Uint(b)) => {
                compare_int_double(*b as i128, *a).map(Ordering::reverse)
            }
            _ => None,
        }
    }

    /// The order of two values of one ordered type (or of two numbers).
    pub fn compare(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
            (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
            (Value::Bytes(a), Value::Bytes(b)) => Some(a.cmp(b)),
            (Value::Duration(a), Value::Duration(b)) => Some(a.cmp(b)),
            (Value::Timestamp(a), Value::Timestamp(b)) => Some(a.cmp(b)),
            _ => self.compare_numbers(other),
        }
    }

    /// The opaque value of type `T`, if this is one.
    pub fn downcast<T: Opaque>(&self) -> Option<&T> {
        match self {
            Value::Opaque(o) => o.as_any().downcast_ref::<T>(),
            _ => None,
        }
    }
}

/// An integer against a double, exactly.
fn compare_int_double(i: i128, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d >= 1.8446744073709552e19 {
        return Some(Ordering::Less);
    }
    if d < -9.223372036854776e18 {
        return Some(Ordering::Greater);
    }
    let whole = d.trunc();
    match i.cmp(&(whole as i128)) {
        Ordering::Equal => 0.0f64.partial_cmp(&(d - whole)),
        other => Some(other),
    }
}

/// List equality: in order, or as sets or maps when either side is one (kube's
/// unstructured lists).
fn list_equals(a: &List, b: &List) -> bool {
    if a.items.len() != b.items.len() {
        return false;
    }
    let (typed, other) = match (&a.kind, &b.kind) {
        (ListKind::Atomic, ListKind::Atomic) => {
            return a.items.iter().zip(&b.items).all(|(x, y)| x.equals(y));
        }
        (ListKind::Atomic, _) => (b, a),
        _ => (a, b),
    };
    match &typed.kind {
        ListKind::Set => (other.items.iter()).all(|x| typed.items.iter().any(|y| x.equals(y))),
        ListKind::Map(keys) => other.items.iter().all(|x| {
            let key = map_list_key(x, keys);
            (typed.items.iter())
                .find(|y| map_list_key(y, keys) == key)
                .is_some_and(|y| y.equals(x))
        }),
        ListKind::Atomic => unreachable!("one side is typed"),
    }
}

/// The key of a map-list item, as a printable list of its key fields.
pub fn map_list_key(item: &Value, keys: &[String]) -> String {
    let Value::Map(m) = item else {
        return String::new();
    };
    let mut out = String::new();
    for key in keys {
        match m.field(key) {
            Some(v) => out.push_str(&format!("{v:?}")),
            None => out.push_str("<nil>"),
        }
        out.push('\u{0}');
    }
    out
}

/// CEL's equality (`1 == 1.0`, set lists in any order).
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        self.equals(other)
    }
}

impl fmt::Display for Value {
    /// As `string()` would render it, for messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Uint(u) => write!(f, "{u}"),
            Value::Double(d) if d.is_nan() => f.write_str("NaN"),
            Value::Double(d) if d.is_infinite() => {
                f.write_str(if *d > 0.0 { "Infinity" } else { "-Infinity" })
            }
            Value::Double(d) => write!(f, "{d}"),
            Value::String(s) => f.write_str(s),
            Value::Bytes(b) => f.write_str(&String::from_utf8_lossy(b)),
            Value::Duration(d) => write!(f, "{d}"),
            Value::Timestamp(t) => write!(f, "{t}"),
            Value::Type(t) => f.write_str(t),
            Value::List(l) => {
                f.write_str("[")?;
                for (i, item) in l.items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Map(m) => {
                // Entries in the order of their keys as text, as cel-go's `format()` prints.
                let mut entries: Vec<(String, &Value)> = (m.entries.iter())
                    .map(|(k, v)| (k.to_value().to_string(), v))
                    .collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            Value::Optional(Some(v)) => write!(f, "optional({v})"),
            Value::Optional(None) => f.write_str("optional.none()"),
            Value::Opaque(o) => write!(f, "{o:?}"),
        }
    }
}
