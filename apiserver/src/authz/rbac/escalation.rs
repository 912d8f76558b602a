//! kube's RBAC escalation check (`pkg/registry/rbac`'s policy-based storage and
//! `validation.ConfirmNoEscalation`): nobody grants what they do not hold. Creating or
//! changing a Role or ClusterRole needs every one of its rules covered by the writer's own
//! rules (where the role applies), unless the writer may `escalate` on it; a binding
//! needs the bound role's rules covered, unless the writer may `bind` it. Members of
//! `system:masters` are not checked; a ClusterRole with an `aggregationRule` needs
//! cluster-admin's powers. A refusal is kube's 403, naming the rules missing.

use std::sync::Arc;

use serde_json::Value;

use super::Rbac;
use crate::authn::{MASTERS, UserInfo};
use crate::authz::{Attributes, Authorizer, Decision, Mode};
use crate::http::RequestInfo;
use kapi_core::api::KindInfo;
use kapi_core::error::{ApiError, GroupResource};
use kapi_kinds::rbac::{GROUP, PolicyRule, RoleRef};
use kapi_registry::admission::Admit;

/// The check, asking `modes` about `escalate` and `bind` and `rbac` for the writer's rules.
pub struct Escalation {
    modes: Mode,
    rbac: Arc<Rbac>,
}

impl Escalation {
    /// The check of a server authorizing with `modes`, one of which is `rbac`.
    pub fn new(modes: Mode, rbac: Arc<Rbac>) -> Escalation {
        Escalation { modes, rbac }
    }

    /// Whether `user` may `verb` the RBAC `resource` named `name`.
    fn may(
        &self,
        user: &UserInfo,
        verb: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> bool {
        let request = RequestInfo {
            resource_request: true,
            verb: verb.to_owned(),
            api_group: GROUP.to_owned(),
            api_version: "v1".to_owned(),
            namespace: namespace.to_owned(),
            resource: resource.to_owned(),
            name: name.to_owned(),
            ..RequestInfo::default()
        };
        let attributes = Attributes {
            user,
            request: &request,
        };
        matches!(self.modes.authorize(&attributes), Decision::Allow(_))
    }

    /// kube's `ConfirmNoEscalation`: `rules` must be covered by `user`'s rules in
    /// `namespace`.
    fn confirm(
        &self,
        user: &UserInfo,
        namespace: &str,
        rules: &[PolicyRule],
        forbidden: impl Fn(String) -> ApiError,
    ) -> Result<(), ApiError> {
        let held = self.rbac.rules_for(user, namespace);
        let missing = missing(&held.rules, rules);
        if missing.is_empty() {
            return Ok(());
        }
        let mut lines: Vec<String> = compact(missing).iter().map(compact_string).collect();
        lines.sort();
        lines.dedup();
        let groups: Vec<String> = user.groups.iter().map(|g| format!("{g:?}")).collect();
        let mut message = format!(
            "user {:?} (groups=[{}]) is attempting to grant RBAC permissions not currently held:\n{}",
            user.name,
            groups.join(" "),
            lines.join("\n")
        );
        if !held.errors.is_empty() {
            message = format!("{message}; resolution errors: [{}]", held.errors.join(" "));
        }
        Err(forbidden(message))
    }
}

fn rules_of(object: Option<&Value>) -> Vec<PolicyRule> {
    (object.and_then(|o| o.get("rules")))
        .and_then(|rules| serde_json::from_value(rules.clone()).ok())
        .unwrap_or_default()
}

fn text<'v>(object: &'v Value, pointer: &str) -> &'v str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl Admit for Escalation {
    fn admit(
        &self,
        kind: &KindInfo,
        user: &UserInfo,
        namespace: Option<&str>,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        if kind.group != GROUP || user.in_group(MASTERS) {
            return Ok(());
        }
        let name = text(new, "/metadata/name");
        let namespace = namespace.unwrap_or_default();
        let forbidden = |message: String| ApiError::Forbidden {
            resource: GroupResource::new(GROUP, kind.plural),
            name: name.to_owned(),
            message,
        };
        match kind.kind {
            "Role" | "ClusterRole" => {
                let rules = rules_of(Some(new));
                let aggregated = new.get("aggregationRule").is_some_and(|r| !r.is_null());
                let unchanged = old.is_some_and(|old| {
                    rules_of(Some(old)) == rules
                        && old.get("aggregationRule") == new.get("aggregationRule")
                });
                if unchanged || self.may(user, "escalate", kind.plural, namespace, name) {
                    return Ok(());
                }
                if aggregated {
                    let everything = [
                        PolicyRule {
                            verbs: vec!["*".into()],
                            api_groups: vec!["*".into()],
                            resources: vec!["*".into()],
                            ..PolicyRule::default()
                        },
                        PolicyRule {
                            verbs: vec!["*".into()],
                            non_resource_urls: vec!["*".into()],
                            ..PolicyRule::default()
                        },
                    ];
                    return self.confirm(user, namespace, &everything, |_| {
                        forbidden(
                            "must have cluster-admin privileges to use the aggregationRule".into(),
                        )
                    });
                }
                self.confirm(user, namespace, &rules, forbidden)
            }
            "RoleBinding" | "ClusterRoleBinding" => {
                let unchanged = old.is_some_and(|old| old.get("subjects") == new.get("subjects"));
                let Ok(role_ref) = serde_json::from_value::<RoleRef>(new["roleRef"].clone()) else {
                    return Ok(());
                };
                let role_resource = if role_ref.kind == "Role" {
                    "roles"
                } else {
                    "clusterroles"
                };
                // Asked in the binding's namespace, for a ClusterRole too (kube's
                // `BindingAuthorized`): `bind` granted in a namespace binds there.
                if unchanged || self.may(user, "bind", role_resource, namespace, &role_ref.name) {
                    return Ok(());
                }
                let Some(rules) = self.rbac.role_rules(&role_ref, namespace) else {
                    return Err(ApiError::NotFound {
                        resource: GroupResource::new(GROUP, role_resource),
                        name: role_ref.name.clone(),
                    });
                };
                self.confirm(user, namespace, &rules, forbidden)
            }
            _ => Ok(()),
        }
    }
}

/// kube's `BreakdownRule`: one rule per group, resource, verb (and name), or per URL and
/// verb.
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let one = |s: &String| vec![s.clone()];
    let mut atoms = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let atom = PolicyRule {
                    verbs: one(verb),
                    api_groups: one(group),
                    resources: one(resource),
                    ..PolicyRule::default()
                };
                if rule.resource_names.is_empty() {
                    atoms.push(atom);
                } else {
                    for name in &rule.resource_names {
                        atoms.push(PolicyRule {
                            resource_names: one(name),
                            ..atom.clone()
                        });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            atoms.push(PolicyRule {
                verbs: one(verb),
                non_resource_urls: one(url),
                ..PolicyRule::default()
            });
        }
    }
    atoms
}

fn has_all(set: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| set.contains(w))
}

fn has(set: &[String], value: &str) -> bool {
    set.iter().any(|s| s == value)
}

/// kube's `ruleCovers`.
fn covers(owner: &PolicyRule, atom: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &atom.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &atom.api_groups);
    let resources = has(&owner.resources, "*")
        || atom.resources.iter().all(|r| {
            has(&owner.resources, r)
                || r.split_once('/')
                    .is_some_and(|(_, sub)| has(&owner.resources, &format!("*/{sub}")))
        });
    let urls = atom.non_resource_urls.iter().all(|url| {
        owner.non_resource_urls.iter().any(|o| {
            o == "*"
                || o == url
                || o.strip_suffix('*')
                    .is_some_and(|prefix| url.starts_with(prefix))
        })
    });
    let names = if atom.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &atom.resource_names)
    };
    verbs && groups && resources && names && urls
}

/// The atoms of `wanted` no rule of `held` covers (kube's `Covers`).
fn missing(held: &[PolicyRule], wanted: &[PolicyRule]) -> Vec<PolicyRule> {
    (wanted.iter().flat_map(breakdown))
        .filter(|atom| !held.iter().any(|owner| covers(owner, atom)))
        .collect()
}

/// kube's `CompactRules`: atoms of one group and resource (without names) merged, their
/// verbs together in order.
fn compact(atoms: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    for atom in atoms {
        let simple = atom.resource_names.is_empty() && atom.non_resource_urls.is_empty();
        let same = out.iter_mut().find(|r| {
            simple
                && r.resource_names.is_empty()
                && r.non_resource_urls.is_empty()
                && r.api_groups == atom.api_groups
                && r.resources == atom.resources
        });
        match same {
            Some(rule) => {
                for verb in atom.verbs {
                    if !rule.verbs.contains(&verb) {
                        rule.verbs.push(verb);
                    }
                }
            }
            None => out.push(atom),
        }
    }
    out
}

/// kube's `CompactString`: `{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}`.
fn compact_string(rule: &PolicyRule) -> String {
    let list = |values: &[String]| {
        let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
        format!("[{}]", quoted.join(" "))
    };
    let mut parts = Vec::new();
    for (label, values) in [
        ("APIGroups", &rule.api_groups),
        ("Resources", &rule.resources),
        ("ResourceNames", &rule.resource_names),
        ("NonResourceURLs", &rule.non_resource_urls),
        ("Verbs", &rule.verbs),
    ] {
        if !values.is_empty() {
            parts.push(format!("{label}:{}", list(values)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
        let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
        PolicyRule {
            verbs: owned(verbs),
            api_groups: owned(groups),
            resources: owned(resources),
            ..PolicyRule::default()
        }
    }

    #[test]
    fn missing_rights_are_described_as_kube_does() {
        let held = [rule(
            &["create"],
            &["rbac.authorization.k8s.io"],
            &["roles"],
        )];
        let wanted = [rule(&["delete", "get"], &[""], &["configmaps", "secrets"])];
        let lines: Vec<String> = compact(missing(&held, &wanted))
            .iter()
            .map(compact_string)
            .collect();
        assert_eq!(
            lines,
            [
                r#"{APIGroups:[""], Resources:["configmaps"], Verbs:["delete" "get"]}"#,
                r#"{APIGroups:[""], Resources:["secrets"], Verbs:["delete" "get"]}"#,
            ]
        );
        assert!(missing(&[rule(&["*"], &["*"], &["*"])], &wanted).is_empty());
        let status = [rule(&["update"], &["apps.example.dev"], &["*/status"])];
        assert!(
            missing(
                &status,
                &[rule(
                    &["update"],
                    &["apps.example.dev"],
                    &["webapps/status"]
                )]
            )
            .is_empty()
        );
        assert!(
            !missing(
                &status,
                &[rule(&["update"], &["apps.example.dev"], &["webapps"])]
            )
            .is_empty()
        );
    }
}
