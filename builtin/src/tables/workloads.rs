//! The controllers' kinds (kube's `printReplicationController`, `printReplicaSet`,
//! `printDeployment`, `printStatefulSet`, `printDaemonSet`, `printControllerRevision`,
//! `printJob`, `printCronJob`).

use serde_json::Value;

use super::{
    bool_text, containers, format_labels, format_selector, items, number, or_none, selector_string,
    since, text,
};
use kapi::api::cells;

/// `name(object) => cell` for each: the cell functions the facts name.
macro_rules! cells {
    ($($(#[$doc:meta])* $name:ident($object:ident) => $cell:expr;)*) => {
        $($(#[$doc])* pub(crate) fn $name($object: &Value) -> Value {
            $cell.into()
        })*
    };
}

cells! {
    /// Desired replicas.
    desired_replicas(o) => number(o, "/spec/replicas");
    /// Current replicas.
    current_replicas(o) => number(o, "/status/replicas");
    /// Ready replicas.
    ready_replicas(o) => number(o, "/status/readyReplicas");
    /// The containers of a controller's template.
    template_spec_containers(o) => containers(items(o, "/spec/template/spec/containers")).0;
    /// The images of a controller's template.
    template_spec_images(o) => containers(items(o, "/spec/template/spec/containers")).1;
    /// A ReplicationController's selector (a map).
    map_selector(o) => format_labels(o.pointer("/spec/selector"));
    /// A label selector at `spec.selector`.
    label_selector(o) => format_selector(o.pointer("/spec/selector"));
    /// A Deployment's selector: no `<none>` for none (kube's `printDeployment`).
    deployment_selector(o) => selector_string(o.pointer("/spec/selector")).unwrap_or_else(|| "<invalid>".into());
    /// Ready replicas over desired ones (Deployments, StatefulSets).
    ready_of_desired(o) => format!("{}/{}", number(o, "/status/readyReplicas"), number(o, "/spec/replicas"));
    /// A Deployment's up-to-date replicas.
    updated_replicas(o) => number(o, "/status/updatedReplicas");
    /// A Deployment's available replicas.
    available_replicas(o) => number(o, "/status/availableReplicas");
    /// Nodes a DaemonSet should run on.
    desired_scheduled(o) => number(o, "/status/desiredNumberScheduled");
    /// Nodes a DaemonSet runs on.
    current_scheduled(o) => number(o, "/status/currentNumberScheduled");
    /// A DaemonSet's ready pods.
    number_ready(o) => number(o, "/status/numberReady");
    /// A DaemonSet's up-to-date pods.
    updated_scheduled(o) => number(o, "/status/updatedNumberScheduled");
    /// A DaemonSet's available pods.
    number_available(o) => number(o, "/status/numberAvailable");
    /// A DaemonSet's node selector.
    node_selector(o) => format_labels(o.pointer("/spec/template/spec/nodeSelector"));
    /// A ControllerRevision's revision.
    revision(o) => number(o, "/revision");
    /// A Job's completions: succeeded over completions (or `/1 of <parallelism>`).
    job_completions(o) => {
        let succeeded = number(o, "/status/succeeded");
        match (o.pointer("/spec/completions").and_then(Value::as_i64), number(o, "/spec/parallelism")) {
            (Some(completions), _) => format!("{succeeded}/{completions}"),
            (None, parallelism) if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
            (None, _) => format!("{succeeded}/1"),
        }
    };
    /// The containers of a CronJob's jobs.
    cron_job_containers(o) => containers(items(o, "/spec/jobTemplate/spec/template/spec/containers")).0;
    /// The images of a CronJob's jobs.
    cron_job_images(o) => containers(items(o, "/spec/jobTemplate/spec/template/spec/containers")).1;
    /// The selector of a CronJob's jobs.
    cron_job_selector(o) => format_selector(o.pointer("/spec/jobTemplate/spec/selector"));
    /// A CronJob's time zone.
    cron_job_time_zone(o) => or_none(text(o, "/spec/timeZone"));
    /// Whether a CronJob is suspended, as text.
    cron_job_suspend(o) => bool_text(o.pointer("/spec/suspend"));
    /// A CronJob's active Jobs.
    cron_job_active(o) => items(o, "/status/active").len() as i64;
}

/// The controller of a ControllerRevision: `kind.group/name`, lower-cased.
pub(crate) fn revision_controller(o: &Value) -> Value {
    let Some(owner) = (items(o, "/metadata/ownerReferences").iter())
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
    else {
        return "<none>".into();
    };
    let group = text(owner, "/apiVersion")
        .rsplit_once('/')
        .map(|(g, _)| g)
        .unwrap_or_default();
    let kind = match group.is_empty() {
        true => text(owner, "/kind").to_owned(),
        false => format!("{}.{group}", text(owner, "/kind")),
    };
    format!("{}/{}", kind.to_lowercase(), text(owner, "/name")).into()
}

/// Whether the Job's first condition of `kind` is `True`.
fn job_condition(job: &Value, kind: &str) -> bool {
    (items(job, "/status/conditions").iter())
        .find(|c| text(c, "/type") == kind)
        .is_some_and(|c| text(c, "/status") == "True")
}

/// A Job's status (kube's first match of its conditions and deletion).
pub(crate) fn job_status(job: &Value) -> Value {
    let deleting = job
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null());
    let status = if job_condition(job, "Complete") {
        "Complete"
    } else if job_condition(job, "Failed") {
        "Failed"
    } else if deleting {
        "Terminating"
    } else if job_condition(job, "Suspended") {
        "Suspended"
    } else if job_condition(job, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    status.into()
}

/// A Job's duration: from start to completion, or to now while it runs (deferred); empty
/// before it starts.
pub(crate) fn job_duration(job: &Value) -> Value {
    let start = text(job, "/status/startTime");
    if start.is_empty() {
        return "".into();
    }
    match job
        .pointer("/status/completionTime")
        .and_then(Value::as_str)
    {
        None => cells::since("", Some(start), ""),
        Some(end) => cells::between(start, end).into(),
    }
}

/// When a CronJob last scheduled a Job (deferred), `<none>` before it did.
pub(crate) fn cron_job_last_schedule(o: &Value) -> Value {
    match o
        .pointer("/status/lastScheduleTime")
        .is_some_and(|t| !t.is_null())
    {
        true => since(o, "/status/lastScheduleTime"),
        false => "<none>".into(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_revision_names_its_controller_by_kind_group_and_name() {
        let owned = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "p"},
            {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": true},
        ]}});
        assert_eq!(revision_controller(&owned), json!("daemonset.apps/agent"));
        let core = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "ReplicationController", "name": "rc", "controller": true},
        ]}});
        assert_eq!(
            revision_controller(&core),
            json!("replicationcontroller/rc")
        );
        assert_eq!(
            revision_controller(&json!({"metadata": {}})),
            json!("<none>")
        );
    }

    #[test]
    fn a_job_counts_completions_as_kube_does() {
        assert_eq!(
            job_completions(&json!({"spec": {"completions": 5}, "status": {"succeeded": 2}})),
            json!("2/5")
        );
        assert_eq!(
            job_completions(&json!({"spec": {"parallelism": 3}})),
            json!("0/1 of 3")
        );
        assert_eq!(job_completions(&json!({"spec": {}})), json!("0/1"));
    }
}
