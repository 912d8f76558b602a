//! Unit tests of the module: its cases, beside it to keep the module readable.

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
    let nest =
        |levels: usize| (0..levels).fold(Vec::new(), |inner, _| entry(1, "f", bytes(2, &inner)));
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
