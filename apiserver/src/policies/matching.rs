//! Which writes a policy and its bindings apply to (kube's `policy/matching`): the rules of
//! the policy's `matchConstraints` and, when it has them, of the binding's
//! `matchResources` (both must match; the version the objects are seen in is the
//! policy's), each rule optionally naming the objects (`resourceNames`), and rules that
//! exclude; no rules at all match everything. Selectors are the webhooks' (`webhooks::
//! matching`).

use serde_json::Value;

use kapi_core::error::ApiError;
use kapi_kinds::admissionregistration::{MatchResources, NamedRuleWithOperations};
use kapi_registry::Registry;
use kapi_registry::admission::Attributes;

use crate::webhooks::matching::{objects_selected, rule_matches, version_named};
use crate::webhooks::namespace_selected;

/// Whether `rule` names this write in `version`, its object named `name` included.
fn named_rule(
    rule: &NamedRuleWithOperations,
    attributes: &Attributes<'_>,
    version: &str,
    name: &str,
) -> bool {
    rule_matches(&rule.rule_with_operations, attributes, version)
        && (rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == name))
}

/// The version `resources`' rules see this write in, if they match it (ignoring
/// selectors).
pub(crate) fn version(
    resources: &MatchResources,
    attributes: &Attributes<'_>,
    name: &str,
) -> Option<String> {
    let equivalent = resources.match_policy.as_deref() != Some("Exact");
    let any = |rules: &[NamedRuleWithOperations], version: &str| {
        rules
            .iter()
            .any(|rule| named_rule(rule, attributes, version, name))
    };
    let excluded = |version: &str| any(&resources.exclude_resource_rules, version);
    if version_named(excluded, equivalent, attributes).is_some() {
        return None;
    }
    if resources.resource_rules.is_empty() {
        return Some(attributes.version.to_owned());
    }
    version_named(
        |version| any(&resources.resource_rules, version),
        equivalent,
        attributes,
    )
}

/// Whether `resources`' selectors match this write.
pub(crate) async fn selected(
    registry: &Registry,
    resources: &MatchResources,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<bool, ApiError> {
    let empty = Default::default();
    let objects = resources.object_selector.as_ref().unwrap_or(&empty);
    if !objects_selected(objects, object, old) {
        return Ok(false);
    }
    let namespaces = resources.namespace_selector.as_ref().unwrap_or(&empty);
    namespace_selected(registry, namespaces, attributes, object, old).await
}
