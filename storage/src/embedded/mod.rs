//! The embedded backend: a durable single-file store (redb) in the server's `--data-dir`.
//!
//! - Multi-version: every version of a key is kept, keyed by `(key, revision)`, with a log
//!   of the key each revision changed; reads at a past revision and watch replay work until
//!   compaction (`schema`).
//! - Writes go through one writer thread that commits concurrent writes together, one fsync
//!   per batch, and answers only after the commit returned (`writer`).
//! - Reads run in redb read transactions (snapshots) on the store's reader threads
//!   (`readers`): they never wait for the writer.
//! - Watches replay the log, then follow a broadcast of committed batches (`watch`). A
//!   progress request is one more message on that broadcast, in order with the batches.
//!
//! The file is locked while open: a second server on the same data directory fails to start.
//! After a crash (`kill -9`) redb recovers the last commit on open; an acknowledged write was
//! committed, so it is there.
//!
//! The async methods must run in a tokio runtime; opening blocks, as it may have to recover
//! the file.

mod read;
mod readers;
mod schema;
mod watch;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::thread::JoinHandle;

use bytes::Bytes;
use redb::{Database, DatabaseError, ReadTransaction, ReadableDatabase, ReadableTable};
use tokio::sync::{broadcast, oneshot};

use self::read::Counters;
use self::readers::Readers;
use self::watch::Batch;
use self::writer::{BatchLimits, Op, Outcome, Request, Writer};
use crate::{
    Deleted, Error, Guard, KeyValue, ListRequest, ListResponse, Result, Revision, Storage,
    WatchEvent, WatchStream,
};

/// Tuning of the embedded store.
#[derive(Debug, Clone)]
pub struct Options {
    /// The largest write accepted, key and value together (etcd's `--max-request-bytes`,
    /// 1.5 MiB by default).
    pub max_request_bytes: usize,
    /// How many commits a watcher may fall behind before it is dropped with
    /// [`Error::Lagged`].
    pub watch_capacity: usize,
    /// The most writes committed together.
    pub max_batch_writes: usize,
    /// Stop adding writes to a batch beyond this many bytes.
    pub max_batch_bytes: usize,
    /// Save redb's allocator state with each commit: a slower commit (two fsyncs), but an
    /// instant open after a crash instead of a walk of the whole file.
    pub quick_repair: bool,
    /// How much memory redb may keep for pages it read or wrote ([`DEFAULT_CACHE_BYTES`]).
    /// The watch caches hold every live object already; this cache serves storage reads
    /// (consistent pages, exact revisions, the caches' fills) and the B-tree paths writes
    /// walk, for which a fraction of the file is enough.
    pub cache_bytes: usize,
}

/// The default of [`Options::cache_bytes`]: 1 MiB (redb's own default is 1 GiB, which a
/// growing store fills with pages the watch caches already hold). The B-tree paths of a
/// write fit, and the OS page cache backs the rest of the file. `cargo xtask bench`, the
/// same binary run twice in a row with 1 and 4 MiB: creates, lists from storage and
/// paginated pages alike at 10k, 100k and 1M objects (creates at 1M: 8,942 against
/// 6,237/s), and the RSS growth of a 10k-object store 2.52x its JSON against 3.03x. (4
/// and 16 MiB also measured alike at ~100k, with 16 MiB doubling the growth at 10k.)
pub const DEFAULT_CACHE_BYTES: usize = 1 << 20;

impl Default for Options {
    fn default() -> Self {
        Options {
            max_request_bytes: 1536 * 1024,
            watch_capacity: 1024,
            max_batch_writes: 1024,
            max_batch_bytes: 16 * 1024 * 1024,
            quick_repair: false,
            cache_bytes: DEFAULT_CACHE_BYTES,
        }
    }
}

/// The embedded store. Dropping it stops the writer (after its current batch) and closes
/// the file; open watches then end.
pub struct EmbeddedStorage {
    shared: Arc<Shared>,
    /// `None` only while dropping.
    requests: Option<mpsc::Sender<Request>>,
    writer: Option<JoinHandle<()>>,
    path: PathBuf,
}

/// What the handle, the writer thread and the watchers share.
struct Shared {
    db: Database,
    options: Options,
    /// The revision of the last commit; updated after it returned.
    current: AtomicU64,
    /// Committed batches, for watchers.
    events: broadcast::Sender<Batch>,
    /// Held while a revision and its batch are published, so that a progress request sees
    /// no revision whose batch is not on the broadcast yet.
    publishing: Mutex<()>,
    /// Why the store stopped accepting writes, if it did.
    poisoned: OnceLock<String>,
    /// The threads reads run on.
    readers: Readers,
}

impl Shared {
    fn poisoned(&self) -> Option<String> {
        self.poisoned.get().cloned()
    }

    fn poison(&self, reason: String) {
        // The first reason is the one worth reporting.
        let _ = self.poisoned.set(reason);
    }

    /// Runs `read` in a fresh read transaction on a reader thread.
    async fn read<T: Send + 'static>(
        self: &Arc<Self>,
        read: impl FnOnce(&ReadTransaction) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let shared = Arc::clone(self);
        (self
            .readers
            .run(move || read(&shared.db.begin_read()?))
            .await)
            .unwrap_or_else(|| Err(Error::Internal("storage read failed".into())))
    }

    /// Makes a commit visible: its revision, then its events.
    fn publish(&self, current: Revision, events: Vec<WatchEvent>) {
        let _publishing = self.publishing.lock().unwrap_or_else(|e| e.into_inner());
        self.current.store(current, Ordering::Release);
        if !events.is_empty() {
            // An error only means no one is watching.
            let _ = self.events.send(Arc::new(events));
        }
    }

    /// Puts a progress marker at the current revision on the broadcast, after the batches
    /// of every revision up to it (see [`watch`]).
    fn request_progress(&self) {
        let _publishing = self.publishing.lock().unwrap_or_else(|e| e.into_inner());
        if self.events.receiver_count() > 0 {
            let revision = self.current.load(Ordering::Acquire);
            let _ = (self.events).send(Arc::new(vec![WatchEvent::Progress { revision }]));
        }
    }
}

impl EmbeddedStorage {
    /// The file in the data directory.
    pub const FILE_NAME: &str = "kapi.redb";

    /// Opens (creating if needed) the store in `dir`, with default options.
    pub fn open(dir: impl AsRef<Path>) -> Result<EmbeddedStorage> {
        EmbeddedStorage::open_with(dir, Options::default())
    }

    /// Opens (creating if needed) the store in `dir`. Fails if another process has it open.
    pub fn open_with(dir: impl AsRef<Path>, options: Options) -> Result<EmbeddedStorage> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::Unavailable(format!(
                "cannot create data directory {}: {e}",
                dir.display()
            ))
        })?;
        let path = dir.join(EmbeddedStorage::FILE_NAME);
        let db = Database::builder()
            .set_cache_size(options.cache_bytes)
            .create(&path)
            .map_err(|e| match e {
                DatabaseError::DatabaseAlreadyOpen => Error::Unavailable(format!(
                    "data directory {} is in use: {} is locked by another process",
                    dir.display(),
                    path.display()
                )),
                other => Error::Unavailable(format!("cannot open {}: {other}", path.display())),
            })?;
        let counters = initialize(&db)?;
        let (events, _) = broadcast::channel(options.watch_capacity.max(1));
        let limits = BatchLimits {
            max_ops: options.max_batch_writes.max(1),
            max_bytes: options.max_batch_bytes,
        };
        let readers = Readers::start(readers::default_count())
            .map_err(|e| Error::Internal(format!("cannot start the storage readers: {e}")))?;
        let shared = Arc::new(Shared {
            db,
            options,
            current: AtomicU64::new(counters.current),
            events,
            publishing: Mutex::new(()),
            poisoned: OnceLock::new(),
            readers,
        });
        let (requests, receiver) = mpsc::channel();
        let writer = Writer::new(Arc::clone(&shared), receiver, limits, counters);
        let writer = std::thread::Builder::new()
            .name("kapi-storage-writer".into())
            .spawn(move || writer.run())
            .map_err(|e| Error::Internal(format!("cannot start the storage writer: {e}")))?;
        Ok(EmbeddedStorage {
            shared,
            requests: Some(requests),
            writer: Some(writer),
            path,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `read` in a fresh read transaction on a reader thread.
    async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&ReadTransaction) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.shared.read(read).await
    }

    /// Queues a write and waits for its answer, which comes after its commit.
    async fn write(&self, op: Op) -> Result<Outcome> {
        if let Some(reason) = self.shared.poisoned() {
            return Err(Error::Unavailable(reason));
        }
        let stopped = || Error::Unavailable("the storage writer has stopped".into());
        let (reply, answer) = oneshot::channel();
        let requests = self.requests.as_ref().ok_or_else(stopped)?;
        requests
            .send(Request { op, reply })
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    fn check_write(&self, key: &str, value: &[u8]) -> Result<()> {
        check_key(key)?;
        let (size, limit) = (
            key.len() + value.len(),
            self.shared.options.max_request_bytes,
        );
        if size > limit {
            return Err(Error::TooLarge { size, limit });
        }
        Ok(())
    }
}

impl Drop for EmbeddedStorage {
    fn drop(&mut self) {
        // Closing the channel stops the writer after its current batch; wait for it so the
        // file is closed (and unlocked) when the last read finishes.
        drop(self.requests.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

/// Creates the tables of a new store and checks the format of an existing one.
fn initialize(db: &Database) -> Result<Counters> {
    let txn = db.begin_write()?;
    let counters = {
        txn.open_table(schema::VERSIONS)?;
        txn.open_table(schema::LOG)?;
        let mut meta = txn.open_table(schema::META)?;
        let format = meta.get(schema::FORMAT)?.map(|v| v.value());
        match format {
            None => {
                meta.insert(schema::FORMAT, schema::FORMAT_VERSION)?;
            }
            Some(schema::FORMAT_VERSION) => {}
            Some(other) => {
                return Err(Error::Unavailable(format!(
                    "the data directory holds format {other}; this build reads format {}",
                    schema::FORMAT_VERSION
                )));
            }
        }
        Counters::read(&meta)?
    };
    txn.commit()?;
    Ok(counters)
}

fn check_key(key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(Error::InvalidArgument("empty key".into()));
    }
    Ok(())
}

impl EmbeddedStorage {
    /// A create, under `guard` if given (the writer checks it in the same transaction).
    async fn create_with(&self, key: &str, value: Bytes, guard: Option<Guard>) -> Result<KeyValue> {
        self.check_write(key, &value)?;
        let op = Op::Create {
            key: key.to_owned(),
            value,
            guard,
        };
        match self.write(op).await? {
            Outcome::Put(kv) => Ok(kv),
            other => Err(unexpected(other)),
        }
    }
}

fn unexpected(outcome: Outcome) -> Error {
    Error::Internal(format!("storage writer answered {outcome:?}"))
}

#[async_trait::async_trait]
impl Storage for EmbeddedStorage {
    async fn get(&self, key: &str, revision: Revision) -> Result<Option<KeyValue>> {
        let key = key.to_owned();
        self.read(move |txn| {
            let at = Counters::read(&txn.open_table(schema::META)?)?.read_revision(revision)?;
            read::get_at(&txn.open_table(schema::VERSIONS)?, &key, at)
        })
        .await
    }

    async fn list(&self, request: ListRequest) -> Result<ListResponse> {
        self.read(move |txn| {
            let counters = Counters::read(&txn.open_table(schema::META)?)?;
            let at = counters.read_revision(request.revision)?;
            let limit = match request.limit {
                0 => usize::MAX,
                limit => limit,
            };
            let (mut items, remaining) = read::scan(
                &txn.open_table(schema::VERSIONS)?,
                &request.prefix,
                request.start_after.as_deref(),
                at,
                limit,
                !request.skip_remaining,
            )?;
            if request.keys_only {
                // Read all the same (a record holds both); not handed out.
                for item in &mut items {
                    item.value = Bytes::new();
                }
            }
            Ok(ListResponse {
                items,
                revision: at,
                more: remaining > 0,
                remaining: if request.skip_remaining { 0 } else { remaining },
            })
        })
        .await
    }

    async fn count(&self, prefix: &str) -> Result<u64> {
        let prefix = prefix.to_owned();
        self.read(move |txn| {
            let versions = txn.open_table(schema::VERSIONS)?;
            Ok(read::scan(&versions, &prefix, None, Revision::MAX, 0, true)?.1)
        })
        .await
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.create_with(key, value, None).await
    }

    async fn create_guarded(&self, key: &str, value: Bytes, guard: &Guard) -> Result<KeyValue> {
        check_key(&guard.key)?;
        self.create_with(key, value, Some(guard.clone())).await
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> Result<KeyValue> {
        self.check_write(key, &value)?;
        let op = Op::Update {
            key: key.to_owned(),
            value,
            expected: expected_mod_revision,
        };
        match self.write(op).await? {
            Outcome::Put(kv) => Ok(kv),
            other => Err(unexpected(other)),
        }
    }

    async fn delete(&self, key: &str, expected_mod_revision: Option<Revision>) -> Result<Deleted> {
        check_key(key)?;
        let op = Op::Delete {
            key: key.to_owned(),
            expected: expected_mod_revision,
        };
        match self.write(op).await? {
            Outcome::Deleted(deleted) => Ok(deleted),
            other => Err(unexpected(other)),
        }
    }

    async fn watch(&self, prefix: &str, from_revision: Revision) -> Result<WatchStream> {
        // "From now" is the last acknowledged commit: a write acknowledged after this call
        // returns has a later revision, and the stream (which reads history lazily) gets it.
        let from = match from_revision {
            0 => self.shared.current.load(Ordering::Acquire),
            from => from,
        };
        Ok(watch::stream(
            Arc::downgrade(&self.shared),
            prefix.to_owned(),
            from,
            self.shared.options.watch_capacity,
        ))
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        match self.write(Op::Compact { revision }).await? {
            Outcome::Compacted => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn current_revision(&self) -> Result<Revision> {
        Ok(self.shared.current.load(Ordering::Acquire))
    }

    fn reports_progress(&self) -> bool {
        true
    }

    async fn request_progress(&self) {
        self.shared.request_progress();
    }

    async fn health(&self) -> Result<()> {
        if let Some(reason) = self.shared.poisoned() {
            return Err(Error::Unavailable(reason));
        }
        if self.writer.as_ref().is_none_or(|w| w.is_finished()) {
            return Err(Error::Unavailable("the storage writer has stopped".into()));
        }
        self.read(|txn| Counters::read(&txn.open_table(schema::META)?).map(drop))
            .await
    }

    async fn size(&self) -> Result<u64> {
        let metadata = std::fs::metadata(&self.path)
            .map_err(|e| Error::Unavailable(format!("cannot read {}: {e}", self.path.display())))?;
        Ok(metadata.len())
    }
}

// redb's errors are failures of the file or of this code, never of a request.
macro_rules! from_redb {
    ($($error:ty),*) => {$(
        impl From<$error> for Error {
            fn from(error: $error) -> Error {
                Error::Internal(format!("redb: {error}"))
            }
        }
    )*};
}
from_redb!(
    redb::StorageError,
    redb::TransactionError,
    redb::TableError,
    redb::CommitError
);
