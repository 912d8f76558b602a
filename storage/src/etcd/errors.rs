//! etcd's failures as [`storage::Error`](crate::Error)s, in one place.
//!
//! etcd reports its own conditions as gRPC statuses whose messages are stable strings
//! (`etcdserver: mvcc: required revision has been compacted`, ...); transport failures
//! (refused connections, a connection lost under a request, a lost quorum, no leader) are
//! the cluster being unavailable.

use etcd_client::Error as EtcdError;

use crate::{Error, Revision};

/// What the failed request was, for the error's details.
#[derive(Clone, Copy, Debug)]
pub(super) enum Context {
    /// Setting up the client.
    Connect,
    /// A read (or compaction) at `revision` (`0`: the latest).
    Read { revision: Revision },
    /// A write of `size` bytes.
    Write { size: usize },
}

/// The gRPC status codes this mapping tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Code {
    Cancelled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    ResourceExhausted,
    OutOfRange,
    Unavailable,
    Other,
}

impl Code {
    /// The code of a gRPC status error; `None` for other errors.
    fn of(error: &EtcdError) -> Option<Code> {
        let EtcdError::GRpcStatus(status) = error else {
            return None;
        };
        // By number, as gRPC defines them.
        Some(match status.code() as i32 {
            1 => Code::Cancelled,
            2 => Code::Unknown,
            3 => Code::InvalidArgument,
            4 => Code::DeadlineExceeded,
            8 => Code::ResourceExhausted,
            11 => Code::OutOfRange,
            14 => Code::Unavailable,
            _ => Code::Other,
        })
    }
}

/// The message of a gRPC status, or the error's text.
fn message(error: &EtcdError) -> String {
    match error {
        EtcdError::GRpcStatus(status) => status.message().to_owned(),
        other => other.to_string(),
    }
}

/// Whether the connection to the member failed under the request (the member went away: a
/// broken pipe, a reset). tonic reports that as an `Unknown` status, "transport error",
/// with the I/O error in its source chain, not as `Unavailable`.
fn connection_lost(error: &EtcdError) -> bool {
    let EtcdError::GRpcStatus(status) = error else {
        return false;
    };
    Code::of(error) == Some(Code::Unknown)
        && transport_failure(status.message(), std::error::Error::source(status))
}

/// An `Unknown` status's message and source describe a transport failure: an I/O error
/// somewhere in the chain, or tonic's text for its transport errors.
fn transport_failure(message: &str, source: Option<&(dyn std::error::Error + 'static)>) -> bool {
    let mut next = source;
    while let Some(error) = next {
        if error.is::<std::io::Error>() {
            return true;
        }
        next = error.source();
    }
    message == "transport error"
}

/// Whether the request can be sent again (on another member, after a pause): always for a
/// read that failed for want of a member; for a write only when it never reached raft: the
/// connection was refused, or the member refused it for want of a leader (etcd checks
/// `require-leader` before anything else), while `electing` (an election may be under way).
/// A write that reached a member may have been applied, so it is not sent twice.
pub(super) fn retryable(error: &EtcdError, read: bool, electing: bool) -> bool {
    let text = message(error);
    let not_sent = text.contains("tcp connect error")
        || text.contains("error trying to connect")
        || text.contains("Connection refused");
    let no_leader = text.contains("no leader");
    let unavailable = matches!(error, EtcdError::TransportError(_) | EtcdError::IoError(_))
        || Code::of(error) == Some(Code::Unavailable)
        || connection_lost(error);
    not_sent || (no_leader && electing) || (read && unavailable && !no_leader)
}

/// The storage error for a failed etcd request.
pub(super) fn map_error(error: EtcdError, context: Context) -> Error {
    let text = message(&error);
    let requested = match context {
        Context::Read { revision } => revision,
        _ => 0,
    };
    if text.contains("required revision has been compacted") {
        return Error::Compacted {
            requested,
            compacted: 0,
        };
    }
    if text.contains("required revision is a future revision") {
        return Error::FutureRevision {
            requested,
            current: 0,
        };
    }
    if text.contains("request is too large") {
        let size = match context {
            Context::Write { size } => size,
            _ => 0,
        };
        return Error::TooLarge {
            size,
            limit: super::MAX_REQUEST_BYTES,
        };
    }
    match (&error, Code::of(&error)) {
        (EtcdError::TransportError(_) | EtcdError::IoError(_), _) => {
            Error::Unavailable(format!("etcd is unreachable: {error}"))
        }
        // A write may have been applied before the connection broke: it is not retried
        // (`retryable`), and the client learns the cluster is unavailable, as for a lost
        // quorum.
        _ if connection_lost(&error) => {
            Error::Unavailable(format!("etcd: the connection was lost: {error}"))
        }
        (_, Some(Code::DeadlineExceeded)) => Error::Timeout(format!("etcd: {text}")),
        // The client's own deadline (tonic's, answered as `Cancelled`): the request was
        // cut in flight, and a write may still be applied, so it is a timeout (504), not
        // "unavailable" (503), which says it never happened.
        _ if text.contains("Timeout expired") => Error::Timeout(format!("etcd: {text}")),
        (_, Some(Code::Unavailable | Code::Cancelled | Code::ResourceExhausted)) => {
            Error::Unavailable(format!("etcd: {text}"))
        }
        (EtcdError::InvalidArgs(_) | EtcdError::InvalidUri(_), _)
        | (_, Some(Code::InvalidArgument | Code::OutOfRange)) => {
            Error::InvalidArgument(format!("etcd: {text}"))
        }
        _ => Error::Internal(format!("etcd: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::transport_failure;

    /// An error whose source is another, as tonic wraps hyper's I/O errors.
    #[derive(Debug)]
    struct Wrapped(std::io::Error);

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("transport error")
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_lost_connection_is_a_transport_failure() {
        let broken = Wrapped(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(transport_failure("whatever tonic says", Some(&broken)));
        assert!(transport_failure("transport error", None));
        // etcd's own failures reported as `Unknown` are not.
        let other = std::fmt::Error;
        assert!(!transport_failure(
            "etcdserver: unknown method",
            Some(&other)
        ));
        assert!(!transport_failure("etcdserver: unknown method", None));
    }
}
