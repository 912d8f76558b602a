//! kapi beside kube-apiserver, as the performance issue's own table compares them: both on
//! HTTPS with token authentication, RBAC and a `Metadata` audit log, 16 clients, the same
//! ~500-byte WebApps (kube-apiserver serves WebApp as a CustomResourceDefinition with the
//! schema kapi publishes, on its etcd 3.4; kapi on its embedded store, then on the peer's
//! own etcd under a prefix of its own), then the same for Pods (kube's built-in kind on
//! both, through kube-apiserver's default admission but `ServiceAccount`, which the peer
//! turns off). Rows: creates/s of 4,000 objects, GETs/s, LIST of the 4,000 (consistent and
//! `resourceVersion=0`, p50), the server's RSS growth for them, and kapi's figures over
//! kube-apiserver's.
//!
//! Runs only when `KAPI_PEER_DIR` names a running peer of `shared/peer/` (its README:
//! `build.sh`, `start-etcd.sh`, `start-apiserver.sh`); it binds fixed ports, so it is never
//! started here.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::{
    CLIENTS, Options, get_discarding_with, percentile_ms, rate, rss_mib_of, run_count_on,
    run_threads_on,
};
use super::report::Report;
use super::{pki, webapp_crd};

/// How many objects of each kind each server gets.
const OBJECTS: u64 = 4_000;

/// A kind measured on both: its name, its plural under a namespace's path, an object.
struct Kind {
    name: &'static str,
    path: &'static str,
    object: fn(u64) -> Value,
}

/// The ~500-byte WebApps.
fn webapp(n: u64) -> Value {
    json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
        "metadata": {"name": format!("w{n:07}"), "labels": {"app": "bench", "tier": format!("t{}", n % 10)}},
        "spec": {"replicas": 1, "container": {"image": "nginx:1.27", "ports": [{"containerPort": 80, "name": "http"}]}}})
}

/// A Pod of one container with a port.
fn pod(n: u64) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("w{n:07}"), "labels": {"app": "bench", "tier": format!("t{}", n % 10)}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80, "name": "http"}]}]}})
}

const KINDS: [Kind; 2] = [
    Kind {
        name: "WebApp",
        path: "apis/apps.example.dev/v1",
        object: webapp,
    },
    Kind {
        name: "Pod",
        path: "api/v1",
        object: pod,
    },
];

/// One server under test: where it is, how to reach it, its process.
struct Target {
    label: String,
    base: String,
    ca: Vec<u8>,
    token: String,
    pid: String,
}

impl Target {
    fn agent(&self) -> ureq::Agent {
        use ureq::tls::{Certificate, RootCerts, TlsConfig};
        let ca = Certificate::from_pem(&self.ca).expect("the CA certificate is PEM");
        let tls = TlsConfig::builder()
            .root_certs(RootCerts::Specific(std::sync::Arc::new(vec![
                ca.to_owned(),
            ])))
            .build();
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .tls_config(tls)
            .build()
            .into()
    }

    fn send(
        &self,
        agent: &ureq::Agent,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let auth = format!("Bearer {}", self.token);
        let mut response = match body {
            Some(body) => agent
                .post(&url)
                .header("Authorization", &auth)
                .header("Content-Type", "application/json")
                .send(body),
            None if method == "GET" => agent.get(&url).header("Authorization", &auth).call(),
            None => agent.delete(&url).header("Authorization", &auth).call(),
        }
        .unwrap_or_else(|e| panic!("{} {method} {path}: {e}", self.label));
        let status = response.status().as_u16();
        let body = (response
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string())
        .unwrap_or_default();
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// `GET path`, the body read and dropped: its size.
    fn get_discarding(&self, agent: &ureq::Agent, path: &str) -> usize {
        let auth = format!("Bearer {}", self.token);
        let url = format!("{}{path}", self.base);
        let (status, size) = get_discarding_with(agent, &url, &[("Authorization", &auth)]);
        assert_eq!(status, 200, "{} GET {path}", self.label);
        size
    }
}

/// Measures both servers, when a peer is running.
pub(crate) fn measure(options: &Options, report: &mut Report) {
    let Ok(dir) = std::env::var("KAPI_PEER_DIR") else {
        return;
    };
    let dir = PathBuf::from(dir);
    let tokens = std::fs::read_to_string(dir.join("pki/tokens.csv")).expect("the peer's tokens");
    let peer = Target {
        label: "kube-apiserver".into(),
        base: "https://127.0.0.1:6443".into(),
        ca: std::fs::read(dir.join("pki/ca.crt")).expect("the peer's CA"),
        token: tokens
            .split(',')
            .next()
            .expect("the admin token")
            .trim()
            .to_owned(),
        pid: std::fs::read_to_string(dir.join("apiserver.pid"))
            .expect("the peer's apiserver.pid")
            .trim()
            .to_owned(),
    };
    install_crd(&peer);
    let pki = pki::Pki::new();
    let data = tempfile::tempdir().expect("a data directory");
    let embedded = ["--data-dir".into(), data.path().display().to_string()];
    // The peer's etcd (`start-etcd.sh`), under a prefix of kapi's own.
    let etcd = [
        "--storage",
        "etcd",
        "--etcd-servers",
        "http://127.0.0.1:2379",
        "--etcd-prefix",
        &format!("/kapi-bench-{}", std::process::id()),
    ]
    .map(String::from);

    // Both started first, so that what they do once at start (RBAC's bootstrap, cluster
    // role aggregation) is over before they are measured.
    let servers = [("kapi", &embedded[..]), ("kapi on etcd", &etcd[..])]
        .map(|(label, args)| start_kapi(&pki, label, args));

    let objects = if options.quick { 50 } else { OBJECTS };
    let kube: Vec<_> = (KINDS.iter())
        .map(|kind| measure_one(&peer, kind, objects, options, report))
        .collect();
    for (mut kapi_process, kapi) in servers {
        let label = kapi.label.clone();
        for (kind, kube) in KINDS.iter().zip(&kube) {
            let (creates, gets, list) = measure_one(&kapi, kind, objects, options, report);
            let name = kind.name;
            report.ratio(
                format!("{label} / kube-apiserver: {name} creates/s"),
                creates,
                kube.0,
            );
            report.ratio(
                format!("{label} / kube-apiserver: {name} GETs/s"),
                gets,
                kube.1,
            );
            report.ratio(
                format!("kube-apiserver / {label}: {name} consistent LIST p50"),
                kube.2,
                list,
            );
        }
        let _ = kapi_process.kill();
        let _ = kapi_process.wait();
    }
}

/// Creates, GETs and LISTs on one server: its creates/s, GETs/s and consistent LIST p50.
fn measure_one(
    target: &Target,
    kind: &Kind,
    objects: u64,
    options: &Options,
    report: &mut Report,
) -> (f64, f64, f64) {
    let label = &target.label;
    let name = kind.name;
    let agent = target.agent();
    let namespace = format!("bench-{}-{}", std::process::id(), name.to_lowercase());
    let (status, _) = target.send(
        &agent,
        "POST",
        "/api/v1/namespaces",
        Some(
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
                .to_string(),
        ),
    );
    assert!(
        status == 201 || status == 409,
        "{label}: creating the namespace: {status}"
    );
    let plural = format!("{}s", name.to_lowercase());
    let collection = format!("/{}/namespaces/{namespace}/{plural}", kind.path);
    let idle = rss_mib_of(&target.pid);

    let took = run_count_on(
        || target.agent(),
        CLIENTS,
        objects,
        |agent, n| {
            let body = (kind.object)(n);
            let (status, answer) = target.send(agent, "POST", &collection, Some(&body.to_string()));
            assert_eq!(status, 201, "{label}: a create: {answer}");
        },
    );
    let creates = report.add(
        format!("{label}: {name} creates ({objects})"),
        rate(objects, took),
        "ops/s",
    );

    let (done, took) = run_threads_on(
        || target.agent(),
        CLIENTS,
        options.window(),
        |agent, client, i| {
            let n = (client as u64 * 7919 + i) % objects;
            let (status, _) = target.send(agent, "GET", &format!("{collection}/w{n:07}"), None);
            assert_eq!(status, 200, "{label}: a GET");
        },
    );
    let gets = report.add(format!("{label}: {name} GETs"), rate(done, took), "ops/s");

    let rounds = if options.quick { 2 } else { 10 };
    let mut consistent = 0.0;
    for (what, query) in [
        ("consistent", ""),
        ("resourceVersion=0", "?resourceVersion=0"),
    ] {
        let mut samples: Vec<Duration> = (0..rounds)
            .map(|_| {
                let started = Instant::now();
                target.get_discarding(&agent, &format!("{collection}{query}"));
                started.elapsed()
            })
            .collect();
        let p50 = report.add(
            format!("{label}: {name} LIST {objects} ({what}) p50"),
            percentile_ms(&mut samples, 50.0),
            "ms",
        );
        if what == "consistent" {
            consistent = p50;
        }
    }
    let json = target.get_discarding(&agent, &format!("{collection}?resourceVersion=0")) as f64;
    report.add(
        format!("{label}: RSS growth for the {objects} {name}s"),
        rss_mib_of(&target.pid) - idle,
        "MiB",
    );
    report.add(
        format!("{label}: their ({name}s') LIST's size"),
        json / f64::from(1 << 20),
        "MiB",
    );
    let (status, _) = target.send(
        &agent,
        "DELETE",
        &format!("/api/v1/namespaces/{namespace}"),
        None,
    );
    assert!(
        status == 200 || status == 202,
        "{label}: deleting the namespace: {status}"
    );
    (creates, gets, consistent)
}

/// Starts the release server with `args` (its storage) and TLS, tokens, RBAC and a
/// `Metadata` audit log, as the peer runs; returns the process and how to reach it (its
/// rows named `label`).
fn start_kapi(pki: &pki::Pki, label: &str, args: &[String]) -> (Child, Target) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kapi-server"))
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .args(pki.server_flags())
        .args(pki.audit_flags())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starting kapi-server");
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let base = loop {
        let line = (lines.next())
            .expect("kapi-server exited before listening")
            .expect("reading kapi-server's stdout");
        if let Some(addr) = line.strip_prefix("listening on https://") {
            break format!("https://{}", addr.trim());
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    let target = Target {
        label: label.into(),
        base,
        ca: pki.ca_pem(),
        token: pki::ADMIN_TOKEN.into(),
        pid: child.id().to_string(),
    };
    let agent = target.agent();
    let deadline = Instant::now() + Duration::from_secs(60);
    while target.send(&agent, "GET", "/readyz", None).0 != 200 {
        assert!(Instant::now() < deadline, "kapi never got ready");
        std::thread::sleep(Duration::from_millis(5));
    }
    (child, target)
}

/// Installs WebApp in the peer (once per peer: kept if present) and waits until it is
/// established.
fn install_crd(peer: &Target) {
    let agent = peer.agent();
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let named = format!("{path}/webapps.apps.example.dev");
    if peer.send(&agent, "GET", &named, None).0 != 200 {
        let crd = webapp_crd::webapp_crd(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")));
        let (status, answer) = peer.send(&agent, "POST", path, Some(&crd.to_string()));
        assert_eq!(status, 201, "installing the WebApp CRD: {answer}");
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, crd) = peer.send(&agent, "GET", &named, None);
        let conditions = crd["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if conditions
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the WebApp CRD never got established"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
