//! The handler chain's contract: what follows a filter (the later filters, the aggregator,
//! the router), so that each can hand a request on without knowing what comes after it.

use std::future::Future;

use axum::extract::Request;
use axum::response::Response;

/// What follows a filter: the later filters and the router, run once. A filter passes the
/// request on with `next.run(request).await`, or answers without it.
pub trait Next: Send {
    /// Passes `request` on; resolves to the answer that comes back.
    fn run(self, request: Request) -> impl Future<Output = Response> + Send;
}

impl<F, Fut> Next for F
where
    F: FnOnce(Request) -> Fut + Send,
    Fut: Future<Output = Response> + Send,
{
    /// Boxed: nested in place, each level would move the whole future below it when it
    /// starts (9 KiB at the top of the chain); boxed, each moves only its own.
    fn run(self, request: Request) -> impl Future<Output = Response> + Send {
        Box::pin(self(request))
    }
}
