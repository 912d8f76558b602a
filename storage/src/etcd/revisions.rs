//! Our revisions on etcd: etcd's revision and a write's place within it.
//!
//! Several creates may commit in one etcd transaction (`batch`): they share etcd's
//! revision, yet each needs a revision of its own, since a client resumes its watch after
//! the last event it saw (a watch from a revision shared with an event it never received
//! would skip that event). So our revision is etcd's shifted left by [`SLOT_BITS`], plus
//! the write's *slot* within its transaction, as FoundationDB's versionstamps append a
//! transaction's order within its commit batch to the commit version:
//!
//! - A transaction of one write (every update and delete, a create alone) has the last
//!   slot, [`LAST`]: its revision is the end of etcd's revision, which is also the revision
//!   of a read at that etcd revision. Ours go up by `1 << SLOT_BITS` per etcd revision.
//! - In a transaction of several creates, each but the last gets its index as its slot;
//!   the last gets [`LAST`]. The slot is kept with the value, in a small prefix
//!   ([`encode`]), so every read of the key (a range, a watch event) tells it. Values
//!   carry no prefix otherwise (a value that happens to begin as a prefix does is
//!   written inside one, with the last slot).
//!
//! Every reader derives the same revisions from etcd's data, so several servers on one
//! cluster still share them. A revision between two slots is a state too: the creates of
//! its etcd revision up to its slot, on top of the state of the etcd revision before.

use bytes::Bytes;

use crate::Revision;

/// The bits of our revision that hold the slot: at most 1,024 writes share one etcd
/// revision (a batch is far smaller: etcd's `--max-txn-ops` is 128 by default).
pub const SLOT_BITS: u32 = 10;

/// The slot of a transaction's last write, and of a read: the end of an etcd revision.
pub(super) const LAST: u64 = (1 << SLOT_BITS) - 1;

/// What begins a value that carries its slot: a NUL (no JSON or protobuf value begins
/// with one) and a name, then the slot in two bytes, big-endian.
const PREFIX: &[u8] = b"\0kapi-slot\0";

/// Our revision of `slot` in etcd's revision `etcd`.
pub(super) fn ours(etcd: i64, slot: u64) -> Revision {
    ((etcd.max(0) as Revision) << SLOT_BITS) | slot.min(LAST)
}

/// Our revision of the end of etcd's revision `etcd`: what a read there, and a write
/// alone in its transaction, are at.
pub(super) fn end_of(etcd: i64) -> Revision {
    ours(etcd, LAST)
}

/// etcd's revision of ours, and the slot.
pub(super) fn etcd_of(revision: Revision) -> (i64, u64) {
    ((revision >> SLOT_BITS) as i64, revision & LAST)
}

/// The etcd revision a read at our `revision` reads (`0`: the latest), and, when the
/// revision stops before the end of its etcd revision, the slot it stops at. Such a read
/// is answered from the etcd revision before, plus that revision's creates up to the slot
/// (`Storage::get`, `Storage::list`).
pub(super) fn read_at(revision: Revision) -> (i64, Option<u64>) {
    match etcd_of(revision) {
        _ if revision == 0 => (0, None),
        (etcd, LAST) => (etcd, None),
        (etcd, slot) => (etcd, Some(slot)),
    }
}

/// The value to write for `value` at `slot` of its transaction.
pub(super) fn encode(value: &[u8], slot: u64) -> Vec<u8> {
    if slot == LAST && !value.starts_with(PREFIX) {
        return value.to_vec();
    }
    let mut out = Vec::with_capacity(PREFIX.len() + 2 + value.len());
    out.extend_from_slice(PREFIX);
    out.extend_from_slice(&(slot as u16).to_be_bytes());
    out.extend_from_slice(value);
    out
}

/// A stored value's slot and the value itself.
pub(super) fn decode(stored: &[u8]) -> (u64, &[u8]) {
    match stored.strip_prefix(PREFIX) {
        Some([high, low, value @ ..]) => (u64::from(u16::from_be_bytes([*high, *low])), value),
        _ => (LAST, stored),
    }
}

/// [`decode`], into an owned value.
pub(super) fn decode_owned(stored: &[u8]) -> (u64, Bytes) {
    let (slot, value) = decode(stored);
    (slot, Bytes::copy_from_slice(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_with_their_slot() {
        for (value, slot) in [
            (&b"{\"a\":1}"[..], LAST),
            (b"{\"a\":1}", 0),
            (b"k8s\0proto", 7),
            (b"", 3),
            (b"", LAST),
        ] {
            let stored = encode(value, slot);
            assert_eq!(decode(&stored), (slot, value));
        }
        // A write alone is stored as it is.
        assert_eq!(encode(b"{}", LAST), b"{}");
        // A value that begins as a prefix does is kept apart from one.
        let tricky = [PREFIX, &[0, 5], b"rest"].concat();
        assert_eq!(decode(&encode(&tricky, LAST)), (LAST, &tricky[..]));
        assert_ne!(encode(&tricky, LAST), tricky);
    }

    #[test]
    fn revisions_order_etcd_revisions_then_slots() {
        assert!(ours(5, 0) > end_of(4));
        assert!(ours(5, 1) > ours(5, 0));
        assert!(end_of(5) > ours(5, 1));
        assert_eq!(etcd_of(ours(9, 3)), (9, 3));
        assert_eq!(read_at(end_of(9)), (9, None));
        assert_eq!(read_at(ours(9, 3)), (9, Some(3)));
        assert_eq!(read_at(0), (0, None));
    }
}
