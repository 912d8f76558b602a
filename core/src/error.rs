//! Every failure a request can meet, and its Kubernetes `Status`.
//!
//! [`ApiError`] has one variant per kind of failure; [`ApiError::to_status`] is the one
//! place that turns it into the `Status` body, code and message kube-apiserver would give
//! (k8s.io/apimachinery `pkg/api/errors`), because clients parse them: kubectl prints
//! `Error from server (<reason>): <message>`, client-go branches on the reason.

use serde_json::Value;

use crate::meta::{ListMeta, Status, StatusCause, StatusDetails};

/// A resource named the way kube-apiserver names it in messages: `webapps.apps.example.dev`,
/// or just `namespaces` in the core group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupResource {
    /// API group, empty for the core group.
    pub group: String,
    /// Plural resource name.
    pub resource: String,
}

impl GroupResource {
    /// `group` / `resource`.
    pub fn new(group: impl Into<String>, resource: impl Into<String>) -> GroupResource {
        GroupResource {
            group: group.into(),
            resource: resource.into(),
        }
    }
}

impl std::fmt::Display for GroupResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// How a field is wrong (`field.ErrorType` in Kubernetes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorType {
    /// `FieldValueRequired`
    Required,
    /// `FieldValueInvalid`
    Invalid,
    /// `FieldValueNotSupported`
    NotSupported,
    /// `FieldValueDuplicate`
    Duplicate,
    /// `FieldValueTooLong`
    TooLong,
    /// `FieldValueTooMany`
    TooMany,
    /// `FieldValueForbidden`
    Forbidden,
    /// `FieldValueNotFound`
    NotFound,
}

impl FieldErrorType {
    /// The cause reason on the wire.
    pub fn reason(self) -> &'static str {
        match self {
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::Duplicate => "FieldValueDuplicate",
            FieldErrorType::TooLong => "FieldValueTooLong",
            FieldErrorType::TooMany => "FieldValueTooMany",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::NotFound => "FieldValueNotFound",
        }
    }

    fn label(self) -> &'static str {
        match self {
            FieldErrorType::Required => "Required value",
            FieldErrorType::Invalid => "Invalid value",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::Duplicate => "Duplicate value",
            FieldErrorType::TooLong => "Too long",
            FieldErrorType::TooMany => "Too many",
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::NotFound => "Not found",
        }
    }
}

/// One problem with one field of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// How the field is wrong.
    pub error_type: FieldErrorType,
    /// Path of the field, in the request's version: `spec.replicas`, `spec.ports[0].name`.
    pub field: String,
    /// The offending value, when showing it helps.
    pub value: Option<Value>,
    /// What is wrong with it.
    pub detail: String,
}

impl FieldError {
    /// A field error of type `error_type`.
    pub fn new(
        error_type: FieldErrorType,
        field: impl Into<String>,
        value: Option<Value>,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError {
            error_type,
            field: field.into(),
            value,
            detail: detail.into(),
        }
    }

    /// kube's `field.Required`.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError::new(FieldErrorType::Required, field, None, detail)
    }

    /// kube's `field.Forbidden`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError::new(FieldErrorType::Forbidden, field, None, detail)
    }

    /// kube's `field.Invalid`.
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError::new(FieldErrorType::Invalid, field, Some(value.into()), detail)
    }

    /// kube's `field.NotSupported`: `value` is none of `supported`.
    pub fn not_supported(field: impl Into<String>, value: &str, supported: &[&str]) -> FieldError {
        let supported: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        FieldError::new(
            FieldErrorType::NotSupported,
            field,
            Some(Value::String(value.to_owned())),
            format!("supported values: {}", supported.join(", ")),
        )
    }

    /// The message without the field: `Invalid value: -1: must be greater than or equal to 0`.
    pub fn body(&self) -> String {
        let mut body = self.error_type.label().to_owned();
        if let Some(value) = &self.value
            && !matches!(
                self.error_type,
                FieldErrorType::Required | FieldErrorType::Forbidden | FieldErrorType::TooLong
            )
        {
            body.push_str(": ");
            body.push_str(&render_value(value));
        }
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Values print as Go's `%#v`-ish form kube uses: strings quoted, the rest as JSON.
fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// Go's `%#v` of a `[]string`, as kube's field errors print a list of names, which a JSON
/// value in [`FieldError::value`] cannot show.
pub fn go_strings(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// Go's `%#v` of an unstructured JSON value (`map[string]interface {}{"a":1}`, keys sorted),
/// as kube's field errors print the maps and lists of custom resources.
pub fn go_unstructured(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".into(),
        Value::String(s) => format!("{s:?}"),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by_key(|(k, _)| *k);
            let entries: Vec<String> = (entries.into_iter())
                .map(|(k, v)| format!("{k:?}:{}", go_unstructured(v)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", entries.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_unstructured).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// Every failure a request can meet.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ApiError {
    /// 404: the object does not exist.
    #[error("{resource} {name:?} not found")]
    NotFound {
        /// Its resource.
        resource: GroupResource,
        /// Its name.
        name: String,
    },
    /// 404: no route serves the path.
    #[error("the server could not find the requested resource")]
    NoRoute,
    /// 409: create of an object that exists.
    #[error("{resource} {name:?} already exists")]
    AlreadyExists {
        /// Its resource.
        resource: GroupResource,
        /// Its name.
        name: String,
    },
    /// 409: the object changed since the client read it, or a precondition failed.
    #[error("Operation cannot be fulfilled on {resource} {name:?}: {message}")]
    Conflict {
        /// Its resource.
        resource: GroupResource,
        /// Its name.
        name: String,
        /// Why.
        message: String,
    },
    /// 409: a server-side apply would change fields other managers own (kube's
    /// `NewApplyConflict`).
    #[error("{}", apply_conflict_message(conflicts))]
    ApplyConflict {
        /// Each conflicting field: its owner, as kube prints it (`"kubectl" using
        /// apps/v1`), and its path (`.spec.replicas`), grouped by owner in path order.
        conflicts: Vec<(String, String)>,
    },
    /// 422: the object fails validation.
    #[error(
        "{} {name:?} is invalid: {}",
        qualified_kind(group, kind),
        join_causes(causes)
    )]
    Invalid {
        /// Its group.
        group: String,
        /// Its kind.
        kind: String,
        /// Its name.
        name: String,
        /// One error per field.
        causes: Vec<FieldError>,
    },
    /// 400: the request is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// 401.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: kube's `NewForbidden` (a denied request, a write the server refuses).
    #[error("{}", forbidden_message(resource, name, message))]
    Forbidden {
        /// The resource, empty for a non-resource path.
        resource: GroupResource,
        /// The object's name, if the request names one.
        name: String,
        /// Why.
        message: String,
    },
    /// 405: the resource does not support the verb.
    #[error("{action} is not supported on resources of kind {:?}", resource.to_string())]
    MethodNotSupported {
        /// Its resource.
        resource: GroupResource,
        /// The verb (`create`, `delete`, ...).
        action: String,
    },
    /// 405: a write to a kind whose CustomResourceDefinition is being deleted (kube's CRD
    /// handler: only creates are refused; the objects go with the definition).
    #[error("{verb} not allowed while custom resource definition is terminating")]
    DefinitionTerminating {
        /// The kind's resource.
        resource: GroupResource,
        /// The verb refused (`create`).
        verb: String,
    },
    /// 405: no route for this method on the path.
    #[error("the server does not allow this method on the requested resource")]
    MethodNotAllowed,
    /// 406: no acceptable response media type.
    #[error("only the following media types are accepted: {0}")]
    NotAcceptable(String),
    /// 415: the body's media type is not accepted.
    #[error("the body of the request was in an unknown format - accepted media types include: {0}")]
    UnsupportedMediaType(String),
    /// 410: the resourceVersion is older than the retained history.
    #[error("{0}")]
    Expired(String),
    /// 410: a continue token's revision was compacted (kube's `inconsistentContinue`); the
    /// Status' `metadata.continue` goes on from the same key at the latest revision.
    #[error(
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
    )]
    InconsistentContinue {
        /// The token to go on with.
        continue_token: String,
    },
    /// 413: the body is larger than the limit.
    #[error("Request entity too large: {0}")]
    RequestEntityTooLarge(String),
    /// 429: try again later.
    #[error("Too many requests: {message}")]
    TooManyRequests {
        /// Why.
        message: String,
        /// Seconds to wait.
        retry_after_seconds: i32,
    },
    /// An admission webhook refused the write: its status, shaped as kube's `ToStatusErr`
    /// shapes it (a code of at least 400, the message naming the webhook).
    #[error("{}", .0.message.as_deref().unwrap_or_default())]
    Denied(Box<Status>),
    /// 500: a bug or an unexpected failure below.
    #[error("Internal error occurred: {0}")]
    Internal(String),
    /// 500 of no reason: what kube's storage reports as a plain Go error and its handler
    /// passes on as it is (`ErrorToAPIStatus`'s last case: a ComponentStatus nobody probes).
    #[error("{0}")]
    Unclassified(String),
    /// 503: the storage cannot be reached.
    #[error("{0}")]
    ServiceUnavailable(String),
    /// 504: a read asked for a resourceVersion the server has not reached, even after
    /// waiting for it (kube's `NewTooLargeResourceVersionError`); retry in a second.
    #[error("Timeout: Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion {
        /// The resourceVersion asked for.
        requested: u64,
        /// The latest one the server has.
        current: u64,
    },
    /// 504: the request did not complete in time; it may still take effect.
    #[error("Timeout: {message}")]
    Timeout {
        /// What timed out.
        message: String,
        /// Seconds to wait.
        retry_after_seconds: i32,
    },
}

/// kube's `resourceVersionTooHighRetrySeconds`.
const TOO_LARGE_RETRY_SECONDS: i32 = 1;

/// kube's `NewForbidden` message: `webapps.apps.example.dev "w" is forbidden: ...`, without
/// the name when there is none, and without the resource for a non-resource path.
fn forbidden_message(resource: &GroupResource, name: &str, message: &str) -> String {
    if resource.group.is_empty() && resource.resource.is_empty() {
        format!("forbidden: {message}")
    } else if name.is_empty() {
        format!("{resource} is forbidden: {message}")
    } else {
        format!("{resource} {name:?} is forbidden: {message}")
    }
}

fn qualified_kind(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    }
}

/// kube's `getConflictMessage`: one conflict on one line; several grouped by owner
/// (owners sorted), one `- path` line each.
fn apply_conflict_message(conflicts: &[(String, String)]) -> String {
    if let [(owner, path)] = conflicts {
        return format!("Apply failed with 1 conflict: conflict with {owner}: {path}");
    }
    let mut owners: Vec<&String> = conflicts.iter().map(|(owner, _)| owner).collect();
    owners.sort();
    owners.dedup();
    let mut lines = Vec::new();
    for owner in owners {
        lines.push(format!("conflicts with {owner}:"));
        for (_, path) in conflicts.iter().filter(|(o, _)| o == owner) {
            lines.push(format!("- {path}"));
        }
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// Kubernetes' aggregate error format: one error as is, several as `[a, b]`.
fn join_causes(causes: &[FieldError]) -> String {
    match causes {
        [one] => one.to_string(),
        many => {
            let parts: Vec<_> = many.iter().map(ToString::to_string).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

impl ApiError {
    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        match self {
            ApiError::NotFound { .. } | ApiError::NoRoute => 404,
            ApiError::AlreadyExists { .. }
            | ApiError::Conflict { .. }
            | ApiError::ApplyConflict { .. } => 409,
            ApiError::Invalid { .. } => 422,
            ApiError::BadRequest(_) => 400,
            ApiError::Unauthorized(_) => 401,
            ApiError::Forbidden { .. } => 403,
            ApiError::MethodNotSupported { .. }
            | ApiError::DefinitionTerminating { .. }
            | ApiError::MethodNotAllowed => 405,
            ApiError::NotAcceptable(_) => 406,
            ApiError::UnsupportedMediaType(_) => 415,
            ApiError::Expired(_) | ApiError::InconsistentContinue { .. } => 410,
            ApiError::RequestEntityTooLarge(_) => 413,
            ApiError::TooManyRequests { .. } => 429,
            ApiError::Internal(_) | ApiError::Unclassified(_) => 500,
            ApiError::Denied(status) => status
                .code
                .and_then(|code| u16::try_from(code).ok())
                .filter(|code| (400..600).contains(code))
                .unwrap_or(400),
            ApiError::ServiceUnavailable(_) => 503,
            ApiError::Timeout { .. } | ApiError::TooLargeResourceVersion { .. } => 504,
        }
    }

    /// The `reason` of the Status.
    pub fn reason(&self) -> &str {
        match self {
            ApiError::Denied(status) => status.reason.as_deref().unwrap_or_default(),
            ApiError::NotFound { .. } | ApiError::NoRoute => "NotFound",
            ApiError::AlreadyExists { .. } => "AlreadyExists",
            ApiError::Conflict { .. } | ApiError::ApplyConflict { .. } => "Conflict",
            ApiError::Invalid { .. } => "Invalid",
            ApiError::BadRequest(_) => "BadRequest",
            ApiError::Unauthorized(_) => "Unauthorized",
            ApiError::Forbidden { .. } => "Forbidden",
            ApiError::MethodNotSupported { .. }
            | ApiError::DefinitionTerminating { .. }
            | ApiError::MethodNotAllowed => "MethodNotAllowed",
            ApiError::NotAcceptable(_) => "NotAcceptable",
            ApiError::UnsupportedMediaType(_) => "UnsupportedMediaType",
            ApiError::Expired(_) | ApiError::InconsistentContinue { .. } => "Expired",
            ApiError::RequestEntityTooLarge(_) => "RequestEntityTooLarge",
            ApiError::TooManyRequests { .. } => "TooManyRequests",
            ApiError::Internal(_) => "InternalError",
            ApiError::Unclassified(_) => "",
            ApiError::ServiceUnavailable(_) => "ServiceUnavailable",
            ApiError::Timeout { .. } | ApiError::TooLargeResourceVersion { .. } => "Timeout",
        }
    }

    /// Seconds a client should wait before retrying, for `Retry-After`.
    pub fn retry_after_seconds(&self) -> Option<i32> {
        match self {
            ApiError::TooManyRequests {
                retry_after_seconds,
                ..
            }
            | ApiError::Timeout {
                retry_after_seconds,
                ..
            } => Some(*retry_after_seconds).filter(|s| *s > 0),
            ApiError::TooLargeResourceVersion { .. } => Some(TOO_LARGE_RETRY_SECONDS),
            _ => None,
        }
    }

    /// The `Status` body: the one place failures become wire objects.
    pub fn to_status(&self) -> Status {
        if let ApiError::Denied(status) = self {
            return Status {
                code: Some(i32::from(self.code())),
                ..(**status).clone()
            };
        }
        // Go's `omitempty`: an empty name or group (the core group) is left out.
        let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        let resource_details = |resource: &GroupResource, name: Option<&str>| StatusDetails {
            name: name.and_then(non_empty),
            group: non_empty(&resource.group),
            kind: Some(resource.resource.clone()),
            ..StatusDetails::default()
        };
        let details = match self {
            ApiError::NotFound { resource, name }
            | ApiError::AlreadyExists { resource, name }
            | ApiError::Conflict { resource, name, .. } => {
                Some(resource_details(resource, Some(name)))
            }
            ApiError::MethodNotSupported { resource, .. }
            | ApiError::DefinitionTerminating { resource, .. } => {
                Some(resource_details(resource, None))
            }
            ApiError::Forbidden { resource, name, .. } => Some(StatusDetails {
                name: non_empty(name),
                group: non_empty(&resource.group),
                kind: non_empty(&resource.resource),
                ..StatusDetails::default()
            }),
            ApiError::Invalid {
                group,
                kind,
                name,
                causes,
            } => Some(StatusDetails {
                name: non_empty(name),
                group: non_empty(group),
                kind: Some(kind.clone()),
                causes: Some(
                    (causes.iter())
                        .map(|c| StatusCause {
                            reason: Some(c.error_type.reason().to_owned()),
                            message: Some(c.body()),
                            field: Some(c.field.clone()),
                        })
                        .collect(),
                ),
                ..StatusDetails::default()
            }),
            ApiError::ApplyConflict { conflicts } => Some(StatusDetails {
                causes: Some(
                    (conflicts.iter())
                        .map(|(owner, path)| StatusCause {
                            reason: Some("FieldManagerConflict".into()),
                            message: Some(format!("conflict with {owner}")),
                            field: Some(path.clone()),
                        })
                        .collect(),
                ),
                ..StatusDetails::default()
            }),
            ApiError::Internal(message) => Some(StatusDetails {
                causes: Some(vec![StatusCause {
                    message: Some(message.clone()),
                    ..StatusCause::default()
                }]),
                ..StatusDetails::default()
            }),
            ApiError::TooManyRequests {
                retry_after_seconds,
                ..
            }
            | ApiError::Timeout {
                retry_after_seconds,
                ..
            } if *retry_after_seconds > 0 => Some(StatusDetails {
                retry_after_seconds: Some(*retry_after_seconds),
                ..StatusDetails::default()
            }),
            ApiError::TooLargeResourceVersion { .. } => Some(StatusDetails {
                retry_after_seconds: Some(TOO_LARGE_RETRY_SECONDS),
                causes: Some(vec![StatusCause {
                    reason: Some("ResourceVersionTooLarge".into()),
                    message: Some("Too large resource version".into()),
                    field: None,
                }]),
                ..StatusDetails::default()
            }),
            _ => None,
        };
        let metadata = match self {
            ApiError::InconsistentContinue { continue_token } => ListMeta {
                continue_: Some(continue_token.clone()),
                ..ListMeta::default()
            },
            _ => ListMeta::default(),
        };
        Status {
            kind: Some("Status".into()),
            api_version: Some("v1".into()),
            metadata,
            status: Some("Failure".into()),
            message: Some(self.to_string()),
            // kube's `StatusReasonUnknown` is empty, left out of the JSON.
            reason: Some(self.reason().to_owned()).filter(|r| !r.is_empty()),
            details,
            code: Some(i32::from(self.code())),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn webapps() -> GroupResource {
        GroupResource::new("apps.example.dev", "webapps")
    }

    #[track_caller]
    fn check(error: ApiError, expected: Value) {
        let actual = serde_json::to_value(error.to_status()).unwrap();
        assert_eq!(
            actual,
            expected,
            "{}",
            serde_json::to_string_pretty(&actual).unwrap()
        );
    }

    #[test]
    fn statuses_match_kube_apiserver() {
        check(
            ApiError::NotFound {
                resource: webapps(),
                name: "web".into(),
            },
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "webapps.apps.example.dev \"web\" not found", "reason": "NotFound",
                "details": {"name": "web", "group": "apps.example.dev", "kind": "webapps"}, "code": 404}),
        );
        check(
            ApiError::NotFound {
                resource: GroupResource::new("", "namespaces"),
                name: "x".into(),
            },
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "namespaces \"x\" not found", "reason": "NotFound",
                "details": {"name": "x", "kind": "namespaces"}, "code": 404}),
        );
        check(
            ApiError::Conflict {
                resource: webapps(),
                name: "web".into(),
                message: "the object has been modified; please apply your changes to the latest version and try again".into(),
            },
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Operation cannot be fulfilled on webapps.apps.example.dev \"web\": the object has been modified; please apply your changes to the latest version and try again",
                "reason": "Conflict",
                "details": {"name": "web", "group": "apps.example.dev", "kind": "webapps"}, "code": 409}),
        );
        check(
            ApiError::Invalid {
                group: "apps.example.dev".into(),
                kind: "WebApp".into(),
                name: "web".into(),
                causes: vec![FieldError::new(
                    FieldErrorType::Invalid,
                    "spec.replicas",
                    Some(json!(-1)),
                    "must be greater than or equal to 0",
                )],
            },
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "WebApp.apps.example.dev \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "reason": "Invalid",
                "details": {"name": "web", "group": "apps.example.dev", "kind": "WebApp", "causes": [
                    {"reason": "FieldValueInvalid", "message": "Invalid value: -1: must be greater than or equal to 0", "field": "spec.replicas"}]},
                "code": 422}),
        );
    }

    #[test]
    fn several_causes_aggregate_in_brackets() {
        let error = ApiError::Invalid {
            group: String::new(),
            kind: "ConfigMap".into(),
            name: "c".into(),
            causes: vec![
                FieldError::new(
                    FieldErrorType::Required,
                    "metadata.name",
                    None,
                    "name or generateName is required",
                ),
                FieldError::new(
                    FieldErrorType::NotSupported,
                    "spec.protocol",
                    Some(json!("SCTP")),
                    "supported values: \"TCP\", \"UDP\"",
                ),
            ],
        };
        assert_eq!(
            error.to_string(),
            "ConfigMap \"c\" is invalid: [metadata.name: Required value: name or generateName is required, spec.protocol: Unsupported value: \"SCTP\": supported values: \"TCP\", \"UDP\"]"
        );
    }
}
