//! The audit policy (`--audit-policy-file`, `audit.k8s.io/v1` `Policy`): the first rule
//! that matches a request gives its level (and stages to omit); no rule, no audit. Rules
//! match as kube's `policy.Checker` matches them: users, user groups, verbs, resources
//! (group, `resource`, `resource/subresource`, `*/subresource`, `resource/*`, names),
//! namespaces (`""` for cluster-scoped requests) and non-resource URLs (`/prefix*`).

use std::path::Path;

use serde::Deserialize;

use crate::authn::UserInfo;
use crate::http::RequestInfo;

/// How much of a request is recorded.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize,
)]
pub enum Level {
    /// Nothing.
    #[default]
    None,
    /// Who, what, when, the answer's code.
    Metadata,
    /// And the request's body.
    Request,
    /// And the response's body.
    RequestResponse,
}

/// A stage of a request's handling, at which an event is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
pub enum Stage {
    /// As soon as the request is authenticated.
    RequestReceived,
    /// Once the response headers are sent (long-running requests only).
    ResponseStarted,
    /// Once the response is complete.
    ResponseComplete,
    /// The handler panicked.
    Panic,
}

/// The policy file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    /// The rules, in order.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Stages no event is written for.
    #[serde(default)]
    pub omit_stages: Vec<Stage>,
    /// Whether request and response objects lose `metadata.managedFields`.
    #[serde(default)]
    pub omit_managed_fields: bool,
}

/// One rule.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// The level of what it matches.
    pub level: Level,
    /// Only these users (empty: all).
    #[serde(default)]
    pub users: Vec<String>,
    /// Only users in one of these groups (empty: all).
    #[serde(default)]
    pub user_groups: Vec<String>,
    /// Only these verbs (empty: all).
    #[serde(default)]
    pub verbs: Vec<String>,
    /// Only these resources (empty: all).
    #[serde(default)]
    pub resources: Vec<GroupResources>,
    /// Only these namespaces (empty: all; `""` is cluster-scoped).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Only these non-resource URLs (empty: all).
    #[serde(default, rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
    /// Stages omitted besides the policy's.
    #[serde(default)]
    pub omit_stages: Vec<Stage>,
    /// Overrides the policy's `omitManagedFields`.
    #[serde(default)]
    pub omit_managed_fields: Option<bool>,
}

/// Resources of one API group.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupResources {
    /// The group (`""`: core).
    #[serde(default)]
    pub group: String,
    /// Resources (empty: all of the group).
    #[serde(default)]
    pub resources: Vec<String>,
    /// Object names (empty: all).
    #[serde(default)]
    pub resource_names: Vec<String>,
}

/// What the policy says about one request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// Its level.
    pub level: Level,
    /// Stages omitted.
    pub omit_stages: Vec<Stage>,
    /// Whether objects lose their managed fields.
    pub omit_managed_fields: bool,
}

/// Why a policy file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("--audit-policy-file {path}: {message}")]
pub struct PolicyError {
    path: String,
    message: String,
}

impl Policy {
    /// Reads a policy file (YAML or JSON).
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let error = |message: String| PolicyError {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
        let value: serde_json::Value =
            serde_yaml_ng::from_str(&text).map_err(|e| error(e.to_string()))?;
        let kind = value.get("kind").and_then(|k| k.as_str());
        let api_version = value.get("apiVersion").and_then(|k| k.as_str());
        if kind != Some("Policy") || api_version != Some("audit.k8s.io/v1") {
            return Err(error("not an audit.k8s.io/v1 Policy".into()));
        }
        let policy: Policy = serde_json::from_value(value).map_err(|e| error(e.to_string()))?;
        if policy.rules.is_empty() {
            tracing::warn!("the audit policy has no rules: nothing is audited");
        }
        Ok(policy)
    }

    /// The level and options of a request by `user` (kube's `LevelAndStages`).
    pub fn decide(&self, user: &UserInfo, request: &RequestInfo) -> Decision {
        let Some(rule) = self.rules.iter().find(|rule| rule.matches(user, request)) else {
            return Decision::default();
        };
        let mut omit_stages = self.omit_stages.clone();
        omit_stages.extend(rule.omit_stages.iter().copied());
        Decision {
            level: rule.level,
            omit_stages,
            omit_managed_fields: rule.omit_managed_fields.unwrap_or(self.omit_managed_fields),
        }
    }
}

impl Rule {
    fn matches(&self, user: &UserInfo, request: &RequestInfo) -> bool {
        let listed =
            |list: &[String], value: &str| list.is_empty() || list.iter().any(|v| v == value);
        if !listed(&self.users, &user.name) || !listed(&self.verbs, &request.verb) {
            return false;
        }
        if !self.user_groups.is_empty() && !user.groups.iter().any(|g| self.user_groups.contains(g))
        {
            return false;
        }
        if request.resource_request {
            // A rule about non-resource URLs only is not about resources.
            if !self.non_resource_urls.is_empty() {
                return false;
            }
            listed(&self.namespaces, &request.namespace)
                && (self.resources.is_empty() || self.resources.iter().any(|g| g.matches(request)))
        } else {
            if !self.resources.is_empty() || !self.namespaces.is_empty() {
                return false;
            }
            self.non_resource_urls.is_empty()
                || self.non_resource_urls.iter().any(|url| {
                    url == "*"
                        || *url == request.path
                        || url
                            .strip_suffix('*')
                            .is_some_and(|p| request.path.starts_with(p))
                })
        }
    }
}

impl GroupResources {
    fn matches(&self, request: &RequestInfo) -> bool {
        if self.group != request.api_group {
            return false;
        }
        let (resource, subresource) = (&request.resource, &request.subresource);
        let resources = self.resources.is_empty()
            || self.resources.iter().any(|r| {
                if r == "*" {
                    return true;
                }
                match r.split_once('/') {
                    None => subresource.is_empty() && r == resource,
                    Some(("*", sub)) => sub == subresource,
                    Some((res, "*")) => res == resource,
                    Some((res, sub)) => res == resource && sub == subresource,
                }
            });
        let names = self.resource_names.is_empty() || self.resource_names.contains(&request.name);
        resources && names
    }
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    use super::*;

    fn policy(yaml: &str) -> Policy {
        let value: serde_json::Value = serde_yaml_ng::from_str(yaml).unwrap();
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let policy = policy(
            r#"
omitStages: [RequestReceived]
rules:
- level: None
  users: [system:kube-proxy]
- level: None
  nonResourceURLs: ["/healthz*", /version]
- level: RequestResponse
  resources: [{group: "apps.example.dev", resources: ["webapps/*"]}]
  omitStages: [ResponseStarted]
- level: Request
  verbs: [create, update]
  namespaces: [team-a]
- level: Metadata
"#,
        );
        let alice = UserInfo {
            name: "alice".into(),
            ..UserInfo::default()
        };
        let level = |method: Method, path: &str| {
            policy
                .decide(&alice, &RequestInfo::new(&method, path, None))
                .level
        };
        assert_eq!(level(Method::GET, "/healthz/ping"), Level::None);
        assert_eq!(level(Method::GET, "/apis"), Level::Metadata);
        let webapp = "/apis/apps.example.dev/v1/namespaces/team-a/webapps/w";
        assert_eq!(level(Method::GET, webapp), Level::RequestResponse);
        assert_eq!(
            level(Method::PUT, &format!("{webapp}/status")),
            Level::RequestResponse
        );
        assert_eq!(
            level(Method::POST, "/api/v1/namespaces/team-a/configmaps"),
            Level::Request
        );
        assert_eq!(
            level(Method::POST, "/api/v1/namespaces/team-b/configmaps"),
            Level::Metadata
        );
        let decision = policy.decide(&alice, &RequestInfo::new(&Method::GET, webapp, None));
        assert_eq!(
            decision.omit_stages,
            [Stage::RequestReceived, Stage::ResponseStarted]
        );
        let proxy = UserInfo {
            name: "system:kube-proxy".into(),
            ..UserInfo::default()
        };
        assert_eq!(
            policy
                .decide(&proxy, &RequestInfo::new(&Method::GET, webapp, None))
                .level,
            Level::None
        );
    }
}
