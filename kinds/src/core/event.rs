//! `Event` of the core group: a report of something that happened to an object, shown by
//! `kubectl describe` and `kubectl events`.
//!
//! [`Event`] is the hub of two kinds, as kube's internal `core.Event` is: core `v1` (the
//! hub's own shape) and `events.k8s.io/v1` ([`crate::events`]), which is declared
//! `stored_with` this kind, so both groups read and write the same objects. The rules are
//! kube's `ValidateEventCreate` / `ValidateEventUpdate`: the legacy ones for every request,
//! the strict ones for requests through `events.k8s.io/v1`.

use kapi_core::error::{FieldError, FieldErrorType};
use kapi_core::meta::{MicroTime, ObjectMeta, Time};
use kapi_core::validation;
use kapi_macros::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A report of something that happened to an object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "",
    kind = "Event",
    plural = "events",
    delete_status,
    namespaced,
    short_name = "ev",
    printer_column(name = "Last Seen", type = "date", json_path = ".lastTimestamp"),
    printer_column(name = "Type", type = "string", json_path = ".type"),
    printer_column(name = "Reason", type = "string", json_path = ".reason"),
    printer_column(name = "Object", type = "string", json_path = ".involvedObject.name"),
    printer_column(name = "Message", type = "string", json_path = ".message"),
    selectable_field = ".involvedObject.kind",
    selectable_field = ".involvedObject.namespace",
    selectable_field = ".involvedObject.name",
    selectable_field = ".involvedObject.uid",
    selectable_field = ".involvedObject.apiVersion",
    selectable_field = ".involvedObject.resourceVersion",
    selectable_field = ".involvedObject.fieldPath",
    selectable_field = ".reason",
    selectable_field = ".reportingComponent",
    // kube's `source`: the reporter's component, else the new API's reporting controller.
    selectable_field(label = "source", path = ".source.component", or = ".reportingComponent"),
    selectable_field = ".type",
    version(name = "v1", storage)
)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.core.v1.Event")]
pub struct Event {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The object this event is about.
    #[serde(default)]
    pub involved_object: ObjectReference,
    /// Why the event happened, short and machine-readable (`FailedMount`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What happened, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The component reporting the event (older reporters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<EventSource>,
    /// When the event was first recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<Time>,
    /// When the event was recorded most recently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<Time>,
    /// How many times the event has occurred.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i32>,
    /// `Normal` or `Warning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// When the event was first observed (newer reporters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<MicroTime>,
    /// The series of occurrences this event stands for, if it repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<EventSeries>,
    /// What was done, or failed, about the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// A second object involved, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related: Option<ObjectReference>,
    /// The controller that emitted the event (`kubernetes.io/kubelet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporting_component: Option<String>,
    /// The instance of that controller (`kubelet-xyzf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporting_instance: Option<String>,
}

/// A reference to an object: kapi-core's, shared with the built-in kinds.
pub use kapi_core::meta::ObjectReference;

/// The component that reported an event (older reporters).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.core.v1.EventSource")]
pub struct EventSource {
    /// Component name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    /// Node name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// Repeated occurrences of an event.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.core.v1.EventSeries")]
pub struct EventSeries {
    /// Occurrences so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i32>,
    /// When the last occurrence was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_observed_time: Option<MicroTime>,
}

/// kube's `ReportingInstanceLengthLimit`, `ActionLengthLimit`, `ReasonLengthLimit`.
const SHORT_LIMIT: usize = 128;
/// kube's `NoteLengthLimit`.
const NOTE_LIMIT: usize = 1024;

/// The group whose requests get kube's strict Event rules (`events.k8s.io/v1` and newer;
/// not core `v1` nor the removed `events.k8s.io/v1beta1`).
fn strict(api_version: &str) -> bool {
    api_version.starts_with("events.k8s.io/") && api_version != "events.k8s.io/v1beta1"
}

fn error(kind: FieldErrorType, field: &str, value: Option<&str>, message: &str) -> FieldError {
    FieldError::new(kind, field, value.map(|v| Value::String(v.into())), message)
}

fn required(field: &str) -> FieldError {
    error(FieldErrorType::Required, field, None, "")
}

impl Event {
    /// kube's `legacyValidateEvent`: every Event, whatever the request's version.
    fn validate_legacy(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let namespace = self.metadata.namespace.as_deref().unwrap_or("");
        let involved = text(&self.involved_object.namespace);
        let mismatch = || {
            error(
                FieldErrorType::Invalid,
                "involvedObject.namespace",
                Some(involved),
                "does not match event.namespace",
            )
        };
        let too_long = |field: &str, limit: usize| {
            let message = format!("can have at most {limit} characters");
            error(FieldErrorType::Invalid, field, Some(""), &message)
        };
        if self.event_time.is_none() {
            // Old reporters: an event about a cluster-scoped object may live in `default`.
            if involved.is_empty() {
                if !namespace.is_empty() && namespace != "default" {
                    errors.push(mismatch());
                }
            } else if namespace != involved {
                errors.push(mismatch());
            }
            return errors;
        }
        if involved.is_empty() && namespace != "default" && namespace != "kube-system" {
            errors.push(mismatch());
        }
        let component = text(&self.reporting_component);
        if component.is_empty() {
            errors.push(required("reportingComponent"));
        }
        for message in validation::qualified_name(component) {
            errors.push(error(
                FieldErrorType::Invalid,
                "reportingComponent",
                Some(component),
                &message,
            ));
        }
        for (field, value, limit) in [
            (
                "reportingInstance",
                text(&self.reporting_instance),
                SHORT_LIMIT,
            ),
            ("action", text(&self.action), SHORT_LIMIT),
            ("reason", text(&self.reason), SHORT_LIMIT),
        ] {
            if value.is_empty() {
                errors.push(required(field));
            }
            if value.len() > limit {
                errors.push(too_long(field, limit));
            }
        }
        if text(&self.message).len() > NOTE_LIMIT {
            errors.push(too_long("message", NOTE_LIMIT));
        }
        errors
    }

    /// kube's `validateV1EventSeries`.
    fn validate_series(&self) -> Vec<FieldError> {
        let Some(series) = &self.series else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        if series.count.unwrap_or(0) < 2 {
            let message = "should be at least 2";
            errors.push(error(
                FieldErrorType::Invalid,
                "series.count",
                Some(""),
                message,
            ));
        }
        if series.last_observed_time.is_none() {
            errors.push(required("series.lastObservedTime"));
        }
        errors
    }
}

impl kapi_core::Strategy for Event {
    /// kube's own kinds may be replaced without a resourceVersion.
    fn allow_unconditional_update() -> bool {
        true
    }

    /// kube's Event strategy: a `PUT` of a missing Event records it.
    fn allow_create_on_update() -> bool {
        true
    }

    /// Through core `v1` only the legacy rules apply (backwards compatibility).
    fn validate(&self) -> Vec<FieldError> {
        self.validate_legacy()
    }

    /// kube's `ValidateEventCreate`: through `events.k8s.io/v1`, also a series of two or
    /// more, an `eventTime`, a `Normal` or `Warning` type, and none of the deprecated
    /// fields.
    fn validate_in(&self, api_version: &str) -> Vec<FieldError> {
        let mut errors = self.validate_legacy();
        if !strict(api_version) {
            return errors;
        }
        errors.extend(self.validate_series());
        if self.event_time.is_none() {
            errors.push(required("eventTime"));
        }
        let kind = text(&self.r#type);
        if kind != "Normal" && kind != "Warning" {
            let message = format!("has invalid value: {kind}");
            errors.push(error(FieldErrorType::Invalid, "type", Some(""), &message));
        }
        let unset = |field: &str| {
            error(
                FieldErrorType::Invalid,
                field,
                Some(""),
                "needs to be unset",
            )
        };
        if self.first_timestamp.is_some() {
            errors.push(unset("firstTimestamp"));
        }
        if self.last_timestamp.is_some() {
            errors.push(unset("lastTimestamp"));
        }
        if self.count.unwrap_or(0) != 0 {
            errors.push(unset("count"));
        }
        let source = self.source.clone().unwrap_or_default();
        if !text(&source.component).is_empty() || !text(&source.host).is_empty() {
            errors.push(unset("source"));
        }
        errors
    }

    /// kube's `ValidateEventUpdate`: through `events.k8s.io/v1`, what an event reports is
    /// immutable; only its series (and metadata) may change.
    fn validate_update_in(&self, old: &Self, api_version: &str) -> Vec<FieldError> {
        let mut errors = self.validate_legacy();
        if !strict(api_version) {
            return errors;
        }
        if self.series != old.series {
            errors.extend(self.validate_series());
        }
        // What an event reports may not change; its series, message and deprecated
        // counters may (kube's list since 1.21, which compares `eventTime` to the
        // microsecond: what the field holds).
        let fields = [
            (
                "involvedObject",
                json(&self.involved_object),
                json(&old.involved_object),
            ),
            ("reason", json(&self.reason), json(&old.reason)),
            ("type", json(&self.r#type), json(&old.r#type)),
            ("eventTime", json(&self.event_time), json(&old.event_time)),
            ("action", json(&self.action), json(&old.action)),
            ("related", json(&self.related), json(&old.related)),
            (
                "reportingComponent",
                json(&self.reporting_component),
                json(&old.reporting_component),
            ),
            (
                "reportingInstance",
                json(&self.reporting_instance),
                json(&old.reporting_instance),
            ),
        ];
        for (field, new, old) in fields {
            if new != old {
                errors.push(FieldError::new(
                    FieldErrorType::Invalid,
                    field,
                    Some(new),
                    "field is immutable",
                ));
            }
        }
        errors
    }
}

/// An optional string, empty when absent (Go's zero value).
fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("")
}

/// A field's value as JSON, for errors and comparisons.
fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
