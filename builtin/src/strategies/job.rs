//! kube's Job strategy on create: unless the Job asks to choose its own selector
//! (`manualSelector`), its pods are labelled with its name and uid and selected by the uid.

use std::collections::BTreeMap;

use crate::api::batch::v1::Job;

/// The labels a Job's pods get: its name, and its uid, under the legacy and the current key.
const NAME_LABELS: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];
const UID_LABELS: [&str; 2] = ["controller-uid", "batch.kubernetes.io/controller-uid"];

impl kapi::Strategy for Job {
    fn prepare_for_create(&mut self) {
        if self.spec.manual_selector != Some(true) {
            generate_selector(self);
        }
    }

    fn validate(&self) -> Vec<kapi::error::FieldError> {
        crate::validation::batch::job(self)
    }

    fn warnings(&self) -> Vec<String> {
        crate::warnings::job(self)
    }

    fn warnings_on_update(&self, old: &Self) -> Vec<String> {
        crate::warnings::job_update(self, old)
    }

    fn validate_update(&self, old: &Self) -> Vec<kapi::error::FieldError> {
        crate::validation::batch::job_update(self, old)
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

/// Labels the template with the Job's name and uid (labels already there are kept, and a
/// conflict is validation's to refuse), and selects the uid.
/// (In kube, a Job whose labels its defaults copied from the template gets these labels
/// too, the two being one Go map; kapi's Job keeps the labels it was given or copied.)
fn generate_selector(job: &mut Job) {
    let name = job.metadata.name.clone().unwrap_or_default();
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let labels = (job.spec.template.metadata.labels).get_or_insert_with(BTreeMap::new);
    for key in NAME_LABELS {
        labels.entry(key.to_owned()).or_insert_with(|| name.clone());
    }
    for key in UID_LABELS {
        labels.entry(key.to_owned()).or_insert_with(|| uid.clone());
    }
    let selector = job.spec.selector.get_or_insert_with(Default::default);
    (selector.match_labels.get_or_insert_with(BTreeMap::new))
        .entry(UID_LABELS[1].to_owned())
        .or_insert(uid);
}
