//! IP addresses as Go's `net/netip` parses and prints them, and kube's CEL `ip()` on top.
//!
//! [`go_parse_addr`] is `netip.ParseAddr`: dotted-decimal IPv4 with exactly four fields,
//! no leading zeros (`01`), no value above 255; IPv6 in hex groups of 1 to 4 digits (any
//! case), at most one `::` which must stand for at least one group, an embedded dotted IPv4
//! only as the last 32 bits; an optional `%zone` (non-empty) after an IPv6 address. Its
//! errors print as Go's (`ParseAddr("…"): … (at "…")`).
//!
//! [`parse`] is kube's `ip()`: that, then refusing zones and IPv4-mapped IPv6 addresses
//! (`::ffff:1.2.3.4`), so every address it returns is a plain [`IpAddr`] whose family is
//! the one written. [`format`] is Go's `Addr.String()` (RFC 5952: lower case, the longest
//! run of two or more zero groups as `::`, IPv4-mapped as `::ffff:a.b.c.d`);
//! [`is_canonical`] compares it with the input.
//!
//! The classifications follow `netip.Addr`'s methods (which look through an IPv4-mapped
//! address to its IPv4 one, except [`is_unspecified`]); Rust's `std::net` ones differ
//! (`Ipv6Addr::is_loopback` of `::ffff:127.0.0.1` is false, `is_global` is another notion).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::go_quote_str;

/// An address as `netip.ParseAddr` returns it: the address and its IPv6 zone, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedAddr<'a> {
    /// The address. An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) stays IPv6, as in Go.
    pub addr: IpAddr,
    /// The zone after `%` (never empty; only after an IPv6 address).
    pub zone: Option<&'a str>,
}

/// Why `netip.ParseAddr` refused a string; `Display` is Go's message,
/// `ParseAddr("<input>"): <reason>` with ` (at "<rest>")` when Go names where it stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseAddrError {
    input: String,
    reason: &'static str,
    at: Option<String>,
}

impl ParseAddrError {
    fn new(input: &str, reason: &'static str) -> Self {
        ParseAddrError {
            input: input.to_owned(),
            reason,
            at: None,
        }
    }

    fn at(input: &str, reason: &'static str, at: &str) -> Self {
        ParseAddrError {
            input: input.to_owned(),
            reason,
            // Go prints no `(at …)` for an empty rest.
            at: (!at.is_empty()).then(|| at.to_owned()),
        }
    }

    /// Go's reason, without the input (`IPv4 address too long`).
    pub fn reason(&self) -> &str {
        self.reason
    }
}

impl fmt::Display for ParseAddrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ParseAddr({}): {}",
            go_quote_str(&self.input),
            self.reason
        )?;
        if let Some(at) = &self.at {
            write!(f, " (at {})", go_quote_str(at))?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseAddrError {}

/// Why kube's `ip()` refused a string. `Display` is the CEL runtime error's text, as
/// [`IpError::cel_message`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IpError {
    /// `netip.ParseAddr` refused it:
    /// `IP Address "<s>" parse error during conversion from string: <Go's error>`.
    Parse {
        /// The string given.
        input: String,
        /// Go's error.
        error: ParseAddrError,
    },
    /// An IPv6 address with a zone: `IP address "<s>" with zone value is not allowed`.
    Zone {
        /// The string given.
        input: String,
    },
    /// An IPv4-mapped IPv6 address: `IPv4-mapped IPv6 address "<s>" is not allowed`.
    Ipv4Mapped {
        /// The string given.
        input: String,
    },
}

impl IpError {
    /// The text of the error kube's `ip()`, `ip.isCanonical()` (and `cidr.containsIP()`'s
    /// argument parse, see [`super::cidr::Cidr::contains_ip`]) return: the same as
    /// `Display`.
    pub fn cel_message(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for IpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IpError::Parse { input, error } => write!(
                f,
                "IP Address {} parse error during conversion from string: {error}",
                go_quote_str(input)
            ),
            IpError::Zone { input } => write!(
                f,
                "IP address {} with zone value is not allowed",
                go_quote_str(input)
            ),
            IpError::Ipv4Mapped { input } => write!(
                f,
                "IPv4-mapped IPv6 address {} is not allowed",
                go_quote_str(input)
            ),
        }
    }
}

impl std::error::Error for IpError {}

/// Go's `netip.ParseAddr`: the address and zone, or Go's error.
pub fn go_parse_addr(s: &str) -> Result<ParsedAddr<'_>, ParseAddrError> {
    // Go decides the family by the first `.`, `:` or `%`.
    for b in s.bytes() {
        match b {
            b'.' => {
                let mut octets = [0u8; 4];
                parse_ipv4_fields(s, s, &mut octets)?;
                return Ok(ParsedAddr {
                    addr: IpAddr::V4(Ipv4Addr::from(octets)),
                    zone: None,
                });
            }
            b':' => return parse_ipv6(s),
            b'%' => return Err(ParseAddrError::new(s, "missing IPv6 address")),
            _ => {}
        }
    }
    Err(ParseAddrError::new(s, "unable to parse IP"))
}

/// Dotted-decimal IPv4 `part` (all of `input`, or its embedded tail) into `octets`;
/// errors name `input`.
fn parse_ipv4_fields(input: &str, part: &str, octets: &mut [u8; 4]) -> Result<(), ParseAddrError> {
    let bytes = part.as_bytes();
    let mut value: u32 = 0;
    let mut digits = 0;
    let mut field = 0;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'0'..=b'9' => {
                if digits == 1 && value == 0 {
                    return Err(ParseAddrError::new(
                        input,
                        "IPv4 field has octet with leading zero",
                    ));
                }
                value = value * 10 + u32::from(b - b'0');
                digits += 1;
                if value > 255 {
                    return Err(ParseAddrError::new(input, "IPv4 field has value >255"));
                }
            }
            b'.' => {
                if i == 0 || i == bytes.len() - 1 || bytes[i - 1] == b'.' {
                    return Err(ParseAddrError::at(
                        input,
                        "IPv4 field must have at least one digit",
                        &part[i..],
                    ));
                }
                if field == 3 {
                    return Err(ParseAddrError::new(input, "IPv4 address too long"));
                }
                octets[field] = value as u8;
                field += 1;
                value = 0;
                digits = 0;
            }
            // Every byte before `i` is ASCII, so `i` is a char boundary.
            _ => {
                return Err(ParseAddrError::at(
                    input,
                    "unexpected character",
                    &part[i..],
                ));
            }
        }
    }
    if field < 3 {
        return Err(ParseAddrError::new(input, "IPv4 address too short"));
    }
    octets[3] = value as u8;
    Ok(())
}

fn parse_ipv6(input: &str) -> Result<ParsedAddr<'_>, ParseAddrError> {
    let (mut s, zone) = match input.find('%') {
        Some(i) => {
            let zone = &input[i + 1..];
            if zone.is_empty() {
                return Err(ParseAddrError::new(
                    input,
                    "zone must be a non-empty string",
                ));
            }
            (&input[..i], Some(zone))
        }
        None => (input, None),
    };
    let mut ip = [0u8; 16];
    // Byte offset in `ip` where `::` stands.
    let mut ellipsis: Option<usize> = None;

    if s.starts_with("::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Ok(ParsedAddr {
                addr: IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                zone,
            });
        }
    }

    let mut i = 0;
    while i < 16 {
        let bytes = s.as_bytes();
        let mut off = 0;
        let mut acc: u32 = 0;
        while off < bytes.len() {
            let digit = match bytes[off] {
                c @ b'0'..=b'9' => c - b'0',
                c @ b'a'..=b'f' => c - b'a' + 10,
                c @ b'A'..=b'F' => c - b'A' + 10,
                _ => break,
            };
            acc = (acc << 4) + u32::from(digit);
            if off > 3 {
                return Err(ParseAddrError::at(
                    input,
                    "each group must have 4 or less digits",
                    s,
                ));
            }
            off += 1;
        }
        if off == 0 {
            return Err(ParseAddrError::at(
                input,
                "each colon-separated field must have at least one digit",
                s,
            ));
        }

        if bytes.get(off) == Some(&b'.') {
            if ellipsis.is_none() && i != 12 {
                return Err(ParseAddrError::at(
                    input,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    s,
                ));
            }
            if i + 4 > 16 {
                return Err(ParseAddrError::at(
                    input,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    s,
                ));
            }
            let mut octets = [0u8; 4];
            parse_ipv4_fields(input, s, &mut octets)?;
            ip[i..i + 4].copy_from_slice(&octets);
            s = "";
            i += 4;
            break;
        }

        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;

        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(ParseAddrError::at(
                input,
                "unexpected character, want colon",
                s,
            ));
        }
        if s.len() == 1 {
            return Err(ParseAddrError::at(
                input,
                "colon must be followed by more characters",
                s,
            ));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(ParseAddrError::at(input, "multiple :: in address", s));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }

    if !s.is_empty() {
        return Err(ParseAddrError::at(
            input,
            "trailing garbage after address",
            s,
        ));
    }
    if i < 16 {
        let Some(at) = ellipsis else {
            return Err(ParseAddrError::new(input, "address string too short"));
        };
        let n = 16 - i;
        ip.copy_within(at..i, at + n);
        ip[at..at + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(ParseAddrError::at(
            input,
            "the :: must expand to at least one field of zeros",
            s,
        ));
    }
    Ok(ParsedAddr {
        addr: IpAddr::V6(Ipv6Addr::from(ip)),
        zone,
    })
}

/// kube's `ip()` (and the check behind `isIP()`): [`go_parse_addr`], refusing zones and
/// IPv4-mapped IPv6 addresses, in that order.
pub fn parse(s: &str) -> Result<IpAddr, IpError> {
    let parsed = go_parse_addr(s).map_err(|error| IpError::Parse {
        input: s.to_owned(),
        error,
    })?;
    if parsed.zone.is_some() {
        return Err(IpError::Zone {
            input: s.to_owned(),
        });
    }
    if is_ipv4_mapped(parsed.addr) {
        return Err(IpError::Ipv4Mapped {
            input: s.to_owned(),
        });
    }
    Ok(parsed.addr)
}

/// kube's `isIP()`: whether [`parse`] accepts the string.
pub fn is_ip(s: &str) -> bool {
    parse(s).is_ok()
}

/// kube's `ip.isCanonical()`: whether the string is [`format`] of what it parses to; an
/// error when [`parse`] refuses it.
pub fn is_canonical(s: &str) -> Result<bool, IpError> {
    Ok(format(parse(s)?) == s)
}

/// Whether an address is IPv6 with `::ffff:0:0/96`'s prefix (Go's `Addr.Is4In6`).
pub fn is_ipv4_mapped(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(_) => false,
        IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some(),
    }
}

/// The IPv4 address an IPv4-mapped one stands for, others unchanged (Go's `Addr.Unmap`).
pub fn unmap(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        IpAddr::V4(_) => addr,
    }
}

/// Go's `Addr.String()`: IPv4 dotted; IPv6 in lower-case hex without leading zeros, the
/// first longest run of two or more zero groups as `::`, and an IPv4-mapped address as
/// `::ffff:a.b.c.d`. What kube's `string(ip)` returns.
pub fn format(addr: IpAddr) -> String {
    let mut out = String::new();
    write_addr(&mut out, addr);
    out
}

/// [`format`] into `out`.
pub(crate) fn write_addr(out: &mut String, addr: IpAddr) {
    use std::fmt::Write;
    let v6 = match addr {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            let _ = write!(out, "{a}.{b}.{c}.{d}");
            return;
        }
        IpAddr::V6(v6) => v6,
    };
    if let Some(v4) = v6.to_ipv4_mapped() {
        let [a, b, c, d] = v4.octets();
        let _ = write!(out, "::ffff:{a}.{b}.{c}.{d}");
        return;
    }
    let groups = v6.segments();
    // The first longest run of at least two zero groups.
    let (mut best_start, mut best_len) = (0, 0);
    let mut i = 0;
    while i < 8 {
        let mut j = i;
        while j < 8 && groups[j] == 0 {
            j += 1;
        }
        if j - i >= 2 && j - i > best_len {
            best_start = i;
            best_len = j - i;
        }
        i = j.max(i + 1);
    }
    let mut i = 0;
    while i < 8 {
        if best_len > 0 && i == best_start {
            out.push_str("::");
            i += best_len;
            continue;
        }
        if i > 0 && !(best_len > 0 && i == best_start + best_len) {
            out.push(':');
        }
        let _ = write!(out, "{:x}", groups[i]);
        i += 1;
    }
}

/// kube's `family()`: 4 or 6 (an IPv4-mapped IPv6 address is 6, as in Go).
pub fn family(addr: IpAddr) -> u8 {
    match addr {
        IpAddr::V4(_) => 4,
        IpAddr::V6(_) => 6,
    }
}

/// kube's `isUnspecified()`: `0.0.0.0` or `::` (Go's `Addr.IsUnspecified`; not
/// `::ffff:0.0.0.0`).
pub fn is_unspecified(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.is_unspecified(),
        IpAddr::V6(v6) => v6.is_unspecified(),
    }
}

/// kube's `isLoopback()`: `127.0.0.0/8` or `::1` (Go's `Addr.IsLoopback`, IPv4-mapped
/// addresses judged as IPv4).
pub fn is_loopback(addr: IpAddr) -> bool {
    match unmap(addr) {
        IpAddr::V4(v4) => v4.octets()[0] == 127,
        IpAddr::V6(v6) => v6 == Ipv6Addr::LOCALHOST,
    }
}

/// Go's `Addr.IsMulticast`: `224.0.0.0/4` or `ff00::/8` (IPv4-mapped judged as IPv4).
pub fn is_multicast(addr: IpAddr) -> bool {
    match unmap(addr) {
        IpAddr::V4(v4) => v4.octets()[0] & 0xf0 == 0xe0,
        IpAddr::V6(v6) => v6.octets()[0] == 0xff,
    }
}

/// kube's `isLinkLocalMulticast()`: `224.0.0.0/24` or `ff02::/16` with any flags, i.e.
/// `ffX2::/16` (Go's `Addr.IsLinkLocalMulticast`, IPv4-mapped judged as IPv4).
pub fn is_link_local_multicast(addr: IpAddr) -> bool {
    match unmap(addr) {
        IpAddr::V4(v4) => matches!(v4.octets(), [224, 0, 0, _]),
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// kube's `isLinkLocalUnicast()`: `169.254.0.0/16` or `fe80::/10` (Go's
/// `Addr.IsLinkLocalUnicast`, IPv4-mapped judged as IPv4).
pub fn is_link_local_unicast(addr: IpAddr) -> bool {
    match unmap(addr) {
        IpAddr::V4(v4) => matches!(v4.octets(), [169, 254, _, _]),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// kube's `isGlobalUnicast()`, Go's `Addr.IsGlobalUnicast`: none of unspecified,
/// `255.255.255.255`, loopback, multicast, link-local unicast. Private IPv4 ranges and
/// IPv6 unique-local addresses count as global unicast (IPv4-mapped judged as IPv4).
pub fn is_global_unicast(addr: IpAddr) -> bool {
    let addr = unmap(addr);
    if addr == IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        || addr == IpAddr::V4(Ipv4Addr::BROADCAST)
        || addr == IpAddr::V6(Ipv6Addr::UNSPECIFIED)
    {
        return false;
    }
    !is_loopback(addr) && !is_multicast(addr) && !is_link_local_unicast(addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected outcome of kube's `ip()` on a string.
    enum Want {
        /// Accepted; Go's `String()` of it.
        Ok(&'static str),
        /// Refused with this CEL error text.
        Err(&'static str),
    }

    /// kube `pkg/cel/library/ip_test.go` `TestIP` (v0.32.1), the CEL expression reduced to
    /// the call it exercises: (Go test name, input of `ip()` / `isIP()` /
    /// `ip.isCanonical()`, outcome).
    const KUBE_PARSE: &[(&str, &str, Want)] = &[
        ("parse ipv4", "192.168.0.1", Want::Ok("192.168.0.1")),
        (
            "parse invalid ipv4",
            "192.168.0.1.0",
            Want::Err(
                r#"IP Address "192.168.0.1.0" parse error during conversion from string: ParseAddr("192.168.0.1.0"): IPv4 address too long"#,
            ),
        ),
        ("isIP valid ipv4", "192.168.0.1", Want::Ok("192.168.0.1")),
        (
            "ip.isCanonical invalid ipv4",
            "127.0.0.1.0",
            Want::Err(
                r#"IP Address "127.0.0.1.0" parse error during conversion from string: ParseAddr("127.0.0.1.0"): IPv4 address too long"#,
            ),
        ),
        ("parse ipv6", "2001:db8::68", Want::Ok("2001:db8::68")),
        (
            "parse invalid ipv6",
            "2001:db8:::68",
            Want::Err(
                r#"IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")"#,
            ),
        ),
        (
            "converting an IP address to a string",
            "192.168.0.1",
            Want::Ok("192.168.0.1"),
        ),
    ];

    #[test]
    fn kube_parse_cases() {
        for (name, input, want) in KUBE_PARSE {
            match (parse(input), want) {
                (Ok(addr), Want::Ok(text)) => {
                    assert_eq!(format(addr), *text, "{name}");
                    assert!(is_ip(input), "{name}");
                }
                (Err(e), Want::Err(text)) => {
                    assert_eq!(e.cel_message(), *text, "{name}");
                    assert!(!is_ip(input), "{name}");
                    assert_eq!(is_canonical(input).unwrap_err().to_string(), *text);
                }
                (got, _) => panic!("{name}: got {got:?}"),
            }
        }
    }

    /// `TestIP` (v0.32.1): (Go test name, input, `ip.isCanonical()`).
    const KUBE_CANONICAL: &[(&str, &str, bool)] = &[
        ("ip.isCanonical valid ipv4", "127.0.0.1", true),
        ("ip.isCanonical valid ipv6", "2001:db8::68", true),
        ("ip.isCanonical non-canonical ipv6", "2001:DB8::68", false),
    ];

    #[test]
    fn kube_canonical_cases() {
        for (name, input, want) in KUBE_CANONICAL {
            assert_eq!(is_canonical(input), Ok(*want), "{name}");
        }
    }

    /// Which classification a `TestIP` case calls.
    #[derive(Clone, Copy, Debug)]
    enum Check {
        Family,
        Unspecified,
        Loopback,
        LinkLocalMulticast,
        LinkLocalUnicast,
        GlobalUnicast,
    }

    /// `TestIP` (v0.32.1): (Go test name, `ip()` input, method, result; family as 4/6, the
    /// rest as 0/1).
    const KUBE_CLASSIFY: &[(&str, &str, Check, u8)] = &[
        ("ipv4 family", "192.168.0.1", Check::Family, 4),
        ("ipv4 isUnspecified true", "0.0.0.0", Check::Unspecified, 1),
        (
            "ipv4 isUnspecified false",
            "127.0.0.1",
            Check::Unspecified,
            0,
        ),
        ("ipv4 isLoopback true", "127.0.0.1", Check::Loopback, 1),
        ("ipv4 isLoopback false", "1.2.3.4", Check::Loopback, 0),
        (
            "ipv4 isLinkLocalMulticast true",
            "224.0.0.1",
            Check::LinkLocalMulticast,
            1,
        ),
        (
            "ipv4 isLinkLocalMulticast false",
            "224.0.1.1",
            Check::LinkLocalMulticast,
            0,
        ),
        (
            "ipv4 isLinkLocalUnicast true",
            "169.254.169.254",
            Check::LinkLocalUnicast,
            1,
        ),
        (
            "ipv4 isLinkLocalUnicast false",
            "192.168.0.1",
            Check::LinkLocalUnicast,
            0,
        ),
        (
            "ipv4 isGlobalUnicast true",
            "192.168.0.1",
            Check::GlobalUnicast,
            1,
        ),
        (
            "ipv4 isGlobalUnicast false",
            "255.255.255.255",
            Check::GlobalUnicast,
            0,
        ),
        ("ipv6 family", "2001:db8::68", Check::Family, 6),
        ("ipv6 isUnspecified true", "::", Check::Unspecified, 1),
        ("ipv6 isUnspecified false", "::1", Check::Unspecified, 0),
        ("ipv6 isLoopback true", "::1", Check::Loopback, 1),
        (
            "ipv6 isLoopback false",
            "2001:db8::abcd",
            Check::Loopback,
            0,
        ),
        (
            "ipv6 isLinkLocalMulticast true",
            "ff02::1",
            Check::LinkLocalMulticast,
            1,
        ),
        (
            "ipv6 isLinkLocalMulticast false",
            "fd00::1",
            Check::LinkLocalMulticast,
            0,
        ),
        (
            "ipv6 isLinkLocalUnicast true",
            "fe80::1",
            Check::LinkLocalUnicast,
            1,
        ),
        (
            "ipv6 isLinkLocalUnicast false",
            "fd80::1",
            Check::LinkLocalUnicast,
            0,
        ),
        (
            "ipv6 isGlobalUnicast true",
            "2001:db8::abcd",
            Check::GlobalUnicast,
            1,
        ),
        (
            "ipv6 isGlobalUnicast false",
            "ff00::1",
            Check::GlobalUnicast,
            0,
        ),
        // Not in TestIP: the other ranges of Go's definitions.
        (
            "(extra) ipv4 multicast not global",
            "239.1.1.1",
            Check::GlobalUnicast,
            0,
        ),
        (
            "(extra) ipv6 ula is global",
            "fd00::1",
            Check::GlobalUnicast,
            1,
        ),
        (
            "(extra) ipv4 private is global",
            "10.0.0.1",
            Check::GlobalUnicast,
            1,
        ),
        (
            "(extra) ipv4 loopback not global",
            "127.1.2.3",
            Check::GlobalUnicast,
            0,
        ),
        (
            "(extra) ff12:: flags",
            "ff12::1",
            Check::LinkLocalMulticast,
            1,
        ),
        (
            "(extra) ff03:: not",
            "ff03::1",
            Check::LinkLocalMulticast,
            0,
        ),
        (
            "(extra) febf:: is fe80::/10",
            "febf::1",
            Check::LinkLocalUnicast,
            1,
        ),
        ("(extra) fec0:: not", "fec0::1", Check::LinkLocalUnicast, 0),
        (
            "(extra) 224.0.0.255",
            "224.0.0.255",
            Check::LinkLocalMulticast,
            1,
        ),
    ];

    #[test]
    fn kube_classify_cases() {
        for (name, input, check, want) in KUBE_CLASSIFY {
            let addr = parse(input).unwrap();
            let got = match check {
                Check::Family => family(addr),
                Check::Unspecified => is_unspecified(addr).into(),
                Check::Loopback => is_loopback(addr).into(),
                Check::LinkLocalMulticast => is_link_local_multicast(addr).into(),
                Check::LinkLocalUnicast => is_link_local_unicast(addr).into(),
                Check::GlobalUnicast => is_global_unicast(addr).into(),
            };
            assert_eq!(got, *want, "{name} ({check:?})");
        }
    }

    /// Go's `netip.ParseAddr` on strings where Rust's `std::net` parser, or a loose
    /// reading, differs: (input, Ok(Go's `String()` and zone) or Err(Go's error)).
    #[allow(clippy::type_complexity)]
    const GO_PARSE_ADDR: &[(&str, Result<(&str, Option<&str>), &str>)] = &[
        // Zones: std refuses any `%`; Go keeps an IPv6 zone, refuses an empty one.
        ("fe80::1%eth0", Ok(("fe80::1", Some("eth0")))),
        (
            "fe80::1%",
            Err(r#"ParseAddr("fe80::1%"): zone must be a non-empty string"#),
        ),
        ("%eth0", Err(r#"ParseAddr("%eth0"): missing IPv6 address"#)),
        (
            "1.2.3.4%eth0",
            Err(r#"ParseAddr("1.2.3.4%eth0"): unexpected character (at "%eth0")"#),
        ),
        ("::%x%y", Ok(("::", Some("x%y")))),
        ("::ffff:1.2.3.4%eth0", Ok(("::ffff:1.2.3.4", Some("eth0")))),
        // IPv4 forms.
        ("", Err(r#"ParseAddr(""): unable to parse IP"#)),
        (
            "localhost",
            Err(r#"ParseAddr("localhost"): unable to parse IP"#),
        ),
        (
            "01.2.3.4",
            Err(r#"ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero"#),
        ),
        ("0.0.0.0", Ok(("0.0.0.0", None))),
        (
            "1.2.3.00",
            Err(r#"ParseAddr("1.2.3.00"): IPv4 field has octet with leading zero"#),
        ),
        (
            "1.2.3.256",
            Err(r#"ParseAddr("1.2.3.256"): IPv4 field has value >255"#),
        ),
        (
            "1.2.3",
            Err(r#"ParseAddr("1.2.3"): IPv4 address too short"#),
        ),
        (
            "1.2.3.",
            Err(r#"ParseAddr("1.2.3."): IPv4 field must have at least one digit (at ".")"#),
        ),
        (
            ".1.2.3",
            Err(r#"ParseAddr(".1.2.3"): IPv4 field must have at least one digit (at ".1.2.3")"#),
        ),
        (
            "1..2.3",
            Err(r#"ParseAddr("1..2.3"): IPv4 field must have at least one digit (at ".2.3")"#),
        ),
        (
            "1.2.3.4 ",
            Err(r#"ParseAddr("1.2.3.4 "): unexpected character (at " ")"#),
        ),
        (
            "1.2.3.4:80",
            Err(r#"ParseAddr("1.2.3.4:80"): unexpected character (at ":80")"#),
        ),
        (
            "0x1.2.3.4",
            Err(r#"ParseAddr("0x1.2.3.4"): unexpected character (at "x1.2.3.4")"#),
        ),
        (
            "1.2.3.é",
            Err(r#"ParseAddr("1.2.3.é"): unexpected character (at "é")"#),
        ),
        // IPv6 forms.
        ("::", Ok(("::", None))),
        ("::1", Ok(("::1", None))),
        ("1::", Ok(("1::", None))),
        ("2001:DB8::68", Ok(("2001:db8::68", None))),
        ("0:0:0:0:0:0:0:1", Ok(("::1", None))),
        (
            "2001:0db8:0000:0000:0000:0000:0000:0068",
            Ok(("2001:db8::68", None)),
        ),
        ("1:0:0:1:0:0:0:1", Ok(("1:0:0:1::1", None))),
        ("1:0:0:1:0:0:1:1", Ok(("1::1:0:0:1:1", None))),
        ("1:0:1:1:1:1:1:1", Ok(("1:0:1:1:1:1:1:1", None))),
        ("1:2:3:4:5:6:7::", Ok(("1:2:3:4:5:6:7:0", None))),
        ("::2:3:4:5:6:7:8", Ok(("0:2:3:4:5:6:7:8", None))),
        (
            "1:2:3:4:5:6:7:8::",
            Err(
                r#"ParseAddr("1:2:3:4:5:6:7:8::"): the :: must expand to at least one field of zeros"#,
            ),
        ),
        (
            "1:2:3:4::5:6:7:8",
            Err(
                r#"ParseAddr("1:2:3:4::5:6:7:8"): the :: must expand to at least one field of zeros"#,
            ),
        ),
        (
            "1:2:3:4:5:6:7",
            Err(r#"ParseAddr("1:2:3:4:5:6:7"): address string too short"#),
        ),
        (
            "1:2:3:4:5:6:7:8:9",
            Err(r#"ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")"#),
        ),
        (
            "00000::1",
            Err(r#"ParseAddr("00000::1"): each group must have 4 or less digits (at "00000::1")"#),
        ),
        (
            "1::2::3",
            Err(r#"ParseAddr("1::2::3"): multiple :: in address (at ":3")"#),
        ),
        (
            "1:",
            Err(r#"ParseAddr("1:"): colon must be followed by more characters (at ":")"#),
        ),
        (
            ":1",
            Err(
                r#"ParseAddr(":1"): each colon-separated field must have at least one digit (at ":1")"#,
            ),
        ),
        (
            "1:g::",
            Err(
                r#"ParseAddr("1:g::"): each colon-separated field must have at least one digit (at "g::")"#,
            ),
        ),
        (
            "1:2g::",
            Err(r#"ParseAddr("1:2g::"): unexpected character, want colon (at "g::")"#),
        ),
        (
            "[::1]",
            Err(
                r#"ParseAddr("[::1]"): each colon-separated field must have at least one digit (at "[::1]")"#,
            ),
        ),
        // Embedded IPv4: only as the last 32 bits.
        ("::1.2.3.4", Ok(("::102:304", None))),
        ("::ffff:1.2.3.4", Ok(("::ffff:1.2.3.4", None))),
        ("::FFFF:1.2.3.4", Ok(("::ffff:1.2.3.4", None))),
        ("1:2:3:4:5:6:1.2.3.4", Ok(("1:2:3:4:5:6:102:304", None))),
        ("::ffff:0102:0304", Ok(("::ffff:1.2.3.4", None))),
        (
            "1:2:3:4:5:1.2.3.4",
            Err(
                r#"ParseAddr("1:2:3:4:5:1.2.3.4"): embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")"#,
            ),
        ),
        (
            "1:2:3:4:5:6:7:1.2.3.4",
            Err(
                r#"ParseAddr("1:2:3:4:5:6:7:1.2.3.4"): embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")"#,
            ),
        ),
        (
            "1:2:3:4:5:6:7::1.2.3.4",
            Err(
                r#"ParseAddr("1:2:3:4:5:6:7::1.2.3.4"): too many hex fields to fit an embedded IPv4 at the end of the address (at "1.2.3.4")"#,
            ),
        ),
        (
            "::1.2.3.04",
            Err(r#"ParseAddr("::1.2.3.04"): IPv4 field has octet with leading zero"#),
        ),
        (
            "::1.2.3",
            Err(r#"ParseAddr("::1.2.3"): IPv4 address too short"#),
        ),
        (
            "::1.2.3.4:5",
            Err(r#"ParseAddr("::1.2.3.4:5"): unexpected character (at ":5")"#),
        ),
        (
            "::1.2..4",
            Err(r#"ParseAddr("::1.2..4"): IPv4 field must have at least one digit (at ".4")"#),
        ),
        (
            "::12345.1.1.1",
            Err(
                r#"ParseAddr("::12345.1.1.1"): each group must have 4 or less digits (at "12345.1.1.1")"#,
            ),
        ),
    ];

    #[test]
    fn go_parse_addr_cases() {
        for (input, want) in GO_PARSE_ADDR {
            let got = go_parse_addr(input)
                .map(|p| (format(p.addr), p.zone))
                .map_err(|e| e.to_string());
            let want = want
                .map(|(text, zone)| (text.to_owned(), zone))
                .map_err(str::to_owned);
            assert_eq!(got, want, "{input}");
        }
    }

    /// kube's refusals on top of Go's parse (not in TestIP).
    #[test]
    fn kube_refusals() {
        let cases: &[(&str, &str)] = &[
            (
                "fe80::1%eth0",
                r#"IP address "fe80::1%eth0" with zone value is not allowed"#,
            ),
            (
                "::ffff:1.2.3.4",
                r#"IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed"#,
            ),
            (
                "::ffff:0:0",
                r#"IPv4-mapped IPv6 address "::ffff:0:0" is not allowed"#,
            ),
            // The zone is reported before the mapping.
            (
                "::ffff:1.2.3.4%eth0",
                r#"IP address "::ffff:1.2.3.4%eth0" with zone value is not allowed"#,
            ),
            (
                "a\"b",
                r#"IP Address "a\"b" parse error during conversion from string: ParseAddr("a\"b"): unable to parse IP"#,
            ),
        ];
        for (input, want) in cases {
            assert_eq!(parse(input).unwrap_err().to_string(), *want);
        }
        // IPv4-compatible (deprecated) addresses are plain IPv6.
        assert_eq!(parse("::1.2.3.4").map(format), Ok("::102:304".to_owned()));
        assert_eq!(is_canonical("::1.2.3.4"), Ok(false));
        assert_eq!(is_canonical("::"), Ok(true));
        assert_eq!(is_canonical("0.0.0.0"), Ok(true));
        assert_eq!(is_canonical("::0"), Ok(false));
        assert_eq!(is_canonical("1:0:0:1::1"), Ok(true));
        assert_eq!(is_canonical("1::1:0:0:1"), Ok(true));
        assert_eq!(is_canonical("1:0:0:1:0:0:0:1"), Ok(false));
        assert_eq!(is_canonical("1:0:0:1:0:0:1:1"), Ok(false));
    }

    /// Go's classifications look through IPv4-mapped addresses (except unspecified);
    /// std's `Ipv6Addr::is_loopback` does not.
    #[test]
    fn classifications_of_mapped_addresses() {
        let mapped = |s: &str| go_parse_addr(s).unwrap().addr;
        assert!(is_loopback(mapped("::ffff:127.0.0.1")));
        assert!(!std::net::Ipv6Addr::from(0xffff_7f00_0001_u128).is_loopback());
        assert!(is_link_local_unicast(mapped("::ffff:169.254.1.1")));
        assert!(is_link_local_multicast(mapped("::ffff:224.0.0.1")));
        assert!(!is_global_unicast(mapped("::ffff:255.255.255.255")));
        assert!(!is_unspecified(mapped("::ffff:0.0.0.0")));
        assert!(!is_global_unicast(mapped("::ffff:0.0.0.0")));
        assert_eq!(family(mapped("::ffff:1.2.3.4")), 6);
    }

    /// Go's `String()` (RFC 5952) for shapes Rust's `Display` may print differently.
    #[test]
    fn format_like_go() {
        let cases: &[(u128, &str)] = &[
            (0, "::"),
            (1, "::1"),
            (0x0000_0000_0000_0000_0000_0000_0102_0304, "::102:304"),
            (0x0000_0000_0000_0000_0000_ffff_0102_0304, "::ffff:1.2.3.4"),
            (
                0x0000_0000_0000_0000_ffff_0000_0102_0304,
                "::ffff:0:102:304",
            ),
            (0x0001_0000_0001_0000_0001_0000_0001_0000, "1:0:1:0:1:0:1:0"),
            (0x0001_0000_0000_0001_0000_0000_0000_0001, "1:0:0:1::1"),
            (0x0001_0000_0000_0002_0000_0000_0003_0004, "1::2:0:0:3:4"),
            (0xabcd_0000_0000_0000_0000_0000_0000_0000, "abcd::"),
        ];
        for (bits, want) in cases {
            assert_eq!(format(IpAddr::V6(Ipv6Addr::from(*bits))), *want);
        }
    }
}
