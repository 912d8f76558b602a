//! Watch fan-out: 1,000 watchers of one collection (20 with `--quick`), each on its own
//! connection, and a series of updates of one object, one at a time. For every update and
//! watcher: the time from the update being sent to its event reaching the watcher's socket
//! (the kernel's receive timestamp, `SO_TIMESTAMPNS`), and to the watcher reading it. The
//! update's own latency (until the server acknowledged it) is shown beside, and the
//! fan-out alone: the time from each update's first delivery to each watcher's. Then the
//! server's CPU time per event sent (the update's own share included) and the client's
//! cost: this process's CPU time per event read, spent on the same cores as the server's.
//! The delivery figure leaves out the watchers' own delay in reading (their task
//! scheduling and parsing), not their competition for the cores. (Running the watchers at
//! the lowest priority made every figure worse: 19.3 ms delivered p99 against 16.6, and
//! the server's CPU per event 19.2 µs against 13.6.)
//!
//! Then the machine's limit, with the same watchers: [`Floor`], a server that does nothing
//! but write each event's bytes (kapi's last event, framed as kapi frames it) to every
//! connection, one `write` per connection from one thread per core.

use std::io::{IoSliceMut, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg, setsockopt, sockopt};
use tokio::io::AsyncWriteExt;
use tokio::io::unix::AsyncFd;
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

use super::common::{Options, ServerProcess, agent, cpu_time, own_cpu_time, percentile_ms};
use super::report::Report;

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";
/// What precedes an update's sequence number in its events.
const MARKER: &[u8] = br#""seq":""#;

/// Measures the fan-out through the server, then the raw writes' on the same machine.
pub fn measure(runtime: &Runtime, options: &Options, report: &mut Report) {
    let (watchers, updates) = if options.quick { (20, 5) } else { (1_000, 50) };
    let dir = tempfile::tempdir().expect("a data directory");
    let server = ServerProcess::start(&["--data-dir".into(), dir.path().display().to_string()]);
    let agent = agent();
    let created = (agent.post(server.url(WEBAPPS)))
        .header("Content-Type", "application/json")
        .send(r#"{"apiVersion":"apps.example.dev/v1","kind":"WebApp","metadata":{"name":"target"},"spec":{"replicas":1,"container":{"image":"nginx:1.27"}}}"#)
        .expect("POST");
    assert_eq!(created.status().as_u16(), 201);
    let kapi = Kapi {
        server: &server,
        agent: agent.clone(),
    };
    let path = format!("{WEBAPPS}?watch=1&resourceVersion=0");
    let through_kapi = fan_out(runtime, server.addr, &path, watchers, updates, &kapi);
    let label = format!("fan-out to {watchers} watchers");
    through_kapi.report(report, &label, "server CPU per event sent");
    report.add(
        format!("{label}: the update acknowledged, p50"),
        percentile_ms(&mut through_kapi.acknowledged.clone(), 50.0),
        "ms",
    );

    // The event the watchers last read, as the floor's: the object as it is now.
    let mut object = (agent.get(server.url(&format!("{WEBAPPS}/target"))))
        .header("Accept", "application/json")
        .call()
        .expect("GET");
    let object = (object.body_mut().read_to_string()).expect("the object");
    let last = format!(r#""seq":"{updates}""#);
    assert!(object.contains(&last), "the last update is in {object}");
    let template = format!(
        "{{\"type\":\"MODIFIED\",\"object\":{}}}\n",
        object.trim_end()
    )
    .replace(&last, r#""seq":"{seq}""#);
    drop(server);
    let floor = Floor::start(watchers, template);
    let raw = fan_out(runtime, floor.addr, "/", watchers, updates, &floor);
    let floor_label = format!("limit: {label}, raw writes");
    raw.report(report, &floor_label, "writers' CPU per event");
    report.ratio(
        format!("{label}: delivered p99 / the raw writes'"),
        percentile_ms(&mut through_kapi.deliveries.clone(), 99.0),
        percentile_ms(&mut raw.deliveries.clone(), 99.0),
    );
    report.ratio(
        format!("{label}: first delivery to each p99 / the raw writes'"),
        percentile_ms(&mut through_kapi.spreads.clone(), 99.0),
        percentile_ms(&mut raw.spreads.clone(), 99.0),
    );
}

/// What sends the updates the watchers wait for.
trait Source {
    /// Sends update `seq` (as each watcher's next event); returns once it is sent.
    fn update(&self, seq: usize);

    /// How many watchers are connected and waiting, when it knows (`None`: it does not;
    /// every watcher then shows its connection by reading the first update).
    fn connected(&self) -> Option<usize>;

    /// The CPU its server has used so far, and whether that was spent in this process
    /// (where it is no client's).
    fn cpu(&self) -> (Duration, bool);
}

/// Updates through the server: merge patches of one WebApp.
struct Kapi<'a> {
    server: &'a ServerProcess,
    agent: ureq::Agent,
}

impl Source for Kapi<'_> {
    fn update(&self, seq: usize) {
        let response = (self
            .agent
            .patch(self.server.url(&format!("{WEBAPPS}/target"))))
        .header("Content-Type", "application/merge-patch+json")
        .send(format!(
            r#"{{"metadata":{{"annotations":{{"seq":"{seq}"}}}}}}"#
        ))
        .expect("PATCH");
        assert_eq!(super::common::status_of(response), 200, "an update");
    }

    fn connected(&self) -> Option<usize> {
        None
    }

    fn cpu(&self) -> (Duration, bool) {
        (cpu_time(&self.server.pid()), false)
    }
}

/// What one fan-out measured.
struct FanOut {
    /// Per event: from the update sent to the kernel holding it at the watcher.
    deliveries: Vec<Duration>,
    /// Per event: from the update's first delivery (to any watcher) to this one: the
    /// fan-out alone, without the update's own path to its first event (the server's
    /// commit).
    spreads: Vec<Duration>,
    /// Per event: from the update sent to the watcher reading it.
    latencies: Vec<Duration>,
    /// Per update: until it was acknowledged.
    acknowledged: Vec<Duration>,
    /// The server's CPU per event sent, in microseconds.
    server_cpu: f64,
    /// This process's CPU per event read (the server's left out), in microseconds.
    client_cpu: f64,
}

impl FanOut {
    fn report(&self, report: &mut Report, label: &str, server_cpu: &str) {
        for (what, samples) in [
            ("update to event delivered", &self.deliveries),
            ("first delivery to each", &self.spreads),
            ("update to event read", &self.latencies),
        ] {
            let mut samples = samples.clone();
            for (name, p) in [("p50", 50.0), ("p99", 99.0), ("max", 100.0)] {
                report.add(
                    format!("{label}: {what}, {name}"),
                    percentile_ms(&mut samples, p),
                    "ms",
                );
            }
        }
        report.add(format!("{label}: {server_cpu}"), self.server_cpu, "µs");
        report.add(
            format!("{label}: client CPU per event read"),
            self.client_cpu,
            "µs",
        );
    }
}

/// `watchers` watches of `path` at `addr`, and `updates` updates (after a first one that
/// warms up) from `source`, one at a time, each once every watcher has read the last.
fn fan_out(
    runtime: &Runtime,
    addr: SocketAddr,
    path: &str,
    watchers: usize,
    updates: usize,
    source: &impl Source,
) -> FanOut {
    // received[seq]: how many watchers have read update `seq`.
    let received: Arc<Vec<AtomicUsize>> =
        Arc::new((0..=updates).map(|_| AtomicUsize::new(0)).collect());
    let tasks: Vec<_> = (0..watchers)
        .map(|_| runtime.spawn(watch(addr, path.to_owned(), received.clone(), updates)))
        .collect();
    let wait = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done() {
            assert!(Instant::now() < deadline, "{what} never happened");
            std::thread::sleep(Duration::from_micros(200));
        }
    };
    if source.connected().is_some() {
        wait("every watcher connected", &|| {
            source.connected() == Some(watchers)
        });
    }
    let all_read = |seq: usize| {
        wait(&format!("update {seq} reaching every watcher"), &|| {
            received[seq].load(Ordering::Acquire) >= watchers
        })
    };
    // Update 0 warms up: every watcher is connected once it has read it.
    source.update(0);
    all_read(0);
    let cpu = own_cpu_time();
    let (server_cpu, in_process) = source.cpu();
    let mut sent = Vec::new();
    let mut acknowledged = Vec::new();
    for seq in 1..=updates {
        let started = (Instant::now(), SystemTime::now());
        source.update(seq);
        acknowledged.push(started.0.elapsed());
        sent.push(started);
        all_read(seq);
    }
    let server_cpu = source.cpu().0.saturating_sub(server_cpu);
    let mut client_cpu = own_cpu_time().saturating_sub(cpu);
    if in_process {
        client_cpu = client_cpu.saturating_sub(server_cpu);
    }
    let mut latencies = Vec::with_capacity(watchers * updates);
    let mut deliveries = Vec::with_capacity(watchers * updates);
    // arrivals[seq - 1]: when update `seq` reached each watcher.
    let mut arrivals = vec![Vec::with_capacity(watchers); updates];
    for task in tasks {
        let read = runtime.block_on(task).expect("a watcher");
        for event in read.into_iter().filter(|event| event.seq > 0) {
            let (sent_at, sent_wall) = sent[event.seq - 1];
            latencies.push(event.read.saturating_duration_since(sent_at));
            deliveries.push((event.arrived.duration_since(sent_wall)).unwrap_or_default());
            arrivals[event.seq - 1].push(event.arrived);
        }
    }
    assert_eq!(
        latencies.len(),
        watchers * updates,
        "every event was read once"
    );
    let spreads = (arrivals.iter())
        .flat_map(|arrived| {
            let first = arrived.iter().min().copied().unwrap_or(UNIX_EPOCH);
            (arrived.iter()).map(move |at| at.duration_since(first).unwrap_or_default())
        })
        .collect();
    let events = (watchers * updates) as f64;
    FanOut {
        deliveries,
        spreads,
        latencies,
        acknowledged,
        server_cpu: server_cpu.as_secs_f64() * 1e6 / events,
        client_cpu: client_cpu.as_secs_f64() * 1e6 / events,
    }
}

/// The fan-out's floor on this machine: a server that answers each watch request with a
/// chunked 200 and then only writes every update's event to every connection, one
/// blocking `write` each, split between one thread per core. No encoding, no queues, no
/// tasks: what remains is the kernel's work for one small write on each connection,
/// which kapi's fan-out pays as well.
struct Floor {
    addr: SocketAddr,
    connected: Arc<AtomicUsize>,
    /// An event with `{seq}` where its sequence number goes.
    template: String,
    writers: Vec<Writer>,
    /// The CPU each writer had used after its last update.
    cpu: Mutex<Vec<Duration>>,
}

/// One thread writing to its share of the connections.
struct Writer {
    sockets: Arc<Mutex<Vec<std::net::TcpStream>>>,
    events: mpsc::Sender<Arc<Vec<u8>>>,
    /// Its CPU time after each event it wrote.
    done: mpsc::Receiver<Duration>,
}

impl Floor {
    /// Listens for `watchers` connections; events are `template` with their number.
    fn start(watchers: usize, template: String) -> Floor {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding loopback");
        let addr = listener.local_addr().expect("a local address");
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let writers: Vec<Writer> = (0..cores).map(|_| Writer::start()).collect();
        let connected = Arc::new(AtomicUsize::new(0));
        let shares: Vec<_> = writers.iter().map(|w| w.sockets.clone()).collect();
        let count = connected.clone();
        std::thread::spawn(move || {
            for i in 0..watchers {
                let (mut socket, _) = listener.accept().expect("accepting a watcher");
                read_request(&mut socket);
                socket.set_nodelay(true).expect("TCP_NODELAY");
                (socket.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
                ))
                .expect("answering a watch");
                shares[i % shares.len()].lock().unwrap().push(socket);
                count.fetch_add(1, Ordering::Release);
            }
        });
        Floor {
            addr,
            connected,
            template,
            cpu: Mutex::new(vec![Duration::ZERO; writers.len()]),
            writers,
        }
    }
}

impl Source for Floor {
    fn update(&self, seq: usize) {
        let event = self.template.replace("{seq}", &seq.to_string());
        let mut chunk = format!("{:x}\r\n", event.len()).into_bytes();
        chunk.extend_from_slice(event.as_bytes());
        chunk.extend_from_slice(b"\r\n");
        let chunk = Arc::new(chunk);
        for writer in &self.writers {
            writer.events.send(chunk.clone()).expect("a writer runs");
        }
        let mut cpu = self.cpu.lock().unwrap();
        for (writer, cpu) in self.writers.iter().zip(cpu.iter_mut()) {
            *cpu = writer.done.recv().expect("a writer runs");
        }
    }

    fn connected(&self) -> Option<usize> {
        Some(self.connected.load(Ordering::Acquire))
    }

    fn cpu(&self) -> (Duration, bool) {
        (self.cpu.lock().unwrap().iter().sum(), true)
    }
}

impl Writer {
    fn start() -> Writer {
        let sockets = Arc::new(Mutex::new(Vec::<std::net::TcpStream>::new()));
        let (events, orders) = mpsc::channel::<Arc<Vec<u8>>>();
        let (report, done) = mpsc::channel();
        let share = sockets.clone();
        std::thread::spawn(move || {
            // Ends when the floor is dropped (its sender with it).
            for chunk in orders {
                for socket in share.lock().unwrap().iter_mut() {
                    socket.write_all(&chunk).expect("writing an event");
                }
                let usage = getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage");
                let micros = |t: nix::sys::time::TimeVal| {
                    Duration::from_secs(t.tv_sec() as u64)
                        + Duration::from_micros(t.tv_usec() as u64)
                };
                if report
                    .send(micros(usage.user_time()) + micros(usage.system_time()))
                    .is_err()
                {
                    return;
                }
            }
        });
        Writer {
            sockets,
            events,
            done,
        }
    }
}

/// Reads a request's head (a watch has no body).
fn read_request(socket: &mut std::net::TcpStream) {
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.ends_with(b"\r\n\r\n") {
        let n = socket.read(&mut buffer).expect("reading a watch request");
        assert!(n > 0, "a watcher left before asking");
        head.extend_from_slice(&buffer[..n]);
    }
}

/// One update's event as a watcher got it.
struct Event {
    seq: usize,
    /// When the kernel received the bytes that completed it (the socket's timestamp).
    arrived: SystemTime,
    /// When the watcher read them.
    read: Instant,
}

/// One watcher: reads the watch's stream and notes when each update's event arrived,
/// until it has read update `last`.
async fn watch(
    addr: std::net::SocketAddr,
    path: String,
    received: Arc<Vec<AtomicUsize>>,
    last: usize,
) -> Vec<Event> {
    let mut stream = TcpStream::connect(addr)
        .await
        .expect("connecting a watcher");
    setsockopt(stream.as_raw_fd(), sockopt::ReceiveTimestampns, &true)
        .expect("turning receive timestamps on");
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("sending the watch");
    // AsyncFd (not tokio's TcpStream) for its readiness guard, which a read may clear.
    // `new` is deprecated for I/O safety in favour of the unsafe `register`, which this
    // workspace forbids; the descriptor here is the socket the AsyncFd owns, open while
    // it lives.
    #[allow(deprecated)]
    let stream = AsyncFd::new(stream.into_std().expect("a std socket")).expect("registering");
    let mut read = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    // Bytes kept from the previous read: a marker may straddle two reads.
    let mut carried = Vec::new();
    loop {
        let (n, arrived) = read_stamped(&stream, &mut buffer).await;
        assert!(n > 0, "the watch ended early");
        let at = Instant::now();
        carried.extend_from_slice(&buffer[..n]);
        let mut consumed = 0;
        while let Some(found) = find(&carried[consumed..], MARKER) {
            let start = consumed + found + MARKER.len();
            let Some(end) = carried[start..].iter().position(|b| *b == b'"') else {
                break;
            };
            let seq: usize = std::str::from_utf8(&carried[start..start + end])
                .ok()
                .and_then(|s| s.parse().ok())
                .expect("a sequence number");
            if !read.iter().any(|event: &Event| event.seq == seq) {
                read.push(Event {
                    seq,
                    arrived,
                    read: at,
                });
                received[seq].fetch_add(1, Ordering::Release);
            }
            consumed = start + end;
            if seq == last {
                return read;
            }
        }
        // Keep what may hold the start of a marker.
        let keep = carried.len().saturating_sub(consumed).min(64);
        carried.drain(..carried.len() - keep);
    }
}

/// Reads what `stream` has, with the kernel's receive time of the last bytes read. One
/// `recvmsg` per event: a read that leaves room in `buffer` took everything the socket
/// held, so the socket's readiness is cleared then rather than by a second call that
/// would only say "would block" (a new arrival sets it again: epoll reports each one).
async fn read_stamped(
    stream: &AsyncFd<std::net::TcpStream>,
    buffer: &mut [u8],
) -> (usize, SystemTime) {
    // Room for one `SCM_TIMESTAMPNS` message (a header and a timespec), and spare.
    let mut control = Vec::with_capacity(64);
    loop {
        let mut ready = stream.readable().await.expect("waiting for the watch");
        let capacity = buffer.len();
        let received = ready.try_io(|socket| {
            let mut iov = [IoSliceMut::new(buffer)];
            let message = recvmsg::<()>(
                socket.as_raw_fd(),
                &mut iov,
                Some(&mut control),
                MsgFlags::empty(),
            )?;
            let arrived = message.cmsgs().find_map(|c| match c {
                ControlMessageOwned::ScmTimestampns(at) => Some(UNIX_EPOCH + Duration::from(at)),
                _ => None,
            });
            Ok((message.bytes, arrived))
        });
        match received {
            Ok(Ok((n, arrived))) => {
                if n < capacity {
                    ready.clear_ready();
                }
                return (n, arrived.unwrap_or_else(SystemTime::now));
            }
            Ok(Err(e)) => panic!("reading the watch: {e}"),
            // Not readable after all: readiness was cleared; wait again.
            Err(_would_block) => continue,
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
