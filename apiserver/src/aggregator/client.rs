//! The HTTPS client to one APIService's server: its certificate checked against the
//! APIService's `caBundle` (the web PKI's roots when it has none) or, with
//! `insecureSkipTLSVerify`, not at all; the proxy's own client certificate
//! (`--proxy-client-cert-file`) presented when configured, which is how the server knows
//! the front-proxy headers come from the aggregator. Connections are pooled (HTTP/1.1,
//! upgrades included), with `TCP_NODELAY` (proxied watch events and upgraded streams are
//! small writes) and a bounded connect.
//!
//! [`Remote::fetch`] is the aggregator's own requests (availability checks, documents).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

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

/// How long a connection to a server may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A remote APIService's server.
pub struct Remote {
    /// `https://host:port` (and a path prefix, for a `url`), without a trailing slash.
    pub base: String,
    /// Checks the server's certificate as the APIService says.
    pub(crate) client: HttpsClient,
}

/// Who the aggregator's own requests are from, in the front-proxy headers.
#[derive(Clone, Copy)]
pub enum Caller {
    /// The availability check: kube's `system:kube-aggregator` in `system:masters`.
    Checker,
    /// A document download: kube's `system:aggregator`, in no group.
    Downloader,
}

/// Why a fetch got no answer.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The path is not a path of the server (a document's index may name anything).
    #[error("{0:?} is not a path of the server")]
    NotAPath(String),
    /// The request failed (connection, TLS, the answer cut short).
    #[error("Get {url:?}: {reason}")]
    Failed {
        /// What was asked.
        url: String,
        /// Why it failed, with its causes.
        reason: String,
    },
    /// No answer in time.
    #[error(
        "Get {0:?}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    )]
    Timeout(String),
}

impl Remote {
    /// The server at `base`, trusted as `trust`, presented `identity`.
    pub(crate) fn new(
        base: String,
        trust: Trust<'_>,
        identity: Option<&ProxyIdentity>,
    ) -> Result<Remote, String> {
        Ok(Remote {
            base,
            client: client(trust, identity)?,
        })
    }

    /// GETs `path` (which must be a path, `/...`) as `caller`, accepting `accept`, within
    /// `timeout`: the status and the body.
    pub async fn fetch(
        &self,
        path: &str,
        accept: &str,
        caller: Caller,
        timeout: Duration,
    ) -> Result<(u16, bytes::Bytes), FetchError> {
        use http_body_util::BodyExt;
        if !path.starts_with('/') || path.starts_with("//") {
            return Err(FetchError::NotAPath(path.to_owned()));
        }
        let url = format!("{}{path}", self.base);
        let failed = |reason: String| FetchError::Failed {
            url: url.clone(),
            reason,
        };
        let (user, group) = match caller {
            Caller::Checker => ("system:kube-aggregator", Some("system:masters")),
            Caller::Downloader => ("system:aggregator", None),
        };
        let mut request = axum::http::Request::get(&url)
            .header("Accept", accept)
            .header("X-Remote-User", user);
        if let Some(group) = group {
            request = request.header("X-Remote-Group", group);
        }
        let request =
            (request.body(axum::body::Body::empty())).map_err(|e| failed(e.to_string()))?;
        let call = async {
            let response = (self.client.request(request).await)
                .map_err(|e| failed(super::proxy::error_text(&e)))?;
            let status = response.status().as_u16();
            let body = (response.into_body().collect().await)
                .map_err(|e| failed(e.to_string()))?
                .to_bytes();
            Ok((status, body))
        };
        match tokio::time::timeout(timeout, call).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::Timeout(url.clone())),
        }
    }
}

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
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    http.enforce_http(false);
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_only()
        .enable_http1()
        .wrap_connector(http);
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
