//! The on-disk layout of the embedded store: three redb tables.
//!
//! - [`VERSIONS`]: `(key, revision) -> record`, every version of every key (a put or a
//!   tombstone), so that a read at a past revision finds the last version at or before it.
//!   The tuple key sorts by key, then revision: all versions of a key are adjacent, and a
//!   prefix scan visits keys in order.
//! - [`LOG`]: `revision -> key`, the key each revision changed: watch history. One entry per
//!   revision after the compacted one, as each write is one revision.
//! - [`META`]: the current and the compacted revision, and the format version.
//!
//! A record is a tag byte, then for a put the create revision (8 bytes, big-endian) and the
//! value. The mod revision is the revision in the table key.

use bytes::Bytes;
use redb::TableDefinition;

use crate::{Error, KeyValue, Result, Revision};

/// Every version of every key.
pub(super) const VERSIONS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("versions");
/// The key changed at each revision.
pub(super) const LOG: TableDefinition<u64, &str> = TableDefinition::new("log");
/// Counters.
pub(super) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// [`META`] key: the revision of the last write.
pub(super) const CURRENT: &str = "current_revision";
/// [`META`] key: the compacted revision (`0`: never compacted).
pub(super) const COMPACTED: &str = "compacted_revision";
/// [`META`] key: the layout version, checked on open.
pub(super) const FORMAT: &str = "format";
/// The layout this code writes.
pub(super) const FORMAT_VERSION: u64 = 1;

const TAG_TOMBSTONE: u8 = 0;
const TAG_PUT: u8 = 1;
const HEADER: usize = 1 + 8;

/// The encoded tombstone record.
pub(super) const TOMBSTONE: &[u8] = &[TAG_TOMBSTONE];

/// Encodes a put record.
pub(super) fn encode_put(create_revision: Revision, value: &[u8]) -> Vec<u8> {
    let mut record = Vec::with_capacity(HEADER + value.len());
    record.push(TAG_PUT);
    record.extend_from_slice(&create_revision.to_be_bytes());
    record.extend_from_slice(value);
    record
}

/// Whether a record is a tombstone, without decoding it.
pub(super) fn is_tombstone(record: &[u8]) -> bool {
    record.first() == Some(&TAG_TOMBSTONE)
}

/// Decodes a record stored at `(key, mod_revision)`: `None` for a tombstone.
pub(super) fn decode(key: &str, mod_revision: Revision, record: &[u8]) -> Result<Option<KeyValue>> {
    match record.split_first() {
        Some((&TAG_TOMBSTONE, [])) => Ok(None),
        Some((&TAG_PUT, rest)) if rest.len() >= 8 => {
            let (create, value) = rest.split_at(8);
            let mut bytes = [0; 8];
            bytes.copy_from_slice(create);
            Ok(Some(KeyValue {
                key: key.to_owned(),
                value: Bytes::copy_from_slice(value),
                create_revision: u64::from_be_bytes(bytes),
                mod_revision,
            }))
        }
        _ => Err(Error::Internal(format!(
            "corrupt record for key {key:?} at revision {mod_revision}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let kv = decode("/k", 7, &encode_put(3, b"v")).unwrap().unwrap();
        assert_eq!(
            (kv.create_revision, kv.mod_revision, &kv.value[..]),
            (3, 7, &b"v"[..])
        );
        assert_eq!(decode("/k", 8, TOMBSTONE).unwrap(), None);
        assert!(is_tombstone(TOMBSTONE) && !is_tombstone(&encode_put(1, b"")));
        assert!(decode("/k", 1, &[TAG_PUT, 0]).is_err());
        assert!(decode("/k", 1, &[]).is_err());
    }
}
