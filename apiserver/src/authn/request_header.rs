//! Front-proxy authentication (`--requestheader-client-ca-file`), as kube's requestheader
//! authenticator: a request whose client certificate chains to the front-proxy CA (and,
//! with `--requestheader-allowed-names`, names one of them as its common name) is from
//! the user its headers name: the first non-empty username header (`X-Remote-User`),
//! every value of the group headers (`X-Remote-Group`), and each `X-Remote-Extra-<key>`
//! header as an extra (its key unescaped and lower-cased). This is how kube-apiserver's
//! aggregator, or any authenticating proxy, tells an extension API server who the end
//! user is.
//!
//! A request whose certificate is not the proxy's, or that names no user in its headers,
//! is left to the other methods (a client certificate of `--client-ca-file` still names
//! its own user), as kube's union of authenticators tries the next one; the headers of a
//! request without the proxy's certificate are never believed.

use std::collections::BTreeMap;

use rustls::pki_types::UnixTime;

use super::x509::{ClientCa, common_name};
use super::{Method, Outcome, PeerCertificates, Request, UserInfo};

/// The front-proxy authentication method.
pub struct RequestHeader {
    ca: ClientCa,
    allowed_names: Vec<String>,
    username_headers: Vec<String>,
    group_headers: Vec<String>,
    extra_prefixes: Vec<String>,
}

impl RequestHeader {
    /// Trusts proxies with a certificate of `ca` (one of `allowed_names` as its common
    /// name, any when empty) for the user of `username_headers`, the groups of
    /// `group_headers` and the extras of headers starting with `extra_prefixes` (header
    /// names are case-insensitive).
    pub fn new(
        ca: ClientCa,
        allowed_names: Vec<String>,
        username_headers: Vec<String>,
        group_headers: Vec<String>,
        extra_prefixes: Vec<String>,
    ) -> RequestHeader {
        let lower =
            |names: Vec<String>| names.into_iter().map(|n| n.to_ascii_lowercase()).collect();
        RequestHeader {
            ca,
            allowed_names,
            username_headers: lower(username_headers),
            group_headers: lower(group_headers),
            extra_prefixes: lower(extra_prefixes),
        }
    }
}

impl Method for RequestHeader {
    fn reads_bearer_tokens(&self) -> bool {
        false
    }

    fn authenticate(&self, request: &Request<'_>) -> Outcome {
        let Some(PeerCertificates(chain)) = request.certificates else {
            return Outcome::NotPresented;
        };
        let Some((end_entity, intermediates)) = chain.split_first() else {
            return Outcome::NotPresented;
        };
        if (self.ca.verifier())
            .verify_client_cert(end_entity, intermediates, UnixTime::now())
            .is_err()
        {
            return Outcome::NotPresented;
        }
        if !self.allowed_names.is_empty() {
            let name = common_name(end_entity).unwrap_or_default();
            if !self.allowed_names.contains(&name) {
                return Outcome::NotPresented;
            }
        }
        let headers = request.headers;
        let values = |name: &str| {
            (headers.get_all(name).iter())
                .filter_map(|v| v.to_str().ok())
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        let Some(name) = (self.username_headers.iter()).find_map(|h| values(h).into_iter().next())
        else {
            return Outcome::NotPresented;
        };
        let groups = self.group_headers.iter().flat_map(|h| values(h)).collect();
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for header in headers.keys() {
            let lower = header.as_str();
            let Some(key) =
                (self.extra_prefixes.iter()).find_map(|p| lower.strip_prefix(p.as_str()))
            else {
                continue;
            };
            let key = percent_decode(key).to_lowercase();
            extra.entry(key).or_default().extend(values(lower));
        }
        Outcome::User(UserInfo {
            name,
            uid: String::new(),
            groups,
            extra,
        })
    }
}

/// Go's `url.PathUnescape` of an extra's key (`%2F` is `/`); left as it is when it does
/// not decode.
fn percent_decode(text: &str) -> String {
    (percent_encoding::percent_decode_str(text).decode_utf8())
        .map_or_else(|_| text.to_owned(), |decoded| decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_keys_unescape_as_go_does() {
        assert_eq!(percent_decode("scopes"), "scopes");
        assert_eq!(percent_decode("example.com%2Fteam"), "example.com/team");
        assert_eq!(percent_decode("bad%ff"), "bad%ff");
    }
}
