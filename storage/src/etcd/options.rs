//! How the etcd backend reaches its cluster: endpoints, deadlines, TLS, and the two
//! behaviours a deployment may set (progress requests, batched creates).

use std::path::PathBuf;
use std::time::Duration;

use crate::{Error, Result};

/// How to reach the cluster.
#[derive(Clone, Debug)]
pub struct EtcdOptions {
    /// Client URLs of the members (`http://127.0.0.1:2379`, `https://...` with TLS).
    pub endpoints: Vec<String>,
    /// TLS to etcd, as kube-apiserver's `--etcd-cafile`, `--etcd-certfile`,
    /// `--etcd-keyfile`.
    pub tls: Option<EtcdTls>,
    /// The deadline of each request (retries included); past it the request fails with
    /// [`Error::Timeout`].
    pub request_timeout: Duration,
    /// The deadline of establishing one connection to a member.
    pub dial_timeout: Duration,
    /// The deadline of the health check (kube-apiserver's `--etcd-healthcheck-timeout`).
    pub health_timeout: Duration,
    /// Whether watches are asked for progress ([`Storage::request_progress`]). `None`, the
    /// default: once every endpoint reports an etcd version that answers in order
    /// (v3.4.31+, v3.5.13+). `Some(true)` trusts the cluster without asking, which is
    /// safe only while no write races a request (tests of older members).
    pub progress_requests: Option<bool>,
    /// Whether creates under way together are committed in one transaction (`batch`), the
    /// default. Off, every create is a transaction of its own, at the end of its etcd
    /// revision (`revisions`).
    pub batch_creates: bool,
}

impl EtcdOptions {
    /// The given endpoints with the default deadlines: 5 s per request, 2 s to dial a
    /// member, 2 s for a health check.
    pub fn new(endpoints: impl IntoIterator<Item = impl Into<String>>) -> EtcdOptions {
        EtcdOptions {
            endpoints: endpoints.into_iter().map(Into::into).collect(),
            tls: None,
            request_timeout: Duration::from_secs(5),
            dial_timeout: Duration::from_secs(2),
            health_timeout: Duration::from_secs(2),
            progress_requests: None,
            batch_creates: true,
        }
    }
}

/// PEM files for TLS to etcd.
#[derive(Clone, Debug, Default)]
pub struct EtcdTls {
    /// The CA that signed the members' certificates (`--etcd-cafile`); the system's roots
    /// are not used.
    pub ca_file: Option<PathBuf>,
    /// The client certificate (`--etcd-certfile`), for members started with
    /// `--client-cert-auth`.
    pub cert_file: Option<PathBuf>,
    /// Its private key (`--etcd-keyfile`).
    pub key_file: Option<PathBuf>,
}

/// The client's TLS settings from the PEM files of `tls`.
pub(super) fn tls_options(tls: &EtcdTls) -> Result<etcd_client::TlsOptions> {
    let read = |path: &PathBuf, what: &str| {
        std::fs::read(path).map_err(|e| {
            Error::InvalidArgument(format!("reading the etcd {what} {}: {e}", path.display()))
        })
    };
    let mut options = etcd_client::TlsOptions::new();
    if let Some(ca) = &tls.ca_file {
        options = options.ca_certificate(etcd_client::Certificate::from_pem(read(ca, "CA")?));
    }
    match (&tls.cert_file, &tls.key_file) {
        (Some(cert), Some(key)) => {
            let identity = etcd_client::Identity::from_pem(
                read(cert, "client certificate")?,
                read(key, "client key")?,
            );
            options = options.identity(identity);
        }
        (None, None) => {}
        _ => {
            return Err(Error::InvalidArgument(
                "the etcd client certificate and key go together".into(),
            ));
        }
    }
    Ok(options)
}
