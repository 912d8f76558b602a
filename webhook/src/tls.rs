//! The server's own HTTPS agents (webhooks, the OIDC issuer, a core cluster named by a
//! kubeconfig): ureq agents trusting the CAs a PEM bundle holds, or the web PKI without
//! one, each call bounded by a timeout.

use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

/// The certificates of a PEM bundle (other items skipped).
pub fn certificates(pem: &[u8]) -> Vec<Certificate<'static>> {
    ureq::tls::parse_pem(pem)
        .filter_map(|item| match item {
            Ok(PemItem::Certificate(certificate)) => Some(certificate),
            _ => None,
        })
        .collect()
}

/// The roots trusting the CAs of `bundle`, or the web PKI without one; `None` when the
/// bundle holds no certificate.
pub fn roots(bundle: Option<&[u8]>) -> Option<RootCerts> {
    match bundle {
        Some(pem) => {
            let certificates = certificates(pem);
            (!certificates.is_empty()).then(|| RootCerts::Specific(Arc::new(certificates)))
        }
        None => Some(RootCerts::WebPki),
    }
}

/// An agent with `tls`, each call taking at most `timeout`, answering every status (the
/// caller reads errors from the body).
pub fn agent(tls: TlsConfig, timeout: Duration) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .tls_config(tls)
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build();
    ureq::Agent::new_with_config(config)
}

/// An agent trusting `bundle` (a webhook's `caBundle`), as [`agent`]; an error when the
/// bundle holds no certificate.
pub fn trusting(bundle: Option<&[u8]>, timeout: Duration) -> Result<ureq::Agent, NoCertificate> {
    let roots = roots(bundle).ok_or(NoCertificate)?;
    Ok(agent(
        TlsConfig::builder().root_certs(roots).build(),
        timeout,
    ))
}

/// A `caBundle` that holds no certificate.
#[derive(Clone, Copy, Debug, thiserror::Error)]
#[error("clientConfig.caBundle holds no certificate")]
pub struct NoCertificate;
