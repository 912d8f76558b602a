//! kube's `ResourceQuota` plugin (`k8s.io/apiserver/pkg/admission/plugin/resourcequota`):
//! a create (or an update that grows a Service or a claim) is charged against every
//! ResourceQuota of its namespace whose `status.hard` limits what it uses, refused with
//! kube's 403 when it would exceed one; what it uses is added to the quota's
//! `status.used` before the object is stored, by compare-and-swap, so two writes at once
//! cannot both take the last of a quota. Nothing gives usage back but the quota
//! controller's recount (`controllers::resource_quota`), as in kube.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Lister, Plugin, forbidden, list};
use crate::quota::{self, Usage};
use kapi_core::error::ApiError;
use kapi_registry::admission::{Attributes, Operation};
use kapi_registry::{Registry, Target};

/// The plugin.
pub(super) struct ResourceQuota {
    quotas: Lister,
}

impl Default for ResourceQuota {
    fn default() -> Self {
        ResourceQuota {
            quotas: Lister::new("", "resourcequotas"),
        }
    }
}

#[async_trait::async_trait]
impl Plugin for ResourceQuota {
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        let info = attributes.kind.info;
        let write = matches!(attributes.operation, Operation::Create | Operation::Update);
        let namespaced = attributes.namespace.is_some_and(|n| !n.is_empty());
        let handled = write
            && namespaced
            && attributes.subresource.is_empty()
            && quota::counted(info.group, info.plural)
            && (attributes.operation == Operation::Create
                || matches!(
                    (info.group, info.plural),
                    ("", "services" | "persistentvolumeclaims")
                ));
        (false, handled)
    }

    /// No ResourceQuota in any namespace: nothing to charge (a quota is enforced only once
    /// the quota controller, which reads the same cache, wrote its `status.hard`).
    fn idle(&self, registry: &Registry) -> bool {
        self.quotas.is_empty(registry)
    }

    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        let (Some(object), Some(namespace)) = (object, attributes.namespace) else {
            return Ok(Vec::new());
        };
        let info = attributes.kind.info;
        let quotas = list(registry, "", "resourcequotas", Some(namespace)).await?;
        if quotas.is_empty() {
            return Ok(Vec::new());
        }
        let (group, plural) = (info.group, info.plural);
        let usage = quota::usage(group, plural, object);
        // An update is charged what it adds, to the quotas its old object counted against.
        let old_usage = old.map(|old| quota::usage(group, plural, old));
        for stored in &quotas {
            let hard = quota::from_json(&stored["status"]["hard"]);
            let restricted: BTreeSet<String> = (usage.keys())
                .filter(|k| hard.contains_key(*k))
                .cloned()
                .collect();
            if restricted.is_empty() || !quota::scopes_match(stored, group, plural, object) {
                continue;
            }
            let name = stored["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if (group, plural) == ("", "pods")
                && let Some(message) = quota::pod_constraints(object, &restricted)
            {
                return Err(forbidden(
                    attributes,
                    Some(object),
                    format!("failed quota: {name}: {message}"),
                ));
            }
            let used = quota::from_json(&stored["status"]["used"]);
            if restricted.iter().any(|k| !used.contains_key(k)) {
                let listed: Vec<&str> = restricted.iter().map(String::as_str).collect();
                let message = format!(
                    "status unknown for quota: {name}, resources: {}",
                    listed.join(",")
                );
                return Err(forbidden(attributes, Some(object), message));
            }
            let mut requested = Usage::new();
            for key in &restricted {
                let mut amount = usage[key].clone();
                if let (Some(old_usage), Some(old)) = (&old_usage, old)
                    && quota::scopes_match(stored, group, plural, old)
                    && let Some(before) = old_usage.get(key)
                {
                    amount.sub(before);
                }
                if amount.sign() > 0 {
                    requested.insert(key.clone(), amount);
                }
            }
            if requested.is_empty() {
                continue;
            }
            charge(registry, attributes, object, &name, namespace, &requested).await?;
        }
        Ok(Vec::new())
    }
}

/// Adds `requested` to quota `name`'s `status.used`, or refuses when that would exceed
/// its `status.hard` (kube's `exceeded quota` message, naming what would exceed).
async fn charge(
    registry: &Registry,
    attributes: &Attributes<'_>,
    object: &Value,
    name: &str,
    namespace: &str,
    requested: &Usage,
) -> Result<(), ApiError> {
    let Some(kind) = registry.scheme().by_resource("", "resourcequotas") else {
        return Ok(());
    };
    let target = Target {
        kind: &kind,
        version: "v1",
        namespace: Some(namespace),
    };
    let change = |stored: &mut Value, _revision: u64| {
        let hard = quota::from_json(&stored["status"]["hard"]);
        let mut used = quota::from_json(&stored["status"]["used"]);
        let mut exceeded = Vec::new();
        for (key, amount) in requested {
            let total = used.entry(key.clone()).or_default();
            total.add(amount);
            if hard.get(key).is_some_and(|limit| *total > *limit) {
                exceeded.push(key.clone());
            }
        }
        if !exceeded.is_empty() {
            let list = |from: &Usage, subtract: Option<&Usage>| {
                let parts: Vec<String> = (exceeded.iter())
                    .map(|key| {
                        let mut value = from.get(key).cloned().unwrap_or_default();
                        if let Some(amount) = subtract.and_then(|s| s.get(key)) {
                            value.sub(amount);
                        }
                        format!("{key}={value}")
                    })
                    .collect();
                parts.join(",")
            };
            let message = format!(
                "exceeded quota: {name}, requested: {}, used: {}, limited: {}",
                list(requested, None),
                list(&used, Some(requested)),
                list(&hard, None),
            );
            return Err(forbidden(attributes, Some(object), message));
        }
        stored["status"]["used"] = quota::to_json(&used);
        Ok(())
    };
    registry
        .change_stored(target, name, attributes.dry_run, change)
        .await
        .map(|_| ())
}
