//! Real kubectl binaries, run against a [`Server`] in a sealed environment.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use super::Table;
use super::server::{Log, Server};

/// How long one kubectl command may take before it is killed and the test fails. Each of
/// its requests is bounded by `--request-timeout` already; this catches waits (`delete`
/// waits for the object to go).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

const EMPTY_KUBECONFIG: &str =
    "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n";

/// One test per scenario and kubectl version: `for_both_versions! { scenario =>
/// kubectl_1_32_scenario, kubectl_1_20_scenario; }` runs `scenario(Version::V1_32)` and
/// `scenario(Version::V1_20)` as two tests.
#[allow(unused_macros)]
macro_rules! for_both_versions {
    ($($scenario:ident => $v1_32:ident, $v1_20:ident;)*) => {$(
        #[test]
        fn $v1_32() {
            $scenario($crate::support::Version::V1_32);
        }

        #[test]
        fn $v1_20() {
            $scenario($crate::support::Version::V1_20);
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use for_both_versions;

/// Each test on the embedded store and, with the `etcd` feature, again in `mod etcd` on an
/// etcd of its own: `on_both_backends! { test => scenario(args...); }` runs
/// `scenario(args..., Backend::Embedded)` as `test` and `scenario(args..., Backend::Etcd)`
/// as `etcd::test`. The scenario starts its server with `Server::start_on(backend)`.
/// One invocation per test file (it defines `mod etcd`).
#[allow(unused_macros)]
macro_rules! on_both_backends {
    ($($test:ident => $scenario:ident($($arg:expr),* $(,)?);)*) => {
        $(
            #[test]
            fn $test() {
                $scenario($($arg,)* $crate::support::Backend::Embedded);
            }
        )*

        /// The same tests with `--storage etcd`.
        #[cfg(feature = "etcd")]
        mod etcd {
            #[allow(unused_imports)]
            use super::*;

            $(
                #[test]
                fn $test() {
                    $scenario($($arg,)* $crate::support::Backend::Etcd);
                }
            )*
        }
    };
}
#[allow(unused_imports)]
pub(crate) use on_both_backends;

/// A kubectl release the tests drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Version {
    /// The current client (`$KAPI_KUBECTL`, else `/usr/bin/kubectl`).
    V1_32,
    /// The oldest client we support: Debian bookworm's `kubernetes-client`
    /// (`$KAPI_KUBECTL_1_20`, else where `cargo xtask test` unpacks it).
    V1_20,
}

impl Version {
    /// `kubectl 1.32`.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Version::V1_32 => "kubectl 1.32",
            Version::V1_20 => "kubectl 1.20",
        }
    }

    fn env_var(self) -> &'static str {
        match self {
            Version::V1_32 => "KAPI_KUBECTL",
            Version::V1_20 => "KAPI_KUBECTL_1_20",
        }
    }

    fn git_version_prefix(self) -> &'static str {
        match self {
            Version::V1_32 => "v1.32.",
            Version::V1_20 => "v1.20.",
        }
    }

    /// Where it is when the environment does not say (the paths `cargo xtask test` uses).
    fn default_path(self) -> PathBuf {
        match self {
            Version::V1_32 => {
                // `/usr/bin/kubectl` may be the Google Cloud SDK's dispatcher, which runs the
                // `kubectl.1.NN` beside it that matches the server: pin 1.32 instead.
                let kubectl = PathBuf::from("/usr/bin/kubectl");
                (kubectl.canonicalize().ok())
                    .and_then(|real| Some(real.parent()?.join("kubectl.1.32")))
                    .filter(|pinned| pinned.is_file())
                    .unwrap_or(kubectl)
            }
            Version::V1_20 => Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../target/tools/kubectl-1.20/usr/bin/kubectl"),
        }
    }

    /// The binary, checked once per test process to be this version. Panics, naming
    /// `cargo xtask test` (which installs both), when it is missing or another version.
    pub(crate) fn binary(self) -> &'static Path {
        static V1_32: OnceLock<PathBuf> = OnceLock::new();
        static V1_20: OnceLock<PathBuf> = OnceLock::new();
        let cell = match self {
            Version::V1_32 => &V1_32,
            Version::V1_20 => &V1_20,
        };
        cell.get_or_init(|| self.locate())
    }

    fn locate(self) -> PathBuf {
        let (path, from) = match std::env::var_os(self.env_var()) {
            Some(path) => (PathBuf::from(path), format!("${}", self.env_var())),
            None => (self.default_path(), "its default path".to_owned()),
        };
        let missing = |why: String| -> ! {
            panic!(
                "{} is missing: {} ({from}) {why}.\nRun `cargo xtask test` once: it installs \
                 kubectl 1.32 and unpacks kubectl 1.20 into target/tools, and exports \
                 ${} for the tests.",
                self.label(),
                path.display(),
                self.env_var(),
            )
        };
        let output = Command::new(&path)
            .args(["version", "--client", "-o", "json"])
            .env_clear()
            .output()
            .unwrap_or_else(|e| missing(format!("cannot run: {e}")));
        let version: Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
        let git_version = version["clientVersion"]["gitVersion"].as_str();
        match git_version {
            Some(v) if v.starts_with(self.git_version_prefix()) => path,
            Some(v) => missing(format!("is {v}")),
            None => missing(format!(
                "did not report its version: {}",
                String::from_utf8_lossy(&output.stderr)
            )),
        }
    }
}

/// The path of a fixture in `server/tests/manifests/`.
#[track_caller]
pub(crate) fn manifest(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/manifests")
        .join(name);
    assert!(path.is_file(), "no manifest {}", path.display());
    path.display().to_string()
}

/// One kubectl release pointed at one server, in an environment of its own: a temporary
/// `HOME` and `KUBECONFIG`, its own discovery cache, no variable of the machine's.
pub(crate) struct Kubectl {
    pub version: Version,
    binary: &'static Path,
    server: String,
    home: TempDir,
    server_log: Log,
    /// Connection and credential flags (`--certificate-authority`, `--token`, ...).
    credentials: Vec<String>,
}

impl Kubectl {
    /// kubectl as the server's administrator (a secure server's CA and admin token), or
    /// with no credentials for a plain one.
    pub(crate) fn new(version: Version, server: &Server) -> Kubectl {
        let credentials = match server.access() {
            Some(access) => vec![
                format!("--certificate-authority={}", access.ca.display()),
                format!("--token={}", access.token),
            ],
            None => Vec::new(),
        };
        Kubectl::with_credentials(version, server, credentials)
    }

    /// `--certificate-authority` of a secure server.
    fn trusting(server: &Server) -> String {
        let access = server.access().expect("a secure server");
        format!("--certificate-authority={}", access.ca.display())
    }

    /// kubectl of a secure server authenticating with `token`.
    pub(crate) fn with_token(version: Version, server: &Server, token: &str) -> Kubectl {
        let credentials = vec![Kubectl::trusting(server), format!("--token={token}")];
        Kubectl::with_credentials(version, server, credentials)
    }

    /// kubectl of a secure server authenticating with a client certificate and its key.
    pub(crate) fn with_certificate(
        version: Version,
        server: &Server,
        (cert, key): &(std::path::PathBuf, std::path::PathBuf),
    ) -> Kubectl {
        let credentials = vec![
            Kubectl::trusting(server),
            format!("--client-certificate={}", cert.display()),
            format!("--client-key={}", key.display()),
        ];
        Kubectl::with_credentials(version, server, credentials)
    }

    /// kubectl of a server this harness did not start (the peer kube-apiserver), at `url`
    /// with `credentials` (`--token=...`, `--certificate-authority=...`).
    pub(crate) fn at(version: Version, url: &str, credentials: Vec<String>) -> Kubectl {
        Kubectl::build(version, url.to_owned(), Log::default(), credentials)
    }

    fn with_credentials(version: Version, server: &Server, credentials: Vec<String>) -> Kubectl {
        Kubectl::build(version, server.url(), server.log(), credentials)
    }

    fn build(
        version: Version,
        server: String,
        server_log: Log,
        credentials: Vec<String>,
    ) -> Kubectl {
        let home = tempfile::Builder::new()
            .prefix("kapi-kubectl-")
            .tempdir()
            .expect("creating kubectl's home");
        // An empty configuration, so that only the flags speak (and kubectl 1.20 does not
        // warn that there is none).
        std::fs::write(home.path().join("kubeconfig"), EMPTY_KUBECONFIG)
            .expect("writing kubectl's configuration");
        Kubectl {
            version,
            binary: version.binary(),
            server,
            home,
            server_log,
            credentials,
        }
    }

    /// Runs `kubectl ARGS` and returns what happened, whatever it was.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        self.run_with_env(&[], args)
    }

    /// Runs `kubectl ARGS` with extra environment variables (`KUBE_EDITOR` for
    /// `kubectl edit`).
    pub(crate) fn run_with_env(&self, env: &[(&str, &str)], args: &[&str]) -> Run {
        let home = self.home.path();
        let mut global = vec![
            format!("--server={}", self.server),
            format!("--cache-dir={}", home.join("cache").display()),
            "--request-timeout=30s".to_owned(),
        ];
        global.extend(self.credentials.iter().cloned());
        let mut command = Command::new(self.binary);
        command
            .args(&global)
            .args(args)
            .env_clear()
            .env("HOME", home)
            .env("KUBECONFIG", home.join("kubeconfig"))
            .env("PATH", "/usr/bin:/bin")
            .envs(env.iter().copied())
            .current_dir(home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let line = format!(
            "{} {} {}",
            self.binary.display(),
            global.join(" "),
            args.iter()
                .map(|a| shell_word(a))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let started = Instant::now();
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("running {line}: {e}"));
        let stdout = reader(child.stdout.take().expect("piped stdout"));
        let stderr = reader(child.stderr.take().expect("piped stderr"));
        let status = loop {
            if let Some(status) = child.try_wait().expect("waiting for kubectl") {
                break Some(status);
            }
            if started.elapsed() > COMMAND_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let run = Run {
            command: line,
            status,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
            elapsed: started.elapsed(),
            server_log: self.server_log.clone(),
        };
        if status.is_none() {
            run.fail(&format!(
                "kubectl still ran after {COMMAND_TIMEOUT:?}: killed"
            ));
        }
        run
    }

    /// Runs `kubectl ARGS`, which must succeed.
    #[track_caller]
    pub(crate) fn ok(&self, args: &[&str]) -> Run {
        let run = self.run(args);
        run.check(run.succeeded(), "kubectl should succeed");
        run
    }

    /// Runs `kubectl ARGS`, which must fail.
    #[track_caller]
    pub(crate) fn fails(&self, args: &[&str]) -> Run {
        let run = self.run(args);
        run.check(!run.succeeded(), "kubectl should fail");
        run
    }

    /// Writes `contents` to `name` in kubectl's temporary directory; returns its path.
    pub(crate) fn write_file(&self, name: &str, contents: &str) -> String {
        let path = self.home.path().join(name);
        std::fs::write(&path, contents).expect("writing a file for kubectl");
        path.display().to_string()
    }
}

fn reader(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_=./:,@%+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// What one kubectl command did. Its checks panic with the full command, both outputs
/// and the tail of the server's log.
pub(crate) struct Run {
    pub command: String,
    /// `None` when it was killed for taking too long.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    server_log: Log,
}

impl Run {
    pub(crate) fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// Panics with `what` and everything about this run.
    #[track_caller]
    pub(crate) fn fail(&self, what: &str) -> ! {
        panic!("{what}\n{self}")
    }

    /// Panics with `what` and everything about this run unless `ok`.
    #[track_caller]
    pub(crate) fn check(&self, ok: bool, what: &str) -> &Run {
        if !ok {
            self.fail(what);
        }
        self
    }

    /// Checks that stdout contains `text`.
    #[track_caller]
    pub(crate) fn stdout_has(&self, text: &str) -> &Run {
        self.check(
            self.stdout.contains(text),
            &format!("stdout should contain {text:?}"),
        )
    }

    /// Checks that stdout, without surrounding whitespace, is `text`.
    #[track_caller]
    pub(crate) fn stdout_is(&self, text: &str) -> &Run {
        self.check(
            self.stdout.trim() == text,
            &format!("stdout should be {text:?}"),
        )
    }

    /// Checks that stderr contains `text`.
    #[track_caller]
    pub(crate) fn stderr_has(&self, text: &str) -> &Run {
        self.check(
            self.stderr.contains(text),
            &format!("stderr should contain {text:?}"),
        )
    }

    /// Checks that stderr does not contain `text`.
    #[track_caller]
    pub(crate) fn stderr_lacks(&self, text: &str) -> &Run {
        self.check(
            !self.stderr.contains(text),
            &format!("stderr should not contain {text:?}"),
        )
    }

    /// stdout as a kubectl table.
    #[track_caller]
    pub(crate) fn table(&self) -> Table {
        Table::parse(&self.stdout).unwrap_or_else(|| self.fail("stdout should be a table"))
    }

    /// stdout as JSON.
    #[track_caller]
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| self.fail(&format!("stdout should be JSON: {e}")))
    }
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = match self.status {
            Some(status) => status.to_string(),
            None => "killed (timeout)".to_owned(),
        };
        writeln!(f, "$ {}", self.command)?;
        writeln!(f, "({status}, {:.2?})", self.elapsed)?;
        writeln!(f, "--- stdout ---\n{}", self.stdout.trim_end())?;
        writeln!(f, "--- stderr ---\n{}", self.stderr.trim_end())?;
        write!(f, "--- server log (tail) ---\n{}", self.server_log.tail(40))
    }
}

/// A kubectl command left running (`get -w`): its stdout lines as they come, killed when
/// dropped.
pub(crate) struct Spawned {
    pub command: String,
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
    server_log: Log,
}

impl Kubectl {
    /// Starts `kubectl ARGS` without waiting for it.
    pub(crate) fn spawn(&self, args: &[&str]) -> Spawned {
        let home = self.home.path();
        let mut global = vec![
            format!("--server={}", self.server),
            format!("--cache-dir={}", home.join("cache").display()),
        ];
        global.extend(self.credentials.iter().cloned());
        let mut command = Command::new(self.binary);
        command
            .args(&global)
            .args(args)
            .env_clear()
            .env("HOME", home)
            .env("KUBECONFIG", home.join("kubeconfig"))
            .env("PATH", "/usr/bin:/bin")
            .current_dir(home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let line = format!(
            "{} {} {}",
            self.binary.display(),
            global.join(" "),
            args.iter()
                .map(|a| shell_word(a))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("running {line}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = reader(child.stderr.take().expect("piped stderr"));
        Spawned {
            command: line,
            child,
            lines: rx,
            seen: Vec::new(),
            stderr: Some(stderr),
            server_log: self.server_log.clone(),
        }
    }
}

impl Spawned {
    /// Waits for a stdout line satisfying `matches`, returning it; panics after `timeout`
    /// with everything printed so far.
    #[track_caller]
    pub(crate) fn wait_line(
        &mut self,
        timeout: Duration,
        what: &str,
        matches: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if matches(&line) {
                        return line;
                    }
                }
                Err(_) => self.fail(&format!("no line with {what} within {timeout:?}")),
            }
        }
    }

    /// Waits for kubectl to exit on its own (a watch the server ended), returning its
    /// status; panics after `timeout`.
    #[track_caller]
    pub(crate) fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        match super::wait_exit(&mut self.child, timeout) {
            Some(status) => status,
            None => self.fail(&format!("kubectl still runs after {timeout:?}")),
        }
    }

    /// Everything printed on stdout so far.
    pub(crate) fn seen(&self) -> &[String] {
        &self.seen
    }

    #[track_caller]
    fn fail(&mut self, why: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stderr = (self.stderr.take())
            .and_then(|s| s.join().ok())
            .unwrap_or_default();
        panic!(
            "{why}\n$ {}\n--- stdout so far ---\n{}\n--- stderr ---\n{stderr}\n--- server log ---\n{}",
            self.command,
            self.seen.join("\n"),
            self.server_log.tail(60)
        );
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
