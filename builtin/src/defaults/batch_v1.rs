//! `batch/v1`: how many pods a Job runs and how often it retries, what it replaces, and a
//! CronJob's concurrency and history.

use super::{or, or_str};
use crate::api::batch::v1::{CronJob, Job, PodFailurePolicyOnPodConditionsPattern};

/// One pod to completion unless said (a work queue when only `parallelism` is), six
/// retries (unbounded with a limit per index), the template's labels on the Job, not
/// indexed, not suspended, failed pods replaced once failed (terminating ones too without a
/// failure policy), the selector generated.
pub(crate) fn job(job: &mut Job) {
    let spec = &mut job.spec;
    if spec.completions.is_none() && spec.parallelism.is_none() {
        spec.completions = Some(1);
    }
    or(&mut spec.parallelism, 1);
    let backoff = match spec.backoff_limit_per_index {
        Some(_) => i32::MAX,
        None => 6,
    };
    or(&mut spec.backoff_limit, backoff);
    if let Some(labels) = &spec.template.metadata.labels
        && job.metadata.labels.as_ref().is_none_or(|l| l.is_empty())
    {
        job.metadata.labels = Some(labels.clone());
    }
    or(&mut spec.completion_mode, "NonIndexed".to_owned());
    or(&mut spec.suspend, false);
    let replacement = match spec.pod_failure_policy {
        Some(_) => "Failed",
        None => "TerminatingOrFailed",
    };
    or(&mut spec.pod_replacement_policy, replacement.to_owned());
    or(&mut spec.manual_selector, false);
}

/// Runs may overlap, are not suspended, and three successful and one failed Job are kept.
pub(crate) fn cron_job(cron_job: &mut CronJob) {
    let spec = &mut cron_job.spec;
    or_str(&mut spec.concurrency_policy, "Allow");
    or(&mut spec.suspend, false);
    or(&mut spec.successful_jobs_history_limit, 3);
    or(&mut spec.failed_jobs_history_limit, 1);
}

/// A pod condition a failure policy matches is one that holds.
pub(crate) fn pod_failure_policy_on_pod_conditions_pattern(
    pattern: &mut PodFailurePolicyOnPodConditionsPattern,
) {
    or_str(&mut pattern.status, "True");
}
