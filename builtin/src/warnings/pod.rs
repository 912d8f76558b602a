//! kube's `warningsForPodSpecAndMeta` (pkg/api/pod/warnings.go): a Pod's, or a template's
//! under its path (`spec.template`), in kube's order. Not ported: the overlapping paths of
//! projected and key-to-path volumes, and AppArmor annotations.

use std::collections::{BTreeMap, BTreeSet};

use kapi::meta::ObjectMeta;
use kapi::validation::Path;

use super::{deprecated_node_label, fractional_bytes};
use crate::api::core::v1::{
    ContainerPort, EnvVar, NodeSelectorTerm, Pod, PodAffinityTerm, PodSpec, PodTemplateSpec,
    ResourceRequirements, SecurityContext,
};

/// A Pod's warnings on create (kube warns nothing on a Pod's updates).
pub(crate) fn pod(pod: &Pod) -> Vec<String> {
    let mut warnings: Vec<String> = super::name(&pod.metadata, "the Pod's hostname")
        .into_iter()
        .collect();
    warnings.extend(spec_and_meta(&Path::default(), &pod.spec, &pod.metadata));
    warnings
}

/// A template's warnings, its fields under `path`.
pub(crate) fn template(template: &PodTemplateSpec, path: &Path) -> Vec<String> {
    spec_and_meta(path, &template.spec, &template.metadata)
}

/// What of a container the warnings read (containers and ephemeral ones alike).
struct Seen<'a> {
    name: &'a str,
    path: Path,
    ports: &'a [ContainerPort],
    env: &'a [EnvVar],
    resources: &'a ResourceRequirements,
    security: Option<&'a SecurityContext>,
}

fn spec_and_meta(prefix: &Path, spec: &PodSpec, meta: &ObjectMeta) -> Vec<String> {
    let mut warnings = Vec::new();
    let at = |names: &[&str]| prefix.child("spec").children(names);
    let annotations = meta.annotations.clone().unwrap_or_default();
    let annotation = |key: &str| prefix.children(&["metadata", "annotations"]).key(key);

    // Deprecated node labels.
    for key in spec.node_selector.keys() {
        if let Some(message) = deprecated_node_label(key) {
            warnings.push(format!("{}: {message}", at(&["nodeSelector"]).key(key)));
        }
    }
    let affinity = spec.affinity.as_ref();
    if let Some(node) = affinity.and_then(|a| a.node_affinity.as_ref()) {
        let required = at(&[
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        ]);
        let terms = node
            .required_during_scheduling_ignored_during_execution
            .iter();
        for (i, term) in terms.flat_map(|s| &s.node_selector_terms).enumerate() {
            warnings.extend(node_selector_term(term, &required.index(i)));
        }
        let preferred = at(&[
            "affinity",
            "nodeAffinity",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ]);
        for (i, term) in node
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .enumerate()
        {
            warnings.extend(node_selector_term(
                &term.preference,
                &preferred.index(i).child("preference"),
            ));
        }
    }
    for (i, constraint) in spec.topology_spread_constraints.iter().enumerate() {
        let path = at(&["topologySpreadConstraints"]).index(i);
        if let Some(message) = deprecated_node_label(&constraint.topology_key) {
            let key = &constraint.topology_key;
            warnings.push(format!("{}: {key} is {message}", path.child("topologyKey")));
        }
        if constraint.label_selector.is_none() {
            warnings.push(format!(
                "{}: a null labelSelector results in matching no pod",
                path.child("labelSelector")
            ));
        }
    }

    // Deprecated annotations.
    for (key, message) in [
        (
            "scheduler.alpha.kubernetes.io/critical-pod",
            r#"non-functional in v1.16+; use the "priorityClassName" field instead"#,
        ),
        (
            "security.alpha.kubernetes.io/sysctls",
            r#"non-functional in v1.11+; use the "sysctls" field instead"#,
        ),
        (
            "security.alpha.kubernetes.io/unsafe-sysctls",
            r#"non-functional in v1.11+; use the "sysctls" field instead"#,
        ),
    ] {
        if annotations.contains_key(key) {
            warnings.push(format!("{}: {message}", annotation(key)));
        }
    }

    // Deprecated and removed volume sources.
    for (i, volume) in spec.volumes.iter().enumerate() {
        let path = at(&["volumes"]).index(i);
        let source = &volume.volume_source;
        warnings.extend(super::plugins(
            &[
                (
                    source.photon_persistent_disk.is_some(),
                    "photonPersistentDisk",
                ),
                (source.git_repo.is_some(), "gitRepo"),
                (source.scale_io.is_some(), "scaleIO"),
                (source.flocker.is_some(), "flocker"),
                (source.storageos.is_some(), "storageOS"),
                (source.quobyte.is_some(), "quobyte"),
                (source.glusterfs.is_some(), "glusterfs"),
            ],
            &path,
        ));
        if let Some(template) =
            (source.ephemeral.as_ref()).and_then(|e| e.volume_claim_template.as_ref())
        {
            let resources =
                path.children(&["ephemeral", "volumeClaimTemplate", "spec", "resources"]);
            let claimed = &template.spec.resources;
            warnings.extend(fractional_bytes(
                &claimed.requests,
                "storage",
                &resources.child("requests"),
            ));
            warnings.extend(fractional_bytes(
                &claimed.limits,
                "storage",
                &resources.child("limits"),
            ));
        }
        let late = [
            (source.cephfs.is_some(), "cephfs"),
            (source.rbd.is_some(), "rbd"),
        ];
        warnings.extend(super::plugins(&late, &path));
    }

    // Repeated host aliases and pull secrets.
    if spec.host_aliases.len() > 1 {
        let mut seen = BTreeSet::new();
        for (i, alias) in spec.host_aliases.iter().enumerate() {
            if !seen.insert(alias.ip.as_str()) {
                warnings.push(format!(
                    "{}: duplicate ip {:?}",
                    at(&["hostAliases"]).index(i).child("ip"),
                    alias.ip
                ));
            }
        }
    }
    if spec.image_pull_secrets.len() > 1 {
        let mut seen = BTreeSet::new();
        for (i, secret) in spec.image_pull_secrets.iter().enumerate() {
            let name = secret.name.as_str();
            if !seen.insert(name) {
                warnings.push(format!(
                    "{}: duplicate name {name:?}",
                    at(&["imagePullSecrets"]).index(i).child("name")
                ));
            }
        }
    }
    for (i, secret) in spec.image_pull_secrets.iter().enumerate() {
        if secret.name.is_empty() {
            warnings.push(format!(
                "{}: invalid empty name \"\"",
                at(&["imagePullSecrets"]).index(i).child("name")
            ));
        }
    }

    // Fractions of a byte in the pod's overhead.
    for resource in ["memory", "ephemeral-storage"] {
        warnings.extend(fractional_bytes(
            &spec.overhead,
            resource,
            &at(&["overhead"]),
        ));
    }

    // The seccomp annotations the seccompProfile fields replaced.
    let seccomp = r#"non-functional in v1.27+; use the "seccompProfile" field instead"#;
    let pod_profile = spec
        .security_context
        .as_ref()
        .and_then(|s| s.seccomp_profile.as_ref());
    let pod_key = "seccomp.security.alpha.kubernetes.io/pod";
    if pod_profile.is_none() && annotations.contains_key(pod_key) {
        warnings.push(format!("{}: {seccomp}", annotation(pod_key)));
    }

    let containers = containers(spec, &at(&[]));
    for container in &containers {
        let key = format!(
            "container.seccomp.security.alpha.kubernetes.io/{}",
            container.name
        );
        let profile = container.security.and_then(|s| s.seccomp_profile.as_ref());
        if profile.is_none() && annotations.contains_key(&key) {
            warnings.push(format!("{}: {seccomp}", annotation(&key)));
        }
        let resources = container.path.child("resources");
        for resource in ["memory", "ephemeral-storage"] {
            warnings.extend(fractional_bytes(
                &container.resources.limits,
                resource,
                &resources.child("limits"),
            ));
            warnings.extend(fractional_bytes(
                &container.resources.requests,
                resource,
                &resources.child("requests"),
            ));
        }
        if container.env.len() > 1 {
            let mut names = BTreeSet::new();
            for (i, env) in container.env.iter().enumerate() {
                if names.insert(env.name.as_str()) {
                    continue;
                }
                // `X=...$(X)...` builds on the earlier definition; anything else hides it.
                let reference = format!("$({})", env.name);
                let hides = env.value_from.is_some()
                    || env.value == reference
                    || !env.value.contains(&reference);
                if hides {
                    warnings.push(format!(
                        "{}: hides previous definition of {:?}, which may be dropped when using apply",
                        container.path.child("env").index(i),
                        env.name
                    ));
                }
            }
        }
    }
    warnings.extend(ports(&containers));

    if spec
        .termination_grace_period_seconds
        .is_some_and(|seconds| seconds < 0)
    {
        warnings.push(format!(
            "{}: must be >= 0; negative values are invalid and will be treated as 1",
            at(&["terminationGracePeriodSeconds"])
        ));
    }

    // Pod (anti-)affinity terms that select nothing.
    let null = "a null labelSelector results in matching no pod";
    let pod_terms = [
        (
            "podAffinity",
            affinity.and_then(|a| a.pod_affinity.as_ref()).map(|p| {
                (
                    &p.required_during_scheduling_ignored_during_execution,
                    &p.preferred_during_scheduling_ignored_during_execution,
                )
            }),
        ),
        (
            "podAntiAffinity",
            affinity
                .and_then(|a| a.pod_anti_affinity.as_ref())
                .map(|p| {
                    (
                        &p.required_during_scheduling_ignored_during_execution,
                        &p.preferred_during_scheduling_ignored_during_execution,
                    )
                }),
        ),
    ];
    for (field, terms) in pod_terms {
        let Some((required, preferred)) = terms else {
            continue;
        };
        let path = at(&["affinity", field]);
        let selects_nothing = |term: &PodAffinityTerm| term.label_selector.is_none();
        for (i, term) in required.iter().enumerate() {
            if selects_nothing(term) {
                let at = path
                    .child("requiredDuringSchedulingIgnoredDuringExecution")
                    .index(i);
                warnings.push(format!("{}: {null}", at.child("labelSelector")));
            }
        }
        for (i, term) in preferred.iter().enumerate() {
            if selects_nothing(&term.pod_affinity_term) {
                let at = path
                    .child("preferredDuringSchedulingIgnoredDuringExecution")
                    .index(i);
                warnings.push(format!(
                    "{}: {null}",
                    at.children(&["podAffinityTerm", "labelSelector"])
                ));
            }
        }
    }
    warnings
}

/// kube's `GetWarningsForNodeSelectorTerm`: deprecated keys of its expressions.
fn node_selector_term(term: &NodeSelectorTerm, path: &Path) -> Vec<String> {
    (term.match_expressions.iter().enumerate())
        .filter_map(|(i, expression)| {
            let message = deprecated_node_label(&expression.key)?;
            let at = path.child("matchExpressions").index(i).child("key");
            Some(format!("{at}: {} is {message}", expression.key))
        })
        .collect()
}

/// Init containers, containers, then ephemeral ones, with their paths.
fn containers<'a>(spec: &'a PodSpec, at: &Path) -> Vec<Seen<'a>> {
    let mut seen = Vec::new();
    for (field, list) in [
        ("initContainers", &spec.init_containers),
        ("containers", &spec.containers),
    ] {
        for (i, c) in list.iter().enumerate() {
            seen.push(Seen {
                name: &c.name,
                path: at.child(field).index(i),
                ports: &c.ports,
                env: &c.env,
                resources: &c.resources,
                security: c.security_context.as_ref(),
            });
        }
    }
    for (i, c) in spec.ephemeral_containers.iter().enumerate() {
        let c = &c.ephemeral_container_common;
        seen.push(Seen {
            name: &c.name,
            path: at.child("ephemeralContainers").index(i),
            ports: &c.ports,
            env: &c.env,
            resources: &c.resources,
            security: c.security_context.as_ref(),
        });
    }
    seen
}

/// Ports: a host IP without a host port, and ports of the same number and protocol that
/// collide, across all containers.
fn ports(containers: &[Seen<'_>]) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut by_key: BTreeMap<String, Vec<(Path, &ContainerPort)>> = BTreeMap::new();
    for container in containers {
        for (i, port) in container.ports.iter().enumerate() {
            let path = container.path.child("ports").index(i);
            if !port.host_ip.is_empty() && port.host_port == 0 {
                // Go's `%+v` of kube's internal ContainerPort.
                warnings.push(format!(
                    "{path}: hostIP set without hostPort: {{Name:{} HostPort:{} ContainerPort:{} Protocol:{} HostIP:{}}}",
                    port.name, port.host_port, port.container_port, port.protocol, port.host_ip
                ));
            }
            let key = format!("{}/{}", port.container_port, port.protocol);
            let earlier = by_key.entry(key).or_default();
            for (other_path, other) in earlier.iter() {
                let relation = if port.host_ip == other.host_ip && port.host_port == other.host_port
                {
                    "duplicate"
                } else if port.host_port == 0 || other.host_port == 0 {
                    "overlapping"
                } else if port.host_port == other.host_port
                    && (port.host_ip.is_empty() != other.host_ip.is_empty())
                {
                    "dangerously ambiguous"
                } else {
                    continue;
                };
                warnings.push(format!(
                    "{path}: {relation} port definition with {other_path}"
                ));
            }
            earlier.push((path, port));
        }
    }
    warnings
}
