//! A container's rules (kube's `validateContainers`, `validateInitContainers` and what
//! they call): its name and image, ports, environment, mounts, resources, probes and
//! policies, and its security context.

use std::collections::{BTreeMap, BTreeSet};

use kapi::error::FieldError;
use kapi::meta::IntOrString;
use kapi::validation::{self as v, Path};

use super::super::{
    duplicate, forbidden, invalid_each, not_found, required, required_one_of, resources,
};
use crate::api::core::v1::{
    Container, ContainerPort, EnvVar, EnvVarSource, ObjectFieldSelector, PodSpec, Probe,
    ProbeHandler, ResourceRequirements, SecurityContext,
};

/// The protocols a port may speak.
pub(super) const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// kube's `validateInitContainers` then `validateContainers`: the regular containers'
/// names are known to the init containers' check, and every name is unique across both.
pub(super) fn containers(
    containers: &[Container],
    init: &[Container],
    volumes: &BTreeSet<&str>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    let init_path = path.child("initContainers");
    for (i, container) in init.iter().enumerate() {
        let at = init_path.index(i);
        errors.extend(common(container, volumes, &at));
        let taken = containers.iter().any(|c| c.name == container.name);
        if !container.name.is_empty() && (!names.insert(container.name.as_str()) || taken) {
            errors.push(duplicate(&at.child("name"), container.name.as_str()));
        }
        // kube: an init container has no probes or lifecycle unless it restarts
        // (a sidecar).
        if container.restart_policy.as_deref() != Some("Always") {
            for (probe, name) in [
                (&container.liveness_probe, "livenessProbe"),
                (&container.readiness_probe, "readinessProbe"),
                (&container.startup_probe, "startupProbe"),
            ] {
                if probe.is_some() {
                    errors.push(forbidden(
                        &at.child(name),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
            if container.lifecycle.is_some() {
                errors.push(forbidden(
                    &at.child("lifecycle"),
                    "may not be set for init containers without restartPolicy=Always",
                ));
            }
        }
    }
    let path = path.child("containers");
    if containers.is_empty() {
        errors.push(required(&path, ""));
    }
    let mut regular = BTreeSet::new();
    for (i, container) in containers.iter().enumerate() {
        let at = path.index(i);
        errors.extend(common(container, volumes, &at));
        if !container.name.is_empty() && !regular.insert(container.name.as_str()) {
            errors.push(duplicate(&at.child("name"), container.name.as_str()));
        }
        errors.extend(probes(container, &at));
        if container.restart_policy.is_some() {
            errors.push(forbidden(
                &at.child("restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    errors
}

/// The fields an ephemeral container may not set (kube's `validateEphemeralContainers`),
/// by their JSON names.
const NOT_EPHEMERAL: [&str; 6] = [
    "ports",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "resources",
];

/// kube's `validateEphemeralContainers`: each a valid container with a name of its own,
/// targeting one of the Pod's containers, without what only a planned container has.
pub(super) fn ephemeral(spec: &PodSpec, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let volumes: BTreeSet<&str> = spec.volumes.iter().map(|v| v.name.as_str()).collect();
    let mut names: BTreeSet<&str> = (spec.containers.iter().chain(&spec.init_containers))
        .map(|c| c.name.as_str())
        .collect();
    for (i, ephemeral) in spec.ephemeral_containers.iter().enumerate() {
        let at = path.index(i);
        let common = super::super::json(&ephemeral.ephemeral_container_common);
        let Ok(container) = serde_json::from_value::<Container>(common.clone()) else {
            continue;
        };
        errors.extend(self::common(&container, &volumes, &at));
        if !container.name.is_empty()
            && !names.insert(ephemeral.ephemeral_container_common.name.as_str())
        {
            errors.push(duplicate(&at.child("name"), container.name.as_str()));
        }
        let target = &ephemeral.target_container_name;
        let targets = spec.containers.iter().chain(&spec.init_containers);
        if !target.is_empty() && !targets.map(|c| &c.name).any(|n| n == target) {
            errors.push(not_found(&at.child("targetContainerName"), target.as_str()));
        }
        for field in NOT_EPHEMERAL {
            let set = common.get(field).is_some_and(|v| {
                !v.is_null() && v != &serde_json::json!({}) && v != &serde_json::json!([])
            });
            if set {
                errors.push(forbidden(
                    &at.child(field),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
    }
    errors
}

/// What every kind of container shares (kube's `validateContainerCommon`).
fn common(container: &Container, volumes: &BTreeSet<&str>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = path.child("name");
    match container.name.is_empty() {
        true => errors.push(required(&name, "")),
        false => errors.extend(invalid_each(
            v::dns1123_label(&container.name),
            &container.name,
            &name,
        )),
    }
    let image = path.child("image");
    if container.image.is_empty() {
        errors.push(required(&image, ""));
    } else if container.image.trim() != container.image {
        errors.push(FieldError::invalid(
            &image,
            container.image.as_str(),
            "must not have leading or trailing whitespace",
        ));
    }
    let policies = ["File", "FallbackToLogsOnError"];
    let policy = path.child("terminationMessagePolicy");
    errors.extend(required_one_of(
        &container.termination_message_policy,
        &policies,
        &policy,
    ));
    errors.extend(ports(&container.ports, &path.child("ports")));
    errors.extend(env(&container.env, &path.child("env")));
    errors.extend(mounts(container, volumes, &path.child("volumeMounts")));
    errors.extend(required_one_of(
        &container.image_pull_policy,
        &["Always", "IfNotPresent", "Never"],
        &path.child("imagePullPolicy"),
    ));
    errors.extend(resources(&container.resources, &path.child("resources")));
    if let Some(context) = &container.security_context {
        errors.extend(security_context(context, &path.child("securityContext")));
    }
    errors
}

/// kube's `validateContainerPorts`.
fn ports(ports: &[ContainerPort], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let at = path.index(i);
        if !port.name.is_empty() {
            let name = at.child("name");
            errors.extend(invalid_each(v::port_name(&port.name), &port.name, &name));
            if !names.insert(port.name.as_str()) {
                errors.push(duplicate(&name, port.name.as_str()));
            }
        }
        let container_port = at.child("containerPort");
        match port.container_port {
            0 => errors.push(required(&container_port, "")),
            n => errors.extend(number(n.into(), &container_port)),
        }
        if port.host_port != 0 {
            errors.extend(number(port.host_port.into(), &at.child("hostPort")));
        }
        errors.extend(required_one_of(
            &port.protocol,
            &PROTOCOLS,
            &at.child("protocol"),
        ));
    }
    errors
}

/// A port number's range.
pub(crate) fn number(port: i64, path: &Path) -> Vec<FieldError> {
    (v::port_number(port).into_iter())
        .map(|message| FieldError::invalid(path, port, message))
        .collect()
}

/// kube's `ValidateEnv`.
fn env(env: &[EnvVar], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, var) in env.iter().enumerate() {
        let at = path.index(i);
        let name = at.child("name");
        match var.name.is_empty() {
            true => errors.push(required(&name, "")),
            false => errors.extend(invalid_each(
                v::relaxed_env_var_name(&var.name),
                &var.name,
                &name,
            )),
        }
        if let Some(from) = &var.value_from {
            errors.extend(value_from(
                from,
                !var.value.is_empty(),
                &at.child("valueFrom"),
            ));
        }
    }
    errors
}

/// kube's `validateEnvVarValueFrom`: exactly one source, and not beside a value.
fn value_from(from: &EnvVarSource, has_value: bool, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut sources = 0;
    if let Some(field) = &from.field_ref {
        sources += 1;
        errors.extend(field_selector(field, &path.child("fieldRef")));
    }
    if let Some(resource) = &from.resource_field_ref {
        sources += 1;
        if resource.resource.is_empty() {
            errors.push(required(
                &path.children(&["resourceFieldRef", "resource"]),
                "",
            ));
        }
    }
    let config_map = (from.config_map_key_ref.as_ref()).map(|r| {
        (
            &r.local_object_reference.name,
            &r.key,
            path.child("configMapKeyRef"),
        )
    });
    let secret = (from.secret_key_ref.as_ref()).map(|r| {
        (
            &r.local_object_reference.name,
            &r.key,
            path.child("secretKeyRef"),
        )
    });
    for (name, key, at) in config_map.into_iter().chain(secret) {
        sources += 1;
        if name.is_empty() {
            errors.push(required(&at.child("name"), ""));
        }
        let key_path = at.child("key");
        match key.is_empty() {
            true => errors.push(required(&key_path, "")),
            false => errors.extend(invalid_each(v::config_map_key(key), key, &key_path)),
        }
    }
    if has_value && sources != 0 {
        errors.push(FieldError::invalid(
            path,
            "",
            "may not be specified when `value` is not empty",
        ));
    } else if sources == 0 {
        errors.push(FieldError::invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"));
    } else if sources > 1 {
        errors.push(FieldError::invalid(
            path,
            "",
            "may not have more than one field specified at a time",
        ));
    }
    errors
}

/// The pod fields an environment variable may name (kube's
/// `validEnvDownwardAPIFieldPathExpressions`), besides a label or annotation by key.
const ENV_FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// The field labels a Pod converts (kube's `ConvertDownwardAPIFieldLabel`).
const POD_FIELD_LABELS: [&str; 14] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// kube's `validateObjectFieldSelector` with the environment's expressions.
fn field_selector(selector: &ObjectFieldSelector, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let field_path = path.child("fieldPath");
    if selector.api_version.is_empty() {
        errors.push(required(&path.child("apiVersion"), ""));
        return errors;
    }
    if selector.field_path.is_empty() {
        errors.push(required(&field_path, ""));
        return errors;
    }
    let field = selector.field_path.as_str();
    if selector.api_version != "v1" {
        let message = format!(
            "error converting fieldPath: unsupported pod version: {}",
            selector.api_version
        );
        errors.push(FieldError::invalid(&field_path, field, message));
        return errors;
    }
    let subscripted = ["metadata.labels", "metadata.annotations"]
        .iter()
        .find_map(|prefix| {
            Some((
                *prefix,
                field
                    .strip_prefix(prefix)?
                    .strip_prefix("['")?
                    .strip_suffix("']")?,
            ))
        });
    if let Some((prefix, key)) = subscripted {
        let messages = match prefix {
            "metadata.annotations" => v::qualified_name(&key.to_lowercase()),
            _ => v::qualified_name(key),
        };
        errors.extend(invalid_each(messages, key, &field_path));
    } else if !POD_FIELD_LABELS.contains(&field) {
        let message = format!("error converting fieldPath: field label not supported: {field}");
        errors.push(FieldError::invalid(&field_path, field, message));
    } else if !ENV_FIELD_PATHS.contains(&field) {
        errors.push(FieldError::not_supported(
            &field_path,
            field,
            &ENV_FIELD_PATHS,
        ));
    }
    errors
}

/// kube's `ValidateVolumeMounts`: each names a volume, mount paths are unique.
fn mounts(container: &Container, volumes: &BTreeSet<&str>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut paths = BTreeSet::new();
    for (i, mount) in container.volume_mounts.iter().enumerate() {
        let at = path.index(i);
        let name = at.child("name");
        if mount.name.is_empty() {
            errors.push(required(&name, ""));
        }
        if !volumes.contains(mount.name.as_str()) {
            errors.push(not_found(&name, mount.name.as_str()));
        }
        let mount_path = at.child("mountPath");
        if mount.mount_path.is_empty() {
            errors.push(required(&mount_path, ""));
        }
        if !mount.mount_path.is_empty() && !paths.insert(mount.mount_path.as_str()) {
            errors.push(FieldError::invalid(
                &mount_path,
                mount.mount_path.as_str(),
                "must be unique",
            ));
        }
        if !mount.sub_path.is_empty() {
            errors.extend(local_descending_path(&mount.sub_path, &at.child("subPath")));
        }
    }
    errors
}

/// kube's `validateLocalDescendingPath`: relative, without `..`.
pub(super) fn local_descending_path(target: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if target.starts_with('/') {
        errors.push(FieldError::invalid(path, target, "must be a relative path"));
    }
    if target.split(['/', '\\']).any(|part| part == "..") {
        errors.push(FieldError::invalid(path, target, "must not contain '..'"));
    }
    errors
}

/// kube's `ValidateResourceRequirements` for a container: names, amounts, and requests
/// within limits (equal to them where nothing may be overcommitted).
pub(super) fn resources(resources: &ResourceRequirements, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let limits_path = path.child("limits");
    let requests_path = path.child("requests");
    let mut limits = BTreeMap::new();
    for (name, value) in &resources.limits {
        let at = limits_path.key(name);
        errors.extend(resources::container_name(name, &at));
        let (amount_errors, amount) = resources::quantity(name, value, &at);
        errors.extend(amount_errors);
        if let Some(amount) = amount {
            limits.insert(name.as_str(), amount);
        }
    }
    for (name, value) in &resources.requests {
        let at = requests_path.key(name);
        errors.extend(resources::container_name(name, &at));
        let (amount_errors, amount) = resources::quantity(name, value, &at);
        errors.extend(amount_errors);
        let Some(amount) = amount else { continue };
        match limits.get(name.as_str()) {
            Some(limit) if amount != *limit && !resources::overcommit_allowed(name) => {
                let message = format!("must be equal to {name} limit of {limit}");
                errors.push(FieldError::invalid(
                    &requests_path,
                    amount.to_string(),
                    message,
                ));
            }
            Some(limit) if amount > *limit => {
                let message = format!("must be less than or equal to {name} limit of {limit}");
                errors.push(FieldError::invalid(
                    &requests_path,
                    amount.to_string(),
                    message,
                ));
            }
            Some(_) => {}
            None if !resources::overcommit_allowed(name) => {
                errors.push(required(
                    &limits_path,
                    "Limit must be set for non overcommitable resources",
                ));
            }
            None => {}
        }
    }
    errors
}

/// A regular container's probes (kube's `validateProbe` and its success-threshold rules).
fn probes(container: &Container, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (probe, name, single_success) in [
        (&container.liveness_probe, "livenessProbe", true),
        (&container.readiness_probe, "readinessProbe", false),
        (&container.startup_probe, "startupProbe", true),
    ] {
        let Some(probe) = probe else { continue };
        let at = path.child(name);
        errors.extend(self::probe(probe, &at));
        if single_success && probe.success_threshold != 1 {
            errors.push(FieldError::invalid(
                at.child("successThreshold"),
                probe.success_threshold,
                "must be 1",
            ));
        }
        if name == "readinessProbe" && probe.termination_grace_period_seconds.is_some() {
            errors.push(FieldError::invalid(
                at.child("terminationGracePeriodSeconds"),
                probe.termination_grace_period_seconds.unwrap_or_default(),
                "must not be set for readinessProbes",
            ));
        }
    }
    errors
}

/// kube's `validateProbe`: one handler, and no negative numbers.
fn probe(probe: &Probe, path: &Path) -> Vec<FieldError> {
    let mut errors = handler(&probe.probe_handler, path);
    for (value, name) in [
        (probe.initial_delay_seconds, "initialDelaySeconds"),
        (probe.timeout_seconds, "timeoutSeconds"),
        (probe.period_seconds, "periodSeconds"),
        (probe.success_threshold, "successThreshold"),
        (probe.failure_threshold, "failureThreshold"),
    ] {
        errors.extend(v::non_negative(value.into(), &path.child(name)));
    }
    if let Some(seconds) = probe.termination_grace_period_seconds
        && seconds <= 0
    {
        errors.push(FieldError::invalid(
            path.child("terminationGracePeriodSeconds"),
            seconds,
            "must be greater than 0",
        ));
    }
    errors
}

/// kube's `validateHandler`: exactly one of `exec`, `httpGet`, `tcpSocket`, `grpc`.
fn handler(handler: &ProbeHandler, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut handlers = 0;
    let mut one = |name: &str, errors: &mut Vec<FieldError>| {
        handlers += 1;
        if handlers > 1 {
            errors.push(forbidden(
                &path.child(name),
                "may not specify more than 1 handler type",
            ));
            return false;
        }
        true
    };
    if let Some(exec) = &handler.exec
        && one("exec", &mut errors)
        && exec.command.is_empty()
    {
        errors.push(required(&path.children(&["exec", "command"]), ""));
    }
    if let Some(http) = &handler.http_get
        && one("httpGet", &mut errors)
    {
        let at = path.child("httpGet");
        errors.extend(port_or_name(&http.port, &at.child("port")));
        if !http.scheme.is_empty() {
            errors.extend(super::super::one_of(
                &http.scheme,
                &["HTTP", "HTTPS"],
                &at.child("scheme"),
            ));
        }
    }
    if let Some(tcp) = &handler.tcp_socket
        && one("tcpSocket", &mut errors)
    {
        errors.extend(port_or_name(
            &tcp.port,
            &path.children(&["tcpSocket", "port"]),
        ));
    }
    if let Some(grpc) = &handler.grpc
        && one("grpc", &mut errors)
    {
        errors.extend(number(grpc.port.into(), &path.children(&["grpc", "port"])));
    }
    if handlers == 0 {
        errors.push(required(path, "must specify a handler type"));
    }
    errors
}

/// kube's `ValidatePortNumOrName`.
pub(crate) fn port_or_name(port: &IntOrString, path: &Path) -> Vec<FieldError> {
    match port {
        IntOrString::Int(n) => number((*n).into(), path),
        IntOrString::String(name) if name.is_empty() => vec![required(path, "")],
        IntOrString::String(name) => invalid_each(v::port_name(name), name, path),
    }
}

/// kube's `ValidateSecurityContext` of a container.
fn security_context(context: &SecurityContext, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (id, name) in [
        (context.run_as_user, "runAsUser"),
        (context.run_as_group, "runAsGroup"),
    ] {
        if let Some(id) = id {
            errors.extend(unix_id(id, &path.child(name)));
        }
    }
    if context.allow_privilege_escalation == Some(false) {
        if context.privileged == Some(true) {
            errors.push(FieldError::invalid(
                path,
                "",
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        let adds_sys_admin = (context.capabilities.iter())
            .flat_map(|c| &c.add)
            .any(|cap| cap == "CAP_SYS_ADMIN");
        if adds_sys_admin {
            errors.push(FieldError::invalid(path, "", "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"));
        }
    }
    if let Some(mount) = &context.proc_mount {
        errors.extend(super::super::one_of(
            mount,
            &["Default", "Unmasked"],
            &path.child("procMount"),
        ));
    }
    errors
}

/// kube's `IsValidUserID` / `IsValidGroupID`.
pub(super) fn unix_id(id: i64, path: &Path) -> Vec<FieldError> {
    match (0..=2147483647).contains(&id) {
        true => Vec::new(),
        false => vec![FieldError::invalid(
            path,
            id,
            "must be between 0 and 2147483647, inclusive",
        )],
    }
}
