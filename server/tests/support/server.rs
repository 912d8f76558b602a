//! The real `kapi-server` binary, on a free port and a temporary data directory, on the
//! embedded store or on etcd ([`Backend`]), with extra flags if asked.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::etcd::Etcd;
use super::http;

/// The store a test server runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// The embedded store in the server's temporary data directory.
    Embedded,
    /// A single-member etcd started for this server (needs the `etcd` feature).
    Etcd,
}

/// How long the server may take to print its address and then to answer `/readyz`.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The line the server prints on stdout once it listens (`listening on http://ADDR`, or
/// `https://`).
const LISTENING: &str = "listening on http";

/// A running `kapi-server`, killed (SIGKILL) when dropped. Its data directory lives as
/// long as this value, across [`Server::restart`]s.
pub(crate) struct Server {
    child: Option<Child>,
    addr: SocketAddr,
    data_dir: TempDir,
    log: Log,
    /// Flags beyond `--listen` and `--data-dir`, kept across restarts.
    args: Vec<String>,
    /// The etcd this server started for itself ([`Backend::Etcd`]); dropped after it.
    etcd: Option<Etcd>,
    /// How an administrator reaches a secure server ([`Server::start_secure`]).
    access: Option<Access>,
    /// A secure server's certificates and tokens, kept as long as it runs.
    pki: Option<super::pki::Pki>,
}

/// How to reach a secure server as its administrator: the CA that signed its certificate
/// and a token in `system:masters`.
#[derive(Clone, Debug)]
pub(crate) struct Access {
    /// The CA certificate's file.
    pub ca: std::path::PathBuf,
    /// Its PEM.
    pub ca_pem: Vec<u8>,
    /// The administrator's token.
    pub token: String,
}

impl Server {
    /// Starts the server on `127.0.0.1:0` with a fresh data directory and waits until
    /// `/readyz` answers 200.
    #[track_caller]
    pub(crate) fn start() -> Server {
        Server::start_with::<&str>(&[])
    }

    /// Starts the server on `backend`: for [`Backend::Etcd`], on an etcd member of its own.
    #[track_caller]
    pub(crate) fn start_on(backend: Backend) -> Server {
        Server::start_on_with::<&str>(backend, &[])
    }

    /// [`Server::start_on`] with extra flags (kept across restarts).
    #[track_caller]
    pub(crate) fn start_on_with<S: AsRef<str>>(backend: Backend, args: &[S]) -> Server {
        match backend {
            Backend::Embedded => Server::start_with(args),
            Backend::Etcd => {
                let etcd = Etcd::start();
                let mut all = etcd_args(&etcd);
                all.extend(args.iter().map(|a| a.as_ref().to_owned()));
                let mut server = Server::start_with(&all);
                server.etcd = Some(etcd);
                server
            }
        }
    }

    /// Starts the server with extra flags (such as `--storage etcd --etcd-servers ...`),
    /// given again at each restart.
    #[track_caller]
    pub(crate) fn start_with<S: AsRef<str>>(args: &[S]) -> Server {
        let data_dir = tempfile::Builder::new()
            .prefix("kapi-data-")
            .tempdir()
            .expect("creating the server's data directory");
        let log = Log::default();
        let args: Vec<String> = args.iter().map(|a| a.as_ref().to_owned()).collect();
        let (child, addr) = spawn(data_dir.path(), &log, "127.0.0.1:0", &args, None);
        Server {
            child: Some(child),
            addr,
            data_dir,
            log,
            args,
            etcd: None,
            access: None,
            pki: None,
        }
    }

    /// Starts a secure server on `backend`: HTTPS, client certificates and the tokens of
    /// `pki`, RBAC, and `extra` flags; reached as its administrator.
    #[track_caller]
    pub(crate) fn start_secure(pki: super::pki::Pki, backend: Backend, extra: &[&str]) -> Server {
        let access = Access {
            ca: pki.ca.clone(),
            ca_pem: pki.ca_pem(),
            token: super::pki::ADMIN_TOKEN.to_owned(),
        };
        let mut args = pki.server_flags();
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        let etcd = (backend == Backend::Etcd).then(Etcd::start);
        if let Some(etcd) = &etcd {
            args.extend(etcd_args(etcd));
        }
        let data_dir = tempfile::Builder::new()
            .prefix("kapi-data-")
            .tempdir()
            .expect("creating the server's data directory");
        let log = Log::default();
        let (child, addr) = spawn(data_dir.path(), &log, "127.0.0.1:0", &args, Some(&access));
        Server {
            child: Some(child),
            addr,
            data_dir,
            log,
            args,
            etcd,
            access: Some(access),
            pki: Some(pki),
        }
    }

    /// A secure server's certificates and tokens.
    pub(crate) fn pki(&self) -> &super::pki::Pki {
        self.pki.as_ref().expect("a secure server")
    }

    /// How an administrator reaches it, when it is secure.
    pub(crate) fn access(&self) -> Option<&Access> {
        self.access.as_ref()
    }

    /// A raw HTTP client of the server: as its administrator when it is secure.
    pub(crate) fn client(&self) -> http::Client {
        match &self.access {
            Some(access) => http::Client::with_tls(&self.url(), &access.ca_pem, &access.token),
            None => http::Client::new(self.addr),
        }
    }

    /// The address it listens on (a new one after each restart).
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`, or `https://ADDR` for a secure server.
    pub(crate) fn url(&self) -> String {
        let scheme = if self.access.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The embedded store's directory.
    pub(crate) fn data_dir(&self) -> &Path {
        self.data_dir.path()
    }

    /// Everything the server printed so far, shared with whoever holds a clone.
    pub(crate) fn log(&self) -> Log {
        self.log.clone()
    }

    /// Waits until the server logged a watch request whose line holds `part` (a client's
    /// watch is established once its request is logged).
    #[track_caller]
    pub(crate) fn wait_for_watch(&self, timeout: Duration, part: &str) {
        let log = self.log();
        super::wait_for(
            timeout,
            &format!("a watch request with {part}"),
            || log.tail(60),
            || {
                (log.tail(400).lines())
                    .any(|l| l.contains("watch=true") && l.contains(part))
                    .then_some(())
            },
        );
    }

    /// Kills the process with SIGKILL (no chance to flush or clean up) and reaps it.
    pub(crate) fn kill_9(&mut self) {
        if let Some(mut child) = self.child.take() {
            // `Child::kill` sends SIGKILL on Unix.
            child.kill().expect("sending SIGKILL to the server");
            let status = child.wait().expect("reaping the killed server");
            self.log.note(&format!("killed with SIGKILL ({status})"));
        }
    }

    /// Kills the server (SIGKILL) if it runs, then starts it again on the same data
    /// directory and waits until it is ready. It listens on a new port.
    #[track_caller]
    pub(crate) fn restart(&mut self) {
        self.kill_9();
        self.log.note("restarting on the same data directory");
        let (child, addr) = spawn(
            self.data_dir.path(),
            &self.log,
            "127.0.0.1:0",
            &self.args,
            self.access.as_ref(),
        );
        self.child = Some(child);
        self.addr = addr;
    }

    /// [`Server::restart`] on the same port, for clients that keep the address (a
    /// kube-rs client reconnecting). The killed server's listening socket is gone, and
    /// the new one binds with `SO_REUSEADDR` (Rust's default on Unix).
    #[track_caller]
    pub(crate) fn restart_on_same_port(&mut self) {
        self.kill_9();
        self.log
            .note("restarting on the same port and data directory");
        let listen = self.addr.to_string();
        let (child, addr) = spawn(
            self.data_dir.path(),
            &self.log,
            &listen,
            &self.args,
            self.access.as_ref(),
        );
        self.child = Some(child);
        self.addr = addr;
    }

    /// Sends SIGTERM and waits for the process to exit, at most `timeout` (then panics
    /// with the log). Returns its exit status.
    #[track_caller]
    pub(crate) fn terminate(&mut self, timeout: Duration) -> std::process::ExitStatus {
        self.send_sigterm();
        self.wait_exit(timeout)
    }

    /// Sends SIGTERM, without waiting.
    #[track_caller]
    pub(crate) fn send_sigterm(&mut self) {
        let child = self.child.as_ref().expect("the server runs");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("running kill -TERM");
        assert!(status.success(), "kill -TERM failed: {status}");
    }

    /// Waits for the process to exit, at most `timeout` (then panics with the log).
    #[track_caller]
    pub(crate) fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("the server runs");
        let Some(status) = super::wait_exit(&mut child, timeout) else {
            panic!(
                "the server did not exit within {timeout:?} of SIGTERM\n--- server output ---\n{}",
                self.log.tail(100)
            );
        };
        self.log.note(&format!("exited after SIGTERM ({status})"));
        status
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The flags that put a server on `etcd`: `--etcd-servers` alone selects the backend, as
/// kube-apiserver is configured.
pub(crate) fn etcd_args(etcd: &Etcd) -> Vec<String> {
    vec!["--etcd-servers".to_owned(), etcd.servers_flag()]
}

/// Starts the binary, reads its address from stdout and waits for `/readyz`.
#[track_caller]
fn spawn(
    data_dir: &Path,
    log: &Log,
    listen: &str,
    args: &[String],
    access: Option<&Access>,
) -> (Child, SocketAddr) {
    let binary = env!("CARGO_BIN_EXE_kapi-server");
    let mut command = Command::new(binary);
    command
        .args(["--listen", listen, "--data-dir"])
        .arg(data_dir)
        .args(args);
    // The request log (from -v=3, as kube's) is what `wait_for_watch` and some tests read,
    // unless the test sets the verbosity itself.
    let verbosity = |a: &String| a.starts_with("-v") || a == "--v" || a.starts_with("--v=");
    if !args.iter().any(verbosity) {
        command.args(["-v", "3"]);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    log.note(&format!("$ {command:?}"));
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("starting {binary}: {e}"));

    let (address_tx, address_rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("piped stdout");
    let stdout_log = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(addr) = listening_address(&line) {
                let _ = address_tx.send(addr);
            }
            stdout_log.line("stdout", &line);
        }
    });
    let stderr = child.stderr.take().expect("piped stderr");
    let stderr_log = log.clone();
    std::thread::spawn(move || drain("stderr", stderr, &stderr_log));

    let deadline = Instant::now() + START_TIMEOUT;
    let addr = loop {
        match address_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(addr) => break addr,
            Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {
                if let Ok(Some(status)) = child.try_wait() {
                    fail_start(&mut child, log, &format!("the server exited ({status})"));
                }
            }
            Err(RecvTimeoutError::Timeout) => fail_start(
                &mut child,
                log,
                &format!("no `{LISTENING}PORT` line on stdout within {START_TIMEOUT:?}"),
            ),
            Err(RecvTimeoutError::Disconnected) => {
                // Stdout closes when the process exits: say how it did, if it did soon.
                let exit = (0..100)
                    .find_map(|_| {
                        let status = child.try_wait().ok().flatten();
                        if status.is_none() {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        status
                    })
                    .map_or("it still runs".to_owned(), |s| format!("it exited ({s})"));
                fail_start(
                    &mut child,
                    log,
                    &format!("stdout closed without a `{LISTENING}PORT` line; {exit}"),
                )
            }
        }
    };

    let client = match access {
        Some(access) => {
            http::Client::with_tls(&format!("https://{addr}"), &access.ca_pem, &access.token)
        }
        None => http::Client::new(addr),
    };
    loop {
        match client.get("/readyz") {
            Ok(response) if response.status == 200 => break,
            _ if Instant::now() >= deadline => fail_start(
                &mut child,
                log,
                &format!("/readyz did not answer 200 within {START_TIMEOUT:?}"),
            ),
            _ => {}
        }
        if let Ok(Some(status)) = child.try_wait() {
            fail_start(&mut child, log, &format!("the server exited ({status})"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    (child, addr)
}

#[track_caller]
fn fail_start(child: &mut Child, log: &Log, why: &str) -> ! {
    let _ = child.kill();
    let _ = child.wait();
    // Let the reader threads catch the last lines.
    std::thread::sleep(Duration::from_millis(50));
    panic!(
        "kapi-server did not start: {why}\n--- server output ---\n{}",
        log.tail(200)
    );
}

/// `ADDR` in a line `... listening on http://ADDR ...` (or `https://`).
fn listening_address(line: &str) -> Option<SocketAddr> {
    let (_, rest) = line.split_once(LISTENING)?;
    let rest = rest.strip_prefix("s").unwrap_or(rest).strip_prefix("://")?;
    let addr = rest.split(|c: char| c.is_whitespace() || c == '/').next()?;
    addr.parse().ok()
}

fn drain(stream: &str, from: impl Read, log: &Log) {
    for line in BufReader::new(from).lines() {
        let Ok(line) = line else { break };
        log.line(stream, &line);
    }
}

/// The server's output (both streams, interleaved as read, with the harness's notes).
#[derive(Clone, Default)]
pub(crate) struct Log(Arc<Mutex<String>>);

impl Log {
    fn line(&self, stream: &str, line: &str) {
        let mut log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(log, "[{stream}] {line}");
    }

    fn note(&self, note: &str) {
        let mut log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(log, "[harness] {note}");
    }

    /// The last `lines` lines.
    pub(crate) fn tail(&self, lines: usize) -> String {
        let log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let all: Vec<&str> = log.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_listening_line() {
        let addr = super::listening_address("kapi-server listening on http://127.0.0.1:41234");
        assert_eq!(addr, Some("127.0.0.1:41234".parse().unwrap()));
        let addr = super::listening_address("listening on http://127.0.0.1:8080/ (embedded)");
        assert_eq!(addr, Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(super::listening_address("kubectl --server=..."), None);
        let addr = super::listening_address("listening on https://127.0.0.1:8443");
        assert_eq!(addr, Some("127.0.0.1:8443".parse().unwrap()));
    }
}
