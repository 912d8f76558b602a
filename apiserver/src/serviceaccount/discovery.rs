//! The service-account issuer's discovery documents (kube's `openidmetadata`), with which
//! another system verifies this server's tokens as it would any OpenID provider's ID
//! tokens:
//!
//! - `GET /.well-known/openid-configuration`: the issuer (the first
//!   `--service-account-issuer`), where its keys are (`--service-account-jwks-uri`, else
//!   `https://<this server's address>/openid/v1/jwks`), and the algorithms they sign with;
//! - `GET /openid/v1/jwks`: the keys of `--service-account-key-file` as a JSON Web Key Set.
//!
//! Both are compact JSON, cacheable for an hour, and behind authentication and
//! authorization as every path is (the bootstrap policy lets service accounts read them:
//! `system:service-account-issuer-discovery`). kube serves them only when the issuer is an
//! https URL without query or fragment and some key verifies; so does kapi.

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::json;

use super::Tokens;

/// The discovery document's path.
pub const CONFIGURATION: &str = "/.well-known/openid-configuration";
/// The key set's path.
pub const JWKS: &str = "/openid/v1/jwks";

/// kube's cache lifetime of both documents (static keys).
const CACHE: &str = "public, max-age=3600";

/// The documents of one issuer.
pub struct Discovery {
    tokens: Arc<Tokens>,
    /// `https://host:port`, once the server listens (the default key set address).
    address: OnceLock<String>,
}

impl Discovery {
    /// The documents of `tokens`' issuer, if kube would serve them (else why not, for the
    /// log).
    pub fn new(tokens: Arc<Tokens>) -> Result<Arc<Discovery>, String> {
        let issuer = tokens.issuer();
        if !issuer.starts_with("https://") {
            return Err(format!("issuer URL must use https scheme, got: {issuer}"));
        }
        if issuer.contains('?') {
            return Err(format!("issuer URL may not include a query, got: {issuer}"));
        }
        if issuer.contains('#') {
            return Err(format!(
                "issuer URL may not include a fragment, got: {issuer}"
            ));
        }
        if tokens.keys.is_empty() {
            return Err("no keys provided for validating keyset".into());
        }
        Ok(Arc::new(Discovery {
            tokens,
            address: OnceLock::new(),
        }))
    }

    /// The server's address (`host:port`), once it listens.
    pub fn listening_at(&self, address: std::net::SocketAddr) {
        let _ = self.address.set(format!("https://{address}"));
    }

    /// The discovery document.
    pub fn configuration(&self) -> serde_json::Value {
        let jwks_uri = match &self.tokens.jwks_uri {
            Some(uri) => uri.clone(),
            None => format!(
                "{}{JWKS}",
                self.address
                    .get()
                    .map(String::as_str)
                    .unwrap_or("https://localhost")
            ),
        };
        let mut algorithms: Vec<String> = (self.tokens.keys.iter())
            .map(|key| format!("{:?}", key.algorithm))
            .collect();
        algorithms.sort();
        algorithms.dedup();
        json!({
            "issuer": self.tokens.issuer(),
            "jwks_uri": jwks_uri,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": algorithms,
        })
    }

    /// The key set.
    pub fn jwks(&self) -> serde_json::Value {
        let keys: Vec<_> = self
            .tokens
            .keys
            .iter()
            .map(|key| key.jwk().clone())
            .collect();
        json!({ "keys": keys })
    }

    /// The two routes.
    pub fn router(self: &Arc<Discovery>) -> Router {
        let configuration = Arc::clone(self);
        let jwks = Arc::clone(self);
        Router::new()
            .route(
                CONFIGURATION,
                get(move || async move {
                    let body = configuration.configuration().to_string();
                    (
                        [(CONTENT_TYPE, "application/json"), (CACHE_CONTROL, CACHE)],
                        body,
                    )
                        .into_response()
                }),
            )
            .route(
                JWKS,
                get(move || async move {
                    let body = jwks.jwks().to_string();
                    (
                        [
                            (CONTENT_TYPE, "application/jwk-set+json"),
                            (CACHE_CONTROL, CACHE),
                        ],
                        body,
                    )
                        .into_response()
                }),
            )
    }
}
