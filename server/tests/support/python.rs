//! Python scripts (`server/tests/python/*.py`) driving a [`Server`] with the official
//! Python Kubernetes client (`kubernetes` on PyPI), run by `python3` from `PATH`.
//!
//! A script gets the server's URL as its first argument, prints its results as JSON, one
//! object per line, and exits non-zero with a message on stderr when a check fails. The
//! Rust side reads the lines as they come ([`Script::next`], for scripts that wait for
//! changes the test makes), then the rest once it has exited ([`Script::finish`]).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::server::{Log, Server};

/// The client the tests are written against; `cargo xtask test` installs exactly this
/// (xtask's `PYTHON_KUBERNETES`, which a test there keeps equal to this).
pub(crate) const PYTHON_KUBERNETES: &str = "kubernetes==37.0.2";

/// How long one script may run before it is killed and the test fails.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

/// The version of the `kubernetes` module `python3` imports, checked once per test
/// process. Panics, saying how to install it, when the import fails: the tests never skip.
pub(crate) fn client_version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        let missing = |why: String| -> ! {
            panic!(
                "the Python Kubernetes client is missing: `python3 -c \"import kubernetes\"` \
                 {why}\nRun `cargo xtask test` once (it installs it), or \
                 `python3 -m pip install {PYTHON_KUBERNETES}`."
            )
        };
        let output = Command::new("python3")
            .args(["-c", "import kubernetes; print(kubernetes.__version__)"])
            .output()
            .unwrap_or_else(|e| missing(format!("cannot run: {e}")));
        if !output.status.success() {
            // The traceback's last line says why (`ModuleNotFoundError: ...`).
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
            missing(format!("failed ({}): {last}", output.status));
        }
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    })
}

/// A running script.
pub(crate) struct Script {
    name: String,
    child: Child,
    lines: Receiver<String>,
    /// Every line read so far, for failure messages.
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
    /// The threads reading stdout and stderr, joined once the process has exited.
    readers: Vec<JoinHandle<()>>,
    started: Instant,
    server_log: Log,
}

impl Script {
    /// Starts `python3 server/tests/python/NAME SERVER_URL ARGS...`.
    #[track_caller]
    pub(crate) fn start(name: &str, server: &Server, args: &[&str]) -> Script {
        client_version();
        let path = scripts_dir().join(name);
        assert!(path.is_file(), "no Python script {}", path.display());
        let mut command = Command::new("python3");
        // A secure server: its CA and the administrator's token (`kapi.connect` reads
        // them).
        if let Some(access) = server.access() {
            command
                .env("KAPI_CA_FILE", &access.ca)
                .env("KAPI_TOKEN", &access.token);
        }
        let mut child = command
            .arg(&path)
            .arg(server.url())
            .args(args)
            // Keep `__pycache__` out of the source tree.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONUNBUFFERED", "1")
            .current_dir(scripts_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("running python3 {}: {e}", path.display()));

        let (line_tx, lines) = mpsc::channel();
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().expect("piped stdout");
        let seen = Arc::clone(&stdout);
        let stdout_reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                seen.lock().unwrap().push(line.clone());
                if line_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err = child.stderr.take().expect("piped stderr");
        let collected = Arc::clone(&stderr);
        let stderr_reader = std::thread::spawn(move || {
            let mut chunk = [0; 4096];
            while let Ok(n @ 1..) = err.read(&mut chunk) {
                collected
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        });
        Script {
            name: name.to_owned(),
            child,
            lines,
            stdout,
            stderr,
            readers: vec![stdout_reader, stderr_reader],
            started: Instant::now(),
            server_log: server.log(),
        }
    }

    /// Runs the script to its end and returns its result lines.
    #[track_caller]
    pub(crate) fn run(name: &str, server: &Server) -> Vec<Value> {
        Script::start(name, server, &[]).finish()
    }

    /// The next result line, waiting at most `timeout`. Panics with the script's output
    /// when none comes (it ended, failed, or is still silent).
    #[track_caller]
    pub(crate) fn next(&mut self, timeout: Duration) -> Value {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => self.parse(&line),
            Err(RecvTimeoutError::Timeout) => {
                self.fail(&format!("no result line within {timeout:?}"))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.wait_exit();
                self.fail(&format!("it ended ({status}) instead of printing a line"))
            }
        }
    }

    /// Waits for the script to exit, checks that it succeeded and returns the result lines
    /// not yet taken with [`Script::next`].
    #[track_caller]
    pub(crate) fn finish(mut self) -> Vec<Value> {
        let status = self.wait_exit();
        if !status.success() {
            self.fail(&format!("it failed ({status})"));
        }
        let rest: Vec<String> = self.lines.try_iter().collect();
        rest.iter().map(|line| self.parse(line)).collect()
    }

    /// The exit status, once the process has exited and its output is read to the end.
    /// Kills it (and fails) when it runs too long.
    #[track_caller]
    fn wait_exit(&mut self) -> ExitStatus {
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waiting for python3") {
                break status;
            }
            if self.started.elapsed() > SCRIPT_TIMEOUT {
                self.fail(&format!("it ran longer than {SCRIPT_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        self.join_readers();
        status
    }

    /// The readers end at end of file, which comes when the process has exited.
    fn join_readers(&mut self) {
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
    }

    #[track_caller]
    fn parse(&mut self, line: &str) -> Value {
        serde_json::from_str(line)
            .unwrap_or_else(|e| self.fail(&format!("a result line is not JSON ({e}): {line}")))
    }

    /// Kills the script if it still runs, then panics with all it printed.
    #[track_caller]
    fn fail(&mut self, why: &str) -> ! {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        self.join_readers();
        panic!(
            "python3 {} (kubernetes {}): {why}\n--- stdout ---\n{}\n--- stderr ---\n{}\n\
             --- server output ---\n{}",
            self.name,
            client_version(),
            self.stdout.lock().unwrap().join("\n"),
            self.stderr.lock().unwrap(),
            self.server_log.tail(60),
        )
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        // A test that panicked mid-way leaves no script behind.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python")
}
