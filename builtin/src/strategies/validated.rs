//! The kinds whose strategy is kube's validation alone: each names its create rules and,
//! where kube has them, its update rules (which judge the new object too).

use crate::validation::{
    batch, cluster, limits, networking, policy, scheduling, secret, service, storage, workloads,
};
use crate::warnings as warn;
use kapi::api::STATUS_METADATA;

/// `kind => create` or `kind => create, update`: a strategy that validates with them;
/// `| create, update` after them: and warns with those (`crate::warnings`);
/// `[status: fields]` last: the metadata its status writes may change, as kube's status
/// strategy leaves it (`Strategy::subresource_metadata`).
macro_rules! validated {
    ($($kind:path => $create:path $(, $update:path)? $(| $warn:path, $warn_update:path)? $([status: $status:expr])?;)*) => {
        $(impl kapi::Strategy for $kind {
            fn validate(&self) -> Vec<kapi::error::FieldError> {
                $create(self)
            }

            $(fn validate_update(&self, old: &Self) -> Vec<kapi::error::FieldError> {
                $update(self, old)
            })?

            $(fn warnings(&self) -> Vec<String> {
                $warn(self)
            }

            fn warnings_on_update(&self, old: &Self) -> Vec<String> {
                $warn_update(self, old)
            })?

            fn allow_unconditional_update() -> bool {
                true
            }

            $(fn subresource_metadata(subresource: &str) -> &'static [&'static str] {
                match subresource {
                    "status" => $status,
                    _ => &[],
                }
            })?
        })*
    };
}

validated! {
    crate::api::apps::v1::ControllerRevision => cluster::controller_revision, cluster::controller_revision_update;
    crate::api::apps::v1::Deployment => workloads::deployment, workloads::deployment_update | warn::deployment, warn::deployment_update [status: &["annotations", "finalizers", "ownerReferences"]];
    crate::api::apps::v1::ReplicaSet => workloads::replica_set, workloads::replica_set_update | warn::replica_set, warn::replica_set_update [status: STATUS_METADATA];
    crate::api::apps::v1::StatefulSet => workloads::stateful_set, workloads::stateful_set_update | warn::stateful_set, warn::stateful_set_update [status: STATUS_METADATA];
    crate::api::batch::v1::CronJob => batch::cron_job, batch::cron_job_update | warn::cron_job, warn::cron_job_update [status: STATUS_METADATA];
    crate::api::core::v1::Endpoints => cluster::endpoints;
    crate::api::core::v1::LimitRange => limits::limit_range;
    crate::api::core::v1::Node => cluster::node [status: STATUS_METADATA];
    crate::api::core::v1::PersistentVolume => cluster::persistent_volume | warn::persistent_volume, warn::persistent_volume_update [status: STATUS_METADATA];
    crate::api::core::v1::PersistentVolumeClaim => storage::claim, storage::claim_update | warn::claim, warn::claim_update [status: STATUS_METADATA];
    crate::api::core::v1::ResourceQuota => cluster::resource_quota [status: STATUS_METADATA];
    crate::api::core::v1::PodTemplate => workloads::pod_template | warn::pod_template, warn::pod_template_update;
    crate::api::core::v1::ReplicationController => workloads::replication_controller | warn::replication_controller, warn::replication_controller_update [status: STATUS_METADATA];
    crate::api::core::v1::Secret => secret::secret, secret::secret_update;
    crate::api::core::v1::Service => service::service, service::service_update | warn::service, warn::service_update [status: STATUS_METADATA];
    crate::api::networking::v1::Ingress => networking::ingress | warn::ingress, warn::ingress_update [status: STATUS_METADATA];
    crate::api::networking::v1::IngressClass => networking::ingress_class;
    crate::api::networking::v1::NetworkPolicy => networking::network_policy;
    crate::api::node::v1::RuntimeClass => scheduling::runtime_class, scheduling::runtime_class_update;
    crate::api::policy::v1::PodDisruptionBudget => policy::budget [status: STATUS_METADATA];
    crate::api::storage::v1::StorageClass => storage::storage_class, storage::storage_class_update;
    crate::api::storage::v1::VolumeAttachment => storage::volume_attachment;
}
