//! The APIService controllers of the aggregator (`crate::aggregator`), kube-aggregator's
//! and kube-apiserver's:
//!
//! - **registration**: follows the APIServices' watch cache into the aggregator, which
//!   routes by them;
//! - **local APIServices** (kube's autoregister and CRD registration controllers): every
//!   group-version this server serves has an APIService without a service. Compiled
//!   kinds' are made at start-up and labelled `kube-aggregator.kubernetes.io/automanaged:
//!   onstart` (a later change by a user stays); those of CustomResourceDefinitions are
//!   labelled `true` and follow their definitions (priorities 1000 and 100), removed when
//!   no definition serves them. Kubernetes' own groups take kube's priorities; others
//!   1000 and 15.
//! - **availability** (kube's `AvailableConditionController`): each remote APIService's
//!   server is asked for its group-version's discovery (`GET /apis/<group>/<version>`,
//!   5 s) when the APIService appears or changes, when a proxied request could not reach
//!   it, and every 30 s; `status.conditions[Available]` says what was found, with kube's
//!   reasons (`Local`, `Passed`, `FailedDiscoveryCheck`) and messages. A server that
//!   answers also gives its documents to merge (aggregated discovery, OpenAPI v2 and v3).
//!   Unlike kube's check, this one verifies the server's certificate as the proxy does,
//!   so a wrong `caBundle` shows here rather than only on requests.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::follow::{follow, take};
use crate::aggregator::{Aggregator, Entry, Fetched, Remote};
use crate::error::ApiError;
use crate::kinds::apiregistration::{
    APIService, APIServiceCondition, APIServiceSpec, AVAILABLE, GROUP,
};
use crate::registry::{ListOptions, Registry, Subresource, Target, WriteOptions};

/// kube's label of the APIServices its controllers keep.
pub const MANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";
/// How often every remote APIService is checked again.
const INTERVAL: Duration = Duration::from_secs(30);
/// How long a check waits for an answer.
const TIMEOUT: Duration = Duration::from_secs(5);
const KIND: &str = "APIService";
const MANAGER: &str = "kube-aggregator";

/// Runs the three controllers until the registry goes.
pub async fn run(registry: Weak<Registry>, aggregator: Arc<Aggregator>) {
    let slot = {
        let Some(strong) = registry.upgrade() else {
            return;
        };
        let scheme = strong.scheme();
        match scheme.by_kind(GROUP, KIND).and_then(|k| scheme.slot_of(&k)) {
            Some(slot) => slot,
            None => return,
        }
    };
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let follower = tokio::spawn(follow(registry.clone(), slot, sender, "apiservices"));
    let checker = tokio::spawn(check(registry.clone(), Arc::clone(&aggregator)));
    let local = tokio::spawn(register_local(registry.clone()));
    let mut services: BTreeMap<String, APIService> = BTreeMap::new();
    while let Some(followed) = receiver.recv().await {
        take(&mut services, followed, |s| &mut s.metadata);
        while let Ok(followed) = receiver.try_recv() {
            take(&mut services, followed, |s| &mut s.metadata);
        }
        if aggregator.set(services.values().cloned().collect()) {
            aggregator.recheck();
        }
    }
    for task in [follower, checker, local] {
        task.abort();
    }
}

/// Checks every remote APIService now and then, and when asked.
async fn check(registry: Weak<Registry>, aggregator: Arc<Aggregator>) {
    loop {
        tokio::select! {
            () = aggregator.rechecks() => {}
            () = tokio::time::sleep(INTERVAL) => {}
        }
        let registered = aggregator.registered();
        let checks = (registered.entries().iter()).map(|entry| async move {
            let (condition, fetched) = availability(entry).await;
            entry.keep(fetched);
            (entry, condition)
        });
        let results = futures_util::future::join_all(checks).await;
        let Some(strong) = registry.upgrade() else {
            return;
        };
        for (entry, condition) in results {
            if let Err(error) = write_condition(&strong, &entry.service, condition).await {
                tracing::warn!(apiservice = entry.name(), %error, "cannot write its status");
            }
        }
    }
}

fn condition(status: bool, reason: &str, message: String) -> APIServiceCondition {
    APIServiceCondition {
        r#type: AVAILABLE.into(),
        status: if status { "True" } else { "False" }.into(),
        last_transition_time: None,
        reason: Some(reason.into()),
        message: Some(message),
    }
}

/// The `Available` condition of `entry`, and the documents its server gave.
async fn availability(entry: &Entry) -> (APIServiceCondition, Fetched) {
    let Some(remote) = entry.remote() else {
        let message = "Local APIServices are always available".to_owned();
        return (condition(true, "Local", message), Fetched::default());
    };
    let remote = match remote {
        Ok(remote) => remote,
        Err(error) => {
            let reason = "FailedDiscoveryCheck";
            return (condition(false, reason, error.clone()), Fetched::default());
        }
    };
    let spec = &entry.service.spec;
    let path = match spec.group.as_str() {
        "" => format!("/api/{}", spec.version),
        group => format!("/apis/{group}/{}", spec.version),
    };
    let url = format!("{}{path}", remote.base);
    let failed = |detail: String| {
        let message = format!("failing or missing response from {url}: {detail}");
        (
            condition(false, "FailedDiscoveryCheck", message),
            Fetched::default(),
        )
    };
    let list = match Aggregator::fetch(remote, &path, "application/json", TIMEOUT).await {
        Ok((status, body)) if (200..300).contains(&status) => body,
        Ok((status, _)) => return failed(format!("bad status from {url}: {status}")),
        Err(error) => return failed(error),
    };
    let fetched = Fetched {
        discovery: discovery(remote, spec, &list).await.map(Arc::new),
        openapi_v2: openapi_v2(remote).await.map(Arc::new),
        openapi_v3: openapi_v3(remote, spec).await.map(Arc::new),
    };
    let passed = condition(true, "Passed", "all checks passed".into());
    (passed, fetched)
}

/// The group-version's aggregated discovery entry: from the server's own aggregated
/// `/apis` when it serves one, else made from its resource list.
async fn discovery(remote: &Remote, spec: &APIServiceSpec, list: &[u8]) -> Option<Value> {
    const AGGREGATED: &str =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    if let Ok((200, body)) = Aggregator::fetch(remote, "/apis", AGGREGATED, TIMEOUT).await
        && let Ok(document) = serde_json::from_slice::<Value>(&body)
        && document["kind"] == "APIGroupDiscoveryList"
    {
        let groups = document["items"].as_array().into_iter().flatten();
        let found = (groups.filter(|g| g["metadata"]["name"] == spec.group.as_str()))
            .flat_map(|g| g["versions"].as_array().into_iter().flatten())
            .find(|v| v["version"] == spec.version.as_str());
        if let Some(found) = found {
            return Some(found.clone());
        }
    }
    let list: Value = serde_json::from_slice(list).ok()?;
    Some(crate::aggregator::version_entry(
        &spec.group,
        &spec.version,
        &list,
    ))
}

/// The server's `/openapi/v2`.
async fn openapi_v2(remote: &Remote) -> Option<Value> {
    let (status, body) = Aggregator::fetch(remote, "/openapi/v2", "application/json", TIMEOUT)
        .await
        .ok()?;
    (status == 200).then(|| serde_json::from_slice(&body).ok())?
}

/// The server's `/openapi/v3` document of the group-version, found through its index.
async fn openapi_v3(remote: &Remote, spec: &APIServiceSpec) -> Option<Value> {
    let (status, body) = Aggregator::fetch(remote, "/openapi/v3", "application/json", TIMEOUT)
        .await
        .ok()?;
    let index: Value = (status == 200).then(|| serde_json::from_slice(&body).ok())??;
    let key = format!("apis/{}/{}", spec.group, spec.version);
    let url = index["paths"][key]["serverRelativeURL"].as_str()?;
    let (status, body) = Aggregator::fetch(remote, url, "application/json", TIMEOUT)
        .await
        .ok()?;
    (status == 200).then(|| serde_json::from_slice(&body).ok())?
}

/// kube's `IsAPIServiceConditionEquivalent`-style comparison: type, status, reason and
/// message.
fn same(a: &APIServiceCondition, b: &APIServiceCondition) -> bool {
    (&a.r#type, &a.status, &a.reason, &a.message) == (&b.r#type, &b.status, &b.reason, &b.message)
}

/// Writes `condition` into `service`'s status unless it already says so (a conflict or a
/// deletion meanwhile is left to the next pass).
async fn write_condition(
    registry: &Registry,
    service: &APIService,
    condition: APIServiceCondition,
) -> Result<(), ApiError> {
    if service.available().is_some_and(|c| same(c, &condition)) {
        return Ok(());
    }
    let mut updated = service.clone();
    updated.set_condition(condition);
    let Some(kind) = registry.scheme().by_kind(GROUP, KIND) else {
        return Ok(());
    };
    let body = typed_body(&updated)?;
    let name = service.metadata.name.as_deref().unwrap_or_default();
    let target = Target {
        kind: &kind,
        version: "v1",
        namespace: None,
    };
    match (registry)
        .update(target, name, body, Some(Subresource::Status), &writes())
        .await
    {
        Ok(_) | Err(ApiError::Conflict { .. } | ApiError::NotFound { .. }) => Ok(()),
        Err(error) => Err(error),
    }
}

fn typed_body(service: &APIService) -> Result<Value, ApiError> {
    let mut body = serde_json::to_value(service)
        .map_err(|e| ApiError::Internal(format!("encoding an APIService: {e}")))?;
    body["apiVersion"] = json!(format!("{GROUP}/v1"));
    body["kind"] = json!(KIND);
    Ok(body)
}

fn writes() -> WriteOptions {
    WriteOptions {
        field_manager: Some(MANAGER.into()),
        ..WriteOptions::default()
    }
}

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

/// Keeps the local APIServices: at start, and whenever the scheme changes.
async fn register_local(registry: Weak<Registry>) {
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
                }
                Err(error) => tracing::warn!(%error, "local APIServices: retrying"),
            }
        }
        drop(strong);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// One pass: creates the missing local APIServices, updates the managed ones whose spec
/// differs (`onstart` ones only at start), deletes those of definitions gone.
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
        if label.map(String::as_str) == Some("true") && !wanted.contains_key(name) {
            match registry.delete(target(), name, &Default::default()).await {
                Ok(_) | Err(ApiError::NotFound { .. } | ApiError::Conflict { .. }) => {}
                Err(error) => return Err(error),
            }
        }
    }
    Ok(())
}
