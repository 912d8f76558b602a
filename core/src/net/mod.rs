//! IP addresses, CIDRs and URLs as Kubernetes reads them: Go's `net/netip` and `net/url`
//! acceptance rules, with the checks and messages kube's CEL libraries add on top
//! (`k8s.io/apiserver` v0.32 `pkg/cel/library/ip.go`, `cidr.go`, `urls.go`).
//!
//! - [`ip`]: `netip.ParseAddr` ([`ip::go_parse_addr`]), kube's `ip()` / `isIP()` /
//!   `ip.isCanonical()` ([`ip::parse`], [`ip::is_ip`], [`ip::is_canonical`]), Go's
//!   canonical text of an address ([`ip::format`]) and its classifications
//!   (`family()`, `isLoopback()`, ...).
//! - [`cidr`]: [`cidr::Cidr`], `netip.ParsePrefix` ([`cidr::Cidr::go_parse_prefix`]) and
//!   kube's `cidr()` / `isCIDR()` ([`cidr::Cidr::parse`], [`cidr::is_cidr`]), with
//!   `containsIP()`, `containsCIDR()`, `masked()`, `prefixLength()`, `ip()`, `string()`.
//! - [`url`]: [`url::Url`], `url.Parse` and `url.ParseRequestURI`
//!   ([`url::Url::go_parse`], [`url::Url::go_parse_request_uri`]), kube's `url()` /
//!   `isURL()` ([`url::Url::parse`], [`url::is_url`]) and the accessors `getScheme()`,
//!   `getHost()`, `getHostname()`, `getPort()`, `getEscapedPath()`, `getQuery()`.
//!
//! Nothing here uses Rust's `std::net` parsers or the `url` crate: both accept and refuse
//! different strings than Go (zones, `+` or leading zeros in prefix lengths, WHATWG versus
//! Go's URL rules), and kube's error messages quote Go's. Addresses are carried as
//! [`std::net::IpAddr`]; zones, which kube refuses, appear only in [`ip::go_parse_addr`].
//!
//! Every error's `Display` is the Go error kube wraps; `cel_message()` on it is the exact
//! text of the runtime error the CEL function returns.

pub mod cidr;
pub mod ip;
pub mod url;

/// Go's `strconv.Quote` of bytes (what `%q` prints): double-quoted, `"` and `\` escaped,
/// `\a \b \f \n \r \t \v`, other ASCII controls as `\xNN`, bytes that are not UTF-8 as
/// `\xNN`, non-printable characters as `\uNNNN` / `\UNNNNNNNN`.
///
/// Go's "printable" is a Unicode-table lookup (letters, marks, numbers, punctuation,
/// symbols, and the ASCII space); [`is_go_print`] is exact for ASCII and approximates the
/// rest (see there).
pub(crate) fn go_quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    let mut rest = bytes;
    while !rest.is_empty() {
        let (valid, invalid) = match std::str::from_utf8(rest) {
            Ok(s) => (s, &[][..]),
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                // `valid_up_to` is a char boundary of valid UTF-8.
                (std::str::from_utf8(good).unwrap_or(""), bad)
            }
        };
        for c in valid.chars() {
            push_quoted_char(&mut out, c);
        }
        if let Some((&b, after)) = invalid.split_first() {
            // Go decodes one bad byte at a time as `RuneError` of width 1.
            out.push_str(&format!("\\x{b:02x}"));
            rest = after;
        } else {
            rest = &[];
        }
    }
    out.push('"');
    out
}

/// [`go_quote`] of a string: Go's `%q`, as kube's messages quote values.
pub fn go_quote_str(s: &str) -> String {
    go_quote(s.as_bytes())
}

fn push_quoted_char(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0b' => out.push_str("\\v"),
        c if is_go_print(c) => out.push(c),
        c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// Go's `strconv.IsPrint`, exact for ASCII (`' '..='~'`). Beyond ASCII it refuses the
/// controls (U+0080–U+009F), the separators other than U+0020 (U+00A0, U+1680,
/// U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000), the common format characters,
/// private-use planes and areas, and noncharacters; it accepts every other character,
/// including unassigned ones, which Go (by its Unicode tables) would escape.
pub(crate) fn is_go_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    let refused: &[(u32, u32)] = &[
        (0x0080, 0x00a0),
        (0x00ad, 0x00ad),
        (0x0600, 0x0605),
        (0x061c, 0x061c),
        (0x06dd, 0x06dd),
        (0x070f, 0x070f),
        (0x0890, 0x0891),
        (0x08e2, 0x08e2),
        (0x180e, 0x180e),
        (0x1680, 0x1680),
        (0x2000, 0x200f),
        (0x2028, 0x202f),
        (0x205f, 0x2064),
        (0x2066, 0x206f),
        (0x3000, 0x3000),
        (0xe000, 0xf8ff),
        (0xfdd0, 0xfdef),
        (0xfeff, 0xfeff),
        (0xfff9, 0xfffb),
        (0x110bd, 0x110bd),
        (0x110cd, 0x110cd),
        (0x13430, 0x1343f),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0001, 0xe0001),
        (0xe0020, 0xe007f),
        (0xf0000, 0x10ffff),
    ];
    if u & 0xfffe == 0xfffe {
        return false;
    }
    !refused.iter().any(|&(lo, hi)| (lo..=hi).contains(&u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_like_go() {
        // (input bytes, strconv.Quote)
        let cases: &[(&[u8], &str)] = &[
            (b"", r#""""#),
            (b"192.168.0.1.0", r#""192.168.0.1.0""#),
            (b"a\"b\\c", r#""a\"b\\c""#),
            (b"\x07\x08\x0c\n\r\t\x0b", r#""\a\b\f\n\r\t\v""#),
            (b"\x00\x1f\x7f", r#""\x00\x1f\x7f""#),
            ("é日本".as_bytes(), "\"é日本\""),
            (
                "\u{a0}\u{2028}\u{feff}".as_bytes(),
                r#""\u00a0\u2028\ufeff""#,
            ),
            ("\u{e0001}".as_bytes(), r#""\U000e0001""#),
            (b"%z\xc3", r#""%z\xc3""#),
            (b"\xff\xfe", r#""\xff\xfe""#),
        ];
        for (input, want) in cases {
            assert_eq!(go_quote(input), *want, "{input:?}");
        }
    }
}
