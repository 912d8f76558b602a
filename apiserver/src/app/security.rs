//! The flags of the handler chain, as kube-apiserver's: TLS with an optional client CA
//! (`--client-ca-file`), an authenticating front proxy (`--requestheader-*`), token files (`--token-auth-file`), `--anonymous-auth` and
//! `--authorization-mode`, audit, the in-flight limits, turned into the runtime's
//! [`Filters`] and TLS configuration, with the start-up checks that keep an unprotected
//! server off the network.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::audit::{AuditLog, Auditor, LogOptions, Policy};
use crate::authn::Authenticator;
use crate::authn::oidc::{Oidc, OidcOptions};
use crate::authn::token_file::TokenFile;
use crate::authn::token_review::TokenReviewer;
use crate::authn::x509::ClientCa;
use crate::authz::delegated::SubjectAccessReviewer;
use crate::authz::{AlwaysAllow, AlwaysAllowPaths, AlwaysDeny, Mode};
use crate::endpoints::Filters;
use crate::filters::max_inflight::Limits;
use crate::kubeconfig::Remote;
use anyhow::{Context, Result, bail};
use kapi_registry::Registry;
use rustls::pki_types::pem::PemObject;

use super::client_trust::ClientTrust;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The security flags.
#[derive(Debug, clap::Args)]
pub struct SecurityFlags {
    /// Serve HTTPS with this certificate chain (PEM); needs --tls-private-key-file.
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,

    /// The private key (PEM) of --tls-cert-file.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,

    /// Authenticate clients presenting a certificate signed by one of these CAs (PEM): the
    /// certificate's common name is the user, its organizations the groups. Needs TLS.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub client_ca_file: Option<PathBuf>,

    /// Trust an authenticating front proxy (kube-apiserver's aggregator) presenting a
    /// certificate signed by one of these CAs (PEM) for the user its headers name. Needs
    /// TLS.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub requestheader_client_ca_file: Option<PathBuf>,

    /// The common names the front proxy's certificate may have (any when empty).
    #[arg(long, value_name = "NAME[,NAME...]", value_delimiter = ',')]
    pub requestheader_allowed_names: Vec<String>,

    /// The headers naming the user, the first non-empty one wins.
    #[arg(
        long,
        value_name = "HEADER[,...]",
        value_delimiter = ',',
        default_value = "X-Remote-User"
    )]
    pub requestheader_username_headers: Vec<String>,

    /// The headers naming the user's groups.
    #[arg(
        long,
        value_name = "HEADER[,...]",
        value_delimiter = ',',
        default_value = "X-Remote-Group"
    )]
    pub requestheader_group_headers: Vec<String>,

    /// The prefixes of the headers carrying the user's extras (`X-Remote-Extra-Scopes`).
    #[arg(
        long,
        value_name = "PREFIX[,...]",
        value_delimiter = ',',
        default_value = "X-Remote-Extra-"
    )]
    pub requestheader_extra_headers_prefix: Vec<String>,

    /// Authenticate the bearer tokens no other method knows by TokenReviews to the core
    /// cluster this kubeconfig names (an extension API server's delegated authentication;
    /// answers kept for ten seconds).
    #[arg(long, value_name = "FILE")]
    pub authentication_kubeconfig: Option<PathBuf>,

    /// With --authentication-kubeconfig, do not read the client CA and the front proxy's
    /// settings the core cluster publishes (`kube-system/extension-apiserver-authentication`).
    #[arg(long)]
    pub authentication_skip_lookup: bool,

    /// Start without the core cluster's published settings when they cannot be read.
    #[arg(long)]
    pub authentication_tolerate_lookup_failure: bool,

    /// Authenticate bearer tokens listed in this file, kube's CSV:
    /// `token,user,uid,"group1,group2"`.
    #[arg(long, value_name = "FILE")]
    pub token_auth_file: Option<PathBuf>,

    /// Accept OpenID Connect ID tokens of this issuer (https) as bearer tokens.
    #[arg(long, value_name = "URL", requires = "oidc_client_id")]
    pub oidc_issuer_url: Option<String>,

    /// The audience OIDC tokens must be for.
    #[arg(long, value_name = "ID")]
    pub oidc_client_id: Option<String>,

    /// The claim naming the user.
    #[arg(long, value_name = "CLAIM", default_value = "sub")]
    pub oidc_username_claim: String,

    /// Prefixed to OIDC user names (default `<issuer>#` unless the claim is `email`; `-`
    /// for none).
    #[arg(long, value_name = "PREFIX")]
    pub oidc_username_prefix: Option<String>,

    /// The claim listing the user's groups.
    #[arg(long, value_name = "CLAIM")]
    pub oidc_groups_claim: Option<String>,

    /// Prefixed to OIDC groups.
    #[arg(long, value_name = "PREFIX", default_value = "")]
    pub oidc_groups_prefix: String,

    /// The CA (PEM) of the OIDC issuer's certificate; the web PKI without it.
    #[arg(long, value_name = "FILE")]
    pub oidc_ca_file: Option<PathBuf>,

    /// Signing algorithms OIDC tokens may use.
    #[arg(
        long,
        value_name = "ALG[,ALG...]",
        value_delimiter = ',',
        default_value = "RS256"
    )]
    pub oidc_signing_algs: Vec<String>,

    /// Let requests without credentials in as `system:anonymous` (group
    /// `system:unauthenticated`), for authorization to judge.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub anonymous_auth: bool,

    /// The audit policy (an `audit.k8s.io/v1` Policy, YAML): which requests are audited, at
    /// which level. Needs --audit-log-path.
    #[arg(long, value_name = "FILE")]
    pub audit_policy_file: Option<PathBuf>,

    /// Where audit events go, one JSON line each; `-` is stdout.
    #[arg(long, value_name = "FILE")]
    pub audit_log_path: Option<PathBuf>,

    /// Rotate the audit log once it would pass this many megabytes (0: never).
    #[arg(long, value_name = "MB", default_value_t = 0)]
    pub audit_log_maxsize: u64,

    /// Keep at most this many rotated audit logs (0: all).
    #[arg(long, value_name = "FILES", default_value_t = 0)]
    pub audit_log_maxbackup: usize,

    /// Remove rotated audit logs older than this many days (0: never).
    #[arg(long, value_name = "DAYS", default_value_t = 0)]
    pub audit_log_maxage: u64,

    /// How many read-only requests may run at once (watches, health checks and
    /// `system:masters` not counted); over it, 429. 0: no limit.
    #[arg(long, value_name = "N", default_value_t = crate::filters::max_inflight::DEFAULT_READONLY)]
    pub max_requests_inflight: usize,

    /// How many mutating requests may run at once; over it, 429. 0: no limit.
    #[arg(long, value_name = "N", default_value_t = crate::filters::max_inflight::DEFAULT_MUTATING)]
    pub max_mutating_requests_inflight: usize,

    /// How long a request that is not a watch may take before it is answered 504 (e.g.
    /// `60s`, `1m`); a request's own `timeout` parameter may ask for less. `0` disables.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = humantime::parse_duration)]
    pub request_timeout: std::time::Duration,

    /// Ask the core cluster this kubeconfig names for the decisions of the `Webhook`
    /// mode, in SubjectAccessReviews (an extension API server's delegated authorization;
    /// decisions kept for ten seconds).
    #[arg(long, value_name = "FILE")]
    pub authorization_kubeconfig: Option<PathBuf>,

    /// Non-resource paths anyone may request, before the modes are asked (`/healthz`;
    /// `/debug/*` for a prefix), as an extension API server allows its health checks.
    #[arg(long, value_name = "PATH[,PATH...]", value_delimiter = ',')]
    pub authorization_always_allow_paths: Vec<String>,

    /// Authorization modes, asked in order: `AlwaysAllow`, `AlwaysDeny`, `RBAC`, `Webhook`.
    #[arg(
        long,
        value_name = "MODE[,MODE...]",
        value_delimiter = ',',
        default_value = "AlwaysAllow"
    )]
    pub authorization_mode: Vec<String>,
}

impl SecurityFlags {
    /// Whether any authenticator is configured.
    fn authenticates(&self) -> bool {
        self.client_ca_file.is_some()
            || self.requestheader_client_ca_file.is_some()
            || self.authentication_kubeconfig.is_some()
            || self.token_auth_file.is_some()
            || self.oidc_issuer_url.is_some()
    }

    /// The start-up checks that need no I/O: known modes, and no unprotected server on the
    /// network. An error is a usage error (exit 2).
    pub fn check(&self, addr: &[SocketAddr]) -> Result<(), String> {
        for mode in &self.authorization_mode {
            if mode == "RBAC" && !cfg!(feature = "rbac") {
                return Err(super::missing_set(
                    "--authorization-mode=RBAC",
                    "rbac",
                    "RBAC",
                ));
            }
            if !matches!(
                mode.as_str(),
                "AlwaysAllow" | "AlwaysDeny" | "RBAC" | "Webhook"
            ) {
                return Err(format!(
                    "--authorization-mode: unknown mode {mode:?} (known: AlwaysAllow, \
                     AlwaysDeny, RBAC, Webhook)"
                ));
            }
        }
        let webhook = self.authorization_mode.iter().any(|m| m == "Webhook");
        if webhook != self.authorization_kubeconfig.is_some() {
            return Err(
                "--authorization-mode=Webhook and --authorization-kubeconfig go \
                        together: the kubeconfig names the cluster the mode asks"
                    .to_owned(),
            );
        }
        let exposed = addr.iter().any(|a| !a.ip().is_loopback());
        if exposed && (self.tls_cert_file.is_none() || !self.authenticates()) {
            return Err(
                "serving on a non-loopback address needs TLS (--tls-cert-file, \
                 --tls-private-key-file) and an authenticator (--client-ca-file, \
                 --token-auth-file or --oidc-issuer-url); listen on 127.0.0.1 to run without \
                 them"
                    .to_owned(),
            );
        }
        if exposed && self.authorization_mode == ["AlwaysAllow"] {
            tracing::warn!(
                "--authorization-mode=AlwaysAllow: every authenticated user may do everything; \
                 use --authorization-mode=RBAC"
            );
        }
        if !exposed && !self.authenticates() && self.authorization_mode == ["AlwaysAllow"] {
            tracing::info!(
                "no authentication and --authorization-mode=AlwaysAllow: every request is allowed \
                 (listening on loopback only)"
            );
        }
        Ok(())
    }

    /// The authenticator and the authorization modes; starts the RBAC authorizer (and
    /// reconciles kube's bootstrap policy) when RBAC is a mode.
    pub async fn filters(
        &self,
        trust: &ClientTrust,
        registry: &Arc<Registry>,
    ) -> Result<(Filters, bool)> {
        let mut authenticator = Authenticator::new().anonymous(self.anonymous_auth);
        // First, as kube's: a front proxy's user.
        if let Some(request_header) = trust.request_header()? {
            authenticator = authenticator.with(request_header);
        }
        if let Some(ca) = trust.client_ca()? {
            authenticator = authenticator.with(ca.authenticator());
        }
        if let Some(path) = &self.token_auth_file {
            let tokens = TokenFile::load(path)?;
            tracing::info!(path = %path.display(), tokens = tokens.len(), "token authentication");
            authenticator = authenticator.with(tokens);
        }
        if let Some(issuer) = &self.oidc_issuer_url {
            let oidc = Oidc::start(OidcOptions {
                issuer_url: issuer.clone(),
                client_id: self.oidc_client_id.clone().unwrap_or_default(),
                username_claim: self.oidc_username_claim.clone(),
                username_prefix: self.oidc_username_prefix.clone(),
                groups_claim: self.oidc_groups_claim.clone(),
                groups_prefix: self.oidc_groups_prefix.clone(),
                ca_file: self.oidc_ca_file.clone(),
                signing_algs: self.oidc_signing_algs.clone(),
            })?;
            tracing::info!(%issuer, "OIDC authentication");
            authenticator = authenticator.with(oidc);
        }
        if let Some(path) = &self.authentication_kubeconfig {
            let remote = Remote::load(path, std::time::Duration::from_secs(10))
                .context("--authentication-kubeconfig")?;
            tracing::info!(path = %path.display(), "delegated token authentication");
            authenticator = authenticator.with(TokenReviewer::new(remote));
        }
        let mut modes = Mode::new();
        if !self.authorization_always_allow_paths.is_empty() {
            let paths = AlwaysAllowPaths(self.authorization_always_allow_paths.clone());
            modes = modes.with("AlwaysAllowPaths", Arc::new(paths));
        }
        // The RBAC authorizer, once started: writes of roles and bindings are checked for
        // escalation against it.
        #[cfg(feature = "rbac")]
        let mut started: Option<Arc<crate::authz::rbac::Rbac>> = None;
        #[cfg(not(feature = "rbac"))]
        let started: Option<std::convert::Infallible> = None;
        for mode in &self.authorization_mode {
            modes = match mode.as_str() {
                "AlwaysAllow" => modes.with(mode, Arc::new(AlwaysAllow)),
                "AlwaysDeny" => modes.with(mode, Arc::new(AlwaysDeny)),
                #[cfg(feature = "rbac")]
                "RBAC" => {
                    use crate::authz::rbac::{self, Rbac};

                    if (registry
                        .scheme()
                        .by_kind(kapi_kinds::rbac::GROUP, "ClusterRole"))
                    .is_none()
                    {
                        bail!(
                            "--authorization-mode=RBAC: the API does not serve RBAC's kinds \
                             (list kapi::kinds::RBAC in its kinds)"
                        );
                    }
                    rbac::bootstrap::reconcile(registry)
                        .await
                        .context("--authorization-mode=RBAC: reconciling the bootstrap policy")?;
                    let authorizer = Arc::new(
                        Rbac::start(registry)
                            .await
                            .context("--authorization-mode=RBAC: loading the RBAC objects")?,
                    );
                    // Escalation checks on writes of roles and bindings, with every mode.
                    started = Some(Arc::clone(&authorizer));
                    modes.with(mode, authorizer)
                }
                "Webhook" => {
                    let path = (self.authorization_kubeconfig.as_ref())
                        .context("--authorization-mode=Webhook needs --authorization-kubeconfig")?;
                    let remote = Remote::load(path, std::time::Duration::from_secs(10))
                        .context("--authorization-kubeconfig")?;
                    tracing::info!(path = %path.display(), "delegated authorization");
                    modes.with(mode, Arc::new(SubjectAccessReviewer::new(remote)))
                }
                other => bail!("--authorization-mode: unknown mode {other:?}"),
            };
        }
        let authenticator = Arc::new(authenticator);
        // The reviews answer with the same authenticator and modes as requests get.
        #[cfg(not(feature = "rbac"))]
        let _ = registry;
        #[cfg(feature = "rbac")]
        {
            crate::authn::reviews::register(registry, &authenticator);
            crate::authz::reviews::register(registry, &modes);
            if let Some(rbac) = &started {
                let check = crate::authz::rbac::escalation::Escalation::new(
                    modes.clone(),
                    Arc::clone(rbac),
                );
                registry.add_admission(Arc::new(check));
            }
        }
        let filters = Filters {
            authenticator,
            authorizer: modes,
            auditor: self.auditor()?,
            limits: Limits::new(
                self.max_requests_inflight,
                self.max_mutating_requests_inflight,
            ),
            request_timeout: self.request_timeout,
        };
        Ok((filters, started.is_some()))
    }

    /// The auditor, when a policy and a log are given.
    fn auditor(&self) -> Result<Option<Arc<Auditor>>> {
        let (policy, path) = match (&self.audit_policy_file, &self.audit_log_path) {
            (Some(policy), Some(path)) => (policy, path),
            (None, None) => return Ok(None),
            (Some(_), None) => bail!("--audit-policy-file needs --audit-log-path"),
            (None, Some(_)) => bail!("--audit-log-path needs --audit-policy-file"),
        };
        let policy = Policy::load(policy)?;
        let log = AuditLog::open(LogOptions {
            path: path.clone(),
            max_size_mb: self.audit_log_maxsize,
            max_backups: self.audit_log_maxbackup,
            max_age_days: self.audit_log_maxage,
        })
        .with_context(|| format!("--audit-log-path {}", path.display()))?;
        tracing::info!(path = %path.display(), "audit log");
        Ok(Some(Arc::new(Auditor { policy, log })))
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
