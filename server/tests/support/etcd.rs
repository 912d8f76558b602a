//! Real etcd processes for the tests: one member or a cluster on loopback ports picked
//! here, each with its own data directory, stopped (SIGKILL) and restarted at will.
//!
//! Shared by `server/tests` (as `support::etcd`) and `runtime/tests` (with `#[path]`), so
//! it uses only `std` and `tempfile`.
//!
//! The binary is `$KAPI_ETCD` (`cargo xtask test` sets it), else `etcd` on the `PATH`. The
//! tests that use it exist only with the `etcd` cargo feature, and fail (never skip) when
//! no etcd is found.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long a member may take to become healthy.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// TLS for the members' client URLs: PEM files.
#[derive(Clone, Debug)]
pub(crate) struct EtcdTls {
    /// The members' certificate (valid for `127.0.0.1`) and key.
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    /// When set, clients must present a certificate signed by this CA
    /// (`--client-cert-auth`).
    pub client_ca_file: Option<PathBuf>,
}

/// One etcd member.
struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    metrics_port: u16,
    child: Option<Child>,
}

/// An etcd cluster (often of one member), killed when dropped.
pub(crate) struct Etcd {
    members: Vec<Member>,
    dir: TempDir,
    tls: Option<EtcdTls>,
    token: String,
    /// More flags for every member.
    extra: Vec<String>,
}

/// The etcd binary: `$KAPI_ETCD`, else `etcd` on the `PATH`; panics when there is none.
pub(crate) fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("KAPI_ETCD") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "KAPI_ETCD={} is not a file; install Debian's etcd-server (cargo xtask test does)",
            path.display()
        );
        return path;
    }
    let found = (std::env::var_os("PATH").into_iter())
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("etcd"))
        .find(|path| path.is_file());
    found.unwrap_or_else(|| {
        panic!(
            "no etcd binary: set KAPI_ETCD or install Debian's etcd-server \
             (`cargo xtask test` installs it); these tests run only with the `etcd` feature"
        )
    })
}

/// `n` distinct free loopback ports (bound then released: the processes started next bind
/// them). All are held until the last is picked: a port released at once may be handed
/// out again by the next bind, and a member given the same port twice cannot start.
fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("binding a free port"))
        .collect();
    (listeners.iter())
        .map(|listener| listener.local_addr().expect("local address").port())
        .collect()
}

impl Etcd {
    /// One member, healthy.
    #[track_caller]
    pub(crate) fn start() -> Etcd {
        Etcd::cluster(1)
    }

    /// `size` members forming one cluster, all healthy.
    #[track_caller]
    pub(crate) fn cluster(size: usize) -> Etcd {
        Etcd::launch(size, None, &[])
    }

    /// One member serving clients over TLS.
    #[track_caller]
    pub(crate) fn start_tls(tls: EtcdTls) -> Etcd {
        Etcd::launch(1, Some(tls), &[])
    }

    /// One member with more flags.
    #[track_caller]
    pub(crate) fn start_with(extra: &[&str]) -> Etcd {
        Etcd::launch(1, None, extra)
    }

    #[track_caller]
    fn launch(size: usize, tls: Option<EtcdTls>, extra: &[&str]) -> Etcd {
        let dir = tempfile::Builder::new()
            .prefix("kapi-etcd-")
            .tempdir()
            .expect("creating etcd's directory");
        let ports = free_ports(3 * size);
        let members = (ports.chunks(3).enumerate())
            .map(|(i, ports)| Member {
                name: format!("m{i}"),
                client_port: ports[0],
                peer_port: ports[1],
                metrics_port: ports[2],
                child: None,
            })
            .collect();
        let token = dir
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut etcd = Etcd {
            members,
            dir,
            tls,
            token,
            extra: extra.iter().map(|a| (*a).to_owned()).collect(),
        };
        for i in 0..size {
            etcd.spawn(i);
        }
        for i in 0..size {
            etcd.wait_healthy(i);
        }
        etcd
    }

    /// The client URLs of every member.
    pub(crate) fn endpoints(&self) -> Vec<String> {
        (0..self.members.len()).map(|i| self.endpoint(i)).collect()
    }

    /// The client URL of member `i`.
    pub(crate) fn endpoint(&self, i: usize) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.members[i].client_port)
    }

    /// The endpoints as `--etcd-servers` takes them.
    pub(crate) fn servers_flag(&self) -> String {
        self.endpoints().join(",")
    }

    /// The process id of member `i`, while it runs.
    #[allow(dead_code)]
    pub(crate) fn pid(&self, i: usize) -> Option<u32> {
        self.members[i].child.as_ref().map(Child::id)
    }

    /// Kills member `i` with SIGKILL.
    pub(crate) fn stop(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts member `i` again on its data directory, without waiting for it.
    pub(crate) fn restart(&mut self, i: usize) {
        self.stop(i);
        self.spawn(i);
    }

    /// Waits until member `i` reports itself healthy (it has a leader).
    #[track_caller]
    pub(crate) fn wait_healthy(&self, i: usize) {
        let deadline = Instant::now() + START_TIMEOUT;
        let port = self.members[i].metrics_port;
        loop {
            if health(port) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "etcd member {} not healthy within {START_TIMEOUT:?}\n--- its log ---\n{}",
                self.members[i].name,
                self.log_tail(i, 40)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The member that is the leader now, if a running one says so (its
    /// `etcd_server_is_leader` metric).
    pub(crate) fn leader(&self) -> Option<usize> {
        (0..self.members.len()).find(|&i| {
            self.members[i].child.is_some()
                && get(self.members[i].metrics_port, "/metrics")
                    .lines()
                    .any(|line| line.trim() == "etcd_server_is_leader 1")
        })
    }

    /// The sum of member `i`'s samples of `metric` (on its metrics URL) whose labels
    /// include each of `labels` (`name="value"`).
    pub(crate) fn metric(&self, i: usize, metric: &str, labels: &[&str]) -> f64 {
        let text = get(self.members[i].metrics_port, "/metrics");
        (text.lines())
            .filter(|line| {
                line.strip_prefix(metric)
                    .is_some_and(|rest| rest.starts_with(['{', ' ']))
                    && labels.iter().all(|label| line.contains(label))
            })
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    /// The last `lines` lines of member `i`'s log.
    pub(crate) fn log_tail(&self, i: usize, lines: usize) -> String {
        let log = std::fs::read_to_string(self.log_path(i)).unwrap_or_default();
        let all: Vec<&str> = log.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    fn log_path(&self, i: usize) -> PathBuf {
        self.dir
            .path()
            .join(format!("{}.log", self.members[i].name))
    }

    #[track_caller]
    fn spawn(&mut self, i: usize) {
        let initial_cluster = (self.members.iter())
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port))
            .collect::<Vec<_>>()
            .join(",");
        let member = &self.members[i];
        let client_url = self.endpoint(i);
        let peer_url = format!("http://127.0.0.1:{}", member.peer_port);
        let data_dir = self.dir.path().join(&member.name);
        let log = (std::fs::OpenOptions::new().create(true).append(true))
            .open(self.log_path(i))
            .expect("opening etcd's log");
        let mut command = Command::new(binary());
        command
            .arg(format!("--name={}", member.name))
            .arg(format!("--data-dir={}", data_dir.display()))
            .arg(format!("--listen-client-urls={client_url}"))
            .arg(format!("--advertise-client-urls={client_url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster={initial_cluster}"))
            .arg(format!("--initial-cluster-token={}", self.token))
            .arg("--initial-cluster-state=new")
            .arg(format!(
                "--listen-metrics-urls=http://127.0.0.1:{}",
                member.metrics_port
            ))
            // Elections in a tenth of the default time: loopback is fast.
            .args(["--heartbeat-interval=50", "--election-timeout=500"])
            .args(["--logger=zap", "--log-outputs=stderr"])
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("cloning the log file"))
            .stderr(log);
        if let Some(tls) = &self.tls {
            command
                .arg(format!("--cert-file={}", tls.cert_file.display()))
                .arg(format!("--key-file={}", tls.key_file.display()));
            if let Some(ca) = &tls.client_ca_file {
                command
                    .arg("--client-cert-auth")
                    .arg(format!("--trusted-ca-file={}", ca.display()));
            }
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", binary().display()));
        self.members[i].child = Some(child);
    }

    /// The directory holding the members' data and logs.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.stop(i);
        }
    }
}

/// `GET /health` on a member's metrics URL: whether it answers `"health":"true"`.
fn health(port: u16) -> bool {
    get(port, "/health").contains("\"health\":\"true\"")
}

/// The response (headers and body) to `GET path` on a loopback port; empty on failure.
fn get(port: u16, path: &str) -> String {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return String::new();
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}
