//! The HTTPS client to one APIService's server: its certificate checked against the
//! APIService's `caBundle` (the web PKI's roots when it has none) or, with
//! `insecureSkipTLSVerify`, not at all; the proxy's own client certificate
//! (`--proxy-client-cert-file`) presented when configured, which is how the server knows
//! the front-proxy headers come from the aggregator. Connections are pooled (HTTP/1.1,
//! upgrades included).

use std::path::Path;
use std::sync::Arc;

use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// A pooled HTTPS client.
pub(crate) type HttpsClient = Client<HttpsConnector<HttpConnector>, axum::body::Body>;

/// The certificate and key the aggregator presents to the servers it proxies to
/// (`--proxy-client-cert-file`, `--proxy-client-key-file`).
pub struct ProxyIdentity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl ProxyIdentity {
    /// Reads a PEM certificate chain and its PEM private key.
    pub fn load(certificate: &Path, key: &Path) -> Result<ProxyIdentity, String> {
        let chain = CertificateDer::pem_file_iter(certificate)
            .and_then(|certificates| certificates.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("{}: {e}", certificate.display()))?;
        if chain.is_empty() {
            return Err(format!("{}: no certificate", certificate.display()));
        }
        let key =
            PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{}: {e}", key.display()))?;
        Ok(ProxyIdentity { chain, key })
    }
}

/// How a server's certificate is checked.
pub(crate) enum Trust<'a> {
    /// Signed by one of these PEM certificates (or the web PKI's roots when `None`).
    Bundle(Option<&'a [u8]>),
    /// Not checked (`insecureSkipTLSVerify`, and kube's availability checks).
    Anything,
}

/// A client trusting `trust`, presenting `identity` when given.
pub(crate) fn client(
    trust: Trust<'_>,
    identity: Option<&ProxyIdentity>,
) -> Result<HttpsClient, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = match trust {
        Trust::Bundle(Some(pem)) => {
            let mut roots = RootCertStore::empty();
            for certificate in CertificateDer::pem_slice_iter(pem).flatten() {
                roots
                    .add(certificate)
                    .map_err(|e| format!("caBundle: {e}"))?;
            }
            if roots.is_empty() {
                return Err("caBundle holds no certificate".into());
            }
            builder.with_root_certificates(roots)
        }
        Trust::Bundle(None) => builder.with_root_certificates(RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        }),
        Trust::Anything => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoCheck(provider))),
    };
    let config = match identity {
        Some(identity) => builder
            .with_client_auth_cert(identity.chain.clone(), identity.key.clone_key())
            .map_err(|e| format!("the proxy client certificate: {e}"))?,
        None => builder.with_no_client_auth(),
    };
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_only()
        .enable_http1()
        .build();
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}

/// Accepts any certificate, but still checks that the handshake is signed by its key.
#[derive(Debug)]
struct NoCheck(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
