//! The machine's own limits, measured in the same run: what the stores do without the
//! server, and what moving a large list's bytes costs (memory, loopback TCP, TLS).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kapi::storage::Storage;
use kapi::storage::embedded::EmbeddedStorage;
use kapi::storage::etcd::etcd_client::{
    Client, Compare, CompareOp, GetOptions, Txn, TxnOp, WatchOptions,
};
use tokio::runtime::Runtime;

use super::common::{CLIENTS, CpuMeter, Options, rate, run_async};
use super::etcd::Etcd;
use super::report::Report;

/// The limits the server's figures are compared with.
pub(crate) struct Limits {
    /// The embedded store's creates per second, [`CLIENTS`] writers.
    pub embedded_creates: f64,
    /// Raw create-if-absent `Txn`s per second on one etcd member, [`CLIENTS`] clients.
    pub etcd_txns: f64,
    /// etcd's CPU per raw `Txn`, in microseconds.
    pub etcd_txn_cpu: f64,
    /// The same `Txn`s while a watch of their prefix is open and read, as the server keeps
    /// one on its keys (etcd sends every write to it).
    pub etcd_watched_txns: f64,
    /// The same again, each `Txn` also comparing a second key's revision, as the server's
    /// creates in a namespace compare the namespace's (so that none lands in a namespace
    /// being deleted): etcd's whole part of such a create.
    pub etcd_guarded_txns: f64,
    /// Raw linearizable single-key ranges per second.
    pub etcd_gets: f64,
    /// Bytes per second one core copies in memory.
    pub memcpy: f64,
    /// Bytes per second through a loopback TCP connection.
    pub loopback: f64,
    /// Bytes per second through a TLS connection on loopback (rustls, as the server's).
    pub tls: f64,
    /// The etcd member the raw figures were measured on, kept for the server on etcd.
    pub etcd: Etcd,
}

/// Measures every limit.
pub(crate) fn measure(runtime: &Runtime, options: &Options, report: &mut Report) -> Limits {
    let embedded_creates = runtime.block_on(embedded_storage(options, report));
    let etcd = Etcd::start();
    let (etcd_txns, etcd_txn_cpu, etcd_gets) = runtime.block_on(raw_etcd(&etcd, options, report));
    let etcd_watched_txns = runtime.block_on(raw_etcd_watched(&etcd, options, report, false));
    let etcd_guarded_txns = runtime.block_on(raw_etcd_watched(&etcd, options, report, true));
    let size = if options.quick { 1 << 20 } else { 64 << 20 };
    let memcpy = memcpy(size);
    report.add(
        "limit: memcpy (one core)",
        memcpy / f64::from(1 << 20),
        "MiB/s",
    );
    // Best of three: a transfer of one connection is at the mercy of the scheduler.
    let loopback = (0..3).map(|_| loopback(size)).fold(0.0, f64::max);
    report.add(
        "limit: loopback TCP transfer",
        loopback / f64::from(1 << 20),
        "MiB/s",
    );
    let tls = (0..3).map(|_| tls(size)).fold(0.0, f64::max);
    report.add(
        "limit: TLS transfer on loopback (rustls)",
        tls / f64::from(1 << 20),
        "MiB/s",
    );
    Limits {
        embedded_creates,
        etcd_txns,
        etcd_txn_cpu,
        etcd_watched_txns,
        etcd_guarded_txns,
        etcd_gets,
        memcpy,
        loopback,
        tls,
        etcd,
    }
}

/// Creates of 1 KiB values by 1 and [`CLIENTS`] writers; returns the latter's rate.
async fn embedded_storage(options: &Options, report: &mut Report) -> f64 {
    let mut last = 0.0;
    for writers in [1, CLIENTS] {
        last = report.add(
            format!("limit: embedded store, {writers} writers: creates (1 KiB)"),
            embedded_creates(writers, options.window()).await,
            "ops/s",
        );
    }
    last
}

/// The embedded store's creates of 1 KiB values per second by `writers` writers, into a
/// fresh store for `window`: the machine's pace for durable writes, as it is now.
pub(crate) async fn embedded_creates(writers: usize, window: Duration) -> f64 {
    let dir = tempfile::tempdir().expect("a data directory");
    let storage = Arc::new(EmbeddedStorage::open(dir.path()).expect("opening the store"));
    let (ops, elapsed) = run_async(writers, window, move |client, i| {
        let storage = storage.clone();
        async move {
            let key = format!("/bench/{client}/{i}");
            storage
                .create(&key, Bytes::from(vec![1; 1024]))
                .await
                .unwrap();
        }
    })
    .await;
    rate(ops, elapsed)
}

/// Create-if-absent `Txn`s and linearizable gets by [`CLIENTS`] clients: their rates, and
/// etcd's CPU per `Txn` (microseconds).
async fn raw_etcd(etcd: &Etcd, options: &Options, report: &mut Report) -> (f64, f64, f64) {
    let client = Client::connect(etcd.endpoints(), None)
        .await
        .expect("connecting to etcd");
    let meter = CpuMeter::start(&[etcd.pid(0).expect("etcd runs").to_string()]);
    let (ops, elapsed) = create_txns(&client, "/raw", None, options).await;
    let txn_cpu = meter.per_op(ops)[0];
    let txns = report.add(
        "limit: raw etcd-client: create-if-absent Txn (1 KiB)",
        rate(ops, elapsed),
        "ops/s",
    );
    report.add("limit: raw etcd-client: etcd CPU per Txn", txn_cpu, "µs");
    let c = client.clone();
    // Each client reads the first key it created (a short window may create few).
    let (ops, elapsed) = run_async(CLIENTS, options.window(), move |client, _| {
        let mut etcd = c.clone();
        async move {
            let key = format!("/raw/{client}/0");
            let got = etcd.get(key, Some(GetOptions::new())).await.unwrap();
            assert_eq!(got.kvs().len(), 1);
        }
    })
    .await;
    let gets = report.add(
        "limit: raw etcd-client: linearizable get",
        rate(ops, elapsed),
        "ops/s",
    );
    (txns, txn_cpu, gets)
}

/// Raw create-if-absent `Txn`s per second by [`CLIENTS`] clients under `prefix` (a fresh
/// one each call: the keys must be absent), as the limits' first figure measures them:
/// taken again beside a measurement of the server on the same etcd, so that a ratio to
/// them is of the same minute, whatever pace the machine keeps then.
pub(crate) async fn raw_txns(etcd: &Etcd, options: &Options, prefix: &str) -> f64 {
    let client = Client::connect(etcd.endpoints(), None)
        .await
        .expect("connecting to etcd");
    let (ops, elapsed) = create_txns(&client, prefix, None, options).await;
    rate(ops, elapsed)
}

/// Create-if-absent `Txn`s by [`CLIENTS`] clients while one watch of their prefix is open
/// and drained, as the server keeps a watch on its keys: etcd's part of each of the
/// server's creates, without the server; `guarded`: each also compares the revision of a
/// second key, as the server's creates in a namespace do. Returns their rate.
async fn raw_etcd_watched(
    etcd: &Etcd,
    options: &Options,
    report: &mut Report,
    guarded: bool,
) -> f64 {
    let client = Client::connect(etcd.endpoints(), None)
        .await
        .expect("connecting to etcd");
    let prefix = if guarded { "/guarded" } else { "/watched" };
    let mut watching = client.clone();
    let mut stream = (watching.watch(
        format!("{prefix}/"),
        Some(WatchOptions::new().with_prefix()),
    ))
    .await
    .expect("opening a watch");
    // Read as the server reads its watch: every event, at once.
    let drain = tokio::spawn(async move { while let Ok(Some(_)) = stream.message().await {} });
    let guard = match guarded {
        true => {
            // A namespace-sized value outside the watched prefix, as a namespace's key is.
            let key = "/namespaces/default".to_owned();
            let put = (client.clone().put(key.clone(), vec![1u8; 300], None)).await;
            let revision = put
                .expect("writing the guard")
                .header()
                .map_or(0, |h| h.revision());
            Some((key, revision))
        }
        false => None,
    };
    let meter = CpuMeter::start(&[etcd.pid(0).expect("etcd runs").to_string()]);
    let (ops, elapsed) = create_txns(&client, prefix, guard, options).await;
    let cpu = meter.per_op(ops)[0];
    drain.abort();
    let what = match guarded {
        true => "limit: raw etcd-client, a watch open, guarded as the server's",
        false => "limit: raw etcd-client, a watch open",
    };
    report.add(format!("{what}: etcd CPU per Txn"), cpu, "µs");
    report.add(
        format!("{what}: create-if-absent Txn (1 KiB)"),
        rate(ops, elapsed),
        "ops/s",
    )
}

/// Create-if-absent `Txn`s of 1 KiB values under `prefix` by [`CLIENTS`] clients for the
/// window (each also comparing `guard`'s key with its revision, when given): how many,
/// and how long they took.
async fn create_txns(
    client: &Client,
    prefix: &str,
    guard: Option<(String, i64)>,
    options: &Options,
) -> (u64, Duration) {
    let value = Arc::new(vec![1u8; 1024]);
    let (client, prefix) = (client.clone(), prefix.to_owned());
    run_async(CLIENTS, options.window(), move |client_id, i| {
        let (mut etcd, value) = (client.clone(), value.clone());
        let key = format!("{prefix}/{client_id}/{i}");
        let mut compares = vec![Compare::create_revision(key.clone(), CompareOp::Equal, 0)];
        if let Some((guard, revision)) = &guard {
            compares.push(Compare::mod_revision(
                guard.clone(),
                CompareOp::Equal,
                *revision,
            ));
        }
        async move {
            let txn = Txn::new()
                .when(compares)
                .and_then([TxnOp::put(key, value.to_vec(), None)]);
            assert!(etcd.txn(txn).await.unwrap().succeeded());
        }
    })
    .await
}

/// Bytes per second of copying a `size`-byte buffer (best of a few).
fn memcpy(size: usize) -> f64 {
    let source = vec![7u8; size];
    let mut target = vec![0u8; size];
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        target.copy_from_slice(std::hint::black_box(&source));
        best = best.min(started.elapsed());
        std::hint::black_box(&target);
    }
    size as f64 / best.as_secs_f64()
}

/// Bytes per second of sending `size` bytes through a loopback TCP connection, in 64 KiB
/// writes, read on another thread.
fn loopback(size: usize) -> f64 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding loopback");
    let addr = listener.local_addr().expect("a local address");
    let reader = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accepting");
        read_to(&mut stream, size);
    });
    let mut stream = TcpStream::connect(addr).expect("connecting");
    write_timed(&mut stream, size, reader)
}

/// Bytes per second of sending `size` bytes through a TLS connection on loopback (rustls
/// with ring, the server's TLS stack, and the cipher it negotiates with itself), in 64 KiB
/// writes, decrypted on another thread; the handshake is left out.
fn tls(size: usize) -> f64 {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
    use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};

    let pki = super::pki::Pki::new();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain: Vec<_> = (CertificateDer::pem_file_iter(&pki.serving.0))
        .and_then(Iterator::collect)
        .expect("the serving certificate");
    let key = PrivateKeyDer::from_pem_file(&pki.serving.1).expect("the serving key");
    let server = (ServerConfig::builder_with_provider(provider.clone()))
        .with_safe_default_protocol_versions()
        .and_then(|c| c.with_no_client_auth().with_single_cert(chain, key))
        .expect("a TLS server configuration");
    let mut roots = RootCertStore::empty();
    (roots.add(CertificateDer::from_pem_file(&pki.ca).expect("the CA certificate")))
        .expect("a trusted CA");
    let client = (ClientConfig::builder_with_provider(provider))
        .with_safe_default_protocol_versions()
        .expect("a TLS client configuration")
        .with_root_certificates(roots)
        .with_no_client_auth();

    let listener = TcpListener::bind("127.0.0.1:0").expect("binding loopback");
    let addr = listener.local_addr().expect("a local address");
    let reader = std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accepting");
        let connection = ServerConnection::new(Arc::new(server)).expect("a TLS connection");
        let mut stream = rustls::StreamOwned::new(connection, stream);
        read_to(&mut stream, size);
    });
    let name = ServerName::try_from("127.0.0.1").expect("a server name");
    let connection = ClientConnection::new(Arc::new(client), name).expect("a TLS connection");
    let mut stream =
        rustls::StreamOwned::new(connection, TcpStream::connect(addr).expect("connecting"));
    // The handshake, before the clock starts.
    stream.write_all(b"").expect("a handshake");
    while stream.conn.is_handshaking() {
        stream
            .conn
            .complete_io(&mut stream.sock)
            .expect("a handshake");
    }
    write_timed(&mut stream, size, reader)
}

/// Reads `size` bytes (or until the end) from `stream`.
fn read_to(stream: &mut impl Read, size: usize) {
    let mut buffer = vec![0; 256 * 1024];
    let mut total = 0;
    while total < size {
        match stream.read(&mut buffer).expect("reading") {
            0 => break,
            n => total += n,
        }
    }
}

/// Bytes per second of writing `size` bytes to `stream` in 64 KiB writes, until `reader`
/// (on the other end) has read them.
fn write_timed(stream: &mut impl Write, size: usize, reader: std::thread::JoinHandle<()>) -> f64 {
    let chunk = vec![7u8; 64 * 1024];
    let started = Instant::now();
    let mut sent = 0;
    while sent < size {
        let n = chunk.len().min(size - sent);
        stream.write_all(&chunk[..n]).expect("writing");
        sent += n;
    }
    stream.flush().expect("writing");
    reader.join().expect("the reader");
    size as f64 / started.elapsed().as_secs_f64()
}
