//! `audit.k8s.io/v1` `Event`, as kube writes it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::policy::{Level, Stage};
use crate::authn::UserInfo;
use crate::http::RequestInfo;

/// One audit event.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// `Event`.
    pub kind: &'static str,
    /// `audit.k8s.io/v1`.
    pub api_version: &'static str,
    /// The request's level.
    pub level: Level,
    /// The request's id (also its `Audit-Id` header).
    #[serde(rename = "auditID")]
    pub audit_id: String,
    /// Which stage this event is of.
    pub stage: Stage,
    /// Path and query.
    #[serde(rename = "requestURI")]
    pub request_uri: String,
    /// The verb (kube's, or the lower-case method of a non-resource request).
    pub verb: String,
    /// Who sent it (empty when authentication failed).
    pub user: User,
    /// Whom they impersonated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impersonated_user: Option<User>,
    /// The client's address, after those of `X-Forwarded-For`.
    #[serde(rename = "sourceIPs")]
    pub source_ips: Vec<String>,
    /// `User-Agent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// The object a resource request is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectRef>,
    /// The answer's code (and a failure's status and reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_status: Option<Value>,
    /// The request's body (levels `Request` and `RequestResponse`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_object: Option<Value>,
    /// The response's body (level `RequestResponse`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_object: Option<Value>,
    /// When the request arrived (RFC 3339, microseconds).
    pub request_received_timestamp: String,
    /// When this stage was reached.
    pub stage_timestamp: String,
    /// `authorization.k8s.io/decision`, `authorization.k8s.io/reason`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// A user, as events name them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct User {
    /// The name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// A unique id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The groups.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Other attributes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl From<&UserInfo> for User {
    fn from(user: &UserInfo) -> User {
        User {
            username: Some(user.name.clone()),
            uid: (!user.uid.is_empty()).then(|| user.uid.clone()),
            groups: user.groups.clone(),
            extra: user.extra.clone(),
        }
    }
}

/// The object a request is about.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// `webapps`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource: String,
    /// The namespace.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The group.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// The version.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `status`, `scale`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

impl ObjectRef {
    /// The object of a resource request.
    pub fn of(request: &RequestInfo) -> Option<ObjectRef> {
        request.resource_request.then(|| ObjectRef {
            resource: request.resource.clone(),
            namespace: request.namespace.clone(),
            name: request.name.clone(),
            api_group: request.api_group.clone(),
            api_version: request.api_version.clone(),
            subresource: request.subresource.clone(),
        })
    }
}

/// Now, as audit timestamps are written (RFC 3339, UTC, microseconds).
pub fn now() -> String {
    humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string()
}

/// `object` without `metadata.managedFields` (and its items' too, for a list).
pub fn without_managed_fields(mut object: Value) -> Value {
    fn strip(object: &mut Value) {
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("managedFields");
        }
    }
    strip(&mut object);
    if let Some(items) = object.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(strip);
    }
    object
}
