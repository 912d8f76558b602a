//! What a service-account token says (kube's `pkg/serviceaccount` claims): the claims the
//! TokenRequest API writes into a bound token, the flat claims of a legacy token kept in a
//! Secret, and both read back from a verified token.
//!
//! Claims are written with their keys sorted at every level and `aud` always a list, as
//! kube's JSON of them is, so that a token of kapi and one of kube-apiserver look alike.

use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The issuer of legacy tokens.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";

/// The `sub` (and user name) of a service account.
pub fn subject(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// An object a token names: its name and uid.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Ref {
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Its uid (empty: not known, for a bound Pod's Node that was not found).
    #[serde(default)]
    pub uid: String,
}

impl Ref {
    /// `{name, uid}`, each left out when empty.
    fn json(&self) -> Value {
        let mut out = Map::new();
        if !self.name.is_empty() {
            out.insert("name".into(), json!(self.name));
        }
        if !self.uid.is_empty() {
            out.insert("uid".into(), json!(self.uid));
        }
        Value::Object(out)
    }
}

/// The objects a bound token is bound to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Binding {
    /// The Pod it was issued for.
    pub pod: Option<Ref>,
    /// The Secret it was issued for.
    pub secret: Option<Ref>,
    /// The Node it was issued for, or the node of its Pod.
    pub node: Option<Ref>,
}

/// What a bound token is issued with.
pub struct Issue<'a> {
    /// `iss`.
    pub issuer: &'a str,
    /// `aud`.
    pub audiences: &'a [String],
    /// Seconds since the epoch: `iat` and `nbf`.
    pub now: i64,
    /// Seconds the token lives (`exp` - `now`).
    pub lifetime: i64,
    /// Seconds after `now` past which its use is reported stale (kube's extended tokens).
    pub warn_after: Option<i64>,
    /// The service account's namespace.
    pub namespace: &'a str,
    /// The service account.
    pub account: &'a Ref,
    /// What it is bound to.
    pub binding: &'a Binding,
    /// `jti`.
    pub id: &'a str,
}

impl Issue<'_> {
    /// The claims, keys sorted.
    pub fn claims(&self) -> Value {
        let mut private = Map::new();
        private.insert("namespace".into(), json!(self.namespace));
        if let Some(node) = &self.binding.node {
            private.insert("node".into(), node.json());
        }
        if let Some(pod) = &self.binding.pod {
            private.insert("pod".into(), pod.json());
        }
        if let Some(secret) = &self.binding.secret {
            private.insert("secret".into(), secret.json());
        }
        private.insert("serviceaccount".into(), self.account.json());
        if let Some(warn_after) = self.warn_after {
            private.insert("warnafter".into(), json!(self.now + warn_after));
        }
        let mut claims = Map::new();
        if !self.audiences.is_empty() {
            claims.insert("aud".into(), json!(self.audiences));
        }
        claims.insert("exp".into(), json!(self.now + self.lifetime));
        claims.insert("iat".into(), json!(self.now));
        claims.insert("iss".into(), json!(self.issuer));
        claims.insert("jti".into(), json!(self.id));
        claims.insert("kubernetes.io".into(), Value::Object(private));
        claims.insert("nbf".into(), json!(self.now));
        claims.insert(
            "sub".into(),
            json!(subject(self.namespace, &self.account.name)),
        );
        Value::Object(claims)
    }
}

/// The claims of a legacy token for the Secret `secret` of `account` (kube's token
/// controller): no expiry, no audience.
pub fn legacy(namespace: &str, account: &Ref, secret: &str) -> Value {
    json!({
        "iss": LEGACY_ISSUER,
        "kubernetes.io/serviceaccount/namespace": namespace,
        "kubernetes.io/serviceaccount/secret.name": secret,
        "kubernetes.io/serviceaccount/service-account.name": account.name,
        "kubernetes.io/serviceaccount/service-account.uid": account.uid,
        "sub": subject(namespace, &account.name),
    })
}

/// `aud`: one string or a list.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(untagged)]
pub enum Audiences {
    /// None given.
    #[default]
    None,
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

impl Audiences {
    /// As a list.
    pub fn list(&self) -> Vec<String> {
        match self {
            Audiences::None => Vec::new(),
            Audiences::One(one) => vec![one.clone()],
            Audiences::Many(many) => many.clone(),
        }
    }
}

/// The private claims of a bound token.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Private {
    /// The service account's namespace.
    #[serde(default)]
    pub namespace: String,
    /// The service account.
    #[serde(default)]
    pub serviceaccount: Ref,
    /// A bound Pod.
    pub pod: Option<Ref>,
    /// A bound Secret.
    pub secret: Option<Ref>,
    /// A bound Node, or a bound Pod's.
    pub node: Option<Ref>,
    /// When its use starts being reported stale.
    pub warnafter: Option<i64>,
}

/// A verified token's claims, of either kind.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Claims {
    /// `iss`.
    #[serde(default)]
    pub iss: String,
    /// `sub`.
    #[serde(default)]
    pub sub: String,
    /// `aud`.
    #[serde(default)]
    pub aud: Audiences,
    /// `exp`.
    pub exp: Option<i64>,
    /// `nbf`.
    pub nbf: Option<i64>,
    /// `iat`.
    pub iat: Option<i64>,
    /// `jti`.
    #[serde(default)]
    pub jti: String,
    /// A bound token's private claims.
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: Option<Private>,
    /// A legacy token's namespace.
    #[serde(rename = "kubernetes.io/serviceaccount/namespace", default)]
    pub legacy_namespace: String,
    /// A legacy token's Secret.
    #[serde(rename = "kubernetes.io/serviceaccount/secret.name", default)]
    pub legacy_secret: String,
    /// A legacy token's service account.
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.name", default)]
    pub legacy_account: String,
    /// A legacy token's service account's uid.
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.uid", default)]
    pub legacy_account_uid: String,
}

/// Seconds of clock skew the time claims tolerate (go-jose's default, which kube uses).
pub const LEEWAY: i64 = 60;

impl Claims {
    /// kube's time checks of a bound token at `now` (seconds), with [`LEEWAY`].
    pub fn check_times(&self, now: i64) -> Result<(), &'static str> {
        if self.nbf.is_some_and(|nbf| now + LEEWAY < nbf) {
            return Err("service account token is not valid yet");
        }
        if self.exp.is_some_and(|exp| now - LEEWAY > exp) {
            return Err("service account token has expired");
        }
        if self.iat.is_some_and(|iat| now + LEEWAY < iat) {
            return Err("service account token is issued in the future");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_claims_are_written_as_kube_writes_them() {
        let account = Ref {
            name: "robot".into(),
            uid: "sa-uid".into(),
        };
        let binding = Binding {
            pod: Some(Ref {
                name: "p".into(),
                uid: "pod-uid".into(),
            }),
            secret: None,
            node: Some(Ref {
                name: "n1".into(),
                uid: String::new(),
            }),
        };
        let claims = Issue {
            issuer: "https://kapi",
            audiences: &["api".to_owned()],
            now: 1000,
            lifetime: 3600,
            warn_after: Some(3607),
            namespace: "default",
            account: &account,
            binding: &binding,
            id: "id-1",
        }
        .claims();
        assert_eq!(
            claims.to_string(),
            r#"{"aud":["api"],"exp":4600,"iat":1000,"iss":"https://kapi","jti":"id-1","kubernetes.io":{"namespace":"default","node":{"name":"n1"},"pod":{"name":"p","uid":"pod-uid"},"serviceaccount":{"name":"robot","uid":"sa-uid"},"warnafter":4607},"nbf":1000,"sub":"system:serviceaccount:default:robot"}"#
        );
        let read: Claims = serde_json::from_value(claims).unwrap();
        assert_eq!(read.aud.list(), ["api"]);
        assert_eq!(read.kubernetes.unwrap().pod.unwrap().uid, "pod-uid");
    }

    #[test]
    fn times_allow_a_minute_of_skew() {
        let claims = Claims {
            exp: Some(100),
            nbf: Some(50),
            iat: Some(50),
            ..Claims::default()
        };
        assert_eq!(claims.check_times(160), Ok(()));
        assert_eq!(
            claims.check_times(161),
            Err("service account token has expired")
        );
        assert_eq!(
            claims.check_times(-11),
            Err("service account token is not valid yet")
        );
        let legacy: Claims = serde_json::from_value(legacy(
            "ns",
            &Ref {
                name: "a".into(),
                uid: "u".into(),
            },
            "s",
        ))
        .unwrap();
        assert_eq!(legacy.iss, LEGACY_ISSUER);
        assert_eq!(legacy.legacy_secret, "s");
        assert_eq!(legacy.check_times(i64::MAX / 2), Ok(()));
    }
}
