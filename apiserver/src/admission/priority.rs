//! kube's `Priority` plugin (`plugin/pkg/admission/priority`): a Pod's `priority` and
//! `preemptionPolicy` from its `priorityClassName` (or the global default class; priority
//! 0 and `PreemptLowerPriority` when there is none), a value the Pod gives refused when it
//! is not the class's; and one global default PriorityClass at most.

use serde_json::{Value, json};

use super::{Lister, Plugin, forbidden, is};
use kapi_core::error::ApiError;
use kapi_registry::Registry;
use kapi_registry::admission::{Attributes, Operation};

/// The plugin.
pub(super) struct Priority {
    classes: Lister,
}

impl Default for Priority {
    fn default() -> Self {
        Priority {
            classes: Lister::new("scheduling.k8s.io", "priorityclasses"),
        }
    }
}

const PREEMPT_LOWER: &str = "PreemptLowerPriority";

#[async_trait::async_trait]
impl Plugin for Priority {
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        let write = matches!(attributes.operation, Operation::Create | Operation::Update);
        let pods = write && is(attributes, "", "pods");
        let classes = write && is(attributes, "scheduling.k8s.io", "priorityclasses");
        (pods, classes)
    }

    async fn admit(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        pod: &mut Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        if attributes.operation == Operation::Update {
            // The stored values stay when the update leaves them out.
            for field in ["priority", "preemptionPolicy"] {
                if pod["spec"].get(field).is_none_or(Value::is_null)
                    && let Some(value) = old.and_then(|old| old["spec"].get(field))
                {
                    pod["spec"][field] = value.clone();
                }
            }
            return Ok(());
        }
        let classes = self.classes.objects(registry).await?;
        let classes = classes.of("");
        let name = pod["spec"]["priorityClassName"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let (priority, policy) = if name.is_empty() {
            // The global default with the lowest value, if any.
            let default = (classes.iter())
                .filter(|c| c["globalDefault"] == json!(true))
                .min_by_key(|c| c["value"].as_i64().unwrap_or(0));
            match default {
                Some(class) => {
                    pod["spec"]["priorityClassName"] = class["metadata"]["name"].clone();
                    (class["value"].as_i64().unwrap_or(0), policy_of(class))
                }
                None => (0, PREEMPT_LOWER.to_owned()),
            }
        } else {
            let class = (classes.iter()).find(|c| c["metadata"]["name"] == name.as_str());
            let Some(class) = class else {
                let message = format!("no PriorityClass with name {name} was found");
                return Err(forbidden(attributes, Some(pod), message));
            };
            (class["value"].as_i64().unwrap_or(0), policy_of(class))
        };
        if let Some(given) = pod["spec"].get("priority").and_then(Value::as_i64)
            && given != priority
        {
            let message = format!(
                "the integer value of priority ({given}) must not be provided in pod spec; \
                 priority admission controller computed {priority} from the given PriorityClass name"
            );
            return Err(forbidden(attributes, Some(pod), message));
        }
        if let Some(given) = pod["spec"].get("preemptionPolicy").and_then(Value::as_str)
            && given != policy
        {
            let message = format!(
                "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; \
                 priority admission controller computed {policy} from the given PriorityClass name"
            );
            return Err(forbidden(attributes, Some(pod), message));
        }
        pod["spec"]["priority"] = json!(priority);
        pod["spec"]["preemptionPolicy"] = json!(policy);
        Ok(())
    }

    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        class: Option<&Value>,
        _old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        let Some(class) = class.filter(|c| c["globalDefault"] == json!(true)) else {
            return Ok(Vec::new());
        };
        let name = class["metadata"]["name"].as_str().unwrap_or_default();
        let classes = self.classes.objects(registry).await?;
        let other = (classes.of("").iter())
            .filter(|c| c["globalDefault"] == json!(true))
            .find(|c| c["metadata"]["name"] != name);
        match other {
            Some(other) => {
                let existing = other["metadata"]["name"].as_str().unwrap_or_default();
                let message = format!(
                    "PriorityClass {existing} is already marked as default. Only one default can exist"
                );
                Err(forbidden(attributes, Some(class), message))
            }
            None => Ok(Vec::new()),
        }
    }
}

/// A class's `preemptionPolicy` (defaulted to `PreemptLowerPriority`).
fn policy_of(class: &Value) -> String {
    class["preemptionPolicy"]
        .as_str()
        .unwrap_or(PREEMPT_LOWER)
        .to_owned()
}
