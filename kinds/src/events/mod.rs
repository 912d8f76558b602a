//! `events.k8s.io`: the Events of the core group, seen through the group newer reporters
//! use (client-go's `events` package, kube-rs's `Recorder`).
//!
//! kube-apiserver keeps both groups' Events in one storage, as one internal type; so does
//! kapi: [`Event`] is declared `stored_with` [`crate::core::Event`], whose hub, storage keys
//! (`/registry/events/...`) and storage version (`v1`) it shares. An Event written through
//! either group is read through both, and one watch of either sees the other's writes.

pub mod v1;

use kapi_macros::Resource;

/// `events.k8s.io` Event: the core Events, in this group's shape ([`v1::Event`]).
#[derive(Resource)]
#[resource(
    group = "events.k8s.io",
    kind = "Event",
    plural = "events",
    delete_status,
    namespaced,
    short_name = "ev",
    stored_with = crate::core::Event,
    printer_column(name = "Last Seen", type = "date", json_path = ".lastTimestamp"),
    printer_column(name = "Type", type = "string", json_path = ".type"),
    printer_column(name = "Reason", type = "string", json_path = ".reason"),
    printer_column(name = "Object", type = "string", json_path = ".involvedObject.name"),
    printer_column(name = "Message", type = "string", json_path = ".message"),
    selectable_field(label = "regarding.kind", path = ".involvedObject.kind"),
    selectable_field(label = "regarding.namespace", path = ".involvedObject.namespace"),
    selectable_field(label = "regarding.name", path = ".involvedObject.name"),
    selectable_field(label = "regarding.uid", path = ".involvedObject.uid"),
    selectable_field(label = "regarding.apiVersion", path = ".involvedObject.apiVersion"),
    selectable_field(
        label = "regarding.resourceVersion",
        path = ".involvedObject.resourceVersion"
    ),
    selectable_field(label = "regarding.fieldPath", path = ".involvedObject.fieldPath"),
    selectable_field = ".reason",
    selectable_field(label = "reportingController", path = ".reportingComponent"),
    selectable_field = ".type",
    version(name = "v1", ty = v1::Event)
)]
pub struct Event;
