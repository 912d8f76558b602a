//! A range's bitmap kept in storage (kube's etcd-backed allocator,
//! `allocator/storage`): one `RangeAllocation` object under the range's key, changed by
//! compare-and-swap on its revision, read again and changed again when another server
//! changed it first. Every server on one store therefore sees every value another hands
//! out before it hands out its own; within one server a lock takes the allocations of a
//! range one at a time, so they do not race one another for the object.

use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::bitmap::Bitmap;
use kapi_storage::{self as storage, Revision, Storage};

/// How many times a change is tried against writes of other servers before it fails.
const MAX_ATTEMPTS: usize = 64;

/// The stored form of a range (kube's core `RangeAllocation`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RangeAllocation {
    kind: String,
    api_version: String,
    #[serde(default)]
    metadata: serde_json::Value,
    range: String,
    #[serde(default)]
    data: String,
}

/// One range's bitmap in storage.
pub struct Stored {
    storage: Arc<dyn Storage>,
    key: String,
    range: String,
    size: usize,
    static_band: usize,
    lock: tokio::sync::Mutex<()>,
}

/// A bitmap as read, with the revision a change must be written on (`None`: nothing is
/// stored yet).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The taken values.
    pub bitmap: Bitmap,
    /// The stored object's revision.
    pub revision: Option<Revision>,
    /// The range the stored object is of (it differs from the server's when the range
    /// was changed: the repair pass rewrites it).
    pub range: String,
}

impl Stored {
    /// The bitmap of `size` values of the range written `range` (`10.0.0.0/24`,
    /// `30000-32767`), under `key`, whose free values are looked for above a static band
    /// of `static_band` values first.
    pub fn new(
        storage: Arc<dyn Storage>,
        key: String,
        range: String,
        size: usize,
        static_band: usize,
    ) -> Stored {
        Stored {
            storage,
            key,
            range,
            size,
            static_band,
            lock: tokio::sync::Mutex::new(()),
        }
    }

    /// The storage key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// What is stored now.
    pub async fn snapshot(&self) -> Result<Snapshot, Error> {
        let Some(kv) = self.storage.get(&self.key, 0).await? else {
            return Ok(Snapshot {
                bitmap: Bitmap::new(self.size),
                revision: None,
                range: self.range.clone(),
            });
        };
        let stored: RangeAllocation = serde_json::from_slice(&kv.value)
            .map_err(|e| Error::Corrupt(format!("{}: {e}", self.key)))?;
        let data = (base64::engine::general_purpose::STANDARD.decode(&stored.data))
            .map_err(|e| Error::Corrupt(format!("{}: {e}", self.key)))?;
        Ok(Snapshot {
            bitmap: Bitmap::from_bytes(self.size, &data),
            revision: Some(kv.mod_revision),
            range: stored.range,
        })
    }

    /// Takes value `offset`; [`Error::Allocated`] when it is taken. A dry run checks and
    /// stores nothing.
    pub async fn allocate(&self, offset: usize, dry_run: bool) -> Result<(), Error> {
        self.change(|bitmap| match bitmap.set(offset) {
            true if dry_run => Ok(None),
            true => Ok(Some(())),
            false => Err(Error::Allocated),
        })
        .await
        .map(|_| ())
    }

    /// Takes a free value and says which; [`Error::Full`] when there is none. A dry run
    /// finds one and stores nothing.
    pub async fn allocate_next(&self, dry_run: bool) -> Result<usize, Error> {
        let band = self.static_band;
        let mut found = None;
        self.change(|bitmap| {
            let offset = bitmap.free(band).ok_or(Error::Full)?;
            found = Some(offset);
            bitmap.set(offset);
            Ok((!dry_run).then_some(()))
        })
        .await?;
        found.ok_or(Error::Full)
    }

    /// Frees value `offset` (nothing when it is free).
    pub async fn release(&self, offset: usize) -> Result<(), Error> {
        self.change(|bitmap| Ok(bitmap.clear(offset).then_some(())))
            .await
            .map(|_| ())
    }

    /// Writes `bitmap` (of this server's range) over what `revision` was; `false` when
    /// the stored object changed since (the caller reads again).
    pub async fn replace(
        &self,
        bitmap: &Bitmap,
        revision: Option<Revision>,
    ) -> Result<bool, Error> {
        let _one_at_a_time = self.lock.lock().await;
        match self.write(bitmap, revision).await {
            Ok(()) => Ok(true),
            Err(Error::Storage(
                storage::Error::Conflict { .. } | storage::Error::AlreadyExists { .. },
            )) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Reads the bitmap, applies `change` and writes the result when it says to
    /// (`Some`), again from a fresh read whenever another server wrote first.
    async fn change(
        &self,
        mut change: impl FnMut(&mut Bitmap) -> Result<Option<()>, Error>,
    ) -> Result<(), Error> {
        let _one_at_a_time = self.lock.lock().await;
        let mut last = None;
        for _ in 0..MAX_ATTEMPTS {
            let mut snapshot = self.snapshot().await?;
            if snapshot.range != self.range {
                return Err(Error::RangeChanged {
                    stored: snapshot.range,
                    configured: self.range.clone(),
                });
            }
            if change(&mut snapshot.bitmap)?.is_none() {
                return Ok(());
            }
            match self.write(&snapshot.bitmap, snapshot.revision).await {
                Ok(()) => return Ok(()),
                Err(Error::Storage(
                    e @ (storage::Error::Conflict { .. } | storage::Error::AlreadyExists { .. }),
                )) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(Error::Storage(last.unwrap_or_else(|| {
            storage::Error::Internal(format!("{}: no attempt made", self.key))
        })))
    }

    async fn write(&self, bitmap: &Bitmap, revision: Option<Revision>) -> Result<(), Error> {
        let stored = RangeAllocation {
            kind: "RangeAllocation".into(),
            api_version: "v1".into(),
            metadata: serde_json::json!({"creationTimestamp": null}),
            range: self.range.clone(),
            data: base64::engine::general_purpose::STANDARD.encode(bitmap.to_bytes()),
        };
        let value =
            Bytes::from(serde_json::to_vec(&stored).map_err(|e| Error::Corrupt(e.to_string()))?);
        match revision {
            Some(revision) => self.storage.update(&self.key, value, revision).await?,
            None => self.storage.create(&self.key, value).await?,
        };
        Ok(())
    }
}
