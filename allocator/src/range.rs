//! The ranges values are allocated from, and the offsets of their values in a bitmap:
//! a Service CIDR's addresses (kube's `ipallocator.Range`) and the node port range
//! (kube's `portallocator`).

use std::fmt;
use std::net::IpAddr;

use kapi_core::net::cidr::Cidr;

/// What an [`Allocator`](crate::Allocator) hands out: values with an offset in a
/// bitmap, and kube's static band of the range (values picked last when none is asked
/// for). `Display` is the range as stored and as kube's messages name it.
pub trait Range: fmt::Display {
    /// A value of the range.
    type Value: Copy;
    /// What kube's messages call a value (`provided IP is already allocated`).
    const NOUN: &'static str;

    /// How many values it has.
    fn size(&self) -> usize;
    /// The size of its static band.
    fn static_band(&self) -> usize;
    /// The offset of `value`; `None` outside what the range hands out.
    fn offset(&self, value: Self::Value) -> Option<usize>;
    /// The value at `offset`.
    fn value(&self, offset: usize) -> Self::Value;
    /// kube's message for `value` outside the range.
    fn outside(&self, value: Self::Value) -> String;
}

impl Range for IpRange {
    type Value = IpAddr;
    const NOUN: &'static str = "IP";

    fn size(&self) -> usize {
        self.size
    }
    fn static_band(&self) -> usize {
        IpRange::static_band(self)
    }
    fn offset(&self, ip: IpAddr) -> Option<usize> {
        IpRange::offset(self, ip)
    }
    fn value(&self, offset: usize) -> IpAddr {
        self.ip(offset)
    }
    fn outside(&self, ip: IpAddr) -> String {
        format!(
            "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {self}"
        )
    }
}

impl Range for PortRange {
    type Value = i32;
    const NOUN: &'static str = "port";

    fn size(&self) -> usize {
        self.size
    }
    fn static_band(&self) -> usize {
        PortRange::static_band(self)
    }
    fn offset(&self, port: i32) -> Option<usize> {
        PortRange::offset(self, port)
    }
    fn value(&self, offset: usize) -> i32 {
        self.port(offset)
    }
    fn outside(&self, _port: i32) -> String {
        format!("provided port is not in the valid range. The range of valid ports is {self}")
    }
}

/// The largest bitmap kept for an IPv6 range, as kube: only its first 65536 addresses
/// are handed out.
const MAX_IPV6_SIZE: u128 = 1 << 16;

/// A Service CIDR: the addresses from the one after the network's (`.0`, never handed
/// out) to the one before its broadcast address (IPv4; for IPv6, at most 65536
/// addresses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpRange {
    cidr: Cidr,
    /// The first address handed out, as a number.
    base: u128,
    size: usize,
}

impl IpRange {
    /// The range of `cidr` (its host bits cleared).
    pub fn new(cidr: Cidr) -> IpRange {
        let cidr = cidr.masked();
        let bits = if cidr.addr().is_ipv4() { 32 } else { 128 };
        let host_bits = u32::from(bits - cidr.prefix_len());
        let total = 1u128.checked_shl(host_bits).unwrap_or(u128::MAX);
        let size = match cidr.addr() {
            // Neither the network's address nor its broadcast address.
            IpAddr::V4(_) => total.saturating_sub(2),
            IpAddr::V6(_) => total.min(MAX_IPV6_SIZE).saturating_sub(1),
        };
        IpRange {
            cidr,
            base: number(cidr.addr()) + 1,
            size: size as usize,
        }
    }

    /// The CIDR.
    pub fn cidr(&self) -> Cidr {
        self.cidr
    }

    /// How many addresses it hands out.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether the range is IPv6.
    pub fn is_ipv6(&self) -> bool {
        self.cidr.addr().is_ipv6()
    }

    /// The offset of `ip` in the bitmap; `None` outside what the range hands out.
    pub fn offset(&self, ip: IpAddr) -> Option<usize> {
        if ip.is_ipv4() != self.cidr.addr().is_ipv4() || !self.cidr.contains_ip(ip) {
            return None;
        }
        let offset = number(ip).checked_sub(self.base)?;
        (offset < self.size as u128).then_some(offset as usize)
    }

    /// The address at `offset`.
    pub fn ip(&self, offset: usize) -> IpAddr {
        let n = self.base + offset as u128;
        match self.cidr.addr() {
            IpAddr::V4(_) => IpAddr::V4((n as u32).into()),
            IpAddr::V6(_) => IpAddr::V6(n.into()),
        }
    }

    /// The size of the static band (kube's `calculateRangeOffset` for Service CIDRs:
    /// `min(max(16, addresses / 16), 256)`, none for 16 addresses or fewer).
    pub fn static_band(&self) -> usize {
        let bits = if self.cidr.addr().is_ipv4() { 32 } else { 128 };
        let host_bits = u32::from(bits - self.cidr.prefix_len());
        let total = 1u128.checked_shl(host_bits).unwrap_or(u128::MAX);
        band(total, 16, 256, 16)
    }
}

impl fmt::Display for IpRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.cidr)
    }
}

/// The node port range (`--service-node-port-range`, `30000-32767`): `base` and the
/// `size` ports from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    base: u16,
    size: usize,
}

impl PortRange {
    /// The range from `first` to `last`, both included; `None` when it is empty.
    pub fn new(first: u16, last: u16) -> Option<PortRange> {
        (first <= last).then(|| PortRange {
            base: first,
            size: usize::from(last - first) + 1,
        })
    }

    /// Parses kube's `<first>-<last>` (or a single `<port>`).
    pub fn parse(value: &str) -> Result<PortRange, String> {
        let (first, last) = value.split_once('-').unwrap_or((value, value));
        let port = |s: &str| {
            (s.trim().parse::<u16>()).map_err(|_| format!("invalid port range {value:?}"))
        };
        PortRange::new(port(first)?, port(last)?).ok_or_else(|| {
            format!("invalid port range {value:?}: the first port is above the last")
        })
    }

    /// How many ports it has.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The offset of `port`; `None` outside the range.
    pub fn offset(&self, port: i32) -> Option<usize> {
        let offset = usize::try_from(port - i32::from(self.base)).ok()?;
        (offset < self.size).then_some(offset)
    }

    /// The port at `offset`.
    pub fn port(&self, offset: usize) -> i32 {
        i32::from(self.base) + offset as i32
    }

    /// The size of the static band (kube's `calculateRangeOffset` for ports:
    /// `min(max(16, ports / 32), 128)`, none for 16 ports or fewer).
    pub fn static_band(&self) -> usize {
        band(self.size as u128, 16, 128, 32)
    }
}

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.base, self.port(self.size - 1))
    }
}

/// `min(max(min, size / step), max)`, and none for a range of `min` values or fewer.
fn band(size: u128, min: u128, max: u128, step: u128) -> usize {
    if size <= min {
        return 0;
    }
    (size / step).clamp(min, max) as usize
}

fn number(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(cidr: &str) -> IpRange {
        IpRange::new(Cidr::parse(cidr).unwrap())
    }

    #[test]
    fn ipv4_ranges_skip_the_network_and_broadcast_addresses() {
        let r = range("10.0.0.0/24");
        assert_eq!(r.size(), 254);
        assert_eq!(r.ip(0).to_string(), "10.0.0.1");
        assert_eq!(r.ip(253).to_string(), "10.0.0.254");
        assert_eq!(r.offset("10.0.0.0".parse().unwrap()), None);
        assert_eq!(r.offset("10.0.0.255".parse().unwrap()), None);
        assert_eq!(r.offset("10.0.1.1".parse().unwrap()), None);
        assert_eq!(r.offset("10.0.0.10".parse().unwrap()), Some(9));
        assert_eq!(r.static_band(), 16);
        assert_eq!(range("10.96.0.0/12").static_band(), 256);
        assert_eq!(range("10.0.0.0/28").static_band(), 0);
    }

    #[test]
    fn ipv6_ranges_are_capped() {
        let r = range("fd00::/108");
        assert_eq!(r.size(), 65535);
        assert_eq!(r.ip(0).to_string(), "fd00::1");
        assert_eq!(r.offset("fd00::ffff".parse().unwrap()), Some(65534));
        assert_eq!(r.offset("fd00::1:0".parse().unwrap()), None);
        assert_eq!(r.offset("10.0.0.1".parse().unwrap()), None);
        assert_eq!(range("fd00::/120").size(), 255);
    }

    #[test]
    fn port_ranges() {
        let r = PortRange::parse("30000-32767").unwrap();
        assert_eq!(r.size(), 2768);
        assert_eq!(r.static_band(), 86);
        assert_eq!(r.offset(30000), Some(0));
        assert_eq!(r.offset(32768), None);
        assert_eq!(r.offset(29999), None);
        assert_eq!(r.to_string(), "30000-32767");
        assert!(PortRange::parse("3-1").is_err());
    }
}
