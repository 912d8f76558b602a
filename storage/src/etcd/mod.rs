//! The etcd backend: [`Storage`] on an etcd v3 cluster, through `etcd-client` (gRPC).
//!
//! Each trait method is the one etcd request its documentation names: ranges for reads,
//! transactions comparing `create_revision` / `mod_revision` for writes, a watch with
//! `prev_kv` and progress notifications (requested when the cluster answers them in
//! order: `progress`), compaction with `physical`. Keys are stored as the
//! registry builds them (`/registry/<group>/<resource>/<namespace>/<name>`); revisions are
//! etcd's with each write's place in its transaction (`revisions`), so several servers on
//! one cluster share them and see each other's writes.
//!
//! Nothing waits without bound: every request has a deadline ([`EtcdOptions`]), after which
//! it fails with [`Error::Timeout`] (504); an unreachable cluster, a lost quorum or a member
//! without a leader (requests carry etcd's `require-leader` metadata) is
//! [`Error::Unavailable`] (503). Reads, and writes refused before they reached a member
//! (connection refused), are retried on the other members within the deadline, as etcd's
//! own client does. Watches survive a member's failure (`watch`).
//!
//! Built only with the `etcd` feature: `etcd-client` needs `protoc` and brings gRPC in.

mod batch;
mod errors;
mod options;
mod progress;
mod revisions;
mod watch;

pub use self::options::{EtcdOptions, EtcdTls};
pub use self::revisions::SLOT_BITS;

/// The etcd client this backend uses, for tools that talk to the same cluster directly
/// (`cargo xtask bench` compares the server with raw etcd transactions).
pub use etcd_client;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use etcd_client::{
    Client, CompactionOptions, Compare, CompareOp, ConnectOptions, DeleteOptions, GetOptions,
    GetResponse, KvClient, PutOptions, Txn, TxnOp, TxnOpResponse, TxnResponse, WatchClient,
};

use self::errors::{Context, map_error};
use self::options::tls_options;
use self::progress::Progress;
use self::revisions::{LAST, end_of, etcd_of, ours, read_at};
use crate::coalesce::{Batcher, Shared};
use crate::{
    Deleted, Error, Guard, KeyValue, ListRequest, ListResponse, Result, Revision, Storage,
    WatchStream, deadline,
};

/// etcd's default `--max-request-bytes` (1.5 MiB): what a write may weigh.
const MAX_REQUEST_BYTES: usize = 1536 * 1024;

/// How long a request refused for want of a leader is retried: long enough for an
/// election after a member's failure (etcd's default election timeout is 1 s), short
/// enough that a cluster without quorum fails requests fast (503).
const ELECTION_GRACE: Duration = Duration::from_secs(3);

/// The key the health check reads, as etcd's own `/health` endpoint does.
const HEALTH_KEY: &str = "health";

/// The largest message the client takes from etcd: Go's clientv3 default (`math.MaxInt32`),
/// which kube-apiserver keeps. gRPC's own default, 4 MiB, refused the list that fills a
/// watch cache once a kind held more than 4 MiB of objects.
const MAX_RECEIVED_MESSAGE: usize = i32::MAX as usize;

/// A [`Storage`] on an etcd cluster. Cheap to clone: clones share the connections.
#[derive(Clone)]
pub struct EtcdStorage {
    client: Client,
    /// The key-value and watch clients of `client`, taking messages of any size.
    kv: KvClient,
    watch: WatchClient,
    options: EtcdOptions,
    /// Latest-state reads shared by concurrent callers, and creates committed together;
    /// `None` in the copies that make them.
    shared: Option<Arc<Coalesced>>,
    /// Progress requests to the watches, once the cluster answers them in order.
    progress: Arc<Progress>,
}

/// The most keys one shared read asks for: etcd refuses a transaction of more than
/// `--max-txn-ops` operations (128 by default); half leaves room for a lower setting, and
/// a batch refused all the same is read key by key.
const MOST_KEYS_READ_TOGETHER: usize = 64;

/// The requests concurrent callers share: many at once (consistent GETs of any objects,
/// consistent reads asking for the current revision, creates) cost etcd one request each
/// time, not one each.
struct Coalesced {
    /// `get(key, 0)`: the keys asked for meanwhile, read in one transaction of ranges.
    latest: Batcher<String, Result<Option<KeyValue>>>,
    /// `current_revision()`.
    revision: Shared<Result<Revision>>,
    /// `create` and `create_guarded`: committed together (`batch`).
    creates: Arc<batch::Creates>,
}

impl EtcdStorage {
    /// Sets up the connections to the cluster. Members are dialed lazily: this fails only
    /// on bad options (no endpoint, an unreadable TLS file); an unreachable cluster shows
    /// in the first request (see [`health`](Storage::health)).
    pub async fn connect(options: EtcdOptions) -> Result<EtcdStorage> {
        if options.endpoints.is_empty() {
            return Err(Error::InvalidArgument("no etcd endpoint given".into()));
        }
        let mut connect = ConnectOptions::new()
            .with_connect_timeout(options.dial_timeout)
            .with_timeout(options.request_timeout)
            // Notice a member that stopped answering without closing its connections.
            .with_keep_alive(Duration::from_secs(10), Duration::from_secs(5))
            // A member cut off from the leader refuses requests at once instead of
            // serving stale reads or holding writes until etcd's own timeout.
            .with_require_leader(true);
        if let Some(tls) = &options.tls {
            connect = connect.with_tls(tls_options(tls)?);
        }
        let client = Client::connect(&options.endpoints, Some(connect.clone()))
            .await
            .map_err(|e| map_error(e, Context::Connect))?;
        let progress = Arc::new(Progress::new(options.progress_requests));
        if options.progress_requests.is_none() {
            let endpoints = options.endpoints.clone();
            tokio::spawn(progress::check(
                Arc::downgrade(&progress),
                endpoints,
                connect,
            ));
        }
        let raw = EtcdStorage {
            progress,
            kv: (client.kv_client()).max_decoding_message_size(MAX_RECEIVED_MESSAGE),
            watch: (client.watch_client()).max_decoding_message_size(MAX_RECEIVED_MESSAGE),
            client,
            options,
            shared: None,
        };
        // Shared by reference: a copy of the storage per read (its clients, its options)
        // cost a fifth of a read's instructions.
        let (latest, revision) = (Arc::new(raw.clone()), Arc::new(raw.clone()));
        let shared = Coalesced {
            creates: batch::Creates::new(raw.clone()),
            latest: Batcher::new(MOST_KEYS_READ_TOGETHER, move |keys: Vec<String>| {
                let etcd = Arc::clone(&latest);
                async move { etcd.get_many_now(keys).await }
            }),
            revision: Shared::new(move || {
                let etcd = Arc::clone(&revision);
                async move { etcd.revision_now().await }
            }),
        };
        Ok(EtcdStorage {
            shared: Some(Arc::new(shared)),
            ..raw
        })
    }

    /// The value of `key` at `at`, read now by this caller alone.
    async fn get_now(&self, key: &str, at: Revision) -> Result<Option<KeyValue>> {
        check_key(key)?;
        let (etcd, within) = read_at(at);
        let options = GetOptions::new().with_revision(etcd);
        let response = self.range("a get", key.into(), options, at).await?;
        let found = response.kvs().first().map(key_value).transpose()?;
        if within.is_none() {
            return Ok(found);
        }
        // Within an etcd revision: its write to the key counts up to the slot; otherwise
        // the key is as it was at the etcd revision before.
        match found {
            Some(kv) if kv.mod_revision <= at => Ok(Some(kv)),
            _ if etcd <= 1 => Ok(None),
            _ => {
                let options = GetOptions::new().with_revision(etcd - 1);
                let response = self.range("a get", key.into(), options, at).await?;
                response.kvs().first().map(key_value).transpose()
            }
        }
    }

    /// The latest state of each of `keys` (at most [`MOST_KEYS_READ_TOGETHER`]), read now
    /// in one read-only transaction of ranges: etcd serves it as one linearizable read,
    /// every range at the same revision. The keys were checked (`check_key`) by `get`.
    async fn get_many_now(&self, keys: Vec<String>) -> Vec<Result<Option<KeyValue>>> {
        if let [key] = &keys[..] {
            return vec![self.get_now(key, 0).await];
        }
        let ops: Vec<TxnOp> = (keys.iter())
            .map(|key| TxnOp::get(key.as_str(), None))
            .collect();
        let read = self.call("a get", true, Context::Read { revision: 0 }, |etcd| {
            let (mut kv, txn) = (etcd.kv.clone(), Txn::new().and_then(ops.clone()));
            async move { kv.txn(txn).await }
        });
        let answers = match read.await {
            Ok(response) => response.op_responses(),
            // A cluster whose `--max-txn-ops` is below the batch: each key alone.
            Err(Error::InvalidArgument(_)) => {
                let gets = keys.iter().map(|key| self.get_now(key, 0));
                return futures_util::future::join_all(gets).await;
            }
            Err(e) => return keys.iter().map(|_| Err(e.clone())).collect(),
        };
        if answers.len() != keys.len() {
            let e = Error::Internal(format!(
                "etcd answered {} of {} reads of one transaction",
                answers.len(),
                keys.len()
            ));
            return keys.iter().map(|_| Err(e.clone())).collect();
        }
        (answers.into_iter())
            .map(|answer| match answer {
                TxnOpResponse::Get(got) => got.kvs().first().map(key_value).transpose(),
                _ => Err(Error::Internal(
                    "etcd answered a range of a transaction with another operation".into(),
                )),
            })
            .collect()
    }

    /// The current revision, read now by this caller alone.
    async fn revision_now(&self) -> Result<Revision> {
        let options = GetOptions::new().with_limit(1).with_count_only();
        let response = (self.range("a revision read", HEALTH_KEY.into(), options, 0)).await?;
        header_revision(response.header())
    }

    /// Runs `call` (one etcd request) under the request deadline, retrying it on another
    /// member while it fails with an error that is safe to retry (`errors::retryable`;
    /// `retry_reads`: the request is a read).
    async fn call<T, F, Fut>(
        &self,
        what: &str,
        retry_reads: bool,
        context: Context,
        call: F,
    ) -> Result<T>
    where
        F: Fn(&EtcdStorage) -> Fut,
        Fut: std::future::Future<Output = Result<T, etcd_client::Error>>,
    {
        let timeout = self.options.request_timeout;
        let started = tokio::time::Instant::now();
        // Its own deadline, or the earlier one of the operation it is part of.
        let deadline = match retry_reads {
            true => deadline::of_request(timeout),
            false => deadline::of_write(timeout),
        };
        // The error of the last attempt, when the deadline cuts the retries short.
        let mut last_error = None;
        let mut pause = Duration::from_millis(10);
        loop {
            let electing = started.elapsed() < ELECTION_GRACE;
            match tokio::time::timeout_at(deadline, call(self)).await {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(error)) if errors::retryable(&error, retry_reads, electing) => {
                    tracing::debug!(%error, what, "etcd request failed; retrying");
                    last_error = Some(map_error(error, context));
                    if tokio::time::Instant::now() + pause >= deadline {
                        break;
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
                Ok(Err(error)) => return Err(map_error(error, context)),
                Err(_) => {
                    // Cut in flight: a write may still be applied (etcd keeps a proposal
                    // a member accepted), so only a timeout (504) says what is known.
                    if !retry_reads {
                        last_error = None;
                    }
                    break;
                }
            }
        }
        Err(match last_error {
            // Every attempt was refused, or found no leader: unavailable (503), not slow.
            Some(Error::Unavailable(last)) => Error::Unavailable(format!(
                "etcd could not serve {what} within {timeout:?}: {last}"
            )),
            _ => Error::Timeout(format!("etcd did not answer {what} within {timeout:?}")),
        })
    }

    /// Waits for `answer`, a request another task makes for this caller (a read shared
    /// with others, a create batched with others), until the caller's deadline: that
    /// task's own deadline does not know the caller's (`deadline::shared`).
    async fn awaited<T>(
        &self,
        what: &str,
        write: bool,
        answer: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        let timeout = self.options.request_timeout;
        let deadline = match write {
            true => deadline::of_write(timeout),
            false => deadline::of_request(timeout),
        };
        match tokio::time::timeout_at(deadline, answer).await {
            Ok(answer) => answer,
            // Still on its way: a write may yet be applied.
            Err(_) => Err(Error::Timeout(format!(
                "etcd did not answer {what} within {timeout:?}"
            ))),
        }
    }

    /// A linearizable range read.
    async fn range(
        &self,
        what: &str,
        key: Vec<u8>,
        options: GetOptions,
        revision: Revision,
    ) -> Result<GetResponse> {
        self.call(what, true, Context::Read { revision }, |etcd| {
            let (mut kv, key, options) = (etcd.kv.clone(), key.clone(), options.clone());
            async move { kv.get(key, Some(options)).await }
        })
        .await
    }

    /// A transaction: a write, so retried only when it cannot have reached a member.
    async fn txn(&self, what: &str, txn: Txn, context: Context) -> Result<TxnResponse> {
        self.call(what, false, context, |etcd| {
            let (mut kv, txn) = (etcd.kv.clone(), txn.clone());
            async move { kv.txn(txn).await }
        })
        .await
    }
}

/// One range of a list, as ours.
#[derive(Default)]
struct Listed {
    items: Vec<KeyValue>,
    /// How many keys the range holds, limit aside.
    count: u64,
    more: bool,
    /// The response header's revision.
    revision: Revision,
}

impl EtcdStorage {
    /// A list's range from `start` with `options`; `at` (ours) for errors.
    async fn list_at(&self, start: Vec<u8>, options: GetOptions, at: Revision) -> Result<Listed> {
        let response = self.range("a list", start, options, at).await?;
        Ok(Listed {
            items: (response.kvs().iter())
                .map(key_value)
                .collect::<Result<Vec<_>>>()?,
            count: count(response.count()),
            more: response.more(),
            revision: header_revision(response.header())?,
        })
    }
}

/// The first key after every key starting with `prefix` (etcd's `GetPrefixRangeEnd`).
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    // Only 0xff bytes, or empty: every key.
    vec![0]
}

/// A count etcd answered (`i64`), as ours.
fn count(value: i64) -> u64 {
    value.max(0) as u64
}

/// Our revision of a response's header: the end of etcd's revision there.
fn header_revision(header: Option<&etcd_client::ResponseHeader>) -> Result<Revision> {
    (header.map(|h| end_of(h.revision())))
        .ok_or_else(|| Error::Internal("etcd answered without a response header".into()))
}

/// A key as etcd stored it, as ours: the value without its slot, the revisions with it.
fn key_value(kv: &etcd_client::KeyValue) -> Result<KeyValue> {
    let key = (kv.key_str())
        .map_err(|e| Error::Internal(format!("etcd returned a key that is not UTF-8: {e}")))?;
    let (slot, value) = revisions::decode_owned(kv.value());
    Ok(KeyValue {
        key: key.to_owned(),
        value,
        // The slot of the key's creation is known while the value is the created one;
        // afterwards its etcd revision's end stands for it (creations are compared only
        // with reads' revisions, which are ends of etcd revisions).
        create_revision: match kv.create_revision() == kv.mod_revision() {
            true => ours(kv.create_revision(), slot),
            false => end_of(kv.create_revision()),
        },
        mod_revision: ours(kv.mod_revision(), slot),
    })
}

/// etcd's revision of one of ours that a caller read: a key's mod revision, for compares.
fn etcd_revision(revision: Revision) -> i64 {
    etcd_of(revision).0
}

fn check_key(key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(Error::InvalidArgument("empty key".into()));
    }
    Ok(())
}

fn check_size(key: &str, value: &Bytes) -> Result<()> {
    let size = key.len() + value.len();
    if size > MAX_REQUEST_BYTES {
        return Err(Error::TooLarge {
            size,
            limit: MAX_REQUEST_BYTES,
        });
    }
    Ok(())
}

impl EtcdStorage {
    /// A create, under `guard` if given, alone in its transaction (one more compare for
    /// the guard; the failure branch reads the guard's key to tell which compare failed).
    async fn create_alone(
        &self,
        key: &str,
        value: &Bytes,
        guard: Option<&Guard>,
    ) -> Result<KeyValue> {
        let mut compares = vec![Compare::create_revision(key, CompareOp::Equal, 0)];
        let mut failure = Vec::new();
        if let Some(guard) = guard {
            compares.push(Compare::mod_revision(
                guard.key.as_str(),
                CompareOp::Equal,
                etcd_revision(guard.mod_revision),
            ));
            failure.push(TxnOp::get(guard.key.as_str(), None));
        }
        let txn = Txn::new()
            .when(compares)
            .and_then([TxnOp::put(key, revisions::encode(value, LAST), None)])
            .or_else(failure);
        let context = Context::Write {
            size: key.len() + value.len(),
        };
        let response = self.txn("a create", txn, context).await?;
        if !response.succeeded() {
            if let Some(guard) = guard {
                let current = match current_of(&response, &guard.key, guard.mod_revision) {
                    Error::Conflict { current, .. } => current,
                    _ => 0,
                };
                if current != guard.mod_revision {
                    return Err(Error::Conflict {
                        key: guard.key.clone(),
                        expected: guard.mod_revision,
                        current,
                    });
                }
            }
            return Err(Error::AlreadyExists { key: key.into() });
        }
        let at = header_revision(response.header())?;
        Ok(KeyValue {
            key: key.into(),
            value: value.clone(),
            create_revision: at,
            mod_revision: at,
        })
    }

    /// A create: with the others under way when the storage shares requests (`batch`).
    async fn create_with(
        &self,
        key: &str,
        value: Bytes,
        guard: Option<&Guard>,
    ) -> Result<KeyValue> {
        check_key(key)?;
        check_size(key, &value)?;
        match &self.shared {
            Some(shared) if self.options.batch_creates => {
                let creates = &shared.creates;
                creates.create(key.to_owned(), value, guard.cloned()).await
            }
            _ => self.create_alone(key, &value, guard).await,
        }
    }
}

/// What the `failure` branch of a compare-and-swap read: the key's current state.
fn current_of(response: &TxnResponse, key: &str, expected: Revision) -> Error {
    let current = (response.op_responses().into_iter())
        .find_map(|op| match op {
            TxnOpResponse::Get(get) => Some(get.kvs().first().map(key_value)),
            _ => None,
        })
        .flatten();
    match current {
        None => Error::NotFound { key: key.into() },
        Some(Err(e)) => e,
        Some(Ok(current)) => Error::Conflict {
            key: key.into(),
            expected,
            current: current.mod_revision,
        },
    }
}

#[async_trait::async_trait]
impl Storage for EtcdStorage {
    async fn get(&self, key: &str, at: Revision) -> Result<Option<KeyValue>> {
        match &self.shared {
            Some(shared) if at == 0 => {
                check_key(key)?;
                self.awaited("a get", false, shared.latest.read(key.to_owned()))
                    .await
            }
            _ => self.get_now(key, at).await,
        }
    }

    async fn list(&self, request: ListRequest) -> Result<ListResponse> {
        let end = prefix_end(request.prefix.as_bytes());
        let mut start = request.prefix.as_bytes().to_vec();
        if let Some(after) = &request.start_after {
            let mut next = after.as_bytes().to_vec();
            next.push(0);
            start = start.max(next);
        }
        let (etcd, within) = read_at(request.revision);
        // A keys-only range sends no values, so no slots either (`revisions`): each key's
        // revisions are the end of its etcd revision, its transaction (`same_write`).
        let options = |at: i64| {
            let options = (GetOptions::new().with_range(end.clone()))
                .with_limit(request.limit as i64)
                .with_revision(at);
            match request.keys_only {
                true => options.with_keys_only(),
                false => options,
            }
        };
        let mut listed = match within {
            None => {
                self.list_at(start.clone(), options(etcd), request.revision)
                    .await?
            }
            Some(_) if etcd <= 1 => Listed::default(),
            Some(_) => (self.list_at(start.clone(), options(etcd - 1), request.revision)).await?,
        };
        if within.is_some() {
            // The creates of the etcd revision up to the slot, on top of the one before:
            // read with their values, which tell their slots, even for a keys-only list.
            let written = GetOptions::new()
                .with_range(end.clone())
                .with_revision(etcd)
                .with_min_mod_revision(etcd)
                .with_max_mod_revision(etcd);
            let created = self.list_at(start, written, request.revision).await?;
            let created = (created.items.into_iter()).filter(|kv| {
                kv.mod_revision <= request.revision && kv.create_revision == kv.mod_revision
            });
            listed.count += created.clone().count() as u64;
            listed.items.extend(created);
            listed.items.sort_by(|a, b| a.key.cmp(&b.key));
            if request.limit > 0 && listed.items.len() > request.limit {
                listed.items.truncate(request.limit);
                listed.more = true;
            }
        }
        if request.keys_only {
            for kv in &mut listed.items {
                kv.value = Bytes::new();
            }
        }
        Ok(ListResponse {
            remaining: listed.count.saturating_sub(listed.items.len() as u64),
            more: listed.more,
            items: listed.items,
            // The header carries the current revision; a read at a past one was read there.
            revision: match request.revision {
                0 => listed.revision,
                at => at,
            },
        })
    }

    async fn count(&self, prefix: &str) -> Result<u64> {
        let options = GetOptions::new()
            .with_range(prefix_end(prefix.as_bytes()))
            .with_count_only();
        let response = self.range("a count", prefix.into(), options, 0).await?;
        Ok(count(response.count()))
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.create_with(key, value, None).await
    }

    async fn create_guarded(&self, key: &str, value: Bytes, guard: &Guard) -> Result<KeyValue> {
        check_key(&guard.key)?;
        self.create_with(key, value, Some(guard)).await
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> Result<KeyValue> {
        check_key(key)?;
        check_size(key, &value)?;
        let txn = Txn::new()
            .when([
                Compare::mod_revision(key, CompareOp::Equal, etcd_revision(expected_mod_revision)),
                // A missing key's mod revision is 0: never create here.
                Compare::create_revision(key, CompareOp::NotEqual, 0),
            ])
            .and_then([TxnOp::put(
                key,
                revisions::encode(&value, LAST),
                Some(PutOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(key, None)]);
        let context = Context::Write {
            size: key.len() + value.len(),
        };
        let response = self.txn("an update", txn, context).await?;
        if !response.succeeded() {
            return Err(current_of(&response, key, expected_mod_revision));
        }
        let at = header_revision(response.header())?;
        let create_revision = (response.op_responses().into_iter())
            .find_map(|op| match op {
                // As a read of the key will tell it (`key_value`): the value is no longer
                // the created one.
                TxnOpResponse::Put(put) => put.prev_key().map(|kv| end_of(kv.create_revision())),
                _ => None,
            })
            .ok_or_else(|| Error::Internal("etcd's update returned no previous value".into()))?;
        Ok(KeyValue {
            key: key.into(),
            value,
            create_revision,
            mod_revision: at,
        })
    }

    async fn delete(&self, key: &str, expected_mod_revision: Option<Revision>) -> Result<Deleted> {
        check_key(key)?;
        let compare = match expected_mod_revision {
            Some(expected) => Compare::mod_revision(key, CompareOp::Equal, etcd_revision(expected)),
            None => Compare::mod_revision(key, CompareOp::Greater, 0),
        };
        let txn = Txn::new()
            .when([compare])
            .and_then([TxnOp::delete(
                key,
                Some(DeleteOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(key, None)]);
        let response = self
            .txn("a delete", txn, Context::Write { size: 0 })
            .await?;
        if !response.succeeded() {
            return Err(current_of(
                &response,
                key,
                expected_mod_revision.unwrap_or(0),
            ));
        }
        let at = header_revision(response.header())?;
        let prev = (response.op_responses().into_iter())
            .find_map(|op| match op {
                TxnOpResponse::Delete(delete) => delete.prev_kvs().first().map(key_value),
                _ => None,
            })
            .ok_or_else(|| Error::Internal("etcd's delete returned no previous value".into()))??;
        Ok(Deleted { prev, revision: at })
    }

    async fn watch(&self, prefix: &str, from_revision: Revision) -> Result<WatchStream> {
        let requests = self.progress.subscribe();
        let client = self.watch.clone();
        watch::start(
            client,
            self.options.clone(),
            requests,
            prefix,
            from_revision,
        )
        .await
    }

    /// A key is written at most once per etcd transaction, so its etcd revision names
    /// the write (a keys-only list tells no slots).
    fn same_write(&self, a: Revision, b: Revision) -> bool {
        etcd_of(a).0 == etcd_of(b).0
    }

    fn reports_progress(&self) -> bool {
        self.progress.supported()
    }

    async fn request_progress(&self) {
        self.progress.request();
    }

    async fn compact(&self, at: Revision) -> Result<()> {
        // A revision within an etcd revision is read from the one before: keep that.
        let target = match read_at(at) {
            (etcd, None) => etcd,
            (etcd, Some(_)) => etcd - 1,
        };
        if target <= 0 {
            return Err(Error::InvalidArgument(format!(
                "compaction at revision {at}, before etcd's first"
            )));
        }
        let context = Context::Read { revision: at };
        self.call("a compaction", false, context, |etcd| {
            let mut kv = etcd.kv.clone();
            async move {
                let options = CompactionOptions::new().with_physical();
                kv.compact(target, Some(options)).await
            }
        })
        .await?;
        Ok(())
    }

    async fn current_revision(&self) -> Result<Revision> {
        match &self.shared {
            Some(shared) => {
                self.awaited("a read of the revision", false, shared.revision.read())
                    .await
            }
            None => self.revision_now().await,
        }
    }

    async fn health(&self) -> Result<()> {
        let timeout = self.options.health_timeout;
        let options = GetOptions::new().with_limit(1).with_count_only();
        let read = self.range("the health check", HEALTH_KEY.into(), options, 0);
        match tokio::time::timeout(timeout, read).await {
            Ok(result) => result.map(drop),
            Err(_) => Err(Error::Timeout(format!(
                "etcd did not answer the health check within {timeout:?}"
            ))),
        }
    }

    async fn size(&self) -> Result<u64> {
        let status = self
            .call(
                "a status request",
                true,
                Context::Read { revision: 0 },
                |etcd| {
                    let mut maintenance = etcd.client.maintenance_client();
                    async move { maintenance.status().await }
                },
            )
            .await?;
        Ok(u64::try_from(status.db_size()).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(b"/a/b/"), b"/a/b0");
        assert_eq!(prefix_end(b"a\xff"), b"b");
        assert_eq!(prefix_end(b"\xff\xff"), b"\0");
        assert_eq!(prefix_end(b""), b"\0");
    }
}
