//! Reads over the [`schema`](super::schema) tables, shared by read transactions (gets, lists,
//! watch replay) and the writer (preconditions).

use std::ops::Bound;

use redb::{AccessGuard, ReadTransaction, ReadableTable};

use super::schema::{self, COMPACTED, CURRENT, LOG, META, VERSIONS};
use crate::{Error, KeyValue, Result, Revision, WatchEvent};

/// The revision counters as a transaction sees them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Counters {
    /// The revision of the last write.
    pub current: Revision,
    /// The compacted revision (`0`: never compacted).
    pub compacted: Revision,
}

impl Counters {
    /// Reads the counters from the meta table (both `0` in a new store).
    pub(super) fn read(meta: &impl ReadableTable<&'static str, u64>) -> Result<Counters> {
        let get = |name| -> Result<u64> { Ok(meta.get(name)?.map_or(0, |v| v.value())) };
        Ok(Counters {
            current: get(CURRENT)?,
            compacted: get(COMPACTED)?,
        })
    }

    /// The revision to read at for a requested one (`0`: the latest).
    pub(super) fn read_revision(self, requested: Revision) -> Result<Revision> {
        if requested == 0 {
            Ok(self.current)
        } else if requested > self.current {
            Err(Error::FutureRevision {
                requested,
                current: self.current,
            })
        } else if requested < self.compacted {
            Err(Error::Compacted {
                requested,
                compacted: self.compacted,
            })
        } else {
            Ok(requested)
        }
    }
}

/// The version of `key` visible at revision `at`: its last version at or before `at`, unless
/// that is a tombstone.
pub(super) fn get_at(
    versions: &impl ReadableTable<(&'static str, u64), &'static [u8]>,
    key: &str,
    at: Revision,
) -> Result<Option<KeyValue>> {
    match versions.range((key, 0)..=(key, at))?.next_back() {
        None => Ok(None),
        Some(entry) => {
            let (k, record) = entry?;
            schema::decode(key, k.value().1, record.value())
        }
    }
}

/// A row of the versions table, as redb hands it out.
type VersionEntry<'a> = (
    AccessGuard<'a, (&'static str, u64)>,
    AccessGuard<'a, &'static [u8]>,
);

/// The live keys under `prefix` after `start_after` at revision `at`: the first `limit` of
/// them decoded, and how many follow (all of them, for a count: `limit` 0). Without
/// `count_remaining`, the scan stops at the first live key after the page: how many follow
/// is then only known to be at least one.
pub(super) fn scan(
    versions: &impl ReadableTable<(&'static str, u64), &'static [u8]>,
    prefix: &str,
    start_after: Option<&str>,
    at: Revision,
    limit: usize,
    count_remaining: bool,
) -> Result<(Vec<KeyValue>, u64)> {
    let lower = match start_after {
        // Every version of `after` sorts before `(after, MAX)`.
        Some(after) if after >= prefix => Bound::Excluded((after, u64::MAX)),
        _ => Bound::Included((prefix, 0)),
    };
    let mut items = Vec::new();
    let mut remaining = 0;
    // Takes a key's visible version; answers whether it was a live key after the page.
    let mut finish = |key: &str, revision: Revision, record: &[u8]| -> Result<bool> {
        if schema::is_tombstone(record) {
            Ok(false)
        } else if items.len() < limit {
            items.extend(schema::decode(key, revision, record)?);
            Ok(false)
        } else {
            remaining += 1;
            Ok(true)
        }
    };
    let mut past_page = false;
    // Versions of a key come in revision order; the last one at or before `at` is visible.
    // Keep it (as redb guards, not decoded) until the scan moves on to the next key.
    let mut visible: Option<VersionEntry> = None;
    for entry in versions.range::<(&str, u64)>((lower, Bound::Unbounded))? {
        // Past the page, one live key tells there are more; counting them walks them all.
        if past_page && !count_remaining {
            break;
        }
        let (k, record) = entry?;
        let (key, revision) = k.value();
        if !key.starts_with(prefix) {
            break;
        }
        if let Some((vk, vr)) = &visible {
            let (visible_key, visible_revision) = vk.value();
            if visible_key != key {
                past_page |= finish(visible_key, visible_revision, vr.value())?;
                visible = None;
            }
        }
        if revision <= at {
            visible = Some((k, record));
        }
    }
    if let Some((vk, vr)) = &visible {
        let (key, revision) = vk.value();
        finish(key, revision, vr.value())?;
    }
    Ok((items, remaining))
}

/// A page of watch history.
#[derive(Debug)]
pub(super) struct Page {
    /// The events under the prefix, in revision order.
    pub events: Vec<WatchEvent>,
    /// The last revision looked at (matching the prefix or not).
    pub last: Revision,
    /// Whether `last` is the current revision of the snapshot.
    pub caught_up: bool,
}

/// The events under `prefix` among the `max` revisions after `after`.
pub(super) fn history_page(
    txn: &ReadTransaction,
    prefix: &str,
    after: Revision,
    max: usize,
) -> Result<Page> {
    let counters = Counters::read(&txn.open_table(META)?)?;
    // The same rule as for reads: history is kept after the compacted revision.
    if after < counters.compacted {
        return Err(Error::Compacted {
            requested: after,
            compacted: counters.compacted,
        });
    }
    let log = txn.open_table(LOG)?;
    let versions = txn.open_table(VERSIONS)?;
    let mut events = Vec::new();
    let mut last = after;
    if after < counters.current {
        for entry in log.range(after + 1..=counters.current)?.take(max) {
            let (revision, key) = entry?;
            let (revision, key) = (revision.value(), key.value());
            // One entry per revision: a gap means a corrupt log, not something to skip.
            if revision != last + 1 {
                return Err(Error::Internal(format!(
                    "watch history jumps from revision {last} to {revision}"
                )));
            }
            last = revision;
            if key.starts_with(prefix) {
                events.push(event(&versions, key, revision)?);
            }
        }
    }
    if last < counters.current && last - after < max as u64 {
        return Err(Error::Internal(format!(
            "watch history ends at revision {last}, before the current revision {}",
            counters.current
        )));
    }
    Ok(Page {
        events,
        last,
        caught_up: last >= counters.current,
    })
}

/// The event of the change of `key` at `revision`, rebuilt from the versions table. The
/// previous version is still there: `revision - 1` is not below the compacted revision, and
/// compaction keeps what is visible there.
fn event(
    versions: &impl ReadableTable<(&'static str, u64), &'static [u8]>,
    key: &str,
    revision: Revision,
) -> Result<WatchEvent> {
    let record = versions.get((key, revision))?.ok_or_else(|| {
        Error::Internal(format!(
            "watch history names {key:?} at revision {revision}, which is missing"
        ))
    })?;
    let prev = get_at(versions, key, revision - 1)?;
    match schema::decode(key, revision, record.value())? {
        Some(kv) => Ok(WatchEvent::Put { kv, prev }),
        None => match prev {
            Some(prev) => Ok(WatchEvent::Delete { prev, revision }),
            None => Err(Error::Internal(format!(
                "delete of {key:?} at revision {revision} has no previous version"
            ))),
        },
    }
}
