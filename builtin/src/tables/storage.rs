//! Volumes and what provides them (kube's `printPersistentVolume`,
//! `printPersistentVolumeClaim`, `printStorageClass`, `printCSIDriver`, `printCSINode`,
//! `printVolumeAttachment`).

use serde_json::Value;

use super::{access_modes, items, or_none, or_unset, quantity, text};

/// The storage class annotation kube reads before the field.
const CLASS_ANNOTATION: &str = "/metadata/annotations/volume.beta.kubernetes.io~1storage-class";

/// A volume's or a claim's class: the beta annotation, else the field.
fn class(object: &Value) -> Value {
    match object.pointer(CLASS_ANNOTATION).and_then(Value::as_str) {
        Some(class) => class.into(),
        None => text(object, "/spec/storageClassName").into(),
    }
}

/// `Terminating` while deleted, else the phase.
fn phase(object: &Value) -> Value {
    match object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        true => "Terminating".into(),
        false => text(object, "/status/phase").into(),
    }
}

/// A volume's capacity.
pub(crate) fn volume_capacity(volume: &Value) -> Value {
    quantity(volume.pointer("/spec/capacity/storage")).into()
}

/// A volume's access modes.
pub(crate) fn volume_access_modes(volume: &Value) -> Value {
    access_modes(items(volume, "/spec/accessModes"))
}

/// A volume's phase.
pub(crate) fn volume_status(volume: &Value) -> Value {
    phase(volume)
}

/// The claim bound to a volume: `namespace/name`.
pub(crate) fn volume_claim(volume: &Value) -> Value {
    match volume.pointer("/spec/claimRef").filter(|c| !c.is_null()) {
        Some(claim) => format!("{}/{}", text(claim, "/namespace"), text(claim, "/name")).into(),
        None => "".into(),
    }
}

/// A volume's or a claim's storage class.
pub(crate) fn storage_class(object: &Value) -> Value {
    class(object)
}

/// A volume's or a claim's attributes class.
pub(crate) fn attributes_class(object: &Value) -> Value {
    or_unset(object, "/spec/volumeAttributesClassName")
}

/// A volume's or a claim's mode.
pub(crate) fn volume_mode(object: &Value) -> Value {
    or_unset(object, "/spec/volumeMode")
}

/// A claim's phase.
pub(crate) fn claim_status(claim: &Value) -> Value {
    phase(claim)
}

/// A claim's capacity, once bound.
pub(crate) fn claim_capacity(claim: &Value) -> Value {
    match text(claim, "/spec/volumeName").is_empty() {
        true => "".into(),
        false => quantity(claim.pointer("/status/capacity/storage")).into(),
    }
}

/// A claim's access modes, once bound.
pub(crate) fn claim_access_modes(claim: &Value) -> Value {
    match text(claim, "/spec/volumeName").is_empty() {
        true => "".into(),
        false => access_modes(items(claim, "/status/accessModes")),
    }
}

/// A StorageClass's name, ` (default)` after it for the default class (either of kube's
/// annotations saying exactly `true`: `IsDefaultAnnotation`).
pub(crate) fn class_name(class: &Value) -> Value {
    let name = text(class, "/metadata/name");
    let annotation = |key: &str| {
        (class.pointer("/metadata/annotations"))
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            == Some("true")
    };
    let default = annotation("storageclass.kubernetes.io/is-default-class")
        || annotation("storageclass.beta.kubernetes.io/is-default-class");
    match default {
        true => format!("{name} (default)").into(),
        false => name.into(),
    }
}

/// A CSIStorageCapacity's capacity, `<unset>` when not reported.
pub(crate) fn storage_capacity(capacity: &Value) -> Value {
    match capacity.get("capacity") {
        Some(value) if !value.is_null() => quantity(Some(value)).into(),
        _ => "<unset>".into(),
    }
}

/// A StorageClass's reclaim policy (`Delete` unless said).
pub(crate) fn class_reclaim_policy(class: &Value) -> Value {
    match text(class, "/reclaimPolicy") {
        "" => "Delete".into(),
        policy => policy.into(),
    }
}

/// A StorageClass's binding mode (`Immediate` unless said).
pub(crate) fn class_binding_mode(class: &Value) -> Value {
    match text(class, "/volumeBindingMode") {
        "" => "Immediate".into(),
        mode => mode.into(),
    }
}

/// Whether a StorageClass's volumes expand (false unless said).
pub(crate) fn class_expansion(class: &Value) -> Value {
    class
        .get("allowVolumeExpansion")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .into()
}

/// A CSIDriver flag, `default` unless set.
fn flag(driver: &Value, pointer: &str, default: bool) -> Value {
    driver
        .pointer(pointer)
        .and_then(Value::as_bool)
        .unwrap_or(default)
        .into()
}

/// Whether a CSI driver attaches (true unless said).
pub(crate) fn driver_attach_required(driver: &Value) -> Value {
    flag(driver, "/spec/attachRequired", true)
}

/// Whether a CSI driver is told of the pod on mount.
pub(crate) fn driver_pod_info(driver: &Value) -> Value {
    flag(driver, "/spec/podInfoOnMount", false)
}

/// Whether a CSI driver reports capacity.
pub(crate) fn driver_storage_capacity(driver: &Value) -> Value {
    flag(driver, "/spec/storageCapacity", false)
}

/// Whether a CSI driver is called again to republish.
pub(crate) fn driver_requires_republish(driver: &Value) -> Value {
    flag(driver, "/spec/requiresRepublish", false)
}

/// The audiences a CSI driver asks tokens for.
pub(crate) fn driver_token_requests(driver: &Value) -> Value {
    match driver
        .pointer("/spec/tokenRequests")
        .and_then(Value::as_array)
    {
        None => "<unset>".into(),
        Some(requests) => {
            let audiences: Vec<&str> = requests.iter().map(|r| text(r, "/audience")).collect();
            audiences.join(",").into()
        }
    }
}

/// A CSI driver's lifecycle modes.
pub(crate) fn driver_modes(driver: &Value) -> Value {
    let modes: Vec<&str> = items(driver, "/spec/volumeLifecycleModes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    or_none(&modes.join(","))
}

/// A CSINode's drivers.
pub(crate) fn node_drivers(node: &Value) -> Value {
    (items(node, "/spec/drivers").len() as i64).into()
}

/// The volume a VolumeAttachment attaches.
pub(crate) fn attachment_volume(attachment: &Value) -> Value {
    text(attachment, "/spec/source/persistentVolumeName").into()
}

/// Whether a VolumeAttachment is attached.
pub(crate) fn attachment_attached(attachment: &Value) -> Value {
    attachment
        .pointer("/status/attached")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .into()
}

/// Why a volume is in its phase, empty when nothing says.
pub(crate) fn volume_reason(volume: &Value) -> Value {
    text(volume, "/status/reason").into()
}

/// The volume a claim is bound to, empty before it binds.
pub(crate) fn claim_volume(claim: &Value) -> Value {
    text(claim, "/spec/volumeName").into()
}
