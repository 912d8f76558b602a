//! URLs as Go's `net/url` parses them, and kube's CEL `url()` / `isURL()` on top.
//!
//! [`Url::go_parse`] is `url.Parse`, [`Url::go_parse_request_uri`] is
//! `url.ParseRequestURI`. Their rules, in order: no ASCII control byte (`< 0x20`, `0x7f`);
//! `*` alone is a path; a scheme is letters then letters, digits, `+`, `-`, `.` before the
//! first `:` (a leading `:` is "missing protocol scheme"; anything else means no scheme),
//! lower-cased; the query is what follows the first `?` (a single trailing `?` is kept as
//! [`Url::force_query`]); with a scheme and no leading `/`, the rest is opaque
//! (`mailto:a@b`, `https:://x`); without a scheme, `ParseRequestURI` wants a leading `/`
//! ("invalid URI for request") and `Parse` refuses a colon in the first segment; `//`
//! starts an authority (for `ParseRequestURI` only after a scheme; for `Parse` unless it
//! is `///` without a scheme): userinfo up to the last `@` (RFC 3986 characters only,
//! percent-decoded, a `:` splits the password), the host (`[…]` literal with an optional
//! `%25`-zone, else `:port` after the last colon; the port must be digits; percent escapes
//! only for non-ASCII bytes; characters outside RFC 3986's reg-name refused); the path
//! percent-decoded. `Parse` cuts the fragment at the first `#` first; `ParseRequestURI`
//! does not (a `#` belongs to the path, the query, or — refused — the host).
//!
//! kube's `url()` ([`Url::parse`]) requires `ParseRequestURI` to succeed (an absolute URI
//! or an absolute path) and returns `Parse`'s result; `isURL()` ([`is_url`]) is
//! `ParseRequestURI` alone.
//!
//! Decoded parts (host, userinfo, path, fragment, query) are bytes in Go and may be
//! invalid UTF-8 (`/%ff`); they are kept as bytes here, with lossy `str` accessors
//! (U+FFFD) beside exact `_bytes` ones. Escaped forms ([`Url::escaped_path`], `Display`)
//! are exact.
//!
//! This is Go 1.23's `net/url` (Kubernetes 1.32's toolchain). Go 1.24.8/1.25.2 (CVE-2025-
//! 47912) additionally check that a bracketed host is an IPv6 address; not done here.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use super::go_quote;

/// A URL as Go's `url.URL` holds it.
///
/// `Display` is Go's `URL.String()`. Equality is kube's CEL `==` on URLs: of the
/// `String()` forms.
#[derive(Clone, Debug, Default)]
pub struct Url {
    scheme: String,
    opaque: String,
    user: Option<Userinfo>,
    host: Vec<u8>,
    path: Vec<u8>,
    raw_path: String,
    omit_host: bool,
    force_query: bool,
    raw_query: String,
    fragment: Vec<u8>,
    raw_fragment: String,
}

/// The userinfo of a URL (`user:password@`), decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Userinfo {
    username: Vec<u8>,
    password: Option<Vec<u8>>,
}

impl Userinfo {
    /// The user name (lossy UTF-8).
    pub fn username(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.username)
    }

    /// The password, when a `:` was written (lossy UTF-8).
    pub fn password(&self) -> Option<Cow<'_, str>> {
        self.password.as_deref().map(String::from_utf8_lossy)
    }
}

impl fmt::Display for Userinfo {
    /// Go's `Userinfo.String()`: escaped user name, `:` and escaped password if set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&escape(&self.username, Mode::UserPassword))?;
        if let Some(password) = &self.password {
            write!(f, ":{}", escape(password, Mode::UserPassword))?;
        }
        Ok(())
    }
}

/// What went wrong parsing a URL: Go's inner error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UrlErrorKind {
    /// `net/url: invalid control character in URL`.
    ControlCharacter,
    /// `empty url` (`ParseRequestURI` only).
    Empty,
    /// `missing protocol scheme` (a leading `:`).
    MissingScheme,
    /// `invalid URI for request`: `ParseRequestURI` of neither an absolute URI nor an
    /// absolute path.
    InvalidRequestUri,
    /// `first path segment in URL cannot contain colon` (`Parse` of a relative path).
    ColonInFirstSegment,
    /// `missing ']' in host`.
    MissingBracket,
    /// `invalid port "<:port>" after host`.
    InvalidPort(String),
    /// `net/url: invalid userinfo`.
    InvalidUserinfo,
    /// `invalid URL escape "<up to 3 bytes>"`.
    Escape(Vec<u8>),
    /// `invalid character "<c>" in host name`.
    InvalidHostCharacter(u8),
}

impl fmt::Display for UrlErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlErrorKind::ControlCharacter => {
                f.write_str("net/url: invalid control character in URL")
            }
            UrlErrorKind::Empty => f.write_str("empty url"),
            UrlErrorKind::MissingScheme => f.write_str("missing protocol scheme"),
            UrlErrorKind::InvalidRequestUri => f.write_str("invalid URI for request"),
            UrlErrorKind::ColonInFirstSegment => {
                f.write_str("first path segment in URL cannot contain colon")
            }
            UrlErrorKind::MissingBracket => f.write_str("missing ']' in host"),
            UrlErrorKind::InvalidPort(port) => {
                write!(f, "invalid port {} after host", go_quote(port.as_bytes()))
            }
            UrlErrorKind::InvalidUserinfo => f.write_str("net/url: invalid userinfo"),
            UrlErrorKind::Escape(bytes) => write!(f, "invalid URL escape {}", go_quote(bytes)),
            UrlErrorKind::InvalidHostCharacter(b) => {
                write!(f, "invalid character {} in host name", go_quote(&[*b]))
            }
        }
    }
}

/// Go's `*url.Error` from a parse: `Display` is `parse "<url>": <kind>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlError {
    url: String,
    kind: UrlErrorKind,
}

impl UrlError {
    /// What went wrong.
    pub fn kind(&self) -> &UrlErrorKind {
        &self.kind
    }

    /// The string Go names in the error (for `Parse`, without the fragment unless the
    /// fragment was what failed).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The text of the error kube's `url()` returns:
    /// `URL parse error during conversion from string: ` and `Display`.
    pub fn cel_message(&self) -> String {
        format!("URL parse error during conversion from string: {self}")
    }
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "parse {}: {}", go_quote(self.url.as_bytes()), self.kind)
    }
}

impl std::error::Error for UrlError {}

/// kube's `isURL()`: whether Go's `url.ParseRequestURI` accepts the string.
pub fn is_url(s: &str) -> bool {
    Url::go_parse_request_uri(s).is_ok()
}

impl Url {
    /// kube's `url()`: refused unless Go's `url.ParseRequestURI` accepts the string (an
    /// absolute URI, or a path starting with `/`), then Go's `url.Parse` of it (which may
    /// still refuse it, for a bad escape in the fragment), whose result this is: so
    /// `url('//h/p')` has host `h`, and a `#` starts the fragment.
    pub fn parse(s: &str) -> Result<Url, UrlError> {
        Url::go_parse_request_uri(s)?;
        Url::go_parse(s)
    }

    /// Go's `url.Parse`.
    pub fn go_parse(s: &str) -> Result<Url, UrlError> {
        let (before, fragment) = s.split_once('#').unwrap_or((s, ""));
        let mut url = parse_reference(before, false).map_err(|kind| UrlError {
            url: before.to_owned(),
            kind,
        })?;
        if !fragment.is_empty() {
            url.set_fragment(fragment).map_err(|kind| UrlError {
                url: s.to_owned(),
                kind,
            })?;
        }
        Ok(url)
    }

    /// Go's `url.ParseRequestURI`: as received in an HTTP request line, so an absolute URI
    /// or an absolute path, and no fragment.
    pub fn go_parse_request_uri(s: &str) -> Result<Url, UrlError> {
        parse_reference(s, true).map_err(|kind| UrlError {
            url: s.to_owned(),
            kind,
        })
    }

    /// kube's `getScheme()`: the scheme, lower case, or empty.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// The opaque part after `scheme:` when it does not start with `/`
    /// (`mailto:a@b` → `a@b`).
    pub fn opaque(&self) -> &str {
        &self.opaque
    }

    /// The userinfo, when an `@` was in the authority.
    pub fn user(&self) -> Option<&Userinfo> {
        self.user.as_ref()
    }

    /// kube's `getHost()`: host and port as written, percent-decoded
    /// (`[fe80::1%25en0]:80` → `[fe80::1%en0]:80`), lossy UTF-8.
    pub fn host(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.host)
    }

    /// [`Url::host`]'s exact bytes.
    pub fn host_bytes(&self) -> &[u8] {
        &self.host
    }

    /// kube's `getHostname()`, Go's `URL.Hostname()`: the host without a valid `:port`,
    /// and without the brackets of an IPv6 literal (lossy UTF-8).
    pub fn hostname(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(split_host_port(&self.host).0)
    }

    /// kube's `getPort()`, Go's `URL.Port()`: the digits after the host's last `:` when
    /// they are all digits (possibly empty), else empty.
    pub fn port(&self) -> &str {
        // Only ASCII digits.
        std::str::from_utf8(split_host_port(&self.host).1).unwrap_or("")
    }

    /// The decoded path (lossy UTF-8).
    pub fn path(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.path)
    }

    /// [`Url::path`]'s exact bytes.
    pub fn path_bytes(&self) -> &[u8] {
        &self.path
    }

    /// The path as written, when Go's default escaping of [`Url::path`] would differ;
    /// else empty (Go's `RawPath`).
    pub fn raw_path(&self) -> &str {
        &self.raw_path
    }

    /// kube's `getEscapedPath()`, Go's `URL.EscapedPath()`: the path as written when that
    /// is a valid encoding of it, else Go's escaping of it (`/with space` →
    /// `/with%20space`); `*` stays `*`.
    pub fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path, Mode::Path)
            && unescape(&self.raw_path, Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        if self.path == b"*" {
            return "*".to_owned();
        }
        escape(&self.path, Mode::Path)
    }

    /// Whether the authority was empty and omitted (`file:/x`; Go's `OmitHost`).
    pub fn omit_host(&self) -> bool {
        self.omit_host
    }

    /// Whether the URL ended in a `?` with nothing after it (Go's `ForceQuery`).
    pub fn force_query(&self) -> bool {
        self.force_query
    }

    /// The query as written, without the `?` (Go's `RawQuery`).
    pub fn raw_query(&self) -> &str {
        &self.raw_query
    }

    /// kube's `getQuery()`, Go's `URL.Query()` ([`parse_query`]), keys and values as lossy
    /// UTF-8 (keys that differ only in invalid bytes merge, values in order).
    pub fn query(&self) -> BTreeMap<String, Vec<String>> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (key, values) in parse_query(&self.raw_query) {
            out.entry(String::from_utf8_lossy(&key).into_owned())
                .or_default()
                .extend(
                    values
                        .iter()
                        .map(|v| String::from_utf8_lossy(v).into_owned()),
                );
        }
        out
    }

    /// The decoded fragment (lossy UTF-8).
    pub fn fragment(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.fragment)
    }

    /// [`Url::fragment`]'s exact bytes.
    pub fn fragment_bytes(&self) -> &[u8] {
        &self.fragment
    }

    /// Go's `URL.EscapedFragment()`: the fragment as written when that is a valid
    /// encoding of it, else Go's escaping of it.
    pub fn escaped_fragment(&self) -> String {
        if !self.raw_fragment.is_empty()
            && valid_encoded(&self.raw_fragment, Mode::Fragment)
            && unescape(&self.raw_fragment, Mode::Fragment).is_ok_and(|f| f == self.fragment)
        {
            return self.raw_fragment.clone();
        }
        escape(&self.fragment, Mode::Fragment)
    }

    fn set_path(&mut self, written: &str) -> Result<(), UrlErrorKind> {
        self.path = unescape(written, Mode::Path)?;
        self.raw_path = if escape(&self.path, Mode::Path) == written {
            String::new()
        } else {
            written.to_owned()
        };
        Ok(())
    }

    fn set_fragment(&mut self, written: &str) -> Result<(), UrlErrorKind> {
        self.fragment = unescape(written, Mode::Fragment)?;
        self.raw_fragment = if escape(&self.fragment, Mode::Fragment) == written {
            String::new()
        } else {
            written.to_owned()
        };
        Ok(())
    }
}

impl PartialEq for Url {
    fn eq(&self, other: &Url) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for Url {}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        if !self.scheme.is_empty() {
            out.push_str(&self.scheme);
            out.push(':');
        }
        if !self.opaque.is_empty() {
            out.push_str(&self.opaque);
        } else {
            let has_authority =
                !self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some();
            let omitted = self.omit_host && self.host.is_empty() && self.user.is_none();
            if has_authority && !omitted {
                if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                    out.push_str("//");
                }
                if let Some(user) = &self.user {
                    out.push_str(&user.to_string());
                    out.push('@');
                }
                out.push_str(&escape(&self.host, Mode::Host));
            }
            let path = self.escaped_path();
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                out.push('/');
            }
            // A first segment with a colon would read as a scheme.
            if out.is_empty() && path.split('/').next().is_some_and(|s| s.contains(':')) {
                out.push_str("./");
            }
            out.push_str(&path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            out.push('?');
            out.push_str(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            out.push('#');
            out.push_str(&self.escaped_fragment());
        }
        f.write_str(&out)
    }
}

/// Go's `url.ParseQuery` without its error (what `URL.Query()` returns): `&`-separated
/// pairs; a pair containing `;` is dropped (Go 1.17+), as is an empty one; `key` alone
/// has value `""`; key and value are decoded (`+` as space, `%XX`) and a pair with a bad
/// escape in either is dropped. Values keep their order.
pub fn parse_query(query: &str) -> BTreeMap<Vec<u8>, Vec<Vec<u8>>> {
    let mut out: BTreeMap<Vec<u8>, Vec<Vec<u8>>> = BTreeMap::new();
    for pair in query.split('&') {
        if pair.contains(';') || pair.is_empty() {
            continue;
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (Ok(key), Ok(value)) = (
            unescape(key, Mode::QueryComponent),
            unescape(value, Mode::QueryComponent),
        ) else {
            continue;
        };
        out.entry(key).or_default().push(value);
    }
    out
}

/// Which part of a URL a string is (Go's `encoding`), for escaping rules.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

fn parse_reference(raw: &str, via_request: bool) -> Result<Url, UrlErrorKind> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(UrlErrorKind::ControlCharacter);
    }
    if raw.is_empty() && via_request {
        return Err(UrlErrorKind::Empty);
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = b"*".to_vec();
        return Ok(url);
    }
    let (scheme, mut rest) = split_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();

    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_owned();
        rest = before;
    }

    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_owned();
            return Ok(url);
        }
        if via_request {
            return Err(UrlErrorKind::InvalidRequestUri);
        }
        if rest.split('/').next().is_some_and(|s| s.contains(':')) {
            return Err(UrlErrorKind::ColonInFirstSegment);
        }
    }

    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let (authority, path) = match rest[2..].find('/') {
            Some(i) => rest[2..].split_at(i),
            None => (&rest[2..], ""),
        };
        let (user, host) = parse_authority(authority)?;
        url.user = user;
        url.host = host;
        rest = path;
    } else if !url.scheme.is_empty() && rest.starts_with('/') {
        url.omit_host = true;
    }
    url.set_path(rest)?;
    Ok(url)
}

/// The scheme before the first `:` and the rest; no scheme when a character outside the
/// scheme alphabet (or a leading digit, `+`, `-`, `.`) comes first.
fn split_scheme(raw: &str) -> Result<(&str, &str), UrlErrorKind> {
    for (i, b) in raw.bytes().enumerate() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err(UrlErrorKind::MissingScheme),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

fn parse_authority(authority: &str) -> Result<(Option<Userinfo>, Vec<u8>), UrlErrorKind> {
    let at = authority.rfind('@');
    let host = parse_host(match at {
        Some(i) => &authority[i + 1..],
        None => authority,
    })?;
    let Some(at) = at else {
        return Ok((None, host));
    };
    let userinfo = &authority[..at];
    if !userinfo.bytes().all(valid_userinfo_byte) {
        return Err(UrlErrorKind::InvalidUserinfo);
    }
    let user = match userinfo.split_once(':') {
        None => Userinfo {
            username: unescape(userinfo, Mode::UserPassword)?,
            password: None,
        },
        Some((name, password)) => Userinfo {
            username: unescape(name, Mode::UserPassword)?,
            password: Some(unescape(password, Mode::UserPassword)?),
        },
    };
    Ok((Some(user), host))
}

fn valid_userinfo_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b':'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b'%'
                | b'@'
        )
}

fn parse_host(host: &str) -> Result<Vec<u8>, UrlErrorKind> {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return Err(UrlErrorKind::MissingBracket);
        };
        let colon_port = &host[close + 1..];
        if !valid_optional_port(colon_port.as_bytes()) {
            return Err(UrlErrorKind::InvalidPort(colon_port.to_owned()));
        }
        // RFC 6874: `%25` starts the zone, which may escape more than the host may.
        if let Some(zone) = host[..close].find("%25") {
            let mut out = unescape(&host[..zone], Mode::Host)?;
            out.extend(unescape(&host[zone..close], Mode::Zone)?);
            out.extend(unescape(&host[close..], Mode::Host)?);
            return Ok(out);
        }
    } else if let Some(colon) = host.rfind(':') {
        let colon_port = &host[colon..];
        if !valid_optional_port(colon_port.as_bytes()) {
            return Err(UrlErrorKind::InvalidPort(colon_port.to_owned()));
        }
    }
    unescape(host, Mode::Host)
}

/// Empty, or `:` followed by digits only.
fn valid_optional_port(port: &[u8]) -> bool {
    match port.split_first() {
        None => true,
        Some((b':', digits)) => digits.iter().all(u8::is_ascii_digit),
        Some(_) => false,
    }
}

/// Go's `splitHostPort` on a parsed host: (host, port).
fn split_host_port(host_port: &[u8]) -> (&[u8], &[u8]) {
    let (mut host, mut port): (&[u8], &[u8]) = (host_port, b"");
    if let Some(colon) = host_port.iter().rposition(|&b| b == b':')
        && valid_optional_port(&host_port[colon..])
    {
        host = &host_port[..colon];
        port = &host_port[colon + 1..];
    }
    if host.len() >= 2 && host.starts_with(b"[") && host.ends_with(b"]") {
        host = &host[1..host.len() - 1];
    }
    (host, port)
}

fn unhex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Go's `unescape`: percent-decoding with each part's checks.
fn unescape(s: &str, mode: Mode) -> Result<Vec<u8>, UrlErrorKind> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let (Some(hi), Some(lo)) = (
                    bytes.get(i + 1).copied().and_then(unhex),
                    bytes.get(i + 2).copied().and_then(unhex),
                ) else {
                    let end = bytes.len().min(i + 3);
                    return Err(UrlErrorKind::Escape(bytes[i..end].to_vec()));
                };
                let escape = &bytes[i..i + 3];
                let value = hi << 4 | lo;
                // A host may percent-encode only non-ASCII bytes, and `%25` (RFC 6874).
                if mode == Mode::Host && hi < 8 && escape != b"%25" {
                    return Err(UrlErrorKind::Escape(escape.to_vec()));
                }
                // A zone may escape only what a host could hold unescaped, or a space.
                if mode == Mode::Zone
                    && escape != b"%25"
                    && value != b' '
                    && should_escape(value, Mode::Host)
                {
                    return Err(UrlErrorKind::Escape(escape.to_vec()));
                }
                out.push(value);
                i += 3;
            }
            b'+' => {
                out.push(if mode == Mode::QueryComponent {
                    b' '
                } else {
                    b'+'
                });
                i += 1;
            }
            b => {
                if matches!(mode, Mode::Host | Mode::Zone) && b < 0x80 && should_escape(b, mode) {
                    return Err(UrlErrorKind::InvalidHostCharacter(b));
                }
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Go's `shouldEscape`: whether a byte must be percent-encoded in a part.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => return c == b'?',
            Mode::UserPassword => return matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => return true,
            Mode::Fragment => return false,
            Mode::Host | Mode::Zone => {}
        },
        _ => {}
    }
    if mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*') {
        return false;
    }
    true
}

/// Go's `escape`: `%XX` (upper case) for every byte [`should_escape`] names.
fn escape(bytes: &[u8], mode: Mode) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if should_escape(b, mode) {
            if b == b' ' && mode == Mode::QueryComponent {
                out.push('+');
            } else {
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
        } else {
            out.push(char::from(b));
        }
    }
    out
}

/// Go's `validEncoded`: whether a written path or fragment needs no re-escaping.
fn valid_encoded(s: &str, mode: Mode) -> bool {
    s.bytes().all(|b| {
        matches!(
            b,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(b, mode)
    })
}

#[cfg(test)]
mod tests;
