//! The accept loop: each TCP connection (after its TLS handshake, when serving HTTPS) is
//! served by hyper's HTTP/1.1 and HTTP/2 connection, in a task of its own, with the
//! client's address and TLS certificates attached to each of its requests (the runtime's
//! audit reads the one, x509 authentication the other). [`Connections`] ends them: a drain
//! stops accepting and lets each connection finish the request it serves, a stop drops
//! them all.
//!
//! Written here rather than taken from axum-server, whose connection tasks polled two
//! process-wide `Notify`s (two mutexes) at every poll of every connection before hyper's.
//! A connection here reads one atomic per poll, and takes a lock only when its task's
//! waker changes: each watch event sent costs the server 4,766 instructions instead of
//! 5,245 (callgrind, 200 watchers).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::authn::PeerCertificates;
use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::{Builder, UpgradeableConnection};
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tower_service::Service;

/// Serving: connections are accepted and served.
const SERVING: u8 = 0;
/// Draining: no new connections; each open one finishes its request and closes.
const DRAINING: u8 = 1;
/// Stopped: every connection is dropped.
const STOPPED: u8 = 2;

/// The server's connections, and how to end them.
#[derive(Clone, Default)]
pub(super) struct Connections(Arc<Shared>);

#[derive(Default)]
struct Shared {
    /// [`SERVING`], [`DRAINING`] or [`STOPPED`]; only ever grows.
    phase: AtomicU8,
    /// The task of each open connection, woken when the phase moves.
    wakers: Mutex<HashMap<u64, Waker>>,
    next_id: AtomicU64,
    /// Open connections.
    open: AtomicUsize,
    /// Notified when the phase moves or the last connection closes.
    changed: tokio::sync::Notify,
}

impl Shared {
    /// Whether connections are no longer accepted (draining or stopped).
    fn draining(&self) -> bool {
        self.phase.load(Ordering::SeqCst) >= DRAINING
    }

    fn stopped(&self) -> bool {
        self.phase.load(Ordering::SeqCst) == STOPPED
    }
}

impl Connections {
    /// Stops accepting; each connection finishes the request it is serving, then closes
    /// (hyper's graceful shutdown). Those still open after `timeout` are dropped.
    pub(super) fn drain(&self, timeout: Duration) {
        self.advance(DRAINING);
        let connections = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            connections.stop();
        });
    }

    /// Drops every connection now.
    pub(super) fn stop(&self) {
        self.advance(STOPPED);
    }

    fn advance(&self, phase: u8) {
        let shared = &*self.0;
        // Stored before the wakers are read: a connection registering after this lock
        // reads the new phase when it next looks (its registration comes first).
        shared.phase.fetch_max(phase, Ordering::SeqCst);
        for waker in shared
            .wakers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            waker.wake_by_ref();
        }
        shared.changed.notify_waiters();
    }

    fn phase(&self) -> u8 {
        self.0.phase.load(Ordering::SeqCst)
    }

    /// Until `done` holds; it is checked again at every phase change and closed connection.
    async fn until(&self, done: impl Fn(&Shared) -> bool) {
        loop {
            let changed = self.0.changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            if done(&self.0) {
                return;
            }
            changed.await;
        }
    }

    fn open(&self) -> Open {
        self.0.open.fetch_add(1, Ordering::SeqCst);
        Open {
            connections: self.clone(),
            id: self.0.next_id.fetch_add(1, Ordering::Relaxed),
            waker: None,
        }
    }
}

/// One open connection's place in [`Connections`]; closing it (dropping) counts it out.
struct Open {
    connections: Connections,
    id: u64,
    /// The waker registered last.
    waker: Option<Waker>,
}

impl Open {
    /// The phase, with `waker` registered to hear when it moves (a lock only when the
    /// connection's task has a new waker, which a tokio task does not).
    fn phase(&mut self, waker: &Waker) -> u8 {
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            let shared = &self.connections.0;
            (shared.wakers.lock().unwrap_or_else(|e| e.into_inner()))
                .insert(self.id, waker.clone());
            self.waker = Some(waker.clone());
        }
        self.connections.phase()
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        let shared = &self.connections.0;
        (shared.wakers.lock().unwrap_or_else(|e| e.into_inner())).remove(&self.id);
        if shared.open.fetch_sub(1, Ordering::SeqCst) == 1 {
            shared.changed.notify_waiters();
        }
    }
}

/// How connections are served: HTTP/1.1 and HTTP/2 (by the client's preface), with
/// `read_header_timeout` for a request's headers on HTTP/1.1.
fn builder(read_header_timeout: Duration) -> Builder<TokioExecutor> {
    let mut builder = Builder::new(TokioExecutor::new());
    (builder.http1())
        .timer(TokioTimer::new())
        .header_read_timeout(read_header_timeout);
    builder.http2().timer(TokioTimer::new());
    builder
}

/// Serves `app` on `listener` (over TLS when `tls` is given) until `connections` is
/// drained and every connection closed, or stopped. A client has `read_header_timeout`
/// for its TLS handshake, and then for each request's headers (as Go's servers bound
/// both by kube-apiserver's `ReadHeaderTimeout`).
pub(super) async fn serve(
    listener: std::net::TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    read_header_timeout: Duration,
    app: Router,
    connections: Connections,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let tls = tls.map(|config| (TlsAcceptor::from(config), read_header_timeout));
    let builder = Arc::new(builder(read_header_timeout));
    loop {
        let accepted = tokio::select! {
            biased;
            () = connections.until(Shared::draining) => break,
            accepted = listener.accept() => accepted,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "accepting a connection failed");
                // Not a hot loop while the listener keeps failing (`EMFILE`).
                tokio::select! {
                    () = connections.until(Shared::draining) => break,
                    () = tokio::time::sleep(Duration::from_millis(50)) => continue,
                }
            }
        };
        // TCP_NODELAY, as Go's servers set by default: a watch event or a response's last
        // bytes leave at once instead of waiting behind the client's delayed ACK (Nagle).
        let _ = tcp.set_nodelay(true);
        let open = connections.open();
        let service = PerConnection {
            app: app.clone(),
            peer,
            certificates: None,
        };
        tokio::spawn(connection(
            open,
            tcp,
            tls.clone(),
            Arc::clone(&builder),
            service,
        ));
    }
    drop(listener);
    connections
        .until(|s| s.open.load(Ordering::SeqCst) == 0 || s.stopped())
        .await;
    Ok(())
}

/// Serves one connection until it closes, or until [`Connections`] ends it. `open` comes
/// first so that it is dropped last (an async fn drops its parameters in reverse): the
/// connection counts until its service, which holds the registry, is gone.
async fn connection(
    mut open: Open,
    tcp: TcpStream,
    tls: Option<(TlsAcceptor, Duration)>,
    builder: Arc<Builder<TokioExecutor>>,
    mut service: PerConnection,
) {
    let Some((tls, handshake_timeout)) = tls else {
        let conn = builder.serve_connection_with_upgrades(TokioIo::new(tcp), service);
        return Graceful::new(conn, open).await;
    };
    // A connection still in its handshake is dropped when draining starts: it has no
    // request to finish.
    let handshake = std::future::poll_fn(|cx| match open.phase(cx.waker()) {
        SERVING => Poll::Pending,
        _ => Poll::Ready(()),
    });
    let stream = tokio::select! {
        biased;
        () = handshake => return,
        // Zero is no limit, as for Go's timeouts.
        stream = async {
            if handshake_timeout.is_zero() {
                Ok(tls.accept(tcp).await)
            } else {
                tokio::time::timeout(handshake_timeout, tls.accept(tcp)).await
            }
        } => match stream {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) => return tracing::debug!(%error, "a TLS handshake failed"),
            Err(_) => return tracing::debug!("a TLS handshake took too long"),
        },
    };
    service.certificates = (stream.get_ref().1.peer_certificates())
        .filter(|chain| !chain.is_empty())
        .map(|chain| PeerCertificates(Arc::new(chain.to_vec())));
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
    Graceful::new(conn, open).await
}

/// A connection that starts hyper's graceful shutdown when [`Connections`] drains, and is
/// dropped when it stops.
struct Graceful<C> {
    conn: Pin<Box<C>>,
    open: Open,
    draining: bool,
}

impl<C> Graceful<C> {
    fn new(conn: C, open: Open) -> Graceful<C> {
        Graceful {
            conn: Box::pin(conn),
            open,
            draining: false,
        }
    }
}

/// hyper-util's auto connection, whose `graceful_shutdown` is an inherent method.
trait GracefulConnection: Future {
    fn graceful_shutdown(self: Pin<&mut Self>);
}

impl<I> GracefulConnection for UpgradeableConnection<'_, TokioIo<I>, PerConnection, TokioExecutor>
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        UpgradeableConnection::graceful_shutdown(self);
    }
}

impl<C: GracefulConnection> Future for Graceful<C> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        match this.open.phase(cx.waker()) {
            SERVING => {}
            DRAINING if !this.draining => {
                this.draining = true;
                this.conn.as_mut().graceful_shutdown();
            }
            DRAINING => {}
            _ => return Poll::Ready(()),
        }
        // A connection's error (a client gone, a timeout) ends it; hyper logs nothing
        // of it either.
        this.conn.as_mut().poll(cx).map(|_| ())
    }
}

/// A connection's service: the router, each request carrying the client's address and
/// TLS certificates.
#[derive(Clone)]
struct PerConnection {
    app: Router,
    peer: SocketAddr,
    certificates: Option<PeerCertificates>,
}

impl hyper::service::Service<Request<Incoming>> for PerConnection {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = axum::routing::future::RouteFuture<Infallible>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        request.extensions_mut().insert(ConnectInfo(self.peer));
        if let Some(certificates) = &self.certificates {
            request.extensions_mut().insert(certificates.clone());
        }
        self.app.clone().call(request)
    }
}
