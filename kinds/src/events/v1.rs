//! `events.k8s.io/v1` Event: the core Event with kube's renames (`regarding`, `note`,
//! `reportingController`) and its older fields marked `deprecated`.

use kapi_core::meta::{MicroTime, ObjectMeta, Time};
use kapi_macros::Convert;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::core::event::{EventSource, ObjectReference};

/// A report of something that happened to an object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Convert)]
#[convert(hub = crate::core::Event)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.events.v1.Event")]
pub struct Event {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// When the event was first observed. Required of new events; events recorded through
    /// the core group may have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<MicroTime>,
    /// The series of occurrences this event stands for, if it repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<EventSeries>,
    /// The controller that emitted the event (`kubernetes.io/kubelet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[convert(rename = "reporting_component")]
    pub reporting_controller: Option<String>,
    /// The instance of that controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporting_instance: Option<String>,
    /// What was done, or failed, about the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Why the event happened, short and machine-readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The object this event is about.
    #[serde(default)]
    #[convert(rename = "involved_object")]
    pub regarding: ObjectReference,
    /// A second object involved, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related: Option<ObjectReference>,
    /// What happened, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[convert(rename = "message")]
    pub note: Option<String>,
    /// `Normal` or `Warning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// The core group's `source`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[convert(rename = "source")]
    pub deprecated_source: Option<EventSource>,
    /// The core group's `firstTimestamp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[convert(rename = "first_timestamp")]
    pub deprecated_first_timestamp: Option<Time>,
    /// The core group's `lastTimestamp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[convert(rename = "last_timestamp")]
    pub deprecated_last_timestamp: Option<Time>,
    /// The core group's `count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[convert(rename = "count")]
    pub deprecated_count: Option<i32>,
}

/// Repeated occurrences of an event (both fields are required of new series).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Convert)]
#[convert(hub = crate::core::event::EventSeries)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.events.v1.EventSeries")]
pub struct EventSeries {
    /// Occurrences so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i32>,
    /// When the last occurrence was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_observed_time: Option<MicroTime>,
}
