//! What every measurement shares: options, the release server as a child process, clients
//! running for a window, percentiles, the server's resident memory.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Concurrent clients of the throughput measurements.
pub(crate) const CLIENTS: usize = 16;

/// How the benchmark runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
    /// Tiny sizes and windows: proves the code works, measures nothing.
    pub quick: bool,
    /// Print the rows as JSON at the end instead of a table as they come.
    pub json: bool,
    /// Only these parts (`requests`, `collections`, `fanout`); every part when empty. The
    /// limits are always measured: the other parts are read against them.
    pub only: Vec<String>,
}

impl Options {
    /// Whether the part named `part` runs.
    pub(crate) fn runs(&self, part: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|p| p == part)
    }

    /// How long each throughput measurement runs.
    pub(crate) fn window(&self) -> Duration {
        if self.quick {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(3)
        }
    }
}

/// The release server with some arguments, on a free port; killed when dropped.
pub(crate) struct ServerProcess {
    child: Child,
    /// Where it listens (plain HTTP).
    pub addr: SocketAddr,
    args: Vec<String>,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ServerProcess {
    /// Starts the server with `args` and waits until it is ready (`/readyz`).
    pub(crate) fn start(args: &[String]) -> ServerProcess {
        let (server, _) = ServerProcess::start_timed(args);
        server
    }

    /// Starts the server with `args`; returns it with the time from its start to ready.
    pub(crate) fn start_timed(args: &[String]) -> (ServerProcess, Duration) {
        let started = Instant::now();
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
        let server = ServerProcess {
            child,
            addr,
            args: args.to_vec(),
        };
        let agent = agent();
        let deadline = Instant::now() + Duration::from_secs(600);
        loop {
            let ready = (agent.get(server.url("/readyz")).call()).is_ok_and(|r| r.status() == 200);
            if ready {
                break;
            }
            assert!(Instant::now() < deadline, "the server never got ready");
            std::thread::sleep(Duration::from_millis(5));
        }
        (server, started.elapsed())
    }

    /// Stops the server and starts it again with the same arguments; returns the time from
    /// the start to ready.
    pub(crate) fn restart(&mut self) -> Duration {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let (mut server, took) = ServerProcess::start_timed(&self.args);
        std::mem::swap(self, &mut server);
        took
    }

    /// Its process id.
    pub(crate) fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// `http://<addr><path>`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The server's resident memory, in MiB.
    pub(crate) fn rss_mib(&self) -> f64 {
        rss_mib_of(&self.pid())
    }

    /// The server's resident memory once the pages its last requests freed have gone back
    /// to the system: jemalloc purges them gradually over `dirty_decay_ms` (1 s, set in
    /// `.cargo/config.toml`), so the first read comes 1.5 s after the last request, then
    /// one every 500 ms until two agree within 1% (at most 10 s in all).
    pub(crate) fn settled_rss_mib(&self) -> f64 {
        let deadline = Instant::now() + Duration::from_secs(10);
        std::thread::sleep(Duration::from_millis(1500));
        let mut last = self.rss_mib();
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let now = self.rss_mib();
            if (last - now).abs() <= last * 0.01 || Instant::now() > deadline {
                return now;
            }
            last = now;
        }
    }
}

/// The resident memory of process `pid`, in MiB.
pub(crate) fn rss_mib_of(pid: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("reading a server's /proc status");
    let kib: f64 = (status.lines())
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .expect("VmRSS in /proc status");
    kib / 1024.0
}

/// A keep-alive HTTP client that returns every status.
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// `response`'s status, its body read to the end (and dropped): only then does the agent
/// keep the connection for the next request, as clients such as client-go do; a body left
/// unread costs a new TCP connection per request.
pub(crate) fn status_of(mut response: ureq::http::Response<ureq::Body>) -> u16 {
    let status = response.status().as_u16();
    let mut reader = response.body_mut().with_config().limit(u64::MAX).reader();
    std::io::copy(&mut reader, &mut std::io::sink()).expect("reading a body");
    status
}

/// `GET url`, reading the body to its end without keeping it: its status and size.
pub(crate) fn get_discarding(agent: &ureq::Agent, url: &str) -> (u16, usize) {
    get_discarding_with(agent, url, &[("Accept", "application/json")])
}

/// [`get_discarding`] asking for `accept` (a Table, say).
pub(crate) fn get_discarding_accepting(
    agent: &ureq::Agent,
    url: &str,
    accept: &str,
) -> (u16, usize) {
    get_discarding_with(agent, url, &[("Accept", accept)])
}

/// `rounds` GETs of `url` asking for `accept`, one after another, each answered 200: how
/// long each took, and the size of the last body.
pub(crate) fn timed_gets(
    agent: &ureq::Agent,
    url: &str,
    accept: &str,
    rounds: usize,
) -> (Vec<Duration>, usize) {
    let mut size = 0;
    let samples = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            let (status, read) = get_discarding_accepting(agent, url, accept);
            assert_eq!(status, 200, "GET {url}");
            size = read;
            started.elapsed()
        })
        .collect();
    (samples, size)
}

/// [`get_discarding`] with these request headers.
pub(crate) fn get_discarding_with(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(&str, &str)],
) -> (u16, usize) {
    let mut request = agent.get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.call().expect("GET");
    let status = response.status().as_u16();
    let mut reader = response.body_mut().with_config().limit(u64::MAX).reader();
    let mut buffer = vec![0; 256 * 1024];
    let mut size = 0;
    loop {
        match reader.read(&mut buffer).expect("reading a body") {
            0 => break,
            n => size += n,
        }
    }
    (status, size)
}

/// `clients` threads, each with an agent made by `make` (TLS, say) and its own keep-alive
/// connection, running `op(agent, client, i)` for `window`; how many ran and how long.
pub(crate) fn run_threads_on(
    make: impl Fn() -> ureq::Agent + Sync,
    clients: usize,
    window: Duration,
    op: impl Fn(&ureq::Agent, usize, u64) + Send + Sync,
) -> (u64, Duration) {
    let done = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for client in 0..clients {
            let (op, done, make) = (&op, &done, &make);
            scope.spawn(move || {
                let agent = make();
                let mut i = 0;
                while started.elapsed() < window {
                    op(&agent, client, i);
                    i += 1;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    (done.load(Ordering::Relaxed), started.elapsed())
}

/// `clients` threads sharing `total` operations `op(agent, n)` (n from 0); how long they
/// took.
pub(crate) fn run_count(
    clients: usize,
    total: u64,
    op: impl Fn(&ureq::Agent, u64) + Send + Sync,
) -> Duration {
    run_count_on(agent, clients, total, op)
}

/// [`run_count`] with agents made by `make` (TLS, say).
pub(crate) fn run_count_on(
    make: impl Fn() -> ureq::Agent + Sync,
    clients: usize,
    total: u64,
    op: impl Fn(&ureq::Agent, u64) + Send + Sync,
) -> Duration {
    let next = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..clients {
            let (op, next, make) = (&op, &next, &make);
            scope.spawn(move || {
                let agent = make();
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= total {
                        break;
                    }
                    op(&agent, n);
                }
            });
        }
    });
    started.elapsed()
}

/// Runs `clients` copies of `op(client, i)` (i counting per client) for `window`; how many
/// completed and how long it took.
pub(crate) async fn run_async<F, Fut>(clients: usize, window: Duration, op: F) -> (u64, Duration)
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
                while started.elapsed() < window {
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

/// Operations per second.
pub(crate) fn rate(ops: u64, elapsed: Duration) -> f64 {
    ops as f64 / elapsed.as_secs_f64()
}

/// The `p`th percentile (0..=100) of `samples`, in milliseconds.
pub(crate) fn percentile_ms(samples: &mut [Duration], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_unstable();
    let rank = ((p / 100.0) * (samples.len() - 1) as f64).round() as usize;
    samples[rank.min(samples.len() - 1)].as_secs_f64() * 1000.0
}

/// This process's CPU time (user and system) so far.
pub(crate) fn own_cpu_time() -> Duration {
    cpu_time("self")
}

/// The CPU time (user and system) process `pid` (`self`: this one) has used so far; zero
/// when it cannot be read.
pub(crate) fn cpu_time(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command (which may hold spaces) start after the last ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of stat: 11 and 12 counted from the state after
    // the command. The clock ticks 100 times a second on Linux.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// CPU used by processes while something runs: `measure(&pids)` starts counting, the
/// returned closure reads each one's microseconds per operation.
pub(crate) struct CpuMeter {
    start: Vec<(String, Duration)>,
}

impl CpuMeter {
    /// Starts counting the CPU of `pids`.
    pub(crate) fn start(pids: &[String]) -> CpuMeter {
        CpuMeter {
            start: pids.iter().map(|p| (p.clone(), cpu_time(p))).collect(),
        }
    }

    /// Microseconds of CPU per operation each process used since the start, for `ops`
    /// operations, in the order given.
    pub(crate) fn per_op(&self, ops: u64) -> Vec<f64> {
        (self.start.iter())
            .map(|(pid, start)| {
                let used = cpu_time(pid).saturating_sub(*start);
                used.as_secs_f64() * 1e6 / ops.max(1) as f64
            })
            .collect()
    }
}
