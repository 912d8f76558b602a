//! What every layer of the HTTP side shares, below them all: the one mapping of an
//! `ApiError` to its response ([`ErrorResponse`]), what a request asks for
//! ([`RequestInfo`], read once by the handler chain and used by authorization, audit and
//! the request log), what follows a filter ([`Next`]), documents served with entity tags ([`Prepared`]), and the request
//! limits. The handler chain (`filters`), the aggregator and the endpoints all build on
//! these; none of them imports another for them.

mod next;
mod prepared;
pub mod request_info;
mod status;

pub use next::Next;
pub use prepared::{Prepared, fnv1a, not_modified};
pub use request_info::RequestInfo;
pub use status::{ErrorResponse, add_warning};

/// The largest request body accepted: 3 MiB, kube-apiserver's limit.
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;
