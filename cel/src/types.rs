//! The CEL types of a structural schema's values, as kube declares them
//! (`k8s.io/apiserver/pkg/cel/common`, `SchemaDeclType`, and `pkg/cel/types.go`'s
//! `DeclType`): what a rule's `self` is at each node, with the bounds the cost estimator
//! reads. Each type knows the fewest bytes a value of it takes in JSON
//! ([`DeclType::min_serialized_size`]), and each list, map and string the most elements it
//! can have ([`DeclType::max_elements`]): the schema's `maxItems`, `maxProperties` and
//! `maxLength` when it gives them, else as many as fit in the largest request
//! ([`MAX_REQUEST_SIZE_BYTES`]).
//!
//! A node that rules cannot see has no type (`None`): an array without `items`, a map
//! whose values cannot be seen, and the properties whose names have no CEL identifier
//! ([`crate::escape`]) or whose values cannot be seen. `x-kubernetes-preserve-unknown-fields`
//! shows only the declared properties. At a resource's root (a custom resource's, or an
//! embedded resource's) `apiVersion`, `kind`, `metadata.name` and `metadata.generateName`
//! are always there, and nothing else of `metadata`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::escape::escape;

/// The largest request kube-apiserver takes, in bytes: what bounds the unbounded.
pub const MAX_REQUEST_SIZE_BYTES: i64 = 3 * 1024 * 1024;
/// The longest duration string in JSON, quotes included.
pub const MAX_DURATION_SIZE_JSON: i64 = 32;
/// The longest date-time string in JSON, quotes included.
pub const MAX_DATETIME_SIZE_JSON: i64 = 32;
/// The shortest duration in JSON (`"0s"` less a byte: kube's figure).
pub const MIN_DURATION_SIZE_JSON: i64 = 3;
/// A date in JSON, quotes included.
pub const JSON_DATE_SIZE: i64 = 12;
/// The shortest date-time in JSON, quotes included.
pub const MIN_DATETIME_SIZE_JSON: i64 = 21;
/// The shortest string in JSON (`""`).
pub const MIN_STRING_SIZE: i64 = 2;
/// The shortest boolean in JSON (`true`).
pub const MIN_BOOL_SIZE: i64 = 4;
/// The shortest number in JSON (`0`).
pub const MIN_NUMBER_SIZE: i64 = 1;

/// What a value is.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes` (`format: byte`).
    Bytes,
    /// `google.protobuf.Duration` (`format: duration`).
    Duration,
    /// `google.protobuf.Timestamp` (`format: date` and `date-time`).
    Timestamp,
    /// Any type, checked at run time (`x-kubernetes-int-or-string`).
    Dyn,
    /// A list of its element type.
    List(Box<DeclType>),
    /// A map from strings to its value type (`additionalProperties`).
    Map(Box<DeclType>),
    /// An object with its fields, by escaped name.
    Object(BTreeMap<String, Field>),
}

/// The type of a value rules see.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclType {
    /// What it is.
    pub kind: Kind,
    /// The most elements it can hold (a list's items, a map's entries, a string's or bytes'
    /// bytes); 0 for the others.
    pub max_elements: i64,
    /// The fewest bytes a value of it takes in JSON.
    pub min_serialized_size: i64,
}

/// A field of an object type.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Its type.
    pub ty: DeclType,
    /// Whether the schema requires it.
    pub required: bool,
    /// Its `enum` values.
    pub enum_values: Vec<Value>,
    /// Its `default`.
    pub default: Option<Value>,
}

impl DeclType {
    fn simple(kind: Kind, min_serialized_size: i64) -> DeclType {
        DeclType {
            kind,
            max_elements: 0,
            min_serialized_size,
        }
    }

    /// The type of the values of `schema` (a structural schema, as JSON), or `None` when
    /// rules cannot see them; `resource_root` at the root of a resource.
    pub fn of_schema(schema: &Value, resource_root: bool) -> Option<DeclType> {
        let flag = |name: &str| schema.get(name).and_then(Value::as_bool) == Some(true);
        if flag("x-kubernetes-int-or-string") {
            // The smallest such value is `0`; the longest, whatever fits in a request:
            // kube ignores `maxLength` here.
            return Some(DeclType {
                max_elements: MAX_REQUEST_SIZE_BYTES - 2,
                ..DeclType::simple(Kind::Dyn, 1)
            });
        }
        let rooted;
        let schema = match resource_root {
            true => {
                rooted = with_type_and_object_meta(schema);
                &rooted
            }
            false => schema,
        };
        let embedded = |node: &Value| {
            node.get("x-kubernetes-embedded-resource")
                .and_then(Value::as_bool)
                == Some(true)
        };
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => {
                let items = schema.get("items")?;
                let item = DeclType::of_schema(items, embedded(items))?;
                let max_elements = max(schema, "maxItems")
                    .unwrap_or((MAX_REQUEST_SIZE_BYTES - 2) / (item.min_serialized_size + 1));
                Some(DeclType {
                    kind: Kind::List(Box::new(item)),
                    max_elements,
                    min_serialized_size: 2,
                })
            }
            Some("object") => match schema.get("additionalProperties").filter(|a| a.is_object()) {
                Some(values) => {
                    let value = DeclType::of_schema(values, embedded(values))?;
                    // A key (at least `""`), a colon, a comma, and the value.
                    let entry = value.min_serialized_size + 6;
                    let max_elements = max(schema, "maxProperties")
                        .unwrap_or((MAX_REQUEST_SIZE_BYTES - 2) / entry);
                    Some(DeclType {
                        kind: Kind::Map(Box::new(value)),
                        max_elements,
                        min_serialized_size: 2,
                    })
                }
                None => Some(object(schema)),
            },
            Some("string") => Some(string(schema)),
            Some("boolean") => Some(DeclType::simple(Kind::Bool, MIN_BOOL_SIZE)),
            Some("number") => Some(DeclType::simple(Kind::Double, MIN_NUMBER_SIZE)),
            Some("integer") => Some(DeclType::simple(Kind::Int, MIN_NUMBER_SIZE)),
            _ => None,
        }
    }
}

/// `schema`'s `bound` (`maxItems`, ...), negative ones read as 0.
fn max(schema: &Value, bound: &str) -> Option<i64> {
    schema.get(bound).and_then(Value::as_i64).map(|v| v.max(0))
}

/// An object type: its visible properties, by escaped name; at least `{}` and each
/// required property without a default in JSON.
fn object(schema: &Value) -> DeclType {
    let required: Vec<&str> = (schema.get("required").and_then(Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut fields = BTreeMap::new();
    let mut min_serialized_size = 2;
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        let embedded = property
            .get("x-kubernetes-embedded-resource")
            .and_then(Value::as_bool)
            == Some(true);
        let Some(ty) = DeclType::of_schema(property, embedded) else {
            continue;
        };
        let required = required.contains(&name.as_str());
        let default = property.get("default").cloned();
        // Defaults are filled in by the server: such a property may be left out.
        if required && default.is_none() {
            min_serialized_size += name.len() as i64 + ty.min_serialized_size + 4;
        }
        if let Some(escaped) = escape(name) {
            let enum_values = (property.get("enum").and_then(Value::as_array))
                .cloned()
                .unwrap_or_default();
            let field = Field {
                ty,
                required,
                enum_values,
                default,
            };
            fields.insert(escaped, field);
        }
    }
    DeclType {
        kind: Kind::Object(fields),
        max_elements: 0,
        min_serialized_size,
    }
}

/// A string type, by its `format`: bytes, a duration, a timestamp, or a string.
fn string(schema: &Value) -> DeclType {
    let format = schema.get("format").and_then(Value::as_str).unwrap_or("");
    let max_length = max(schema, "maxLength");
    let (kind, min_serialized_size, max_elements) = match format {
        "byte" => (
            Kind::Bytes,
            MIN_STRING_SIZE,
            max_length.unwrap_or(MAX_REQUEST_SIZE_BYTES - 2),
        ),
        "duration" => (
            Kind::Duration,
            MIN_DURATION_SIZE_JSON,
            MAX_DURATION_SIZE_JSON,
        ),
        "date" => (Kind::Timestamp, JSON_DATE_SIZE, JSON_DATE_SIZE),
        "date-time" => (
            Kind::Timestamp,
            MIN_DATETIME_SIZE_JSON,
            MAX_DATETIME_SIZE_JSON,
        ),
        _ => {
            // `maxLength` counts code points; a code point takes up to 4 bytes.
            let longest_enum = (schema.get("enum").and_then(Value::as_array)).map(|values| {
                (values.iter().filter_map(Value::as_str))
                    .map(|v| v.len() as i64)
                    .max()
                    .unwrap_or(0)
            });
            let max_elements = match (max_length, longest_enum) {
                (Some(length), _) => length * 4,
                (None, Some(longest)) => longest,
                (None, None) => MAX_REQUEST_SIZE_BYTES - 2,
            };
            (Kind::String, MIN_STRING_SIZE, max_elements)
        }
    };
    DeclType {
        kind,
        max_elements,
        min_serialized_size,
    }
}

/// `schema` with `apiVersion`, `kind`, `metadata.name` and `metadata.generateName` as
/// strings: as it is when it has them all, else with those four and no other metadata.
pub(crate) fn with_type_and_object_meta(schema: &Value) -> Value {
    let typed = |node: Option<&Value>, ty: &str| match node.and_then(|n| n.get("type")) {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(types)) => types.iter().any(|t| t == ty),
        _ => false,
    };
    let property =
        |node: &Value, name: &str| node.get("properties").and_then(|p| p.get(name)).cloned();
    let metadata = property(schema, "metadata");
    let complete = typed(property(schema, "kind").as_ref(), "string")
        && typed(property(schema, "apiVersion").as_ref(), "string")
        && typed(metadata.as_ref(), "object")
        && (metadata.as_ref()).is_some_and(|m| {
            typed(property(m, "name").as_ref(), "string")
                && typed(property(m, "generateName").as_ref(), "string")
        });
    if complete {
        return schema.clone();
    }
    let mut rooted = schema.clone();
    let string = json!({"type": "string"});
    if !rooted.get("properties").is_some_and(Value::is_object) {
        rooted["properties"] = json!({});
    }
    let properties = &mut rooted["properties"];
    properties["kind"] = string.clone();
    properties["apiVersion"] = string.clone();
    properties["metadata"] = json!({
        "type": "object",
        "properties": {"name": string, "generateName": string},
    });
    rooted
}
