//! Who may point a policy at params (kube's `validatingadmissionpolicy/authz.go` and
//! `validatingadmissionpolicybinding/authz.go`, which its strategies run after
//! validation): a user who writes a policy with a new `paramKind` must be allowed to `get`
//! every object of that kind, and one who writes a binding with a new `paramRef` to `get`
//! the object it names (`list` for a selector), so that a policy cannot be made to read
//! what its author could not. Cluster administrators (`system:masters`) are not asked.
//! Refusals are kube's field errors (`spec.paramKind: Forbidden: ...`).

use std::sync::Weak;

use serde_json::Value;

use kapi_core::api::KindInfo;
use kapi_core::error::{ApiError, FieldError};
use kapi_core::user::{MASTERS, UserInfo};
use kapi_kinds::admissionregistration::GROUP;
use kapi_registry::Registry;
use kapi_registry::admission::Admit;

use crate::authz::{Attributes, Decision, Mode};
use crate::http::RequestInfo;

/// The check, asking the server's authorization modes.
pub struct ParamAccess {
    modes: Mode,
    registry: Weak<Registry>,
}

impl ParamAccess {
    /// The check of writes to `registry`, asking `modes`.
    pub fn new(modes: Mode, registry: Weak<Registry>) -> ParamAccess {
        ParamAccess { modes, registry }
    }

    /// Whether `user` may `verb` `resource` of `group` named `name` in `namespace`.
    fn may(
        &self,
        user: &UserInfo,
        verb: &str,
        group: &str,
        resource: &str,
        place: (&str, &str),
    ) -> bool {
        let (namespace, name) = place;
        let request = RequestInfo {
            resource_request: true,
            verb: verb.to_owned(),
            api_group: group.to_owned(),
            api_version: "*".to_owned(),
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

    /// The group and resource a param kind names (`*` for what the server does not know).
    fn resource_of(&self, param_kind: &Value) -> (String, String) {
        let api_version = param_kind["apiVersion"].as_str().unwrap_or_default();
        let kind = param_kind["kind"].as_str().unwrap_or_default();
        let group = match api_version.split_once('/') {
            Some((group, _)) => group,
            None => "",
        };
        let resource = (self.registry.upgrade())
            .and_then(|registry| registry.scheme().by_kind(group, kind))
            .map(|entry| entry.info.plural.to_owned());
        (group.to_owned(), resource.unwrap_or_else(|| "*".to_owned()))
    }
}

/// kube's Go rendering of a user (`%v` of its `DefaultInfo`): `&{alice uid [g1 g2] map[]}`.
fn go_user(user: &UserInfo) -> String {
    let extra: Vec<String> = (user.extra.iter())
        .map(|(k, v)| format!("{k}:[{}]", v.join(" ")))
        .collect();
    format!(
        "&{{{} {} [{}] map[{}]}}",
        user.name,
        user.uid,
        user.groups.join(" "),
        extra.join(" ")
    )
}

impl Admit for ParamAccess {
    fn admit(
        &self,
        kind: &KindInfo,
        user: &UserInfo,
        _namespace: Option<&str>,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        if kind.group != GROUP || user.in_group(MASTERS) {
            return Ok(());
        }
        let refused = |field: &str, detail: String| ApiError::Invalid {
            group: GROUP.to_owned(),
            kind: kind.kind.to_owned(),
            name: new["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            causes: vec![FieldError::forbidden(field, detail)],
        };
        let present = |value: Option<&Value>| value.filter(|v| !v.is_null()).cloned();
        match kind.kind {
            "ValidatingAdmissionPolicy" => {
                let Some(param_kind) = present(new.pointer("/spec/paramKind")) else {
                    return Ok(());
                };
                if old.and_then(|o| present(o.pointer("/spec/paramKind")))
                    == Some(param_kind.clone())
                {
                    return Ok(());
                }
                let (group, resource) = self.resource_of(&param_kind);
                if self.may(user, "get", &group, &resource, ("*", "*")) {
                    return Ok(());
                }
                Err(refused(
                    "spec.paramKind",
                    format!(
                        "user {} must have \"get\" permission on all objects of the referenced \
                         paramKind (kind={}, apiVersion={})",
                        go_user(user),
                        param_kind["kind"].as_str().unwrap_or_default(),
                        param_kind["apiVersion"].as_str().unwrap_or_default()
                    ),
                ))
            }
            "ValidatingAdmissionPolicyBinding" => {
                let Some(reference) = present(new.pointer("/spec/paramRef")) else {
                    return Ok(());
                };
                let unchanged = old.is_some_and(|old| {
                    present(old.pointer("/spec/paramRef")) == Some(reference.clone())
                        && old.pointer("/spec/policyName") == new.pointer("/spec/policyName")
                });
                if unchanged {
                    return Ok(());
                }
                // The param kind of the policy named, when the server holds it.
                let policy_name = new["spec"]["policyName"].as_str().unwrap_or_default();
                let param_kind = (self.registry.upgrade()).and_then(|registry| {
                    let policies = registry
                        .scheme()
                        .by_kind(GROUP, "ValidatingAdmissionPolicy")?;
                    let policy = registry.cached_object(&policies, None, policy_name)?;
                    present(policy.pointer("/spec/paramKind"))
                });
                let (group, resource) = match &param_kind {
                    Some(param_kind) => self.resource_of(param_kind),
                    None => ("*".to_owned(), "*".to_owned()),
                };
                let name = reference["name"].as_str().unwrap_or_default();
                let namespace = reference["namespace"].as_str().unwrap_or_default();
                let verb = if name.is_empty() { "list" } else { "get" };
                if self.may(user, verb, &group, &resource, (namespace, name)) {
                    return Ok(());
                }
                Err(refused(
                    "spec.paramRef",
                    format!(
                        "user {} does not have \"{verb}\" permission on the object referenced \
                         by paramRef",
                        go_user(user)
                    ),
                ))
            }
            _ => Ok(()),
        }
    }
}
