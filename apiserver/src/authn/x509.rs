//! Client certificates (`--client-ca-file`), as kube's x509 authenticator: a certificate
//! that chains to the client CA and allows client authentication names the user by its
//! subject's common name and the groups by its organizations.
//!
//! Like kube-apiserver (`tls.RequestClientCert`), the TLS handshake asks for a certificate
//! (hinting the CA's subjects) without judging it (`RequestClientCert`): it only checks
//! that the client holds the certificate's key. The chain is verified here, per request,
//! so a certificate from another CA, or an expired one, is a 401 `Status` rather than a
//! failed handshake. The server's TLS layer hands the presented chain to requests as the
//! [`PeerCertificates`] extension.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

use super::{Method, Outcome, Request, UserInfo};

/// The certificate chain a client presented in the TLS handshake, end entity first: a
/// request extension the server's TLS acceptor sets on every request of the connection.
#[derive(Clone, Debug)]
pub struct PeerCertificates(pub Arc<Vec<CertificateDer<'static>>>);

/// The client CA (`--client-ca-file`): what verifies client certificates.
#[derive(Clone, Debug)]
pub struct ClientCa {
    verifier: Arc<dyn ClientCertVerifier>,
}

/// Why the client CA file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ClientCaError {
    path: String,
    message: String,
}

impl ClientCa {
    /// Reads the CA certificates (PEM) of `path`.
    pub fn load(path: &Path) -> Result<ClientCa, ClientCaError> {
        ClientCa::load_all(&[path])
    }

    /// Reads the CA certificates (PEM) of every file of `paths`: the handshake of a server
    /// with several client CAs (`--client-ca-file`, `--requestheader-client-ca-file`) asks
    /// for certificates of any of them.
    pub fn load_all(paths: &[&Path]) -> Result<ClientCa, ClientCaError> {
        let mut bundles = Vec::new();
        for path in paths {
            let pem = std::fs::read(path).map_err(|e| ClientCaError {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
            bundles.push((path.display().to_string(), pem));
        }
        ClientCa::from_pems(&bundles)
    }

    /// The CA certificates of PEM bundles, each named by where it came from (a file, or a
    /// ConfigMap's key) for errors.
    pub fn from_pems(bundles: &[(String, Vec<u8>)]) -> Result<ClientCa, ClientCaError> {
        let mut roots = RootCertStore::empty();
        for (source, pem) in bundles {
            let error = |message: String| ClientCaError {
                path: source.clone(),
                message,
            };
            let certificates = CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| error(e.to_string()))?;
            if certificates.is_empty() {
                return Err(error("no certificate in the file".into()));
            }
            for certificate in certificates {
                roots.add(certificate).map_err(|e| error(e.to_string()))?;
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .allow_unauthenticated()
            .build()
            .map_err(|e| ClientCaError {
                path: (bundles.iter().map(|(source, _)| source.as_str()))
                    .collect::<Vec<_>>()
                    .join(","),
                message: e.to_string(),
            })?;
        Ok(ClientCa { verifier })
    }

    /// The handshake's verifier: asks for a certificate, verifies only the key's possession.
    pub fn handshake_verifier(&self) -> Arc<dyn ClientCertVerifier> {
        Arc::new(RequestClientCert(Arc::clone(&self.verifier)))
    }

    /// What verifies a chain against this CA.
    pub(super) fn verifier(&self) -> &Arc<dyn ClientCertVerifier> {
        &self.verifier
    }

    /// The authentication method.
    pub fn authenticator(&self) -> X509 {
        X509 { ca: self.clone() }
    }
}

/// The certificate authentication method.
pub struct X509 {
    ca: ClientCa,
}

impl Method for X509 {
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
        let verified =
            (self.ca.verifier).verify_client_cert(end_entity, intermediates, UnixTime::now());
        if let Err(e) = verified {
            return Outcome::Rejected(format!("x509: {e}"));
        }
        match subject(end_entity) {
            Ok(user) => Outcome::User(user),
            Err(e) => Outcome::Rejected(format!("x509: {e}")),
        }
    }
}

/// The common name of a certificate's subject.
pub(super) fn common_name(certificate: &CertificateDer<'_>) -> Option<String> {
    let (_, parsed) = x509_parser::parse_x509_certificate(certificate.as_ref()).ok()?;
    let name = parsed.subject().iter_common_name().next()?.as_str().ok()?;
    Some(name.to_owned())
}

/// The user a certificate names: CN the name, each O a group (kube's `CommonNameUserConversion`).
fn subject(certificate: &CertificateDer<'_>) -> Result<UserInfo, String> {
    let (_, parsed) = x509_parser::parse_x509_certificate(certificate.as_ref())
        .map_err(|e| format!("cannot parse the certificate: {e}"))?;
    let subject = parsed.subject();
    let name = (subject.iter_common_name().next())
        .and_then(|cn| cn.as_str().ok())
        .unwrap_or_default()
        .to_owned();
    if name.is_empty() {
        return Err("the certificate's subject has no common name".into());
    }
    let groups = (subject.iter_organization())
        .filter_map(|o| o.as_str().ok())
        .map(str::to_owned)
        .collect();
    Ok(UserInfo {
        name,
        groups,
        ..UserInfo::default()
    })
}

/// kube-apiserver's `tls.RequestClientCert`: ask for a certificate, accept any, leave the
/// judgment to the authenticator; the handshake signature is still checked, so a client
/// cannot present a certificate whose key it does not hold.
#[derive(Debug)]
struct RequestClientCert(Arc<dyn ClientCertVerifier>);

impl ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.0.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
