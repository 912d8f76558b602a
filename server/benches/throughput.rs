//! `cargo xtask bench`: throughput numbers, printed, never asserted.
//!
//! At the same concurrency ([`CLIENTS`]), for a few seconds each ([`WINDOW`]):
//!
//! - the embedded store directly (1 and `CLIENTS` writers), 1 KiB creates;
//! - raw etcd-client transactions on one etcd member (the create-if-absent `Txn` the etcd
//!   backend sends, and linearizable single-key ranges);
//! - the release `kapi-server` over HTTP/1.1 (keep-alive), on that etcd and on the embedded
//!   store: ConfigMap creates (also as a share of the store's own creates above: raw `Txn`s
//!   for etcd, `CLIENTS` writers for the embedded store) and GETs; then, side by side, one WebApp per client rewritten
//!   with an alternating `spec.replicas` (so every write changes something), by
//!   - "WebApp updates (merge PATCH)": a JSON merge patch (`application/merge-patch+json`)
//!     of `{"spec":{"replicas":N}}` on `bench-<client>`, created by a POST beforehand, with
//!     no GET first and no resourceVersion. (Not a PUT: a PUT without resourceVersion is
//!     refused for WebApps, a non-core kind, as kube refuses it for custom resources; a
//!     merge patch is the unconditional update these kinds allow.) It records the usual
//!     `Update` managedFields entry;
//!   - "WebApp server-side applies": a server-side apply (`application/apply-patch+yaml`,
//!     JSON body) of `bench-apply-<client>` by its own manager `bench-<client>`, created
//!     by a first apply beforehand (a separate object: the merge patches' Update entry
//!     owns `spec.replicas` of `bench-<client>`, so applying there would conflict);
//!
//!   and the ratio "apply cost / update cost" (update ops/s divided by apply ops/s);
//! - ConfigMap GETs on the embedded store with `--authorization-mode RBAC` and a token
//!   (a user granted `get` by a RoleBinding, among 200 other bindings) beside the same GETs
//!   with `AlwaysAllow` and no authentication, and their ratio: what authentication and
//!   an RBAC decision cost a request.
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
    println!("{:<64} {:>10}", "measurement", "ops/s");

    let embedded = runtime.block_on(embedded_storage());
    let etcd = Etcd::start();
    let raw = runtime.block_on(raw_etcd(&etcd));
    let args = ["--storage", "etcd", "--etcd-servers", &etcd.servers_flag()].map(String::from);
    through_server("kapi-server on etcd", &args, raw);
    let dir = tempfile::tempdir().expect("a data directory");
    let args = ["--data-dir".into(), dir.path().display().to_string()];
    through_server("kapi-server on the embedded store", &args, embedded);
    rbac_gets();
}

/// Tokens of the RBAC measurement: an administrator and the reader.
const TOKENS: &str = "bench-admin,admin,1,system:masters\nbench-reader,reader,2\n";

/// ConfigMap GETs with RBAC and a token, beside the same without authentication.
fn rbac_gets() {
    let what = "kapi-server, embedded";
    let open_dir = tempfile::tempdir().expect("a data directory");
    let open = start_server(&["--data-dir".into(), open_dir.path().display().to_string()]);
    let allowed = configmap_gets(&open, None);
    report(
        &format!("{what}, AlwaysAllow: ConfigMap GETs"),
        allowed.0,
        allowed.1,
    );
    drop(open);

    let dir = tempfile::tempdir().expect("a data directory");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).expect("writing the token file");
    let args = [
        "--data-dir".into(),
        dir.path().join("data").display().to_string(),
        "--token-auth-file".into(),
        tokens.display().to_string(),
        "--authorization-mode".into(),
        "RBAC".into(),
    ];
    let server = start_server(&args);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let post = |path: &str, body: String| {
        let response = (agent.post(format!("http://{}{path}", server.1)))
            .header("Authorization", "Bearer bench-admin")
            .header("Content-Type", "application/json")
            .send(body)
            .expect("POST");
        assert_eq!(response.status().as_u16(), 201, "POST {path}");
    };
    let rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default";
    post(
        &format!("{rbac}/roles"),
        r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"reader"},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["configmaps"]}]}"#.into(),
    );
    for i in 0..200 {
        post(
            &format!("{rbac}/rolebindings"),
            format!(
                r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{{"name":"other-{i}"}},"roleRef":{{"kind":"Role","name":"reader"}},"subjects":[{{"kind":"User","name":"user-{i}"}}]}}"#
            ),
        );
    }
    post(
        &format!("{rbac}/rolebindings"),
        r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"reader"},"roleRef":{"kind":"Role","name":"reader"},"subjects":[{"kind":"User","name":"reader"}]}"#.into(),
    );
    let secured = configmap_gets(&server, Some(("bench-admin", "bench-reader")));
    let rate = report(
        &format!("{what}, RBAC + token: ConfigMap GETs"),
        secured.0,
        secured.1,
    );
    let open_rate = allowed.0 as f64 / allowed.1.as_secs_f64();
    share(
        &format!("{what}: RBAC + token GETs / AlwaysAllow GETs"),
        rate,
        open_rate,
    );
}

/// Ten ConfigMaps created (with `tokens.0` when given), then GETs of them by [`CLIENTS`]
/// clients (with `tokens.1`).
fn configmap_gets(server: &ServerProcess, tokens: Option<(&str, &str)>) -> (u64, Duration) {
    let base = format!("http://{}/api/v1/namespaces/default/configmaps", server.1);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let auth = |token: &str| format!("Bearer {token}");
    for i in 0..10 {
        let body = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"get-{i}"}},"data":{{"v":"{}"}}}}"#,
            "x".repeat(1024)
        );
        let mut request = agent.post(&base).header("Content-Type", "application/json");
        if let Some((admin, _)) = tokens {
            request = request.header("Authorization", auth(admin));
        }
        assert_eq!(request.send(body).expect("POST").status().as_u16(), 201);
    }
    // The reader's binding reaches the RBAC index shortly after it is written.
    if let Some((_, reader)) = tokens {
        let deadline = Instant::now() + Duration::from_secs(10);
        let url = format!("{base}/get-0");
        while (agent.get(&url).header("Authorization", auth(reader)).call())
            .expect("GET")
            .status()
            .as_u16()
            != 200
        {
            assert!(Instant::now() < deadline, "the reader was never allowed");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    run_threads(CLIENTS, |agent, client, i| {
        let url = format!("{base}/get-{}", (client as u64 + i) % 10);
        let mut request = agent.get(&url);
        if let Some((_, reader)) = tokens {
            request = request.header("Authorization", auth(reader));
        }
        assert_eq!(request.call().expect("GET").status().as_u16(), 200);
    })
}

/// Prints a measurement; returns its rate (ops/s).
fn report(what: &str, ops: u64, elapsed: Duration) -> f64 {
    let rate = ops as f64 / elapsed.as_secs_f64();
    println!("{what:<64} {rate:>10.0}");
    rate
}

/// Prints `rate` as a share of the store's own `baseline` at the same concurrency.
fn share(what: &str, rate: f64, baseline: f64) {
    println!("{what:<64} {:>9.0}%", 100.0 * rate / baseline);
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

/// Returns the rate of `CLIENTS` writers.
async fn embedded_storage() -> f64 {
    let mut rate = 0.0;
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
        rate = report(
            &format!("embedded store, {writers} writers: creates (1 KiB)"),
            ops,
            elapsed,
        );
    }
    rate
}

/// Returns the rate of create-if-absent transactions.
async fn raw_etcd(etcd: &Etcd) -> f64 {
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
    let creates = report(
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
    creates
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

/// Measures the server started with `args`; `raw_creates` is its store's own create rate
/// at the same concurrency, which the server's creates are shown as a share of.
fn through_server(what: &str, args: &[String], raw_creates: f64) {
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
    let creates = report(&format!("{what}: ConfigMap creates (1 KiB)"), ops, elapsed);
    share(
        &format!("{what}: creates / the store's own"),
        creates,
        raw_creates,
    );
    let (ops, elapsed) = run_threads(CLIENTS, |agent, client, i| {
        let url = format!("{base}/c{client}-{}", i % 10);
        let response = agent.get(&url).call().expect("GET");
        assert_eq!(response.status().as_u16(), 200);
    });
    report(&format!("{what}: ConfigMap GETs"), ops, elapsed);
    webapp_writes(what, &server);
}

/// A v1 WebApp named `name` with `replicas`: the apply configuration, and a full object
/// to POST.
fn webapp(name: &str, replicas: u64) -> String {
    format!(
        r#"{{"apiVersion":"apps.example.dev/v1","kind":"WebApp","metadata":{{"name":"{name}"}},"spec":{{"replicas":{replicas},"container":{{"image":"nginx:1.27","ports":[{{"containerPort":80,"name":"http"}}]}}}}}}"#
    )
}

/// `spec.replicas` of a client's `i`th write: 2, 1, 2, ... after the initial 1, so every
/// write changes the object.
fn replicas(i: u64) -> u64 {
    2 - i % 2
}

/// One WebApp per client, rewritten by merge patches, then (another one) by server-side
/// applies; both rates and their ratio.
fn webapp_writes(what: &str, server: &ServerProcess) {
    let base = format!(
        "http://{}/apis/apps.example.dev/v1/namespaces/default/webapps",
        server.1
    );
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let apply = |agent: &ureq::Agent, client: usize, replicas: u64| {
        let name = format!("bench-apply-{client}");
        let url = format!("{base}/{name}?fieldManager=bench-{client}");
        (agent.patch(&url))
            .header("Content-Type", "application/apply-patch+yaml")
            .send(webapp(&name, replicas))
            .expect("PATCH (apply)")
    };
    for client in 0..CLIENTS {
        let response = (agent.post(&base))
            .header("Content-Type", "application/json")
            .send(webapp(&format!("bench-{client}"), 1))
            .expect("POST");
        assert_eq!(response.status().as_u16(), 201);
        let response = apply(&agent, client, 1);
        assert_eq!(response.status().as_u16(), 201);
    }

    let (ops, elapsed) = run_threads(CLIENTS, |agent, client, i| {
        let url = format!("{base}/bench-{client}");
        let response = (agent.patch(&url))
            .header("Content-Type", "application/merge-patch+json")
            .send(format!(r#"{{"spec":{{"replicas":{}}}}}"#, replicas(i)))
            .expect("PATCH (merge)");
        assert_eq!(response.status().as_u16(), 200, "a merge patch");
    });
    let updates = report(
        &format!("{what}: WebApp updates (merge PATCH)"),
        ops,
        elapsed,
    );

    let (ops, elapsed) = run_threads(CLIENTS, |agent, client, i| {
        let response = apply(agent, client, replicas(i));
        assert_eq!(response.status().as_u16(), 200, "a server-side apply");
    });
    let applies = report(&format!("{what}: WebApp server-side applies"), ops, elapsed);
    println!(
        "{:<64} {:>9.2}x",
        format!("{what}: apply cost / update cost"),
        updates / applies
    );
}
