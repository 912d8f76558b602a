//! Watch fan-out: 1,000 watchers of one collection (20 with `--quick`), each on its own
//! connection, and a series of updates of one object, one at a time. For every update and
//! watcher: the time from the update being sent to its event reaching the watcher's socket
//! (the kernel's receive timestamp, `SO_TIMESTAMPNS`), and to the watcher reading it. The
//! update's own latency (until the server acknowledged it) is shown beside, and the two
//! parts of a delivery: the update's path to its first event (for kapi, its commit, with
//! the disk's flush, and the watch cache's feed) and the fan-out alone, the time from each
//! update's first delivery to each watcher's; and, per update, its first delivery to its
//! last (the p99 of 50 updates' deliveries is about the median of the slowest one or two,
//! so this tells a few slow updates from every update being slow). Then the server's CPU
//! time per event sent (the update's own share included) and the client's cost: this
//! process's CPU time per event read, spent on the same cores as the server's.
//!
//! The delivery figure leaves out the watchers' own delay in reading, not their
//! competition for the cores, so the watchers are one thread with one `epoll` loop (see
//! [`watchers`]). A tokio task per watcher cost the client 10 µs of CPU per event, against
//! 4 µs for the loop. On loopback the server's `writev` also pays for waking the reader,
//! so the server's CPU per event fell with it, from 15 to 9.5 µs, and the raw writes'
//! from 5.8 to 4.0-5.4 µs. (With a task per watcher, running the watchers at the lowest
//! priority made every figure worse: 19.3 ms delivered p99 against 16.6.)
//!
//! Then the machine's limit, with the same watchers: [`Floor`], a server that does nothing
//! but write each event's bytes (kapi's last event, framed as kapi frames it) to every
//! connection, one `write` per connection from one thread per core.

use std::io::{IoSliceMut, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg, setsockopt, sockopt};

use super::common::{Options, ServerProcess, agent, cpu_time, own_cpu_time, percentile_ms};
use super::report::Report;

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";
/// What precedes an update's sequence number in its events.
const MARKER: &[u8] = br#""seq":""#;

/// Measures the fan-out through the server, then the raw writes' on the same machine.
pub(crate) fn measure(options: &Options, report: &mut Report) {
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
    let through_kapi = fan_out(server.addr, &path, watchers, updates, &kapi);
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
    let raw = fan_out(floor.addr, "/", watchers, updates, &floor);
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
    /// Per update: from the update sent to its first delivery (to any watcher): its own
    /// path to its first event (the server's commit and the watch cache's feed).
    firsts: Vec<Duration>,
    /// Per event: from the update's first delivery (to any watcher) to this one: the
    /// fan-out alone, without the update's own path to its first event.
    spreads: Vec<Duration>,
    /// Per update: from its first delivery to its last, the whole fan-out of one update.
    /// A delivered p99 is about the median of the slowest update or two, so these show
    /// whether a p99 is every update's or a few slow ones'.
    fan_outs: Vec<Duration>,
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
            ("update to its first delivery", &self.firsts),
            ("first delivery to each", &self.spreads),
            ("each update's first delivery to its last", &self.fan_outs),
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
    addr: SocketAddr,
    path: &str,
    watchers: usize,
    updates: usize,
    source: &impl Source,
) -> FanOut {
    let received = Arc::new(Received::new(updates, watchers));
    let reader = self::watchers(addr, path, watchers, received.clone(), updates);
    if source.connected().is_some() {
        let deadline = Instant::now() + Duration::from_secs(60);
        while source.connected() != Some(watchers) {
            assert!(Instant::now() < deadline, "the watchers never connected");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let all_read = |seq: usize| received.wait(seq);
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
    for read in reader.join().expect("the watchers") {
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
    let firsts_at: Vec<SystemTime> = (arrivals.iter())
        .map(|arrived| arrived.iter().min().copied().unwrap_or(UNIX_EPOCH))
        .collect();
    let firsts = (firsts_at.iter().zip(&sent))
        .map(|(first, (_, sent_wall))| first.duration_since(*sent_wall).unwrap_or_default())
        .collect();
    let fan_outs = (arrivals.iter().zip(&firsts_at))
        .map(|(arrived, first)| {
            let last = arrived.iter().max().copied().unwrap_or(*first);
            last.duration_since(*first).unwrap_or_default()
        })
        .collect();
    let spreads = (arrivals.iter().zip(&firsts_at))
        .flat_map(|(arrived, first)| {
            (arrived.iter()).map(move |at| at.duration_since(*first).unwrap_or_default())
        })
        .collect();
    let events = (watchers * updates) as f64;
    FanOut {
        deliveries,
        firsts,
        spreads,
        fan_outs,
        latencies,
        acknowledged,
        server_cpu: server_cpu.as_secs_f64() * 1e6 / events,
        client_cpu: client_cpu.as_secs_f64() * 1e6 / events,
    }
}

/// How many watchers have read each update, and a wait for an update to reach them all.
/// The measuring thread sleeps on a condition variable until the reader wakes it, once per
/// update: polling every 200 µs woke it 25 to 50 times during each fan-out, on the two
/// cores the server and the watchers share.
struct Received {
    /// `counts[seq]`: how many watchers have read update `seq` (only the reader writes).
    counts: Vec<AtomicUsize>,
    watchers: usize,
    lock: Mutex<()>,
    all_read: Condvar,
}

impl Received {
    fn new(updates: usize, watchers: usize) -> Received {
        Received {
            counts: (0..=updates).map(|_| AtomicUsize::new(0)).collect(),
            watchers,
            lock: Mutex::new(()),
            all_read: Condvar::new(),
        }
    }

    /// One more watcher has read update `seq`.
    fn read(&self, seq: usize) {
        if self.counts[seq].fetch_add(1, Ordering::Release) + 1 == self.watchers {
            // Under the lock, so that a waiter checks either before this or after it.
            let _held = self.lock.lock().unwrap();
            self.all_read.notify_all();
        }
    }

    /// Waits until every watcher has read update `seq`.
    fn wait(&self, seq: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut held = self.lock.lock().unwrap();
        while self.counts[seq].load(Ordering::Acquire) < self.watchers {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "update {seq} never reached every watcher");
            held = self.all_read.wait_timeout(held, left).unwrap().0;
        }
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

/// One watcher's connection and what it has read.
struct Watcher {
    socket: mio::net::TcpStream,
    /// Bytes kept from the previous read: a marker may straddle two reads.
    carried: Vec<u8>,
    read: Vec<Event>,
}

/// The watchers: `count` watches of `path` at `addr`, each on its own connection, all read
/// by one thread (one `epoll` loop, as one informer process reads its watches) that notes
/// when each update's event arrived, until every watcher has read update `last`. Returns
/// each watcher's events.
///
/// One thread rather than a task per watcher: the watchers share the server's two cores,
/// and a thread that takes whatever is ready at each wake-up costs them the least (one
/// `recvmsg` per event, no task scheduling), so the figures are the server's as far as
/// this machine allows; its cost is still measured and shown.
fn watchers(
    addr: SocketAddr,
    path: &str,
    count: usize,
    received: Arc<Received>,
    last: usize,
) -> std::thread::JoinHandle<Vec<Vec<Event>>> {
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\n\r\n");
    std::thread::spawn(move || {
        let poll = mio::Poll::new().expect("an epoll instance");
        let mut watchers: Vec<Watcher> = (0..count)
            .map(|i| {
                let mut socket = std::net::TcpStream::connect(addr).expect("connecting a watcher");
                setsockopt(socket.as_raw_fd(), sockopt::ReceiveTimestampns, &true)
                    .expect("turning receive timestamps on");
                (socket.write_all(request.as_bytes())).expect("sending the watch");
                socket.set_nonblocking(true).expect("a non-blocking socket");
                let mut socket = mio::net::TcpStream::from_std(socket);
                (poll.registry())
                    .register(&mut socket, mio::Token(i), mio::Interest::READABLE)
                    .expect("registering a watcher");
                Watcher {
                    socket,
                    carried: Vec::with_capacity(128),
                    read: Vec::with_capacity(last + 1),
                }
            })
            .collect();
        read_all(poll, &mut watchers, &received, last);
        watchers.into_iter().map(|w| w.read).collect()
    })
}

/// Reads every watcher's stream until each has read update `last`.
fn read_all(mut poll: mio::Poll, watchers: &mut [Watcher], received: &Received, last: usize) {
    let finder = memchr::memmem::Finder::new(MARKER);
    let mut events = mio::Events::with_capacity(1024);
    let mut buffer = vec![0u8; 64 * 1024];
    // Room for one `SCM_TIMESTAMPNS` message (a header and a timespec), and spare.
    let mut control = Vec::with_capacity(64);
    let mut waiting = watchers.len();
    let deadline = Instant::now() + Duration::from_secs(120);
    while waiting > 0 {
        assert!(
            Instant::now() < deadline,
            "the watchers never read update {last}"
        );
        poll.poll(&mut events, Some(Duration::from_secs(1)))
            .expect("waiting for the watches");
        for ready in &events {
            let watcher = &mut watchers[ready.token().0];
            // Edge-triggered: a read that leaves room in the buffer took everything the
            // socket held, and any later arrival is a new edge, so one `recvmsg` per
            // arrival (none to learn "would block").
            loop {
                let kept = watcher.carried.len();
                buffer[..kept].copy_from_slice(&watcher.carried);
                let Some((n, arrived)) =
                    read_stamped(&watcher.socket, &mut buffer[kept..], &mut control)
                else {
                    break;
                };
                assert!(n > 0, "the watch ended early");
                let at = Instant::now();
                let data = &buffer[..kept + n];
                let mut consumed = 0;
                while let Some(found) = finder.find(&data[consumed..]) {
                    let start = consumed + found + MARKER.len();
                    let Some(end) = memchr::memchr(b'"', &data[start..]) else {
                        break;
                    };
                    let seq: usize = std::str::from_utf8(&data[start..start + end])
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .expect("a sequence number");
                    if !watcher.read.iter().any(|event| event.seq == seq) {
                        watcher.read.push(Event {
                            seq,
                            arrived,
                            read: at,
                        });
                        received.read(seq);
                        if seq == last {
                            waiting -= 1;
                        }
                    }
                    consumed = start + end;
                }
                // Keep what may hold the start of a marker.
                let keep = (data.len() - consumed).min(64);
                watcher.carried.clear();
                watcher
                    .carried
                    .extend_from_slice(&data[data.len() - keep..]);
                if kept + n < buffer.len() {
                    break;
                }
            }
        }
    }
}

/// Reads what `socket` has into `buffer`, with the kernel's receive time of the last bytes
/// read; `None` when it has nothing.
fn read_stamped(
    socket: &mio::net::TcpStream,
    buffer: &mut [u8],
    control: &mut Vec<u8>,
) -> Option<(usize, SystemTime)> {
    let mut iov = [IoSliceMut::new(buffer)];
    match recvmsg::<()>(
        socket.as_raw_fd(),
        &mut iov,
        Some(control),
        MsgFlags::empty(),
    ) {
        Ok(message) => {
            let arrived = message.cmsgs().find_map(|c| match c {
                ControlMessageOwned::ScmTimestampns(at) => Some(UNIX_EPOCH + Duration::from(at)),
                _ => None,
            });
            Some((message.bytes, arrived.unwrap_or_else(SystemTime::now)))
        }
        Err(nix::errno::Errno::EAGAIN) => None,
        Err(e) => panic!("reading the watch: {e}"),
    }
}
