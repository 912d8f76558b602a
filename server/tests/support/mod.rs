//! The end-to-end harness shared by the integration tests: the real `kapi-server` binary
//! ([`Server`]), real kubectl binaries ([`Kubectl`]), scripts using the official Python
//! client ([`python`]) and a raw HTTP client ([`http`]) for what no client covers.
//!
//! Nothing here sleeps for a fixed time: every wait polls a condition until a deadline, and
//! every failure message carries what is needed to understand it (the full command, its
//! output, the tail of the server's log).

// Each test crate compiles this module and uses a different part of it.
#![allow(dead_code)]

pub(crate) mod crontabs;
pub(crate) mod etcd;
pub(crate) mod http;
pub(crate) mod kubectl;
pub(crate) mod pki;
pub(crate) mod python;
pub(crate) mod server;
pub(crate) mod table;
pub(crate) mod webapp_crd;
pub(crate) mod webapps;
pub(crate) mod webhook;

#[allow(unused_imports)]
pub(crate) use kubectl::{Kubectl, Run, Version, manifest};
#[allow(unused_imports)]
pub(crate) use kubectl::{for_both_versions, on_both_backends};
#[allow(unused_imports)]
pub(crate) use server::{Backend, Server};
#[allow(unused_imports)]
pub(crate) use table::Table;

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// Now as kube writes a `Time`: RFC 3339, UTC, seconds.
#[allow(dead_code)]
pub(crate) fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Now as kube writes a `MicroTime`: RFC 3339, UTC, microseconds.
#[allow(dead_code)]
pub(crate) fn now_micro() -> String {
    humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string()
}

/// The peer kube-apiserver of `shared/peer/` (running, its directory in `KAPI_PEER_DIR`):
/// its URL, its CA certificate file and its administrator's token.
pub(crate) struct Peer {
    /// `https://127.0.0.1:6443`.
    pub url: &'static str,
    /// The CA certificate file.
    pub ca: std::path::PathBuf,
    /// The first token of its token file (an administrator).
    pub token: String,
}

impl Peer {
    /// The peer `KAPI_PEER_DIR` names.
    pub(crate) fn from_env() -> Peer {
        let dir = std::path::PathBuf::from(
            std::env::var("KAPI_PEER_DIR").expect("KAPI_PEER_DIR names the peer's directory"),
        );
        let tokens =
            std::fs::read_to_string(dir.join("pki/tokens.csv")).expect("the peer's tokens");
        let token = (tokens.split(',').next().expect("the admin token").trim()).to_owned();
        Peer {
            url: "https://127.0.0.1:6443",
            ca: dir.join("pki/ca.crt"),
            token,
        }
    }

    /// A client of the peer as its administrator.
    pub(crate) fn client(&self) -> http::Client {
        let ca = std::fs::read(&self.ca).expect("the peer's CA");
        http::Client::with_tls(self.url, &ca, &self.token)
    }
}

/// A kubeconfig file naming the server at `url` (its certificate signed by the CA file
/// `ca`) and a user with `token`, in a directory that outlives the test.
pub(crate) fn kubeconfig(url: &str, ca: &std::path::Path, token: &str) -> String {
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: core\n\
         clusters: [{{name: core, cluster: {{server: \"{url}\", certificate-authority: \"{}\"}}}}]\n\
         users: [{{name: user, user: {{token: {token}}}}}]\n\
         contexts: [{{name: core, context: {{cluster: core, user: user}}}}]\n",
        ca.display(),
    );
    let dir = tempfile::Builder::new()
        .prefix("kapi-kubeconfig-")
        .tempdir()
        .expect("a directory for the kubeconfig")
        .keep();
    let path = dir.join("kubeconfig");
    std::fs::write(&path, kubeconfig).expect("writing the kubeconfig");
    path.display().to_string()
}

/// Polls `condition` every few milliseconds until it returns `Some`, or panics with `what`
/// (and `context()`, computed only then) once `timeout` has passed.
#[track_caller]
pub(crate) fn wait_for<T>(
    timeout: Duration,
    what: &str,
    context: impl Fn() -> String,
    mut condition: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(2);
    loop {
        if let Some(value) = condition() {
            return value;
        }
        if Instant::now() >= deadline {
            panic!(
                "timed out after {timeout:?} waiting for {what}\n{}",
                context()
            );
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Runs `kapi-server` with `args` (on a free port, in a data directory of its own) as a
/// server that should refuse to start: its exit code and what it wrote to stderr. One
/// that starts after all is killed after 30 s, and its code is `None`.
pub(crate) fn start_refused(args: &[&str]) -> (Option<i32>, String) {
    let data = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kapi-server"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let exit = wait_exit(&mut child, Duration::from_secs(30));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (exit.and_then(|status| status.code()), stderr)
}

/// Waits up to `timeout` for `child` to exit and returns its status; past the deadline,
/// kills and reaps it and returns `None`, so that a process that hangs fails its test
/// instead of blocking it.
pub(crate) fn wait_exit(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("waiting for a child process") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The value of `key` in the embedded store of a stopped `server` (what the tests of
/// repairs change, as a server killed mid-write could leave it).
pub(crate) fn stored_key(server: &Server, key: &str) -> Vec<u8> {
    use kapi::storage::Storage as _;
    let store =
        kapi::storage::embedded::EmbeddedStorage::open(server.data_dir()).expect("the store opens");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let kv = runtime
        .block_on(store.get(key, 0))
        .expect("a read")
        .unwrap_or_else(|| panic!("{key} is stored"));
    kv.value.to_vec()
}

/// Replaces the value of `key` in the embedded store of a stopped `server`.
pub(crate) fn store_key(server: &Server, key: &str, value: &[u8]) {
    use kapi::storage::Storage as _;
    let store =
        kapi::storage::embedded::EmbeddedStorage::open(server.data_dir()).expect("the store opens");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let kv = store.get(key, 0).await.expect("a read").expect("stored");
        store
            .update(key, value.to_vec().into(), kv.mod_revision)
            .await
            .expect("a write");
    });
}
