//! `cargo xtask bench`: throughput numbers, printed, never asserted.
//!
//! At the same concurrency ([`CLIENTS`]), for a few seconds each ([`WINDOW`]):
//!
//! - the embedded store directly (1 and `CLIENTS` writers), 1 KiB creates;
//! - raw etcd-client transactions on one etcd member (the create-if-absent `Txn` the etcd
//!   backend sends, and linearizable single-key ranges);
//! - the release `kapi-server` over HTTP/1.1 (keep-alive), ConfigMap creates and GETs, on
//!   that etcd and on the embedded store.
//!
//! Needs the `etcd` feature and an etcd binary (`$KAPI_ETCD`, else `etcd` on the `PATH`).

#[path = "../tests/support/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use etcd::Etcd;
use kapi_runtime::storage::Storage;
use kapi_runtime::storage::embedded::EmbeddedStorage;
use kapi_runtime::storage::etcd::etcd_client::{
    Client, Compare, CompareOp, GetOptions, Txn, TxnOp,
};

/// Concurrent clients of every measurement (but the single-writer one).
const CLIENTS: usize = 16;
/// How long each measurement runs.
const WINDOW: Duration = Duration::from_secs(3);

fn main() {
    // `cargo bench` passes `--bench`; any other argument is a filter we do not support.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    println!("kapi throughput: {CLIENTS} concurrent clients, {WINDOW:?} per measurement");
    println!("{:<58} {:>10}", "measurement", "ops/s");

    runtime.block_on(embedded_storage());
    let etcd = Etcd::start();
    runtime.block_on(raw_etcd(&etcd));
    let args = ["--storage", "etcd", "--etcd-servers", &etcd.servers_flag()].map(String::from);
    through_server("kapi-server on etcd", &args);
    let dir = tempfile::tempdir().expect("a data directory");
    let args = ["--data-dir".into(), dir.path().display().to_string()];
    through_server("kapi-server on the embedded store", &args);
}

fn report(what: &str, ops: u64, elapsed: Duration) {
    let rate = ops as f64 / elapsed.as_secs_f64();
    println!("{what:<58} {rate:>10.0}");
}

/// Runs `clients` copies of `op(client, i)` (i counting per client) for [`WINDOW`];
/// returns how many completed.
async fn run_async<F, Fut>(clients: usize, op: F) -> (u64, Duration)
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let op = Arc::new(op);
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let (op, done) = (op.clone(), done.clone());
            tokio::spawn(async move {
                let mut i = 0;
                while started.elapsed() < WINDOW {
                    op(client, i).await;
                    i += 1;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a benchmark task panicked");
    }
    (done.load(Ordering::Relaxed), started.elapsed())
}

async fn embedded_storage() {
    for writers in [1, CLIENTS] {
        let dir = tempfile::tempdir().expect("a data directory");
        let storage = Arc::new(EmbeddedStorage::open(dir.path()).expect("opening the store"));
        let (ops, elapsed) = run_async(writers, move |client, i| {
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
        report(
            &format!("embedded store, {writers} writers: creates (1 KiB)"),
            ops,
            elapsed,
        );
    }
}

async fn raw_etcd(etcd: &Etcd) {
    let client = Client::connect(etcd.endpoints(), None)
        .await
        .expect("connecting to etcd");
    let value = Arc::new(vec![1u8; 1024]);
    let c = client.clone();
    let (ops, elapsed) = run_async(CLIENTS, move |client, i| {
        let (mut etcd, value) = (c.clone(), value.clone());
        async move {
            let key = format!("/raw/{client}/{i}");
            let txn = Txn::new()
                .when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)])
                .and_then([TxnOp::put(key, value.to_vec(), None)]);
            assert!(etcd.txn(txn).await.unwrap().succeeded());
        }
    })
    .await;
    report(
        "raw etcd-client: create-if-absent Txn (1 KiB)",
        ops,
        elapsed,
    );
    let c = client.clone();
    let (ops, elapsed) = run_async(CLIENTS, move |client, i| {
        let mut etcd = c.clone();
        async move {
            let key = format!("/raw/{client}/{}", i % 10);
            let got = etcd.get(key, Some(GetOptions::new())).await.unwrap();
            assert_eq!(got.kvs().len(), 1);
        }
    })
    .await;
    report("raw etcd-client: linearizable get", ops, elapsed);
}

/// The release server with `args`, on a free port; killed when dropped.
struct ServerProcess(Child, SocketAddr);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(args: &[String]) -> ServerProcess {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kapi-server"))
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starting kapi-server");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let addr = loop {
        let line = (lines.next())
            .expect("kapi-server exited before listening")
            .expect("reading kapi-server's stdout");
        if let Some(addr) = line.strip_prefix("listening on http://") {
            break addr.trim().parse().expect("a listening address");
        }
    };
    // Keep draining stdout so the server never blocks on it.
    std::thread::spawn(move || lines.for_each(drop));
    ServerProcess(child, addr)
}

/// `clients` threads, each with its own keep-alive connection, running `op` for
/// [`WINDOW`].
fn run_threads(
    clients: usize,
    op: impl Fn(&ureq::Agent, usize, u64) + Send + Sync,
) -> (u64, Duration) {
    let done = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for client in 0..clients {
            let (op, done) = (&op, &done);
            scope.spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                let mut i = 0;
                while started.elapsed() < WINDOW {
                    op(&agent, client, i);
                    i += 1;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    (done.load(Ordering::Relaxed), started.elapsed())
}

fn through_server(what: &str, args: &[String]) {
    let server = start_server(args);
    let base = format!("http://{}/api/v1/namespaces/default/configmaps", server.1);
    let data = "x".repeat(1024);
    let (ops, elapsed) = run_threads(CLIENTS, |agent, client, i| {
        let body = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c{client}-{i}"}},"data":{{"v":"{data}"}}}}"#
        );
        let response = (agent.post(&base))
            .header("Content-Type", "application/json")
            .send(body)
            .expect("POST");
        assert_eq!(response.status().as_u16(), 201);
    });
    report(&format!("{what}: ConfigMap creates (1 KiB)"), ops, elapsed);
    let (ops, elapsed) = run_threads(CLIENTS, |agent, client, i| {
        let url = format!("{base}/c{client}-{}", i % 10);
        let response = agent.get(&url).call().expect("GET");
        assert_eq!(response.status().as_u16(), 200);
    });
    report(&format!("{what}: ConfigMap GETs"), ops, elapsed);
}
