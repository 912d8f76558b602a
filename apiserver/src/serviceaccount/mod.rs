//! Service-account tokens (feature `builtin`), as kube-apiserver issues and accepts them.
//!
//! - [`keys`]: the signing key and the verifying keys, with kube's key ids.
//! - [`claims`]: what a bound token and a legacy token say.
//! - [`token_request`]: `POST serviceaccounts/{name}/token` (the TokenRequest API), an
//!   action of the registry: a JWT signed for the service account, bound to a Pod, Secret
//!   or Node when the request names one.
//! - [`authenticator`]: the authentication method for those tokens and for legacy ones
//!   kept in Secrets: signature, issuer, audience and expiry, then a live check that the
//!   service account and the bound object still exist, so that deleting either revokes
//!   the token at once.
//! - [`legacy`]: the tokens kept in `kubernetes.io/service-account-token` Secrets, which
//!   the `service_account_tokens` controller fills in.
//! - [`discovery`]: the issuer's OpenID discovery document and key set, with which another
//!   system verifies the tokens.
//!
//! [`Tokens`] holds what the `--service-account-*` flags say. A server given none of them
//! (development) makes an ephemeral ECDSA key at start, so that `kubectl create token`
//! works out of the box; the tokens die with the process.

pub mod authenticator;
pub mod claims;
pub mod discovery;
pub mod keys;
pub mod legacy;
pub mod token_request;

use std::sync::{Arc, Weak};

use serde_json::Value;

use kapi_registry::{Registry, Target};

pub use keys::{PublicKey, SigningKey};

/// The issuer a development server names when given none.
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// What the server issues and accepts.
pub struct Tokens {
    /// `--service-account-issuer`: the first issues, every one is accepted.
    pub issuers: Vec<String>,
    /// `--api-audiences`, else the issuers: what tokens are for unless a request says.
    pub api_audiences: Vec<String>,
    /// `--service-account-signing-key-file`: without it no token is issued.
    pub signing_key: Option<SigningKey>,
    /// `--service-account-key-file`: the keys tokens are verified with.
    pub keys: Vec<PublicKey>,
    /// `--service-account-max-token-expiration` in seconds (0: no cap).
    pub max_expiration_seconds: i64,
    /// `--service-account-extend-token-expiration`.
    pub extend_expiration: bool,
    /// `--service-account-jwks-uri`: the key set's address in the discovery document
    /// (else this server's own).
    pub jwks_uri: Option<String>,
    /// `--service-account-lookup`: legacy tokens are checked against their Secret.
    pub lookup: bool,
    /// No flag set them: the key is ephemeral, and a bearer token that is not one of this
    /// issuer's is left to other methods rather than refused.
    pub development: bool,
}

impl Tokens {
    /// A development server's: an ephemeral key that signs and verifies, the default
    /// issuer.
    pub fn development() -> Tokens {
        let key = SigningKey::ephemeral();
        Tokens {
            issuers: vec![DEFAULT_ISSUER.to_owned()],
            api_audiences: vec![DEFAULT_ISSUER.to_owned()],
            keys: vec![key.public.clone()],
            signing_key: Some(key),
            max_expiration_seconds: 0,
            extend_expiration: true,
            jwks_uri: None,
            lookup: true,
            development: true,
        }
    }

    /// The issuer of new tokens.
    pub fn issuer(&self) -> &str {
        self.issuers.first().map(String::as_str).unwrap_or_default()
    }
}

/// Registers the TokenRequest action, when the scheme serves ServiceAccounts and a key
/// signs.
pub fn register(registry: &Registry, tokens: &Arc<Tokens>) {
    let served = registry
        .scheme()
        .by_resource("", "serviceaccounts")
        .is_some();
    if served && tokens.signing_key.is_some() {
        let action = token_request::Issue(Arc::clone(tokens));
        registry.set_action("", "serviceaccounts", "token", Arc::new(action));
    }
}

/// Reads the core objects a token names, as kube's token getter: the watch cache first,
/// then, for an object the cache does not hold (yet), storage.
#[derive(Clone)]
pub(crate) struct Objects {
    registry: Weak<Registry>,
}

impl Objects {
    pub(crate) fn new(registry: &Arc<Registry>) -> Objects {
        Objects {
            registry: Arc::downgrade(registry),
        }
    }

    /// The object `name` of the core kind `plural` (`None`: not found), or why it could not
    /// be read.
    pub(crate) fn get(
        &self,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, String> {
        let registry = self.registry.upgrade().ok_or("the server is stopping")?;
        let kind = (registry.scheme().by_resource("", plural))
            .ok_or_else(|| format!("{plural} are not served"))?;
        if let Some(object) = registry.cached_object(&kind, namespace, name) {
            return Ok(Some(object));
        }
        // Authentication is synchronous: the read blocks this thread, moved off the
        // runtime's workers, as a delegated token review does. A runtime of one thread
        // cannot spare it; there the cache's answer stands.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Ok(None);
        };
        if runtime.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
            return Ok(None);
        }
        let target = Target {
            kind: &kind,
            version: kind.info.storage_version().name,
            namespace,
        };
        let read =
            tokio::task::block_in_place(|| runtime.block_on(registry.get(target, name, None)));
        match read {
            Ok(object) => Ok(Some(object)),
            Err(kapi_core::error::ApiError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }
}
