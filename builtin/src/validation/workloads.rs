//! The controllers' kinds (`pkg/apis/apps/validation`, and core's PodTemplate and
//! ReplicationController): replicas and history that may not be negative, a selector
//! that selects the template, rollout strategies, and what an update may not change.

use kapi::error::FieldError;
use kapi::meta::{IntOrString, LabelSelector};
use kapi::validation::{self as v, IntOrPercent, Path};

use super::pod::{self, Judged, Selects};
use super::{
    forbidden, immutable, int_or_percent, json, label_selector, non_negative, required, unsupported,
};
use crate::api::apps::v1::{
    DaemonSet, DaemonSetUpdateStrategy, Deployment, DeploymentStrategy, ReplicaSet, StatefulSet,
    StatefulSetUpdateStrategy,
};
use crate::api::core::v1::{PodTemplate, PodTemplateSpec, ReplicationController};

/// kube's `ValidatePodTemplate`.
pub(crate) fn pod_template(template: &PodTemplate) -> Vec<FieldError> {
    pod::template(&template.template, &Path::new("template"))
}

/// kube's `ValidateReplicationControllerSpec`.
pub(crate) fn replication_controller(rc: &ReplicationController) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let mut errors = non_negative(rc.spec.replicas, &spec.child("replicas"));
    errors.extend(v::non_negative(
        rc.spec.min_ready_seconds.into(),
        &spec.child("minReadySeconds"),
    ));
    let selector = spec.child("selector");
    match rc.spec.selector.is_empty() {
        true => errors.push(required(&selector, "")),
        false => errors.extend(v::labels(&rc.spec.selector, &selector)),
    }
    let at = spec.child("template");
    match &rc.spec.template {
        None => errors.push(pod::template_required(&at)),
        Some(template) => errors.extend(pod::controller_template(
            template,
            Selects::Labels(&rc.spec.selector),
            ("ReplicationController", Judged::Everything),
            &at,
        )),
    }
    errors
}

/// The selector and template rules apps/v1's controllers share: a selector is given, valid
/// and not empty, and selects the template (which is judged only when the selector is
/// valid, as kube does). `owner` names the kind in kube's messages, `(empty selector's,
/// template's)`, which differ for a Deployment (`deployment`, `ReplicaSet`), and says how
/// much of the template is judged.
fn selected_template(
    selector: Option<&LabelSelector>,
    template: &PodTemplateSpec,
    owner: (&str, &str, Judged),
    spec: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let at = spec.child("selector");
    match selector {
        None => errors.push(required(&at, "")),
        Some(selector) => {
            errors.extend(label_selector(selector, &at));
            if super::selector_is_empty(selector) {
                let message = format!("empty selector is invalid for {}", owner.0);
                errors.push(FieldError::invalid(&at, json(selector), message));
            }
        }
    }
    match selector.is_none_or(super::selector_is_valid) {
        true => errors.extend(pod::controller_template(
            template,
            Selects::Selector(selector),
            (owner.1, owner.2),
            &spec.child("template"),
        )),
        false => errors.push(FieldError::invalid(
            &at,
            json(&selector),
            "invalid label selector",
        )),
    }
    errors
}

/// kube's `ValidateDeploymentSpec`.
pub(crate) fn deployment(deployment: &Deployment) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &deployment.spec;
    let mut errors = non_negative(s.replicas, &spec.child("replicas"));
    let owner = ("deployment", "ReplicaSet", Judged::Everything);
    errors.extend(selected_template(
        s.selector.as_ref(),
        &s.template,
        owner,
        &spec,
    ));
    errors.extend(deployment_strategy(&s.strategy, &spec.child("strategy")));
    errors.extend(v::non_negative(
        s.min_ready_seconds.into(),
        &spec.child("minReadySeconds"),
    ));
    errors.extend(non_negative(
        s.revision_history_limit,
        &spec.child("revisionHistoryLimit"),
    ));
    if let Some(deadline) = s.progress_deadline_seconds {
        let at = spec.child("progressDeadlineSeconds");
        errors.extend(v::non_negative(deadline.into(), &at));
        if deadline <= s.min_ready_seconds {
            errors.push(FieldError::invalid(
                &at,
                deadline,
                "must be greater than minReadySeconds",
            ));
        }
    }
    errors
}

/// apps/v1's rule for its controllers' updates: the selector is immutable.
fn selector_kept(new: &Option<LabelSelector>, old: &Option<LabelSelector>) -> Vec<FieldError> {
    immutable(new, old, &Path::new("spec").child("selector"))
}

/// kube's `ValidateDeploymentUpdate`: the selector is immutable (apps/v1).
pub(crate) fn deployment_update(new: &Deployment, old: &Deployment) -> Vec<FieldError> {
    let mut errors = deployment(new);
    errors.extend(selector_kept(&new.spec.selector, &old.spec.selector));
    errors
}

/// kube's `ValidateDeploymentStrategy` and `ValidateRollingUpdateDeployment`.
fn deployment_strategy(strategy: &DeploymentStrategy, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rolling = path.child("rollingUpdate");
    match strategy.r#type.as_str() {
        "Recreate" if strategy.rolling_update.is_some() => {
            errors.push(forbidden(
                &rolling,
                "may not be specified when strategy `type` is 'Recreate'",
            ));
        }
        "Recreate" => {}
        "RollingUpdate" => match &strategy.rolling_update {
            None => errors.push(required(
                &rolling,
                "this should be defaulted and never be nil",
            )),
            Some(update) => {
                let unavailable = rolling.child("maxUnavailable");
                let surge = rolling.child("maxSurge");
                let max_unavailable = update.max_unavailable.as_ref().map(int_or_percent);
                let max_surge = update.max_surge.as_ref().map(int_or_percent);
                errors.extend(
                    max_unavailable
                        .map(|u| v::positive_int_or_percent(u, &unavailable))
                        .unwrap_or_default(),
                );
                errors.extend(
                    max_surge
                        .map(|s| v::positive_int_or_percent(s, &surge))
                        .unwrap_or_default(),
                );
                let zero = |value: Option<IntOrPercent<'_>>| value.is_none_or(go_zero);
                if zero(max_unavailable) && zero(max_surge) {
                    let shown = max_unavailable.map_or(0.into(), IntOrPercent::to_json);
                    errors.push(FieldError::invalid(
                        &unavailable,
                        shown,
                        "may not be 0 when `maxSurge` is 0",
                    ));
                }
                if let Some(value) = max_unavailable {
                    errors.extend(v::not_more_than_100_percent(value, &unavailable));
                }
            }
        },
        _ => errors.push(unsupported(
            path,
            json(strategy),
            &["Recreate", "RollingUpdate"],
        )),
    }
    errors
}

/// kube's `getIntOrPercentValue(...) == 0`: a percent's number, a string's number (or 0
/// when it is none), a number.
fn go_zero(value: IntOrPercent<'_>) -> bool {
    match value {
        IntOrPercent::Int(n) => n == 0,
        IntOrPercent::Str(s) => match value.percent() {
            Some(percent) => percent == 0,
            None => s.parse::<i64>().unwrap_or(0) == 0,
        },
    }
}

/// kube's `ValidateReplicaSetSpec`.
pub(crate) fn replica_set(rs: &ReplicaSet) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let mut errors = non_negative(rs.spec.replicas, &spec.child("replicas"));
    errors.extend(v::non_negative(
        rs.spec.min_ready_seconds.into(),
        &spec.child("minReadySeconds"),
    ));
    let owner = ("deployment", "ReplicaSet", Judged::Everything);
    errors.extend(selected_template(
        rs.spec.selector.as_ref(),
        &rs.spec.template,
        owner,
        &spec,
    ));
    errors
}

/// kube's `ValidateReplicaSetUpdate`: the selector is immutable (apps/v1).
pub(crate) fn replica_set_update(new: &ReplicaSet, old: &ReplicaSet) -> Vec<FieldError> {
    let mut errors = replica_set(new);
    errors.extend(selector_kept(&new.spec.selector, &old.spec.selector));
    errors
}

/// kube's `ValidateStatefulSetSpec`.
pub(crate) fn stateful_set(set: &StatefulSet) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &set.spec;
    let mut errors = Vec::new();
    let policy = spec.child("podManagementPolicy");
    match s.pod_management_policy.as_str() {
        "OrderedReady" | "Parallel" => {}
        "" => errors.push(required(&policy, "")),
        other => errors.push(FieldError::invalid(
            &policy,
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    errors.extend(stateful_set_strategy(
        &s.update_strategy,
        &spec.child("updateStrategy"),
    ));
    errors.extend(non_negative(s.replicas, &spec.child("replicas")));
    errors.extend(v::non_negative(
        s.min_ready_seconds.into(),
        &spec.child("minReadySeconds"),
    ));
    errors.extend(non_negative(
        s.revision_history_limit,
        &spec.child("revisionHistoryLimit"),
    ));
    if let Some(ordinals) = &s.ordinals {
        errors.extend(v::non_negative(
            ordinals.start.into(),
            &spec.children(&["ordinals", "start"]),
        ));
    }
    errors.extend(selected_template(
        s.selector.as_ref(),
        &s.template,
        ("statefulset", "StatefulSet", Judged::Metadata),
        &spec,
    ));
    errors
}

/// kube's `ValidateStatefulSetUpdateStrategy`.
fn stateful_set_strategy(strategy: &StatefulSetUpdateStrategy, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rolling = path.child("rollingUpdate");
    match strategy.r#type.as_str() {
        "" => errors.push(required(path, "")),
        "OnDelete" => {
            if let Some(update) = &strategy.rolling_update {
                let message = "only allowed for updateStrategy 'RollingUpdate'";
                errors.push(FieldError::invalid(&rolling, json(update), message));
            }
        }
        "RollingUpdate" => {
            if let Some(update) = &strategy.rolling_update {
                errors.extend(non_negative(update.partition, &rolling.child("partition")));
            }
        }
        _ => errors.push(FieldError::invalid(
            path,
            json(strategy),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    errors
}

/// kube's `ValidateStatefulSetUpdate`: beyond what it may change, the spec stays.
pub(crate) fn stateful_set_update(new: &StatefulSet, old: &StatefulSet) -> Vec<FieldError> {
    let mut errors = stateful_set(new);
    let mut restored = new.spec.clone();
    restored.replicas = old.spec.replicas;
    restored.template = old.spec.template.clone();
    restored.update_strategy = old.spec.update_strategy.clone();
    restored.min_ready_seconds = old.spec.min_ready_seconds;
    restored.ordinals = old.spec.ordinals.clone();
    restored.persistent_volume_claim_retention_policy =
        (old.spec).persistent_volume_claim_retention_policy.clone();
    if json(&restored) != json(&old.spec) {
        let message = "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
        errors.push(forbidden(&Path::new("spec"), message));
    }
    errors
}

/// kube's `ValidateDaemonSetSpec`.
pub(crate) fn daemon_set(set: &DaemonSet) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &set.spec;
    let mut errors = selected_template(
        s.selector.as_ref(),
        &s.template,
        ("daemonset", "DaemonSet", Judged::Everything),
        &spec,
    );
    errors.extend(v::non_negative(
        s.min_ready_seconds.into(),
        &spec.child("minReadySeconds"),
    ));
    errors.extend(daemon_set_strategy(
        &s.update_strategy,
        &spec.child("updateStrategy"),
    ));
    errors.extend(non_negative(
        s.revision_history_limit,
        &spec.child("revisionHistoryLimit"),
    ));
    errors
}

/// kube's `ValidateDaemonSetUpdateStrategy` and `ValidateRollingUpdateDaemonSet`: at most
/// one of `maxUnavailable` and `maxSurge` is not zero, and one is.
fn daemon_set_strategy(strategy: &DaemonSetUpdateStrategy, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rolling = path.child("rollingUpdate");
    match strategy.r#type.as_str() {
        "OnDelete" => {}
        "RollingUpdate" => match &strategy.rolling_update {
            None => errors.push(required(&rolling, "")),
            Some(update) => {
                let unavailable = rolling.child("maxUnavailable");
                let surge = rolling.child("maxSurge");
                let zero = IntOrString::Int(0);
                let max_unavailable =
                    int_or_percent(update.max_unavailable.as_ref().unwrap_or(&zero));
                let max_surge = update.max_surge.as_ref().map(int_or_percent);
                errors.extend(v::positive_int_or_percent(max_unavailable, &unavailable));
                errors.extend(
                    max_surge
                        .map(|s| v::positive_int_or_percent(s, &surge))
                        .unwrap_or_default(),
                );
                errors.extend(v::not_more_than_100_percent(max_unavailable, &unavailable));
                if let Some(value) = max_surge {
                    errors.extend(v::not_more_than_100_percent(value, &surge));
                }
                let has_unavailable = !go_zero(max_unavailable);
                let has_surge = max_surge.is_some_and(|s| !go_zero(s));
                match (has_unavailable, has_surge) {
                    (true, true) => {
                        let shown = max_surge.map_or(0.into(), IntOrPercent::to_json);
                        errors.push(FieldError::invalid(
                            &surge,
                            shown,
                            "may not be set when maxUnavailable is non-zero",
                        ));
                    }
                    (false, false) => {
                        errors.push(required(&unavailable, "cannot be 0 when maxSurge is 0"))
                    }
                    _ => {}
                }
            }
        },
        _ => errors.push(unsupported(
            path,
            json(strategy),
            &["RollingUpdate", "OnDelete"],
        )),
    }
    errors
}

/// kube's `ValidateDaemonSetUpdate`: the selector is immutable.
pub(crate) fn daemon_set_update(new: &DaemonSet, old: &DaemonSet) -> Vec<FieldError> {
    let mut errors = daemon_set(new);
    errors.extend(selector_kept(&new.spec.selector, &old.spec.selector));
    errors
}
