//! Real kubectl 1.32 against the real binary, for the requests it sends as protobuf: its
//! generators for built-in kinds (`kubectl create namespace`, `kubectl create configmap`)
//! post `application/vnd.kubernetes.protobuf` bodies, which the server decodes through the
//! kinds' protobuf descriptors.
//!
//! Self-contained, as `smoke.rs` is. kubectl is `$KAPI_KUBECTL`, else `/usr/bin/kubectl`
//! (pinned to the `kubectl.1.32` beside it when that is the Google Cloud SDK's dispatcher);
//! `cargo xtask test` installs it and sets the variable.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(30);

/// The server, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    /// Starts the binary on `127.0.0.1:0`, reads the address from its first line and waits
    /// for `/readyz`.
    fn start(data_dir: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kapi-server"))
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting kapi-server");
        let (lines, first) = mpsc::channel();
        let out = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                // Later lines are drained and dropped.
                let _ = lines.send(line);
            }
        });
        let line = first
            .recv_timeout(DEADLINE)
            .expect("a first line on stdout");
        let url = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the first line names the address: {line:?}"))
            .trim()
            .to_owned();
        let server = Server { child, url };
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(5)))
                .build(),
        );
        let deadline = Instant::now() + DEADLINE;
        loop {
            let ready = agent.get(format!("{}/readyz", server.url)).call();
            if ready.is_ok_and(|r| r.status() == 200) {
                return server;
            }
            assert!(Instant::now() < deadline, "/readyz did not answer 200");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// kubectl 1.32: `$KAPI_KUBECTL`, else `/usr/bin/kubectl` (or the `kubectl.1.32` the
/// Google Cloud SDK's dispatcher would pick among). Panics, naming `cargo xtask test`, when
/// there is none.
fn kubectl_binary() -> PathBuf {
    let path = match std::env::var_os("KAPI_KUBECTL") {
        Some(path) => PathBuf::from(path),
        None => {
            let kubectl = PathBuf::from("/usr/bin/kubectl");
            (kubectl.canonicalize().ok())
                .and_then(|real| Some(real.parent()?.join("kubectl.1.32")))
                .filter(|pinned| pinned.is_file())
                .unwrap_or(kubectl)
        }
    };
    assert!(
        path.is_file(),
        "kubectl 1.32 not found at {} (nor $KAPI_KUBECTL set): run the tests with \
         `cargo xtask test`, which installs it and sets KAPI_KUBECTL",
        path.display()
    );
    path
}

/// kubectl pointed at one server, with an empty kubeconfig and its own cache.
struct Kubectl {
    binary: PathBuf,
    server: String,
    dir: PathBuf,
}

impl Kubectl {
    fn new(server: &Server, dir: &Path) -> Kubectl {
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
        )
        .expect("writing an empty kubeconfig");
        Kubectl {
            binary: kubectl_binary(),
            server: server.url.clone(),
            dir: dir.to_owned(),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.binary)
            .arg(format!("--server={}", self.server))
            .arg(format!(
                "--kubeconfig={}",
                self.dir.join("kubeconfig").display()
            ))
            .arg(format!("--cache-dir={}", self.dir.join("cache").display()))
            .arg("--request-timeout=20s")
            .args(args)
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .output()
            .expect("running kubectl")
    }

    /// Runs kubectl, which must succeed; returns its stdout.
    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "kubectl {}: {}\nstdout: {stdout}\nstderr: {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }
}

#[test]
fn kubectl_creates_builtin_kinds_with_protobuf_bodies() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&dir.path().join("data"));
    let kubectl = Kubectl::new(&server, dir.path());

    let version = kubectl.ok(&["version", "--client"]);
    assert!(version.contains("v1.32."), "not kubectl 1.32: {version}");

    assert_eq!(
        kubectl.ok(&["create", "namespace", "team-a"]).trim(),
        "namespace/team-a created"
    );
    assert_eq!(
        kubectl
            .ok(&[
                "create",
                "configmap",
                "c1",
                "--from-literal=a=b",
                "-n",
                "team-a"
            ])
            .trim(),
        "configmap/c1 created"
    );
    assert_eq!(
        kubectl.ok(&[
            "get",
            "cm",
            "c1",
            "-n",
            "team-a",
            "-o",
            "jsonpath={.data.a}"
        ]),
        "b"
    );
    // Binary data travels as protobuf bytes and reads back as base64.
    let binary = dir.path().join("binary");
    std::fs::write(&binary, [0_u8, 1, 2, 0xff, b'\n']).expect("writing a binary file");
    kubectl.ok(&[
        "create",
        "configmap",
        "c2",
        &format!("--from-file=bin={}", binary.display()),
        "-n",
        "team-a",
    ]);
    assert_eq!(
        kubectl.ok(&[
            "get",
            "cm",
            "c2",
            "-n",
            "team-a",
            "-o",
            "jsonpath={.binaryData.bin}"
        ]),
        "AAEC/wo="
    );
    assert_eq!(
        kubectl.ok(&["get", "ns", "team-a", "-o", "jsonpath={.status.phase}"]),
        "Active"
    );

    // Errors come back as for JSON bodies.
    let again = kubectl.run(&["create", "namespace", "team-a"]);
    assert!(!again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains(r#"namespaces "team-a" already exists"#),
        "{stderr}"
    );
}
