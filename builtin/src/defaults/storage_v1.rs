//! `storage.k8s.io/v1`: storage classes' reclaim and binding, CSI drivers' capabilities.

use super::or;
use crate::api::storage::v1::{CSIDriver, StorageClass};

/// Volumes are deleted when released and bound at once.
pub(crate) fn storage_class(class: &mut StorageClass) {
    or(&mut class.reclaim_policy, "Delete".to_owned());
    or(&mut class.volume_binding_mode, "Immediate".to_owned());
}

/// A driver is attached, told nothing of pods, reports no capacity, owns volumes by
/// file system type, serves persistent volumes, is not called again, and mounts with no
/// SELinux context (`SELinuxMountReadWriteOncePod`, on in kube 1.32).
pub(crate) fn csi_driver(driver: &mut CSIDriver) {
    let spec = &mut driver.spec;
    or(&mut spec.attach_required, true);
    or(&mut spec.pod_info_on_mount, false);
    or(&mut spec.storage_capacity, false);
    or(
        &mut spec.fs_group_policy,
        "ReadWriteOnceWithFSType".to_owned(),
    );
    if spec.volume_lifecycle_modes.is_empty() {
        spec.volume_lifecycle_modes.push("Persistent".into());
    }
    or(&mut spec.requires_republish, false);
    or(&mut spec.se_linux_mount, false);
}
