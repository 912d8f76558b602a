//! Which FlowSchema a request matches (kube's APF `startRequest` matching, `rule.go`): the
//! usable schemas in `matchingPrecedence` order, then by name; a schema matches when one
//! of its rules has a subject naming the user (by name, group or service account) and a
//! resource rule (verb, group, resource or `resource/subresource`, namespace or cluster
//! scope) or non-resource rule (verb, URL or `prefix/*`) the request meets.

use serde_json::Value;

use crate::http::RequestInfo;
use kapi_core::user::UserInfo;

/// What a request was classified as: its schema's and priority level's uids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Classified {
    /// The FlowSchema's uid.
    pub flow_schema_uid: String,
    /// The PriorityLevelConfiguration's uid.
    pub priority_level_uid: String,
}

/// The usable FlowSchemas, in matching order.
#[derive(Debug, Default)]
pub struct Classifier {
    schemas: Vec<Schema>,
}

#[derive(Debug)]
struct Schema {
    classified: Classified,
    rules: Vec<Rule>,
}

#[derive(Debug)]
struct Rule {
    subjects: Vec<Subject>,
    resources: Vec<ResourceRule>,
    non_resources: Vec<NonResourceRule>,
}

#[derive(Debug)]
enum Subject {
    User(String),
    Group(String),
    ServiceAccount { namespace: String, name: String },
}

#[derive(Debug)]
struct ResourceRule {
    verbs: Vec<String>,
    groups: Vec<String>,
    resources: Vec<String>,
    cluster_scope: bool,
    namespaces: Vec<String>,
}

#[derive(Debug)]
struct NonResourceRule {
    verbs: Vec<String>,
    urls: Vec<String>,
}

fn strings(value: &Value) -> Vec<String> {
    (value.as_array().into_iter().flatten())
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// kube's `containsString` with a wildcard: `["*"]` alone matches everything.
fn member(value: &str, list: &[String]) -> bool {
    (list.len() == 1 && list[0] == "*") || list.iter().any(|v| v == value)
}

impl Classifier {
    /// From `schemas` (FlowSchema JSON) and the uid of each usable priority level, by
    /// name; a schema whose level is missing is dangling and left out. When no usable
    /// `exempt` or `catch-all` schema exists, kube's built-in ones stand in (with no uids).
    pub fn new(schemas: &[Value], levels: &[(String, String)]) -> Classifier {
        let level_uid = |name: &str| {
            levels
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, uid)| uid.clone())
        };
        let mut usable: Vec<(i64, String, Schema)> = Vec::new();
        for schema in schemas {
            let spec = &schema["spec"];
            let level = spec["priorityLevelConfiguration"]["name"]
                .as_str()
                .unwrap_or_default();
            let Some(priority_level_uid) = level_uid(level) else {
                continue;
            };
            let name = schema["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let classified = Classified {
                flow_schema_uid: schema["metadata"]["uid"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                priority_level_uid,
            };
            let precedence = spec["matchingPrecedence"].as_i64().unwrap_or(1000);
            let rules = (spec["rules"].as_array().into_iter().flatten())
                .map(rule)
                .collect();
            usable.push((precedence, name, Schema { classified, rules }));
        }
        usable.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        let has = |name: &str| usable.iter().any(|(_, n, _)| n == name);
        let (exempt, catch_all) = (has("exempt"), has("catch-all"));
        let mut schemas: Vec<Schema> = usable.into_iter().map(|(_, _, s)| s).collect();
        let bootstrap = super::bootstrap::mandatory_schemas();
        if !exempt
            && let Some(schema) = bootstrap.iter().find(|s| s["metadata"]["name"] == "exempt")
        {
            schemas.insert(
                0,
                Schema {
                    classified: Classified::default(),
                    rules: rules_of(schema),
                },
            );
        }
        if !catch_all
            && let Some(schema) = bootstrap
                .iter()
                .find(|s| s["metadata"]["name"] == "catch-all")
        {
            schemas.push(Schema {
                classified: Classified::default(),
                rules: rules_of(schema),
            });
        }
        Classifier { schemas }
    }

    /// The schema `user`'s request `info` matches first (catch-all's when none does).
    pub fn classify(&self, user: &UserInfo, info: &RequestInfo) -> Option<&Classified> {
        let matched = (self.schemas.iter())
            .find(|schema| schema.rules.iter().any(|rule| rule.matches(user, info)))
            .or_else(|| self.schemas.last());
        matched.map(|schema| &schema.classified)
    }
}

fn rules_of(schema: &Value) -> Vec<Rule> {
    (schema["spec"]["rules"].as_array().into_iter().flatten())
        .map(rule)
        .collect()
}

fn rule(rule: &Value) -> Rule {
    let subjects = (rule["subjects"].as_array().into_iter().flatten())
        .filter_map(|s| match s["kind"].as_str()? {
            "User" => Some(Subject::User(s["user"]["name"].as_str()?.to_owned())),
            "Group" => Some(Subject::Group(s["group"]["name"].as_str()?.to_owned())),
            "ServiceAccount" => Some(Subject::ServiceAccount {
                namespace: s["serviceAccount"]["namespace"].as_str()?.to_owned(),
                name: s["serviceAccount"]["name"].as_str()?.to_owned(),
            }),
            _ => None,
        })
        .collect();
    let resources = (rule["resourceRules"].as_array().into_iter().flatten())
        .map(|r| ResourceRule {
            verbs: strings(&r["verbs"]),
            groups: strings(&r["apiGroups"]),
            resources: strings(&r["resources"]),
            cluster_scope: r["clusterScope"].as_bool().unwrap_or(false),
            namespaces: strings(&r["namespaces"]),
        })
        .collect();
    let non_resources = (rule["nonResourceRules"].as_array().into_iter().flatten())
        .map(|r| NonResourceRule {
            verbs: strings(&r["verbs"]),
            urls: strings(&r["nonResourceURLs"]),
        })
        .collect();
    Rule {
        subjects,
        resources,
        non_resources,
    }
}

impl Rule {
    fn matches(&self, user: &UserInfo, info: &RequestInfo) -> bool {
        if !self.subjects.iter().any(|s| s.matches(user)) {
            return false;
        }
        match info.resource_request {
            true => self.resources.iter().any(|r| r.matches(info)),
            false => self.non_resources.iter().any(|r| r.matches(info)),
        }
    }
}

impl Subject {
    fn matches(&self, user: &UserInfo) -> bool {
        match self {
            Subject::User(name) => name == "*" || *name == user.name,
            Subject::Group(group) => group == "*" || user.groups.iter().any(|g| g == group),
            Subject::ServiceAccount { namespace, name } => match name.as_str() {
                "*" => user
                    .name
                    .starts_with(&format!("system:serviceaccount:{namespace}:")),
                _ => user.name == format!("system:serviceaccount:{namespace}:{name}"),
            },
        }
    }
}

impl ResourceRule {
    fn matches(&self, info: &RequestInfo) -> bool {
        let resource = match info.subresource.is_empty() {
            true => info.resource.clone(),
            false => format!("{}/{}", info.resource, info.subresource),
        };
        member(&info.verb, &self.verbs)
            && member(&resource, &self.resources)
            && member(&info.api_group, &self.groups)
            && match info.namespace.is_empty() {
                true => self.cluster_scope,
                false => member(&info.namespace, &self.namespaces),
            }
    }
}

impl NonResourceRule {
    fn matches(&self, info: &RequestInfo) -> bool {
        if !member(&info.verb, &self.verbs) {
            return false;
        }
        self.urls.iter().any(|url| {
            if url == "*" || *url == info.path {
                return true;
            }
            let mut prefix = url.strip_suffix('*').unwrap_or(url).to_owned();
            if !prefix.ends_with('/') {
                prefix.push('/');
            }
            info.path.starts_with(&prefix)
        })
    }
}
