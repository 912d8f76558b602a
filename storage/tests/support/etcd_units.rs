//! The etcd backend seen in etcd's own revisions, for the shared conformance suite.
//!
//! The suite counts revisions one per write, as the embedded store numbers them. On etcd,
//! ours are etcd's shifted by [`SLOT_BITS`] with a write's slot in its transaction (several
//! creates may share one); a write alone is at the end of its etcd revision. So the suite
//! runs on etcd through this exact translation: every revision the backend hands out must
//! be the end of an etcd revision (the suite writes one key per transaction), and is given
//! to the suite as that etcd revision; every revision the suite asks for is sent as the end
//! of that etcd revision. A revision within an etcd revision fails the case. The creates
//! that share an etcd revision are tested apart (`storage_etcd.rs`).

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use kapi_storage::etcd::SLOT_BITS;
use kapi_storage::{
    Deleted, Error, Guard, KeyValue, ListRequest, ListResponse, Result, Revision, Storage,
    WatchEvent, WatchStream,
};

const LAST: Revision = (1 << SLOT_BITS) - 1;

/// The backend, in etcd's revisions.
pub(crate) struct EtcdUnits(pub Arc<dyn Storage>);

/// The suite's revision as the backend's (`0`, the latest, stays).
fn to_backend(revision: Revision) -> Revision {
    match revision {
        0 => 0,
        r => (r << SLOT_BITS) | LAST,
    }
}

/// The backend's revision as the suite's, which must be the end of an etcd revision.
#[track_caller]
fn to_suite(revision: Revision) -> Revision {
    if revision == 0 {
        return 0;
    }
    assert_eq!(
        revision & LAST,
        LAST,
        "revision {revision} is within etcd revision {}, though written alone",
        revision >> SLOT_BITS
    );
    revision >> SLOT_BITS
}

fn kv(mut kv: KeyValue) -> KeyValue {
    kv.create_revision = to_suite(kv.create_revision);
    kv.mod_revision = to_suite(kv.mod_revision);
    kv
}

fn error(e: Error) -> Error {
    match e {
        Error::Conflict {
            key,
            expected,
            current,
        } => Error::Conflict {
            key,
            // The suite's own expectation, sent as the end of an etcd revision.
            expected: expected >> SLOT_BITS,
            current: to_suite(current),
        },
        Error::Compacted {
            requested,
            compacted,
        } => Error::Compacted {
            requested: requested >> SLOT_BITS,
            compacted: to_suite(compacted),
        },
        Error::FutureRevision { requested, current } => Error::FutureRevision {
            requested: requested >> SLOT_BITS,
            current: to_suite(current),
        },
        other => other,
    }
}

fn event(e: WatchEvent) -> WatchEvent {
    match e {
        WatchEvent::Put { kv: put, prev } => WatchEvent::Put {
            kv: kv(put),
            prev: prev.map(kv),
        },
        WatchEvent::Delete { prev, revision } => WatchEvent::Delete {
            prev: kv(prev),
            revision: to_suite(revision),
        },
        WatchEvent::Progress { revision } => WatchEvent::Progress {
            revision: to_suite(revision),
        },
    }
}

#[async_trait::async_trait]
impl Storage for EtcdUnits {
    async fn get(&self, key: &str, revision: Revision) -> Result<Option<KeyValue>> {
        let got = self.0.get(key, to_backend(revision)).await;
        got.map(|found| found.map(kv)).map_err(error)
    }

    async fn list(&self, request: ListRequest) -> Result<ListResponse> {
        let request = ListRequest {
            revision: to_backend(request.revision),
            ..request
        };
        let listed = self.0.list(request).await.map_err(error)?;
        Ok(ListResponse {
            items: listed.items.into_iter().map(kv).collect(),
            revision: to_suite(listed.revision),
            ..listed
        })
    }

    async fn count(&self, prefix: &str) -> Result<u64> {
        self.0.count(prefix).await
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.0.create(key, value).await.map(kv).map_err(error)
    }

    async fn create_guarded(&self, key: &str, value: Bytes, guard: &Guard) -> Result<KeyValue> {
        let guard = Guard {
            key: guard.key.clone(),
            mod_revision: to_backend(guard.mod_revision),
        };
        let created = self.0.create_guarded(key, value, &guard).await;
        created.map(kv).map_err(error)
    }

    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue> {
        let updated = self.0.update(key, value, to_backend(expected)).await;
        updated.map(kv).map_err(error)
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted> {
        let deleted = self.0.delete(key, expected.map(to_backend)).await;
        let deleted = deleted.map_err(error)?;
        Ok(Deleted {
            prev: kv(deleted.prev),
            revision: to_suite(deleted.revision),
        })
    }

    async fn watch(&self, prefix: &str, from: Revision) -> Result<WatchStream> {
        let watch = self
            .0
            .watch(prefix, to_backend(from))
            .await
            .map_err(error)?;
        Ok(Box::pin(watch.map(|item| item.map(event).map_err(error))))
    }

    fn same_write(&self, a: Revision, b: Revision) -> bool {
        self.0.same_write(to_backend(a), to_backend(b))
    }

    fn reports_progress(&self) -> bool {
        self.0.reports_progress()
    }

    async fn request_progress(&self) {
        self.0.request_progress().await
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        self.0.compact(to_backend(revision)).await.map_err(error)
    }

    async fn current_revision(&self) -> Result<Revision> {
        self.0.current_revision().await.map(to_suite).map_err(error)
    }

    async fn health(&self) -> Result<()> {
        self.0.health().await
    }

    async fn size(&self) -> Result<u64> {
        self.0.size().await
    }
}
