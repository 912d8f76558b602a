//! The authentication method for service-account tokens (kube's `jwtTokenAuthenticator`
//! with its bound and legacy validators).
//!
//! A bearer token is this method's when it is a JWT whose (unverified) `iss` is one of
//! `--service-account-issuer` or `kubernetes/serviceaccount` (a legacy token); any other
//! token is left to the other methods. Then, as kube:
//!
//! 1. the signature, by the keys whose id the token names (every key when it names none);
//! 2. the audiences: the token's (a legacy token's: the API audiences) must meet the API
//!    audiences;
//! 3. a bound token's times, with a minute of leeway; then its service account must exist
//!    with the uid the token names and not have been deleted more than a minute ago, and
//!    likewise the Secret, Pod or Node it is bound to (a Pod's Node is not looked up);
//! 4. a legacy token (with `--service-account-lookup`): its Secret must exist and hold this
//!    very token, not be marked invalid, and its service account must exist with the
//!    token's uid; the Secret's `kubernetes.io/legacy-token-last-used` label is set to
//!    today's date (UTC) when it says another day, as kube keeps it.
//!
//! The user is `system:serviceaccount:<namespace>:<name>` with the account's uid, in
//! `system:serviceaccounts` and `system:serviceaccounts:<namespace>`; a bound token adds
//! kube's extras: the Pod's and Node's names and uids, and the token's id as
//! `authentication.kubernetes.io/credential-id`.
//!
//! Objects are read from the watch caches, falling back to storage (`super::Objects`).
//! A token whose signature verified is remembered for ten seconds (kube keeps whole
//! answers that long): a client's next requests skip the cryptography, never the checks
//! of times and objects, so a deletion still revokes at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

use super::claims::{Claims, LEEWAY, LEGACY_ISSUER, Private, Ref, subject};
use super::{Objects, Tokens};
use crate::authn::{Method, Outcome, Request, UserInfo};
use kapi_core::unstructured::meta_str;

/// The label kube keeps on a legacy token's Secret: the last day it was used.
pub const LAST_USED: &str = "kubernetes.io/legacy-token-last-used";
/// The label that marks a legacy token's Secret invalid.
pub const INVALID_SINCE: &str = "kubernetes.io/legacy-token-invalid-since";

/// How long a verified signature is remembered.
const VERIFIED_FOR: Duration = Duration::from_secs(10);
/// Past this many remembered tokens, the stale ones are dropped (all, if none is stale).
const REMEMBERED: usize = 4096;

/// The method.
pub struct ServiceAccountTokens {
    tokens: Arc<Tokens>,
    objects: Objects,
    /// Tokens whose signature verified, when, and their claims.
    verified: Mutex<HashMap<String, (Instant, Arc<Claims>)>>,
}

impl ServiceAccountTokens {
    /// Accepts the tokens `tokens` describes, reading objects through `objects`.
    pub(crate) fn new(tokens: Arc<Tokens>, objects: Objects) -> ServiceAccountTokens {
        ServiceAccountTokens {
            tokens,
            objects,
            verified: Mutex::default(),
        }
    }

    /// The claims of `token` if its signature verified less than [`VERIFIED_FOR`] ago.
    fn remembered(&self, token: &str) -> Option<Arc<Claims>> {
        let now = Instant::now();
        (self.verified.lock().unwrap_or_else(|e| e.into_inner()))
            .get(token)
            .filter(|(at, _)| now.duration_since(*at) < VERIFIED_FOR)
            .map(|(_, claims)| Arc::clone(claims))
    }

    /// The claims of `token`, verified now, and remembered.
    fn verified(&self, token: &str) -> Result<Arc<Claims>, String> {
        let now = Instant::now();
        let claims = Arc::new(self.verify(token)?);
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if verified.len() >= REMEMBERED {
            verified.retain(|_, (at, _)| now.duration_since(*at) < VERIFIED_FOR);
            if verified.len() >= REMEMBERED {
                verified.clear();
            }
        }
        verified.insert(token.to_owned(), (now, Arc::clone(&claims)));
        Ok(claims)
    }

    /// The user of `token`, whose verified claims are `claims`, and the audiences of
    /// `asked` (none: the API audiences) it is good for; the reason for the log when it is
    /// refused.
    fn user(
        &self,
        token: &str,
        claims: &Claims,
        asked: Option<&[String]>,
    ) -> Result<(UserInfo, Vec<String>), String> {
        let legacy = claims.iss == LEGACY_ISSUER;
        // A legacy token, for no audience in particular, is for the API's.
        let token_audiences = match claims.aud.list() {
            audiences if audiences.is_empty() => self.tokens.api_audiences.clone(),
            audiences => audiences,
        };
        let asked = asked.unwrap_or(&self.tokens.api_audiences);
        let shared: Vec<String> = (asked.iter())
            .filter(|a| token_audiences.contains(a))
            .cloned()
            .collect();
        if shared.is_empty() && !self.tokens.api_audiences.is_empty() {
            return Err(format!(
                "token audiences {token_audiences:?} is invalid for the target audiences {asked:?}"
            ));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs() as i64;
        let user = match legacy {
            true => self.legacy(token, claims)?,
            false => self.bound(claims, now)?,
        };
        Ok((user, shared))
    }

    /// The claims of `token` once one of the keys verifies its signature.
    fn verify(&self, token: &str) -> Result<Claims, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| e.to_string())?;
        let kid = header.kid.unwrap_or_default();
        let keys: Vec<_> = (self.tokens.keys.iter())
            .filter(|key| kid.is_empty() || key.kid == kid)
            .collect();
        if keys.is_empty() {
            return Err("invalid signature, no keys found".into());
        }
        let mut errors = Vec::new();
        for key in keys {
            let mut validation = jsonwebtoken::Validation::new(key.algorithm);
            validation.required_spec_claims.clear();
            validation.validate_exp = false;
            validation.validate_nbf = false;
            validation.validate_aud = false;
            match jsonwebtoken::decode::<Claims>(token, key.decoding(), &validation) {
                Ok(data) => return Ok(data.claims),
                Err(e) => errors.push(e.to_string()),
            }
        }
        Err(errors.join(", "))
    }

    /// A bound token's checks at `now` (seconds).
    fn bound(&self, claims: &Claims, now: i64) -> Result<UserInfo, String> {
        claims.check_times(now).map_err(str::to_owned)?;
        let private = claims.kubernetes.clone().unwrap_or_default();
        let Private {
            namespace,
            serviceaccount: account,
            ..
        } = &private;
        let deleted_before = now - LEEWAY;
        let live = self.get("serviceaccounts", Some(namespace), &account.name)?;
        let live_uid = meta_str(&live, "uid").unwrap_or_default();
        if live_uid != account.uid {
            return Err(format!(
                "service account UID ({live_uid}) does not match claim ({})",
                account.uid
            ));
        }
        if deleted(&live, deleted_before) {
            return Err(format!(
                "service account {namespace}/{} has been deleted",
                account.name
            ));
        }
        let invalidated = || "service account token has been invalidated".to_owned();
        let check = |plural: &str, what: &str, reference: &Ref, scoped: bool| {
            let namespace = scoped.then_some(namespace.as_str());
            let object = (self.objects.get(plural, namespace, &reference.name))
                .ok()
                .flatten()
                .ok_or_else(invalidated)?;
            let uid = meta_str(&object, "uid").unwrap_or_default();
            if uid != reference.uid {
                return Err(format!(
                    "{what} UID ({uid}) does not match service account {what} ref claim ({})",
                    reference.uid
                ));
            }
            match deleted(&object, deleted_before) {
                true => Err(invalidated()),
                false => Ok(()),
            }
        };
        if let Some(secret) = &private.secret {
            check("secrets", "secret", secret, true)?;
        }
        if let Some(pod) = &private.pod {
            check("pods", "pod", pod, true)?;
        } else if let Some(node) = &private.node {
            check("nodes", "node", node, false)?;
        }
        let mut user = account_user(namespace, account);
        let mut extra = |key: &str, value: &str| {
            user.extra.insert(
                format!("authentication.kubernetes.io/{key}"),
                vec![value.to_owned()],
            );
        };
        if let Some(pod) = private
            .pod
            .as_ref()
            .filter(|p| !p.name.is_empty() && !p.uid.is_empty())
        {
            extra("pod-name", &pod.name);
            extra("pod-uid", &pod.uid);
        }
        if let Some(node) = private.node.as_ref().filter(|n| !n.name.is_empty()) {
            extra("node-name", &node.name);
            if !node.uid.is_empty() {
                extra("node-uid", &node.uid);
            }
        }
        if !claims.jti.is_empty() {
            extra("credential-id", &format!("JTI={}", claims.jti));
        }
        Ok(user)
    }

    /// A legacy token's checks.
    fn legacy(&self, token: &str, claims: &Claims) -> Result<UserInfo, String> {
        for (value, missing) in [
            (&claims.sub, "sub claim is missing"),
            (&claims.legacy_namespace, "namespace claim is missing"),
            (&claims.legacy_secret, "secretName claim is missing"),
            (
                &claims.legacy_account,
                "serviceAccountName claim is missing",
            ),
            (
                &claims.legacy_account_uid,
                "serviceAccountUID claim is missing",
            ),
        ] {
            if value.is_empty() {
                return Err(missing.into());
            }
        }
        let namespace = &claims.legacy_namespace;
        let name = &claims.legacy_account;
        if claims.sub != subject(namespace, name) {
            return Err("sub claim is invalid".into());
        }
        let account = Ref {
            name: name.clone(),
            uid: claims.legacy_account_uid.clone(),
        };
        if !self.tokens.lookup {
            return Ok(account_user(namespace, &account));
        }
        let secret_name = &claims.legacy_secret;
        let secret = (self.objects.get("secrets", Some(namespace), secret_name))
            .ok()
            .flatten()
            .filter(|secret| meta_str(secret, "deletionTimestamp").is_none())
            .ok_or("Token has been invalidated")?;
        let stored = (secret.pointer("/data/token").and_then(Value::as_str))
            .and_then(|token| base64::engine::general_purpose::STANDARD.decode(token).ok())
            .unwrap_or_default();
        if !ring_eq(&stored, token.as_bytes()) {
            return Err("Token does not match server's copy".into());
        }
        let live = self.get("serviceaccounts", Some(namespace), name)?;
        if meta_str(&live, "deletionTimestamp").is_some() {
            return Err(format!(
                "ServiceAccount {namespace}/{name} has been deleted"
            ));
        }
        let live_uid = meta_str(&live, "uid").unwrap_or_default();
        if live_uid != account.uid {
            return Err(format!(
                "ServiceAccount UID ({live_uid}) does not match claim ({})",
                account.uid
            ));
        }
        let label = |name: &str| {
            (secret.pointer("/metadata/labels").and_then(|l| l.get(name)))
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let invalid = label(INVALID_SINCE).is_some();
        super::legacy::mark_used(&self.objects, namespace, secret_name, label(LAST_USED));
        if invalid {
            return Err(format!(
                "the token in secret {namespace}/{secret_name} for service account {namespace}/{name} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '{INVALID_SINCE}' label from the secret to temporarily allow use of this token"
            ));
        }
        Ok(account_user(namespace, &account))
    }

    /// The object, or the error kube's getter gives for one not found.
    fn get(&self, plural: &str, namespace: Option<&str>, name: &str) -> Result<Value, String> {
        self.objects
            .get(plural, namespace, name)?
            .ok_or_else(|| format!("{plural} {name:?} not found"))
    }
}

impl Method for ServiceAccountTokens {
    fn authenticate(&self, request: &Request<'_>) -> Outcome {
        let Some(token) = request.bearer_token() else {
            return Outcome::NotPresented;
        };
        // A token remembered is one of this method's, verified: no need to read it again.
        let claims = match self.remembered(token) {
            Some(claims) => Ok(claims),
            None => {
                let Some(issuer) = issuer(token) else {
                    return Outcome::NotPresented;
                };
                if issuer != LEGACY_ISSUER && !self.tokens.issuers.contains(&issuer) {
                    return Outcome::NotPresented;
                }
                self.verified(token)
            }
        };
        match claims.and_then(|claims| self.user(token, &claims, request.audiences)) {
            Ok((user, audiences)) => Outcome::UserFor(user, audiences),
            Err(why) => Outcome::Rejected(format!("service account token: {why}")),
        }
    }

    fn reads_bearer_tokens(&self) -> bool {
        // A development server's ephemeral issuer claims no other tokens.
        !self.tokens.development
    }
}

/// The user of a service account.
fn account_user(namespace: &str, account: &Ref) -> UserInfo {
    UserInfo {
        name: subject(namespace, &account.name),
        uid: account.uid.clone(),
        groups: vec![
            "system:serviceaccounts".to_owned(),
            format!("system:serviceaccounts:{namespace}"),
        ],
        extra: Default::default(),
    }
}

/// Whether `object` was marked deleted before `before` (seconds since the epoch).
fn deleted(object: &Value, before: i64) -> bool {
    meta_str(object, "deletionTimestamp")
        .and_then(|at| humantime::parse_rfc3339(at).ok())
        .and_then(|at| at.duration_since(UNIX_EPOCH).ok())
        .is_some_and(|at| (at.as_secs() as i64) < before)
}

/// The unverified `iss` of a JWT, if `token` is one (kube's `hasCorrectIssuer`: three
/// parts, a JSON payload in unpadded base64url).
fn issuer(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let claims: Value = serde_json::from_slice(&payload).ok()?;
    claims.get("iss")?.as_str().map(str::to_owned)
}

/// Whether two secrets are equal, in time that does not depend on where they differ.
fn ring_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_jwts_name_an_issuer() {
        let payload = URL_SAFE_NO_PAD.encode(r#"{"iss":"https://kapi"}"#);
        assert_eq!(
            issuer(&format!("e30.{payload}.sig")).as_deref(),
            Some("https://kapi")
        );
        assert_eq!(issuer("abc"), None);
        assert_eq!(issuer(&format!("e30.{payload}.sig.more")), None);
        assert_eq!(issuer("e30.bm90IGpzb24.sig"), None);
    }

    #[test]
    fn deletion_counts_after_a_minute() {
        let object = serde_json::json!({"metadata": {"deletionTimestamp": "1970-01-01T00:01:40Z"}});
        assert!(!deleted(&object, 100));
        assert!(deleted(&object, 101));
        assert!(!deleted(&serde_json::json!({}), i64::MAX));
        assert!(ring_eq(b"abc", b"abc") && !ring_eq(b"abc", b"abd") && !ring_eq(b"a", b"ab"));
    }
}
