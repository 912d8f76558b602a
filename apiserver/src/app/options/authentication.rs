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

    /// Service-account tokens.
    #[command(flatten)]
    pub service_accounts: ServiceAccountOptions,
}

/// Service-account tokens: the issuer, its keys, the tokens' audiences and lifetimes. With
/// none of these flags the server makes an ephemeral key at start (development).
#[derive(Debug, Default, clap::Args)]
#[command(next_help_heading = "Service-account tokens")]
pub struct ServiceAccountOptions {
    /// The issuer tokens name (`iss`); repeated, the first issues new tokens and every one
    /// is accepted (an issuer's rotation).
    #[arg(long, value_name = "URL")]
    pub service_account_issuer: Vec<String>,

    /// What tokens are for (`aud`) unless a request says (default: the issuers).
    #[arg(long, value_name = "AUDIENCE[,...]", value_delimiter = ',')]
    pub api_audiences: Vec<String>,

    /// Verify tokens with the keys in this PEM file (public keys, certificates, or private
    /// keys); repeated for several (a key's rotation).
    #[arg(long, value_name = "FILE")]
    pub service_account_key_file: Vec<PathBuf>,

    /// Sign tokens with this private key (RSA, or ECDSA P-256 or P-384; PEM).
    #[arg(long, value_name = "FILE")]
    pub service_account_signing_key_file: Option<PathBuf>,

    /// The longest lifetime a TokenRequest gets (between 1h and 2^32s; 0: no cap).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub service_account_max_token_expiration: Option<std::time::Duration>,

    /// Issue the tokens kube's projected volumes ask for (3607s, bound to a Pod) for a year,
    /// reporting their use stale after 3607s.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub service_account_extend_token_expiration: bool,

    /// Where the issuer's key set is, as the discovery document says (https; default:
    /// this server's `/openid/v1/jwks`).
    #[arg(long, value_name = "URL")]
    pub service_account_jwks_uri: Option<String>,

    /// Check a legacy token against the Secret that holds it, and its service account.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub service_account_lookup: bool,
}

#[cfg(feature = "builtin")]
impl ServiceAccountOptions {
    /// What the flags say, checked as kube checks them; `development` tokens when none is
    /// set.
    pub fn tokens(&self) -> Result<crate::serviceaccount::Tokens> {
        use crate::serviceaccount::{SigningKey, Tokens, keys};
        use anyhow::bail;
        let issuers = &self.service_account_issuer;
        if issuers.is_empty()
            && self.service_account_key_file.is_empty()
            && self.service_account_signing_key_file.is_none()
            && self.api_audiences.is_empty()
        {
            let mut tokens = Tokens::development();
            tokens.extend_expiration = self.service_account_extend_token_expiration;
            tokens.jwks_uri = self.service_account_jwks_uri.clone();
            return Ok(tokens);
        }
        if issuers.is_empty() {
            bail!("service-account-issuer is a required flag");
        }
        for (i, issuer) in issuers.iter().enumerate() {
            if issuer.is_empty() {
                bail!("service-account-issuer should not be an empty string");
            }
            if issuers[..i].contains(issuer) {
                bail!("service-account-issuer {issuer:?} is already specified");
            }
        }
        if self.service_account_key_file.is_empty() {
            bail!(
                "either `--service-account-key-file` or `--service-account-signing-endpoint` must be set"
            );
        }
        let Some(signing) = &self.service_account_signing_key_file else {
            bail!(
                "--service-account-signing-key-file, --service-account-issuer, and --api-audiences should be specified together"
            );
        };
        let read = |path: &PathBuf| {
            std::fs::read(path).with_context(|| format!("reading {}", path.display()))
        };
        let signing_key = SigningKey::from_pem(&read(signing)?, &signing.display().to_string())
            .context("failed to parse service-account-issuer-key-file")?;
        let mut verifying = Vec::new();
        for path in &self.service_account_key_file {
            let source = path.display().to_string();
            verifying.extend(
                keys::public_keys_from_pem(&read(path)?, &source)
                    .with_context(|| format!("error reading public key file {source}"))?,
            );
        }
        let max = match self.service_account_max_token_expiration {
            None => 0,
            Some(max) if max.is_zero() => 0,
            Some(max) if max.as_secs() < 3600 || max.as_secs() > 1 << 32 => {
                bail!(
                    "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"
                )
            }
            Some(max) => max.as_secs() as i64,
        };
        if let Some(uri) = &self.service_account_jwks_uri
            && !uri.starts_with("https://")
        {
            bail!("service-account-jwks-uri requires https scheme, parsed as: {uri}");
        }
        Ok(Tokens {
            issuers: issuers.clone(),
            api_audiences: match self.api_audiences.is_empty() {
                true => issuers.clone(),
                false => self.api_audiences.clone(),
            },
            signing_key: Some(signing_key),
            keys: verifying,
            max_expiration_seconds: max,
            extend_expiration: self.service_account_extend_token_expiration,
            jwks_uri: self.service_account_jwks_uri.clone(),
            lookup: self.service_account_lookup,
            development: false,
        })
    }
}

impl AuthenticationOptions {
    /// Whether any authenticator is configured.
    pub fn authenticates(&self) -> bool {
        self.client_ca_file.is_some()
            || self.requestheader_client_ca_file.is_some()
            || self.authentication_kubeconfig.is_some()
            || self.token_auth_file.is_some()
            || self.oidc_issuer_url.is_some()
            || !self.service_accounts.service_account_key_file.is_empty()
    }

    /// The authenticator: a front proxy's user first (as kube's), then client
    /// certificates, token files, service-account tokens (`service_accounts`), OIDC, and
    /// the core cluster's TokenReviews.
    pub fn authenticator(
        &self,
        trust: &ClientTrust,
        service_accounts: Option<(Box<dyn crate::authn::Method>, Vec<String>)>,
    ) -> Result<Authenticator> {
        let mut authenticator = Authenticator::new().anonymous(self.anonymous_auth);
        // What requests are for: the service-account tokens' API audiences (the flag's,
        // else the issuers), else the flag's.
        let (service_accounts, audiences) = match service_accounts {
            Some((method, audiences)) => (Some(method), audiences),
            None => (None, self.service_accounts.api_audiences.clone()),
        };
        authenticator = authenticator.api_audiences(audiences);
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
        if let Some(method) = service_accounts {
            authenticator = authenticator.with_boxed(method);
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
