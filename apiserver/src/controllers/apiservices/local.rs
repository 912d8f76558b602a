//! kube-apiserver's autoregister and CRD registration controllers: every group-version
//! this server serves has an APIService without a service. Compiled kinds' are made at
//! start-up ([`register_local_now`], before the server serves) and labelled
//! `kube-aggregator.kubernetes.io/automanaged: onstart` (a later change by a user stays);
//! those of CustomResourceDefinitions are labelled `true` and follow their definitions
//! (priorities 1000 and 100), deleted (conditional on their uid) when no definition serves
//! them. Kubernetes' own groups take kube's priorities; others 1000 and 15.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::{KIND, MANAGED, typed_body, writes};
use crate::health::Hook;
use kapi_core::error::ApiError;
use kapi_core::meta::{DeleteOptions, Preconditions};
use kapi_kinds::apiregistration::{APIService, APIServiceSpec, GROUP};
use kapi_registry::{ListOptions, Registry, Target};

/// kube's priorities of its own group-versions (`apiVersionPriorities`), for those this
/// server may serve.
fn kube_priority(group: &str, version: &str) -> Option<(i32, i32)> {
    Some(match (group, version) {
        ("", "v1") => (18000, 1),
        ("apps", "v1") => (17800, 15),
        ("events.k8s.io", "v1") => (17750, 15),
        ("events.k8s.io", "v1beta1") => (17750, 5),
        ("authentication.k8s.io", "v1") => (17700, 15),
        ("authorization.k8s.io", "v1") => (17600, 15),
        ("coordination.k8s.io", "v1") => (16500, 15),
        ("rbac.authorization.k8s.io", "v1") => (17000, 15),
        ("apiextensions.k8s.io", "v1") => (16700, 15),
        ("admissionregistration.k8s.io", "v1") => (16700, 15),
        _ => return None,
    })
}

/// The local APIServices the scheme now calls for, by name: their spec, and whether they
/// follow a definition (`true`) or were made at start-up (`onstart`).
fn wanted(registry: &Registry) -> BTreeMap<String, (APIServiceSpec, &'static str)> {
    let mut wanted = BTreeMap::new();
    for kind in registry.scheme().kinds().iter() {
        let info = kind.info;
        if info.group == GROUP {
            continue;
        }
        for version in info.versions.iter().filter(|v| v.served) {
            let (managed, (group_priority, version_priority)) = match kind.is_dynamic() {
                true => ("true", (1000, 100)),
                false => (
                    "onstart",
                    kube_priority(info.group, version.name).unwrap_or((1000, 15)),
                ),
            };
            let spec = APIServiceSpec {
                group: info.group.to_owned(),
                version: version.name.to_owned(),
                group_priority_minimum: group_priority,
                version_priority,
                ..APIServiceSpec::default()
            };
            wanted.insert(format!("{}.{}", version.name, info.group), (spec, managed));
        }
    }
    wanted
}

/// Makes the local APIServices of the scheme as it is (the server does this before it
/// serves, so that clients and tests find them from the first request, as kube's
/// `autoregister-completion` readiness check waits for them).
pub async fn register_local_now(registry: &Registry) -> Result<(), ApiError> {
    sync_local(registry, true).await
}

/// Keeps the local APIServices: at start, and whenever the scheme changes; `completion`
/// is done once they were all made.
pub(super) async fn run(registry: Weak<Registry>, completion: Arc<Hook>) {
    let mut done: Option<u64> = None;
    let mut started = false;
    loop {
        let Some(strong) = registry.upgrade() else {
            return;
        };
        let generation = strong.scheme().generation();
        if done != Some(generation) {
            match sync_local(&strong, !started).await {
                Ok(()) => {
                    done = Some(generation);
                    started = true;
                    completion.done();
                }
                Err(error) => tracing::warn!(%error, "local APIServices: retrying"),
            }
        }
        drop(strong);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// One pass: creates the missing local APIServices, updates the managed ones whose spec
/// differs (`onstart` ones only at start), deletes those no longer served (`onstart` ones
/// only at start).
async fn sync_local(registry: &Registry, start: bool) -> Result<(), ApiError> {
    let Some(kind) = registry.scheme().by_kind(GROUP, KIND) else {
        return Ok(());
    };
    let target = || Target {
        kind: &kind,
        version: "v1",
        namespace: None,
    };
    let listed = registry.list(target(), &ListOptions::default()).await?;
    let mut existing: HashMap<String, APIService> = HashMap::new();
    for item in &listed.items {
        if let Ok(service) = serde_json::from_value::<APIService>(item.value()) {
            existing.insert(service.metadata.name.clone().unwrap_or_default(), service);
        }
    }
    let wanted = wanted(registry);
    for (name, (spec, managed)) in &wanted {
        let written = match existing.get(name) {
            None => {
                let mut service = APIService {
                    spec: spec.clone(),
                    ..APIService::default()
                };
                service.metadata.name = Some(name.clone());
                let labels = service.metadata.labels.get_or_insert_with(Default::default);
                labels.insert(MANAGED.into(), (*managed).into());
                registry
                    .create(target(), typed_body(&service)?, &writes())
                    .await
                    .map(drop)
            }
            Some(service) => {
                let label = (service.metadata.labels.as_ref()).and_then(|l| l.get(MANAGED));
                let keep = match label.map(String::as_str) {
                    Some("true") => true,
                    Some("onstart") => start,
                    _ => false,
                };
                if !keep || service.spec == *spec {
                    continue;
                }
                let mut updated = service.clone();
                updated.spec = spec.clone();
                registry
                    .update(target(), name, typed_body(&updated)?, None, &writes())
                    .await
                    .map(drop)
            }
        };
        match written {
            Ok(()) | Err(ApiError::AlreadyExists { .. } | ApiError::Conflict { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    for (name, service) in &existing {
        let label = (service.metadata.labels.as_ref()).and_then(|l| l.get(MANAGED));
        // `onstart` ones too at start, as kube's autoregister's first sync: a group-version
        // served by the last run and switched off since (`--runtime-config`) goes.
        let stale = match label.map(String::as_str) {
            Some("true") => true,
            Some("onstart") => start,
            _ => false,
        };
        if stale && !wanted.contains_key(name) {
            let only_this = DeleteOptions {
                preconditions: Some(Preconditions {
                    uid: service.metadata.uid.clone(),
                    resource_version: None,
                }),
                ..DeleteOptions::default()
            };
            match registry.delete(target(), name, &only_this).await {
                Ok(_) | Err(ApiError::NotFound { .. } | ApiError::Conflict { .. }) => {}
                Err(error) => return Err(error),
            }
        }
    }
    Ok(())
}
