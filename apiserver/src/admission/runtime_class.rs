//! kube's `RuntimeClass` plugin (`plugin/pkg/admission/runtimeclass`): a new Pod naming a
//! RuntimeClass gets the class's pod overhead and its scheduling (node selector and
//! tolerations merged into the Pod's); a node selector that contradicts the class's, an
//! overhead other than the class's, or a class that does not exist, is refused with kube's
//! 403 and messages.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Lister, Plugin, forbidden, get, is};
use kapi_core::error::ApiError;
use kapi_core::quantity::Quantity;
use kapi_registry::Registry;
use kapi_registry::admission::{Attributes, Operation};

const GROUP: &str = "node.k8s.io";

/// The plugin.
pub(super) struct RuntimeClass {
    classes: Lister,
}

impl Default for RuntimeClass {
    fn default() -> Self {
        RuntimeClass {
            classes: Lister::new(GROUP, "runtimeclasses"),
        }
    }
}

#[async_trait::async_trait]
impl Plugin for RuntimeClass {
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        let pods = attributes.operation == Operation::Create && is(attributes, "", "pods");
        (pods, pods)
    }

    async fn admit(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        pod: &mut Value,
        _old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let Some(class) = self.class_of(registry, attributes, pod).await? else {
            return Ok(());
        };
        if let Some(fixed) = class.pointer("/overhead/podFixed") {
            let given = pod["spec"].get("overhead").filter(|o| !o.is_null());
            if given.is_some_and(|given| !same_resources(given, fixed)) {
                return Err(overhead_mismatch(attributes, pod));
            }
            pod["spec"]["overhead"] = fixed.clone();
        }
        let Some(scheduling) = class.get("scheduling").filter(|s| !s.is_null()) else {
            return Ok(());
        };
        let wanted = scheduling["nodeSelector"].as_object().cloned();
        let selector = &mut pod["spec"]["nodeSelector"];
        match (selector.as_object_mut(), wanted) {
            (_, None) => {}
            (None, Some(wanted)) => *selector = Value::Object(wanted),
            (Some(selector), Some(wanted)) => {
                for (key, value) in wanted {
                    if let Some(given) = selector.get(&key)
                        && *given != value
                    {
                        let message = format!(
                            "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {}; pod.spec.nodeSelector[{key}] = {}",
                            value.as_str().unwrap_or_default(),
                            given.as_str().unwrap_or_default()
                        );
                        return Err(forbidden(attributes, Some(pod), message));
                    }
                    selector.insert(key, value);
                }
            }
        }
        if let Some(tolerations) = scheduling["tolerations"].as_array() {
            let given = pod["spec"]["tolerations"].as_array().cloned();
            let merged = merge_tolerations(given.unwrap_or_default(), tolerations.clone());
            pod["spec"]["tolerations"] = Value::Array(merged);
        }
        Ok(())
    }

    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        pod: Option<&Value>,
        _old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        let Some(pod) = pod else {
            return Ok(Vec::new());
        };
        let class = self.class_of(registry, attributes, pod).await?;
        let given = pod["spec"].get("overhead").filter(|o| !o.is_null());
        match class.as_ref().and_then(|c| c.pointer("/overhead/podFixed")) {
            Some(fixed) if !given.is_some_and(|given| same_resources(given, fixed)) => {
                Err(overhead_mismatch(attributes, pod))
            }
            None if given.is_some() => Err(forbidden(
                attributes,
                Some(pod),
                "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
            )),
            _ => Ok(Vec::new()),
        }
    }
}

impl RuntimeClass {
    /// The RuntimeClass the Pod names (none when it names none): from the lister, else
    /// read live, else 403.
    async fn class_of(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        pod: &Value,
    ) -> Result<Option<Value>, ApiError> {
        let Some(name) = pod["spec"]["runtimeClassName"].as_str() else {
            return Ok(None);
        };
        let classes = self.classes.objects(registry).await?;
        if let Some(class) = classes.named("", name) {
            return Ok(Some(class.clone()));
        }
        match get(registry, GROUP, "runtimeclasses", None, name).await {
            Some(class) => Ok(Some(class)),
            None => {
                let message = format!("pod rejected: RuntimeClass {name:?} not found");
                Err(forbidden(attributes, Some(pod), message))
            }
        }
    }
}

fn overhead_mismatch(attributes: &Attributes<'_>, pod: &Value) -> ApiError {
    let message = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";
    forbidden(attributes, Some(pod), message)
}

/// Whether two resource lists hold the same quantities (kube's semantic equality: `1` and
/// `1000m` are one CPU).
fn same_resources(a: &Value, b: &Value) -> bool {
    let parsed = |list: &Value| -> Option<BTreeMap<String, Quantity>> {
        (list.as_object().unwrap_or(&Map::new()).iter())
            .map(|(k, v)| Some((k.clone(), Quantity::parse(v.as_str()?).ok()?)))
            .collect()
    };
    match (parsed(a), parsed(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

/// kube's `tolerations.MergeTolerations`: both lists, less each toleration another one
/// kept tolerates a superset of (of two equal ones, the first stays).
fn merge_tolerations(first: Vec<Value>, second: Vec<Value>) -> Vec<Value> {
    let all: Vec<Value> = first.into_iter().chain(second).collect();
    let mut merged: Vec<Value> = Vec::new();
    for (i, toleration) in all.iter().enumerate() {
        if merged.iter().any(|kept| superset(kept, toleration)) {
            continue;
        }
        let later = all[i + 1..]
            .iter()
            .any(|other| other != toleration && superset(other, toleration));
        if !later {
            merged.push(toleration.clone());
        }
    }
    merged
}

/// kube's `isSuperset`: whether toleration `ss` tolerates whatever `t` does.
fn superset(ss: &Value, t: &Value) -> bool {
    if ss == t {
        return true;
    }
    let field = |v: &Value, f: &str| v[f].as_str().unwrap_or_default().to_owned();
    let (ss_key, ss_operator, ss_effect) =
        (field(ss, "key"), field(ss, "operator"), field(ss, "effect"));
    if field(t, "key") != ss_key && (!ss_key.is_empty() || ss_operator != "Exists") {
        return false;
    }
    if field(t, "effect") != ss_effect && !ss_effect.is_empty() {
        return false;
    }
    if ss_effect == "NoExecute"
        && let Some(limit) = ss["tolerationSeconds"].as_i64()
        && t["tolerationSeconds"].as_i64().is_none_or(|s| s > limit)
    {
        return false;
    }
    match ss_operator.as_str() {
        "Equal" | "" => field(t, "operator") == "Equal" && field(t, "value") == field(ss, "value"),
        "Exists" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tolerations_merge_as_kube_merges_them() {
        // kube's `TestMergeTolerations` cases, in part (pkg/util/tolerations).
        let exists_all = json!({"operator": "Exists"});
        let a = json!({"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"});
        let b = json!({"key": "foo", "operator": "Exists", "effect": "NoSchedule"});
        let c = json!({"key": "baz", "operator": "Equal", "value": "x"});
        assert_eq!(
            merge_tolerations(vec![a.clone()], vec![b.clone()]),
            vec![b.clone()]
        );
        assert_eq!(
            merge_tolerations(vec![a.clone(), c.clone()], vec![]),
            vec![a.clone(), c.clone()]
        );
        assert_eq!(
            merge_tolerations(vec![a.clone(), c], vec![exists_all.clone()]),
            vec![exists_all]
        );
        assert_eq!(merge_tolerations(vec![a.clone()], vec![a.clone()]), vec![a]);
    }

    #[test]
    fn overheads_compare_as_quantities() {
        assert!(same_resources(
            &json!({"cpu": "1"}),
            &json!({"cpu": "1000m"})
        ));
        assert!(!same_resources(&json!({"cpu": "1"}), &json!({"cpu": "2"})));
        assert!(!same_resources(
            &json!({"cpu": "1"}),
            &json!({"cpu": "1", "memory": "1Mi"})
        ));
    }
}
