//! The server's calls out: one webhook client for admission and conversion webhooks (a
//! JSON review POSTed over HTTPS to a URL, trusting the webhook's `caBundle`, within a
//! timeout), with typed errors each caller words as kube words its own, and the HTTPS
//! agents the server's other clients (OIDC discovery, a kubeconfig's cluster) build on
//! ([`tls`]).
//!
//! The HTTP client is ureq's, blocking: callers run [`Webhook::post`] off the async
//! workers (tokio's blocking pool, or `block_in_place`).

pub mod tls;

use std::time::Duration;

use serde_json::Value;

pub use tls::NoCertificate;

/// One webhook: where it is, and the agent that reaches it.
#[derive(Clone)]
pub struct Webhook {
    agent: ureq::Agent,
    url: String,
}

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No answer: the connection, TLS, or the timeout.
    #[error("{0}")]
    Transport(String),
    /// An answer whose status is not a success.
    #[error("the server responded with the status code {status}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The answer's body.
        body: String,
    },
    /// A successful answer whose body is not JSON.
    #[error("the response is not JSON: {0}")]
    NotJson(String),
}

impl Webhook {
    /// The webhook at `url`, trusting the CAs of `ca_bundle` (the web PKI without one),
    /// each call taking at most `timeout`.
    pub fn new(
        url: impl Into<String>,
        ca_bundle: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Webhook, NoCertificate> {
        Ok(Webhook {
            agent: tls::trusting(ca_bundle, timeout)?,
            url: url.into(),
        })
    }

    /// The URL it posts to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// POSTs `body` as JSON and reads the answer's JSON. Blocking.
    pub fn post(&self, body: &Value) -> Result<Value, CallError> {
        let transport = |e: ureq::Error| CallError::Transport(e.to_string());
        let mut response = (self.agent.post(&self.url))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .send_json(body)
            .map_err(transport)?;
        let status = response.status();
        let text = response.body_mut().read_to_string().map_err(transport)?;
        if !status.is_success() {
            return Err(CallError::Status {
                status: status.as_u16(),
                body: text,
            });
        }
        serde_json::from_str(&text).map_err(|e| CallError::NotJson(e.to_string()))
    }
}
