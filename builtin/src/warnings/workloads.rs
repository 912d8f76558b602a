//! The warnings of the kinds that make Pods from a template (kube's workload strategies:
//! the name warning and the template's on create, the template's again on an update that
//! moves the generation) and of Services, Ingresses and volumes.

use kapi::validation::Path;

use kapi::meta::ObjectMeta;

use super::{name, template};
use crate::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use crate::api::batch::v1::{CronJob, Job, JobSpec};
use crate::api::core::v1::{
    PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimSpec, PodTemplate,
    ReplicationController, Service,
};
use crate::api::networking::v1::Ingress;

/// What kinds whose name becomes their Pods' say of it.
const POD_NAMES: &str = "Pod names and hostnames";

/// `warnings()` of an update that moved the generation (a change to the spec), none
/// otherwise: kube's workload strategies warn again only then.
fn if_generation_moved(
    new: &ObjectMeta,
    old: &ObjectMeta,
    warnings: impl FnOnce() -> Vec<String>,
) -> Vec<String> {
    match new.generation == old.generation {
        true => Vec::new(),
        false => warnings(),
    }
}

macro_rules! templated {
    ($($create:ident, $update:ident: $kind:ty => |$object:ident| $template:expr;)*) => {$(
        pub(crate) fn $create($object: &$kind) -> Vec<String> {
            let mut warnings: Vec<String> = name(&$object.metadata, POD_NAMES).into_iter().collect();
            warnings.extend(
                ($template).map(|t| template(t, &Path::new("spec").child("template"))).unwrap_or_default(),
            );
            warnings
        }

        pub(crate) fn $update($object: &$kind, old: &$kind) -> Vec<String> {
            if_generation_moved(&$object.metadata, &old.metadata, || {
                ($template).map(|t| template(t, &Path::new("spec").child("template"))).unwrap_or_default()
            })
        }
    )*};
}

templated! {
    deployment, deployment_update: Deployment => |set| Some(&set.spec.template);
    replica_set, replica_set_update: ReplicaSet => |set| Some(&set.spec.template);
    daemon_set, daemon_set_update: DaemonSet => |set| Some(&set.spec.template);
    replication_controller, replication_controller_update: ReplicationController
        => |rc| rc.spec.template.as_ref();
}

/// A StatefulSet's: its template's and its claim templates' storage.
pub(crate) fn stateful_set(set: &StatefulSet) -> Vec<String> {
    let mut warnings: Vec<String> = name(&set.metadata, POD_NAMES).into_iter().collect();
    warnings.extend(template(
        &set.spec.template,
        &Path::new("spec").child("template"),
    ));
    for (i, claim) in set.spec.volume_claim_templates.iter().enumerate() {
        let at = Path::new("spec")
            .child("volumeClaimTemplates")
            .index(i)
            .child("spec");
        warnings.extend(claim_spec(&claim.spec, &at));
    }
    warnings
}

pub(crate) fn stateful_set_update(set: &StatefulSet, old: &StatefulSet) -> Vec<String> {
    if_generation_moved(&set.metadata, &old.metadata, || {
        template(&set.spec.template, &Path::new("spec").child("template"))
    })
}

/// A PodTemplate's: its template, under `template`.
pub(crate) fn pod_template(pod_template: &PodTemplate) -> Vec<String> {
    template(&pod_template.template, &Path::new("template"))
}

pub(crate) fn pod_template_update(new: &PodTemplate, old: &PodTemplate) -> Vec<String> {
    if_generation_moved(&new.metadata, &old.metadata, || pod_template(new))
}

/// kube's `WarningsForJobSpec`: a huge indexed Job, then its template.
fn job_spec(spec: &JobSpec, path: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    if spec.completion_mode.as_deref() == Some("Indexed")
        && spec.completions.unwrap_or(0) > 100_000
        && spec.parallelism.unwrap_or(0) > 10_000
    {
        warnings.push(format!(
            "{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"
        ));
    }
    warnings.extend(template(&spec.template, &path.child("template")));
    warnings
}

pub(crate) fn job(job: &Job) -> Vec<String> {
    let mut warnings: Vec<String> = name(&job.metadata, POD_NAMES).into_iter().collect();
    warnings.extend(job_spec(&job.spec, &Path::new("spec")));
    warnings
}

pub(crate) fn job_update(job: &Job, old: &Job) -> Vec<String> {
    if_generation_moved(&job.metadata, &old.metadata, || {
        job_spec(&job.spec, &Path::new("spec"))
    })
}

pub(crate) fn cron_job(cron_job: &CronJob) -> Vec<String> {
    let mut warnings: Vec<String> = name(&cron_job.metadata, POD_NAMES).into_iter().collect();
    let at = Path::new("spec").children(&["jobTemplate", "spec"]);
    warnings.extend(job_spec(&cron_job.spec.job_template.spec, &at));
    warnings
}

pub(crate) fn cron_job_update(cron_job: &CronJob, old: &CronJob) -> Vec<String> {
    let mut warnings = if_generation_moved(&cron_job.metadata, &old.metadata, || {
        let at = Path::new("spec").children(&["jobTemplate", "spec"]);
        job_spec(&cron_job.spec.job_template.spec, &at)
    });
    if cron_job.spec.schedule.contains("TZ") {
        // kube's path reads `spec.spec.schedule`.
        warnings.push("cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details".into());
    }
    warnings
}

/// kube's `GetWarningsForService` but for its IP formats: deprecated annotations, and
/// fields the Service's type ignores.
pub(crate) fn service(service: &Service) -> Vec<String> {
    let mut warnings = Vec::new();
    let annotations = service.metadata.annotations.as_ref();
    if annotations.is_some_and(|a| a.contains_key("service.kubernetes.io/topology-aware-hints")) {
        warnings.push("annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead".into());
    }
    let external_name = service.spec.r#type == "ExternalName";
    if external_name && !service.spec.external_ips.is_empty() {
        warnings.push(r#"spec.externalIPs is ignored when spec.type is "ExternalName""#.into());
    }
    if !external_name && !service.spec.external_name.is_empty() {
        warnings
            .push(r#"spec.externalName is ignored when spec.type is not "ExternalName""#.into());
    }
    warnings
}

pub(crate) fn service_update(service: &Service, _old: &Service) -> Vec<String> {
    self::service(service)
}

/// An Ingress naming its class by the annotation kube replaced with a field.
pub(crate) fn ingress(ingress: &Ingress) -> Vec<String> {
    let annotated = (ingress.metadata.annotations.as_ref())
        .is_some_and(|a| a.contains_key("kubernetes.io/ingress.class"));
    match annotated && ingress.spec.ingress_class_name.is_none() {
        true => vec![r#"annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead"#.into()],
        false => Vec::new(),
    }
}

/// kube warns nothing on an Ingress's updates.
pub(crate) fn ingress_update(_ingress: &Ingress, _old: &Ingress) -> Vec<String> {
    Vec::new()
}

/// The storage class annotation a field replaced.
fn storage_class_annotation(metadata: &kapi::meta::ObjectMeta) -> Option<String> {
    let key = "volume.beta.kubernetes.io/storage-class";
    (metadata.annotations.as_ref())
        .is_some_and(|a| a.contains_key(key))
        .then(|| format!(r#"metadata.annotations[{key}]: deprecated since v1.8; use "storageClassName" attribute instead"#))
}

/// A claim's storage in fractions of a byte.
fn claim_spec(spec: &PersistentVolumeClaimSpec, path: &Path) -> Vec<String> {
    let resources = path.child("resources");
    let requests = super::fractional_bytes(
        &spec.resources.requests,
        "storage",
        &resources.child("requests"),
    );
    let limits = super::fractional_bytes(
        &spec.resources.limits,
        "storage",
        &resources.child("limits"),
    );
    requests.into_iter().chain(limits).collect()
}

pub(crate) fn claim(claim: &PersistentVolumeClaim) -> Vec<String> {
    let mut warnings: Vec<String> = storage_class_annotation(&claim.metadata)
        .into_iter()
        .collect();
    warnings.extend(claim_spec(&claim.spec, &Path::new("spec")));
    warnings
}

pub(crate) fn claim_update(
    claim: &PersistentVolumeClaim,
    _old: &PersistentVolumeClaim,
) -> Vec<String> {
    self::claim(claim)
}

/// A volume's deprecated annotation, reclaim policy, node labels and plugins.
pub(crate) fn persistent_volume(volume: &PersistentVolume) -> Vec<String> {
    let mut warnings: Vec<String> = storage_class_annotation(&volume.metadata)
        .into_iter()
        .collect();
    let spec = &volume.spec;
    if spec.persistent_volume_reclaim_policy == "Recycle" {
        warnings.push("spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.".into());
    }
    let terms = (spec.node_affinity.as_ref()).and_then(|a| a.required.as_ref());
    let at = Path::new("spec").children(&["nodeAffinity", "required", "nodeSelectorTerms"]);
    for (i, term) in terms
        .iter()
        .flat_map(|t| &t.node_selector_terms)
        .enumerate()
    {
        for (j, expression) in term.match_expressions.iter().enumerate() {
            if let Some(message) = super::deprecated_node_label(&expression.key) {
                let key = at.index(i).child("matchExpressions").index(j).child("key");
                warnings.push(format!("{key}: {} is {message}", expression.key));
            }
        }
    }
    let source = &spec.persistent_volume_source;
    warnings.extend(super::plugins(
        &[
            (source.cephfs.is_some(), "cephfs"),
            (
                source.photon_persistent_disk.is_some(),
                "photonPersistentDisk",
            ),
            (source.scale_io.is_some(), "scaleIO"),
            (source.storageos.is_some(), "storageOS"),
            (source.glusterfs.is_some(), "glusterfs"),
            (source.rbd.is_some(), "rbd"),
        ],
        &Path::new("spec"),
    ));
    warnings
}

pub(crate) fn persistent_volume_update(
    volume: &PersistentVolume,
    _old: &PersistentVolume,
) -> Vec<String> {
    persistent_volume(volume)
}
