//! One deadline for the storage requests of one registry operation.
//!
//! A backend bounds each request by its own deadline (etcd's: 5 s). An operation that
//! follows a request cut off in flight with another (a create that reads its key back to
//! learn whether its write landed) must not add a second deadline to the first: the client
//! is owed an answer within one. Inside [`shared`], the first request fixes the deadline and
//! every later one ends by it; a write ends earlier ([`WRITE_SHARE`] of its own timeout),
//! so that the read settling it, when it is cut off, still has time within the deadline (a
//! create cut off by an etcd election learns it landed). Outside, each request has its
//! own.
//!
//! The deadline is task-local: a backend that runs a request on a task of its own (etcd's
//! batched creates) bounds its caller's wait for the answer by it instead.

use std::cell::Cell;
use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

tokio::task_local! {
    static SHARED: Cell<Option<Instant>>;
}

/// The part of its own timeout a write inside [`shared`] may take: the rest of the
/// operation's deadline is the settling read's.
pub const WRITE_SHARE: f64 = 0.6;

/// Runs `operation` with one deadline for all its storage requests: the first request's.
pub async fn shared<F: Future>(operation: F) -> F::Output {
    SHARED.scope(Cell::new(None), operation).await
}

/// The deadline of a request that may take `timeout` on its own: that, or the earlier one
/// of the operation it belongs to.
pub fn of_request(timeout: Duration) -> Instant {
    let own = Instant::now() + timeout;
    SHARED
        .try_with(|shared| match shared.get() {
            Some(deadline) => deadline.min(own),
            None => {
                shared.set(Some(own));
                own
            }
        })
        .unwrap_or(own)
}

/// The deadline of a write that may take `timeout` on its own: inside an operation, the
/// earlier of the operation's deadline and [`WRITE_SHARE`] of `timeout` from now.
pub fn of_write(timeout: Duration) -> Instant {
    let deadline = of_request(timeout);
    match SHARED.try_with(|_| ()) {
        Ok(()) => deadline.min(Instant::now() + timeout.mul_f64(WRITE_SHARE)),
        Err(_) => deadline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_of_one_operation_share_the_first_deadline() {
        let timeout = Duration::from_secs(5);
        shared(async {
            let first = of_request(timeout);
            // Later requests end by the first one's deadline, not 5 s from their start.
            assert_eq!(of_request(timeout), first);
            assert!(of_request(Duration::ZERO) <= first);
            // A write leaves the rest to a read that settles it.
            assert!(of_write(timeout) < first);
        })
        .await;
        // Outside an operation each request has its own.
        let first = of_request(timeout);
        assert!(of_request(Duration::from_secs(6)) > first);
        assert!(of_write(Duration::from_secs(6)) > first);
    }
}
