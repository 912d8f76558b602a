//! Jobs and CronJobs (`pkg/apis/batch/validation`): counts that may not be negative, pods
//! that do not restart always, a selector generated unless the Job chooses its own, and
//! what an update may not change; a CronJob's schedule and policies.

mod cron;

use kapi::error::FieldError;
use kapi::validation::Path;

use super::pod;
use super::{
    immutable, invalid_each, json, label_selector, labels_of, non_negative, one_of, required,
};
use crate::api::batch::v1::{CronJob, Job, JobSpec, JobTemplateSpec};

/// The label a generated selector selects (kube's `batch.ControllerUidLabel`).
const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";

/// kube's `DNS1035LabelMaxLength - 11`: a CronJob's Jobs add `-<timestamp>` to its name.
const CRON_JOB_NAME_MAX: usize = 52;

/// kube's `ValidateJob` on create.
pub(crate) fn job(job: &Job) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let mut errors = generated_selector(job);
    errors.extend(job_spec(&job.spec, &spec));
    errors
}

/// kube's `validateGeneratedSelector`: unless the Job chose its own selector, it is the
/// one generated from its uid, exactly.
fn generated_selector(job: &Job) -> Vec<FieldError> {
    if job.spec.manual_selector == Some(true) {
        return Vec::new();
    }
    let spec = Path::new("spec");
    if job.spec.template.metadata.labels.is_none() {
        return vec![required(
            &spec.children(&["template", "metadata", "labels"]),
            "",
        )];
    }
    let Some(selector) = &job.spec.selector else {
        return Vec::new();
    };
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let generated = std::collections::BTreeMap::from([(CONTROLLER_UID.to_owned(), uid)]);
    let is_generated =
        selector.match_labels.as_ref() == Some(&generated) && selector.match_expressions.is_empty();
    match is_generated {
        true => Vec::new(),
        false => vec![FieldError::invalid(
            spec.child("selector"),
            json(selector),
            "`selector` not auto-generated",
        )],
    }
}

/// kube's `ValidateJobSpec`: the Job's own spec, which has a selector.
fn job_spec(s: &JobSpec, spec: &Path) -> Vec<FieldError> {
    let mut errors = job_spec_common(s, spec);
    let at = spec.child("selector");
    match &s.selector {
        None => errors.push(required(&at, "")),
        Some(selector) => {
            errors.extend(label_selector(selector, &at));
            if super::selector_is_valid(selector)
                && !super::selector_matches(selector, labels_of(&s.template.metadata))
            {
                errors.push(FieldError::invalid(
                    spec.children(&["template", "metadata", "labels"]),
                    json(labels_of(&s.template.metadata)),
                    "`selector` does not match template `labels`",
                ));
            }
        }
    }
    errors
}

/// kube's `validateJobSpec`: what a Job and a CronJob's job template share.
fn job_spec_common(s: &JobSpec, spec: &Path) -> Vec<FieldError> {
    let mut errors = non_negative(s.parallelism, &spec.child("parallelism"));
    errors.extend(non_negative(s.completions, &spec.child("completions")));
    errors.extend(non_negative(
        s.active_deadline_seconds,
        &spec.child("activeDeadlineSeconds"),
    ));
    errors.extend(non_negative(s.backoff_limit, &spec.child("backoffLimit")));
    errors.extend(non_negative(
        s.ttl_seconds_after_finished,
        &spec.child("ttlSecondsAfterFinished"),
    ));
    if let Some(mode) = &s.completion_mode {
        let at = spec.child("completionMode");
        errors.extend(one_of(mode, &["NonIndexed", "Indexed"], &at));
        if mode == "Indexed" && s.completions.is_none() {
            errors.push(required(
                &spec.child("completions"),
                "when completion mode is Indexed",
            ));
        }
    }
    if let Some(policy) = &s.pod_replacement_policy {
        errors.extend(one_of(
            policy,
            &["Failed", "TerminatingOrFailed"],
            &spec.child("podReplacementPolicy"),
        ));
    }
    let template = spec.child("template");
    errors.extend(pod::template(&s.template, &template));
    let restart = &s.template.spec.restart_policy;
    if restart != "OnFailure" && restart != "Never" {
        let at = template.children(&["spec", "restartPolicy"]);
        errors.push(required(&at, "valid values: \"OnFailure\", \"Never\""));
    }
    errors
}

/// kube's `ValidateJobUpdate`: the new spec's rules, then what may not change.
pub(crate) fn job_update(new: &Job, old: &Job) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let mut errors = job_spec(&new.spec, &spec);
    let (s, o) = (&new.spec, &old.spec);
    errors.extend(immutable(
        &s.completions,
        &o.completions,
        &spec.child("completions"),
    ));
    errors.extend(immutable(&s.selector, &o.selector, &spec.child("selector")));
    errors.extend(immutable(&s.template, &o.template, &spec.child("template")));
    errors.extend(immutable(
        &s.completion_mode,
        &o.completion_mode,
        &spec.child("completionMode"),
    ));
    errors.extend(immutable(
        &s.pod_failure_policy,
        &o.pod_failure_policy,
        &spec.child("podFailurePolicy"),
    ));
    errors.extend(immutable(
        &s.backoff_limit_per_index,
        &o.backoff_limit_per_index,
        &spec.child("backoffLimitPerIndex"),
    ));
    errors
}

/// kube's `ValidateCronJobCreate`.
pub(crate) fn cron_job(cron_job: &CronJob) -> Vec<FieldError> {
    let mut errors = cron_job_spec(cron_job, None);
    let name = cron_job.metadata.name.clone().unwrap_or_default();
    if name.len() > CRON_JOB_NAME_MAX {
        let message = format!("must be no more than {CRON_JOB_NAME_MAX} characters");
        errors.push(FieldError::invalid(
            Path::new("metadata").child("name"),
            name,
            message,
        ));
    }
    errors
}

/// kube's `ValidateCronJobUpdate`.
pub(crate) fn cron_job_update(new: &CronJob, old: &CronJob) -> Vec<FieldError> {
    cron_job_spec(new, Some(old))
}

/// kube's `validateCronJobSpec`.
fn cron_job_spec(cron_job: &CronJob, old: Option<&CronJob>) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &cron_job.spec;
    let mut errors = Vec::new();
    let schedule = spec.child("schedule");
    if s.schedule.is_empty() {
        errors.push(required(&schedule, ""));
    } else {
        if let Err(message) = cron::parse_standard(&s.schedule) {
            errors.push(FieldError::invalid(&schedule, s.schedule.as_str(), message));
        }
        let allowed = old.is_some_and(|old| old.spec.schedule.contains("TZ"));
        if !allowed && s.schedule.contains("TZ") {
            let message = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead";
            errors.push(FieldError::invalid(&schedule, s.schedule.as_str(), message));
        }
    }
    errors.extend(non_negative(
        s.starting_deadline_seconds,
        &spec.child("startingDeadlineSeconds"),
    ));
    if let Some(zone) = &s.time_zone
        && old.is_none_or(|old| old.spec.time_zone.as_ref() != Some(zone))
    {
        errors.extend(time_zone(zone, &spec.child("timeZone")));
    }
    let policy = spec.child("concurrencyPolicy");
    match s.concurrency_policy.is_empty() {
        true => errors.push(required(&policy, "")),
        false => errors.extend(one_of(
            &s.concurrency_policy,
            &["Allow", "Forbid", "Replace"],
            &policy,
        )),
    }
    errors.extend(job_template(&s.job_template, &spec.child("jobTemplate")));
    errors.extend(non_negative(
        s.successful_jobs_history_limit,
        &spec.child("successfulJobsHistoryLimit"),
    ));
    errors.extend(non_negative(
        s.failed_jobs_history_limit,
        &spec.child("failedJobsHistoryLimit"),
    ));
    errors
}

/// kube's `ValidateJobTemplateSpec`: a job template's selector is generated when its Jobs
/// are made, so it may not choose one.
fn job_template(template: &JobTemplateSpec, path: &Path) -> Vec<FieldError> {
    let spec = path.child("spec");
    let mut errors = job_spec_common(&template.spec, &spec);
    if template.spec.selector.is_some() {
        let shown = json(&template.spec.selector);
        errors.push(FieldError::invalid(
            spec.child("selector"),
            shown,
            "`selector` will be auto-generated",
        ));
    }
    if template.spec.manual_selector == Some(true) {
        errors.push(FieldError::not_supported(
            spec.child("manualSelector"),
            "true",
            &["nil", "false"],
        ));
    }
    errors
}

/// kube's `validateTimeZone`: an IANA name (kube loads it from the time zone database,
/// which kapi does not carry: it checks the name's shape).
fn time_zone(zone: &str, path: &Path) -> Vec<FieldError> {
    if zone.is_empty() {
        return vec![FieldError::invalid(
            path,
            zone,
            "timeZone must be nil or non-empty string",
        )];
    }
    let shaped = zone.split('/').all(|part| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+'))
    });
    match shaped {
        true => Vec::new(),
        false => invalid_each(vec![format!("unknown time zone {zone}")], zone, path),
    }
}
