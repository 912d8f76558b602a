//! OpenID Connect ID tokens as bearer tokens (`--oidc-*`), as kube's OIDC authenticator
//! accepts them: a JWT whose `iss` is `--oidc-issuer-url`, signed by one of the issuer's
//! keys with an allowed algorithm (`--oidc-signing-algs`, RS256 by default), for the
//! audience `--oidc-client-id`, not expired. The user is the `--oidc-username-claim`
//! (`sub` by default), prefixed by `--oidc-username-prefix` (default: `<issuer>#` unless
//! the claim is `email`; `-` for none; an `email` claim needs `email_verified` not false);
//! the groups are `--oidc-groups-claim` (a string or a list), each prefixed by
//! `--oidc-groups-prefix`.
//!
//! Keys come from the issuer's discovery document (`/.well-known/openid-configuration`,
//! whose `issuer` must be the flag's) and its `jwks_uri`, fetched over HTTPS (trusting
//! `--oidc-ca-file`, else the web PKI) by a thread of this method: at start, every ten
//! minutes, and when a token names a key not known (at most every ten seconds). A token
//! is judged on the keys in memory, never waiting for the network: until the first fetch
//! succeeds, and for a token signed by a key fetched only after it, the answer is 401.
//! A bearer token that is not a JWT of this issuer is left to the other methods.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use base64::Engine as _;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::{Method, Outcome, Request, UserInfo};

/// How often the keys are fetched again.
const REFRESH: Duration = Duration::from_secs(10 * 60);
/// How soon an unknown key may cause another fetch.
const MIN_REFETCH: Duration = Duration::from_secs(10);

/// The `--oidc-*` flags.
#[derive(Clone, Debug)]
pub struct OidcOptions {
    /// `https://issuer.example` (the tokens' `iss`).
    pub issuer_url: String,
    /// The audience tokens must be for.
    pub client_id: String,
    /// The claim naming the user.
    pub username_claim: String,
    /// `None`: kube's default; `Some("-")`: none.
    pub username_prefix: Option<String>,
    /// The claim listing the groups, if any.
    pub groups_claim: Option<String>,
    /// Prefixed to every group.
    pub groups_prefix: String,
    /// The CA of the issuer's certificate (PEM); the web PKI without it.
    pub ca_file: Option<PathBuf>,
    /// Allowed signing algorithms (`RS256`, `ES256`, ...).
    pub signing_algs: Vec<String>,
}

/// Why the OIDC flags cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("--oidc-*: {0}")]
pub struct OidcError(String);

/// The method.
pub struct Oidc {
    options: OidcOptions,
    algorithms: Vec<Algorithm>,
    keys: Arc<ArcSwap<Option<JwkSet>>>,
    refetch: SyncSender<()>,
    last_refetch: std::sync::Mutex<Option<Instant>>,
}

impl Oidc {
    /// Checks the options and starts fetching the keys.
    pub fn start(options: OidcOptions) -> Result<Oidc, OidcError> {
        if !options.issuer_url.starts_with("https://") {
            return Err(OidcError(format!(
                "issuer URL {:?} must use https",
                options.issuer_url
            )));
        }
        if options.client_id.is_empty() {
            return Err(OidcError("--oidc-client-id is required".into()));
        }
        let algorithms = (options.signing_algs.iter())
            .map(|alg| {
                alg.parse::<Algorithm>()
                    .ok()
                    .filter(|a| {
                        !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
                    })
                    .ok_or_else(|| OidcError(format!("unsupported signing algorithm {alg:?}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let agent = agent(options.ca_file.as_ref())?;
        let keys = Arc::new(ArcSwap::from_pointee(None));
        let (refetch, requests) = std::sync::mpsc::sync_channel(1);
        let fetcher = Fetcher {
            agent,
            issuer: options.issuer_url.clone(),
            keys: Arc::clone(&keys),
        };
        std::thread::Builder::new()
            .name("oidc-keys".into())
            .spawn(move || fetcher.run(&requests))
            .map_err(|e| OidcError(e.to_string()))?;
        Ok(Oidc {
            options,
            algorithms,
            keys,
            refetch,
            last_refetch: std::sync::Mutex::new(None),
        })
    }

    /// Whether the keys have been fetched.
    pub fn ready(&self) -> bool {
        self.keys.load().is_some()
    }

    fn ask_refetch(&self) {
        let mut last = self.last_refetch.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_none_or(|at| at.elapsed() >= MIN_REFETCH) {
            *last = Some(Instant::now());
            let _ = self.refetch.try_send(());
        }
    }

    /// The user of a verified token's claims.
    fn user(&self, claims: &Value) -> Result<UserInfo, String> {
        let options = &self.options;
        let claim = &options.username_claim;
        let name = (claims.get(claim).and_then(Value::as_str))
            .ok_or_else(|| format!("oidc: claim {claim:?} not present"))?;
        if claim == "email" && claims.get("email_verified").and_then(Value::as_bool) == Some(false)
        {
            return Err("oidc: email not verified".into());
        }
        let prefix = match options.username_prefix.as_deref() {
            Some("-") => String::new(),
            Some(prefix) => prefix.to_owned(),
            None if claim == "email" => String::new(),
            None => format!("{}#", options.issuer_url),
        };
        let mut groups = Vec::new();
        if let Some(claim) = &options.groups_claim {
            match claims.get(claim) {
                None | Some(Value::Null) => {}
                Some(Value::String(group)) => groups.push(group.clone()),
                Some(Value::Array(list)) => {
                    for group in list {
                        let group = group.as_str().ok_or_else(|| {
                            format!("oidc: groups claim {claim:?} is not strings")
                        })?;
                        groups.push(group.to_owned());
                    }
                }
                Some(_) => return Err(format!("oidc: groups claim {claim:?} is not strings")),
            }
        }
        Ok(UserInfo {
            name: format!("{prefix}{name}"),
            groups: (groups.into_iter())
                .map(|g| format!("{}{g}", options.groups_prefix))
                .collect(),
            ..UserInfo::default()
        })
    }
}

/// The `iss` of a JWT's payload, read without verifying it: whether the token is this
/// issuer's at all.
fn unverified_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims.get("iss")?.as_str().map(str::to_owned)
}

impl Method for Oidc {
    fn authenticate(&self, request: &Request<'_>) -> Outcome {
        let Some(token) = request.bearer_token() else {
            return Outcome::NotPresented;
        };
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return Outcome::NotPresented;
        };
        if unverified_issuer(token).as_deref() != Some(self.options.issuer_url.as_str()) {
            return Outcome::NotPresented;
        }
        if !self.algorithms.contains(&header.alg) {
            return Outcome::Rejected(format!(
                "oidc: signing algorithm {:?} not allowed",
                header.alg
            ));
        }
        let keys = self.keys.load();
        let Some(keys) = keys.as_ref() else {
            self.ask_refetch();
            return Outcome::Rejected("oidc: authenticator not initialized".into());
        };
        let candidates: Vec<_> = (keys.keys.iter())
            .filter(|jwk| header.kid.is_none() || jwk.common.key_id == header.kid)
            .collect();
        if candidates.is_empty() {
            self.ask_refetch();
            return Outcome::Rejected("oidc: the token's signing key is not known".into());
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.options.issuer_url]);
        validation.set_audience(&[&self.options.client_id]);
        validation.leeway = 0;
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let mut last_error = String::new();
        for jwk in candidates {
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            match jsonwebtoken::decode::<Value>(token, &key, &validation) {
                Ok(data) => {
                    return match self.user(&data.claims) {
                        Ok(user) => Outcome::User(user),
                        Err(reason) => Outcome::Rejected(reason),
                    };
                }
                Err(e) => last_error = e.to_string(),
            }
        }
        Outcome::Rejected(format!("oidc: verify token: {last_error}"))
    }
}

/// An HTTPS client trusting `ca_file`, or the web PKI.
fn agent(ca_file: Option<&PathBuf>) -> Result<ureq::Agent, OidcError> {
    let shown = || ca_file.map(|p| p.display().to_string()).unwrap_or_default();
    let pem = (ca_file.map(std::fs::read).transpose())
        .map_err(|e| OidcError(format!("--oidc-ca-file {}: {e}", shown())))?;
    let roots = kapi_webhook::tls::roots(pem.as_deref())
        .ok_or_else(|| OidcError(format!("--oidc-ca-file {}: no certificate", shown())))?;
    let tls = ureq::tls::TlsConfig::builder().root_certs(roots).build();
    let config = ureq::Agent::config_builder()
        .tls_config(tls)
        .timeout_global(Some(Duration::from_secs(10)))
        .build();
    Ok(ureq::Agent::new_with_config(config))
}

/// The thread that fetches the keys.
struct Fetcher {
    agent: ureq::Agent,
    issuer: String,
    keys: Arc<ArcSwap<Option<JwkSet>>>,
}

impl Fetcher {
    fn run(self, requests: &Receiver<()>) {
        let mut backoff = Duration::from_secs(1);
        loop {
            let wait = match self.fetch() {
                Ok(keys) => {
                    tracing::info!(issuer = %self.issuer, keys = keys.keys.len(), "oidc: keys fetched");
                    self.keys.store(Arc::new(Some(keys)));
                    backoff = Duration::from_secs(1);
                    REFRESH
                }
                Err(error) => {
                    tracing::warn!(issuer = %self.issuer, %error, "oidc: cannot fetch the keys; retrying");
                    backoff = (backoff * 2).min(Duration::from_secs(60));
                    backoff
                }
            };
            match requests.recv_timeout(wait) {
                Ok(()) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    fn get(&self, url: &str) -> Result<Value, String> {
        let mut response = (self.agent.get(url).call()).map_err(|e| format!("GET {url}: {e}"))?;
        response
            .body_mut()
            .read_json::<Value>()
            .map_err(|e| format!("GET {url}: {e}"))
    }

    fn fetch(&self) -> Result<JwkSet, String> {
        let discovery_url = format!(
            "{}/.well-known/openid-configuration",
            self.issuer.trim_end_matches('/')
        );
        let discovery = self.get(&discovery_url)?;
        let issuer = discovery
            .get("issuer")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if issuer != self.issuer {
            return Err(format!(
                "the discovery document names issuer {issuer:?}, not {:?}",
                self.issuer
            ));
        }
        let jwks_uri = (discovery.get("jwks_uri").and_then(Value::as_str))
            .ok_or("the discovery document has no jwks_uri")?;
        let keys = self.get(jwks_uri)?;
        serde_json::from_value(keys).map_err(|e| format!("{jwks_uri}: not a JWK set: {e}"))
    }
}
