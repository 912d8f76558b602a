//! [`ByteString`]: bytes that travel as base64 in JSON, as Go's `[]byte` does (a
//! ConfigMap's `binaryData`, a Secret's `data`).
//!
//! Decoding follows Go's `encoding/base64.StdEncoding`, which kube's JSON decoder uses:
//! padding is required, `\r` and `\n` anywhere are ignored, and a bad input fails with
//! `illegal base64 data at input byte N`, N counted as Go counts it. kube answers such a
//! body with a 400 that quotes that message, so the offset is part of the contract; no
//! base64 crate reports Go's offsets, hence the small decoder here. Encoding is standard
//! base64 with padding (the `base64` crate), as Go writes it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes, base64 in JSON (OpenAPI `type: string, format: byte`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteString(pub Vec<u8>);

impl Serialize for ByteString {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for ByteString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        decode(text.as_bytes()).map(ByteString).map_err(|at| {
            serde::de::Error::custom(format_args!("illegal base64 data at input byte {at}"))
        })
    }
}

impl schemars::JsonSchema for ByteString {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ByteString".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "format": "byte"})
    }
}

/// The value of one base64 character, `None` for anything else.
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

fn is_newline(c: u8) -> bool {
    c == b'\n' || c == b'\r'
}

/// Go's `StdEncoding.Decode`: the bytes, or the offset Go's `CorruptInputError` names.
pub fn decode(src: &[u8]) -> Result<Vec<u8>, usize> {
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    while si < src.len() {
        // One quantum: up to four characters, newlines skipped (Go's `decodeQuantum`).
        let mut buf = [0u8; 4];
        let mut len = 4;
        let mut j = 0;
        let mut trailing = None;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                // Padding is required: a short final quantum is corrupt.
                return Err(si - j);
            }
            let c = src[si];
            si += 1;
            if let Some(value) = sextet(c) {
                buf[j] = value;
                j += 1;
                continue;
            }
            if is_newline(c) {
                continue;
            }
            if c != b'=' || j < 2 {
                return Err(si - 1);
            }
            if j == 2 {
                // `==` is expected; the first `=` is consumed.
                while si < src.len() && is_newline(src[si]) {
                    si += 1;
                }
                if si == src.len() {
                    return Err(src.len());
                }
                if src[si] != b'=' {
                    return Err(si - 1);
                }
                si += 1;
            }
            while si < src.len() && is_newline(src[si]) {
                si += 1;
            }
            if si < src.len() {
                trailing = Some(si);
            }
            len = j;
            break;
        }
        let value = (u32::from(buf[0]) << 18)
            | (u32::from(buf[1]) << 12)
            | (u32::from(buf[2]) << 6)
            | u32::from(buf[3]);
        let bytes = [(value >> 16) as u8, (value >> 8) as u8, value as u8];
        out.extend_from_slice(&bytes[..len - 1]);
        if let Some(at) = trailing {
            return Err(at);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_as_go_does() {
        assert_eq!(decode(b"aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode(b"aGVs\nbG8=\r\n").unwrap(), b"hello");
        assert_eq!(decode(b"aGk=").unwrap(), b"hi");
        assert_eq!(decode(b"YQ==").unwrap(), b"a");
        assert_eq!(decode(b"").unwrap(), b"");
        // The offsets Go's `CorruptInputError` names (kube's 400 quotes them).
        assert_eq!(decode(b"not base64!"), Err(3));
        assert_eq!(decode(b"aGVsbG8"), Err(4));
        assert_eq!(decode(b"a"), Err(0));
        assert_eq!(decode(b"YQ="), Err(3));
        assert_eq!(decode(b"YQ=x"), Err(2));
        assert_eq!(decode(b"Y==="), Err(1));
        assert_eq!(decode(b"YQ==YQ=="), Err(4));
    }

    #[test]
    fn round_trips_through_json() {
        let bytes = ByteString((0..=255).collect());
        let json = serde_json::to_value(&bytes).unwrap();
        assert_eq!(serde_json::from_value::<ByteString>(json).unwrap(), bytes);
        let error = serde_json::from_value::<ByteString>("ab!".into()).unwrap_err();
        assert_eq!(error.to_string(), "illegal base64 data at input byte 2");
    }
}
