//! What a policy's expressions see of a request, gathered before they run (the I/O of an
//! evaluation, on the async side): the request as kube's `CreateAdmissionRequest` makes
//! it, the params a binding references (kube's `CollectParams`), the namespace as kube's
//! `CreateNamespaceObject` trims it, and the server's authorizer for the requesting user.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use kapi_cel::library::kube::authz::{self, Authorize, AuthorizerValue};
use kapi_core::api::Scope;
use kapi_core::error::ApiError;
use kapi_core::user::UserInfo;
use kapi_kinds::admissionregistration::{ParamKind, ParamRef};
use kapi_registry::admission::Attributes;
use kapi_registry::{GetOptions, ListOptions, Registry, Target};

use crate::authz::{Attributes as AuthzAttributes, Decision, Mode};
use crate::http::RequestInfo;

/// The server's authorization modes, as the authorizer library asks them.
pub(crate) struct ServerAuthorizer(pub(crate) Mode);

impl Authorize for ServerAuthorizer {
    fn authorize(&self, request: &authz::Request) -> authz::Decision {
        let info = RequestInfo {
            resource_request: request.path.is_none(),
            path: request.path.clone().unwrap_or_default(),
            verb: request.verb.clone(),
            api_prefix: if request.group.is_empty() {
                "api"
            } else {
                "apis"
            }
            .to_owned(),
            api_group: request.group.clone(),
            api_version: "*".to_owned(),
            namespace: request.namespace.clone(),
            resource: request.resource.clone(),
            subresource: request.subresource.clone(),
            name: request.name.clone(),
        };
        let attributes = AuthzAttributes {
            user: &request.user,
            request: &info,
        };
        let (allowed, reason) = match self.0.authorize(&attributes) {
            Decision::Allow(reason) => (true, reason),
            Decision::Deny(reason) | Decision::NoOpinion(reason) => (false, reason),
        };
        authz::Decision {
            allowed,
            reason: reason.to_string(),
            error: None,
        }
    }
}

/// The user a request's expressions ask about: the requester, or the server's loopback
/// user for its own writes.
pub(crate) fn requester(attributes: &Attributes<'_>) -> UserInfo {
    attributes.user.cloned().unwrap_or_else(|| UserInfo {
        name: "system:apiserver".to_owned(),
        groups: vec!["system:masters".to_owned()],
        ..UserInfo::default()
    })
}

/// `authorizer` and `authorizer.requestResource` for the request.
pub(crate) fn authorizer(
    authorizer: Arc<dyn Authorize>,
    attributes: &Attributes<'_>,
    name: &str,
) -> (kapi_cel::value::Value, kapi_cel::value::Value) {
    let user = requester(attributes);
    let info = attributes.kind.info;
    let target = authz::Request {
        group: info.group.to_owned(),
        resource: info.plural.to_owned(),
        subresource: attributes.subresource.to_owned(),
        namespace: attributes.namespace.unwrap_or_default().to_owned(),
        name: name.to_owned(),
        ..authz::Request::default()
    };
    (
        AuthorizerValue::value(Arc::clone(&authorizer), user.clone()),
        AuthorizerValue::request_resource(authorizer, user, &target),
    )
}

/// `request`: kube's admission request without its uid and objects, the kind and resource
/// in the version matched (the resource as requested when `as_requested`, as match
/// conditions see it), empty strings left out (as Go's `omitempty` leaves them, so that
/// `has(request.name)` says whether there is one).
pub(crate) fn request(
    attributes: &Attributes<'_>,
    version: &str,
    name: &str,
    as_requested: bool,
) -> Value {
    let mut request = crate::webhooks::request(attributes, version, None, None);
    let Some(fields) = request.as_object_mut() else {
        return request;
    };
    for field in ["uid", "object", "oldObject"] {
        fields.remove(field);
    }
    fields.insert("name".to_owned(), json!(name));
    if as_requested && let Some(resource) = fields.get("requestResource").cloned() {
        fields.insert("resource".to_owned(), resource);
    }
    drop_empty(fields);
    if let Some(Value::Object(user)) = fields.get_mut("userInfo") {
        drop_empty(user);
    }
    request
}

/// Removes empty strings, lists, maps and nulls, as `omitempty` does.
fn drop_empty(fields: &mut Map<String, Value>) {
    fields.retain(|_, v| match v {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    });
}

/// `namespaceObject`: the request's namespace as kube trims it (its spec, status and the
/// metadata policies may read), or null for cluster-scoped requests and Namespaces.
pub(crate) async fn namespace_object(
    registry: &Registry,
    attributes: &Attributes<'_>,
) -> Result<Value, ApiError> {
    let info = attributes.kind.info;
    let Some(namespace) = attributes.namespace.filter(|n| !n.is_empty()) else {
        return Ok(Value::Null);
    };
    if info.group.is_empty() && info.kind == "Namespace" {
        return Ok(Value::Null);
    }
    let Some(kind) = registry.scheme().by_resource("", "namespaces") else {
        return Ok(Value::Null);
    };
    let target = Target {
        kind: &kind,
        version: "v1",
        namespace: None,
    };
    let options = GetOptions {
        resource_version: Some("0".into()),
    };
    let found = registry.get_with(target, namespace, None, &options).await?;
    let found = found.value();
    const KEPT: &[&str] = &[
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "finalizers",
    ];
    let metadata: Map<String, Value> = (found["metadata"].as_object().into_iter().flatten())
        .filter(|(k, _)| KEPT.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut trimmed = json!({"metadata": metadata});
    for part in ["spec", "status"] {
        if let Some(value) = found.get(part) {
            trimmed[part] = value.clone();
        }
    }
    Ok(trimmed)
}

/// The params a binding's `paramRef` names (kube's `CollectParams`): `[null]` without a
/// param kind or reference, the objects found otherwise (none: the binding is skipped,
/// unless `parameterNotFoundAction: Deny`). `Err` is a configuration error, worded as
/// kube's; `policy` says whether it is the policy's (an unknown param kind) rather than
/// the binding's.
pub(crate) async fn params(
    registry: &Registry,
    kind: Option<&ParamKind>,
    reference: Option<&ParamRef>,
    request_namespace: Option<&str>,
) -> Result<Vec<Value>, ConfigError> {
    let (Some(kind), Some(reference)) = (kind, reference) else {
        return Ok(vec![Value::Null]);
    };
    let (entry, version) = param_kind(registry, kind)?;
    let version = version.as_str();
    let binding = |message: &str| ConfigError::Binding(message.to_owned());
    let namespaced = entry.info.scope == Scope::Namespaced;
    let namespace = match (namespaced, reference.namespace.as_str()) {
        (true, "") => match request_namespace.filter(|n| !n.is_empty()) {
            Some(namespace) => Some(namespace.to_owned()),
            None => {
                return Err(binding(
                    "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources",
                ));
            }
        },
        (true, namespace) => Some(namespace.to_owned()),
        (false, "") => None,
        (false, _) => {
            return Err(binding(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`",
            ));
        }
    };
    let target = Target {
        kind: &entry,
        version,
        namespace: namespace.as_deref(),
    };
    let found = match (reference.name.as_str(), &reference.selector) {
        ("", Some(selector)) => {
            // Validation keeps an unreadable selector from being stored.
            let Some(selector) = selector.text() else {
                return Err(binding("paramRef.selector is not a valid label selector"));
            };
            let options = ListOptions {
                resource_version: Some("0".into()),
                label_selector: Some(selector),
                ..ListOptions::default()
            };
            let listed = registry.list(target, &options).await;
            let listed = listed.map_err(|e| ConfigError::Binding(e.to_string()))?;
            listed.items.iter().map(|item| item.value()).collect()
        }
        (_, Some(_)) => {
            return Err(binding(
                "paramRef.name and paramRef.selector are mutually exclusive",
            ));
        }
        ("", None) => return Err(binding("one of name or selector must be provided")),
        (name, None) => {
            let options = GetOptions {
                resource_version: Some("0".into()),
            };
            match registry.get_with(target, name, None, &options).await {
                Ok(found) => vec![found.value()],
                Err(ApiError::NotFound { .. }) => Vec::new(),
                Err(error) => return Err(ConfigError::Binding(error.to_string())),
            }
        }
    };
    if found.is_empty() && reference.parameter_not_found_action.as_deref() == Some("Deny") {
        return Err(binding(
            "no params found for policy binding with `Deny` parameterNotFoundAction",
        ));
    }
    Ok(found)
}

/// The kind and version a policy's `paramKind` names, if the server serves it.
pub(crate) fn param_kind(
    registry: &Registry,
    kind: &ParamKind,
) -> Result<(Arc<kapi_core::scheme::KindEntry>, String), ConfigError> {
    let (group, version) = match kind.api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", kind.api_version.as_str()),
    };
    let unknown = || {
        ConfigError::Policy(format!(
            "failed to find resource referenced by paramKind: '{group}/{version}, Kind={}'",
            kind.kind
        ))
    };
    let entry = registry
        .scheme()
        .by_kind(group, &kind.kind)
        .ok_or_else(unknown)?;
    if !entry.versions().any(|v| v == version) {
        return Err(unknown());
    }
    Ok((entry, version.to_owned()))
}

/// A policy or binding that cannot be applied as configured.
#[derive(Debug)]
pub(crate) enum ConfigError {
    /// The policy's (kube's `failed to configure policy: ...`).
    Policy(String),
    /// The binding's (`failed to configure binding: ...`).
    Binding(String),
}

impl ConfigError {
    /// kube's message.
    pub(crate) fn message(&self) -> String {
        match self {
            ConfigError::Policy(e) => format!("failed to configure policy: {e}"),
            ConfigError::Binding(e) => format!("failed to configure binding: {e}"),
        }
    }
}
