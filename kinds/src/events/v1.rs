//! `events.k8s.io/v1` Event: the core Event with kube's renames (`regarding`, `note`,
//! `reportingController`) and its older fields marked `deprecated`; converted to and from
//! the core Event as kube's `pkg/apis/events/v1/conversion.go` does, field for field.

use kapi_core::Convert;

pub use crate::api::events::v1::{Event, EventSeries};
use crate::core::event as core;

impl Convert<core::Event> for Event {
    fn into_hub(self, hub: &mut core::Event) {
        *hub = core::Event {
            metadata: self.metadata,
            involved_object: self.regarding,
            reason: self.reason,
            message: self.note,
            source: self.deprecated_source,
            first_timestamp: self.deprecated_first_timestamp,
            last_timestamp: self.deprecated_last_timestamp,
            count: self.deprecated_count,
            r#type: self.r#type,
            event_time: self.event_time,
            series: self.series.map(|series| core::EventSeries {
                count: series.count,
                last_observed_time: series.last_observed_time,
            }),
            action: self.action,
            related: self.related,
            reporting_component: self.reporting_controller,
            reporting_instance: self.reporting_instance,
        };
    }

    fn from_hub(hub: &core::Event) -> Self {
        let hub = hub.clone();
        Event {
            metadata: hub.metadata,
            event_time: hub.event_time,
            series: hub.series.map(|series| EventSeries {
                count: series.count,
                last_observed_time: series.last_observed_time,
            }),
            reporting_controller: hub.reporting_component,
            reporting_instance: hub.reporting_instance,
            action: hub.action,
            reason: hub.reason,
            regarding: hub.involved_object,
            related: hub.related,
            note: hub.message,
            r#type: hub.r#type,
            deprecated_source: hub.source,
            deprecated_first_timestamp: hub.first_timestamp,
            deprecated_last_timestamp: hub.last_timestamp,
            deprecated_count: hub.count,
        }
    }
}
