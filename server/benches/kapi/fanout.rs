//! Watch fan-out: 1,000 watchers of one collection (20 with `--quick`), each on its own
//! connection, and a series of updates of one object, one at a time. For every update and
//! watcher: the time from the update being sent to its event reaching the watcher's socket
//! (the kernel's receive timestamp, `SO_TIMESTAMPNS`), and to the watcher reading it. The
//! update's own latency (until the server acknowledged it) is shown beside, with the
//! server's CPU time per event sent (the update's own share included) and the client's
//! cost: this process's CPU time per event read, spent on the same cores as the server's.
//! The delivery figure leaves out the watchers' own delay in reading (their task
//! scheduling and parsing), not their competition for the cores. (Running the watchers at
//! the lowest priority made every figure worse: 19.3 ms delivered p99 against 16.6, and
//! the server's CPU per event 19.2 µs against 13.6.)

use std::io::IoSliceMut;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg, setsockopt, sockopt};
use tokio::io::{AsyncWriteExt, Interest};
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

use super::common::{CpuMeter, Options, ServerProcess, agent, own_cpu_time, percentile_ms};
use super::report::Report;

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";
/// What precedes an update's sequence number in its events.
const MARKER: &[u8] = br#""seq":""#;

/// Measures the fan-out.
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

    // received[seq]: how many watchers have read update `seq`.
    let received: Arc<Vec<AtomicUsize>> =
        Arc::new((0..=updates).map(|_| AtomicUsize::new(0)).collect());
    let path = format!("{WEBAPPS}?watch=1&resourceVersion=0");
    let tasks: Vec<_> = (0..watchers)
        .map(|_| runtime.spawn(watch(server.addr, path.clone(), received.clone(), updates)))
        .collect();

    let patch = |seq: usize| {
        let response = (agent.patch(server.url(&format!("{WEBAPPS}/target"))))
            .header("Content-Type", "application/merge-patch+json")
            .send(format!(
                r#"{{"metadata":{{"annotations":{{"seq":"{seq}"}}}}}}"#
            ))
            .expect("PATCH");
        assert_eq!(super::common::status_of(response), 200, "an update");
    };
    let all_read = |seq: usize| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while received[seq].load(Ordering::Acquire) < watchers {
            assert!(
                Instant::now() < deadline,
                "update {seq} never reached every watcher"
            );
            std::thread::sleep(Duration::from_micros(200));
        }
    };
    // Update 0 warms up: every watcher is connected once it has read it.
    patch(0);
    all_read(0);
    let cpu = own_cpu_time();
    let server_cpu = CpuMeter::start(&[server.pid()]);
    let mut sent = Vec::new();
    let mut acknowledged = Vec::new();
    for seq in 1..=updates {
        let started = (Instant::now(), SystemTime::now());
        patch(seq);
        acknowledged.push(started.0.elapsed());
        sent.push(started);
        all_read(seq);
    }
    let client_cpu = own_cpu_time().saturating_sub(cpu);
    let server_cpu = server_cpu.per_op((watchers * updates) as u64)[0];
    let mut latencies = Vec::with_capacity(watchers * updates);
    let mut deliveries = Vec::with_capacity(watchers * updates);
    for task in tasks {
        let read = runtime.block_on(task).expect("a watcher");
        for event in read.into_iter().filter(|event| event.seq > 0) {
            let (sent_at, sent_wall) = sent[event.seq - 1];
            latencies.push(event.read.saturating_duration_since(sent_at));
            deliveries.push((event.arrived.duration_since(sent_wall)).unwrap_or_default());
        }
    }
    assert_eq!(
        latencies.len(),
        watchers * updates,
        "every event was read once"
    );
    let label = format!("fan-out to {watchers} watchers");
    for (what, samples) in [
        ("update to event delivered", &mut deliveries),
        ("update to event read", &mut latencies),
    ] {
        for (name, p) in [("p50", 50.0), ("p99", 99.0), ("max", 100.0)] {
            report.add(
                format!("{label}: {what}, {name}"),
                percentile_ms(samples, p),
                "ms",
            );
        }
    }
    report.add(
        format!("{label}: the update acknowledged, p50"),
        percentile_ms(&mut acknowledged, 50.0),
        "ms",
    );
    report.add(
        format!("{label}: server CPU per event sent"),
        server_cpu,
        "µs",
    );
    report.add(
        format!("{label}: client CPU per event read"),
        client_cpu.as_secs_f64() * 1e6 / (watchers * updates) as f64,
        "µs",
    );
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

/// Reads what `stream` has, with the kernel's receive time of the last bytes read.
async fn read_stamped(stream: &TcpStream, buffer: &mut [u8]) -> (usize, SystemTime) {
    // Room for one `SCM_TIMESTAMPNS` message (a header and a timespec), and spare.
    let mut control = Vec::with_capacity(64);
    loop {
        stream.readable().await.expect("waiting for the watch");
        let received = stream.try_io(Interest::READABLE, || {
            let mut iov = [IoSliceMut::new(buffer)];
            let message = recvmsg::<()>(
                stream.as_raw_fd(),
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
            Ok((n, arrived)) => {
                return (n, arrived.unwrap_or_else(SystemTime::now));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => panic!("reading the watch: {e}"),
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
