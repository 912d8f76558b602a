//! kube's DaemonSet strategy: its template generation, which apps/v1 carries in the
//! `deprecated.daemonset.template.generation` annotation (kube's conversion moves it
//! between that annotation and the internal `spec.templateGeneration`), is 1 on create
//! (or what the client wrote, when more) and moves with each change of the template; an
//! update cannot set it.

use std::collections::BTreeMap;

use crate::api::apps::v1::DaemonSet;
use crate::validation::workloads;

/// Where apps/v1 keeps the template generation.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

impl kapi::Strategy for DaemonSet {
    fn prepare_for_create(&mut self) {
        let generation = template_generation(self).max(1);
        set_template_generation(self, generation);
    }

    fn prepare_for_update(&mut self, old: &Self) {
        let mut generation = template_generation(old);
        if self.spec.template != old.spec.template {
            generation += 1;
        }
        set_template_generation(self, generation);
    }

    fn validate(&self) -> Vec<kapi::error::FieldError> {
        workloads::daemon_set(self)
    }

    fn warnings(&self) -> Vec<String> {
        crate::warnings::daemon_set(self)
    }

    fn warnings_on_update(&self, old: &Self) -> Vec<String> {
        crate::warnings::daemon_set_update(self, old)
    }

    fn validate_update(&self, old: &Self) -> Vec<kapi::error::FieldError> {
        workloads::daemon_set_update(self, old)
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

/// The template generation the annotation holds (0 when absent or not a number).
fn template_generation(set: &DaemonSet) -> i64 {
    (set.metadata.annotations.as_ref())
        .and_then(|annotations| annotations.get(TEMPLATE_GENERATION))
        .and_then(|value| value.parse().ok())
        .unwrap_or(0)
}

fn set_template_generation(set: &mut DaemonSet, generation: i64) {
    let annotations = set.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(TEMPLATE_GENERATION.to_owned(), generation.to_string());
}
