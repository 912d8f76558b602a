//! kube's `ValidatePodUpdate`: a running Pod's spec changes only in its images, a shorter
//! deadline and added tolerations; and `ValidatePodEphemeralContainersUpdate`: its
//! `ephemeralcontainers` subresource adds ephemeral containers, never changes them.

use kapi::error::FieldError;
use kapi::validation::Path;
use serde_json::Value;

use super::super::{forbidden, json};
use crate::api::core::v1::{Pod, PodSpec};

/// What kube lets an update change, as its refusal lists it.
const UPDATABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// The update rules of a Pod (besides the new spec's own, which [`super::pod_spec`]
/// judges).
pub(crate) fn pod_update(new: &Pod, old: &Pod) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let mut errors = Vec::new();
    if new.spec.containers.len() != old.spec.containers.len() {
        errors.push(forbidden(
            &spec.child("containers"),
            "pod updates may not add or remove containers",
        ));
        return errors;
    }
    if new.spec.init_containers.len() != old.spec.init_containers.len() {
        errors.push(forbidden(
            &spec.child("initContainers"),
            "pod updates may not add or remove containers",
        ));
        return errors;
    }
    let deadline = spec.child("activeDeadlineSeconds");
    match (
        new.spec.active_deadline_seconds,
        old.spec.active_deadline_seconds,
    ) {
        (Some(new), _) if !(0..=i64::from(i32::MAX)).contains(&new) => {
            let message = "must be between 0 and 2147483647, inclusive";
            errors.push(FieldError::invalid(&deadline, new, message));
            return errors;
        }
        (Some(new), Some(old)) if old < new => {
            errors.push(FieldError::invalid(
                &deadline,
                new,
                "must be less than or equal to previous value",
            ));
            return errors;
        }
        (None, Some(_)) => {
            let message = "must not update from a positive integer to nil value";
            errors.push(FieldError::invalid(&deadline, Value::Null, message));
        }
        _ => {}
    }
    let mut munged = new.spec.clone();
    for (container, old) in munged.containers.iter_mut().zip(&old.spec.containers) {
        container.image.clone_from(&old.image);
    }
    for (container, old) in munged
        .init_containers
        .iter_mut()
        .zip(&old.spec.init_containers)
    {
        container.image.clone_from(&old.image);
    }
    munged.active_deadline_seconds = old.spec.active_deadline_seconds;
    let kept = (old.spec.tolerations.iter()).all(|t| new.spec.tolerations.contains(t));
    if kept {
        munged.tolerations.clone_from(&old.spec.tolerations);
    } else {
        let message = "existing toleration can not be modified except its tolerationSeconds";
        errors.push(forbidden(&spec.child("tolerations"), message));
    }
    if old
        .spec
        .termination_grace_period_seconds
        .is_some_and(|s| s < 0)
        && new.spec.termination_grace_period_seconds == Some(1)
    {
        munged.termination_grace_period_seconds = old.spec.termination_grace_period_seconds;
    }
    let changed = changed_fields(&munged, &old.spec);
    if !changed.is_empty() {
        let message = format!(
            "pod updates may not change fields other than {UPDATABLE}\n(changed: {})",
            changed.join(", ")
        );
        errors.push(forbidden(&spec, message));
    }
    errors
}

/// kube's `ValidatePodEphemeralContainersUpdate` (the new spec's own rules aside): each
/// ephemeral container is valid, and those the Pod had stay as they were.
pub(crate) fn ephemeral_containers_update(new: &Pod, old: &Pod) -> Vec<FieldError> {
    let path = Path::new("spec").child("ephemeralContainers");
    let mut errors = super::containers::ephemeral(&new.spec, &path);
    for existing in &old.spec.ephemeral_containers {
        let name = &existing.ephemeral_container_common.name;
        let kept = (new.spec.ephemeral_containers.iter())
            .find(|c| &c.ephemeral_container_common.name == name);
        match kept {
            None => {
                let message = format!("existing ephemeral containers {name:?} may not be removed");
                errors.push(forbidden(&path, message));
            }
            Some(kept) if json(kept) != json(existing) => {
                let message = format!("existing ephemeral containers {name:?} may not be changed");
                errors.push(forbidden(&path, message));
            }
            Some(_) => {}
        }
    }
    errors
}

/// The top-level fields of two specs that differ, by their JSON names (kube shows a Go
/// diff of its internal structs here; kapi names the fields).
fn changed_fields(new: &PodSpec, old: &PodSpec) -> Vec<String> {
    let (new, old) = (json(new), json(old));
    let (Some(new), Some(old)) = (new.as_object(), old.as_object()) else {
        return Vec::new();
    };
    let mut keys: Vec<&String> = new.keys().chain(old.keys()).collect();
    keys.sort();
    keys.dedup();
    (keys.into_iter())
        .filter(|key| new.get(*key) != old.get(*key))
        .map(|key| format!("spec.{key}"))
        .collect()
}
