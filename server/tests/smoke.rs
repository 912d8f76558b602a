//! The real binary, end to end over raw HTTP: it starts on a free port and says which, gets
//! ready, serves create / get / list / delete, stops with exit 0 on SIGTERM, and starts
//! again on the same data directory with the data there; it serves HTTPS with the given
//! certificate; flag errors exit with 2.
//!
//! Self-contained on purpose (no `support` module): it checks the contract the kubectl
//! harness relies on (the `listening on http://ADDR` line, `/readyz`).
//!
//! `tests/tls/` holds a test-only CA (`ca.pem`) and a server certificate for `127.0.0.1`
//! signed by it (`server.pem`, `server-key.pem`), valid until 2126.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(30);
const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";

/// A running server, killed if still running when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
    /// `http` or `https`.
    scheme: &'static str,
    agent: ureq::Agent,
    /// What the server printed on stdout after the listening line.
    stdout: mpsc::Receiver<String>,
}

impl Server {
    /// Starts the binary on `127.0.0.1:0` and waits (polling, with a deadline) for the
    /// listening line, then for `/readyz` to answer 200.
    fn start(data_dir: &Path) -> Server {
        Server::start_with(data_dir, &[])
    }

    /// [`Server::start`] with more flags; HTTPS (trusting `tests/tls/ca.pem`) when they
    /// name a certificate.
    fn start_with(data_dir: &Path, flags: &[&str]) -> Server {
        let started = Instant::now();
        let tls = flags.contains(&"--tls-cert-file");
        let mut child = Command::new(env!("CARGO_BIN_EXE_kapi-server"))
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .args(flags)
            // Warnings and errors only: the test's output stays readable.
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting kapi-server");
        let (lines, stdout) = mpsc::channel();
        let out = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let first = stdout
            .recv_timeout(DEADLINE)
            .expect("a first line on stdout");
        let scheme = if tls { "https" } else { "http" };
        let addr = (first.strip_prefix(&format!("listening on {scheme}://")))
            .and_then(|addr| addr.trim().parse().ok())
            .unwrap_or_else(|| panic!("the first line names the address: {first:?}"));
        let server = Server {
            child,
            addr,
            scheme,
            agent: agent(tls),
            stdout,
        };
        let deadline = Instant::now() + DEADLINE;
        loop {
            if matches!(server.try_get("/readyz"), Some((200, _))) {
                break;
            }
            assert!(Instant::now() < deadline, "/readyz did not answer 200");
            std::thread::sleep(Duration::from_millis(5));
        }
        eprintln!("ready after {:?}", started.elapsed());
        server
    }

    fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme, self.addr)
    }

    /// `GET`, `None` when the server cannot be reached.
    fn try_get(&self, path: &str) -> Option<(u16, String)> {
        let response = self.agent.get(self.url(path)).call().ok()?;
        read(response)
    }

    /// Sends a request, with a JSON body when given; returns the status and the body.
    fn send(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let agent = &self.agent;
        let url = self.url(path);
        let response = match (method, body) {
            ("GET", None) => agent.get(url).call(),
            ("DELETE", None) => agent.delete(url).call(),
            ("POST", Some(body)) => agent
                .post(url)
                .header("Content-Type", "application/json")
                .send(body.to_string()),
            (method, body) => panic!("no such request: {method} {body:?}"),
        };
        let (status, text) = read(response.expect("a response")).expect("a body");
        let json = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {text}"));
        (status, json)
    }

    /// Sends SIGTERM and waits (with a deadline) for the process to exit.
    fn terminate(mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().expect("waiting for the server") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "no exit within {DEADLINE:?} of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client that reports every status, on fresh connections; trusting only the test CA
/// with `tls`.
fn agent(tls: bool) -> ureq::Agent {
    let mut config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .max_idle_connections(0);
    if tls {
        let ca = std::fs::read(tls_file("ca.pem")).expect("reading the test CA");
        let ca = ureq::tls::Certificate::from_pem(&ca).expect("the test CA is PEM");
        let roots = ureq::tls::RootCerts::Specific(Arc::new(vec![ca]));
        config = config.tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build());
    }
    ureq::Agent::new_with_config(config.build())
}

fn tls_file(name: &str) -> String {
    format!("{}/tests/tls/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// [`Server::start_with`] over HTTPS with the test certificate, and `flags` besides.
fn start_https(data_dir: &Path, flags: &[&str]) -> Server {
    let (cert, key) = (tls_file("server.pem"), tls_file("server-key.pem"));
    let tls = ["--tls-cert-file", &cert, "--tls-private-key-file", &key];
    Server::start_with(data_dir, &[&tls[..], flags].concat())
}

fn read(mut response: ureq::http::Response<ureq::Body>) -> Option<(u16, String)> {
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().ok()?;
    Some((status, body))
}

fn webapp(name: &str) -> Value {
    json!({
        "apiVersion": "apps.example.dev/v1",
        "kind": "WebApp",
        "metadata": {"name": name},
        "spec": {"container": {"image": "nginx:1.27"}},
    })
}

#[test]
fn serves_crud_stops_on_sigterm_and_restarts_with_its_data() {
    let data_dir = tempfile::tempdir().expect("a data directory");
    let server = Server::start(data_dir.path());
    let kubectl_line = server
        .stdout
        .recv_timeout(DEADLINE)
        .expect("a kubectl line");
    assert!(
        kubectl_line.contains(&format!("kubectl --server=http://{}", server.addr)),
        "{kubectl_line}"
    );

    let (status, created) = server.send("POST", WEBAPPS, Some(webapp("web")));
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["metadata"]["namespace"], "default");

    let (status, object) = server.send("GET", &format!("{WEBAPPS}/web"), None);
    assert_eq!(status, 200, "{object}");
    assert_eq!(object["spec"]["container"]["image"], "nginx:1.27");

    let (status, list) = server.send("GET", "/apis/apps.example.dev/v1/webapps", None);
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["kind"], "WebAppList");
    let names: Vec<_> = (list["items"].as_array().expect("items").iter())
        .map(|item| item["metadata"]["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["web"]);

    let (status, deleted) = server.send("DELETE", &format!("{WEBAPPS}/web"), None);
    assert_eq!(status, 200, "{deleted}");
    let (status, missing) = server.send("GET", &format!("{WEBAPPS}/web"), None);
    assert_eq!(status, 404, "{missing}");
    assert_eq!(missing["reason"], "NotFound");

    let (status, kept) = server.send("POST", WEBAPPS, Some(webapp("kept")));
    assert_eq!(status, 201, "{kept}");
    let exit = server.terminate();
    assert!(exit.success(), "SIGTERM: {exit}");

    // The store was closed: a new server opens it and finds the object. (It also takes
    // kube-apiserver's name of `--compaction-interval`.)
    let server = Server::start_with(data_dir.path(), &["--etcd-compaction-interval", "1m"]);
    let (status, kept) = server.send("GET", &format!("{WEBAPPS}/kept"), None);
    assert_eq!(status, 200, "{kept}");
    let exit = server.terminate();
    assert!(exit.success(), "SIGTERM: {exit}");
}

#[test]
fn serves_https_with_the_given_certificate() {
    let data_dir = tempfile::tempdir().expect("a data directory");
    let server = start_https(data_dir.path(), &[]);
    let kubectl_line = server
        .stdout
        .recv_timeout(DEADLINE)
        .expect("a kubectl line");
    assert!(
        kubectl_line.contains(&format!("--server=https://{}", server.addr)),
        "{kubectl_line}"
    );
    let (status, version) = server.send("GET", "/version", None);
    assert_eq!(status, 200, "{version}");
    assert_eq!(version["gitVersion"], "v1.32.0-kapi");
    let exit = server.terminate();
    assert!(exit.success(), "SIGTERM: {exit}");
}

/// A client that opens a TLS connection and never finishes its handshake is disconnected
/// after `--read-header-timeout` (Go's servers bound the handshake by it too); others are
/// served meanwhile.
#[test]
fn a_client_that_never_finishes_its_tls_handshake_is_disconnected() {
    use std::io::{Read, Write};

    let data_dir = tempfile::tempdir().expect("a data directory");
    let server = start_https(data_dir.path(), &["--read-header-timeout", "1s"]);
    let mut stalled = std::net::TcpStream::connect(server.addr).expect("connecting");
    // Far past the deadline: the read ends because the server closes, not because of it.
    (stalled.set_read_timeout(Some(DEADLINE))).expect("a read timeout");
    // The first bytes of a ClientHello's record header, and nothing more.
    stalled.write_all(&[0x16, 0x03, 0x01]).expect("writing");
    let (status, version) = server.send("GET", "/version", None);
    assert_eq!(status, 200, "{version}");
    let started = Instant::now();
    let mut answer = Vec::new();
    let closed = stalled.read_to_end(&mut answer);
    assert!(closed.is_ok(), "the connection stayed open: {closed:?}");
    assert!(answer.is_empty(), "{answer:?}");
    assert!(started.elapsed() < DEADLINE, "{:?}", started.elapsed());
}

#[test]
fn flag_errors_exit_with_2() {
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_kapi-server"))
            .args(args)
            .output()
            .expect("running kapi-server");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    // Without the `etcd` feature, `--storage etcd` says how to build with it.
    if !cfg!(feature = "etcd") {
        let (code, stderr) = run(&[
            "--storage",
            "etcd",
            "--etcd-servers",
            "http://127.0.0.1:2379",
        ]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("built without etcd support") && stderr.contains("--features etcd"),
            "{stderr}"
        );
    }
    let (code, stderr) = run(&["--storage", "etcd"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--etcd-servers"), "{stderr}");
    // Naming an etcd cluster while asking for the embedded store is a contradiction.
    let (code, stderr) = run(&[
        "--storage",
        "embedded",
        "--etcd-servers",
        "http://127.0.0.1:2379",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--etcd-servers cannot be used with --storage embedded"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--tls-cert-file", "server.crt"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--tls-private-key-file"), "{stderr}");
    let (code, stderr) = run(&["--event-ttl", "10ms"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--event-ttl") && stderr.contains("at least 1s"),
        "{stderr}"
    );
}
