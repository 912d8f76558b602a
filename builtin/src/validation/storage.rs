//! PersistentVolumeClaims (kube's `ValidatePersistentVolumeClaim` and its update): access
//! modes, the storage asked for, and a spec that does not change once created;
//! StorageClasses and VolumeAttachments (`pkg/apis/storage/validation`).

use kapi::error::FieldError;
use kapi::quantity::Quantity;
use kapi::validation::{self as v, Path};

use super::{forbidden, invalid_each, json, label_selector, required};
use crate::api::core::v1::{PersistentVolumeClaim, PersistentVolumeClaimSpec};
use crate::api::storage::v1::{StorageClass, VolumeAttachment};

/// The access modes a claim may ask for.
const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// kube's `ValidatePersistentVolumeClaim`.
pub(crate) fn claim(claim: &PersistentVolumeClaim) -> Vec<FieldError> {
    claim_spec(&claim.spec, &Path::new("spec"))
}

/// kube's `ValidatePersistentVolumeClaimSpec` (also a StatefulSet's claim templates').
pub(crate) fn claim_spec(spec: &PersistentVolumeClaimSpec, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let modes = path.child("accessModes");
    if spec.access_modes.is_empty() {
        errors.push(required(&modes, "at least 1 access mode is required"));
    }
    for mode in &spec.access_modes {
        if !ACCESS_MODES.contains(&mode.as_str()) {
            errors.push(FieldError::not_supported(&modes, mode, &ACCESS_MODES));
        }
    }
    if let Some(selector) = &spec.selector {
        errors.extend(label_selector(selector, &path.child("selector")));
    }
    let storage = path.child("resources").key("storage");
    match spec.resources.requests.get("storage") {
        None => errors.push(required(&storage, "")),
        Some(value) => match Quantity::parse(&value.0) {
            Ok(amount) if amount.sign() <= 0 => {
                errors.push(FieldError::invalid(
                    &storage,
                    value.0.as_str(),
                    "must be greater than zero",
                ));
            }
            Ok(_) => {}
            Err(_) => errors.push(FieldError::invalid(
                &storage,
                value.0.as_str(),
                "must be a quantity",
            )),
        },
    }
    if let Some(mode) = &spec.volume_mode {
        errors.extend(super::one_of(
            mode,
            &["Block", "Filesystem"],
            &path.child("volumeMode"),
        ));
    }
    if let Some(class) = spec.storage_class_name.as_ref().filter(|c| !c.is_empty()) {
        errors.extend(invalid_each(
            v::dns1123_subdomain(class),
            class,
            &path.child("storageClassName"),
        ));
    }
    errors
}

/// kube's `ValidatePersistentVolumeClaimUpdate`: the spec stays, but for the storage a
/// bound claim asks for and its volume attributes class.
pub(crate) fn claim_update(
    new: &PersistentVolumeClaim,
    old: &PersistentVolumeClaim,
) -> Vec<FieldError> {
    let mut errors = claim(new);
    let mut restored = new.spec.clone();
    let bound = !old.spec.volume_name.is_empty();
    if bound {
        restored.resources.requests = old.spec.resources.requests.clone();
    }
    restored.volume_attributes_class_name = old.spec.volume_attributes_class_name.clone();
    // A volume may be named once, when the claim binds.
    if old.spec.volume_name.is_empty() {
        restored.volume_name = old.spec.volume_name.clone();
    }
    if json(&restored) != json(&old.spec) {
        let message = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";
        errors.push(forbidden(&Path::new("spec"), message));
    }
    errors
}

/// kube's `ValidateStorageClass`.
pub(crate) fn storage_class(class: &StorageClass) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let provisioner = Path::new("provisioner");
    match class.provisioner.is_empty() {
        true => errors.push(required(&provisioner, "")),
        false => errors.extend(invalid_each(
            v::qualified_name(&class.provisioner.to_lowercase()),
            &class.provisioner,
            &provisioner,
        )),
    }
    if let Some(policy) = &class.reclaim_policy {
        errors.extend(super::one_of(
            policy,
            &["Delete", "Retain"],
            &Path::new("reclaimPolicy"),
        ));
    }
    if let Some(mode) = &class.volume_binding_mode {
        errors.extend(super::one_of(
            mode,
            &["Immediate", "WaitForFirstConsumer"],
            &Path::new("volumeBindingMode"),
        ));
    }
    errors
}

/// kube's `ValidateStorageClassUpdate`: parameters, provisioner, reclaim policy and
/// binding mode stay.
pub(crate) fn storage_class_update(new: &StorageClass, old: &StorageClass) -> Vec<FieldError> {
    let mut errors = storage_class(new);
    if new.parameters != old.parameters {
        errors.push(forbidden(
            &Path::new("parameters"),
            "updates to parameters are forbidden.",
        ));
    }
    if new.provisioner != old.provisioner {
        errors.push(forbidden(
            &Path::new("provisioner"),
            "updates to provisioner are forbidden.",
        ));
    }
    if new.reclaim_policy != old.reclaim_policy {
        errors.push(forbidden(
            &Path::new("reclaimPolicy"),
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    errors.extend(super::immutable(
        &new.volume_binding_mode,
        &old.volume_binding_mode,
        &Path::new("volumeBindingMode"),
    ));
    errors
}

/// kube's `ValidateVolumeAttachment`: an attacher, a node, exactly one source.
pub(crate) fn volume_attachment(attachment: &VolumeAttachment) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let s = &attachment.spec;
    let mut errors = Vec::new();
    let attacher = spec.child("attacher");
    if s.attacher.is_empty() {
        errors.push(required(&attacher, ""));
    }
    let sources = [
        s.source.persistent_volume_name.is_some(),
        s.source.inline_volume_spec.is_some(),
    ];
    if sources.iter().filter(|s| **s).count() != 1 {
        let message = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";
        errors.push(required(&spec.child("source"), message));
    }
    errors.extend(invalid_each(
        v::dns1123_subdomain(&s.node_name),
        &s.node_name,
        &spec.child("nodeName"),
    ));
    // kube checks the attacher again as a CSI driver's name.
    if s.attacher.is_empty() {
        errors.push(required(&attacher, ""));
    }
    errors.extend(invalid_each(
        v::dns1123_subdomain(&s.attacher),
        &s.attacher,
        &attacher,
    ));
    errors
}
