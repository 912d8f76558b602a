//! Which writes a webhook is called for (kube's `webhook/predicates` and its rule
//! matcher): its rules (operation, API group and version, resource and subresource,
//! scope), with `matchPolicy: Equivalent` also the kind's other served versions (the
//! object is then sent converted to the first version a rule names); its namespace
//! selector (on the labels of the object's namespace; of the object itself for a
//! Namespace; cluster-scoped objects always match); and its object selector (on the
//! object's labels or, for updates and deletes, the old object's).

use std::collections::BTreeMap;

use serde_json::Value;

use super::Hook;
use kapi_core::api::Scope;
use kapi_core::meta::LabelSelector;
use kapi_kinds::admissionregistration::RuleWithOperations;
use kapi_registry::admission::Attributes;

/// Whether `rule` names a write of `attributes` in `version`.
pub(crate) fn rule_matches(
    rule: &RuleWithOperations,
    attributes: &Attributes<'_>,
    version: &str,
) -> bool {
    let info = attributes.kind.info;
    let any = |values: &[String], value: &str| values.iter().any(|v| v == "*" || v == value);
    let operation = attributes.operation.name();
    let resource_matches = rule.rule.resources.iter().any(|pattern| {
        let (resource, subresource) = pattern.split_once('/').unwrap_or((pattern, ""));
        let resource_ok = resource == "*" || resource == info.plural;
        let subresource_ok = match subresource {
            "*" => true,
            // `*` alone names every resource, but no subresource.
            "" => attributes.subresource.is_empty(),
            named => named == attributes.subresource,
        };
        resource_ok && subresource_ok
    });
    let namespaced = info.scope == Scope::Namespaced;
    let scope_matches = match rule.rule.scope.as_deref().unwrap_or("*") {
        "Cluster" => !namespaced,
        "Namespaced" => namespaced,
        _ => true,
    };
    any(&rule.operations, operation)
        && any(&rule.rule.api_groups, info.group)
        && any(&rule.rule.api_versions, version)
        && resource_matches
        && scope_matches
}

/// The version `hook` is called in for a write of `attributes`: the request's when a rule
/// names it, else (`Equivalent`) the first other served version of the kind a rule names;
/// `None` when it is not called.
pub fn version_for(hook: &Hook, attributes: &Attributes<'_>) -> Option<String> {
    let named = |version: &str| {
        hook.rules
            .iter()
            .any(|r| rule_matches(r, attributes, version))
    };
    version_named(named, hook.equivalent, attributes)
}

/// The version a write is judged in when `named` says which versions rules name: the
/// request's when named, else (`equivalent`) the first other served version named.
pub(crate) fn version_named(
    named: impl Fn(&str) -> bool,
    equivalent: bool,
    attributes: &Attributes<'_>,
) -> Option<String> {
    if named(attributes.version) {
        return Some(attributes.version.to_owned());
    }
    // A Scale is the same whatever the kind's version.
    if !equivalent || attributes.subresource == "scale" {
        return None;
    }
    (attributes.kind.versions())
        .find(|version| *version != attributes.version && named(version))
        .map(str::to_owned)
}

/// The labels of an object.
pub fn labels(object: Option<&Value>) -> BTreeMap<String, String> {
    let labels = object.and_then(|o| o.pointer("/metadata/labels")?.as_object().cloned());
    (labels.into_iter().flatten())
        .filter_map(|(k, v)| Some((k, v.as_str()?.to_owned())))
        .collect()
}

/// Whether the object selector of `hook` matches the object or the old object.
pub fn object_selected(hook: &Hook, object: Option<&Value>, old: Option<&Value>) -> bool {
    objects_selected(&hook.object_selector, object, old)
}

/// Whether `selector` matches the object or the old object (the empty one always).
pub(crate) fn objects_selected(
    selector: &LabelSelector,
    object: Option<&Value>,
    old: Option<&Value>,
) -> bool {
    if *selector == LabelSelector::default() {
        return true;
    }
    let selected = |o: Option<&Value>| o.is_some() && selector.matches(&labels(o));
    selected(object) || selected(old)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use kapi_registry::admission::Operation;

    fn rule(value: Value) -> RuleWithOperations {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn rules_match_resources_subresources_and_scopes() {
        let kind = kapi_core::scheme::KindEntry::new::<kapi_kinds::rbac::Role>();
        let options = json!({});
        let attributes = |operation, subresource| Attributes {
            operation,
            kind: &kind,
            version: "v1",
            subresource,
            namespace: Some("default"),
            name: "r",
            user: None,
            dry_run: false,
            options: &options,
            object_kind: None,
        };
        let create = attributes(Operation::Create, "");
        let status = attributes(Operation::Update, "status");
        let case = |value: Value, a: &Attributes<'_>| rule_matches(&rule(value), a, "v1");
        let all = json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"]});
        let with = |resources: Value, scope: &str| {
            let mut r = all.clone();
            r["resources"] = resources;
            r["scope"] = json!(scope);
            r
        };
        assert!(case(with(json!(["roles"]), "*"), &create));
        assert!(case(with(json!(["*"]), "Namespaced"), &create));
        assert!(!case(with(json!(["*"]), "Cluster"), &create));
        assert!(
            !case(with(json!(["*"]), "*"), &status),
            "`*` names no subresource"
        );
        assert!(case(with(json!(["*/*"]), "*"), &status));
        assert!(case(with(json!(["roles/status"]), "*"), &status));
        assert!(case(with(json!(["*/status"]), "*"), &status));
        assert!(!case(with(json!(["roles/scale"]), "*"), &status));
        let mut updates_only = with(json!(["roles"]), "*");
        updates_only["operations"] = json!(["UPDATE"]);
        assert!(!case(updates_only, &create));
        let mut other_group = with(json!(["roles"]), "*");
        other_group["apiGroups"] = json!(["apps"]);
        assert!(!case(other_group, &create));
    }
}
