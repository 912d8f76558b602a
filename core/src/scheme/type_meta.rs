//! A typed object encoded as it is stored: compact JSON with `apiVersion` and `kind`
//! first, as Kubernetes serializes objects, and no `metadata.resourceVersion` (the
//! storage revision is the resourceVersion), straight from its type. What a write stores,
//! without building a `serde_json::Value` of it first, which hashed every key into a map
//! only for the map to be written out again.
//!
//! Only an object whose type (and whose `metadata`'s type) serializes as a struct takes
//! this way: a struct's field names are known as it writes them, so its own `apiVersion`
//! and `kind` give way to the scheme's (as [`super::with_type_meta`] replaces them) and
//! the metadata's `resourceVersion` is left out. A type that serializes as a map (a
//! hand-written `Serialize`, `#[serde(flatten)]`) would need each key read back to do the
//! same: [`encode`] answers `None`, and the caller goes the `Value` way.

use std::borrow::Cow;
use std::cell::Cell;

use serde::Serialize;
use serde::ser::{self, Impossible, SerializeMap as _, SerializeStruct, Serializer};

/// `object`'s stored JSON as `api_version` `kind`; `None` when its type does not
/// serialize as a struct.
pub(super) fn encode<T: Serialize + ?Sized>(
    object: &T,
    api_version: &str,
    kind: &str,
) -> Result<Option<Vec<u8>>, serde_json::Error> {
    let mut out = Vec::with_capacity(512);
    let refused = Cell::new(false);
    let outer = Outer {
        serializer: &mut serde_json::Serializer::new(&mut out),
        type_meta: Some((api_version, kind)),
        refused: &refused,
    };
    match object.serialize(outer) {
        Ok(()) => {
            // A write's bytes live as long as the object does (the watch cache keeps
            // them): not the spare capacity of the buffer's doubling.
            out.shrink_to_fit();
            Ok(Some(out))
        }
        Err(_) if refused.get() => Ok(None),
        Err(e) => Err(e),
    }
}

/// The `apiVersion` of an object's stored bytes, if they have one as a string. What
/// [`encode`] writes begins with it, which is read without parsing the rest; other bytes
/// (written by another server, or before) are parsed for it.
pub(super) fn api_version_of(bytes: &[u8]) -> Option<Cow<'_, str>> {
    const FIRST: &[u8] = br#"{"apiVersion":""#;
    if let Some(rest) = bytes.strip_prefix(FIRST)
        && let Some(end) = memchr::memchr2(b'"', b'\\', rest)
        && rest[end] == b'"'
    {
        return std::str::from_utf8(&rest[..end]).ok().map(Cow::Borrowed);
    }
    #[derive(serde::Deserialize)]
    struct Peek<'a> {
        #[serde(rename = "apiVersion", borrow, default)]
        api_version: Option<Cow<'a, str>>,
    }
    serde_json::from_slice::<Peek<'_>>(bytes).ok()?.api_version
}

/// The name `serde_json::value::RawValue` serializes under.
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// Whether two stored encodings of one object are the same (debug builds compare the
/// direct one with the `Value` way's): the same bytes, or the same JSON but for numbers
/// that are equal as `f32`. The `Value` way widens an `f32` field to `f64` before
/// writing it (`0.10000000149011612`); the type's own encoding writes the `f32` as it is
/// (`0.1`, as Go's encoder does), so the two differ for such a field.
#[cfg_attr(not(debug_assertions), allow(dead_code))]
pub(super) fn same_encoding(direct: &[u8], by_value: &[u8]) -> bool {
    use serde_json::Value;
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) if x.fract() != 0.0 || y.fract() != 0.0 => {
                    x == y || (x as f32) == (y as f32)
                }
                _ => x == y,
            },
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((kx, vx), (ky, vy))| kx == ky && same(vx, vy))
            }
            _ => a == b,
        }
    }
    if direct == by_value {
        return true;
    }
    match (
        serde_json::from_slice(direct),
        serde_json::from_slice(by_value),
    ) {
        (Ok(a), Ok(b)) => same(&a, &b),
        _ => false,
    }
}

/// The serializer of the object (with its type meta) or of its `metadata` (without):
/// a struct becomes a JSON object, anything else is refused.
struct Outer<'a, S> {
    serializer: S,
    /// At the top: the type meta written first.
    type_meta: Option<(&'a str, &'a str)>,
    /// Set when refusing, to tell the refusal from the object's own errors.
    refused: &'a Cell<bool>,
}

impl<S: Serializer> Outer<'_, S> {
    fn refuse(self) -> S::Error {
        self.refused.set(true);
        ser::Error::custom("the object's type does not serialize as a struct")
    }
}

/// A struct's fields as they are stored.
struct Fields<'a, M> {
    map: M,
    top: bool,
    refused: &'a Cell<bool>,
}

/// The object's `metadata`, written through [`Outer`] too.
struct Metadata<'a, T: ?Sized> {
    value: &'a T,
    refused: &'a Cell<bool>,
}

impl<T: Serialize + ?Sized> Serialize for Metadata<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Outer {
            serializer,
            type_meta: None,
            refused: self.refused,
        })
    }
}

impl<M: ser::SerializeMap> SerializeStruct for Fields<'_, M> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        match (self.top, key) {
            (true, "apiVersion" | "kind") | (false, "resourceVersion") => Ok(()),
            (true, "metadata") => {
                let refused = self.refused;
                (self.map).serialize_entry(key, &Metadata { value, refused })
            }
            _ => self.map.serialize_entry(key, value),
        }
    }

    fn end(self) -> Result<M::Ok, M::Error> {
        self.map.end()
    }
}

/// Every shape but a struct (or a newtype or `Some` of one) is refused.
macro_rules! refuse {
    ($($method:ident($($ty:ty),*);)*) => {
        $(fn $method(self, $(_: $ty),*) -> Result<S::Ok, S::Error> {
            Err(self.refuse())
        })*
    };
}

impl<'a, S: Serializer> Serializer for Outer<'a, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Impossible<S::Ok, S::Error>;
    type SerializeStruct = Fields<'a, S::SerializeMap>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_struct(
        self,
        name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        // serde_json's raw JSON poses as a struct of this name: it is no object's fields.
        if name == RAW_VALUE {
            return Err(self.refuse());
        }
        // No length: serde_json closes an object announced empty at once, and the type
        // meta and skipped fields make the struct's own count wrong anyway.
        let mut map = self.serializer.serialize_map(None)?;
        if let Some((api_version, kind)) = self.type_meta {
            map.serialize_entry("apiVersion", api_version)?;
            map.serialize_entry("kind", kind)?;
        }
        Ok(Fields {
            map,
            top: self.type_meta.is_some(),
            refused: self.refused,
        })
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }

    refuse! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_str(&str);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(self.refuse())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Err(self.refuse())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, S::Error> {
        Err(self.refuse())
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        Err(self.refuse())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Err(self.refuse())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Err(self.refuse())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Err(self.refuse())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Meta {
        name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        resource_version: Option<String>,
        generation: u8,
    }

    #[derive(Serialize)]
    struct Plain {
        metadata: Meta,
        #[serde(skip_serializing_if = "Option::is_none")]
        spec: Option<u8>,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct OwnTypeMeta {
        api_version: String,
        kind: String,
        spec: u8,
    }

    #[derive(Serialize)]
    struct Flattened {
        #[serde(flatten)]
        rest: BTreeMap<String, u8>,
    }

    #[derive(Serialize)]
    struct MapMetadata {
        metadata: BTreeMap<String, String>,
    }

    fn text(bytes: Option<Vec<u8>>) -> String {
        String::from_utf8(bytes.expect("encoded")).unwrap()
    }

    fn plain(resource_version: Option<&str>) -> Plain {
        Plain {
            metadata: Meta {
                name: "a".into(),
                resource_version: resource_version.map(Into::into),
                generation: 1,
            },
            spec: None,
        }
    }

    /// The bytes the `Value` way stores: the type meta first, the struct's fields in
    /// order, skipped fields left out, no resourceVersion.
    #[test]
    fn a_struct_is_written_as_stored() {
        let expected = r#"{"apiVersion":"g/v1","kind":"K","metadata":{"name":"a","generation":1}}"#;
        assert_eq!(text(encode(&plain(None), "g/v1", "K").unwrap()), expected);
        assert_eq!(
            text(encode(&plain(Some("7")), "g/v1", "K").unwrap()),
            expected
        );
        let mut by_value = serde_json::to_value(plain(Some("7"))).unwrap();
        by_value["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resourceVersion");
        let by_value = super::super::with_type_meta(by_value, "g/v1", "K");
        assert_eq!(serde_json::to_string(&by_value).unwrap(), expected);
    }

    /// A type's own `apiVersion` and `kind` give way to the scheme's, as in the `Value` way.
    #[test]
    fn the_schemes_type_meta_replaces_the_types_own() {
        let own = OwnTypeMeta {
            api_version: "other/v9".into(),
            kind: "Other".into(),
            spec: 1,
        };
        let encoded = text(encode(&own, "g/v1", "K").unwrap());
        assert_eq!(encoded, r#"{"apiVersion":"g/v1","kind":"K","spec":1}"#);
    }

    #[derive(Serialize)]
    struct Floats {
        metadata: Meta,
        single: f32,
        double: f64,
    }

    /// An `f32` is written as the type has it, where the `Value` way widens it first;
    /// the check debug builds make takes the two as the same. Other numbers must match.
    #[test]
    fn floats_are_written_as_their_type_has_them() {
        let floats = Floats {
            metadata: plain(None).metadata,
            single: 0.1,
            double: 97.02372027944563,
        };
        let direct = encode(&floats, "v1", "K").unwrap().unwrap();
        assert_eq!(
            String::from_utf8(direct.clone()).unwrap(),
            r#"{"apiVersion":"v1","kind":"K","metadata":{"name":"a","generation":1},"single":0.1,"double":97.02372027944563}"#
        );
        let by_value = serde_json::to_vec(&super::super::with_type_meta(
            serde_json::to_value(&floats).unwrap(),
            "v1",
            "K",
        ))
        .unwrap();
        assert_ne!(direct, by_value);
        assert!(same_encoding(&direct, &by_value));
        let other = String::from_utf8(by_value)
            .unwrap()
            .replace("97.02372027944563", "97.0237");
        assert!(!same_encoding(&direct, other.as_bytes()));
        // A stored float decodes as the number written (`float_roundtrip`).
        let decoded: serde_json::Value = serde_json::from_slice(&direct).unwrap();
        assert_eq!(decoded["double"].as_f64(), Some(97.02372027944563));
    }

    /// What serializes as a map, at the top or as the metadata (or not as an object at
    /// all), is left to the `Value` way; a `Some` of a struct is the struct.
    #[test]
    fn other_shapes_are_refused() {
        let flattened = Flattened {
            rest: [("a".to_owned(), 1)].into(),
        };
        assert_eq!(encode(&flattened, "v1", "K").unwrap(), None);
        let map_metadata = MapMetadata {
            metadata: BTreeMap::new(),
        };
        assert_eq!(encode(&map_metadata, "v1", "K").unwrap(), None);
        assert_eq!(encode(&json!({"a": 1}), "v1", "K").unwrap(), None);
        assert_eq!(encode(&7u8, "v1", "K").unwrap(), None);
        let raw = serde_json::value::RawValue::from_string(r#"{ "a" : 1 }"#.into()).unwrap();
        assert_eq!(encode(&raw, "v1", "K").unwrap(), None);
        assert_eq!(
            text(encode(&Some(plain(None)), "v1", "K").unwrap()),
            r#"{"apiVersion":"v1","kind":"K","metadata":{"name":"a","generation":1}}"#
        );
    }

    /// The apiVersion of stored bytes: read off the front of what a write stores, parsed
    /// out of other bytes (later, escaped, spaced), absent when it is not a string.
    #[test]
    fn the_api_version_of_stored_bytes() {
        let stored = text(encode(&plain(None), "g/v1", "K").unwrap());
        let of = |bytes: &str| api_version_of(bytes.as_bytes()).map(Cow::into_owned);
        assert_eq!(of(&stored).as_deref(), Some("g/v1"));
        assert!(matches!(
            api_version_of(stored.as_bytes()),
            Some(Cow::Borrowed(_))
        ));
        assert_eq!(
            of(r#"{"kind":"K","apiVersion":"g/v2"}"#).as_deref(),
            Some("g/v2")
        );
        assert_eq!(of(r#"{ "apiVersion" : "v1" }"#).as_deref(), Some("v1"));
        assert_eq!(of(r#"{"apiVersion":"g\/v3"}"#).as_deref(), Some("g/v3"));
        assert_eq!(of(r#"{"kind":"K"}"#), None);
        assert_eq!(of(r#"{"apiVersion":7}"#), None);
        assert_eq!(of(r#"{"apiVersion":null}"#), None);
        assert_eq!(of("not json"), None);
    }
}
