//! The client's TLS certificates as the runtime's [`PeerCertificates`] request extension,
//! read once per connection when its handshake is done and attached to each of its
//! requests, which x509 authentication then reads. Plain HTTP connections have none, and
//! their requests pass untouched.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum_server::accept::Accept;
use kapi_runtime::authn::PeerCertificates;
use tokio_rustls::server::TlsStream;
use tower_service::Service;

/// Wraps the TLS acceptor `A`: each connection's service attaches the certificates its
/// client presented, if any.
#[derive(Clone)]
pub struct ClientCertificates<A>(pub A);

impl<A, I, S, T> Accept<I, S> for ClientCertificates<A>
where
    A: Accept<I, S, Stream = TlsStream<T>>,
    A::Future: Send + 'static,
    A::Service: Send + 'static,
    T: Send + 'static,
{
    type Stream = TlsStream<T>;
    type Service = WithCertificates<A::Service>;
    type Future = Pin<Box<dyn Future<Output = io::Result<(TlsStream<T>, Self::Service)>> + Send>>;

    fn accept(&self, stream: I, service: S) -> Self::Future {
        let handshake = self.0.accept(stream, service);
        Box::pin(async move {
            let (stream, inner) = handshake.await?;
            let presented = (stream.get_ref().1.peer_certificates())
                .filter(|chain| !chain.is_empty())
                .map(|chain| PeerCertificates(Arc::new(chain.to_vec())));
            Ok((stream, WithCertificates { inner, presented }))
        })
    }
}

/// A connection's service that attaches the certificates of its client.
#[derive(Clone)]
pub struct WithCertificates<S> {
    inner: S,
    presented: Option<PeerCertificates>,
}

impl<S, B> Service<axum::http::Request<B>> for WithCertificates<S>
where
    S: Service<axum::http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: axum::http::Request<B>) -> S::Future {
        if let Some(presented) = &self.presented {
            request.extensions_mut().insert(presented.clone());
        }
        self.inner.call(request)
    }
}
