//! kube-apiserver's range allocators: Service cluster IPs from a CIDR
//! ([`IpAllocator`], kube's `ipallocator`) and node ports from a port range
//! ([`PortAllocator`], kube's `portallocator`): one [`Allocator`] over a [`Range`], a
//! bitmap ([`bitmap`]) of the range's values ([`range`]) kept in storage ([`stored`]) so
//! that every server on one store shares it.
//!
//! The allocators know values and ranges, not Services: which values a Service takes, and
//! when they are given back, is the API server's (kube's Service REST storage).

pub mod bitmap;
pub mod range;
pub mod stored;

use std::sync::Arc;

pub use bitmap::Bitmap;
pub use range::{IpRange, PortRange, Range};
pub use stored::{Snapshot, Stored};

use kapi_storage::Storage;

/// Why an allocation failed; `Display` is kube's message.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No value is free.
    #[error("range is full")]
    Full,
    /// The value asked for is taken ([`Allocator`] says what of, in kube's words).
    #[error("provided value is already allocated")]
    Allocated,
    /// The stored bitmap is of another range than the server's: the repair pass rewrites it.
    #[error("the stored range {stored} is not the configured range {configured}")]
    RangeChanged {
        /// The stored range.
        stored: String,
        /// The server's.
        configured: String,
    },
    /// The stored object does not decode.
    #[error("corrupt range allocation {0}")]
    Corrupt(String),
    /// Storage failed.
    #[error(transparent)]
    Storage(#[from] kapi_storage::Error),
}

/// Why a value could not be allocated; `Display` is kube's message.
#[derive(Debug, thiserror::Error)]
pub enum AllocateError {
    /// The value is outside what the range hands out (kube's message, from the range).
    #[error("{0}")]
    NotInRange(String),
    /// It is taken (`IP`, `port`: what the range's values are called).
    #[error("provided {0} is already allocated")]
    Allocated(&'static str),
    /// Nothing is free.
    #[error("range is full")]
    Full,
    /// Anything else (storage).
    #[error(transparent)]
    Other(Error),
}

/// The values of one range, kept in storage.
pub struct Allocator<R> {
    range: R,
    stored: Stored,
}

/// Cluster IPs of one CIDR.
pub type IpAllocator = Allocator<IpRange>;

/// Node ports of one range.
pub type PortAllocator = Allocator<PortRange>;

impl<R: Range> Allocator<R> {
    /// The values of `range`, kept under `key`.
    pub fn new(storage: Arc<dyn Storage>, key: String, range: R) -> Allocator<R> {
        let stored = Stored::new(
            storage,
            key,
            range.to_string(),
            range.size(),
            range.static_band(),
        );
        Allocator { range, stored }
    }

    /// The range.
    pub fn range(&self) -> &R {
        &self.range
    }

    /// The stored bitmap.
    pub fn stored(&self) -> &Stored {
        &self.stored
    }

    /// Whether `value` is one the range hands out.
    pub fn check(&self, value: R::Value) -> Result<usize, AllocateError> {
        (self.range.offset(value))
            .ok_or_else(|| AllocateError::NotInRange(self.range.outside(value)))
    }

    /// Takes `value`.
    pub async fn allocate(&self, value: R::Value, dry_run: bool) -> Result<(), AllocateError> {
        let offset = self.check(value)?;
        (self.stored.allocate(offset, dry_run).await).map_err(|e| self.error(e))
    }

    /// Takes a free value.
    pub async fn allocate_next(&self, dry_run: bool) -> Result<R::Value, AllocateError> {
        let offset = (self.stored.allocate_next(dry_run).await).map_err(|e| self.error(e))?;
        Ok(self.range.value(offset))
    }

    /// Whether `value` is taken now (`false` outside the range).
    pub async fn is_taken(&self, value: R::Value) -> Result<bool, Error> {
        let Some(offset) = self.range.offset(value) else {
            return Ok(false);
        };
        Ok(self.stored.snapshot().await?.bitmap.has(offset))
    }

    /// Gives `value` back (nothing when it is outside the range or free).
    pub async fn release(&self, value: R::Value) -> Result<(), Error> {
        match self.range.offset(value) {
            Some(offset) => self.stored.release(offset).await,
            None => Ok(()),
        }
    }

    fn error(&self, error: Error) -> AllocateError {
        match error {
            Error::Full => AllocateError::Full,
            Error::Allocated => AllocateError::Allocated(R::NOUN),
            other => AllocateError::Other(other),
        }
    }
}
