//! The core group's defaults: pods and what they are made of (containers, probes,
//! volumes), Services, replication controllers, persistent volumes and claims, Secrets,
//! limit ranges, nodes' status, resource lists.

use std::collections::BTreeMap;

use kapi::meta::{IntOrString, Quantity};

use super::{or, or_str, or_zero};
use crate::api::core::v1::{
    ConfigMapVolumeSource, Container, DownwardAPIVolumeSource, Endpoints, EphemeralContainer,
    HTTPGetAction, HostPathVolumeSource, LimitRangeItem, NodeStatus, ObjectFieldSelector,
    PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimSpec, Pod, PodSpec, Probe,
    ProjectedVolumeSource, ReplicationController, Secret, SecretVolumeSource, Service,
    ServiceAccountTokenProjection, Volume, VolumeSource,
};

/// Files a volume projects are readable by all, writable by their owner (`0644`).
const DEFAULT_MODE: i32 = 0o644;

/// Every quantity rounded up to a thousandth (`0.0001` is `1m`), and written in canonical
/// form (`0.5` is `500m`), as kube's `Quantity` writes what it rounded. One that does not
/// parse is left for validation to refuse.
pub(crate) fn resource_list(list: &mut BTreeMap<String, Quantity>) {
    for value in list.values_mut() {
        let Ok(mut parsed) = kapi::quantity::Quantity::parse(&value.0) else {
            continue;
        };
        parsed.round_up(-3);
        value.0 = parsed.to_string();
    }
}

/// A controller with a template selects, and is labelled with, its template's labels
/// unless it says otherwise; it runs one replica.
pub(crate) fn replication_controller(controller: &mut ReplicationController) {
    let spec = &mut controller.spec;
    if let Some(template) = &spec.template
        && let Some(labels) = &template.metadata.labels
    {
        if spec.selector.is_empty() {
            spec.selector = labels.clone();
        }
        if controller
            .metadata
            .labels
            .as_ref()
            .is_none_or(BTreeMap::is_empty)
        {
            controller.metadata.labels = Some(labels.clone());
        }
    }
    or(&mut spec.replicas, 1);
}

/// A volume with no source is an empty directory.
pub(crate) fn volume(volume: &mut Volume) {
    if volume.volume_source == VolumeSource::default() {
        volume.volume_source.empty_dir = Some(Default::default());
    }
}

/// kube's pull policy for an image: `Always` for `latest` (said or implied by no tag and no
/// digest), `IfNotPresent` for any other tag, a digest alone, or a name that does not
/// parse.
fn pull_policy(image: &str) -> &'static str {
    match image_tag(image) {
        Some("latest") => "Always",
        _ => "IfNotPresent",
    }
}

/// The tag of an image reference (`latest` when it has neither tag nor digest; empty with
/// a digest alone); `None` when it does not parse as a reference.
fn image_tag(image: &str) -> Option<&str> {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last = name.rsplit('/').next()?;
    let (name, tag) = match last.rsplit_once(':') {
        Some((_, tag)) => (&name[..name.len() - tag.len() - 1], Some(tag)),
        None => (name, None),
    };
    if !valid_name(name) || tag.is_some_and(|t| !valid_tag(t)) {
        return None;
    }
    if let Some(digest) = digest {
        let (algorithm, hex) = digest.split_once(':')?;
        if algorithm.is_empty() || hex.len() < 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
    }
    match (tag, digest) {
        (Some(tag), _) => Some(tag),
        (None, Some(_)) => Some(""),
        (None, None) => Some("latest"),
    }
}

/// A repository name: an optional registry host (with a dot or a port, or `localhost`),
/// then lower-case path components joined by `.`, `_`, `__` or dashes.
fn valid_name(name: &str) -> bool {
    let mut parts: Vec<&str> = name.split('/').collect();
    if parts.len() > 1 {
        let host = parts[0];
        if host.contains('.') || host.contains(':') || host == "localhost" {
            let host_ok = host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
            if !host_ok {
                return false;
            }
            parts.remove(0);
        }
    }
    !parts.is_empty()
        && parts.iter().all(|component| {
            !component.is_empty()
                && component.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && component.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && component.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
                })
        })
}

/// A tag: a word character, then up to 127 word characters, dots and dashes.
fn valid_tag(tag: &str) -> bool {
    tag.len() <= 128
        && tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// What every container gets: a pull policy from its image, and where and how its
/// termination message is read.
fn container_common(
    image: &str,
    pull: &mut String,
    message_path: &mut String,
    message_policy: &mut String,
) {
    if pull.is_empty() {
        *pull = pull_policy(image).to_owned();
    }
    or_str(message_path, "/dev/termination-log");
    or_str(message_policy, "File");
}

pub(crate) fn container(container: &mut Container) {
    container_common(
        &container.image,
        &mut container.image_pull_policy,
        &mut container.termination_message_path,
        &mut container.termination_message_policy,
    );
}

pub(crate) fn ephemeral_container(container: &mut EphemeralContainer) {
    let common = &mut container.ephemeral_container_common;
    container_common(
        &common.image,
        &mut common.image_pull_policy,
        &mut common.termination_message_path,
        &mut common.termination_message_policy,
    );
}

/// A Service's session affinity (`None`; three hours for `ClientIP`), type (`ClusterIP`),
/// ports' protocols and target ports (the port itself), traffic policies (`Cluster`), and a
/// load balancer's node ports and ingress IP mode (`VIP`).
pub(crate) fn service(service: &mut Service) {
    let spec = &mut service.spec;
    or_str(&mut spec.session_affinity, "None");
    match spec.session_affinity.as_str() {
        "None" => spec.session_affinity_config = None,
        "ClientIP" => {
            let timeout = (spec.session_affinity_config.as_ref())
                .and_then(|c| c.client_ip.as_ref())
                .and_then(|c| c.timeout_seconds);
            if timeout.is_none() {
                spec.session_affinity_config = Some(crate::api::core::v1::SessionAffinityConfig {
                    client_ip: Some(crate::api::core::v1::ClientIPConfig {
                        timeout_seconds: Some(10800),
                    }),
                });
            }
        }
        _ => {}
    }
    or_str(&mut spec.r#type, "ClusterIP");
    for port in &mut spec.ports {
        or_str(&mut port.protocol, "TCP");
        let unset = match &port.target_port {
            IntOrString::Int(0) => true,
            IntOrString::String(text) => text.is_empty(),
            IntOrString::Int(_) => false,
        };
        if unset {
            port.target_port = IntOrString::Int(port.port);
        }
    }
    let kind = spec.r#type.as_str();
    let external = matches!(kind, "LoadBalancer" | "NodePort")
        || (kind == "ClusterIP" && !spec.external_ips.is_empty());
    if external {
        or_str(&mut spec.external_traffic_policy, "Cluster");
    }
    if matches!(kind, "ClusterIP" | "NodePort" | "LoadBalancer") {
        or(&mut spec.internal_traffic_policy, "Cluster".to_owned());
    }
    if kind == "LoadBalancer" {
        or(&mut spec.allocate_load_balancer_node_ports, true);
        for ingress in &mut service.status.load_balancer.ingress {
            if !ingress.ip.is_empty() {
                or(&mut ingress.ip_mode, "VIP".to_owned());
            }
        }
    }
}

/// A pod's containers request what they limit, unless they say; service links are on; on
/// the host's network a port is the same on the host.
pub(crate) fn pod(pod: &mut Pod) {
    let spec = &mut pod.spec;
    let containers = spec.containers.iter_mut().chain(&mut spec.init_containers);
    for container in containers {
        let resources = &mut container.resources;
        for (name, limit) in &resources.limits {
            (resources.requests)
                .entry(name.clone())
                .or_insert_with(|| limit.clone());
        }
    }
    or(&mut spec.enable_service_links, true);
    if spec.host_network {
        let containers = spec.containers.iter_mut().chain(&mut spec.init_containers);
        for port in containers.flat_map(|c| &mut c.ports) {
            if port.host_port == 0 {
                port.host_port = port.container_port;
            }
        }
    }
}

/// Every pod template's: DNS through the cluster, restarts always, an empty security
/// context, thirty seconds to stop, kube's own scheduler.
pub(crate) fn pod_spec(spec: &mut PodSpec) {
    or_str(&mut spec.dns_policy, "ClusterFirst");
    or_str(&mut spec.restart_policy, "Always");
    spec.security_context.get_or_insert_with(Default::default);
    or(&mut spec.termination_grace_period_seconds, 30);
    or_str(&mut spec.scheduler_name, "default-scheduler");
}

/// A probe times out after a second, runs every ten, succeeds at once and fails after
/// three failures.
pub(crate) fn probe(probe: &mut Probe) {
    or_zero(&mut probe.timeout_seconds, 1);
    or_zero(&mut probe.period_seconds, 10);
    or_zero(&mut probe.success_threshold, 1);
    or_zero(&mut probe.failure_threshold, 3);
}

pub(crate) fn secret_volume_source(source: &mut SecretVolumeSource) {
    or(&mut source.default_mode, DEFAULT_MODE);
}

pub(crate) fn config_map_volume_source(source: &mut ConfigMapVolumeSource) {
    or(&mut source.default_mode, DEFAULT_MODE);
}

pub(crate) fn downward_api_volume_source(source: &mut DownwardAPIVolumeSource) {
    or(&mut source.default_mode, DEFAULT_MODE);
}

pub(crate) fn projected_volume_source(source: &mut ProjectedVolumeSource) {
    or(&mut source.default_mode, DEFAULT_MODE);
}

/// A Secret is `Opaque` unless typed. Its `stringData` is folded into `data` (a key in
/// both takes the string), as kube's v1 conversion does while it decodes: kapi's hook for
/// what happens on decode is this walk, so the field is never stored nor read back.
pub(crate) fn secret(secret: &mut Secret) {
    or_str(&mut secret.r#type, "Opaque");
    for (key, value) in std::mem::take(&mut secret.string_data) {
        secret
            .data
            .insert(key, kapi::ByteString(value.into_bytes()));
    }
}

/// A projected token lives an hour.
pub(crate) fn service_account_token_projection(projection: &mut ServiceAccountTokenProjection) {
    or(&mut projection.expiration_seconds, 3600);
}

/// A new volume is `Pending`, retained when released, a file system.
pub(crate) fn persistent_volume(volume: &mut PersistentVolume) {
    or_str(&mut volume.status.phase, "Pending");
    or_str(&mut volume.spec.persistent_volume_reclaim_policy, "Retain");
    or(&mut volume.spec.volume_mode, "Filesystem".to_owned());
}

/// A new claim is `Pending`.
pub(crate) fn persistent_volume_claim(claim: &mut PersistentVolumeClaim) {
    or_str(&mut claim.status.phase, "Pending");
}

/// A claim (or a claim template) asks for a file system.
pub(crate) fn persistent_volume_claim_spec(spec: &mut PersistentVolumeClaimSpec) {
    or(&mut spec.volume_mode, "Filesystem".to_owned());
}

/// Endpoints' ports are TCP unless said.
pub(crate) fn endpoints(endpoints: &mut Endpoints) {
    for port in endpoints.subsets.iter_mut().flat_map(|s| &mut s.ports) {
        or_str(&mut port.protocol, "TCP");
    }
}

/// An HTTP check asks for `/` over plain HTTP.
pub(crate) fn http_get_action(action: &mut HTTPGetAction) {
    or_str(&mut action.path, "/");
    or_str(&mut action.scheme, "HTTP");
}

/// A node can hand out all it has, unless it says what.
pub(crate) fn node_status(status: &mut NodeStatus) {
    if status.allocatable.is_empty() && !status.capacity.is_empty() {
        status.allocatable = status.capacity.clone();
    }
}

/// A field path is in `v1` unless said.
pub(crate) fn object_field_selector(selector: &mut ObjectFieldSelector) {
    or_str(&mut selector.api_version, "v1");
}

/// A container limit range's defaults: its maximum is the default limit, the default limit
/// the default request, and its minimum the request where neither says.
pub(crate) fn limit_range_item(item: &mut LimitRangeItem) {
    if item.r#type != "Container" {
        return;
    }
    for (name, max) in &item.max {
        item.default
            .entry(name.clone())
            .or_insert_with(|| max.clone());
    }
    for (name, default) in &item.default {
        (item.default_request)
            .entry(name.clone())
            .or_insert_with(|| default.clone());
    }
    for (name, min) in &item.min {
        (item.default_request)
            .entry(name.clone())
            .or_insert_with(|| min.clone());
    }
}

/// A host path is of no particular type unless said.
pub(crate) fn host_path_volume_source(source: &mut HostPathVolumeSource) {
    or(&mut source.r#type, String::new());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policies_follow_the_image_tag_as_kubes() {
        for (image, policy) in [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("docker.io/library/nginx:latest", "Always"),
            ("localhost:5000/app", "Always"),
            ("nginx:1.27", "IfNotPresent"),
            ("localhost:5000/app:v2", "IfNotPresent"),
            (
                "nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000",
                "IfNotPresent",
            ),
            ("Nginx", "IfNotPresent"),
            ("", "IfNotPresent"),
        ] {
            assert_eq!(pull_policy(image), policy, "{image}");
        }
    }

    #[test]
    fn resource_lists_are_rounded_to_thousandths_and_canonical() {
        let mut list: BTreeMap<String, Quantity> = [
            ("cpu".to_owned(), Quantity("0.5".into())),
            ("memory".to_owned(), Quantity("128Mi".into())),
            ("small".to_owned(), Quantity("0.0001".into())),
        ]
        .into();
        resource_list(&mut list);
        assert_eq!(list["cpu"].0, "500m");
        assert_eq!(list["memory"].0, "128Mi");
        assert_eq!(list["small"].0, "1m");
    }
}
