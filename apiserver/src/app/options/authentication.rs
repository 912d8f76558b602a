//! Authentication (kube's `DelegatingAuthenticationOptions` and `BuiltInAuthenticationOptions`):
//! client certificates, the authenticating front proxy, token files, OpenID Connect, the
//! core cluster's TokenReviews, anonymous requests.

use std::path::PathBuf;

use crate::authn::Authenticator;
use crate::authn::oidc::{Oidc, OidcOptions};
use crate::authn::token_file::TokenFile;
use crate::authn::token_review::TokenReviewer;
use crate::kubeconfig::Remote;
use anyhow::{Context, Result};

use super::super::client_trust::ClientTrust;

/// Who a request is from.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Authentication")]
pub struct AuthenticationOptions {
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
}

impl AuthenticationOptions {
    /// Whether any authenticator is configured.
    pub fn authenticates(&self) -> bool {
        self.client_ca_file.is_some()
            || self.requestheader_client_ca_file.is_some()
            || self.authentication_kubeconfig.is_some()
            || self.token_auth_file.is_some()
            || self.oidc_issuer_url.is_some()
    }

    /// The authenticator: a front proxy's user first (as kube's), then client
    /// certificates, token files, OIDC, and the core cluster's TokenReviews.
    pub fn authenticator(&self, trust: &ClientTrust) -> Result<Authenticator> {
        let mut authenticator = Authenticator::new().anonymous(self.anonymous_auth);
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
        Ok(authenticator)
    }
}
