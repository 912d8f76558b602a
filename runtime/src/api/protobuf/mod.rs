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
}

/// The message [`ProtoKind::Strings`] reads.
static STRINGS: ProtoMessage = ProtoMessage {
    name: "ExtraValue",
    fields: &[ProtoField::repeated(1, "items", ProtoKind::String)],
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
        ProtoKind::Time => time(reader.length_delimited(wire, path)?, path)?,
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
        ProtoKind::String | ProtoKind::Bytes => Value::String(String::new()),
        ProtoKind::Bool => Value::Bool(false),
        ProtoKind::Int32 | ProtoKind::Int64 => Value::from(0),
        ProtoKind::Message(_) | ProtoKind::Map(..) => Value::Object(Map::new()),
        ProtoKind::Time | ProtoKind::RawJson => Value::Null,
        ProtoKind::Strings => Value::Array(Vec::new()),
    }
}

/// `meta.v1.Time {int64 seconds = 1; int32 nanos = 2}` as RFC 3339, UTC, at second
/// precision (the JSON form; Go's `Time.ProtoTime` does not even send nanos). Empty is
/// Go's zero time, which JSON writes as `null`.
fn time(bytes: &[u8], path: &str) -> Result<Value, ProtoError> {
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    let mut seconds = 0_i64;
    let mut reader = Reader::new(bytes, path);
    while let Some((number, wire)) = reader.key()? {
        match number {
            1 => seconds = reader.varint_field(wire, path)? as i64,
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
    Ok(Value::String(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    )))
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
mod tests {
    use serde_json::json;

    use super::*;

    /// A tiny encoder: each function returns one field's bytes.
    fn varint(mut value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    fn key(number: u32, wire: u8) -> Vec<u8> {
        varint((u64::from(number) << 3) | u64::from(wire))
    }

    fn int(number: u32, value: i64) -> Vec<u8> {
        [key(number, WIRE_VARINT), varint(value as u64)].concat()
    }

    fn bytes(number: u32, value: &[u8]) -> Vec<u8> {
        [
            key(number, WIRE_LEN),
            varint(value.len() as u64),
            value.to_vec(),
        ]
        .concat()
    }

    fn string(number: u32, value: &str) -> Vec<u8> {
        bytes(number, value.as_bytes())
    }

    fn message(number: u32, fields: &[Vec<u8>]) -> Vec<u8> {
        bytes(number, &fields.concat())
    }

    fn entry(number: u32, key: &str, value: Vec<u8>) -> Vec<u8> {
        message(number, &[string(1, key), value])
    }

    static INNER: ProtoMessage = ProtoMessage {
        name: "test.Inner",
        fields: &[
            ProtoField::new(1, "name", ProtoKind::String),
            ProtoField::repeated(2, "values", ProtoKind::Int32),
        ],
    };

    static OUTER: ProtoMessage = ProtoMessage {
        name: "test.Outer",
        fields: &[
            ProtoField::new(1, "text", ProtoKind::String),
            ProtoField::new(2, "count", ProtoKind::Int64),
            ProtoField::new(3, "flag", ProtoKind::Bool),
            ProtoField::new(4, "small", ProtoKind::Int32),
            ProtoField::new(5, "data", ProtoKind::Bytes),
            ProtoField::new(6, "when", ProtoKind::Time),
            ProtoField::new(7, "inner", ProtoKind::Message(&INNER)),
            ProtoField::repeated(8, "items", ProtoKind::Message(&INNER)),
            ProtoField::repeated(9, "tags", ProtoKind::String),
            ProtoField::map(10, "labels", &ProtoKind::String, &ProtoKind::String),
            ProtoField::map(11, "blobs", &ProtoKind::String, &ProtoKind::Bytes),
            ProtoField::new(12, "fields", ProtoKind::RawJson),
            ProtoField::new(13, "kept", ProtoKind::Int64).keep_zero(),
            ProtoField::map(
                14,
                "nested",
                &ProtoKind::String,
                &ProtoKind::Message(&INNER),
            ),
            ProtoField::map(15, "extra", &ProtoKind::String, &ProtoKind::Strings),
        ],
    };

    #[test]
    fn string_lists_wrapped_in_a_message_are_lists() {
        // `map<string, ExtraValue>`, `ExtraValue {repeated string items = 1}`: JSON's
        // `map[string][]string`.
        check(
            &[
                entry(15, "scopes", message(2, &[string(1, "a"), string(1, "b")])),
                entry(15, "none", message(2, &[])),
            ],
            json!({"extra": {"scopes": ["a", "b"], "none": []}}),
        );
    }

    #[track_caller]
    fn check(fields: &[Vec<u8>], expected: Value) {
        assert_eq!(decode(&OUTER, &fields.concat()).unwrap(), expected);
    }

    #[track_caller]
    fn fails(fields: &[Vec<u8>], expected: &str) {
        let error = decode(&OUTER, &fields.concat()).unwrap_err();
        assert_eq!(error.to_string(), expected);
    }

    #[test]
    fn scalars_and_their_zeros() {
        check(&[], json!({}));
        check(
            &[
                string(1, "hello"),
                int(2, 300),
                int(3, 1),
                int(4, -5),
                bytes(5, b"hi!?"),
            ],
            json!({"text": "hello", "count": 300, "flag": true, "small": -5, "data": "aGkhPw=="}),
        );
        // Zeros are omitted (`omitempty`) unless kept; the last occurrence wins.
        check(
            &[
                string(1, ""),
                int(2, 0),
                int(3, 0),
                int(4, 0),
                bytes(5, b""),
                int(13, 0),
            ],
            json!({"kept": 0}),
        );
        check(&[string(1, "a"), string(1, "b")], json!({"text": "b"}));
        check(&[string(1, "a"), string(1, "")], json!({}));
        // Varints over 127, and the largest.
        check(&[int(2, 128)], json!({"count": 128}));
        check(&[int(2, 16_384)], json!({"count": 16_384}));
        check(&[int(2, i64::MAX)], json!({"count": i64::MAX}));
        check(&[int(2, -1)], json!({"count": -1}));
        // Base64 padding.
        check(&[bytes(5, b"a")], json!({"data": "YQ=="}));
        check(&[bytes(5, b"ab")], json!({"data": "YWI="}));
        check(&[bytes(5, &[0xff, 0xfe, 0xfd])], json!({"data": "//79"}));
    }

    #[test]
    fn nested_messages_repeated_and_maps() {
        check(
            &[
                message(7, &[string(1, "in"), int(2, 1), int(2, 200)]),
                message(8, &[string(1, "first")]),
                message(8, &[]),
                string(9, "x"),
                string(9, ""),
                string(9, "y"),
            ],
            json!({
                "inner": {"name": "in", "values": [1, 200]},
                "items": [{"name": "first"}, {}],
                "tags": ["x", "", "y"],
            }),
        );
        // An empty message is an empty object; a message twice is merged.
        check(&[message(7, &[])], json!({"inner": {}}));
        check(
            &[message(7, &[string(1, "a")]), message(7, &[int(2, 3)])],
            json!({"inner": {"name": "a", "values": [3]}}),
        );
        // Packed repeated scalars.
        check(
            &[message(7, &[bytes(2, &[varint(1), varint(300)].concat())])],
            json!({"inner": {"values": [1, 300]}}),
        );
        // Maps: entries in order, a missing key or value is the zero, bytes are base64.
        check(
            &[
                entry(10, "app", string(2, "web")),
                entry(10, "empty", string(2, "")),
                message(10, &[string(2, "no key")]),
                message(10, &[string(1, "no value")]),
                entry(11, "bin", bytes(2, &[0, 1, 2])),
                entry(14, "n", message(2, &[string(1, "deep")])),
            ],
            json!({
                "labels": {"app": "web", "empty": "", "": "no key", "no value": ""},
                "blobs": {"bin": "AAEC"},
                "nested": {"n": {"name": "deep"}},
            }),
        );
        // A long value: its length is a two-byte varint.
        let long = "x".repeat(200);
        check(
            &[entry(10, "long", string(2, &long))],
            json!({"labels": {"long": long}}),
        );
    }

    #[test]
    fn times_and_raw_json() {
        check(
            &[message(6, &[int(1, 1_700_000_000), int(2, 5)])],
            json!({"when": "2023-11-14T22:13:20Z"}),
        );
        check(
            &[message(6, &[int(1, 0)])],
            json!({"when": "1970-01-01T00:00:00Z"}),
        );
        check(
            &[message(6, &[int(1, 951_782_400)])],
            json!({"when": "2000-02-29T00:00:00Z"}),
        );
        check(
            &[message(6, &[int(1, -62_135_596_800)])],
            json!({"when": "0001-01-01T00:00:00Z"}),
        );
        // Go's zero time is an empty message, and JSON `null`: left out.
        check(&[message(6, &[])], json!({}));
        fails(
            &[message(6, &[int(1, i64::MAX)])],
            "time 9223372036854775807s is out of range (at Outer.when)",
        );
        check(
            &[message(
                12,
                &[string(1, r#"{"f:metadata":{"f:labels":{}}}"#)],
            )],
            json!({"fields": {"f:metadata": {"f:labels": {}}}}),
        );
        check(&[message(12, &[])], json!({}));
        fails(
            &[message(12, &[string(1, "{nope")])],
            "invalid JSON: key must be a string at line 1 column 2 (at Outer.fields)",
        );
    }

    #[test]
    fn unknown_fields_are_skipped() {
        check(
            &[
                int(99, 7),
                [key(98, WIRE_FIXED64), vec![0; 8]].concat(),
                [key(97, WIRE_FIXED32), vec![0; 4]].concat(),
                string(96, "ignored"),
                message(7, &[int(50, 1), string(1, "kept")]),
                string(1, "text"),
            ],
            json!({"inner": {"name": "kept"}, "text": "text"}),
        );
    }

    #[test]
    fn malformed_input_is_an_error() {
        // Truncated: a length past the end, a varint cut off, a fixed64 cut short.
        let whole = string(1, "hello");
        fails(
            &[whole[..whole.len() - 1].to_vec()],
            "unexpected end of data: the message is truncated (at Outer)",
        );
        fails(
            &[vec![0x10, 0x80]],
            "unexpected end of data: the message is truncated (at Outer)",
        );
        fails(
            &[[key(98, WIRE_FIXED64), vec![0; 7]].concat()],
            "unexpected end of data: the message is truncated (at Outer)",
        );
        fails(
            &[message(7, &[vec![0x0a, 0x05, b'a']])],
            "unexpected end of data: the message is truncated (at Outer.inner)",
        );
        // A huge length does not overflow.
        fails(
            &[[key(1, WIRE_LEN), varint(u64::MAX)].concat()],
            "unexpected end of data: the message is truncated (at Outer)",
        );
        fails(
            &[vec![0x10], vec![0xff; 11]],
            "a varint is longer than 10 bytes (at Outer)",
        );
        // The wrong wire type for the field, groups, field number 0, bad UTF-8.
        fails(
            &[int(1, 5)],
            "wire type 0 (varint) where 2 (length-delimited) was expected (at Outer.text)",
        );
        fails(
            &[string(2, "5")],
            "wire type 2 (length-delimited) where 0 (varint) was expected (at Outer.count)",
        );
        fails(
            &[key(90, 3)],
            "unsupported wire type 3 (start group) (at Outer)",
        );
        fails(&[vec![0x02, 0x00]], "invalid field number 0 (at Outer)");
        fails(
            &[bytes(1, &[0xff])],
            "a string is not valid UTF-8 (at Outer.text)",
        );
        fails(
            &[message(7, &[string(1, "a")]), int(7, 1)],
            "wire type 0 (varint) where 2 (length-delimited) was expected (at Outer.inner)",
        );
    }

    /// The `meta` descriptors, on bodies shaped as Go writes them.
    #[test]
    fn meta_descriptors() {
        use crate::meta::{DELETE_OPTIONS_PROTO, OBJECT_META_PROTO};

        // Pointer fields keep their zero: a grace period of 0 is "now".
        let options = [
            int(1, 0),
            message(2, &[string(1, "uid-1"), string(2, "")]),
            string(4, "Foreground"),
            string(5, "All"),
        ];
        assert_eq!(
            decode(&DELETE_OPTIONS_PROTO, &options.concat()).unwrap(),
            json!({"gracePeriodSeconds": 0, "preconditions": {"uid": "uid-1", "resourceVersion": ""},
                "propagationPolicy": "Foreground", "dryRun": ["All"]})
        );
        let owner = message(
            13,
            &[
                string(1, "WebApp"),
                string(3, "web"),
                string(4, ""),
                string(5, "apps.example.dev/v1"),
                int(6, 1),
                int(7, 0),
            ],
        );
        let managed = message(
            17,
            &[
                string(1, "kubectl"),
                string(2, "Update"),
                string(3, "v1"),
                message(4, &[int(1, 1_700_000_000)]),
                string(6, "FieldsV1"),
                message(7, &[string(1, r#"{"f:data":{".":{}}}"#)]),
                string(8, ""),
            ],
        );
        let metadata = [
            string(1, "c1"),
            string(3, "team-a"),
            int(7, 0),
            message(8, &[]),
            message(9, &[int(1, 1_700_000_000)]),
            int(10, 0),
            entry(11, "app", string(2, "web")),
            entry(12, "note", string(2, "")),
            owner,
            string(14, "example.dev/cleanup"),
            managed,
        ];
        assert_eq!(
            decode(&OBJECT_META_PROTO, &metadata.concat()).unwrap(),
            json!({
                "name": "c1",
                "namespace": "team-a",
                "deletionTimestamp": "2023-11-14T22:13:20Z",
                "deletionGracePeriodSeconds": 0,
                "labels": {"app": "web"},
                "annotations": {"note": ""},
                "ownerReferences": [{"kind": "WebApp", "name": "web", "uid": "",
                    "apiVersion": "apps.example.dev/v1", "controller": true,
                    "blockOwnerDeletion": false}],
                "finalizers": ["example.dev/cleanup"],
                "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                    "time": "2023-11-14T22:13:20Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {".": {}}}}],
            })
        );
    }

    #[test]
    fn nesting_is_bounded() {
        // `Fields {map<string, Fields> map = 1}`, the pre-1.15 field set, is recursive.
        static FIELDS: ProtoMessage = ProtoMessage {
            name: "test.Fields",
            fields: &[ProtoField::map(
                1,
                "map",
                &ProtoKind::String,
                &ProtoKind::Message(&FIELDS),
            )],
        };
        let nest = |levels: usize| {
            (0..levels).fold(Vec::new(), |inner, _| entry(1, "f", bytes(2, &inner)))
        };
        let decoded = decode(&FIELDS, &nest(3)).unwrap();
        assert_eq!(
            decoded,
            json!({"map": {"f": {"map": {"f": {"map": {"f": {}}}}}}})
        );
        let error = decode(&FIELDS, &nest(1000)).unwrap_err();
        assert_eq!(error.message, "messages nest deeper than 64");
    }

    #[test]
    fn envelopes() {
        let type_meta = message(1, &[string(1, "v1"), string(2, "ConfigMap")]);
        let body = [
            ENVELOPE_MAGIC.to_vec(),
            type_meta.clone(),
            bytes(2, b"\x0a\x00"),
            string(3, ""),
            string(4, ""),
        ]
        .concat();
        assert_eq!(
            decode_envelope(&body).unwrap(),
            Envelope {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                raw: b"\x0a\x00",
            }
        );
        let fails = |body: Vec<u8>| decode_envelope(&body).unwrap_err().to_string();
        assert_eq!(
            fails(b"{\"kind\": \"ConfigMap\"}".to_vec()),
            "not a Kubernetes protobuf body: it does not start with the 4-byte prefix \"k8s\\x00\""
        );
        assert_eq!(
            fails([ENVELOPE_MAGIC.to_vec(), string(3, "gzip")].concat()),
            "content encoding \"gzip\" is not supported (at Unknown.contentEncoding)"
        );
        assert_eq!(
            fails([ENVELOPE_MAGIC.to_vec(), string(4, "application/json")].concat()),
            "content type \"application/json\" is not supported (at Unknown.contentType)"
        );
        assert_eq!(
            fails([ENVELOPE_MAGIC.to_vec(), type_meta[..5].to_vec()].concat()),
            "unexpected end of data: the message is truncated (at Unknown)"
        );
    }
}
