//! Legacy tokens, kept in Secrets of type `kubernetes.io/service-account-token`: what kube's
//! token controller writes into such a Secret (a token that never expires, the CA bundle,
//! the namespace), and the day of last use kube's authenticator records on it.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::authenticator::LAST_USED;
use super::claims::{self, Ref};
use super::{Objects, SigningKey};
use kapi_registry::Target;

/// The Secret type holding a legacy token.
pub const SECRET_TYPE: &str = "kubernetes.io/service-account-token";
/// The annotation naming the Secret's service account.
pub const ACCOUNT_NAME: &str = "kubernetes.io/service-account.name";
/// The annotation naming the service account's uid.
pub const ACCOUNT_UID: &str = "kubernetes.io/service-account.uid";

/// A legacy token for `account` kept in the Secret `secret` of `namespace`.
pub fn token(key: &SigningKey, namespace: &str, account: &Ref, secret: &str) -> String {
    key.sign(&claims::legacy(namespace, account, secret))
}

/// `YYYY-MM-DD` of `at`, in UTC.
fn day(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(at).to_string()[..10].to_owned()
}

/// Records today as the last use of the legacy token in `namespace`/`secret`, whose label
/// says `current`, unless it says today or tomorrow already (kube's tolerance of clocks a
/// day apart). Written in the background, as kube patches it: authentication does not
/// wait, and a failure is only logged.
pub(super) fn mark_used(objects: &Objects, namespace: &str, secret: &str, current: Option<String>) {
    let now = SystemTime::now();
    let today = day(now);
    let tomorrow = day(now + Duration::from_secs(24 * 60 * 60));
    if current.is_some_and(|day| day == today || day == tomorrow) {
        return;
    }
    let (Some(registry), Ok(runtime)) = (
        objects.registry.upgrade(),
        tokio::runtime::Handle::try_current(),
    ) else {
        return;
    };
    let (namespace, secret) = (namespace.to_owned(), secret.to_owned());
    runtime.spawn(async move {
        let Some(kind) = registry.scheme().by_resource("", "secrets") else {
            return;
        };
        let target = Target {
            kind: &kind,
            version: "v1",
            namespace: Some(&namespace),
        };
        let marked = registry.change_stored(target, &secret, false, |object, _| {
            let metadata = &mut object["metadata"];
            if !metadata["labels"].is_object() {
                metadata["labels"] = Value::Object(Default::default());
            }
            metadata["labels"][LAST_USED] = Value::from(today.clone());
            Ok(())
        });
        if let Err(error) = marked.await {
            tracing::warn!(%error, namespace, secret, "cannot record a legacy token's use");
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn days_are_utc_dates() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(86_399);
        assert_eq!(super::day(at), "1970-01-01");
    }
}
