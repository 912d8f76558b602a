//! A pod's volumes (kube's `validateVolumes` and `validateVolumeSource`): unique valid
//! names, exactly one source each, and the rules of the sources most used.

use std::collections::BTreeSet;

use kapi::error::FieldError;
use kapi::validation::{self as v, Path};

use super::super::{forbidden, invalid_each, json, required};
use super::containers::local_descending_path;
use crate::api::core::v1::{KeyToPath, Volume, VolumeSource};

/// The sources in the order kube's `validateVolumeSource` looks at them: the second one
/// present is the one reported.
const SOURCES: [&str; 30] = [
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flexVolume",
    "persistentVolumeClaim",
    "rbd",
    "quobyte",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "configMap",
    "scaleIO",
    "projected",
    "csi",
    "ephemeral",
    "image",
];

/// The errors of `volumes`, and the names of those without any (which mounts may name:
/// kube knows only the valid ones).
pub(super) fn volumes<'a>(
    volumes: &'a [Volume],
    path: &Path,
) -> (Vec<FieldError>, BTreeSet<&'a str>) {
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for (i, volume) in volumes.iter().enumerate() {
        let at = path.index(i);
        let name = at.child("name");
        let mut own = source(&volume.volume_source, &at);
        match volume.name.is_empty() {
            true => own.push(required(&name, "")),
            false => own.extend(invalid_each(
                v::dns1123_label(&volume.name),
                &volume.name,
                &name,
            )),
        }
        if names.contains(volume.name.as_str()) {
            own.push(super::super::duplicate(&name, volume.name.as_str()));
        }
        match own.is_empty() {
            true => {
                names.insert(volume.name.as_str());
            }
            false => errors.extend(own),
        }
    }
    (errors, names)
}

/// Exactly one source, and that source's rules.
fn source(source: &VolumeSource, path: &Path) -> Vec<FieldError> {
    let given = json(source);
    let present: Vec<&str> = (SOURCES.iter().copied())
        .filter(|name| given.get(*name).is_some_and(|v| !v.is_null()))
        .collect();
    let Some(first) = present.first() else {
        return vec![required(path, "must specify a volume type")];
    };
    let mut errors: Vec<FieldError> = (present[1..].iter())
        .map(|name| forbidden(&path.child(name), "may not specify more than 1 volume type"))
        .collect();
    let at = path.child(first);
    if let Some(host) = &source.host_path {
        if host.path.is_empty() {
            errors.push(required(&at.child("path"), ""));
        } else if host.path.split('/').any(|part| part == "..") {
            errors.push(FieldError::invalid(
                at.child("path"),
                host.path.as_str(),
                "must not contain '..'",
            ));
        }
        if let Some(kind) = &host.r#type {
            let kinds = [
                "",
                "DirectoryOrCreate",
                "Directory",
                "FileOrCreate",
                "File",
                "Socket",
                "CharDevice",
                "BlockDevice",
            ];
            errors.extend(super::super::one_of(kind, &kinds, &at.child("type")));
        }
    }
    if let Some(secret) = &source.secret {
        if secret.secret_name.is_empty() {
            errors.push(required(&at.child("secretName"), ""));
        }
        errors.extend(mode(secret.default_mode, &at.child("defaultMode")));
        errors.extend(items(&secret.items, &at.child("items")));
    }
    if let Some(config_map) = &source.config_map {
        if config_map.local_object_reference.name.is_empty() {
            errors.push(required(&at.child("name"), ""));
        }
        errors.extend(mode(config_map.default_mode, &at.child("defaultMode")));
        errors.extend(items(&config_map.items, &at.child("items")));
    }
    if let Some(claim) = &source.persistent_volume_claim
        && claim.claim_name.is_empty()
    {
        errors.push(required(&at.child("claimName"), ""));
    }
    if let Some(projected) = &source.projected {
        errors.extend(mode(projected.default_mode, &at.child("defaultMode")));
        for (i, projection) in projected.sources.iter().enumerate() {
            let kinds = [
                projection.secret.is_some(),
                projection.downward_api.is_some(),
                projection.config_map.is_some(),
                projection.service_account_token.is_some(),
                projection.cluster_trust_bundle.is_some(),
            ];
            if kinds.iter().filter(|k| **k).count() > 1 {
                let message = "may not specify more than 1 volume type per source";
                errors.push(forbidden(&at.child("sources").index(i), message));
            }
        }
    }
    errors
}

/// A file mode: kube's `validateFileMode`-style range check (0 to 0777).
fn mode(mode: Option<i32>, path: &Path) -> Vec<FieldError> {
    match mode {
        Some(mode) if !(0..=0o777).contains(&mode) => {
            vec![FieldError::invalid(
                path,
                mode,
                "must be a number between 0 and 0777 (octal), both inclusive",
            )]
        }
        _ => Vec::new(),
    }
}

/// kube's `validateKeyToPath` of each item.
fn items(items: &[KeyToPath], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = path.index(i);
        if item.key.is_empty() {
            errors.push(required(&at.child("key"), ""));
        }
        let target = at.child("path");
        match item.path.is_empty() {
            true => errors.push(required(&target, "")),
            false => errors.extend(local_descending_path(&item.path, &target)),
        }
        errors.extend(mode(item.mode, &at.child("mode")));
    }
    errors
}
