//! Kubernetes protobuf request bodies, decoded to the JSON the rest of the server speaks.
//!
//! kubectl's generators for built-in kinds (`kubectl create namespace`, `kubectl create
//! configmap`) send `Content-Type: application/vnd.kubernetes.protobuf`: the 4-byte magic
//! `k8s\0`, then a `runtime.Unknown` envelope ([`decode_envelope`]) whose `raw` is the
//! object's message ([`decode`]). The server decodes that into the JSON the same object
//! would have had, and from there on a protobuf body is a JSON body: every registry rule
//! and error applies unchanged.
//!
//! The wire shape of a message is a static [`ProtoMessage`] descriptor, declared once next
//! to the Rust type it describes (`meta::OBJECT_META_PROTO` beside `ObjectMeta`, the kinds'
//! beside their types in `api-types`) and named from the kind's `#[resource(protobuf =
//! ...)]`, so [`KindInfo::protobuf`](super::KindInfo::protobuf) says which kinds accept it.
//!
//! # Why hand-written
//!
//! The decoder is a ~200-line wire-format reader (varints, length-delimited fields, the
//! other wire types skipped) driven by those descriptors. The alternative, `prost-build`
//! over Kubernetes' `.proto` files, needs `protoc` at build time, thousands of generated
//! types for a handful of messages, and a second copy of every type (the generated one
//! beside ours) with conversions between them: more code and more build than the reader,
//! and not one source of truth.
//!
//! # From wire to JSON
//!
//! Kubernetes' `.proto` files are proto2, written by Go's gogo-protobuf: value fields are
//! always on the wire, pointer fields (`*int64`, `*bool`) only when set. The JSON keeps what
//! Go's `encoding/json` keeps: a field's zero value (`""`, `0`, `false`) is omitted, as its
//! `omitempty` tag does, unless the field is declared [`keep_zero`](ProtoField::keep_zero)
//! (a pointer, or a Go field without `omitempty`). Messages on the wire are objects even
//! when empty (`"spec": {}`); maps are repeated `{key = 1, value = 2}` entries; `bytes` are
//! base64; `meta.v1.Time` is RFC 3339 at second precision (as its JSON form; an empty
//! `Time` is unset); fields the descriptor does not name are skipped, as Go's decoder
//! skips them.

use std::fmt;

pub mod encode;
mod values;

pub use values::{ProtoValue, Protobuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

/// The prefix of every Kubernetes protobuf body: `k8s` and a zero byte.
pub const ENVELOPE_MAGIC: &[u8; 4] = b"k8s\0";

/// The media type of Kubernetes protobuf bodies.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The wire shape of one protobuf message: which field number is which JSON field.
#[derive(Debug)]
pub struct ProtoMessage {
    /// The message's full name, for errors (`k8s.io.api.core.v1.ConfigMap`).
    pub name: &'static str,
    /// Its fields, in any order. Fields on the wire that are not here are skipped.
    pub fields: &'static [ProtoField],
}

/// Descriptors are statics: one is another when it is the same static.
impl PartialEq for ProtoMessage {
    fn eq(&self, other: &ProtoMessage) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for ProtoMessage {}

impl ProtoMessage {
    /// The field numbered `number`.
    pub fn field(&self, number: u32) -> Option<&'static ProtoField> {
        self.fields.iter().find(|f| f.number == number)
    }

    /// The short name (`ConfigMap`), for error paths.
    fn short_name(&self) -> &'static str {
        self.name.rsplit('.').next().unwrap_or(self.name)
    }
}

/// One field of a [`ProtoMessage`].
#[derive(Clone, Copy, Debug)]
pub struct ProtoField {
    /// The field number on the wire.
    pub number: u32,
    /// The field's name in JSON (`creationTimestamp`).
    pub json_name: &'static str,
    /// What its values are.
    pub kind: ProtoKind,
    /// `repeated`: a JSON array, one element per occurrence (packed scalars accepted).
    /// Maps are not declared repeated: [`ProtoKind::Map`] is one JSON object.
    pub repeated: bool,
    /// The zero value is kept in the JSON when it is on the wire: for Go pointer fields
    /// (`gracePeriodSeconds: 0` means "now", not "the default") and fields whose JSON tag
    /// has no `omitempty` (`OwnerReference.uid`).
    pub keep_zero: bool,
    /// The field's message is inlined into the JSON object that holds it (Go's
    /// `json:",inline"`: `Volume`'s `VolumeSource` is field 2 on the wire, its fields are
    /// `Volume`'s own in JSON).
    pub inline: bool,
}

impl ProtoField {
    /// A singular field whose zero value is omitted from the JSON.
    pub const fn new(number: u32, json_name: &'static str, kind: ProtoKind) -> ProtoField {
        ProtoField {
            number,
            json_name,
            kind,
            repeated: false,
            keep_zero: false,
            inline: false,
        }
    }

    /// The field of a Rust field of type `T`, its kind and repetition from `T`
    /// ([`ProtoValue`]): what `#[derive(Protobuf)]` writes for each field.
    pub const fn of<T: ProtoValue>(number: u32, json_name: &'static str) -> ProtoField {
        ProtoField {
            number,
            json_name,
            kind: T::KIND,
            repeated: T::REPEATED,
            keep_zero: T::POINTER,
            inline: false,
        }
    }

    /// This field inlined into its parent's JSON (see [`ProtoField::inline`]).
    pub const fn inline(self) -> ProtoField {
        ProtoField {
            inline: true,
            ..self
        }
    }

    /// A `repeated` field: a JSON array.
    pub const fn repeated(number: u32, json_name: &'static str, kind: ProtoKind) -> ProtoField {
        ProtoField {
            repeated: true,
            ..ProtoField::new(number, json_name, kind)
        }
    }

    /// A `map<key, value>` field: a JSON object.
    pub const fn map(
        number: u32,
        json_name: &'static str,
        key: &'static ProtoKind,
        value: &'static ProtoKind,
    ) -> ProtoField {
        ProtoField::new(number, json_name, ProtoKind::Map(key, value))
    }

    /// This field with its zero value kept in the JSON (see [`ProtoField::keep_zero`]).
    pub const fn keep_zero(self) -> ProtoField {
        ProtoField {
            keep_zero: true,
            ..self
        }
    }
}

/// The type of a field's values.
#[derive(Clone, Copy, Debug)]
pub enum ProtoKind {
    /// `string`: a JSON string.
    String,
    /// `bytes`: a base64 JSON string.
    Bytes,
    /// `bool`.
    Bool,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `k8s.io.apimachinery.pkg.apis.meta.v1.Time` (`{seconds = 1, nanos = 2}`): an RFC 3339
    /// string at second precision, as its JSON form is.
    Time,
    /// `k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime` (`{seconds = 1, nanos = 2}`): an
    /// RFC 3339 string with microseconds (`2026-12-03T01:02:03.000004Z`), as its JSON form is.
    MicroTime,
    /// A nested message: a JSON object.
    Message(&'static ProtoMessage),
    /// `map<key, value>`: repeated `{key = 1, value = 2}` entries, a JSON object (keys of
    /// kind `String`, `Int32`, `Int64` or `Bool`).
    Map(&'static ProtoKind, &'static ProtoKind),
    /// A message whose `bytes` field 1 holds JSON (`meta.v1.FieldsV1 {Raw = 1}`): that JSON.
    RawJson,
    /// A message whose field 1 is a repeated string (`ExtraValue {items = 1}`, Go's named
    /// `[]string`): that JSON list.
    Strings,
    /// `resource.Quantity {string string = 1}`: a JSON string.
    Quantity,
    /// `intstr.IntOrString {int64 type = 1; int32 intVal = 2; string strVal = 3}`: a JSON
    /// number (type 0) or string (type 1).
    IntOrString,
}

/// The message [`ProtoKind::Strings`] reads.
static STRINGS: ProtoMessage = ProtoMessage {
    name: "ExtraValue",
    fields: &[ProtoField::repeated(1, "items", ProtoKind::String)],
};

/// The message [`ProtoKind::Quantity`] reads.
static QUANTITY: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.api.resource.Quantity",
    fields: &[ProtoField::new(1, "string", ProtoKind::String)],
};

/// The message [`ProtoKind::IntOrString`] reads.
static INT_OR_STRING: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    fields: &[
        ProtoField::new(1, "type", ProtoKind::Int64),
        ProtoField::new(2, "intVal", ProtoKind::Int32),
        ProtoField::new(3, "strVal", ProtoKind::String),
    ],
};

/// A body that is not the protobuf it claims to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtoError {
    /// Where: the JSON path of the field being read (`ConfigMap.metadata.labels`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{} (at {})", self.message, self.path)
        }
    }
}

impl std::error::Error for ProtoError {}

fn error(path: &str, message: impl Into<String>) -> ProtoError {
    ProtoError {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// The `runtime.Unknown` envelope of a Kubernetes protobuf body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// `typeMeta.apiVersion` (`v1`, `apps.example.dev/v1`); may be empty.
    pub api_version: String,
    /// `typeMeta.kind` (`ConfigMap`); may be empty.
    pub kind: String,
    /// The object's message.
    pub raw: &'a [u8],
}

/// Reads the `k8s\0` magic and the `runtime.Unknown` after it:
/// `{TypeMeta typeMeta = 1 {apiVersion = 1, kind = 2}; bytes raw = 2;
/// string contentEncoding = 3; string contentType = 4}`. A content encoding, or a content
/// type other than protobuf, is refused.
pub fn decode_envelope(bytes: &[u8]) -> Result<Envelope<'_>, ProtoError> {
    let Some(body) = bytes.strip_prefix(ENVELOPE_MAGIC) else {
        return Err(error(
            "",
            "not a Kubernetes protobuf body: it does not start with the 4-byte prefix \"k8s\\x00\"",
        ));
    };
    let mut envelope = Envelope {
        api_version: String::new(),
        kind: String::new(),
        raw: &[],
    };
    let mut reader = Reader::new(body, "Unknown");
    while let Some((number, wire)) = reader.key()? {
        match number {
            1 => {
                let type_meta = reader.length_delimited(wire, "Unknown.typeMeta")?;
                let mut reader = Reader::new(type_meta, "Unknown.typeMeta");
                while let Some((number, wire)) = reader.key()? {
                    match number {
                        1 => {
                            envelope.api_version =
                                reader.string(wire, "Unknown.typeMeta.apiVersion")?;
                        }
                        2 => envelope.kind = reader.string(wire, "Unknown.typeMeta.kind")?,
                        _ => reader.skip(wire)?,
                    }
                }
            }
            2 => envelope.raw = reader.length_delimited(wire, "Unknown.raw")?,
            3 => {
                let encoding = reader.string(wire, "Unknown.contentEncoding")?;
                if !encoding.is_empty() {
                    return Err(error(
                        "Unknown.contentEncoding",
                        format!("content encoding {encoding:?} is not supported"),
                    ));
                }
            }
            4 => {
                let content_type = reader.string(wire, "Unknown.contentType")?;
                if !content_type.is_empty() && content_type != MEDIA_TYPE {
                    return Err(error(
                        "Unknown.contentType",
                        format!("content type {content_type:?} is not supported"),
                    ));
                }
            }
            _ => reader.skip(wire)?,
        }
    }
    Ok(envelope)
}

/// Decodes a whole body, envelope and object: the object's JSON, with `apiVersion` and
/// `kind` from the envelope's type meta (when set) first.
pub fn decode_body(message: &ProtoMessage, bytes: &[u8]) -> Result<Value, ProtoError> {
    let envelope = decode_envelope(bytes)?;
    let mut object = Map::new();
    for (key, value) in [
        ("apiVersion", envelope.api_version),
        ("kind", envelope.kind),
    ] {
        if !value.is_empty() {
            object.insert(key.to_owned(), Value::String(value));
        }
    }
    decode_into(message, envelope.raw, &mut object, message.short_name(), 0)?;
    Ok(Value::Object(object))
}

/// Decodes one `message` into its JSON object.
pub fn decode(message: &ProtoMessage, bytes: &[u8]) -> Result<Value, ProtoError> {
    let mut object = Map::new();
    decode_into(message, bytes, &mut object, message.short_name(), 0)?;
    Ok(Value::Object(object))
}

/// How deep messages may nest: only a recursive descriptor gets near it, and a body
/// must not overflow the stack through one.
const MAX_DEPTH: usize = 64;

/// Decodes `bytes` into `object`, merging into what is there (a message that occurs twice
/// on the wire is merged, as protobuf specifies). `depth` counts the enclosing messages.
fn decode_into(
    message: &ProtoMessage,
    bytes: &[u8],
    object: &mut Map<String, Value>,
    path: &str,
    depth: usize,
) -> Result<(), ProtoError> {
    if depth > MAX_DEPTH {
        return Err(error(
            path,
            format!("messages nest deeper than {MAX_DEPTH}"),
        ));
    }
    let mut reader = Reader::new(bytes, path);
    while let Some((number, wire)) = reader.key()? {
        let Some(field) = message.field(number) else {
            reader.skip(wire)?;
            continue;
        };
        let path = format!("{path}.{}", field.json_name);
        match field.kind {
            ProtoKind::Map(key_kind, value_kind) => {
                let entry = reader.length_delimited(wire, &path)?;
                let (key, value) = map_entry(key_kind, value_kind, entry, &path, depth)?;
                let map = object
                    .entry(field.json_name)
                    .or_insert_with(|| Value::Object(Map::new()));
                if !map.is_object() {
                    *map = Value::Object(Map::new());
                }
                if let Value::Object(map) = map {
                    map.insert(key, value);
                }
            }
            kind if field.repeated => {
                let mut items = Vec::new();
                if wire == WIRE_LEN
                    && matches!(kind, ProtoKind::Bool | ProtoKind::Int32 | ProtoKind::Int64)
                {
                    // Packed scalars: one length-delimited run of varints.
                    let packed = reader.length_delimited(wire, &path)?;
                    let mut packed = Reader::new(packed, &path);
                    while !packed.is_at_end() {
                        items.push(value(kind, WIRE_VARINT, &mut packed, &path, depth)?);
                    }
                } else {
                    items.push(value(kind, wire, &mut reader, &path, depth)?);
                }
                let slot = object
                    .entry(field.json_name)
                    .or_insert_with(|| Value::Array(Vec::new()));
                match slot {
                    Value::Array(existing) => existing.extend(items),
                    other => *other = Value::Array(items),
                }
            }
            ProtoKind::Message(nested) if field.inline => {
                let bytes = reader.length_delimited(wire, &path)?;
                decode_into(nested, bytes, object, &path, depth + 1)?;
            }
            ProtoKind::Message(nested) => {
                let bytes = reader.length_delimited(wire, &path)?;
                let slot = object
                    .entry(field.json_name)
                    .or_insert_with(|| Value::Object(Map::new()));
                if !slot.is_object() {
                    *slot = Value::Object(Map::new());
                }
                if let Value::Object(nested_object) = slot {
                    decode_into(nested, bytes, nested_object, &path, depth + 1)?;
                }
            }
            kind => {
                let value = value(kind, wire, &mut reader, &path, depth)?;
                if value.is_null() || (!field.keep_zero && is_zero(&value)) {
                    object.remove(field.json_name);
                } else {
                    object.insert(field.json_name.to_owned(), value);
                }
            }
        }
    }
    Ok(())
}

/// One value of `kind` at the reader, as JSON; `Null` for an unset `Time` or `RawJson`.
/// `depth` is that of the message holding it.
fn value(
    kind: ProtoKind,
    wire: u8,
    reader: &mut Reader<'_>,
    path: &str,
    depth: usize,
) -> Result<Value, ProtoError> {
    Ok(match kind {
        ProtoKind::String => Value::String(reader.string(wire, path)?),
        ProtoKind::Bytes => Value::String(STANDARD.encode(reader.length_delimited(wire, path)?)),
        ProtoKind::Bool => Value::Bool(reader.varint_field(wire, path)? != 0),
        // Go's decoder truncates to 32 bits; negative values are sign-extended on the wire.
        ProtoKind::Int32 => Value::from(reader.varint_field(wire, path)? as i64 as i32),
        ProtoKind::Int64 => Value::from(reader.varint_field(wire, path)? as i64),
        ProtoKind::Time => time(reader.length_delimited(wire, path)?, false, path)?,
        ProtoKind::MicroTime => time(reader.length_delimited(wire, path)?, true, path)?,
        ProtoKind::RawJson => raw_json(reader.length_delimited(wire, path)?, path)?,
        ProtoKind::Strings => {
            let bytes = reader.length_delimited(wire, path)?;
            let mut object = Map::new();
            decode_into(&STRINGS, bytes, &mut object, path, depth + 1)?;
            object.remove("items").unwrap_or(Value::Array(Vec::new()))
        }
        ProtoKind::Message(message) => {
            let bytes = reader.length_delimited(wire, path)?;
            let mut object = Map::new();
            decode_into(message, bytes, &mut object, path, depth + 1)?;
            Value::Object(object)
        }
        ProtoKind::Quantity => {
            let bytes = reader.length_delimited(wire, path)?;
            let mut object = Map::new();
            decode_into(&QUANTITY, bytes, &mut object, path, depth + 1)?;
            object
                .remove("string")
                .unwrap_or(Value::String(String::new()))
        }
        ProtoKind::IntOrString => {
            let bytes = reader.length_delimited(wire, path)?;
            let mut object = Map::new();
            decode_into(&INT_OR_STRING, bytes, &mut object, path, depth + 1)?;
            match object.get("type").and_then(Value::as_i64) {
                Some(1) => object
                    .remove("strVal")
                    .unwrap_or(Value::String(String::new())),
                _ => object.remove("intVal").unwrap_or(Value::from(0)),
            }
        }
        ProtoKind::Map(..) => {
            return Err(error(
                path,
                "a map cannot be a map's value or a list's item",
            ));
        }
    })
}

/// The zero value of a scalar: what `omitempty` omits.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_i64() == Some(0),
        _ => false,
    }
}

/// A map entry `{key = 1, value = 2}`; a missing key or value is its kind's zero.
fn map_entry(
    key_kind: &ProtoKind,
    value_kind: &ProtoKind,
    bytes: &[u8],
    path: &str,
    depth: usize,
) -> Result<(String, Value), ProtoError> {
    let mut key = None;
    let mut value_ = None;
    let mut reader = Reader::new(bytes, path);
    while let Some((number, wire)) = reader.key()? {
        match number {
            1 => key = Some(value(*key_kind, wire, &mut reader, path, depth)?),
            2 => value_ = Some(value(*value_kind, wire, &mut reader, path, depth)?),
            _ => reader.skip(wire)?,
        }
    }
    let key = match (key_kind, key) {
        (ProtoKind::String, key) => match key {
            Some(Value::String(key)) => key,
            _ => String::new(),
        },
        (ProtoKind::Int32 | ProtoKind::Int64, key) => key.map_or("0".to_owned(), |k| k.to_string()),
        (ProtoKind::Bool, key) => key.map_or("false".to_owned(), |k| k.to_string()),
        (kind, _) => return Err(error(path, format!("a map key cannot be {kind:?}"))),
    };
    let value_ = match value_ {
        Some(value_) => value_,
        None => zero(value_kind),
    };
    Ok((key, value_))
}

/// The JSON of a value of `kind` absent from a map entry.
fn zero(kind: &ProtoKind) -> Value {
    match kind {
        ProtoKind::String | ProtoKind::Bytes | ProtoKind::Quantity => Value::String(String::new()),
        ProtoKind::IntOrString => Value::from(0),
        ProtoKind::Bool => Value::Bool(false),
        ProtoKind::Int32 | ProtoKind::Int64 => Value::from(0),
        ProtoKind::Message(_) | ProtoKind::Map(..) => Value::Object(Map::new()),
        ProtoKind::Time | ProtoKind::MicroTime | ProtoKind::RawJson => Value::Null,
        ProtoKind::Strings => Value::Array(Vec::new()),
    }
}

/// `meta.v1.Time {int64 seconds = 1; int32 nanos = 2}` as RFC 3339, UTC, at second
/// precision (the JSON form; Go's `Time.ProtoTime` does not even send nanos). Empty is
/// Go's zero time, which JSON writes as `null`.
fn time(bytes: &[u8], micro: bool, path: &str) -> Result<Value, ProtoError> {
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    let mut seconds = 0_i64;
    let mut nanos = 0_i64;
    let mut reader = Reader::new(bytes, path);
    while let Some((number, wire)) = reader.key()? {
        match number {
            1 => seconds = reader.varint_field(wire, path)? as i64,
            2 => nanos = reader.varint_field(wire, path)? as i64,
            _ => reader.skip(wire)?,
        }
    }
    // 0001-01-01T00:00:00Z ..= 9999-12-31T23:59:59Z, the range the message allows.
    if !(-62_135_596_800..=253_402_300_799).contains(&seconds) {
        return Err(error(path, format!("time {seconds}s is out of range")));
    }
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let whole = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    );
    // A Time has whole seconds in JSON; a MicroTime always six digits of fraction (Go's
    // `RFC3339Micro`).
    Ok(Value::String(match micro {
        true => format!("{whole}.{:06}Z", nanos.clamp(0, 999_999_999) / 1000),
        false => format!("{whole}Z"),
    }))
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A `{bytes Raw = 1}` message holding JSON (`FieldsV1`): that JSON; `Null` when empty.
fn raw_json(bytes: &[u8], path: &str) -> Result<Value, ProtoError> {
    let mut raw: &[u8] = &[];
    let mut reader = Reader::new(bytes, path);
    while let Some((number, wire)) = reader.key()? {
        match number {
            1 => raw = reader.length_delimited(wire, path)?,
            _ => reader.skip(wire)?,
        }
    }
    if raw.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(raw).map_err(|e| error(path, format!("invalid JSON: {e}")))
}

const WIRE_VARINT: u8 = 0;
const WIRE_FIXED64: u8 = 1;
const WIRE_LEN: u8 = 2;
const WIRE_FIXED32: u8 = 5;

/// A cursor over one message's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// For errors.
    path: &'a str,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], path: &'a str) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            path,
        }
    }

    fn is_at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    fn truncated(&self) -> ProtoError {
        error(
            self.path,
            "unexpected end of data: the message is truncated",
        )
    }

    fn varint(&mut self) -> Result<u64, ProtoError> {
        let mut value = 0_u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(self.truncated());
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(error(self.path, "a varint is longer than 10 bytes"))
    }

    fn take(&mut self, len: u64) -> Result<&'a [u8], ProtoError> {
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| self.pos.checked_add(len))
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| self.truncated())?;
        let taken = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(taken)
    }

    /// The next field's number and wire type, or `None` at the end.
    fn key(&mut self) -> Result<Option<(u32, u8)>, ProtoError> {
        if self.is_at_end() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = u32::try_from(key >> 3)
            .ok()
            .filter(|&n| n != 0)
            .ok_or_else(|| error(self.path, format!("invalid field number {}", key >> 3)))?;
        Ok(Some((number, (key & 7) as u8)))
    }

    fn expect(&self, wire: u8, expected: u8, path: &str) -> Result<(), ProtoError> {
        if wire == expected {
            Ok(())
        } else {
            Err(error(
                path,
                format!(
                    "wire type {wire} ({}) where {expected} ({}) was expected",
                    wire_name(wire),
                    wire_name(expected)
                ),
            ))
        }
    }

    fn length_delimited(&mut self, wire: u8, path: &str) -> Result<&'a [u8], ProtoError> {
        self.expect(wire, WIRE_LEN, path)?;
        let len = self.varint()?;
        self.take(len)
    }

    fn varint_field(&mut self, wire: u8, path: &str) -> Result<u64, ProtoError> {
        self.expect(wire, WIRE_VARINT, path)?;
        self.varint()
    }

    fn string(&mut self, wire: u8, path: &str) -> Result<String, ProtoError> {
        let bytes = self.length_delimited(wire, path)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| error(path, "a string is not valid UTF-8"))
    }

    /// Skips a field the descriptor does not name.
    fn skip(&mut self, wire: u8) -> Result<(), ProtoError> {
        match wire {
            WIRE_VARINT => self.varint().map(drop),
            WIRE_FIXED64 => self.take(8).map(drop),
            WIRE_LEN => {
                let len = self.varint()?;
                self.take(len).map(drop)
            }
            WIRE_FIXED32 => self.take(4).map(drop),
            other => Err(error(
                self.path,
                format!("unsupported wire type {other} ({})", wire_name(other)),
            )),
        }
    }
}

fn wire_name(wire: u8) -> &'static str {
    match wire {
        WIRE_VARINT => "varint",
        WIRE_FIXED64 => "fixed64",
        WIRE_LEN => "length-delimited",
        3 => "start group",
        4 => "end group",
        WIRE_FIXED32 => "fixed32",
        _ => "invalid",
    }
}

#[cfg(test)]
mod tests;
