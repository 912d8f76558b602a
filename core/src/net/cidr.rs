//! CIDRs (IP prefixes) as Go's `netip.Prefix`, and kube's CEL `cidr()` on top.
//!
//! [`Cidr::go_parse_prefix`] is `netip.ParsePrefix`: `<address>/<bits>` split at the last
//! `/`, the address as [`super::ip::go_parse_addr`] reads it but without a zone, the bits
//! in plain decimal (no sign, no leading zero, no spaces) up to 32 or 128. The address is
//! kept as written, host bits included (`192.168.0.1/24` stays that; [`Cidr::masked`]
//! clears them), and two CIDRs are equal when both address and length are.
//!
//! [`Cidr::parse`] is kube's `cidr()`: that, then refusing IPv4-mapped IPv6 addresses.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::go_quote_str;
use super::ip;

/// An IP prefix: an address and how many of its leading bits name the network.
///
/// `Display` is Go's `Prefix.String()` (what kube's `string(cidr)` returns): the address
/// as [`ip::format`] prints it, `/`, the length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cidr {
    addr: IpAddr,
    prefix_len: u8,
}

/// Why `netip.ParsePrefix` refused a string; `Display` is Go's message,
/// `netip.ParsePrefix("<input>"): <reason>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsePrefixError {
    input: String,
    reason: String,
}

impl ParsePrefixError {
    fn new(input: &str, reason: impl Into<String>) -> Self {
        ParsePrefixError {
            input: input.to_owned(),
            reason: reason.into(),
        }
    }

    /// Go's reason, without the input (`no '/'`, `bad bits after slash: "x"`,
    /// `prefix length out of range`, `IPv6 zones cannot be present in a prefix`, or the
    /// address's `ParseAddr(…)` error).
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for ParsePrefixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "netip.ParsePrefix({}): {}",
            go_quote_str(&self.input),
            self.reason
        )
    }
}

impl std::error::Error for ParsePrefixError {}

/// Why kube's `cidr()` refused a string. `Display` is the error of kube's `parseCIDR`
/// (what `isCIDR()` tests); [`CidrError::cel_message`] the CEL runtime error's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CidrError {
    /// `netip.ParsePrefix` refused it:
    /// `network address parse error during conversion from string: <Go's error>`.
    Parse {
        /// The string given.
        input: String,
        /// Go's error.
        error: ParsePrefixError,
    },
    /// The address is IPv4-mapped IPv6: `IPv4-mapped IPv6 address "<s>" is not allowed`.
    Ipv4Mapped {
        /// The string given.
        input: String,
    },
}

/// What kube's `cidr()` puts before its parse errors (which, for Go's errors, already
/// start with it: kube wraps twice).
const CONVERSION: &str = "network address parse error during conversion from string: ";

impl CidrError {
    /// The text of the error kube's `cidr()` (and `containsCIDR()` given a string) returns:
    /// `network address parse error during conversion from string: ` and `Display`.
    pub fn cel_message(&self) -> String {
        format!("{CONVERSION}{self}")
    }
}

impl fmt::Display for CidrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CidrError::Parse { error, .. } => write!(f, "{CONVERSION}{error}"),
            CidrError::Ipv4Mapped { input } => write!(
                f,
                "IPv4-mapped IPv6 address {} is not allowed",
                go_quote_str(input)
            ),
        }
    }
}

impl std::error::Error for CidrError {}

impl Cidr {
    /// Go's `netip.PrefixFrom` (address kept as given, host bits included), when the
    /// length fits the family (`None` where Go's prefix would be invalid).
    pub fn new(addr: IpAddr, prefix_len: u8) -> Option<Cidr> {
        (prefix_len <= bit_len(addr)).then_some(Cidr { addr, prefix_len })
    }

    /// Go's `netip.ParsePrefix`.
    pub fn go_parse_prefix(s: &str) -> Result<Cidr, ParsePrefixError> {
        let Some(slash) = s.rfind('/') else {
            return Err(ParsePrefixError::new(s, "no '/'"));
        };
        let parsed =
            ip::go_parse_addr(&s[..slash]).map_err(|e| ParsePrefixError::new(s, e.to_string()))?;
        if parsed.zone.is_some() {
            return Err(ParsePrefixError::new(
                s,
                "IPv6 zones cannot be present in a prefix",
            ));
        }
        let bits = &s[slash + 1..];
        // Go's `strconv.Atoi` would take a sign or leading zeros; `ParsePrefix` refuses
        // both (Rust's `i64::from_str` would take a `+`).
        let plain = !bits.is_empty()
            && bits.bytes().all(|b| b.is_ascii_digit())
            && (bits.len() == 1 || !bits.starts_with('0'));
        let bad =
            || ParsePrefixError::new(s, format!("bad bits after slash: {}", go_quote_str(bits)));
        if !plain {
            return Err(bad());
        }
        // Beyond Go's `int` (64-bit), `Atoi` fails: still "bad bits".
        let value: i64 = bits.parse().map_err(|_| bad())?;
        if value > i64::from(bit_len(parsed.addr)) {
            return Err(ParsePrefixError::new(s, "prefix length out of range"));
        }
        Ok(Cidr {
            addr: parsed.addr,
            prefix_len: value as u8,
        })
    }

    /// kube's `cidr()` (and the check behind `isCIDR()`): [`Cidr::go_parse_prefix`], then
    /// refusing an IPv4-mapped IPv6 address (`::ffff:1.2.3.0/120`).
    pub fn parse(s: &str) -> Result<Cidr, CidrError> {
        let cidr = Cidr::go_parse_prefix(s).map_err(|error| CidrError::Parse {
            input: s.to_owned(),
            error,
        })?;
        if ip::is_ipv4_mapped(cidr.addr) {
            return Err(CidrError::Ipv4Mapped {
                input: s.to_owned(),
            });
        }
        Ok(cidr)
    }

    /// kube's `cidr.ip()`: the address as written (host bits included).
    pub fn addr(&self) -> IpAddr {
        self.addr
    }

    /// kube's `prefixLength()`.
    pub fn prefix_len(&self) -> u8 {
        self.prefix_len
    }

    /// kube's `masked()`, Go's `Prefix.Masked`: the same length, host bits cleared.
    pub fn masked(&self) -> Cidr {
        Cidr {
            addr: mask(self.addr, self.prefix_len),
            prefix_len: self.prefix_len,
        }
    }

    /// kube's `containsIP()`, Go's `Prefix.Contains`: whether `addr` is of the same
    /// family (an IPv4-mapped address is IPv6) and its first [`Cidr::prefix_len`] bits are
    /// this CIDR's.
    ///
    /// kube's `containsIP(string)` parses the string with `ip()`, but when that fails it
    /// returns the error `no such overload`, not the parse error (the binding looks at the
    /// wrong argument); `containsCIDR(string)` does return [`CidrError::cel_message`].
    pub fn contains_ip(&self, addr: IpAddr) -> bool {
        bit_len(addr) == bit_len(self.addr)
            && mask(addr, self.prefix_len) == mask(self.addr, self.prefix_len)
    }

    /// kube's `containsCIDR()` since v0.32.4 (Kubernetes 1.32.4, 1.33): whether `other`
    /// lies within this CIDR: same family, at least as long, and its address's first
    /// [`Cidr::prefix_len`] bits are this CIDR's (`Prefix.Overlaps` and the lengths).
    pub fn contains_cidr(&self, other: &Cidr) -> bool {
        self.prefix_len <= other.prefix_len && self.contains_ip(other.addr)
    }

    /// kube's `containsCIDR()` in v0.32.0–v0.32.3 (fixed afterwards, see
    /// [`Cidr::contains_cidr`]): true only when `other`'s address equals this CIDR's
    /// masked address (`10.0.0.0/8` does not contain `10.1.0.0/16`) and `other` is at
    /// least as long.
    pub fn contains_cidr_v0_32_1(&self, other: &Cidr) -> bool {
        self.masked().addr == other.addr && self.prefix_len <= other.prefix_len
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        ip::write_addr(&mut text, self.addr);
        write!(f, "{text}/{}", self.prefix_len)
    }
}

/// kube's `isCIDR()`: whether [`Cidr::parse`] accepts the string.
pub fn is_cidr(s: &str) -> bool {
    Cidr::parse(s).is_ok()
}

fn bit_len(addr: IpAddr) -> u8 {
    match addr {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

fn mask(addr: IpAddr, prefix_len: u8) -> IpAddr {
    match addr {
        IpAddr::V4(v4) => {
            let keep = u32::MAX
                .checked_shl(32 - u32::from(prefix_len))
                .unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & keep))
        }
        IpAddr::V6(v6) => {
            let keep = u128::MAX
                .checked_shl(128 - u32::from(prefix_len))
                .unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & keep))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cidr(s: &str) -> Cidr {
        Cidr::parse(s).unwrap()
    }

    fn ip(s: &str) -> IpAddr {
        ip::parse(s).unwrap()
    }

    /// kube `pkg/cel/library/cidr_test.go` `TestCIDR` (v0.32.1), parse cases: (Go test
    /// name, `cidr()` input, Ok(Go's `String()`) or Err(CEL error text)).
    const KUBE_PARSE: &[(&str, &str, Result<&str, &str>)] = &[
        ("parse ipv4", "192.168.0.0/24", Ok("192.168.0.0/24")),
        (
            "parse invalid ipv4",
            "192.168.0.0/",
            Err(
                r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: """#,
            ),
        ),
        ("parse ipv6", "2001:db8::/32", Ok("2001:db8::/32")),
        (
            "parse invalid ipv6",
            "2001:db8::/",
            Err(
                r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("2001:db8::/"): bad bits after slash: """#,
            ),
        ),
        (
            "converting a CIDR to a string",
            "192.168.0.0/24",
            Ok("192.168.0.0/24"),
        ),
        // Not in TestCIDR: kube's refusal and Go's other reasons.
        (
            "(extra) ipv4-mapped",
            "::ffff:1.2.3.0/120",
            Err(
                r#"network address parse error during conversion from string: IPv4-mapped IPv6 address "::ffff:1.2.3.0/120" is not allowed"#,
            ),
        ),
        (
            "(extra) no slash",
            "192.168.0.1",
            Err(
                r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.1"): no '/'"#,
            ),
        ),
        (
            "(extra) host bits kept",
            "192.168.0.1/24",
            Ok("192.168.0.1/24"),
        ),
        ("(extra) upper case", "2001:DB8::/32", Ok("2001:db8::/32")),
    ];

    #[test]
    fn kube_parse_cases() {
        for (name, input, want) in KUBE_PARSE {
            let got = Cidr::parse(input)
                .map(|c| c.to_string())
                .map_err(|e| e.cel_message());
            let want = want.map(str::to_owned).map_err(str::to_owned);
            assert_eq!(got, want, "{name}");
            assert_eq!(is_cidr(input), want.is_ok(), "{name}");
        }
    }

    /// `TestCIDR` (v0.32.1) `containsIP` cases (both the `ip()` and the string
    /// overloads): (Go test name, CIDR, IP, result).
    const KUBE_CONTAINS_IP: &[(&str, &str, &str, bool)] = &[
        (
            "contains IP ipv4 (IP) / (string)",
            "192.168.0.0/24",
            "192.168.0.1",
            true,
        ),
        (
            "does not contain IP ipv4 (IP) / (string)",
            "192.168.0.0/24",
            "192.168.1.1",
            false,
        ),
        (
            "contains IP ipv6 (IP) / (string)",
            "2001:db8::/32",
            "2001:db8::1",
            true,
        ),
        (
            "does not contain IP ipv6 (IP) / (string)",
            "2001:db8::/32",
            "2001:dc8::1",
            false,
        ),
        // Not in TestCIDR.
        ("(extra) other family", "0.0.0.0/0", "::1", false),
        ("(extra) /0 v6", "::/0", "2001:db8::1", true),
        ("(extra) /32 host", "10.0.0.1/32", "10.0.0.1", true),
        ("(extra) unmasked cidr", "10.0.0.1/8", "10.255.0.0", true),
    ];

    #[test]
    fn kube_contains_ip_cases() {
        for (name, c, addr, want) in KUBE_CONTAINS_IP {
            assert_eq!(cidr(c).contains_ip(ip(addr)), *want, "{name}");
        }
    }

    /// `TestCIDR` `containsCIDR` cases (both overloads): (Go test name, CIDR, other,
    /// result since v0.32.4, result in v0.32.1).
    const KUBE_CONTAINS_CIDR: &[(&str, &str, &str, bool, bool)] = &[
        (
            "contains CIDR ipv4 (CIDR) / (string)",
            "192.168.0.0/24",
            "192.168.0.0/25",
            true,
            true,
        ),
        (
            "does not contain IP ipv4 (CIDR) / does not contain CIDR ipv4 (string)",
            "192.168.0.0/24",
            "192.168.0.0/23",
            false,
            false,
        ),
        (
            "contains CIDR ipv6 (CIDR) / (string)",
            "2001:db8::/32",
            "2001:db8::/33",
            true,
            true,
        ),
        (
            "does not contain IP ipv6 (CIDR) / does not contain CIDR ipv6 (string)",
            "2001:db8::/32",
            "2001:db8::/31",
            false,
            false,
        ),
        // Added in v0.32.4 with the fix.
        (
            "contains CIDR ipv4 (CIDR) (/32)",
            "192.168.0.0/24",
            "192.168.0.1/32",
            true,
            false,
        ),
        (
            "does not contain IP ipv4 (CIDR) (/32)",
            "192.168.0.0/24",
            "192.169.0.1/32",
            false,
            false,
        ),
        // Not in TestCIDR.
        ("(extra) other family", "::/0", "0.0.0.0/0", false, false),
        (
            "(extra) unmasked outer",
            "10.1.2.3/8",
            "10.0.0.0/8",
            true,
            true,
        ),
        (
            "(extra) unmasked inner",
            "10.0.0.0/8",
            "10.1.0.0/16",
            true,
            false,
        ),
    ];

    #[test]
    fn kube_contains_cidr_cases() {
        for (name, c, other, want, want_v0_32_1) in KUBE_CONTAINS_CIDR {
            assert_eq!(cidr(c).contains_cidr(&cidr(other)), *want, "{name}");
            assert_eq!(
                cidr(c).contains_cidr_v0_32_1(&cidr(other)),
                *want_v0_32_1,
                "{name} (v0.32.1)"
            );
        }
    }

    /// `TestCIDR` `ip()`, `masked()`, `prefixLength()` cases: (Go test name, CIDR,
    /// `ip()`, `masked()`, `prefixLength()`).
    const KUBE_ACCESSORS: &[(&str, &str, &str, &str, u8)] = &[
        (
            "returns IP / masks masked / returns prefix length ipv4",
            "192.168.0.0/24",
            "192.168.0.0",
            "192.168.0.0/24",
            24,
        ),
        (
            "masks unmasked ipv4",
            "192.168.0.1/24",
            "192.168.0.1",
            "192.168.0.0/24",
            24,
        ),
        (
            "returns IP / masks masked / returns prefix length ipv6",
            "2001:db8::/32",
            "2001:db8::",
            "2001:db8::/32",
            32,
        ),
        (
            "masks unmasked ipv6",
            "2001:db8:1::/32",
            "2001:db8:1::",
            "2001:db8::/32",
            32,
        ),
        ("(extra) /0", "1.2.3.4/0", "1.2.3.4", "0.0.0.0/0", 0),
        ("(extra) /128", "::1/128", "::1", "::1/128", 128),
        (
            "(extra) /33",
            "2001:db8:ffff::/33",
            "2001:db8:ffff::",
            "2001:db8:8000::/33",
            33,
        ),
    ];

    #[test]
    fn kube_accessor_cases() {
        for (name, c, addr, masked, len) in KUBE_ACCESSORS {
            let c = cidr(c);
            assert_eq!(c.addr(), ip(addr), "{name}");
            assert_eq!(c.masked().to_string(), *masked, "{name}");
            assert_eq!(c.masked(), cidr(masked), "{name}");
            assert_eq!(c.prefix_len(), *len, "{name}");
        }
        // Equality is of address and length (validation_test "IP and CIDR").
        assert_eq!(cidr("192.168.0.0/24"), cidr("192.168.0.0/24").masked());
        assert_ne!(cidr("192.168.0.1/24"), cidr("192.168.0.0/24"));
    }

    /// Go's `ParsePrefix` on the lengths `strconv.Atoi` or Rust's `from_str` would read
    /// differently, and its other refusals: (input, Ok(String()) or Err(Go's error)).
    const GO_PARSE_PREFIX: &[(&str, Result<&str, &str>)] = &[
        (
            "1.2.3.4/+8",
            Err(r#"netip.ParsePrefix("1.2.3.4/+8"): bad bits after slash: "+8""#),
        ),
        (
            "1.2.3.4/-1",
            Err(r#"netip.ParsePrefix("1.2.3.4/-1"): bad bits after slash: "-1""#),
        ),
        (
            "1.2.3.4/+",
            Err(r#"netip.ParsePrefix("1.2.3.4/+"): bad bits after slash: "+""#),
        ),
        (
            "1.2.3.4/08",
            Err(r#"netip.ParsePrefix("1.2.3.4/08"): bad bits after slash: "08""#),
        ),
        (
            "1.2.3.4/00",
            Err(r#"netip.ParsePrefix("1.2.3.4/00"): bad bits after slash: "00""#),
        ),
        ("1.2.3.4/0", Ok("1.2.3.4/0")),
        (
            "1.2.3.4/ 8",
            Err(r#"netip.ParsePrefix("1.2.3.4/ 8"): bad bits after slash: " 8""#),
        ),
        (
            "1.2.3.4/8 ",
            Err(r#"netip.ParsePrefix("1.2.3.4/8 "): bad bits after slash: "8 ""#),
        ),
        (
            "1.2.3.4/8x",
            Err(r#"netip.ParsePrefix("1.2.3.4/8x"): bad bits after slash: "8x""#),
        ),
        (
            "1.2.3.4/٣",
            Err(r#"netip.ParsePrefix("1.2.3.4/٣"): bad bits after slash: "٣""#),
        ),
        (
            "1.2.3.4/33",
            Err(r#"netip.ParsePrefix("1.2.3.4/33"): prefix length out of range"#),
        ),
        (
            "::/129",
            Err(r#"netip.ParsePrefix("::/129"): prefix length out of range"#),
        ),
        ("::/128", Ok("::/128")),
        (
            "1.2.3.4/999999999999999999",
            Err(r#"netip.ParsePrefix("1.2.3.4/999999999999999999"): prefix length out of range"#),
        ),
        (
            "1.2.3.4/9223372036854775808",
            Err(
                r#"netip.ParsePrefix("1.2.3.4/9223372036854775808"): bad bits after slash: "9223372036854775808""#,
            ),
        ),
        (
            "fe80::1%eth0/64",
            Err(
                r#"netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix"#,
            ),
        ),
        (
            "1.2.3/24",
            Err(r#"netip.ParsePrefix("1.2.3/24"): ParseAddr("1.2.3"): IPv4 address too short"#),
        ),
        (
            "1.2.3.4/24/8",
            Err(
                r#"netip.ParsePrefix("1.2.3.4/24/8"): ParseAddr("1.2.3.4/24"): unexpected character (at "/24")"#,
            ),
        ),
        (
            "/8",
            Err(r#"netip.ParsePrefix("/8"): ParseAddr(""): unable to parse IP"#),
        ),
        ("::ffff:1.2.3.4/104", Ok("::ffff:1.2.3.4/104")),
    ];

    #[test]
    fn go_parse_prefix_cases() {
        for (input, want) in GO_PARSE_PREFIX {
            let got = Cidr::go_parse_prefix(input)
                .map(|c| c.to_string())
                .map_err(|e| e.to_string());
            let want = want.map(str::to_owned).map_err(str::to_owned);
            assert_eq!(got, want, "{input}");
        }
    }

    #[test]
    fn new_checks_length() {
        assert_eq!(Cidr::new(ip("1.2.3.4"), 33), None);
        assert_eq!(
            Cidr::new(ip("1.2.3.4"), 32).map(|c| c.to_string()),
            Some("1.2.3.4/32".to_owned())
        );
        assert!(Cidr::new(ip("::"), 128).is_some());
        assert!(Cidr::new(ip("::"), 129).is_none());
    }
}
