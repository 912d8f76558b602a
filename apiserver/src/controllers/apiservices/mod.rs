//! The APIService controllers of the aggregator (`crate::aggregator`), kube-aggregator's
//! and kube-apiserver's:
//!
//! - **registration** (here): follows the APIServices' watch cache into the aggregator,
//!   which routes by them ([`load_now`] fills it before the server serves);
//! - **local APIServices** ([`local`], kube's autoregister and CRD registration
//!   controllers): every group-version this server serves has an APIService without a
//!   service;
//! - **availability** ([`availability`], kube's `AvailableConditionController`): each
//!   remote APIService's server is checked and `status.conditions[Available]` says what
//!   was found; its documents are fetched for the merged discovery and OpenAPI.

mod availability;
pub mod local;

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use local::register_local_now;

use super::follow::{follow, slot, take};
use crate::aggregator::Aggregator;
use crate::health::{Health, Hook};
use kapi_core::error::ApiError;
use kapi_kinds::apiregistration::{APIService, GROUP};
use kapi_registry::{ListOptions, Registry, Target, WriteOptions};

/// kube's label of the APIServices its controllers keep.
pub const MANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";
const KIND: &str = "APIService";
const MANAGER: &str = "kube-aggregator";

/// Tasks aborted when dropped: the controller's parts end with it.
struct Tasks(Vec<JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// The health checks of the controllers' kube counterparts, which they report done:
/// kube-aggregator's informers (the first list routed), registration, availability and
/// OpenAPI controllers; kube-apiserver's autoregistration and its completion (the local
/// APIServices were all made).
pub struct Hooks {
    informers: Arc<Hook>,
    registration: Arc<Hook>,
    available: Arc<Hook>,
    autoregistration: Arc<Hook>,
    completion: Arc<Hook>,
    openapi: Arc<Hook>,
}

impl Hooks {
    /// Registers them in `health`.
    pub fn register(health: &Health) -> Hooks {
        Hooks {
            informers: health.post_start_hook("start-kube-aggregator-informers"),
            registration: health.post_start_hook("apiservice-registration-controller"),
            available: health.post_start_hook("apiservice-status-available-controller"),
            autoregistration: health.post_start_hook("kube-apiserver-autoregistration"),
            completion: health.hook_check("autoregister-completion"),
            openapi: health.post_start_hook("apiservice-openapi-controller"),
        }
    }
}

/// Runs the three controllers until the registry goes (or this task is aborted).
pub async fn run(registry: Weak<Registry>, aggregator: Arc<Aggregator>, hooks: Hooks) {
    let Some(slot) = slot(&registry, GROUP, KIND) else {
        return;
    };
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let _tasks = Tasks(vec![
        tokio::spawn(follow(registry.clone(), slot, sender, "apiservices")),
        tokio::spawn(availability::run(registry.clone(), Arc::clone(&aggregator))),
        tokio::spawn(local::run(registry.clone(), hooks.completion)),
    ]);
    // The availability controller fetches the remote servers' documents as well.
    for started in [
        &hooks.registration,
        &hooks.available,
        &hooks.autoregistration,
        &hooks.openapi,
    ] {
        started.done();
    }
    let informers = hooks.informers;
    let mut services: BTreeMap<String, APIService> = BTreeMap::new();
    while let Some(followed) = receiver.recv().await {
        let listed = matches!(followed, super::follow::Followed::Listed { .. });
        take(&mut services, followed, |s| &mut s.metadata);
        if listed {
            informers.done();
        }
        while let Ok(followed) = receiver.try_recv() {
            take(&mut services, followed, |s| &mut s.metadata);
        }
        for name in aggregator.set(services.values().cloned().collect()) {
            aggregator.recheck(&name);
        }
    }
}

/// Reads the APIServices into the aggregator now (before the server serves, so that the
/// remote groups are routed from the first request, as kube waits for its registration
/// controller before it is ready).
pub async fn load_now(registry: &Registry, aggregator: &Aggregator) -> Result<(), ApiError> {
    let Some(kind) = registry.scheme().by_kind(GROUP, KIND) else {
        return Ok(());
    };
    let target = Target {
        kind: &kind,
        version: "v1",
        namespace: None,
    };
    let listed = registry.list(target, &ListOptions::default()).await?;
    let services = (listed.items.iter())
        .filter_map(|item| serde_json::from_value(item.value()).ok())
        .collect();
    for name in aggregator.set(services) {
        aggregator.recheck(&name);
    }
    Ok(())
}

/// `service` as a request body.
fn typed_body(service: &APIService) -> Result<Value, ApiError> {
    let mut body = serde_json::to_value(service)
        .map_err(|e| ApiError::Internal(format!("encoding an APIService: {e}")))?;
    body["apiVersion"] = json!(format!("{GROUP}/v1"));
    body["kind"] = json!(KIND);
    Ok(body)
}

/// The controllers' writes: their field manager's.
fn writes() -> WriteOptions {
    WriteOptions {
        field_manager: Some(MANAGER.into()),
        ..WriteOptions::default()
    }
}
