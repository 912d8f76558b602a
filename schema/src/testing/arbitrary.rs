//! Arbitrary JSON objects within a version's OpenAPI v3 schema, as `proptest` strategies.
//!
//! The strategy is built from the same compiled [`KindSchema`] the registry defaults and
//! validates against, so "within the schema" means what the server enforces: `type` and
//! integer `format`s (`int32` values fit an `i32`), `minimum`/`maximum` (exclusive too),
//! `minLength`/`maxLength`, `pattern`, `enum`, `minItems`/`maxItems`, sets and list-maps
//! without duplicate keys, maps (`additionalProperties`), `required` properties always and
//! optional ones sometimes, `$ref`s and `allOf`s, `format: date-time` and `byte` strings.
//! Free-form objects (no properties, no `additionalProperties`: `FieldsV1`) get small
//! trees of objects, as `managedFields` hold; a closed one (`additionalProperties: false`,
//! an empty Go struct's) only its properties.
//!
//! Sizes are kept small (a few items per list, short strings) and nesting is bounded, so
//! recursive schemas terminate: past [`MAX_DEPTH`], optional properties are left out and
//! lists hold only their `minItems`.
//!
//! A `pattern` is generated with `proptest`'s regex strategy, after dropping the leading
//! `^` and trailing `$` it does not support; a pattern it cannot generate from falls back to
//! filtering arbitrary strings, which only works for permissive patterns.

use proptest::prelude::*;
use proptest::strategy::Union;
use serde_json::{Map, Number, Value};

use crate::KindSchema;
use crate::{ListType, Node};

/// How deep objects and lists nest before optional parts are left out.
pub const MAX_DEPTH: usize = 8;

/// Most items a list gets beyond its `minItems` (and map entries, free-form keys).
const EXTRA_ITEMS: usize = 3;

/// Longest generated string, beyond its `minLength`, when no `maxLength` bounds it.
const EXTRA_CHARS: u64 = 12;

/// Top-level properties the schema does not govern: the caller sets `apiVersion` and
/// `kind`; `metadata` is generated from its schema like any other property.
const TYPE_META: [&str; 2] = ["apiVersion", "kind"];

/// Arbitrary objects within `schema` (without `apiVersion` and `kind`).
pub fn object(schema: KindSchema<'_>) -> BoxedStrategy<Value> {
    Generator { schema }.node(schema.root(), 0, true)
}

/// What a node and its `allOf`/`$ref` branches say, merged: the first branch that says
/// something wins, properties and `required` add up.
#[derive(Default)]
struct Facts<'a> {
    ty: Option<&'a str>,
    format: Option<&'a str>,
    int_or_string: bool,
    properties: Vec<&'a (String, usize)>,
    required: Vec<&'a str>,
    additional: Option<usize>,
    items: Option<usize>,
    minimum: Option<&'a (Number, bool)>,
    maximum: Option<&'a (Number, bool)>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<&'a (String, regex_lite::Regex)>,
    enumeration: Option<&'a Vec<Value>>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    list_type: Option<&'a ListType>,
    /// A `MicroTime`, whose timestamps carry microseconds.
    micro_time: bool,
    closed: bool,
}

impl<'a> Facts<'a> {
    fn of(nodes: &[&'a Node]) -> Facts<'a> {
        let mut facts = Facts::default();
        for node in nodes {
            facts.ty = facts.ty.or(node.ty.as_deref());
            facts.format = facts.format.or(node.format.as_deref());
            facts.int_or_string |= node.int_or_string;
            facts.properties.extend(&node.properties);
            facts
                .required
                .extend(node.required.iter().map(String::as_str));
            facts.additional = facts.additional.or(node.additional);
            facts.items = facts.items.or(node.items);
            facts.minimum = facts.minimum.or(node.minimum.as_ref());
            facts.maximum = facts.maximum.or(node.maximum.as_ref());
            facts.min_length = facts.min_length.or(node.min_length);
            facts.max_length = facts.max_length.or(node.max_length);
            facts.pattern = facts.pattern.or(node.pattern.as_ref());
            facts.enumeration = facts.enumeration.or(node.enumeration.as_ref());
            facts.min_items = facts.min_items.or(node.min_items);
            facts.max_items = facts.max_items.or(node.max_items);
            facts.closed |= node.closed;
            facts.micro_time |=
                (node.component.as_deref()).is_some_and(|name| name.ends_with(".MicroTime"));
            if node.list_type != ListType::Atomic {
                facts.list_type = facts.list_type.or(Some(&node.list_type));
            }
        }
        facts
    }
}

struct Generator<'a> {
    schema: KindSchema<'a>,
}

impl Generator<'_> {
    fn node(&self, id: usize, depth: usize, top: bool) -> BoxedStrategy<Value> {
        let nodes = self.schema.nodes(id);
        let facts = Facts::of(&nodes);
        if let Some(values) = facts.enumeration {
            return proptest::sample::select(values.clone()).boxed();
        }
        if facts.int_or_string {
            // Strings: a number is read back as its type likes (apimachinery's `Quantity`,
            // an int-or-string in its schema, writes `7330` as `"7330"`; `IntOrString`
            // keeps it, within an `int32`), a string is kept by both.
            return string(&facts);
        }
        match facts.ty {
            Some("object") => self.object(&facts, depth, top),
            Some("array") => self.array(&facts, depth),
            Some("string") => string(&facts),
            Some("integer") => integer(&facts),
            Some("number") => number(&facts),
            Some("boolean") => any::<bool>().prop_map(Value::Bool).boxed(),
            // No type: any JSON, kept small.
            _ if !facts.properties.is_empty() => self.object(&facts, depth, top),
            _ => free_form(depth),
        }
    }

    fn object(&self, facts: &Facts<'_>, depth: usize, top: bool) -> BoxedStrategy<Value> {
        if facts.properties.is_empty() && facts.additional.is_none() && !facts.closed {
            return free_form(depth);
        }
        let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
        for (name, child) in &facts.properties {
            if top && TYPE_META.contains(&name.as_str()) {
                continue;
            }
            let required = facts.required.contains(&name.as_str());
            if !required && depth >= MAX_DEPTH {
                continue;
            }
            let name = name.clone();
            let value = self.node(*child, depth + 1, false);
            let field = value.prop_map(move |v| (name.clone(), v));
            fields.push(if required {
                field.prop_map(Some).boxed()
            } else {
                proptest::option::of(field).boxed()
            });
        }
        let additional = match facts.additional {
            Some(values) if depth < MAX_DEPTH => {
                let values = self.node(values, depth + 1, false);
                proptest::collection::btree_map(map_key(), values, 0..=EXTRA_ITEMS).boxed()
            }
            _ => Just(Default::default()).boxed(),
        };
        (fields, additional)
            .prop_map(|(fields, additional)| {
                let mut object = Map::new();
                object.extend(additional);
                object.extend(fields.into_iter().flatten());
                Value::Object(object)
            })
            .boxed()
    }

    fn array(&self, facts: &Facts<'_>, depth: usize) -> BoxedStrategy<Value> {
        let Some(items) = facts.items else {
            return Just(Value::Array(Vec::new())).boxed();
        };
        let min = facts.min_items.unwrap_or(0) as usize;
        let extra = if depth < MAX_DEPTH { EXTRA_ITEMS } else { 0 };
        let max = (facts.max_items.map(|m| m as usize))
            .unwrap_or(usize::MAX)
            .min(min + extra);
        let item_strategy = self.node(items, depth + 1, false);
        let list_type = facts.list_type.cloned().unwrap_or_default();
        let key_defaults = self.key_defaults(items, &list_type);
        proptest::collection::vec(item_strategy, min..=max.max(min))
            .prop_map(move |items| unique(items, &list_type, &key_defaults))
            // Dropping duplicates may leave fewer than `minItems`.
            .prop_filter("fewer unique items than minItems", move |items| {
                items.as_array().is_some_and(|items| items.len() >= min)
            })
            .boxed()
    }
}

impl Generator<'_> {
    /// The `default` of each key of a list-map's items (`Null` for none): an item without
    /// a key has its default once defaulted, so that is its key.
    fn key_defaults(&self, items: usize, list_type: &ListType) -> Vec<Value> {
        let ListType::Map(keys) = list_type else {
            return Vec::new();
        };
        let nodes = self.schema.nodes(items);
        let facts = Facts::of(&nodes);
        (keys.iter())
            .map(|key| {
                (facts.properties.iter())
                    .find(|(name, _)| name == key)
                    .and_then(|(_, child)| {
                        (self.schema.nodes(*child).iter()).find_map(|n| n.default.clone())
                    })
                    .unwrap_or(Value::Null)
            })
            .collect()
    }
}

/// A set without repeated items, a list-map without repeated keys (first one kept; a key
/// left out counts as its default).
fn unique(items: Vec<Value>, list_type: &ListType, key_defaults: &[Value]) -> Value {
    let key = |item: &Value| -> Value {
        match list_type {
            ListType::Map(keys) => (keys.iter().enumerate())
                .map(|(i, k)| match item.get(k) {
                    Some(value) if !value.is_null() => value.clone(),
                    _ => key_defaults.get(i).cloned().unwrap_or(Value::Null),
                })
                .collect(),
            ListType::Set | ListType::Atomic => item.clone(),
        }
    };
    if *list_type == ListType::Atomic {
        return Value::Array(items);
    }
    let mut seen = Vec::new();
    let mut kept = Vec::new();
    for item in items {
        let key = key(&item);
        if !seen.contains(&key) {
            seen.push(key);
            kept.push(item);
        }
    }
    Value::Array(kept)
}

/// Map keys and free-form keys: short, printable.
fn map_key() -> BoxedStrategy<String> {
    proptest::string::string_regex("[a-zA-Z0-9._/:-]{1,10}")
        .expect("a valid regex")
        .boxed()
}

/// A small tree of objects (`{"f:spec": {"f:replicas": {}}}`), with the odd scalar.
fn free_form(depth: usize) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        3 => Just(Value::Object(Map::new())),
        1 => any::<i32>().prop_map(Value::from),
        1 => "[a-z]{0,6}".prop_map(Value::String),
        1 => any::<bool>().prop_map(Value::Bool),
    ];
    let levels = (MAX_DEPTH.saturating_sub(depth)).min(2) as u32;
    leaf.prop_recursive(levels, 8, EXTRA_ITEMS as u32, |inner| {
        proptest::collection::btree_map(map_key(), inner, 0..=EXTRA_ITEMS)
            .prop_map(|map| Value::Object(map.into_iter().collect()))
    })
    .prop_map(|value| match value {
        // The schema says `object`: a scalar root is wrapped.
        object @ Value::Object(_) => object,
        other => Value::Object(Map::from_iter([("value".to_owned(), other)])),
    })
    .boxed()
}

/// The integer range of `facts`: the format's, narrowed by `minimum`/`maximum`.
fn integer(facts: &Facts<'_>) -> BoxedStrategy<Value> {
    let (mut low, mut high) = match facts.format {
        Some("int8") => (i8::MIN.into(), i8::MAX.into()),
        Some("int16") => (i16::MIN.into(), i16::MAX.into()),
        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
        Some("uint8") => (0, u8::MAX.into()),
        Some("uint16") => (0, u16::MAX.into()),
        Some("uint32") => (0, u32::MAX.into()),
        Some("uint64" | "uint") => (0, i128::from(u64::MAX)),
        _ => (i64::MIN.into(), i64::MAX.into()),
    };
    if let Some((minimum, exclusive)) = facts.minimum {
        let bound = bound_i128(minimum, true);
        low = low.max(if *exclusive { bound + 1 } else { bound });
    }
    if let Some((maximum, exclusive)) = facts.maximum {
        let bound = bound_i128(maximum, false);
        high = high.min(if *exclusive { bound - 1 } else { bound });
    }
    if low > high {
        // An empty range: the schema admits no integer; say so in the value.
        return Just(Value::Null).boxed();
    }
    let to_json = |n: i128| -> Value {
        match (i64::try_from(n), u64::try_from(n)) {
            (Ok(n), _) => Value::from(n),
            (_, Ok(n)) => Value::from(n),
            _ => Value::Null,
        }
    };
    // Edges are where conversions break: weight them.
    prop_oneof![
        3 => (low..=high).prop_map(to_json),
        1 => Just(to_json(low)),
        1 => Just(to_json(high)),
    ]
    .boxed()
}

/// A JSON number bound as an integer bound: a fractional minimum rounds up, a maximum
/// down.
fn bound_i128(number: &Number, minimum: bool) -> i128 {
    if let Some(n) = number.as_i64() {
        return n.into();
    }
    if let Some(n) = number.as_u64() {
        return n.into();
    }
    let f = number.as_f64().unwrap_or(0.0);
    (if minimum { f.ceil() } else { f.floor() }) as i128
}

/// Finite numbers within the bounds.
fn number(facts: &Facts<'_>) -> BoxedStrategy<Value> {
    let low = facts.minimum.and_then(|(n, _)| n.as_f64()).unwrap_or(-1e9);
    let high = facts.maximum.and_then(|(n, _)| n.as_f64()).unwrap_or(1e9);
    let exclusive_low = facts.minimum.is_some_and(|(_, e)| *e);
    let exclusive_high = facts.maximum.is_some_and(|(_, e)| *e);
    if low > high {
        return Just(Value::Null).boxed();
    }
    (low..=high)
        .prop_filter("exclusive bound", move |f| {
            !((exclusive_low && *f == low) || (exclusive_high && *f == high))
        })
        .prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number))
        .boxed()
}

/// Strings of the right length, matching `pattern`, or of the right `format`.
fn string(facts: &Facts<'_>) -> BoxedStrategy<Value> {
    let min = facts.min_length.unwrap_or(0);
    let max = facts.max_length.unwrap_or(min + EXTRA_CHARS).max(min);
    let bounds = (min, facts.max_length.unwrap_or(u64::MAX));
    let length_ok = move |s: &String| (bounds.0..=bounds.1).contains(&(s.chars().count() as u64));
    if let Some((pattern, regex)) = facts.pattern {
        let trimmed = pattern.strip_prefix('^').unwrap_or(pattern);
        let trimmed = trimmed.strip_suffix('$').unwrap_or(trimmed);
        let regex = regex.clone();
        let strategy = match proptest::string::string_regex(trimmed) {
            Ok(strategy) => strategy.boxed(),
            Err(_) => chars(min, max)
                .prop_filter("does not match the pattern", move |s| regex.is_match(s))
                .boxed(),
        };
        return strategy
            .prop_filter("length out of bounds", length_ok)
            .prop_map(Value::String)
            .boxed();
    }
    let formatted = match facts.format {
        Some("date-time") => Some(date_time(facts.micro_time)),
        Some("byte") => Some(base64()),
        _ => None,
    };
    match formatted {
        Some(strategy) => strategy
            .prop_filter("length out of bounds", length_ok)
            .prop_map(Value::String)
            .boxed(),
        None => chars(min, max).prop_map(Value::String).boxed(),
    }
}

/// `min..=max` printable characters, mostly ASCII.
fn chars(min: u64, max: u64) -> BoxedStrategy<String> {
    let ascii = proptest::string::string_regex(&format!("[ -~]{{{min},{max}}}"));
    let any = proptest::string::string_regex(&format!("\\PC{{{min},{max}}}"));
    match (ascii, any) {
        (Ok(ascii), Ok(any)) => {
            Union::new_weighted(vec![(3, ascii.boxed()), (1, any.boxed())]).boxed()
        }
        // Bounds too large for a regex repetition: ASCII letters, by length.
        _ => (min..=max)
            .prop_flat_map(|n| "[a-z]".prop_map(move |c| c.repeat(n as usize)))
            .boxed(),
    }
}

/// RFC 3339 timestamps in UTC as kube writes them: at second precision (`metav1.Time`),
/// or with six digits of microseconds (`metav1.MicroTime`, `micro`).
fn date_time(micro: bool) -> BoxedStrategy<String> {
    (
        (1970..=2099u32, 1..=12u32, 1..=28u32),
        (0..24u32, 0..60u32, 0..60u32),
        0..1_000_000u32,
    )
        .prop_map(move |((y, mo, d), (h, mi, s), us)| {
            let fraction = if micro {
                format!(".{us:06}")
            } else {
                String::new()
            };
            format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{fraction}Z")
        })
        .boxed()
}

/// Standard base64 of a few bytes.
fn base64() -> BoxedStrategy<String> {
    use base64::Engine;
    proptest::collection::vec(any::<u8>(), 0..16)
        .prop_map(|bytes| base64::engine::general_purpose::STANDARD.encode(bytes))
        .boxed()
}

#[cfg(test)]
mod tests {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    use serde_json::json;

    use super::*;
    use crate::Schemas;

    /// `count` objects of `components["Root"]`, each checked against the schema after
    /// defaulting, as the round-trip properties check them.
    fn valid_samples(components: Value, count: usize) -> Vec<Value> {
        let mut schemas = Schemas::default();
        let components = components.as_object().unwrap().clone();
        let root = schemas
            .compile_component("test", &components, "Root")
            .unwrap();
        let schema = KindSchema::of(&schemas, root);
        let strategy = object(schema);
        let mut runner = TestRunner::deterministic();
        (0..count)
            .map(|_| {
                let mut value = strategy.new_tree(&mut runner).unwrap().current();
                schema.default(&mut value);
                let errors = schema.validate(&value);
                assert!(errors.is_empty(), "{errors:?} in {value}");
                value
            })
            .collect()
    }

    #[test]
    fn list_map_keys_left_out_count_as_their_default() {
        let samples = valid_samples(
            json!({"Root": {"type": "object", "properties": {"ports": {
            "type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["protocol"],
            "items": {"type": "object", "properties": {
                "protocol": {"type": "string", "enum": ["TCP", "UDP"], "default": "TCP"},
            }}}}}}),
            200,
        );
        let two = |v: &Value| {
            v.get("ports")
                .and_then(Value::as_array)
                .is_some_and(|p| p.len() == 2)
        };
        assert!(samples.iter().any(two), "some list has both protocols");
    }

    #[test]
    fn every_keyword_is_respected() {
        let samples = valid_samples(
            json!({"Root": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$", "maxLength": 8},
                "size": {"type": "integer", "format": "int32", "minimum": 0,
                         "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": true},
                "ratio": {"type": "number", "minimum": 0.5, "maximum": 1},
                "tags": {"type": "array", "minItems": 2, "maxItems": 3,
                         "x-kubernetes-list-type": "set", "items": {"type": "string", "minLength": 1}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "when": {"type": "string", "format": "date-time"},
                "blob": {"type": "string", "format": "byte"},
                "port": {"x-kubernetes-int-or-string": true},
                "raw": {"type": "object"},
            }}}),
            300,
        );
        assert!(
            samples.iter().all(|s| s["name"].is_string()),
            "required is always there"
        );
        assert!(
            samples.iter().any(|s| s.get("size") == Some(&json!(9))),
            "edges are tried"
        );
    }
}
