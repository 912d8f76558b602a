//! `apps/v1`: replicas, update strategies and history limits of the workload controllers'
//! kinds.

use kapi::meta::IntOrString;

use super::{or, or_str};
use crate::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};

/// A Deployment runs one replica, rolls out a quarter at a time (up and down), keeps ten
/// old ReplicaSets and reports no progress after ten minutes.
pub(crate) fn deployment(deployment: &mut Deployment) {
    let spec = &mut deployment.spec;
    or(&mut spec.replicas, 1);
    or_str(&mut spec.strategy.r#type, "RollingUpdate");
    if spec.strategy.r#type == "RollingUpdate" {
        let rolling = spec
            .strategy
            .rolling_update
            .get_or_insert_with(Default::default);
        or(
            &mut rolling.max_unavailable,
            IntOrString::String("25%".into()),
        );
        or(&mut rolling.max_surge, IntOrString::String("25%".into()));
    }
    or(&mut spec.revision_history_limit, 10);
    or(&mut spec.progress_deadline_seconds, 600);
}

/// A DaemonSet rolls out one node at a time, with no surge, and keeps ten revisions. Its
/// template generation annotation is always there: kube's conversion writes apps/v1's
/// from the internal `spec.templateGeneration` (0 until the strategy sets it), so a
/// creator's `managedFields` own it.
pub(crate) fn daemon_set(daemon_set: &mut DaemonSet) {
    (daemon_set
        .metadata
        .annotations
        .get_or_insert_with(Default::default))
    .entry("deprecated.daemonset.template.generation".to_owned())
    .or_insert_with(|| "0".to_owned());
    let spec = &mut daemon_set.spec;
    or_str(&mut spec.update_strategy.r#type, "RollingUpdate");
    if spec.update_strategy.r#type == "RollingUpdate" {
        let rolling = (spec.update_strategy.rolling_update).get_or_insert_with(Default::default);
        or(&mut rolling.max_unavailable, IntOrString::Int(1));
        or(&mut rolling.max_surge, IntOrString::Int(0));
    }
    or(&mut spec.revision_history_limit, 10);
}

/// A StatefulSet starts its pods in order, rolls out from partition 0 (a rolling update
/// only made when the type was unset), keeps its claims (`Retain`), runs one replica and
/// keeps ten revisions.
pub(crate) fn stateful_set(stateful_set: &mut StatefulSet) {
    let spec = &mut stateful_set.spec;
    or_str(&mut spec.pod_management_policy, "OrderedReady");
    let strategy = &mut spec.update_strategy;
    if strategy.r#type.is_empty() {
        strategy.r#type = "RollingUpdate".into();
        strategy.rolling_update.get_or_insert_with(Default::default);
    }
    if strategy.r#type == "RollingUpdate"
        && let Some(rolling) = strategy.rolling_update.as_mut()
    {
        or(&mut rolling.partition, 0);
    }
    let retention =
        (spec.persistent_volume_claim_retention_policy).get_or_insert_with(Default::default);
    or_str(&mut retention.when_deleted, "Retain");
    or_str(&mut retention.when_scaled, "Retain");
    or(&mut spec.replicas, 1);
    or(&mut spec.revision_history_limit, 10);
}

/// A ReplicaSet runs one replica.
pub(crate) fn replica_set(replica_set: &mut ReplicaSet) {
    or(&mut replica_set.spec.replicas, 1);
}
