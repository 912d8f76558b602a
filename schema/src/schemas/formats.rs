//! The string formats a CustomResourceDefinition's schema may name (`format`), judged as
//! kube-apiserver 1.32 judges them: apiextensions-apiserver v0.32.1 keeps the formats of
//! `pkg/apiserver/validation/formats.go` (any other is stripped, so ignored) and checks
//! them with kube-openapi's `strfmt.Default` registry (`pkg/validation/strfmt` at
//! 32ad38e42d3f, the commit its go.mod pins), whose validators come from govalidator
//! (f61b66f), `k8s.io/utils/net` and Go 1.23's standard library. A format's name is
//! normalized by removing `-` (`date-time` is `datetime`).
//!
//! kube-openapi reports a failure as `errors.InvalidType(path, "body", format, value)`:
//! `<path> in body must be of type <format>: <value %q>`, which [`message`] renders
//! without the `<path> in body` prefix, as the rest of this crate does.
//!
//! What each validator accepts, from the Go sources:
//!
//! - `bsonobjectid`: 24 hex digits (`hex.DecodeString` to 12 bytes);
//! - `uri`: Go's `url.ParseRequestURI`;
//! - `email`: Go's `mail.ParseAddress` with a non-empty address (a port of its parser,
//!   RFC 2047 encoded words included, whose charset other than UTF-8, ISO-8859-1 and
//!   US-ASCII fails the address);
//! - `hostname`: kube-openapi's pattern (Unicode letters and symbols allowed), at most
//!   255 bytes, labels at most 63;
//! - `ipv4`: `k8s.io/utils/net.ParseIPSloppy` (Go's `net.ParseIP`, retried with leading
//!   zeros of a trailing dotted quad stripped) and a `.` in the text — so an IPv4-mapped
//!   IPv6 address with a dotted quad passes;
//! - `ipv6`: Go's `net.ParseIP` (`netip.ParseAddr` without a zone) and a `:` in the text;
//! - `cidr`: `ParseCIDRSloppy` (Go's `net.ParseCIDR`: prefix length digits, leading zeros
//!   allowed, at most the family's bits);
//! - `mac`: Go's `net.ParseMAC` (6, 8 or 20 octets, `:`/`-` or dotted groups of four);
//! - `uuid`, `uuid3`, `uuid4`, `uuid5`: kube-openapi's patterns (hyphens optional);
//! - `isbn`, `isbn10`, `isbn13`, `creditcard`, `ssn`, `hexcolor`, `rgbcolor`, `byte`:
//!   govalidator's patterns and checksums (`byte` is padded standard base64, not empty);
//! - `password`: anything;
//! - `date`: Go's `time.Parse("2006-01-02")` (days checked against the month);
//! - `duration`: Go's `time.ParseDuration`, else kube-openapi's lenient `<n> <unit>` scan;
//! - `datetime`: kube-openapi's `IsDateTime` (a date, then after the first `t`, case
//!   insensitive, `hh:mm:ss[.f](z|±hh:mm)`).

use std::sync::LazyLock;

use kapi_core::net::{go_quote_str, ip, url::Url};

/// The formats apiextensions-apiserver keeps, by normalized name.
const SUPPORTED: [&str; 24] = [
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
];

/// The normalized name of `format` when kube checks it (apiextensions'
/// `StripUnsupportedFormatsPostProcess` blanks the others).
pub(crate) fn supported(format: &str) -> Option<&'static str> {
    let normalized = format.replace('-', "");
    SUPPORTED.iter().copied().find(|f| *f == normalized)
}

/// kube-openapi's message for `value` failing `format` (as the schema names it), less the
/// `<path> in body` prefix.
pub(crate) fn message(format: &str, value: &str) -> String {
    format!("must be of type {format}: {}", go_quote_str(value))
}

/// Whether `s` is valid for the supported format `normalized` (a name [`supported`]
/// returned); unknown names are valid, as stripped formats are.
pub(crate) fn is_valid(normalized: &str, s: &str) -> bool {
    match normalized {
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => Url::go_parse_request_uri(s).is_ok(),
        "email" => is_email(s),
        "hostname" => is_hostname(s),
        "ipv4" => parse_ip_sloppy(s) && s.contains('.'),
        "ipv6" => go_parse_ip(s) && s.contains(':'),
        "cidr" => is_cidr_sloppy(s),
        "mac" => is_mac(s),
        "uuid" => matches(&UUID, s),
        "uuid3" => matches(&UUID3, s),
        "uuid4" => matches(&UUID4, s),
        "uuid5" => matches(&UUID5, s),
        "isbn" => is_isbn10(s) || is_isbn13(s),
        "isbn10" => is_isbn10(s),
        "isbn13" => is_isbn13(s),
        "creditcard" => is_credit_card(s),
        "ssn" => s.len() == 11 && matches(&SSN, s),
        "hexcolor" => matches(&HEX_COLOR, s),
        "rgbcolor" => matches(&RGB_COLOR, s),
        "byte" => matches(&BASE64, s),
        "date" => kapi_core::validation::is_full_date(s),
        "duration" => is_duration(s),
        "datetime" => is_date_time(s),
        _ => true,
    }
}

type Lazy = LazyLock<regex_lite::Regex>;

fn matches(regex: &Lazy, s: &str) -> bool {
    regex.is_match(s)
}

fn compile(pattern: &str) -> regex_lite::Regex {
    regex_lite::Regex::new(pattern).expect("a valid pattern")
}

// kube-openapi's and govalidator's patterns; `\d` and `\s` written out as Go's ASCII
// classes (Go's `\s` is `[\t\n\f\r ]`, without `\v`).
static UUID: Lazy = LazyLock::new(|| {
    compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID3: Lazy = LazyLock::new(|| {
    compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: Lazy = LazyLock::new(|| {
    compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: Lazy = LazyLock::new(|| {
    compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static SSN: Lazy = LazyLock::new(|| compile(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$"));
static HEX_COLOR: Lazy = LazyLock::new(|| compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGB_COLOR: Lazy = LazyLock::new(|| {
    let byte = r"(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
    let space = r"[\t\n\x0C\r ]*";
    compile(&format!(
        r"^rgb\({space}{byte}{space},{space}{byte}{space},{space}{byte}{space}\)$"
    ))
});
static BASE64: Lazy = LazyLock::new(|| {
    compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
});
static CREDIT_CARD: Lazy = LazyLock::new(|| {
    compile(
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$",
    )
});
/// `k8s.io/utils/net`'s `matchZeros`: a trailing dotted quad (and prefix length) whose
/// leading zeros `ParseIPSloppy` and `ParseCIDRSloppy` strip before trying again.
static LEADING_ZEROS: Lazy = LazyLock::new(|| {
    compile(
        r"(^|:)0*(0|[1-9][0-9]*)\.0*(0|[1-9][0-9]*)\.0*(0|[1-9][0-9]*)\.0*(0|[1-9][0-9]*)((/)0*(0|[1-9][0-9]*))?$",
    )
});
/// kube-openapi's `HostnamePattern`, with Unicode letters (`\p{L}`) and symbols (`\p{S}`):
/// the one pattern `regex_lite` cannot take.
static HOSTNAME: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
    .expect("a valid pattern")
});

/// kube-openapi's `IsHostname`.
fn is_hostname(s: &str) -> bool {
    HOSTNAME.is_match(s) && s.len() <= 255 && s.split('.').all(|label| label.len() <= 63)
}

/// Go 1.23's `net.ParseIP`: `netip.ParseAddr`, without a zone.
fn go_parse_ip(s: &str) -> bool {
    ip::go_parse_addr(s).is_ok_and(|parsed| parsed.zone.is_none())
}

/// The text `k8s.io/utils/net` retries with: leading zeros of the trailing dotted quad
/// (and of the prefix length) stripped.
fn strip_zeros(s: &str) -> String {
    LEADING_ZEROS
        .replace_all(s, "${1}${2}.${3}.${4}.${5}${7}${8}")
        .into_owned()
}

/// `k8s.io/utils/net.ParseIPSloppy` succeeds.
fn parse_ip_sloppy(s: &str) -> bool {
    go_parse_ip(s) || go_parse_ip(&strip_zeros(s))
}

/// `k8s.io/utils/net.ParseCIDRSloppy` succeeds.
fn is_cidr_sloppy(s: &str) -> bool {
    go_parse_cidr(s) || go_parse_cidr(&strip_zeros(s))
}

/// Go 1.23's `net.ParseCIDR` succeeds: an address (no zone), `/`, and decimal digits
/// (leading zeros allowed) up to the family's bits.
fn go_parse_cidr(s: &str) -> bool {
    let Some((addr, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(parsed) = ip::go_parse_addr(addr) else {
        return false;
    };
    if parsed.zone.is_some() || bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let max = match parsed.addr {
        std::net::IpAddr::V4(_) => 32,
        std::net::IpAddr::V6(_) => 128,
    };
    // Go's `dtoi` gives up at 0xFFFFFF; anything that long is out of range anyway.
    let mut n: u64 = 0;
    for b in bits.bytes() {
        n = n * 10 + u64::from(b - b'0');
        if n >= 0xFF_FFFF {
            return false;
        }
    }
    n <= max
}

/// Go's `net.ParseMAC` succeeds.
fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let octets_ok = |n: usize| n == 6 || n == 8 || n == 20;
    let hex2 = |pair: &[u8]| pair.len() == 2 && pair.iter().all(u8::is_ascii_hexdigit);
    if b[2] == b':' || b[2] == b'-' {
        let sep = b[2];
        if !(b.len() + 1).is_multiple_of(3) || !octets_ok((b.len() + 1) / 3) {
            return false;
        }
        b.chunks(3).all(|group| {
            hex2(&group[..2.min(group.len())]) && (group.len() == 2 || group[2] == sep)
        })
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) || !octets_ok(2 * (b.len() + 1) / 5) {
            return false;
        }
        b.chunks(5).all(|group| {
            group.len() >= 4
                && hex2(&group[..2])
                && hex2(&group[2..4])
                && (group.len() == 4 || group[4] == b'.')
        })
    } else {
        false
    }
}

/// govalidator's `IsISBN(str, 10)`: whitespace and `-` removed, nine digits and a digit
/// or `X`, weighted sum divisible by 11.
fn is_isbn10(s: &str) -> bool {
    let sanitized = sanitize_isbn(s);
    let b = sanitized.as_bytes();
    let shape = b.len() == 10
        && b[..9].iter().all(u8::is_ascii_digit)
        && (b[9].is_ascii_digit() || b[9] == b'X');
    if !shape {
        return false;
    }
    let mut checksum: u32 = (0..9)
        .map(|i| (i as u32 + 1) * u32::from(b[i] - b'0'))
        .sum();
    checksum += 10
        * if b[9] == b'X' {
            10
        } else {
            u32::from(b[9] - b'0')
        };
    checksum.is_multiple_of(11)
}

/// govalidator's `IsISBN(str, 13)`: thirteen digits whose last is the EAN check digit.
fn is_isbn13(s: &str) -> bool {
    let sanitized = sanitize_isbn(s);
    let b = sanitized.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let checksum: u32 = (0..12)
        .map(|i| [1, 3][i % 2] * u32::from(b[i] - b'0'))
        .sum();
    u32::from(b[12] - b'0') == (10 - checksum % 10) % 10
}

/// govalidator's `whiteSpacesAndMinus` (`[\s-]+`, Go's ASCII `\s`) removed.
fn sanitize_isbn(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\x0C' | '\r' | ' ' | '-'))
        .collect()
}

/// govalidator's `IsCreditCard`: the digits (everything else dropped) match a card
/// number's pattern and pass the Luhn check.
fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !CREDIT_CARD.is_match(&digits) {
        return false;
    }
    let sum: u32 = (digits.bytes().rev().enumerate())
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            match i % 2 {
                0 => d,
                _ if d * 2 >= 10 => d * 2 % 10 + 1,
                _ => d * 2,
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// kube-openapi's `IsDateTime`: at least 4 bytes; lower-cased and split at `t`, the first
/// part a date and the second (any further parts ignored) matching `DateTimePattern`
/// with hours at most 23, minutes and seconds at most 59.
fn is_date_time(s: &str) -> bool {
    static TIME: Lazy = LazyLock::new(|| {
        compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
    });
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !kapi_core::validation::is_full_date(date) {
        return false;
    }
    let Some(m) = TIME.captures(time) else {
        return false;
    };
    &m[1] <= "23" && &m[2] <= "59" && &m[3] <= "59"
}

/// kube-openapi's `IsDuration`: Go's `time.ParseDuration`, else its own scan of
/// `(\d+)\s*([A-Za-zµ]+)` pairs, valid when every number fits an `int` and some unit is
/// one it knows (`ns`/`nano…`, `us`/`µs`/`micro…`, `ms`/`milli…`, `s`/`sec…`,
/// `m`/`min…`, `h`/`hr`/`hour…`, `d`/`day…`, `w`/`wk`/`week…`).
fn is_duration(s: &str) -> bool {
    static PAIR: Lazy = LazyLock::new(|| compile(r"([0-9]+)[\t\n\x0C\r ]*([A-Za-zµ]+)"));
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    if go_parse_duration(s) {
        return true;
    }
    let mut known = false;
    for pair in PAIR.captures_iter(s) {
        if pair[1].parse::<i64>().is_err() {
            return false;
        }
        let unit = pair[2].to_lowercase();
        known |= UNITS.iter().any(|variants| {
            let last = variants.len() - 1;
            (variants.iter().enumerate())
                .any(|(i, v)| (i == last && unit.starts_with(v)) || unit == *v)
        });
    }
    known
}

/// Go's `time.ParseDuration` succeeds: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` with the units
/// `ns`, `us`, `µs` (U+00B5 or U+03BC), `ms`, `s`, `m`, `h`, within ±2^63-1 ns (or "0").
fn go_parse_duration(s: &str) -> bool {
    const MAX: u64 = 1 << 63;
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let first = rest.as_bytes()[0];
        if !(first == b'.' || first.is_ascii_digit()) {
            return false;
        }
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let mut value: u64 = 0;
        for b in rest[..int_len].bytes() {
            if value > MAX / 10 {
                return false;
            }
            value = value * 10 + u64::from(b - b'0');
            if value > MAX {
                return false;
            }
        }
        rest = &rest[int_len..];
        let (mut fraction, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(after) = rest.strip_prefix('.') {
            let frac_len = after.bytes().take_while(u8::is_ascii_digit).count();
            let mut overflow = false;
            for b in after[..frac_len].bytes() {
                if overflow {
                    continue;
                }
                if fraction > (MAX - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = fraction * 10 + u64::from(b - b'0');
                if y > MAX {
                    overflow = true;
                    continue;
                }
                fraction = y;
                scale *= 10.0;
            }
            post = frac_len > 0;
            rest = &after[frac_len..];
        }
        if int_len == 0 && !post {
            return false;
        }
        let unit_len = rest
            .bytes()
            .take_while(|b| *b != b'.' && !b.is_ascii_digit())
            .count();
        let unit: u64 = match &rest[..unit_len] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return false,
        };
        rest = &rest[unit_len..];
        if value > MAX / unit {
            return false;
        }
        value *= unit;
        if fraction > 0 {
            value += (fraction as f64 * (unit as f64 / scale)) as u64;
            if value > MAX {
                return false;
            }
        }
        total += value;
        if total > MAX {
            return false;
        }
    }
    neg || total < MAX
}

/// Go's `mail.ParseAddress` succeeds with a non-empty address.
fn is_email(s: &str) -> bool {
    let mut parser = MailParser { s };
    parser.single_address()
}

/// A port of the acceptance rules of Go's `net/mail` address parser (`addrParser`):
/// only whether it succeeds, not what it returns. Input is valid UTF-8 (a JSON string), so
/// Go's invalid-UTF-8 errors cannot arise.
struct MailParser<'a> {
    s: &'a str,
}

impl MailParser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().first().copied()
    }

    fn consume(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.s = &self.s[1..];
            true
        } else {
            false
        }
    }

    fn skip_space(&mut self) {
        self.s = self.s.trim_start_matches([' ', '\t']);
    }

    fn skip_cfws(&mut self) -> bool {
        self.skip_space();
        while self.consume(b'(') {
            if self.consume_comment().is_none() {
                return false;
            }
            self.skip_space();
        }
        true
    }

    /// `parseSingleAddress`: one address (a group of exactly one counts), then only CFWS.
    fn single_address(&mut self) -> bool {
        match self.address(true) {
            Some(addresses) => {
                self.skip_cfws() && self.s.is_empty() && addresses == 1
                // `IsEmail` also wants a non-empty address, which every success has.
            }
            None => false,
        }
    }

    /// `parseAddress`: the number of addresses parsed, or `None` on error.
    fn address(&mut self, handle_group: bool) -> Option<usize> {
        self.skip_space();
        if self.s.is_empty() {
            return None;
        }
        if self.addr_spec() {
            self.skip_space();
            if self.peek() == Some(b'(') && !self.display_name_comment() {
                return None;
            }
            return Some(1);
        }
        if self.peek() != Some(b'<') {
            self.phrase()?;
        }
        self.skip_space();
        if handle_group && self.consume(b':') {
            return self.group_list();
        }
        if !self.consume(b'<') {
            return None;
        }
        if !self.addr_spec() || !self.consume(b'>') {
            return None;
        }
        Some(1)
    }

    fn group_list(&mut self) -> Option<usize> {
        let mut count = 0;
        self.skip_space();
        if self.consume(b';') {
            return self.skip_cfws().then_some(0);
        }
        loop {
            self.skip_space();
            count += self.address(false)?;
            if !self.skip_cfws() {
                return None;
            }
            if self.consume(b';') {
                return self.skip_cfws().then_some(count);
            }
            if !self.consume(b',') {
                return None;
            }
        }
    }

    /// `consumeAddrSpec`; restores the input on failure.
    fn addr_spec(&mut self) -> bool {
        let orig = self.s;
        let ok = self.addr_spec_inner();
        if !ok {
            self.s = orig;
        }
        ok
    }

    fn addr_spec_inner(&mut self) -> bool {
        self.skip_space();
        if self.s.is_empty() {
            return false;
        }
        let local_ok = if self.peek() == Some(b'"') {
            matches!(self.quoted_string(), Some(local) if !local.is_empty())
        } else {
            self.atom(true, false).is_some()
        };
        if !local_ok || !self.consume(b'@') {
            return false;
        }
        self.skip_space();
        if self.s.is_empty() {
            return false;
        }
        if self.peek() == Some(b'[') {
            self.domain_literal()
        } else {
            self.atom(true, false).is_some()
        }
    }

    /// `consumePhrase`: at least one word.
    fn phrase(&mut self) -> Option<()> {
        let mut words = 0;
        loop {
            if words > 0 && !self.skip_cfws() {
                return None;
            }
            self.skip_space();
            if self.s.is_empty() {
                break;
            }
            let ok = if self.peek() == Some(b'"') {
                self.quoted_string().is_some()
            } else {
                match self.atom(true, true) {
                    Some(word) => !charset_error(word),
                    None => false,
                }
            };
            if !ok {
                break;
            }
            words += 1;
        }
        (words > 0).then_some(())
    }

    /// `consumeQuotedString`: the unquoted text.
    fn quoted_string(&mut self) -> Option<String> {
        let mut text = String::new();
        let mut escaped = false;
        let mut chars = self.s.char_indices().skip(1);
        loop {
            let (i, c) = chars.next()?;
            if escaped {
                if !is_vchar(c) && !is_wsp(c) {
                    return None;
                }
                text.push(c);
                escaped = false;
            } else if is_qtext(c) || is_wsp(c) {
                text.push(c);
            } else if c == '"' {
                self.s = &self.s[i + 1..];
                return Some(text);
            } else if c == '\\' {
                escaped = true;
            } else {
                return None;
            }
        }
    }

    /// `consumeAtom`: a (dot-)atom; unless `permissive`, no leading, trailing or double
    /// dot.
    fn atom(&mut self, dot: bool, permissive: bool) -> Option<&str> {
        let len = (self.s.char_indices())
            .find(|(_, c)| !is_atext(*c, dot))
            .map_or(self.s.len(), |(i, _)| i);
        if len == 0 {
            return None;
        }
        let (atom, rest) = self.s.split_at(len);
        self.s = rest;
        if !permissive && (atom.starts_with('.') || atom.contains("..") || atom.ends_with('.')) {
            return None;
        }
        Some(atom)
    }

    /// `consumeDomainLiteral`: `[dtext]` holding an IP address (`net.ParseIP`).
    fn domain_literal(&mut self) -> bool {
        if !self.consume(b'[') {
            return false;
        }
        let Some(end) = self.s.find(']') else {
            return false;
        };
        let text = &self.s[..end];
        if !text.chars().all(is_dtext) {
            return false;
        }
        self.s = &self.s[end + 1..];
        go_parse_ip(text)
    }

    /// `consumeDisplayNameComment`: a comment whose words' encoded words decode.
    fn display_name_comment(&mut self) -> bool {
        if !self.consume(b'(') {
            return false;
        }
        let Some(comment) = self.consume_comment() else {
            return false;
        };
        !(comment.split([' ', '\t']))
            .filter(|w| !w.is_empty())
            .any(charset_error)
    }

    /// `consumeComment` (after its `(`): the text, when the parentheses balance.
    fn consume_comment(&mut self) -> Option<String> {
        let mut depth = 1;
        let mut comment = Vec::new();
        let bytes = self.s.as_bytes();
        let mut i = 0;
        while i < bytes.len() && depth > 0 {
            if bytes[i] == b'\\' && bytes.len() - i > 1 {
                i += 1;
            } else if bytes[i] == b'(' {
                depth += 1;
            } else if bytes[i] == b')' {
                depth -= 1;
            }
            if depth > 0 {
                comment.push(bytes[i]);
            }
            i += 1;
        }
        // Go slices bytes; a backslash before a multi-byte character splits it, which
        // only the words' decoding below would see.
        self.s = self.s.get(i..).unwrap_or("");
        (depth == 0).then(|| String::from_utf8_lossy(&comment).into_owned())
    }
}

/// Whether `net/mail` fails on `word` as an RFC 2047 encoded word: it decodes (`B` as
/// padded standard base64, `Q` as quoted-printable) but names a charset other than
/// UTF-8, ISO-8859-1 or US-ASCII, which Go's default decoder cannot read. Words that are
/// not well-formed encoded words are taken as text.
fn charset_error(word: &str) -> bool {
    if word.len() < 8
        || !word.starts_with("=?")
        || !word.ends_with("?=")
        || word.matches('?').count() != 4
    {
        return false;
    }
    let inner = &word[2..word.len() - 2];
    let (charset, rest) = inner.split_once('?').unwrap_or((inner, ""));
    if charset.is_empty() {
        return false;
    }
    let (encoding, text) = rest.split_once('?').unwrap_or((rest, ""));
    let decodes = match encoding {
        "B" | "b" => BASE64.is_match(text) || text.is_empty(),
        "Q" | "q" => q_decodes(text),
        _ => false,
    };
    decodes
        && !["utf-8", "iso-8859-1", "us-ascii"]
            .iter()
            .any(|known| charset.eq_ignore_ascii_case(known))
}

/// Go's `mime` `qDecode` succeeds.
fn q_decodes(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'=' => {
                if i + 2 >= b.len()
                    || !b[i + 1].is_ascii_hexdigit()
                    || !b[i + 2].is_ascii_hexdigit()
                {
                    return false;
                }
                i += 2;
            }
            b'_' | b' '..=b'~' | b'\n' | b'\r' | b'\t' => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

fn is_vchar(c: char) -> bool {
    ('!'..='~').contains(&c) || !c.is_ascii()
}

fn is_wsp(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn is_qtext(c: char) -> bool {
    c != '\\' && c != '"' && is_vchar(c)
}

fn is_dtext(c: char) -> bool {
    c != '[' && c != ']' && c != '\\' && is_vchar(c)
}

fn is_atext(c: char, dot: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' => false,
        c => is_vchar(c),
    }
}

#[cfg(test)]
#[path = "formats_tests.rs"]
mod tests;
