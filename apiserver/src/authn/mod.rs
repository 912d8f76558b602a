//! Authentication: who sent a request, as kube-apiserver's authenticators decide it.
//!
//! One module per method: [`request_header`] (an authenticating front proxy, such as
//! kube-apiserver's aggregator, naming the user in headers), [`x509`] (client certificates
//! against `--client-ca-file`: CN is the user, O the groups), [`token_file`] (static bearer
//! tokens, kube's CSV), [`oidc`] (OpenID Connect ID tokens), [`token_review`] (tokens the
//! core cluster of an extension API server knows, asked in TokenReviews), each a
//! [`Method`]. [`Authenticator`] composes them as kube's union authenticator does: the
//! first method that recognises the request names the user; a credential that some method
//! owns but rejects (a wrong token, a certificate from another CA, an expired one) fails
//! the request with 401, even when anonymous requests are allowed (kube's
//! `NewFailOnError`); a request that presents nothing is `system:anonymous` in
//! `system:unauthenticated` when `--anonymous-auth` allows it, else 401. Every
//! authenticated user is also in `system:authenticated`.
//!
//! Audiences (kube's `authenticator.Audiences`): a request is for the server's API
//! audiences (`--api-audiences`); a TokenReview may ask for others. A method that knows
//! what its tokens are for (service-account tokens) answers for the audiences its token
//! shares with those asked for ([`Outcome::UserFor`]); the others answer for the asked
//! audiences that are API audiences, and for none when they share none: such a token is
//! then not authenticated, as kube's audience-agnostic authenticators are not.
//!
//! Credentials never reach a log: rejections carry a reason for the log that names the
//! method and what was wrong, never the token.

pub mod oidc;
pub mod request_header;
#[cfg(feature = "rbac")]
pub mod reviews;
pub mod token_file;
pub mod token_review;
pub mod x509;

use axum::http::HeaderMap;

pub use x509::PeerCertificates;

pub use kapi_core::user::{ANONYMOUS, AUTHENTICATED, MASTERS, UNAUTHENTICATED, UserInfo};

/// What one method concluded about a request.
#[derive(Debug)]
pub enum Outcome {
    /// The request carries this method's credential, and it names this user (for the
    /// audiences asked for that are API audiences).
    User(UserInfo),
    /// The request carries this method's credential, and it names this user for these of
    /// the audiences asked for.
    UserFor(UserInfo, Vec<String>),
    /// The request carries no credential of this method.
    NotPresented,
    /// The request carries a credential of this method that is not valid; the reason is
    /// for the log.
    Rejected(String),
}

/// What a request presents, for the methods to read.
pub struct Request<'a> {
    /// Its headers (`Authorization: Bearer ...`).
    pub headers: &'a HeaderMap,
    /// The certificates the client presented in the TLS handshake, if any.
    pub certificates: Option<&'a PeerCertificates>,
    /// The audiences asked for (a TokenReview's); `None`: the API audiences.
    pub audiences: Option<&'a [String]>,
}

impl Request<'_> {
    /// The bearer token of `Authorization: Bearer <token>`, when there is one (kube's
    /// `bearertoken` authenticator: the scheme case-insensitive, the token non-empty).
    pub fn bearer_token(&self) -> Option<&str> {
        let header = self.headers.get(axum::http::header::AUTHORIZATION)?;
        let header = header.to_str().ok()?.trim();
        let (scheme, token) = header.split_once(' ')?;
        let token = token.trim();
        (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
    }
}

/// One authentication method.
pub trait Method: Send + Sync {
    /// What the method concludes about `request`.
    fn authenticate(&self, request: &Request<'_>) -> Outcome;

    /// Whether the method reads `Authorization: Bearer` tokens. kube puts its
    /// `bearertoken` authenticator in the chain only when some token method is configured:
    /// with none, a token is not a credential the server looks at. Methods that read other
    /// credentials (certificates, a front proxy's headers) say `false`; a method that does
    /// not say is taken to read tokens, so an unknown token is never let through as
    /// anonymous by mistake.
    fn reads_bearer_tokens(&self) -> bool {
        true
    }
}

/// The methods in order, and what to do with a request none of them recognises.
#[derive(Default)]
pub struct Authenticator {
    methods: Vec<Box<dyn Method>>,
    anonymous: bool,
    api_audiences: Vec<String>,
}

/// Who a token names, for which audiences.
#[derive(Clone, Debug, PartialEq)]
pub struct Authenticated {
    /// The user.
    pub user: UserInfo,
    /// The audiences asked for that the token is good for.
    pub audiences: Vec<String>,
}

/// Why a request is not authenticated (401), for the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthnError {
    /// A presented credential is invalid.
    #[error("{0}")]
    Rejected(String),
    /// Nothing was presented and anonymous requests are refused.
    #[error("no credentials presented and anonymous requests are disabled")]
    NoCredentials,
}

impl Authenticator {
    /// No methods; anonymous requests refused until [`anonymous`](Self::anonymous).
    pub fn new() -> Authenticator {
        Authenticator::default()
    }

    /// Adds a method, tried after those added before.
    #[must_use]
    pub fn with(mut self, method: impl Method + 'static) -> Authenticator {
        self.methods.push(Box::new(method));
        self
    }

    /// Adds a boxed method, tried after those added before.
    #[must_use]
    pub fn with_boxed(mut self, method: Box<dyn Method>) -> Authenticator {
        self.methods.push(method);
        self
    }

    /// Whether requests that present no credential are `system:anonymous`
    /// (`--anonymous-auth`).
    #[must_use]
    pub fn anonymous(mut self, allowed: bool) -> Authenticator {
        self.anonymous = allowed;
        self
    }

    /// The server's API audiences (`--api-audiences`, else the service-account issuers):
    /// what requests are for.
    #[must_use]
    pub fn api_audiences(mut self, audiences: Vec<String>) -> Authenticator {
        self.api_audiences = audiences;
        self
    }

    /// Whether any method is configured.
    pub fn has_methods(&self) -> bool {
        !self.methods.is_empty()
    }

    /// The user of a bearer token for `audiences` (none: the API audiences), by the
    /// methods alone (no anonymous fallback): `None` when no method knows it, the reasons
    /// when one rejects it. For `TokenReview`.
    pub fn authenticate_token(
        &self,
        token: &str,
        audiences: &[String],
    ) -> Result<Option<Authenticated>, String> {
        let mut headers = HeaderMap::new();
        let Ok(value) = format!("Bearer {token}").parse() else {
            return Ok(None);
        };
        headers.insert(axum::http::header::AUTHORIZATION, value);
        self.union(&Request {
            headers: &headers,
            certificates: None,
            audiences: (!audiences.is_empty()).then_some(audiences),
        })
    }

    /// kube's union: the first method's user (also in `system:authenticated`), else the
    /// rejections, else nothing.
    fn union(&self, request: &Request<'_>) -> Result<Option<Authenticated>, String> {
        let mut rejections = Vec::new();
        let asked = request.audiences.unwrap_or(&self.api_audiences);
        for method in &self.methods {
            let (mut user, audiences) = match method.authenticate(request) {
                Outcome::UserFor(user, audiences) => (user, audiences),
                Outcome::User(user) => {
                    // kube's audience-agnostic authenticators: good for the asked
                    // audiences that are API audiences, and for nothing else.
                    let shared: Vec<String> = (asked.iter())
                        .filter(|a| self.api_audiences.contains(a))
                        .cloned()
                        .collect();
                    if shared.is_empty() && !self.api_audiences.is_empty() {
                        continue;
                    }
                    (user, shared)
                }
                Outcome::NotPresented => continue,
                Outcome::Rejected(reason) => {
                    rejections.push(reason);
                    continue;
                }
            };
            if !user.in_group(AUTHENTICATED) {
                user.groups.push(AUTHENTICATED.to_owned());
            }
            return Ok(Some(Authenticated { user, audiences }));
        }
        if rejections.is_empty() {
            Ok(None)
        } else {
            Err(rejections.join("; "))
        }
    }

    /// Who sent `request`.
    pub fn authenticate(&self, request: &Request<'_>) -> Result<UserInfo, AuthnError> {
        if let Some(authenticated) = self.union(request).map_err(AuthnError::Rejected)? {
            return Ok(authenticated.user);
        }
        // A bearer token no token method owns is still a credential that failed (kube's
        // bearertoken authenticator answers `invalid bearer token`); with no token method
        // (a development server, or certificates only) the header is not looked at, and
        // the request is anonymous if anything, as kube's.
        if request.bearer_token().is_some() && self.methods.iter().any(|m| m.reads_bearer_tokens())
        {
            return Err(AuthnError::Rejected("invalid bearer token".to_owned()));
        }
        if self.anonymous {
            Ok(UserInfo::anonymous())
        } else {
            Err(AuthnError::NoCredentials)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(&'static str, Option<&'static str>);

    impl Method for Fixed {
        fn authenticate(&self, request: &Request<'_>) -> Outcome {
            match request.bearer_token() {
                Some(token) if token == self.0 => Outcome::User(UserInfo {
                    name: self.1.unwrap_or("someone").to_owned(),
                    ..UserInfo::default()
                }),
                Some(_) if self.1.is_none() => Outcome::Rejected("expired".into()),
                _ => Outcome::NotPresented,
            }
        }

        fn reads_bearer_tokens(&self) -> bool {
            true
        }
    }

    /// A method that reads no tokens (as client certificates).
    struct NoTokens;

    impl Method for NoTokens {
        fn authenticate(&self, _: &Request<'_>) -> Outcome {
            Outcome::NotPresented
        }

        fn reads_bearer_tokens(&self) -> bool {
            false
        }
    }

    fn with_token(token: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(token) = token {
            let value = format!("Bearer {token}").parse().unwrap();
            headers.insert(axum::http::header::AUTHORIZATION, value);
        }
        headers
    }

    fn check(authn: &Authenticator, token: Option<&str>) -> Result<UserInfo, AuthnError> {
        let headers = with_token(token);
        authn.authenticate(&Request {
            headers: &headers,
            certificates: None,
            audiences: None,
        })
    }

    #[test]
    fn union_names_the_first_user_and_fails_on_any_rejection() {
        let authn = Authenticator::new()
            .with(Fixed("a", Some("alice")))
            .with(Fixed("b", Some("bob")))
            .anonymous(true);
        let bob = check(&authn, Some("b")).unwrap();
        assert_eq!(bob.name, "bob");
        assert_eq!(bob.groups, [AUTHENTICATED]);
        assert_eq!(
            check(&authn, Some("c")),
            Err(AuthnError::Rejected("invalid bearer token".into()))
        );
        assert_eq!(check(&authn, None), Ok(UserInfo::anonymous()));

        let strict = Authenticator::new()
            .with(Fixed("x", None))
            .with(Fixed("a", Some("alice")));
        // A method's rejection fails the request only when no other method accepts it.
        assert_eq!(check(&strict, Some("a")).unwrap().name, "alice");
        assert_eq!(
            check(&strict, Some("z")),
            Err(AuthnError::Rejected("expired".into()))
        );
        assert_eq!(check(&strict, None), Err(AuthnError::NoCredentials));
    }

    /// A method that knows its tokens' audiences.
    struct For(&'static [&'static str]);

    impl Method for For {
        fn authenticate(&self, request: &Request<'_>) -> Outcome {
            let asked = request.audiences.unwrap_or_default();
            let shared = (self.0.iter())
                .filter(|a| asked.iter().any(|b| b == *a))
                .map(|a| (*a).to_owned())
                .collect();
            match request.bearer_token() {
                Some("scoped") => Outcome::UserFor(UserInfo::default(), shared),
                _ => Outcome::NotPresented,
            }
        }
    }

    #[test]
    fn tokens_are_good_for_the_audiences_they_share_with_those_asked() {
        let api = vec!["api".to_owned()];
        let authn = Authenticator::new()
            .with(Fixed("plain", Some("alice")))
            .with(For(&["vault", "api"]))
            .api_audiences(api.clone());
        let vault = ["vault".to_owned()];
        let scoped = authn.authenticate_token("scoped", &vault).unwrap().unwrap();
        assert_eq!(scoped.audiences, vault);
        // A method that does not know: good for the asked API audiences only.
        let plain = authn.authenticate_token("plain", &api).unwrap().unwrap();
        assert_eq!((plain.user.name.as_str(), plain.audiences), ("alice", api));
        assert_eq!(authn.authenticate_token("plain", &vault), Ok(None));
    }

    #[test]
    fn tokens_are_ignored_without_a_token_method() {
        // kube's development server: anonymous only, any credential ignored.
        let none = Authenticator::new().anonymous(true);
        assert_eq!(check(&none, Some("anything")), Ok(UserInfo::anonymous()));
        let certificates = Authenticator::new().with(NoTokens).anonymous(true);
        assert_eq!(
            check(&certificates, Some("anything")),
            Ok(UserInfo::anonymous())
        );
        let strict = Authenticator::new().with(NoTokens);
        assert_eq!(
            check(&strict, Some("anything")),
            Err(AuthnError::NoCredentials)
        );
    }

    #[test]
    fn bearer_tokens_are_read_as_kube_reads_them() {
        for (header, token) in [
            ("Bearer abc", Some("abc")),
            ("bearer  abc ", Some("abc")),
            ("Basic abc", None),
            ("Bearer ", None),
            ("Bearer", None),
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(axum::http::header::AUTHORIZATION, header.parse().unwrap());
            let request = Request {
                headers: &headers,
                certificates: None,
                audiences: None,
            };
            assert_eq!(request.bearer_token(), token, "{header:?}");
        }
    }
}
