//! kube's bootstrap RBAC policy (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy`), the
//! part that concerns an API server of one's own kinds, reconciled at every start as
//! kube-apiserver's `rbac/bootstrap-roles` post-start hook does:
//!
//! - `cluster-admin` (everything), bound to the group `system:masters`;
//! - `system:discovery` (discovery, OpenAPI, health, version) and `system:basic-user`
//!   (self reviews), bound to `system:authenticated`; `system:public-info-viewer`
//!   (health and version), bound to `system:authenticated` and `system:unauthenticated`;
//!   `system:monitoring` (metrics and every health check), bound to the group
//!   `system:monitoring`, for scrapers; with ServiceAccounts served,
//!   `system:service-account-issuer-discovery` (the token issuer's discovery documents),
//!   bound to `system:serviceaccounts`;
//! - `admin`, `edit` and `view`, aggregated (by the `clusterrole-aggregation` controller)
//!   from ClusterRoles labelled `rbac.authorization.k8s.io/aggregate-to-{admin,edit,view}`
//!   (`view` feeds `edit`, `edit` feeds `admin`, as in kube), and
//!   `system:aggregate-to-{admin,edit,view}`, whose rules cover the namespaced kinds this
//!   API serves, computed from its scheme: `view` reads them (and namespaces), `edit`
//!   writes them, `admin` also manages Roles and RoleBindings. The RBAC kinds themselves
//!   are only `admin`'s.
//!
//! Reconciling keeps what others added: an object missing is created; one whose
//! `rbac.authorization.kubernetes.io/autoupdate` annotation is `false` is left alone;
//! otherwise missing labels, annotations, rules, aggregation selectors and subjects are
//! added (kube's `reconciliation` package), nothing removed.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::authn::{AUTHENTICATED, MASTERS, UNAUTHENTICATED};
use kapi_core::api::Scope;
use kapi_core::error::ApiError;
use kapi_core::meta::{LabelSelector, ObjectMeta};
use kapi_core::scheme::Scheme;
use kapi_kinds::rbac::{
    AggregationRule, ClusterRole, ClusterRoleBinding, GROUP, PolicyRule, RoleRef, Subject,
};
use kapi_registry::{Registry, Target, WriteOptions};

/// kube's annotation that lets the server reconcile an object.
pub const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";
const BOOTSTRAPPING: &str = "kubernetes.io/bootstrapping";
const AGGREGATE_TO: &str = "rbac.authorization.k8s.io/aggregate-to-";
/// The field manager of the server's own writes.
const MANAGER: &str = "kube-apiserver";

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| (*s).to_owned()).collect()
}

fn meta(name: &str, labels: &[(&str, &str)]) -> ObjectMeta {
    let mut all: BTreeMap<String, String> = BTreeMap::new();
    all.insert(BOOTSTRAPPING.into(), "rbac-defaults".into());
    all.extend(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    ObjectMeta {
        name: Some(name.to_owned()),
        labels: Some(all),
        annotations: Some(BTreeMap::from([(AUTOUPDATE.to_owned(), "true".to_owned())])),
        ..ObjectMeta::default()
    }
}

fn resource_rule(verbs: &[&str], group: &str, resources: Vec<String>) -> PolicyRule {
    PolicyRule {
        verbs: strings(verbs),
        api_groups: vec![group.to_owned()],
        resources,
        ..PolicyRule::default()
    }
}

fn url_rule(urls: &[&str]) -> PolicyRule {
    PolicyRule {
        verbs: strings(&["get"]),
        non_resource_urls: strings(urls),
        ..PolicyRule::default()
    }
}

fn role(name: &str, labels: &[(&str, &str)], rules: Vec<PolicyRule>) -> ClusterRole {
    ClusterRole {
        metadata: meta(name, labels),
        rules,
        aggregation_rule: None,
    }
}

fn aggregated(name: &str, labels: &[(&str, &str)]) -> ClusterRole {
    let selector = LabelSelector {
        match_labels: Some(BTreeMap::from([(
            format!("{AGGREGATE_TO}{name}"),
            "true".to_owned(),
        )])),
        ..LabelSelector::default()
    };
    ClusterRole {
        metadata: meta(name, labels),
        rules: Vec::new(),
        aggregation_rule: Some(AggregationRule {
            cluster_role_selectors: vec![selector],
        }),
    }
}

/// The namespaced resources of the scheme by group (with their subresources), the RBAC
/// kinds aside.
fn namespaced_resources(scheme: &Scheme) -> BTreeMap<&'static str, Vec<String>> {
    let mut groups: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    for kind in scheme.kinds().iter() {
        let info = kind.info;
        if info.scope != Scope::Namespaced || info.group == GROUP || info.create_only {
            continue;
        }
        let resources = groups.entry(info.group).or_default();
        resources.push(info.plural.to_owned());
        if info.subresources.status {
            resources.push(format!("{}/status", info.plural));
        }
        if info.subresources.scale.is_some() {
            resources.push(format!("{}/scale", info.plural));
        }
    }
    for resources in groups.values_mut() {
        resources.sort();
        resources.dedup();
    }
    groups
}

/// The ClusterRoles of the policy, for `scheme`.
pub fn cluster_roles(scheme: &Scheme) -> Vec<ClusterRole> {
    let resources = namespaced_resources(scheme);
    let mut view: Vec<PolicyRule> = (resources.iter())
        .map(|(group, resources)| resource_rule(READ, group, resources.clone()))
        .collect();
    if scheme.by_resource("", "namespaces").is_some() {
        view.push(resource_rule(READ, "", vec!["namespaces".to_owned()]));
    }
    let mut edit: Vec<PolicyRule> = (resources.iter())
        .map(|(group, resources)| {
            let resources = resources.iter().filter(|r| !r.contains('/')).cloned();
            resource_rule(WRITE, group, resources.collect())
        })
        .collect();
    let service_accounts = serves_service_accounts(scheme);
    if service_accounts {
        // kube's editors may act as the service accounts they could run pods as.
        edit.push(resource_rule(
            &["create"],
            "",
            strings(&["serviceaccounts/token"]),
        ));
    }
    let all_verbs: Vec<&str> = READ.iter().chain(WRITE).copied().collect();
    let mut admin = vec![resource_rule(
        &all_verbs,
        GROUP,
        strings(&["rolebindings", "roles"]),
    )];
    if scheme
        .by_kind("authorization.k8s.io", "LocalSubjectAccessReview")
        .is_some()
    {
        admin.push(resource_rule(
            &["create"],
            "authorization.k8s.io",
            strings(&["localsubjectaccessreviews"]),
        ));
    }
    let to = |role: &str| format!("{AGGREGATE_TO}{role}");
    let (to_admin, to_edit, to_view) = (to("admin"), to("edit"), to("view"));
    let mut roles = vec![
        role(
            "cluster-admin",
            &[],
            vec![
                resource_rule(&["*"], "*", strings(&["*"])),
                PolicyRule {
                    verbs: strings(&["*"]),
                    non_resource_urls: strings(&["*"]),
                    ..PolicyRule::default()
                },
            ],
        ),
        role(
            "system:discovery",
            &[],
            vec![url_rule(&[
                "/api",
                "/api/*",
                "/apis",
                "/apis/*",
                "/healthz",
                "/livez",
                "/openapi",
                "/openapi/*",
                "/readyz",
                "/version",
                "/version/",
            ])],
        ),
        role(
            "system:basic-user",
            &[],
            vec![
                resource_rule(
                    &["create"],
                    "authorization.k8s.io",
                    strings(&["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
                ),
                resource_rule(
                    &["create"],
                    "authentication.k8s.io",
                    strings(&["selfsubjectreviews"]),
                ),
            ],
        ),
        role(
            "system:public-info-viewer",
            &[],
            vec![url_rule(&[
                "/healthz",
                "/livez",
                "/readyz",
                "/version",
                "/version/",
            ])],
        ),
        role(
            "system:monitoring",
            &[],
            vec![url_rule(&[
                "/healthz",
                "/healthz/*",
                "/livez",
                "/livez/*",
                "/metrics",
                "/readyz",
                "/readyz/*",
            ])],
        ),
        aggregated("admin", &[]),
        aggregated("edit", &[(&to_admin, "true")]),
        aggregated("view", &[(&to_edit, "true")]),
        role("system:aggregate-to-admin", &[(&to_admin, "true")], admin),
        role("system:aggregate-to-edit", &[(&to_edit, "true")], edit),
        role("system:aggregate-to-view", &[(&to_view, "true")], view),
    ];
    if service_accounts {
        roles.push(role(
            ISSUER_DISCOVERY,
            &[],
            vec![url_rule(&[
                "/.well-known/openid-configuration",
                "/.well-known/openid-configuration/",
                "/openid/v1/jwks",
                "/openid/v1/jwks/",
            ])],
        ));
    }
    roles
}

/// The role that reads the service-account issuer's discovery documents.
const ISSUER_DISCOVERY: &str = "system:service-account-issuer-discovery";

/// Whether the scheme serves ServiceAccounts, whose tokens the server issues.
fn serves_service_accounts(scheme: &Scheme) -> bool {
    scheme.by_resource("", "serviceaccounts").is_some()
}

fn group(name: &str) -> Subject {
    Subject {
        kind: "Group".to_owned(),
        api_group: GROUP.to_owned(),
        name: name.to_owned(),
        namespace: String::new(),
    }
}

fn binding(name: &str, groups: &[&str]) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: meta(name, &[]),
        subjects: groups.iter().map(|g| group(g)).collect(),
        role_ref: RoleRef {
            api_group: GROUP.to_owned(),
            kind: "ClusterRole".to_owned(),
            name: name.to_owned(),
        },
    }
}

/// The ClusterRoleBindings of the policy.
pub fn cluster_role_bindings(scheme: &Scheme) -> Vec<ClusterRoleBinding> {
    let mut bindings = vec![
        binding("cluster-admin", &[MASTERS]),
        binding("system:discovery", &[AUTHENTICATED]),
        binding("system:basic-user", &[AUTHENTICATED]),
        binding(
            "system:public-info-viewer",
            &[AUTHENTICATED, UNAUTHENTICATED],
        ),
        binding("system:monitoring", &["system:monitoring"]),
    ];
    if serves_service_accounts(scheme) {
        // Service accounts may read them; anyone else by a binding of their own.
        bindings.push(binding(ISSUER_DISCOVERY, &["system:serviceaccounts"]));
    }
    bindings
}

/// Creates or reconciles every object of the policy.
pub async fn reconcile(registry: &Registry) -> Result<(), ApiError> {
    let scheme = registry.scheme();
    let missing = || ApiError::Internal("the scheme does not serve the RBAC kinds".to_owned());
    let roles = scheme.by_kind(GROUP, "ClusterRole").ok_or_else(missing)?;
    let bindings = scheme
        .by_kind(GROUP, "ClusterRoleBinding")
        .ok_or_else(missing)?;
    for role in cluster_roles(scheme) {
        let target = Target {
            kind: &roles,
            version: "v1",
            namespace: None,
        };
        reconcile_one(registry, target, to_value(&role)?, merge_role).await?;
    }
    for binding in cluster_role_bindings(scheme) {
        let target = Target {
            kind: &bindings,
            version: "v1",
            namespace: None,
        };
        reconcile_one(registry, target, to_value(&binding)?, merge_binding).await?;
    }
    Ok(())
}

fn to_value<T: serde::Serialize>(object: &T) -> Result<Value, ApiError> {
    serde_json::to_value(object).map_err(|e| ApiError::Internal(e.to_string()))
}

/// How many times a reconciliation retries a conflict (another replica reconciling).
const ATTEMPTS: usize = 5;

async fn reconcile_one(
    registry: &Registry,
    target: Target<'_>,
    expected: Value,
    merge: fn(&mut Value, &Value),
) -> Result<(), ApiError> {
    let name = (expected.pointer("/metadata/name").and_then(Value::as_str))
        .unwrap_or_default()
        .to_owned();
    let options = WriteOptions {
        field_manager: Some(MANAGER.to_owned()),
        ..WriteOptions::default()
    };
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let existing = match registry.get(target, &name, None).await {
            Ok(existing) => existing,
            Err(ApiError::NotFound { .. }) => {
                let mut body = expected.clone();
                body["apiVersion"] = Value::from(format!("{GROUP}/v1"));
                body["kind"] = Value::from(target.kind.info.kind);
                match registry.create(target, body, &options).await {
                    Ok(_) => return Ok(()),
                    Err(e @ ApiError::AlreadyExists { .. }) => {
                        last = Some(e);
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let annotation = existing
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(AUTOUPDATE));
        if annotation.and_then(Value::as_str) == Some("false") {
            return Ok(());
        }
        let mut updated = existing.clone();
        merge_metadata(&mut updated, &expected);
        merge(&mut updated, &expected);
        if updated == existing {
            return Ok(());
        }
        match registry
            .update(target, &name, updated, None, &options)
            .await
        {
            Ok(_) => return Ok(()),
            Err(e @ ApiError::Conflict { .. }) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| ApiError::Internal("reconciling the RBAC policy".into())))
}

/// Adds the expected labels and annotations that are missing.
fn merge_metadata(existing: &mut Value, expected: &Value) {
    for field in ["labels", "annotations"] {
        let Some(wanted) = expected
            .pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let metadata = existing["metadata"].as_object_mut();
        let Some(metadata) = metadata else { continue };
        let map = metadata
            .entry(field)
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(map) = map.as_object_mut() {
            for (key, value) in wanted {
                map.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
    }
}

/// Appends the items of `expected[field]` missing from `existing[field]`.
fn union(existing: &mut Value, expected: &Value, pointer: &str) {
    let Some(wanted) = expected.pointer(pointer).and_then(Value::as_array) else {
        return;
    };
    let mut have: Vec<Value> = (existing.pointer(pointer).and_then(Value::as_array))
        .cloned()
        .unwrap_or_default();
    for item in wanted {
        if !have.contains(item) {
            have.push(item.clone());
        }
    }
    set_pointer(existing, pointer, Value::Array(have));
}

fn set_pointer(object: &mut Value, pointer: &str, value: Value) {
    let mut at = object;
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        if !at.is_object() {
            *at = Value::Object(Default::default());
        }
        let map = at.as_object_mut().expect("an object");
        if i + 1 == parts.len() {
            map.insert((*part).to_owned(), value);
            return;
        }
        at = map
            .entry(*part)
            .or_insert_with(|| Value::Object(Default::default()));
    }
}

/// A ClusterRole: missing rules added; for an aggregated one, missing selectors instead
/// (the aggregation controller owns its rules).
fn merge_role(existing: &mut Value, expected: &Value) {
    if expected.get("aggregationRule").is_some() {
        union(existing, expected, "/aggregationRule/clusterRoleSelectors");
    } else {
        union(existing, expected, "/rules");
    }
}

/// A binding: missing subjects added.
fn merge_binding(existing: &mut Value, expected: &Value) {
    union(existing, expected, "/subjects");
}
