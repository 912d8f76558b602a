//! kube-apiserver's range allocators: Service cluster IPs from a CIDR
//! ([`IpAllocator`], kube's `ipallocator`) and node ports from a port range
//! ([`PortAllocator`], kube's `portallocator`), each a bitmap ([`bitmap`]) of its range
//! ([`range`]) kept in storage ([`stored`]) so that every server on one store shares it.
//!
//! The allocators know values and ranges, not Services: which values a Service takes, and
//! when they are given back, is the API server's (kube's Service REST storage).

pub mod bitmap;
pub mod range;
pub mod stored;

use std::net::IpAddr;
use std::sync::Arc;

pub use bitmap::Bitmap;
pub use range::{IpRange, PortRange};
pub use stored::{Snapshot, Stored};

use kapi_storage::Storage;

/// Why an allocation failed; `Display` is kube's message.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No value is free.
    #[error("range is full")]
    Full,
    /// The value asked for is taken (the allocator says what of: [`IpAllocator`] and
    /// [`PortAllocator`] map it to kube's wording).
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

/// Why an address could not be allocated; `Display` is kube's message.
#[derive(Debug, thiserror::Error)]
pub enum IpError {
    /// The address is outside what the range hands out.
    #[error("the provided IP ({ip}) is not in the valid range. The range of valid IPs is {range}")]
    NotInRange {
        /// The address.
        ip: IpAddr,
        /// The range's CIDR.
        range: String,
    },
    /// It is taken.
    #[error("provided IP is already allocated")]
    Allocated,
    /// Nothing is free.
    #[error("range is full")]
    Full,
    /// Anything else (storage).
    #[error(transparent)]
    Other(Error),
}

impl From<Error> for IpError {
    fn from(error: Error) -> IpError {
        match error {
            Error::Full => IpError::Full,
            Error::Allocated => IpError::Allocated,
            other => IpError::Other(other),
        }
    }
}

/// Why a port could not be allocated; `Display` is kube's message.
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// The port is outside the range.
    #[error("provided port is not in the valid range. The range of valid ports is {range}")]
    NotInRange {
        /// The range.
        range: String,
    },
    /// It is taken.
    #[error("provided port is already allocated")]
    Allocated,
    /// Nothing is free.
    #[error("range is full")]
    Full,
    /// Anything else (storage).
    #[error(transparent)]
    Other(Error),
}

impl From<Error> for PortError {
    fn from(error: Error) -> PortError {
        match error {
            Error::Full => PortError::Full,
            Error::Allocated => PortError::Allocated,
            other => PortError::Other(other),
        }
    }
}

/// The cluster IPs of one CIDR.
pub struct IpAllocator {
    range: IpRange,
    stored: Stored,
}

impl IpAllocator {
    /// The addresses of `range`, kept under `key`.
    pub fn new(storage: Arc<dyn Storage>, key: String, range: IpRange) -> IpAllocator {
        let stored = Stored::new(
            storage,
            key,
            range.to_string(),
            range.size(),
            range.static_band(),
        );
        IpAllocator { range, stored }
    }

    /// The range.
    pub fn range(&self) -> &IpRange {
        &self.range
    }

    /// The stored bitmap.
    pub fn stored(&self) -> &Stored {
        &self.stored
    }

    /// Takes `ip`.
    pub async fn allocate(&self, ip: IpAddr, dry_run: bool) -> Result<(), IpError> {
        let offset = self.offset(ip)?;
        Ok(self.stored.allocate(offset, dry_run).await?)
    }

    /// Takes a free address.
    pub async fn allocate_next(&self, dry_run: bool) -> Result<IpAddr, IpError> {
        let offset = self.stored.allocate_next(dry_run).await?;
        Ok(self.range.ip(offset))
    }

    /// Gives `ip` back (nothing when it is outside the range or free).
    pub async fn release(&self, ip: IpAddr) -> Result<(), Error> {
        match self.range.offset(ip) {
            Some(offset) => self.stored.release(offset).await,
            None => Ok(()),
        }
    }

    fn offset(&self, ip: IpAddr) -> Result<usize, IpError> {
        self.range.offset(ip).ok_or_else(|| IpError::NotInRange {
            ip,
            range: self.range.to_string(),
        })
    }
}

/// The node ports of one range.
pub struct PortAllocator {
    range: PortRange,
    stored: Stored,
}

impl PortAllocator {
    /// The ports of `range`, kept under `key`.
    pub fn new(storage: Arc<dyn Storage>, key: String, range: PortRange) -> PortAllocator {
        let stored = Stored::new(
            storage,
            key,
            range.to_string(),
            range.size(),
            range.static_band(),
        );
        PortAllocator { range, stored }
    }

    /// The range.
    pub fn range(&self) -> &PortRange {
        &self.range
    }

    /// The stored bitmap.
    pub fn stored(&self) -> &Stored {
        &self.stored
    }

    /// Takes `port`.
    pub async fn allocate(&self, port: i32, dry_run: bool) -> Result<(), PortError> {
        let offset = (self.range.offset(port)).ok_or_else(|| PortError::NotInRange {
            range: self.range.to_string(),
        })?;
        Ok(self.stored.allocate(offset, dry_run).await?)
    }

    /// Whether `port` is taken now (`false` outside the range).
    pub async fn is_taken(&self, port: i32) -> Result<bool, Error> {
        let Some(offset) = self.range.offset(port) else {
            return Ok(false);
        };
        Ok(self.stored.snapshot().await?.bitmap.has(offset))
    }

    /// Takes a free port.
    pub async fn allocate_next(&self, dry_run: bool) -> Result<i32, PortError> {
        let offset = self.stored.allocate_next(dry_run).await?;
        Ok(self.range.port(offset))
    }

    /// Gives `port` back (nothing when it is outside the range or free).
    pub async fn release(&self, port: i32) -> Result<(), Error> {
        match self.range.offset(port) {
            Some(offset) => self.stored.release(offset).await,
            None => Ok(()),
        }
    }
}
