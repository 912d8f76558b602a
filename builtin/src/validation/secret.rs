//! Secrets (kube's `ValidateSecret` and `ValidateSecretUpdate`): keys, size, the keys each
//! type requires, and what an immutable Secret keeps.

use kapi::error::{FieldError, FieldErrorType};
use kapi::validation::{self as v, Path};

use super::{forbidden, immutable, invalid_each, required};
use crate::api::core::v1::Secret;

/// kube's `MaxSecretSize`.
const MAX_SIZE: usize = 1024 * 1024;

/// kube's `ValidateSecret` (`stringData` is already folded into `data`).
pub(crate) fn secret(secret: &Secret) -> Vec<FieldError> {
    let data = Path::new("data");
    let mut errors = Vec::new();
    let mut size = 0;
    for (key, value) in &secret.data {
        errors.extend(invalid_each(v::config_map_key(key), key, &data.key(key)));
        size += value.0.len();
    }
    if size > MAX_SIZE {
        let detail = format!("must have at most {MAX_SIZE} bytes");
        errors.push(FieldError::new(
            FieldErrorType::TooLong,
            &data,
            None,
            detail,
        ));
    }
    let has = |key: &str| secret.data.contains_key(key);
    let missing = |key: &str| required(&data.key(key), "");
    match secret.r#type.as_str() {
        "kubernetes.io/service-account-token" => {
            let name = (secret.metadata.annotations.as_ref())
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .filter(|name| !name.is_empty());
            if name.is_none() {
                let at = Path::new("metadata")
                    .child("annotations")
                    .key("kubernetes.io/service-account.name");
                errors.push(required(&at, ""));
            }
        }
        kind @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
            let key = match kind {
                "kubernetes.io/dockercfg" => ".dockercfg",
                _ => ".dockerconfigjson",
            };
            match secret.data.get(key) {
                None => errors.push(missing(key)),
                Some(bytes) => {
                    if let Err(error) = serde_json::from_slice::<
                        serde_json::Map<String, serde_json::Value>,
                    >(&bytes.0)
                    {
                        let at = data.key(key);
                        errors.push(FieldError::invalid(
                            &at,
                            "<secret contents redacted>",
                            error.to_string(),
                        ));
                    }
                }
            }
        }
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            errors.push(missing("username"));
            errors.push(missing("password"));
        }
        "kubernetes.io/ssh-auth"
            if secret
                .data
                .get("ssh-privatekey")
                .is_none_or(|k| k.0.is_empty()) =>
        {
            errors.push(missing("ssh-privatekey"));
        }
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !has(key) {
                    errors.push(missing(key));
                }
            }
        }
        _ => {}
    }
    errors
}

/// kube's `ValidateSecretUpdate`.
pub(crate) fn secret_update(new: &Secret, old: &Secret) -> Vec<FieldError> {
    let mut errors = immutable(&new.r#type, &old.r#type, &Path::new("type"));
    if old.immutable == Some(true) {
        let message = "field is immutable when `immutable` is set";
        if new.immutable != Some(true) {
            errors.push(forbidden(&Path::new("immutable"), message));
        }
        if new.data != old.data {
            errors.push(forbidden(&Path::new("data"), message));
        }
    }
    errors.extend(secret(new));
    errors
}
