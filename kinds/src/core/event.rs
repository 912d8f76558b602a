//! `Event` of the core group: a report of something that happened to an object, shown by
//! `kubectl describe` and `kubectl events`.
//!
//! [`Event`] is the hub of two kinds, as kube's internal `core.Event` is: core `v1` (the
//! hub's own shape) and `events.k8s.io/v1` ([`crate::events`]), which is declared
//! `stored_with` this kind, so both groups read and write the same objects. The rules are
//! kube's `ValidateEventCreate` / `ValidateEventUpdate`: the legacy ones for every request,
//! the strict ones for requests through `events.k8s.io/v1`.

use kapi_core::error::{FieldError, FieldErrorType};
use kapi_core::validation;
use serde::Serialize;
use serde_json::Value;

pub use crate::api::core::v1::{Event, EventSeries, EventSource};
pub use kapi_core::meta::ObjectReference;

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
        let component = self.reporting_component.as_str();
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
                self.reporting_instance.as_str(),
                SHORT_LIMIT,
            ),
            ("action", self.action.as_str(), SHORT_LIMIT),
            ("reason", self.reason.as_str(), SHORT_LIMIT),
        ] {
            if value.is_empty() {
                errors.push(required(field));
            }
            if value.len() > limit {
                errors.push(too_long(field, limit));
            }
        }
        if self.message.len() > NOTE_LIMIT {
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
        if series.count < 2 {
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
        let kind = self.r#type.as_str();
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
        if self.count != 0 {
            errors.push(unset("count"));
        }
        if !self.source.component.is_empty() || !self.source.host.is_empty() {
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
