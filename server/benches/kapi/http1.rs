//! A lean HTTP/1.1 client for the request rates: one keep-alive connection per client
//! thread, each request written with one `write`, each answer read into a buffer the
//! connection keeps. ureq spent about as much CPU per request as the server itself (its
//! agent, header maps and body readers), on the same two cores, so the rates measured
//! ureq as much as the server; this client's own CPU per request is reported beside them.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::common::own_cpu_time;

/// One keep-alive connection to the server.
pub(crate) struct Connection {
    stream: TcpStream,
    /// What was read: the answer being parsed, then the next one's start, if any.
    buffer: Vec<u8>,
    /// The request being written.
    request: Vec<u8>,
}

/// An answer's status and content type (its body is read and dropped).
pub(crate) struct Answer<'a> {
    pub status: u16,
    pub content_type: Option<&'a str>,
}

impl Connection {
    pub(crate) fn open(addr: SocketAddr) -> Connection {
        let stream = TcpStream::connect(addr).expect("connecting to the server");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        Connection {
            stream,
            buffer: Vec::with_capacity(64 * 1024),
            request: Vec::with_capacity(4 * 1024),
        }
    }

    /// Sends `method path` with `headers` and `body` (none when empty); the answer.
    pub(crate) fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Answer<'_> {
        self.request.clear();
        let request = &mut self.request;
        write!(request, "{method} {path} HTTP/1.1\r\nHost: bench\r\n").expect("formatting");
        for (name, value) in headers {
            write!(request, "{name}: {value}\r\n").expect("formatting");
        }
        if !body.is_empty() || method != "GET" {
            write!(request, "Content-Length: {}\r\n", body.len()).expect("formatting");
        }
        request.extend_from_slice(b"\r\n");
        request.extend_from_slice(body);
        self.stream.write_all(request).expect("sending a request");
        self.read_answer()
    }

    /// Reads one answer with a `Content-Length` (kapi's, for every request here).
    fn read_answer(&mut self) -> Answer<'_> {
        self.buffer.clear();
        let (head, length) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut response = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(head) =
                (response.parse(&self.buffer)).expect("an HTTP/1.1 answer")
            {
                let length = (response.headers.iter())
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .and_then(|h| std::str::from_utf8(h.value).ok()?.parse::<usize>().ok())
                    .expect("an answer with a Content-Length");
                break (head, length);
            }
            self.fill();
        };
        while self.buffer.len() < head + length {
            self.fill();
        }
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        response.parse(&self.buffer).expect("parsed before");
        let content_type = (response.headers.iter())
            .find(|h| h.name.eq_ignore_ascii_case("content-type"))
            .and_then(|h| std::str::from_utf8(h.value).ok());
        Answer {
            status: response.code.expect("a status"),
            content_type,
        }
    }

    fn fill(&mut self) {
        let have = self.buffer.len();
        self.buffer.resize(have + 64 * 1024, 0);
        let read = (self.stream.read(&mut self.buffer[have..])).expect("reading an answer");
        assert!(read > 0, "the server closed the connection");
        self.buffer.truncate(have + read);
    }
}

/// What a run of requests measured.
pub(crate) struct Run {
    pub ops: u64,
    pub elapsed: Duration,
    /// This process's CPU time per request (the clients', on the server's cores).
    pub client_cpu_micros: f64,
}

/// `clients` threads, each on its own connection to `addr`, calling `op(connection,
/// client, i)` (i from 0) until `window` has passed.
pub(crate) fn run(
    addr: SocketAddr,
    clients: usize,
    window: Duration,
    op: impl Fn(&mut Connection, usize, u64) + Send + Sync,
) -> Run {
    let done = AtomicU64::new(0);
    let cpu = own_cpu_time();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for client in 0..clients {
            let (op, done) = (&op, &done);
            scope.spawn(move || {
                let mut connection = Connection::open(addr);
                let mut i = 0;
                while started.elapsed() < window {
                    op(&mut connection, client, i);
                    i += 1;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let elapsed = started.elapsed();
    let ops = done.load(Ordering::Relaxed);
    Run {
        ops,
        elapsed,
        client_cpu_micros: (own_cpu_time() - cpu).as_secs_f64() * 1e6 / ops.max(1) as f64,
    }
}
