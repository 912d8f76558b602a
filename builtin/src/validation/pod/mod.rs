//! A PodSpec's rules (kube's `ValidatePodSpec`), once for every kind that embeds one: a
//! Pod itself (`ValidatePodCreate`, `ValidatePodUpdate`), a pod template
//! (`ValidatePodTemplateSpec`), and a controller's template, which must restart its
//! pods always and select them (`ValidatePodTemplateSpecForReplicaSet`).

mod containers;
mod update;
mod volumes;

use std::collections::{BTreeMap, BTreeSet};

use kapi::error::FieldError;
use kapi::meta::LabelSelector;
use kapi::validation::{self as v, Path};

use super::{forbidden, invalid_each, labels_of, required, required_one_of};
use crate::api::core::v1::{Pod, PodSecurityContext, PodSpec, PodTemplateSpec, Toleration};

pub(crate) use containers::{number as port_number, port_or_name};
pub(crate) use update::{ephemeral_containers_update, pod_update};

/// kube's `ValidatePodCreate` (the spec; metadata is the registry's).
pub(crate) fn pod(pod: &Pod) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let mut errors = pod_spec(&pod.spec, &spec);
    if !pod.spec.ephemeral_containers.is_empty() {
        errors.push(forbidden(
            &spec.child("ephemeralContainers"),
            "cannot be set on create",
        ));
    }
    errors
}

/// kube's `ValidatePodTemplateSpec`: the template's labels and annotations (at
/// `<path>.labels`, as kube names them) and its spec.
pub(crate) fn template(template: &PodTemplateSpec, path: &Path) -> Vec<FieldError> {
    let mut errors = template_metadata(template, path);
    let spec = path.child("spec");
    errors.extend(pod_spec(&template.spec, &spec));
    if !template.spec.ephemeral_containers.is_empty() {
        let message = "ephemeral containers not allowed in pod template";
        errors.push(forbidden(&spec.child("ephemeralContainers"), message));
    }
    errors
}

/// A template's labels and annotations, at `<path>.labels` and `<path>.annotations`.
fn template_metadata(template: &PodTemplateSpec, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(labels) = &template.metadata.labels {
        errors.extend(v::labels(labels, &path.child("labels")));
    }
    if let Some(annotations) = &template.metadata.annotations {
        errors.extend(v::annotations(annotations, &path.child("annotations")));
    }
    errors
}

/// How much of a controller's template kube judges.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judged {
    /// Its metadata and its pod spec.
    Everything,
    /// Its metadata alone: a StatefulSet's pods mount volumes its claim templates make,
    /// which their spec does not declare (kube's `ValidatePodTemplateSpecForStatefulSet`).
    Metadata,
}

/// How a controller selects its pods.
#[derive(Clone, Copy)]
pub(crate) enum Selects<'a> {
    /// A label selector (apps/v1's kinds); `None` selects nothing.
    Selector(Option<&'a LabelSelector>),
    /// A map of labels (a ReplicationController's); empty selects everything.
    Labels(&'a BTreeMap<String, String>),
}

/// kube's `ValidatePodTemplateSpecForReplicaSet` (and its siblings for the other
/// controllers, `owner` naming the kind in the deadline message): the template is
/// selected, restarts always and has no deadline.
pub(crate) fn controller_template(
    template: &PodTemplateSpec,
    selects: Selects<'_>,
    (owner, judged): (&str, Judged),
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let labels = labels_of(&template.metadata);
    let selected = match selects {
        Selects::Selector(None) => false,
        Selects::Selector(Some(selector)) => {
            super::selector_is_empty(selector) || super::selector_matches(selector, labels)
        }
        Selects::Labels(selector) => super::map_selector_matches(selector, labels),
    };
    if !selected {
        errors.push(FieldError::invalid(
            path.children(&["metadata", "labels"]),
            super::json(labels),
            "`selector` does not match template `labels`",
        ));
    }
    errors.extend(match judged {
        Judged::Everything => self::template(template, path),
        Judged::Metadata => template_metadata(template, path),
    });
    let spec = path.child("spec");
    errors.extend(super::one_of(
        &template.spec.restart_policy,
        &["Always"],
        &spec.child("restartPolicy"),
    ));
    if template.spec.active_deadline_seconds.is_some() {
        let message = format!("activeDeadlineSeconds in {owner} is not Supported");
        errors.push(forbidden(&spec.child("activeDeadlineSeconds"), message));
    }
    errors
}

/// kube's `ValidatePodSpec`.
pub(crate) fn pod_spec(spec: &PodSpec, path: &Path) -> Vec<FieldError> {
    let (mut errors, volumes) = volumes::volumes(&spec.volumes, &path.child("volumes"));
    errors.extend(containers::containers(
        &spec.containers,
        &spec.init_containers,
        &volumes,
        path,
    ));
    errors.extend(host_ports(spec, path));
    errors.extend(required_one_of(
        &spec.restart_policy,
        &["Always", "OnFailure", "Never"],
        &path.child("restartPolicy"),
    ));
    let dns = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
    errors.extend(required_one_of(
        &spec.dns_policy,
        &dns,
        &path.child("dnsPolicy"),
    ));
    errors.extend(v::labels(&spec.node_selector, &path.child("nodeSelector")));
    if let Some(context) = &spec.security_context {
        errors.extend(security_context(context, &path.child("securityContext")));
    }
    for (value, name) in [
        (&spec.service_account_name, "serviceAccountName"),
        (&spec.node_name, "nodeName"),
        (&spec.priority_class_name, "priorityClassName"),
    ] {
        if !value.is_empty() {
            errors.extend(invalid_each(
                v::dns1123_subdomain(value),
                value,
                &path.child(name),
            ));
        }
    }
    if let Some(seconds) = spec.active_deadline_seconds
        && !(1..=i64::from(i32::MAX)).contains(&seconds)
    {
        let message = "must be between 1 and 2147483647, inclusive";
        errors.push(FieldError::invalid(
            path.child("activeDeadlineSeconds"),
            seconds,
            message,
        ));
    }
    for (value, name) in [(&spec.hostname, "hostname"), (&spec.subdomain, "subdomain")] {
        if !value.is_empty() {
            errors.extend(invalid_each(
                v::dns1123_label(value),
                value,
                &path.child(name),
            ));
        }
    }
    errors.extend(tolerations(&spec.tolerations, &path.child("tolerations")));
    let mut gates = BTreeSet::new();
    for (i, gate) in spec.scheduling_gates.iter().enumerate() {
        let at = path.child("schedulingGates").index(i);
        errors.extend(invalid_each(
            v::qualified_name(&gate.name),
            &gate.name,
            &at.child("name"),
        ));
        if !gates.insert(gate.name.as_str()) {
            errors.push(super::duplicate(&at, gate.name.as_str()));
        }
    }
    errors
}

/// kube's `AccumulateUniqueHostPorts` over the regular containers: a host port (with its
/// protocol and address) is taken once.
fn host_ports(spec: &PodSpec, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut taken = BTreeSet::new();
    for (i, container) in spec.containers.iter().enumerate() {
        for (j, port) in container.ports.iter().enumerate() {
            if port.host_port == 0 {
                continue;
            }
            let key = format!("{}/{}/{}", port.protocol, port.host_ip, port.host_port);
            if !taken.insert(key.clone()) {
                let at = path
                    .child("containers")
                    .index(i)
                    .child("ports")
                    .index(j)
                    .child("hostPort");
                errors.push(super::duplicate(&at, key));
            }
        }
    }
    errors
}

/// kube's `ValidatePodSecurityContext`: ids within range.
fn security_context(context: &PodSecurityContext, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (id, name) in [
        (context.fs_group, "fsGroup"),
        (context.run_as_user, "runAsUser"),
        (context.run_as_group, "runAsGroup"),
    ] {
        if let Some(id) = id {
            errors.extend(containers::unix_id(id, &path.child(name)));
        }
    }
    for (i, group) in context.supplemental_groups.iter().enumerate() {
        errors.extend(containers::unix_id(
            *group,
            &path.child("supplementalGroups").index(i),
        ));
    }
    errors
}

/// kube's `ValidateTolerations`.
pub(crate) fn tolerations(tolerations: &[Toleration], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, toleration) in tolerations.iter().enumerate() {
        let at = path.index(i);
        let operator = at.child("operator");
        if !toleration.key.is_empty() {
            errors.extend(invalid_each(
                v::qualified_name(&toleration.key),
                &toleration.key,
                &at.child("key"),
            ));
        }
        if toleration.key.is_empty() && toleration.operator != "Exists" {
            let message = "operator must be Exists when `key` is empty, which means \"match all values and all keys\"";
            errors.push(FieldError::invalid(
                &operator,
                toleration.operator.as_str(),
                message,
            ));
        }
        if toleration.toleration_seconds.is_some() && toleration.effect != "NoExecute" {
            let message = "effect must be 'NoExecute' when `tolerationSeconds` is set";
            errors.push(FieldError::invalid(
                at.child("effect"),
                toleration.effect.as_str(),
                message,
            ));
        }
        match toleration.operator.as_str() {
            "" | "Equal" => {
                errors.extend(invalid_each(
                    v::label_value(&toleration.value),
                    &toleration.value,
                    &at.child("value"),
                ));
            }
            "Exists" if !toleration.value.is_empty() => {
                let message = "value must be empty when `operator` is 'Exists'";
                errors.push(FieldError::invalid(
                    &operator,
                    toleration.value.as_str(),
                    message,
                ));
            }
            "Exists" => {}
            other => errors.push(FieldError::not_supported(
                &operator,
                other,
                &["Equal", "Exists"],
            )),
        }
        if !toleration.effect.is_empty() {
            let effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
            errors.extend(super::one_of(
                &toleration.effect,
                &effects,
                &at.child("effect"),
            ));
        }
    }
    errors
}

/// A `Required` error for a missing template (the controllers whose template is optional
/// on the wire).
pub(crate) fn template_required(path: &Path) -> FieldError {
    required(path, "")
}
