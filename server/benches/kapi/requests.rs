//! Requests through the release server: creates, GETs, updates and server-side applies on
//! etcd and on the embedded store, each beside its store's own creates, and what
//! authentication and an RBAC decision cost a GET.
//!
//! - "WebApp updates (merge PATCH)": a JSON merge patch (`application/merge-patch+json`)
//!   of `{"spec":{"replicas":N}}` on `bench-<client>`, created by a POST beforehand, with
//!   no GET first and no resourceVersion (a PUT without resourceVersion is refused for
//!   WebApps, as kube refuses it for custom resources); it records the usual `Update`
//!   managedFields entry;
//! - "WebApp server-side applies": an apply (`application/apply-patch+yaml`, JSON body) of
//!   `bench-apply-<client>` by its own manager, created by a first apply beforehand (a
//!   separate object: the merge patches' entry owns `spec.replicas` of `bench-<client>`);
//!   and "apply cost / update cost", updates per second over applies per second;
//! - "creates / the raw Txns around them" (on etcd): the raw create-if-absent `Txn`s of the
//!   limits are measured again on the same etcd just before and just after the server's
//!   creates, and the creates are given as a share of their mean; beside the share of the
//!   limits' figure, which was measured minutes earlier, at whatever pace the machine kept
//!   then;
//! - "as protobuf": the same GETs asking for kube's protobuf (what client-go's typed
//!   clients ask for), and a LIST of every ConfigMap the creates made, as JSON and as
//!   protobuf (p50 of a few, sequential, `resourceVersion=0`).

use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

use super::common::{
    CLIENTS, CpuMeter, Options, ServerProcess, agent, percentile_ms, rate, status_of, timed_gets,
};
use super::http1;
use super::limits::{self, Limits};
use super::report::Report;

/// kube's protobuf media type.
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// Tokens of the RBAC measurement: an administrator and the reader.
const TOKENS: &str = "bench-admin,admin,1,system:masters\nbench-reader,reader,2\n";

/// Measures requests on etcd and on the embedded store, then RBAC.
pub(crate) fn measure(runtime: &Runtime, options: &Options, limits: &Limits, report: &mut Report) {
    let args = [
        "--storage",
        "etcd",
        "--etcd-servers",
        &limits.etcd.servers_flag(),
    ]
    .map(String::from);
    // The raw Txns again, on the same etcd, just before and just after the server's creates.
    let raw_txns = |prefix: &str| runtime.block_on(limits::raw_txns(&limits.etcd, options, prefix));
    let etcd = OnEtcd {
        pid: limits.etcd.pid(0).expect("etcd runs"),
        metrics: format!("{}/metrics", limits.etcd.endpoint(0)),
        raw_txn_cpu: limits.etcd_txn_cpu,
        raw_gets: limits.etcd_gets,
        raw_txns: &raw_txns,
    };
    through_server(
        options,
        report,
        "kapi on etcd",
        &args,
        limits.etcd_txns,
        Some(&etcd),
    );
    // Beside the store's own creates with a watch open: etcd's work for each create is then
    // the same as for the server's, which keeps a watch on its keys.
    report.share(
        "kapi on etcd: creates / the store's own with a watch open",
        report
            .get("kapi on etcd: ConfigMap creates (1 KiB)")
            .unwrap_or_default(),
        limits.etcd_watched_txns,
    );
    // And beside the same Txns guarded by a namespace's revision, as the server's are.
    report.share(
        "kapi on etcd: creates / the store's own guarded as the server's, a watch open",
        report
            .get("kapi on etcd: ConfigMap creates (1 KiB)")
            .unwrap_or_default(),
        limits.etcd_guarded_txns,
    );
    let dir = tempfile::tempdir().expect("a data directory");
    let args = ["--data-dir".into(), dir.path().display().to_string()];
    through_server(
        options,
        report,
        "kapi on the embedded store",
        &args,
        limits.embedded_creates,
        None,
    );
    rbac_gets(options, report);
}

/// ConfigMap GETs with RBAC and a token, beside the same without authentication.
fn rbac_gets(options: &Options, report: &mut Report) {
    let what = "kapi on the embedded store";
    let open_dir = tempfile::tempdir().expect("a data directory");
    let open = ServerProcess::start(&["--data-dir".into(), open_dir.path().display().to_string()]);
    let (ops, elapsed) = configmap_gets(options, &open, None);
    let allowed = report.add(
        format!("{what}, AlwaysAllow: ConfigMap GETs"),
        rate(ops, elapsed),
        "ops/s",
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
    let server = ServerProcess::start(&args);
    let agent = agent();
    let post = |path: &str, body: String| {
        let response = (agent.post(server.url(path)))
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
    let others = if options.quick { 5 } else { 200 };
    for i in 0..others {
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
    let (ops, elapsed) = configmap_gets(options, &server, Some(("bench-admin", "bench-reader")));
    let secured = report.add(
        format!("{what}, RBAC + token: ConfigMap GETs"),
        rate(ops, elapsed),
        "ops/s",
    );
    report.share(
        format!("{what}: RBAC + token GETs / AlwaysAllow GETs"),
        secured,
        allowed,
    );

    // The same reads by a service account, with a token of the TokenRequest API (the
    // server's own key: it was given none): a signature and the account's existence are
    // checked on every request.
    post(
        "/api/v1/namespaces/default/serviceaccounts",
        r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"bench-robot"}}"#.into(),
    );
    post(
        &format!("{rbac}/rolebindings"),
        r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"robot"},"roleRef":{"kind":"Role","name":"reader"},"subjects":[{"kind":"ServiceAccount","name":"bench-robot","namespace":"default"}]}"#.into(),
    );
    let issued = (agent
        .post(server.url("/api/v1/namespaces/default/serviceaccounts/bench-robot/token")))
    .header("Authorization", "Bearer bench-admin")
    .header("Content-Type", "application/json")
    .send(r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}"#)
    .expect("a TokenRequest")
    .body_mut()
    .read_to_string()
    .expect("its answer");
    let issued: serde_json::Value = serde_json::from_str(&issued).expect("a TokenRequest");
    let token = issued["status"]["token"].as_str().expect("a token");
    let (ops, elapsed) = read_configmaps(options, &server, Some(&format!("Bearer {token}")));
    let robot = report.add(
        format!("{what}, RBAC + service-account token: ConfigMap GETs"),
        rate(ops, elapsed),
        "ops/s",
    );
    report.share(
        format!("{what}: service-account token GETs / token-file GETs"),
        robot,
        secured,
    );
}

/// Ten ConfigMaps created (with `tokens.0` when given), then GETs of them by [`CLIENTS`]
/// clients (with `tokens.1`).
fn configmap_gets(
    options: &Options,
    server: &ServerProcess,
    tokens: Option<(&str, &str)>,
) -> (u64, Duration) {
    let base = server.url("/api/v1/namespaces/default/configmaps");
    let agent = agent();
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
        assert_eq!(status_of(request.send(body).expect("POST")), 201);
    }
    read_configmaps(
        options,
        server,
        tokens.map(|(_, reader)| auth(reader)).as_deref(),
    )
}

/// GETs of the ten ConfigMaps of [`configmap_gets`] by [`CLIENTS`] clients, with the
/// `Authorization` header `authorization` when given, once the reader is allowed them (a
/// binding reaches the RBAC index shortly after it is written).
fn read_configmaps(
    options: &Options,
    server: &ServerProcess,
    authorization: Option<&str>,
) -> (u64, Duration) {
    let agent = agent();
    let url = server.url("/api/v1/namespaces/default/configmaps/get-0");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut request = agent.get(&url);
        if let Some(authorization) = authorization {
            request = request.header("Authorization", authorization);
        }
        if request.call().expect("GET").status().as_u16() == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "the reader was never allowed");
        std::thread::sleep(Duration::from_millis(10));
    }
    let reads = clients(server, options, |connection, client, i| {
        let path = format!(
            "/api/v1/namespaces/default/configmaps/get-{}",
            (client as u64 + i) % 10
        );
        let mut headers = vec![("Accept", "application/json")];
        headers.extend(authorization.map(|token| ("Authorization", token)));
        assert_eq!(connection.send("GET", &path, &headers, b"").status, 200);
    });
    (reads.ops, reads.elapsed)
}

/// The etcd a server under measurement runs on, and its own figures.
struct OnEtcd<'a> {
    /// Its process.
    pid: u32,
    /// Its metrics' URL: how many calls of each method it answered.
    metrics: String,
    /// Its CPU per raw `Txn` (microseconds).
    raw_txn_cpu: f64,
    /// Raw linearizable gets per second.
    raw_gets: f64,
    /// Measures raw create-if-absent `Txn`s under a given (fresh) prefix.
    raw_txns: &'a dyn Fn(&str) -> f64,
}

impl OnEtcd<'_> {
    /// How many calls of the gRPC `methods` (`Range`, `Txn`) etcd has answered so far.
    fn calls(&self, methods: &[&str]) -> f64 {
        let text = (agent().get(&self.metrics).call())
            .and_then(|mut response| response.body_mut().read_to_string())
            .expect("etcd's metrics");
        let labels: Vec<_> = (methods.iter())
            .map(|method| format!("grpc_method=\"{method}\""))
            .collect();
        (text.lines())
            .filter(|line| line.starts_with("grpc_server_handled_total{"))
            .filter(|line| labels.iter().any(|label| line.contains(label.as_str())))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }
}

/// Creates and GETs through the server started with `args`, the creates also as a share of
/// its store's own (`raw_creates`); the server's CPU per request, which tells where the
/// time goes: on this machine the clients, the server and etcd share the cores, so every
/// microsecond the server spends is one etcd cannot; then the WebApp writes.
///
/// On `etcd`, also: etcd's CPU per request beside its CPU per raw `Txn`; the GETs as a share
/// of raw linearizable gets; etcd's calls per request (one `Txn` per create; the reads
/// that concurrent GETs share); and the raw `Txn`s again, just before and just after the
/// server's creates, with the creates as a share of their mean. This machine's pace drifts
/// by half within minutes, and the limits were measured minutes earlier; the bracket is of
/// the same minute.
fn through_server(
    options: &Options,
    report: &mut Report,
    what: &str,
    args: &[String],
    raw_creates: f64,
    etcd: Option<&OnEtcd<'_>>,
) {
    let server = ServerProcess::start(args);
    let mut pids = vec![server.pid()];
    pids.extend(etcd.map(|etcd| etcd.pid.to_string()));
    let before = etcd.map(|etcd| (etcd.raw_txns)("/beside/before"));
    let txns = etcd.map(|etcd| etcd.calls(&["Txn"]));
    let meter = CpuMeter::start(&pids);
    let path = "/api/v1/namespaces/default/configmaps";
    let base = server.url(path);
    let data = "x".repeat(1024);
    let creates = clients(&server, options, |connection, client, i| {
        let body = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c{client}-{i}"}},"data":{{"v":"{data}"}}}}"#
        );
        let answer = connection.send("POST", path, JSON_BODY, body.as_bytes());
        assert_eq!(answer.status, 201, "a create");
    });
    let cpu = meter.per_op(creates.ops);
    let txns = etcd
        .zip(txns)
        .map(|(etcd, before)| etcd.calls(&["Txn"]) - before);
    let after = etcd.map(|etcd| (etcd.raw_txns)("/beside/after"));
    if etcd.is_some() {
        settle_cache(&server, path);
    }
    let rate_of_creates = report.add(
        format!("{what}: ConfigMap creates (1 KiB)"),
        rate(creates.ops, creates.elapsed),
        "ops/s",
    );
    cpu_rows(
        report,
        what,
        "create",
        &cpu,
        etcd.map(|etcd| etcd.raw_txn_cpu),
    );
    client_row(report, what, "create", &creates);
    if let Some(txns) = txns {
        report.ratio(
            format!("{what}: etcd Txns per create"),
            txns,
            creates.ops as f64,
        );
    }
    report.share(
        format!("{what}: creates / the store's own"),
        rate_of_creates,
        raw_creates,
    );
    if let (Some(before), Some(after)) = (before, after) {
        let before = report.add(
            format!("{what}: raw Txn (1 KiB) just before the creates"),
            before,
            "ops/s",
        );
        let after = report.add(
            format!("{what}: raw Txn (1 KiB) just after the creates"),
            after,
            "ops/s",
        );
        report.share(
            format!("{what}: creates / the raw Txns around them"),
            rate_of_creates,
            (before + after) / 2.0,
        );
    }
    // Each client reads the first object it created (a short window may create few).
    // A GET reads its key together with the keys other GETs ask for meanwhile (one `Txn`
    // of ranges, or one `Range` for one key).
    let reads_of = ["Range", "Txn"];
    let calls = etcd.map(|etcd| etcd.calls(&reads_of));
    let meter = CpuMeter::start(&pids);
    let reads = clients(&server, options, |connection, client, _| {
        let answer = connection.send("GET", &format!("{path}/c{client}-0"), ACCEPT_JSON, b"");
        assert_eq!(answer.status, 200, "a GET");
    });
    let cpu = meter.per_op(reads.ops);
    let calls = etcd
        .zip(calls)
        .map(|(etcd, before)| etcd.calls(&reads_of) - before);
    let gets = report.add(
        format!("{what}: ConfigMap GETs"),
        rate(reads.ops, reads.elapsed),
        "ops/s",
    );
    cpu_rows(report, what, "GET", &cpu, None);
    client_row(report, what, "GET", &reads);
    if let (Some(etcd), Some(calls)) = (etcd, calls) {
        report.share(
            format!("{what}: GETs / raw linearizable gets"),
            gets,
            etcd.raw_gets,
        );
        report.ratio(
            format!("{what}: etcd reads per GET"),
            calls,
            reads.ops as f64,
        );
    }
    protobuf_reads(options, report, what, &server, &base);
    webapp_writes(options, report, what, &server);
}

/// Brings the server's ConfigMap cache back to etcd's revision after the raw Txns wrote
/// elsewhere, so that the GETs find it as they did before the bracket existed (right after
/// the server's own creates): one more create, then until the cache holds it (a GET with
/// `resourceVersion=0` reads the cache alone). A cache behind etcd's revision makes GETs
/// read etcd, which etcd before v3.4.31 cannot spare by reporting progress.
fn settle_cache(server: &ServerProcess, path: &str) {
    let agent = agent();
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settle"}}"#;
    let response = (agent.post(server.url(path)))
        .header("Content-Type", "application/json")
        .send(body)
        .expect("POST");
    assert_eq!(status_of(response), 201, "the settling create");
    let url = server.url(&format!("{path}/settle?resourceVersion=0"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while status_of(agent.get(&url).call().expect("GET")) != 200 {
        assert!(
            Instant::now() < deadline,
            "the cache never saw the settling create"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The ConfigMap GETs again as protobuf, and a LIST of every ConfigMap at `base` as JSON
/// and as protobuf.
fn protobuf_reads(
    options: &Options,
    report: &mut Report,
    what: &str,
    server: &ServerProcess,
    base: &str,
) {
    let path = "/api/v1/namespaces/default/configmaps";
    let reads = clients(server, options, |connection, client, _| {
        let path = format!("{path}/c{client}-0");
        let answer = connection.send("GET", &path, &[("Accept", PROTOBUF)], b"");
        assert_eq!(answer.status, 200, "a GET as protobuf");
        assert_eq!(answer.content_type, Some(PROTOBUF));
    });
    report.add(
        format!("{what}: ConfigMap GETs as protobuf"),
        rate(reads.ops, reads.elapsed),
        "ops/s",
    );
    let agent = agent();
    let url = format!("{base}?resourceVersion=0");
    let lists = if options.quick { 2 } else { 10 };
    let p50 = |accept: &str| {
        let (mut times, size) = timed_gets(&agent, &url, accept, lists);
        (percentile_ms(&mut times, 50.0), size)
    };
    let (json, json_size) = p50("application/json");
    let (protobuf, protobuf_size) = p50(PROTOBUF);
    report.add(format!("{what}: LIST of the ConfigMaps, p50"), json, "ms");
    report.add(
        format!("{what}: LIST of the ConfigMaps as protobuf, p50"),
        protobuf,
        "ms",
    );
    report.ratio(
        format!("{what}: LIST as protobuf / as JSON, bytes"),
        protobuf_size as f64,
        json_size as f64,
    );
}

/// [`CLIENTS`] lean clients of `server`, each on its own connection, running `op` for the
/// window.
fn clients(
    server: &ServerProcess,
    options: &Options,
    op: impl Fn(&mut http1::Connection, usize, u64) + Send + Sync,
) -> http1::Run {
    http1::run(server.addr, CLIENTS, options.window(), op)
}

/// The request bodies' headers: JSON in, JSON out.
const JSON_BODY: &[(&str, &str)] = &[
    ("Content-Type", "application/json"),
    ("Accept", "application/json"),
];
/// A read's headers.
const ACCEPT_JSON: &[(&str, &str)] = &[("Accept", "application/json")];

/// The clients' own CPU per `operation` of `run`: on this machine they share the cores
/// with the server (and etcd).
fn client_row(report: &mut Report, what: &str, operation: &str, run: &http1::Run) {
    report.add(
        format!("{what}: client CPU per {operation}"),
        run.client_cpu_micros,
        "µs",
    );
}

/// Rows of the server's CPU per `operation` (`cpu[0]`), and etcd's (`cpu[1]`) beside its CPU
/// per raw `Txn` (`raw_txn`) when given.
fn cpu_rows(report: &mut Report, what: &str, operation: &str, cpu: &[f64], raw_txn: Option<f64>) {
    report.add(format!("{what}: server CPU per {operation}"), cpu[0], "µs");
    if let Some(&etcd) = cpu.get(1) {
        let etcd = report.add(format!("{what}: etcd CPU per {operation}"), etcd, "µs");
        if let Some(raw) = raw_txn {
            report.ratio(
                format!("{what}: etcd CPU per {operation} / per raw Txn"),
                etcd,
                raw,
            );
        }
    }
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
fn webapp_writes(options: &Options, report: &mut Report, what: &str, server: &ServerProcess) {
    const MERGE: &str = "application/merge-patch+json";
    const APPLY: &str = "application/apply-patch+yaml";
    let path = "/apis/apps.example.dev/v1/namespaces/default/webapps";
    // A merge patch of `bench-<client>`, or an apply of `bench-apply-<client>` by its own
    // manager; the status.
    let write = |connection: &mut http1::Connection, client: usize, kind: &str, replicas: u64| {
        let (target, body) = match kind {
            APPLY => {
                let name = format!("bench-apply-{client}");
                let body = webapp(&name, replicas);
                (format!("{path}/{name}?fieldManager=bench-{client}"), body)
            }
            _ => (
                format!("{path}/bench-{client}"),
                format!(r#"{{"spec":{{"replicas":{replicas}}}}}"#),
            ),
        };
        let headers = [("Content-Type", kind), ("Accept", "application/json")];
        (connection.send("PATCH", &target, &headers, body.as_bytes())).status
    };
    let mut connection = http1::Connection::open(server.addr);
    for client in 0..CLIENTS {
        let body = webapp(&format!("bench-{client}"), 1);
        assert_eq!(
            connection
                .send("POST", path, JSON_BODY, body.as_bytes())
                .status,
            201
        );
        assert_eq!(write(&mut connection, client, APPLY, 1), 201);
    }

    let patches = clients(server, options, |connection, client, i| {
        assert_eq!(
            write(connection, client, MERGE, replicas(i)),
            200,
            "a merge patch"
        );
    });
    let updates = report.add(
        format!("{what}: WebApp updates (merge PATCH)"),
        rate(patches.ops, patches.elapsed),
        "ops/s",
    );
    let applies = clients(server, options, |connection, client, i| {
        let status = write(connection, client, APPLY, replicas(i));
        assert_eq!(status, 200, "a server-side apply");
    });
    let applies = report.add(
        format!("{what}: WebApp server-side applies"),
        rate(applies.ops, applies.elapsed),
        "ops/s",
    );
    report.ratio(
        format!("{what}: apply cost / update cost"),
        updates,
        applies,
    );
}
