//! Kubernetes protobuf responses: the JSON the server holds, written as the message a
//! kind's [`ProtoMessage`] describes, in the framing kube-apiserver uses.
//!
//! - an object: the `k8s\0` magic, then a `runtime.Unknown` envelope
//!   (`typeMeta {apiVersion, kind}`, `raw`, and empty `contentEncoding` and `contentType`,
//!   as kube writes them) whose `raw` is the object's message ([`object`]);
//! - a list: the same envelope around `{ListMeta metadata = 1; repeated <Item> items = 2}`
//!   ([`list`]), whose items are the objects' messages as they are (so a list can be
//!   assembled from messages made once per object: [`message`]);
//! - a watch stream (`;stream=watch`): frames of a 4-byte big-endian length and a
//!   `meta.v1.WatchEvent {string type = 1; RawExtension object = 2 {bytes raw = 1}}` whose
//!   `raw` is the enveloped object ([`watch_event`]).
//!
//! Fields are written in field-number order, maps by key, as Go's generated marshallers
//! write them. A field is written when the JSON has it (not `null`), zero values included,
//! and left out otherwise, which Go's decoder reads back as the field's zero (a value
//! field) or as unset (a pointer): the same object the JSON describes. kube's own bytes
//! differ only in also writing the zeros of value fields the JSON omits.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use super::{
    ENVELOPE_MAGIC, INT_OR_STRING, ProtoError, ProtoField, ProtoKind, ProtoMessage, QUANTITY,
    STRINGS, WIRE_LEN, WIRE_VARINT, error,
};
use crate::meta::LIST_META_PROTO;

/// How deep messages may nest (a recursive descriptor must not overflow the stack).
const MAX_DEPTH: usize = 64;

/// The message of `object` as `message` describes it (no envelope): `apiVersion` and
/// `kind` are not part of it.
pub fn message(message: &ProtoMessage, object: &Value) -> Result<Vec<u8>, ProtoError> {
    let mut out = Vec::new();
    let Value::Object(fields) = object else {
        return Err(error(message.short_name(), "an object is needed"));
    };
    write_message(message, fields, &mut out, message.short_name(), 0)?;
    Ok(out)
}

/// An object as a whole protobuf body: the envelope, with `apiVersion` and `kind` from the
/// object, around its message.
pub fn object(message: &ProtoMessage, object: &Value) -> Result<Vec<u8>, ProtoError> {
    let raw = self::message(message, object)?;
    Ok(envelope(
        type_meta(object, "apiVersion"),
        type_meta(object, "kind"),
        &raw,
    ))
}

fn type_meta<'a>(object: &'a Value, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A list as a whole protobuf body, from its `apiVersion`, `kind` and `metadata` (a
/// `ListMeta`) and its items' messages ([`message`]).
pub fn list<'a>(
    api_version: &str,
    kind: &str,
    metadata: &Value,
    items: impl IntoIterator<Item = &'a [u8]> + Clone,
) -> Result<Vec<u8>, ProtoError> {
    let parts = ListParts::new(
        api_version,
        kind,
        metadata,
        items.clone().into_iter().map(<[u8]>::len),
    )?;
    let mut out = parts.head;
    for item in items {
        out.extend_from_slice(&field_head(2, item.len()));
        out.extend_from_slice(item);
    }
    out.extend_from_slice(ENVELOPE_TAIL);
    Ok(out)
}

/// A protobuf list body in parts, for writing it from items' messages without copying
/// them first: `head`, then for each item its [`field_head`] (field 2) and its message,
/// then [`ENVELOPE_TAIL`].
pub struct ListParts {
    /// The envelope's start and the list's metadata.
    pub head: Vec<u8>,
    /// The length of the whole body.
    pub length: usize,
}

impl ListParts {
    /// The parts of a list of items of `item_lengths`.
    pub fn new(
        api_version: &str,
        kind: &str,
        metadata: &Value,
        item_lengths: impl IntoIterator<Item = usize>,
    ) -> Result<ListParts, ProtoError> {
        let meta = self::message(&LIST_META_PROTO, metadata)?;
        let items: usize = (item_lengths.into_iter())
            .map(|len| field_head(2, len).len() + len)
            .sum();
        let raw = field_head(1, meta.len()).len() + meta.len() + items;
        let mut head = envelope_head(api_version, kind, raw);
        let length = head.len() + raw + ENVELOPE_TAIL.len();
        length_delimited(&mut head, 1, &meta);
        Ok(ListParts { head, length })
    }
}

/// What follows `raw` in an envelope: the empty content encoding and content type, which
/// kube writes too.
pub const ENVELOPE_TAIL: &[u8] = &[0x1a, 0x00, 0x22, 0x00];

/// The `k8s\0` magic and the `runtime.Unknown` envelope around `raw`.
pub fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut out = envelope_head(api_version, kind, raw.len());
    out.reserve(raw.len() + ENVELOPE_TAIL.len());
    out.extend_from_slice(raw);
    out.extend_from_slice(ENVELOPE_TAIL);
    out
}

/// An envelope up to its `raw` (of `raw_length` bytes): the magic, the type meta, and the
/// key and length of `raw`.
fn envelope_head(api_version: &str, kind: &str, raw_length: usize) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    length_delimited(&mut type_meta, 1, api_version.as_bytes());
    length_delimited(&mut type_meta, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(ENVELOPE_MAGIC.len() + type_meta.len() + 16);
    out.extend_from_slice(ENVELOPE_MAGIC);
    length_delimited(&mut out, 1, &type_meta);
    out.extend_from_slice(&field_head(2, raw_length));
    out
}

/// The key and length of a length-delimited field `number` of `length` bytes.
pub fn field_head(number: u32, length: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(8);
    key(&mut out, number, WIRE_LEN);
    varint(&mut out, length as u64);
    out
}

/// One frame of a protobuf watch stream: the length, then the `WatchEvent` of `type_`
/// whose object is `enveloped` (a whole body, as [`object`] makes).
pub fn watch_event(type_: &str, enveloped: &[u8]) -> Vec<u8> {
    watch_frame(type_, &[enveloped])
}

/// [`watch_event`] of [`envelope`]`(api_version, kind, raw)`, the envelope written straight
/// into the frame: what every watcher of a change writes for itself, so one allocation at
/// the frame's exact length and one copy of `raw`, where the two calls made four of each.
pub fn enveloped_watch_event(type_: &str, api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let head = envelope_head(api_version, kind, raw.len());
    watch_frame(type_, &[&head, raw, ENVELOPE_TAIL])
}

/// A watch frame whose enveloped object is `enveloped`, given in pieces: the frame's
/// length (4 bytes, big-endian), then `WatchEvent {type = 1, object = 2 {raw = 1}}`, in
/// one buffer of exactly its length (`Bytes` takes a full vector as it is; spare capacity
/// costs it another allocation).
fn watch_frame(type_: &str, enveloped: &[&[u8]]) -> Vec<u8> {
    let length_delimited_len = |length: usize| 1 + varint_len(length as u64) + length;
    let enveloped_len: usize = enveloped.iter().map(|piece| piece.len()).sum();
    let extension_len = length_delimited_len(enveloped_len);
    let event_len = length_delimited_len(type_.len()) + length_delimited_len(extension_len);
    let mut frame = Vec::with_capacity(4 + event_len);
    frame.extend_from_slice(&(event_len as u32).to_be_bytes());
    length_delimited(&mut frame, 1, type_.as_bytes());
    key(&mut frame, 2, WIRE_LEN);
    varint(&mut frame, extension_len as u64);
    key(&mut frame, 1, WIRE_LEN);
    varint(&mut frame, enveloped_len as u64);
    for piece in enveloped {
        frame.extend_from_slice(piece);
    }
    debug_assert_eq!(frame.len(), frame.capacity());
    frame
}

/// How many bytes [`varint`] writes for `value`.
fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn key(out: &mut Vec<u8>, number: u32, wire: u8) {
    varint(out, (u64::from(number) << 3) | u64::from(wire));
}

fn length_delimited(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    key(out, number, WIRE_LEN);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn write_message(
    message: &ProtoMessage,
    object: &Map<String, Value>,
    out: &mut Vec<u8>,
    path: &str,
    depth: usize,
) -> Result<(), ProtoError> {
    if depth > MAX_DEPTH {
        return Err(error(
            path,
            format!("messages nest deeper than {MAX_DEPTH}"),
        ));
    }
    let mut fields: Vec<&ProtoField> = message.fields.iter().collect();
    fields.sort_by_key(|f| f.number);
    for field in fields {
        if let (true, ProtoKind::Message(nested)) = (field.inline, field.kind) {
            // An inlined message's fields are the object's own.
            let mut bytes = Vec::new();
            let path = format!("{path}.{}", field.json_name);
            write_message(nested, object, &mut bytes, &path, depth + 1)?;
            length_delimited(out, field.number, &bytes);
            continue;
        }
        let Some(value) = object.get(field.json_name).filter(|v| !v.is_null()) else {
            continue;
        };
        let path = format!("{path}.{}", field.json_name);
        match field.kind {
            ProtoKind::Map(key_kind, value_kind) => {
                let Value::Object(map) = value else {
                    return Err(error(&path, "a map needs a JSON object"));
                };
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by_key(|(k, _)| *k);
                for (map_key, map_value) in entries {
                    let mut entry = Vec::new();
                    let key_value = match key_kind {
                        ProtoKind::String => Value::String(map_key.clone()),
                        ProtoKind::Bool => Value::Bool(map_key == "true"),
                        _ => map_key
                            .parse::<i64>()
                            .map(Value::from)
                            .map_err(|_| error(&path, format!("map key {map_key:?}")))?,
                    };
                    write_value(*key_kind, 1, &key_value, &mut entry, &path, depth)?;
                    write_value(*value_kind, 2, map_value, &mut entry, &path, depth)?;
                    length_delimited(out, field.number, &entry);
                }
            }
            kind if field.repeated => {
                let Value::Array(items) = value else {
                    return Err(error(&path, "a repeated field needs a JSON array"));
                };
                for item in items {
                    write_value(kind, field.number, item, out, &path, depth)?;
                }
            }
            kind => write_value(kind, field.number, value, out, &path, depth)?,
        }
    }
    Ok(())
}

fn write_value(
    kind: ProtoKind,
    number: u32,
    value: &Value,
    out: &mut Vec<u8>,
    path: &str,
    depth: usize,
) -> Result<(), ProtoError> {
    let wrong = |expected: &str| error(path, format!("{expected} is needed, not {value}"));
    match kind {
        ProtoKind::String => {
            length_delimited(
                out,
                number,
                value.as_str().ok_or_else(|| wrong("a string"))?.as_bytes(),
            );
        }
        ProtoKind::Bytes => {
            let text = value.as_str().ok_or_else(|| wrong("a base64 string"))?;
            let bytes = STANDARD
                .decode(text)
                .map_err(|e| error(path, e.to_string()))?;
            length_delimited(out, number, &bytes);
        }
        ProtoKind::Bool => {
            key(out, number, WIRE_VARINT);
            varint(
                out,
                u64::from(value.as_bool().ok_or_else(|| wrong("a boolean"))?),
            );
        }
        ProtoKind::Int32 | ProtoKind::Int64 => {
            let number_value = value.as_i64().ok_or_else(|| wrong("an integer"))?;
            let number_value = match kind {
                // Negative int32s are sign-extended to 64 bits on the wire.
                ProtoKind::Int32 => i64::from(number_value as i32),
                _ => number_value,
            };
            key(out, number, WIRE_VARINT);
            varint(out, number_value as u64);
        }
        // Go's zero time (JSON's `null`, in a map) is an empty message.
        ProtoKind::Time | ProtoKind::MicroTime if value.is_null() => {
            length_delimited(out, number, &[])
        }
        ProtoKind::Time | ProtoKind::MicroTime => {
            let text = value.as_str().ok_or_else(|| wrong("an RFC 3339 time"))?;
            let (seconds, nanos) = since_epoch(text).ok_or_else(|| wrong("an RFC 3339 time"))?;
            // A Time has whole seconds; a MicroTime microseconds.
            let nanos = match kind {
                ProtoKind::MicroTime => nanos / 1000 * 1000,
                _ => 0,
            };
            // `{int64 seconds = 1; int32 nanos = 2}`, both written, as Go writes them.
            let mut time = Vec::with_capacity(16);
            key(&mut time, 1, WIRE_VARINT);
            varint(&mut time, seconds as u64);
            key(&mut time, 2, WIRE_VARINT);
            varint(&mut time, u64::from(nanos));
            length_delimited(out, number, &time);
        }
        ProtoKind::RawJson => {
            let json = serde_json::to_vec(value).map_err(|e| error(path, e.to_string()))?;
            let mut raw = Vec::with_capacity(json.len() + 4);
            length_delimited(&mut raw, 1, &json);
            length_delimited(out, number, &raw);
        }
        ProtoKind::Strings => {
            let mut items = Map::new();
            items.insert("items".into(), value.clone());
            let mut bytes = Vec::new();
            write_message(&STRINGS, &items, &mut bytes, path, depth + 1)?;
            length_delimited(out, number, &bytes);
        }
        ProtoKind::Quantity => {
            let text = value.as_str().ok_or_else(|| wrong("a quantity string"))?;
            let mut wrapped = Map::new();
            wrapped.insert("string".into(), Value::String(text.to_owned()));
            let mut bytes = Vec::new();
            write_message(&QUANTITY, &wrapped, &mut bytes, path, depth + 1)?;
            length_delimited(out, number, &bytes);
        }
        ProtoKind::IntOrString => {
            // Go writes all three fields of the value, zeros included.
            let mut wrapped = Map::new();
            let (kind, int, string) = match value {
                Value::String(text) => (1, 0, text.clone()),
                Value::Number(n) => (
                    0,
                    n.as_i64().ok_or_else(|| wrong("an int32 or a string"))?,
                    String::new(),
                ),
                _ => return Err(wrong("an int32 or a string")),
            };
            wrapped.insert("type".into(), Value::from(kind));
            wrapped.insert("intVal".into(), Value::from(int));
            wrapped.insert("strVal".into(), Value::String(string));
            let mut bytes = Vec::new();
            write_message(&INT_OR_STRING, &wrapped, &mut bytes, path, depth + 1)?;
            length_delimited(out, number, &bytes);
        }
        ProtoKind::Message(message) => {
            let Value::Object(fields) = value else {
                return Err(wrong("an object"));
            };
            let mut bytes = Vec::new();
            write_message(message, fields, &mut bytes, path, depth + 1)?;
            length_delimited(out, number, &bytes);
        }
        ProtoKind::Map(..) => {
            return Err(error(
                path,
                "a map cannot be a map's value or a list's item",
            ));
        }
    }
    Ok(())
}

/// Seconds since the Unix epoch of an RFC 3339 time (`2026-11-26T01:02:03.5Z`, or with
/// an offset), and the nanoseconds past them: a time before the epoch has negative
/// seconds and positive nanoseconds, as protobuf's Timestamp. Any year from 1 on (Go's
/// zero time, `0001-01-01T00:00:00Z`, is a common value: humantime stops at 1970).
fn since_epoch(text: &str) -> Option<(i64, u32)> {
    let time: jiff::Timestamp = text.parse().ok()?;
    let (seconds, nanos) = (time.as_second(), time.subsec_nanosecond());
    match nanos < 0 {
        true => Some((seconds - 1, u32::try_from(1_000_000_000 + nanos).ok()?)),
        false => Some((seconds, u32::try_from(nanos).ok()?)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{decode, decode_body};
    use super::*;
    use crate::meta::{OBJECT_META_PROTO, STATUS_PROTO};

    static THING: ProtoMessage = ProtoMessage {
        name: "test.Thing",
        fields: &[
            ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
            ProtoField::map(2, "data", &ProtoKind::String, &ProtoKind::String),
            ProtoField::map(3, "binaryData", &ProtoKind::String, &ProtoKind::Bytes),
            ProtoField::new(4, "count", ProtoKind::Int32),
            ProtoField::new(5, "flag", ProtoKind::Bool).keep_zero(),
            ProtoField::repeated(6, "names", ProtoKind::String),
        ],
    };

    #[test]
    fn times_of_any_year_count_from_the_epoch() {
        assert_eq!(
            since_epoch("1970-01-01T00:00:01.5Z"),
            Some((1, 500_000_000))
        );
        assert_eq!(
            since_epoch("1969-12-31T23:59:59.25Z"),
            Some((-1, 250_000_000))
        );
        // Go's zero time plus two seconds, as e2e's Lease test sends it.
        assert_eq!(
            since_epoch("0001-01-01T00:00:02.000000Z"),
            Some((-62_135_596_798, 0))
        );
        assert_eq!(
            since_epoch("2026-12-03T01:02:03+01:00"),
            since_epoch("2026-12-03T00:02:03Z")
        );
        assert_eq!(since_epoch("yesterday"), None);
    }

    #[test]
    fn objects_decode_back_to_their_json() {
        let thing = json!({
            "apiVersion": "v1", "kind": "Thing",
            "metadata": {"name": "a", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
                "generation": 2, "creationTimestamp": "2026-11-26T01:02:03Z",
                "labels": {"z": "1", "a": "2"}, "finalizers": ["f"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "x",
                    "controller": true}],
                "managedFields": [{"manager": "m", "operation": "Update", "apiVersion": "v1",
                    "time": "2026-11-26T01:02:03Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {".": {}, "f:k": {}}}}]},
            "data": {"k": "v", "empty": ""},
            "binaryData": {"b": "AAEC"},
            "count": -3,
            "flag": false,
            "names": ["x", "y"],
        });
        let body = object(&THING, &thing).unwrap();
        assert_eq!(decode_body(&THING, &body).unwrap(), thing);
    }

    #[test]
    fn lists_and_watch_events_frame_their_objects() {
        let item = json!({"metadata": {"name": "a"}, "data": {"k": "v"}});
        let raw = message(&THING, &item).unwrap();
        let body = list(
            "v1",
            "ThingList",
            &json!({"resourceVersion": "9"}),
            [raw.as_slice()],
        )
        .unwrap();
        let envelope = super::super::decode_envelope(&body).unwrap();
        assert_eq!(
            (envelope.api_version.as_str(), envelope.kind.as_str()),
            ("v1", "ThingList")
        );
        static THING_LIST: ProtoMessage = ProtoMessage {
            name: "test.ThingList",
            fields: &[
                ProtoField::new(1, "metadata", ProtoKind::Message(&LIST_META_PROTO)),
                ProtoField::repeated(2, "items", ProtoKind::Message(&THING)),
            ],
        };
        assert_eq!(
            decode(&THING_LIST, envelope.raw).unwrap(),
            json!({"metadata": {"resourceVersion": "9"}, "items": [item]})
        );

        let enveloped = object(&THING, &item).unwrap();
        let frame = watch_event("ADDED", &enveloped);
        let length = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
        assert_eq!(length, frame.len() - 4);
        // `{type = 1, object = 2 {raw = 1}}`: the type, then the whole enveloped body.
        assert_eq!(&frame[4..6], &[0x0a, 5]);
        assert_eq!(&frame[6..11], b"ADDED");
        assert!(frame.ends_with(&enveloped));
    }

    #[test]
    fn an_enveloped_watch_event_is_the_watch_event_of_its_envelope() {
        // The frame as nested messages make it, each encoded on its own: what the one
        // buffer written at once must equal.
        let nested = |type_: &str, enveloped: &[u8]| {
            let mut extension = Vec::new();
            length_delimited(&mut extension, 1, enveloped);
            let mut event = Vec::new();
            length_delimited(&mut event, 1, type_.as_bytes());
            length_delimited(&mut event, 2, &extension);
            let mut frame = (event.len() as u32).to_be_bytes().to_vec();
            frame.extend_from_slice(&event);
            frame
        };
        for raw_length in [0, 1, 100, 127, 128, 300, 16_383, 16_384, 70_000] {
            let raw: Vec<u8> = (0..raw_length).map(|i| (i % 251) as u8).collect();
            let enveloped = envelope("v1", "ConfigMap", &raw);
            for type_ in ["ADDED", "MODIFIED", "DELETED"] {
                let frame = enveloped_watch_event(type_, "v1", "ConfigMap", &raw);
                let expected = nested(type_, &enveloped);
                assert_eq!(frame, expected, "{type_}, {raw_length} bytes");
                assert_eq!(watch_event(type_, &enveloped), expected);
                assert_eq!(frame.len(), frame.capacity(), "allocated at its length");
            }
        }
        for value in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut written = Vec::new();
            varint(&mut written, value);
            assert_eq!(varint_len(value), written.len(), "{value}");
        }
    }

    #[test]
    fn a_status_is_written_as_kube_writes_it() {
        let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": "configmaps \"nope\" not found",
            "reason": "NotFound", "details": {"name": "nope", "kind": "configmaps"},
            "code": 404});
        let body = object(&STATUS_PROTO, &status).unwrap();
        // What kube-apiserver 1.20 answered to the same GET, less the zero value fields
        // it also writes (`metadata {selfLink, resourceVersion, continue}`, `group`,
        // `retryAfterSeconds`, `uid`).
        let mut expected = Vec::new();
        expected.extend_from_slice(b"k8s\0\x0a\x0c\x0a\x02v1\x12\x06Status\x12");
        let raw: &[u8] = b"\x0a\x00\x12\x07Failure\x1a\x1bconfigmaps \"nope\" not found\
            \x22\x08NotFound\x2a\x12\x0a\x04nope\x1a\x0aconfigmaps\x30\x94\x03";
        expected.push(raw.len() as u8);
        expected.extend_from_slice(raw);
        expected.extend_from_slice(b"\x1a\x00\x22\x00");
        assert_eq!(body, expected);
        assert_eq!(decode_body(&STATUS_PROTO, &body).unwrap(), status);
    }
}
