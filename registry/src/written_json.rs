//! A write's answer in the storage version as the bytes it just stored with the
//! resourceVersion inserted, found by scanning only as far as the end of `metadata`, so
//! that the answer is neither encoded again nor parsed whole.

use bytes::Bytes;

use kapi_storage::Revision;

/// `stored` (an object's JSON, its metadata without a resourceVersion) with
/// `metadata.resourceVersion` added last, as setting it on the decoded object and
/// encoding that compactly would make it when `stored` is compact; `None` when `stored`
/// is not an object with an object `metadata`.
pub(crate) fn with_resource_version(stored: &[u8], revision: Revision) -> Option<Bytes> {
    let (end, empty) = metadata_end(stored)?;
    let separator = if empty { "" } else { "," };
    let insert = format!(r#"{separator}"resourceVersion":"{revision}""#);
    let mut json = Vec::with_capacity(stored.len() + insert.len() + 1);
    json.extend_from_slice(&stored[..end]);
    json.extend_from_slice(insert.as_bytes());
    json.extend_from_slice(&stored[end..]);
    Some(Bytes::from(json))
}

/// Where the top-level `"metadata"` object of `json` closes, and whether it is empty.
fn metadata_end(json: &[u8]) -> Option<(usize, bool)> {
    let mut at = skip_space(json, 0);
    if json.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_space(json, at);
        if json.get(at) != Some(&b'"') {
            return None;
        }
        let key_end = skip_string(json, at)?;
        let key = &json[at + 1..key_end - 1];
        at = skip_space(json, key_end);
        if json.get(at) != Some(&b':') {
            return None;
        }
        let value = skip_space(json, at + 1);
        let value_end = skip_value(json, value)?;
        if key == b"metadata" {
            if json[value] != b'{' {
                return None;
            }
            let close = value_end - 1;
            return Some((close, skip_space(json, value + 1) == close));
        }
        at = skip_space(json, value_end);
        match json.get(at) {
            Some(b',') => at += 1,
            _ => return None,
        }
    }
}

fn skip_space(json: &[u8], mut at: usize) -> usize {
    while json.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// Past the string that opens at `at` (its closing quote included).
fn skip_string(json: &[u8], mut at: usize) -> Option<usize> {
    at += 1;
    loop {
        // Long strings (an annotation) are passed over a word at a time.
        at += memchr::memchr2(b'"', b'\\', json.get(at..)?)?;
        match json[at] {
            b'"' => return Some(at + 1),
            _ => at += 2,
        }
    }
}

/// Past the value that starts at `at`.
fn skip_value(json: &[u8], at: usize) -> Option<usize> {
    match json.get(at)? {
        b'"' => skip_string(json, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = at;
            loop {
                match json.get(at)? {
                    b'"' => {
                        at = skip_string(json, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        // A number or a literal: up to what ends it.
        _ => {
            let length = json[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
            (length > 0).then_some(at + length)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// What the registry does without the scan: set the field and encode.
    fn encoded(object: &Value, revision: Revision) -> Vec<u8> {
        let mut object = object.clone();
        object["metadata"]["resourceVersion"] = json!(revision.to_string());
        serde_json::to_vec(&object).unwrap()
    }

    #[test]
    fn the_insertion_is_what_encoding_the_answer_gives() {
        let objects = [
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
            json!({"kind": "X", "metadata": {}, "data": {"k": "v"}}),
            // Values before `metadata` that hold braces, quotes and escapes in strings.
            json!({"a": "}{\"\\", "b": [1, {"c": "]"}], "n": -1.5e3, "t": true, "z": null,
                   "metadata": {"name": "b", "labels": {"x": "}"},
                                "managedFields": [{"fieldsV1": {"f:data": {}}}]},
                   "data": {"metadata": "not this one"}}),
        ];
        for object in objects {
            let stored = serde_json::to_vec(&object).unwrap();
            let json = with_resource_version(&stored, 42).expect("an object with metadata");
            assert_eq!(
                String::from_utf8_lossy(&json),
                String::from_utf8_lossy(&encoded(&object, 42))
            );
        }
    }

    #[test]
    fn what_is_not_an_object_with_metadata_has_no_insertion() {
        for stored in [
            &b""[..],
            b"[]",
            b"{}",
            b"{\"metadata\":null}",
            b"{\"metadata\":[1]}",
            b"{\"a\":1",
            b"{\"a\":\"open",
            b"{\"metadata\":{\"a\":",
        ] {
            assert_eq!(with_resource_version(stored, 1), None, "{stored:?}");
        }
    }
}
