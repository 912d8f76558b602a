//! kube's `DefaultTolerationSeconds` plugin (`plugin/pkg/admission/defaulttolerationseconds`):
//! a Pod that does not tolerate `node.kubernetes.io/not-ready` or
//! `node.kubernetes.io/unreachable` with `NoExecute` tolerates each for 300 seconds.

use serde_json::{Value, json};

use super::{Plugin, is};
use kapi_core::error::ApiError;
use kapi_registry::Registry;
use kapi_registry::admission::{Attributes, Operation};

/// The plugin.
pub(super) struct DefaultTolerationSeconds;

/// kube's `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds` defaults.
const SECONDS: i64 = 300;

const TAINTS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];

#[async_trait::async_trait]
impl Plugin for DefaultTolerationSeconds {
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        let write = matches!(attributes.operation, Operation::Create | Operation::Update);
        (write && is(attributes, "", "pods"), false)
    }

    async fn admit(
        &self,
        _registry: &Registry,
        _attributes: &Attributes<'_>,
        pod: &mut Value,
        _old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let existing = pod["spec"]["tolerations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // kube looks at the key and the effect only: an empty key or effect matches.
        let tolerates = |taint: &str| {
            existing.iter().any(|t| {
                let key = t["key"].as_str().unwrap_or_default();
                let effect = t["effect"].as_str().unwrap_or_default();
                (key.is_empty() || key == taint) && (effect.is_empty() || effect == "NoExecute")
            })
        };
        let added: Vec<Value> = (TAINTS.iter())
            .filter(|taint| !tolerates(taint))
            .map(|taint| {
                json!({"key": taint, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": SECONDS})
            })
            .collect();
        if !added.is_empty() {
            let mut all = existing;
            all.extend(added);
            pod["spec"]["tolerations"] = Value::Array(all);
        }
        Ok(())
    }
}
