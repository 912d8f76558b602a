//! Secure serving (kube's `SecureServingOptions`): where the server listens, its TLS
//! certificate, and how long a client may take to send a request's headers.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::authn::x509::ClientCa;
use anyhow::{Context, Result, bail};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Where and how the server serves.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Secure serving")]
pub struct ServingOptions {
    /// Address to serve on (`127.0.0.1:0` picks a free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// Serve HTTPS with this certificate chain (PEM); needs --tls-private-key-file.
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,

    /// The private key (PEM) of --tls-cert-file.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,

    /// How long a client may take to send a request's headers before its connection is
    /// closed (kube-apiserver's serving uses 32s, without a flag; a body is bounded by
    /// `--request-timeout`), so that slow clients cannot hold connections open.
    #[arg(long, value_name = "DURATION", default_value = "32s", value_parser = humantime::parse_duration)]
    pub read_header_timeout: Duration,
}

impl ServingOptions {
    /// The addresses `--listen` names (none when it names none).
    pub fn addresses(&self) -> Vec<SocketAddr> {
        (self.listen.to_socket_addrs())
            .map(Iterator::collect)
            .unwrap_or_default()
    }

    /// The checks that need no I/O.
    pub fn validate(&self) -> Vec<String> {
        match self.listen.to_socket_addrs() {
            Ok(_) => Vec::new(),
            Err(e) => vec![format!("--listen {:?}: not an address: {e}", self.listen)],
        }
    }

    /// `https` with a certificate, else `http`.
    pub fn scheme(&self) -> &'static str {
        match self.tls_cert_file {
            Some(_) => "https",
            None => "http",
        }
    }

    /// The listener.
    pub fn bind(&self) -> Result<TcpListener> {
        let listen = &self.listen;
        let addrs: Vec<SocketAddr> = (listen.to_socket_addrs())
            .with_context(|| format!("--listen {listen:?}: not an address"))?
            .collect();
        TcpListener::bind(&addrs[..]).with_context(|| format!("listening on {listen}"))
    }

    /// The TLS configuration: the serving certificate, and a request for client
    /// certificates when a client CA is given.
    pub fn tls(&self, client_ca: Option<&ClientCa>) -> Result<Option<Arc<rustls::ServerConfig>>> {
        let (Some(cert), Some(key)) = (&self.tls_cert_file, &self.tls_private_key_file) else {
            return Ok(None);
        };
        // Several providers may be compiled in; use ring. An error only means one is set.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (chain, key) = load_pair(cert, key).with_context(|| {
            format!(
                "loading the TLS certificate {} and key {}",
                cert.display(),
                key.display()
            )
        })?;
        let builder = rustls::ServerConfig::builder();
        let builder = match client_ca {
            Some(ca) => builder.with_client_cert_verifier(ca.handshake_verifier()),
            None => builder.with_no_client_auth(),
        };
        let mut config = builder
            .with_single_cert(chain, key)
            .context("the TLS certificate and key do not match")?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Some(Arc::new(config)))
    }
}

fn load_pair(
    cert: &Path,
    key: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let chain = CertificateDer::pem_file_iter(cert)?.collect::<Result<Vec<_>, _>>()?;
    if chain.is_empty() {
        bail!("no certificate in {}", cert.display());
    }
    let key = PrivateKeyDer::from_pem_file(key)?;
    Ok((chain, key))
}
