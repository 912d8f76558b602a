//! kube-controller-manager's tokens controller (`serviceaccount-token`, feature `builtin`):
//! every Secret of type `kubernetes.io/service-account-token` that names a service account
//! (`kubernetes.io/service-account.name`) holds a legacy token of that account, the CA
//! bundle (`ca.crt`, when the server has one) and the namespace, and carries the account's
//! uid; one whose account is gone, or is another account of the same name (the uid
//! differs), is deleted, so that deleting a ServiceAccount deletes its token Secrets. It
//! never makes a Secret. A pass does nothing while neither Secrets nor ServiceAccounts
//! changed.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::serviceaccount::Tokens;
use crate::serviceaccount::claims::Ref;
use crate::serviceaccount::legacy::{ACCOUNT_NAME, ACCOUNT_UID, SECRET_TYPE, token};
use kapi_core::error::ApiError;
use kapi_core::meta::{DeleteOptions, Preconditions};
use kapi_core::unstructured::meta_str;
use kapi_registry::{Passes, Registry, Target};

/// The controller.
pub struct TokensController {
    tokens: Arc<Tokens>,
    /// `ca.crt` (PEM), when the server has a CA bundle.
    ca: Option<String>,
    passes: Passes,
}

impl TokensController {
    /// Fills Secrets with tokens of `tokens`' signing key and `ca`.
    pub fn new(tokens: Arc<Tokens>, ca: Option<String>) -> TokensController {
        TokensController {
            tokens,
            ca,
            passes: Passes::default(),
        }
    }

    /// One pass over the token Secrets; whether work is left.
    pub async fn sync(&self, registry: &Registry) -> Result<bool, ApiError> {
        let scheme = registry.scheme();
        let (Some(secrets), Some(accounts), Some(key)) = (
            scheme.by_resource("", "secrets"),
            scheme.by_resource("", "serviceaccounts"),
            self.tokens.signing_key.as_ref(),
        ) else {
            return Ok(false);
        };
        let Some(stamp) = self.passes.start(registry, &[&secrets, &accounts]) else {
            return Ok(false);
        };
        let all = Target {
            kind: &secrets,
            version: "v1",
            namespace: None,
        };
        let options = super::manager_writes();
        let mut left = false;
        for item in &registry.list(all, &Default::default()).await?.items {
            let secret = item.value();
            if secret["type"] != SECRET_TYPE || meta_str(&secret, "deletionTimestamp").is_some() {
                continue;
            }
            let annotations = &secret["metadata"]["annotations"];
            let account_name = annotations[ACCOUNT_NAME].as_str().unwrap_or_default();
            let (Some(namespace), Some(name), Some(uid)) = (
                meta_str(&secret, "namespace"),
                meta_str(&secret, "name"),
                meta_str(&secret, "uid"),
            ) else {
                continue;
            };
            if account_name.is_empty() {
                continue;
            }
            let target = Target {
                namespace: Some(namespace),
                ..all
            };
            let account_target = Target {
                kind: &accounts,
                version: "v1",
                namespace: Some(namespace),
            };
            let wanted_uid = annotations[ACCOUNT_UID].as_str().unwrap_or_default();
            let account = match registry.get(account_target, account_name, None).await {
                Ok(account) => Some(account),
                Err(ApiError::NotFound { .. }) => None,
                Err(error) => return Err(error),
            };
            let account_uid = account.as_ref().and_then(|a| meta_str(a, "uid"));
            let written = match account_uid {
                Some(account_uid) if wanted_uid.is_empty() || wanted_uid == account_uid => {
                    let account = Ref {
                        name: account_name.to_owned(),
                        uid: account_uid.to_owned(),
                    };
                    match self.filled(&secret, key, namespace, &account) {
                        Some(filled) => (registry.update(target, name, filled, None, &options))
                            .await
                            .map(|_| ()),
                        None => continue,
                    }
                }
                // Its account is gone, or is another of the same name.
                _ => {
                    let delete = DeleteOptions {
                        preconditions: Some(Preconditions {
                            uid: Some(uid.to_owned()),
                            resource_version: None,
                        }),
                        ..DeleteOptions::default()
                    };
                    registry.delete(target, name, &delete).await.map(|_| ())
                }
            };
            match written {
                Ok(()) | Err(ApiError::NotFound { .. }) => {}
                Err(ApiError::Conflict { .. }) => left = true,
                Err(error) => {
                    tracing::warn!(%error, namespace, secret = name, "cannot keep a service-account token Secret");
                    left = true;
                }
            }
        }
        self.passes.finish(stamp, left);
        Ok(left)
    }

    /// `secret` with what it lacks, if it lacks anything.
    fn filled(
        &self,
        secret: &Value,
        key: &crate::serviceaccount::SigningKey,
        namespace: &str,
        account: &Ref,
    ) -> Option<Value> {
        let mut filled = secret.clone();
        if !filled["data"].is_object() {
            filled["data"] = json!({});
        }
        let data = &mut filled["data"];
        let empty = |value: &Value| value.as_str().is_none_or(str::is_empty);
        if let Some(ca) = &self.ca {
            let ca = STANDARD.encode(ca);
            if data["ca.crt"] != ca.as_str() {
                data["ca.crt"] = Value::from(ca);
            }
        }
        if empty(&data["namespace"]) {
            data["namespace"] = Value::from(STANDARD.encode(namespace));
        }
        if empty(&data["token"]) {
            let name = meta_str(secret, "name").unwrap_or_default();
            data["token"] = Value::from(STANDARD.encode(token(key, namespace, account, name)));
        }
        let annotations = &mut filled["metadata"]["annotations"];
        annotations[ACCOUNT_NAME] = Value::from(account.name.clone());
        annotations[ACCOUNT_UID] = Value::from(account.uid.clone());
        (filled != *secret).then_some(filled)
    }
}
