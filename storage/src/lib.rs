//! Storage: keys, bytes and revisions, with etcd's semantics, and the watch cache over it.
//!
//! This is the bottom of the serving layers (endpoints → registry → storage). It knows no resource type and
//! no HTTP type: a key is a string such as `/registry/apps.example.dev/webapps/ns/name`, a
//! value is opaque bytes, and every write gets a revision above every earlier write's.
//! The registry maps revisions to `metadata.resourceVersion` and [`Error`]s to `Status`es.
//!
//! The [`Storage`] trait is shaped after etcd's KV and Watch APIs (without leases), so that
//! the etcd backend maps each method onto one etcd request; each method's documentation names
//! its etcd equivalent. Backends:
//!
//! - [`embedded`]: the default, a durable single-file store (redb) in `--data-dir`.
//! - `etcd` (with the `etcd` feature): an etcd v3 cluster, shared by several servers.
//!
//! Every backend must pass the shared suite in [`conformance`]
//! ([`storage_conformance_tests!`](crate::storage_conformance_tests)). [`compactor`]
//! compacts any backend periodically (`--compaction-interval`). [`cache`] is the watch
//! cache: one per key prefix, fed by one watch, serving reads and watches from memory.

use std::fmt;
use std::pin::Pin;

use bytes::Bytes;
use futures_core::Stream;

pub mod cache;
pub mod coalesce;
pub mod compactor;
#[doc(hidden)]
pub mod conformance;
pub mod deadline;
pub mod embedded;
#[cfg(feature = "etcd")]
pub mod etcd;
pub mod instrumented;

/// A revision: a point in the store's one history of writes.
///
/// Every successful write (create, update, delete) gets a revision above every earlier
/// write's. The embedded store counts one per write from 1; etcd's backend shifts etcd's
/// revision to leave room for the creates committed in one etcd transaction
/// (`etcd::SLOT_BITS`), so a write alone in its transaction is `1 << SLOT_BITS` above the
/// one before. In requests, `0` means "the latest".
pub type Revision = u64;

/// The result of a storage operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A stream of watch events, in revision order. After an `Err` item the stream ends.
pub type WatchStream = Pin<Box<dyn Stream<Item = Result<WatchEvent>> + Send>>;

/// A stored key with its value, as it was at some revision (etcd's `mvccpb.KeyValue`).
#[derive(Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key.
    pub key: String,
    /// The value: opaque bytes (an encoded object, for the registry).
    pub value: Bytes,
    /// The revision that created the key (since its last deletion).
    pub create_revision: Revision,
    /// The revision of the key's last change: the object's `resourceVersion`.
    pub mod_revision: Revision,
}

impl fmt::Debug for KeyValue {
    // Values can be large; show their length rather than their bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (f.debug_struct("KeyValue"))
            .field("key", &self.key)
            .field("value", &format_args!("{} bytes", self.value.len()))
            .field("create_revision", &self.create_revision)
            .field("mod_revision", &self.mod_revision)
            .finish()
    }
}

/// A ranged read of the keys under a prefix (etcd's `RangeRequest` over `[prefix, prefix_end)`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListRequest {
    /// Only keys starting with this string. Prefixes are plain string prefixes: the registry
    /// ends them with `/` so that `/a/b/` does not match `/a/bc`.
    pub prefix: String,
    /// Only keys strictly greater than this one: the last key of the previous page (the
    /// registry's continue token).
    pub start_after: Option<String>,
    /// At most this many items; `0` means no limit.
    pub limit: usize,
    /// Read the state as of this revision; `0` means the latest. Reading every page of a list
    /// at the first page's revision gives a consistent snapshot.
    pub revision: Revision,
    /// The caller does not need [`ListResponse::remaining`]: a backend whose count walks
    /// every following key (the embedded store) skips it and answers `0`. `more` stays
    /// exact. etcd counts in its index whatever is asked.
    pub skip_remaining: bool,
    /// Only the keys and their revisions: every item's value is empty (etcd's `keys_only`,
    /// which sends no values). What a reader needs to tell whether its copy of the
    /// collection is storage's (the registry's consistent lists of a cache behind). A
    /// backend that commits several writes in one transaction may tell each item's
    /// revisions only up to that transaction: compare them with [`Storage::same_write`].
    pub keys_only: bool,
}

impl ListRequest {
    /// All keys under `prefix`, at the latest revision, without a limit.
    pub fn prefix(prefix: impl Into<String>) -> Self {
        ListRequest {
            prefix: prefix.into(),
            ..ListRequest::default()
        }
    }

    /// With at most `limit` items (`0`: no limit).
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Continuing after `key`.
    pub fn start_after(mut self, key: impl Into<String>) -> Self {
        self.start_after = Some(key.into());
        self
    }

    /// Read at `revision` (`0`: the latest).
    pub fn at(mut self, revision: Revision) -> Self {
        self.revision = revision;
        self
    }

    /// Without counting the keys after the page ([`ListRequest::skip_remaining`]).
    pub fn without_remaining(mut self) -> Self {
        self.skip_remaining = true;
        self
    }

    /// Only keys and revisions ([`ListRequest::keys_only`]).
    pub fn keys_only(mut self) -> Self {
        self.keys_only = true;
        self
    }
}

/// The answer to a [`ListRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListResponse {
    /// The live keys, ordered by key.
    pub items: Vec<KeyValue>,
    /// The revision the list was read at: the latest one when the request asked for `0`.
    pub revision: Revision,
    /// Whether more keys follow the last item (the limit was reached).
    pub more: bool,
    /// How many keys follow the last item (kube-apiserver's `remainingItemCount`); `0` when
    /// the request skipped the count.
    pub remaining: u64,
}

/// A condition on another key that a write is made under ([`Storage::create_guarded`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// The key.
    pub key: String,
    /// Its expected mod revision; `0` for a key that must not exist.
    pub mod_revision: Revision,
}

/// The answer to a delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deleted {
    /// The value that was deleted, with its last `mod_revision`.
    pub prev: KeyValue,
    /// The revision of the delete itself.
    pub revision: Revision,
}

/// One change seen by a watch (etcd's `mvccpb.Event` with `prev_kv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// A create (`prev` is `None`) or an update (`prev` is the value it replaced). The
    /// revision of the change is `kv.mod_revision`.
    Put {
        /// The new value.
        kv: KeyValue,
        /// The replaced value, for an update.
        prev: Option<KeyValue>,
    },
    /// A delete.
    Delete {
        /// The deleted value, with its last `mod_revision`.
        prev: KeyValue,
        /// The revision of the delete.
        revision: Revision,
    },
    /// No event up to `revision` remains to be delivered on this watch (etcd's progress
    /// notification). Backends may send these; consumers must accept them anywhere.
    Progress {
        /// The revision the watch has reached.
        revision: Revision,
    },
}

impl WatchEvent {
    /// The revision of the change (or of the progress notification).
    pub fn revision(&self) -> Revision {
        match self {
            WatchEvent::Put { kv, .. } => kv.mod_revision,
            WatchEvent::Delete { revision, .. } | WatchEvent::Progress { revision } => *revision,
        }
    }

    /// The changed key; `None` for a progress notification.
    pub fn key(&self) -> Option<&str> {
        match self {
            WatchEvent::Put { kv, .. } => Some(&kv.key),
            WatchEvent::Delete { prev, .. } => Some(&prev.key),
            WatchEvent::Progress { .. } => None,
        }
    }
}

/// Why a storage operation failed. The registry maps each variant to a `Status`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The key does not exist (404).
    #[error("key {key:?} not found")]
    NotFound {
        /// The key.
        key: String,
    },
    /// A create found the key already present (409 AlreadyExists).
    #[error("key {key:?} already exists")]
    AlreadyExists {
        /// The key.
        key: String,
    },
    /// The key's mod revision is not the expected one (409 Conflict).
    #[error("key {key:?} was modified: expected mod revision {expected}, found {current}")]
    Conflict {
        /// The key.
        key: String,
        /// The mod revision the caller expected.
        expected: Revision,
        /// The key's current mod revision.
        current: Revision,
    },
    /// The revision asked for is older than the compacted one (410 Expired).
    #[error("revision {requested} has been compacted; the oldest available is {compacted}")]
    Compacted {
        /// The revision asked for.
        requested: Revision,
        /// The compacted revision: reads at or after it work. `0` when the backend cannot
        /// tell (etcd's range errors do not say).
        compacted: Revision,
    },
    /// The revision asked for is newer than the latest one (kube-apiserver answers 504
    /// "Too large resource version").
    #[error("revision {requested} is newer than the current revision {current}")]
    FutureRevision {
        /// The revision asked for.
        requested: Revision,
        /// The current revision; `0` when the backend cannot tell.
        current: Revision,
    },
    /// A write is larger than the backend accepts (413).
    #[error("request of {size} bytes is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The key and value size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// A watcher fell too far behind the writes and was dropped; the consumer should watch
    /// again from the last revision it saw (kube-apiserver closes the watch).
    #[error("watcher fell more than {capacity} commits behind and was dropped")]
    Lagged {
        /// How many commits a watcher may fall behind.
        capacity: usize,
    },
    /// A malformed request, such as an empty key: a programmer error.
    #[error("invalid storage request: {0}")]
    InvalidArgument(String),
    /// The backend cannot serve now (503): closed, unreachable, or failed.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The backend did not answer in time (504).
    #[error("storage timed out: {0}")]
    Timeout(String),
    /// Anything else: corrupt data, a bug (500).
    #[error("internal storage error: {0}")]
    Internal(String),
}

/// A key-value store with etcd's semantics.
///
/// - One global revision; each successful write gets a greater one (see [`Revision`]).
/// - Multi-version: reads at a past revision see the state as of that revision, until
///   [`compact`](Storage::compact)ed.
/// - Writes are conditional on a key's absence or on its `mod_revision` (compare-and-swap);
///   there is no blind overwrite, as the registry always writes on top of what it read.
/// - A write returns only after it is durable. A write whose future is dropped may still
///   happen, as with any remote store.
///
/// Used as `Arc<dyn Storage>`: the backend is chosen at run time.
#[async_trait::async_trait]
pub trait Storage: Send + Sync + 'static {
    /// The value of `key` at `revision` (`0`: the latest), or `None` if it did not exist.
    ///
    /// etcd: `Range { key, revision }`. Errors: [`Error::Compacted`], [`Error::FutureRevision`].
    async fn get(&self, key: &str, revision: Revision) -> Result<Option<KeyValue>>;

    /// The keys under a prefix, ordered by key, from `start_after`, at most `limit`, at a
    /// revision; reports the revision read at and what remains.
    ///
    /// etcd: `Range { key: max(prefix, start_after + "\0"), range_end: prefix_end(prefix),
    /// limit, revision }`, `remaining` = `count - len(kvs)`. Errors: [`Error::Compacted`],
    /// [`Error::FutureRevision`].
    async fn list(&self, request: ListRequest) -> Result<ListResponse>;

    /// How many live keys are under `prefix` now.
    ///
    /// etcd: `Range { key: prefix, range_end: prefix_end(prefix), count_only: true }`.
    async fn count(&self, prefix: &str) -> Result<u64>;

    /// Creates `key` if it does not exist. Returns it with its new revision.
    ///
    /// etcd: `Txn { compare: [create_revision(key) == 0], success: [Put], failure: [] }`.
    /// Errors: [`Error::AlreadyExists`], [`Error::TooLarge`].
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue>;

    /// Creates `key` if it does not exist and `guard.key`'s mod revision is still
    /// `guard.mod_revision`: the write is conditional on a second key, atomically, so a
    /// caller may decide from a cached view of that key and let the store confirm it.
    ///
    /// etcd: `Txn { compare: [create_revision(key) == 0, mod_revision(guard.key) ==
    /// guard.mod_revision], success: [Put], failure: [Range(guard.key)] }`. Errors:
    /// [`Error::Conflict`] for `guard.key` when the guard fails (`current` is `0` if it is
    /// absent; checked first), [`Error::AlreadyExists`], [`Error::TooLarge`].
    async fn create_guarded(&self, key: &str, value: Bytes, guard: &Guard) -> Result<KeyValue>;

    /// Replaces the value of `key` if its `mod_revision` is `expected_mod_revision`. Returns
    /// it with its new revision.
    ///
    /// etcd: `Txn { compare: [mod_revision(key) == expected], success: [Put], failure:
    /// [Range(key)] }`. Errors: [`Error::NotFound`], [`Error::Conflict`] (with the current
    /// mod revision), [`Error::TooLarge`].
    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> Result<KeyValue>;

    /// Deletes `key`, if given only when its `mod_revision` is `expected_mod_revision`.
    /// Returns the deleted value and the revision of the delete.
    ///
    /// etcd: `Txn { compare: [mod_revision(key) == expected], success: [DeleteRange(key,
    /// prev_kv)], failure: [Range(key)] }` (without a precondition, compare `mod_revision >
    /// 0`). Errors: [`Error::NotFound`], [`Error::Conflict`].
    async fn delete(&self, key: &str, expected_mod_revision: Option<Revision>) -> Result<Deleted>;

    /// Watches the keys under `prefix`: every change with a revision greater than
    /// `from_revision`, in revision order, exactly once (`0`: from the current revision, so
    /// only changes after this call). When this returns, the watch is established: a write
    /// that completes afterwards is delivered.
    ///
    /// If `from_revision` is below the compacted revision, the first item is
    /// [`Error::Compacted`]. A watcher that falls too far behind gets [`Error::Lagged`].
    /// After an error the stream ends; so it does when the storage is closed. A
    /// `from_revision` in the future is allowed: changes after it are delivered when they
    /// happen.
    ///
    /// etcd: `Watch { key: prefix, range_end: prefix_end(prefix), start_revision:
    /// from_revision, prev_kv: true, progress_notify: true }`, dropping events at
    /// `from_revision` itself. Starting at `from_revision` rather than the next one makes
    /// etcd's compaction check the same as for reads, and guarantees the `prev_kv` of every
    /// delivered event (read at `revision - 1 >= from_revision`) was not compacted.
    async fn watch(&self, prefix: &str, from_revision: Revision) -> Result<WatchStream>;

    /// Whether `a` and `b`, two revisions of one key, name the same write of it: when they
    /// are equal, and on a backend whose keys-only lists tell revisions only up to their
    /// transaction ([`ListRequest::keys_only`]), when they fall in one transaction, which
    /// writes a key at most once.
    fn same_write(&self, a: Revision, b: Revision) -> bool {
        a == b
    }

    /// Whether [`request_progress`](Storage::request_progress) works on this backend. A
    /// backend that cannot keep its promise keeps the default, `false`; callers then read
    /// storage instead of waiting for a watch to catch up.
    fn reports_progress(&self) -> bool {
        false
    }

    /// Asks every watch of this storage to report its progress: each watch that follows
    /// live changes then sends a [`WatchEvent::Progress`] at a revision no older than the
    /// store's revision at this call, after every change up to it. A watch may answer late,
    /// or not at all (one still replaying history): callers wait with a deadline, and may
    /// ask again.
    ///
    /// etcd: `WatchRequest { progress_request }` on every watch stream. Only etcd v3.4.31+
    /// and v3.5.13+ send the answer in order with the stream's events (etcd-io/etcd#15220),
    /// so on older members this does nothing and [`reports_progress`](Storage::reports_progress)
    /// is `false`, as kube-apiserver's feature check decides.
    async fn request_progress(&self) {}

    /// Discards history before `revision`: afterwards reads at, and watches from, revisions
    /// lower than `revision` fail with [`Error::Compacted`]. The state at `revision` and every
    /// later change stay available.
    ///
    /// etcd: `Compaction { revision, physical: true }`. Errors: [`Error::Compacted`] (already
    /// compacted at or after `revision`), [`Error::FutureRevision`].
    async fn compact(&self, revision: Revision) -> Result<()>;

    /// The latest revision.
    ///
    /// etcd: the header revision of `Range { key, limit: 1, count_only: true }`.
    async fn current_revision(&self) -> Result<Revision>;

    /// Whether the backend can serve (for `/readyz` and `/livez`).
    ///
    /// etcd: a linearizable `Range` of a health key, as etcd's own `/health` does.
    async fn health(&self) -> Result<()>;

    /// The space the database takes, in bytes (`apiserver_storage_size_bytes`).
    ///
    /// etcd: the `dbSize` of `Maintenance.Status` of the member answering.
    async fn size(&self) -> Result<u64>;
}
