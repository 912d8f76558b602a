//! A boundary between two filters of the chain: the inner filter held behind an `Arc`.
//!
//! A tower filter clones its inner service for every request it passes on, and a stack's
//! clone is deep: without boundaries, a request through n filters clones the first's inner
//! stack (n - 1 filters), then the second's (n - 2), and so on, about n²/2 filter states
//! in all, each a few reference counts that both cores keep touching. With a boundary
//! under each filter, a filter's inner stack is one `Arc`, and each filter is cloned once
//! per request.

use std::sync::Arc;
use std::task::{Context, Poll};

use tower::util::Oneshot;
use tower::{Layer, Service, ServiceExt};

/// The filter (and what it wraps) behind one reference count.
pub struct Shared<S>(Arc<S>);

impl<S> Clone for Shared<S> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<S, R> Service<R> for Shared<S>
where
    S: Service<R> + Clone,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Oneshot<S, R>;

    /// Ready: each call readies its own clone ([`Oneshot`]).
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: R) -> Self::Future {
        S::clone(&self.0).oneshot(request)
    }
}

/// Puts a [`Shared`] boundary around the service it wraps.
#[derive(Clone, Copy)]
pub struct SharedLayer;

impl<S> Layer<S> for SharedLayer {
    type Service = Shared<S>;

    fn layer(&self, inner: S) -> Shared<S> {
        Shared(Arc::new(inner))
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A service that counts its clones.
    struct Counted(Arc<AtomicUsize>);

    impl Clone for Counted {
        fn clone(&self) -> Self {
            self.0.fetch_add(1, Ordering::Relaxed);
            Counted(Arc::clone(&self.0))
        }
    }

    impl Service<u32> for Counted {
        type Response = u32;
        type Error = Infallible;
        type Future = std::future::Ready<Result<u32, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: u32) -> Self::Future {
            std::future::ready(Ok(request + 1))
        }
    }

    #[tokio::test]
    async fn a_call_clones_the_inner_service_once_and_the_boundary_never() {
        let clones = Arc::new(AtomicUsize::new(0));
        let mut shared = SharedLayer.layer(Counted(Arc::clone(&clones)));
        let copy = shared.clone();
        assert_eq!(
            clones.load(Ordering::Relaxed),
            0,
            "a boundary's clone is an Arc's"
        );
        assert_eq!(shared.ready().await.unwrap().call(1).await, Ok(2));
        assert_eq!(clones.load(Ordering::Relaxed), 1, "one clone per call");
        drop(copy);
    }
}
