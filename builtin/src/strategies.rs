//! The kinds' own create and update rules. Every built-in kind follows kube's generic
//! rules for its own kinds (a `PUT` needs no resourceVersion); the kinds below add kube's
//! validation (`crate::validation`), what kube's strategies set on a new object (`pod`,
//! `job`, `certificates`) or what their conversions need. The others (`kube_defaults!`, in the generated
//! declarations) do not validate their own fields yet.

mod certificates;
mod daemon_set;
mod job;
mod pod;
mod validated;

macro_rules! kube_defaults {
    ($($path:path),* $(,)?) => {
        $(impl kapi::Strategy for $path {
            fn allow_unconditional_update() -> bool {
                true
            }
        })*
    };
}

pub(crate) use kube_defaults;

use crate::api::autoscaling::v2::HorizontalPodAutoscaler;

/// A v2 write drops the annotations that carry v2's fields through v1, as kube's v2
/// conversion does: they are never stored (a v1 read makes them again).
impl kapi::Strategy for HorizontalPodAutoscaler {
    fn prepare_for_create(&mut self) {
        crate::conversions::drop_round_trip_annotations(&mut self.metadata.annotations);
    }

    fn prepare_for_update(&mut self, _old: &Self) {
        crate::conversions::drop_round_trip_annotations(&mut self.metadata.annotations);
    }

    fn validate(&self) -> Vec<kapi::error::FieldError> {
        crate::validation::cluster::autoscaler(self)
    }

    fn allow_unconditional_update() -> bool {
        true
    }

    fn subresource_metadata(subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => kapi::api::STATUS_METADATA,
            _ => &[],
        }
    }
}

/// kube's PriorityClass storage: its validation, and the system classes (which the API
/// server makes at start) cannot be deleted.
impl kapi::Strategy for crate::api::scheduling::v1::PriorityClass {
    fn validate(&self) -> Vec<kapi::error::FieldError> {
        crate::validation::scheduling::priority_class(self)
    }

    fn validate_update(&self, old: &Self) -> Vec<kapi::error::FieldError> {
        crate::validation::scheduling::priority_class_update(self, old)
    }

    fn allow_unconditional_update() -> bool {
        true
    }

    fn refuses_deletes() -> bool {
        true
    }

    fn delete_refused(&self) -> Option<String> {
        let name = self.metadata.name.as_deref().unwrap_or_default();
        matches!(name, "system-node-critical" | "system-cluster-critical")
            .then(|| "this is a system priority class and cannot be deleted".to_owned())
    }
}
