//! The controllers built into the server: what kube-controller-manager runs beside
//! kube-apiserver for the lifecycle of objects, so that one `kapi-server` behaves like an
//! API server with its controllers running.
//!
//! A controller is a client of the [`Registry`]: it reads and writes through the same
//! operations requests use, holds no state a restart would lose (it finds its work again
//! from what is stored), and is safe to run in every replica at once (its writes are
//! idempotent or conditional, and what it deletes it verifies with a live read): no leader
//! is elected. [`namespace`] empties a terminating namespace and lets it go; [`gc`], the
//! garbage collector, makes dependents follow their owners. Both are fed by the watch
//! caches' changes (`follow`), as kube's are by informers, and cost nothing while nothing
//! changes. The others pass over what they read every minute or second, which costs
//! little: [`event_ttl`] removes Events older than `--event-ttl`;
//! `cluster_role_aggregation` (feature `rbac`) keeps aggregated ClusterRoles' rules;
//! `resource_quota` counts what each ResourceQuota limits, every second; `root_ca`
//! publishes the cluster's CA in every namespace; `service_account_tokens` (feature
//! `builtin`) fills legacy token Secrets; the system namespaces are made again
//! each minute when missing;
//! [`client_trust`] publishes the client CA and front proxy for extension servers.
//! `policy_status` (feature `admission-webhooks`) type checks ValidatingAdmissionPolicies
//! into their status, every second for those whose generation moved;
//! `apiservices` (feature `aggregation`) keeps the aggregator's APIServices (registration,
//! local ones, availability); `crd` (feature `crds`) installs CustomResourceDefinitions.

#[cfg(feature = "aggregation")]
pub mod apiservices;
pub mod client_trust;
#[cfg(feature = "rbac")]
pub mod cluster_role_aggregation;
#[cfg(feature = "crds")]
pub mod crd;
pub mod event_ttl;
mod follow;
pub mod gc;
pub mod namespace;
#[cfg(feature = "admission-webhooks")]
pub(crate) mod policy_status;
pub(crate) mod resource_quota;
pub mod root_ca;
#[cfg(feature = "builtin")]
pub mod service_account_tokens;

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::health::{Health, Hook};
use kapi_core::error::ApiError;
use kapi_registry::Registry;

/// How kube-controller-manager's controllers write: as its field manager.
fn manager_writes() -> kapi_registry::WriteOptions {
    kapi_registry::WriteOptions {
        field_manager: Some("kube-controller-manager".into()),
        ..kapi_registry::WriteOptions::default()
    }
}

/// How often a controller passes again while it has work left.
const BUSY: Duration = Duration::from_millis(200);
/// How often it passes otherwise.
#[cfg(feature = "rbac")]
const IDLE: Duration = Duration::from_secs(1);

/// Runs controller `name`'s `pass` until the registry goes: again soon while a pass says
/// work is left (`true`) or fails (logged), otherwise after `idle`. Each pass holds the
/// registry only while it runs; `started`, its post-start hook, is done after the first
/// pass that succeeds.
async fn run_passes(
    registry: Weak<Registry>,
    name: &'static str,
    idle: Duration,
    started: Option<Arc<Hook>>,
    pass: impl AsyncFn(&Registry) -> Result<bool, ApiError>,
) {
    loop {
        let Some(strong) = registry.upgrade() else {
            return;
        };
        let busy = match pass(&strong).await {
            Ok(busy) => {
                // Its health check passes from its first pass that did its work.
                if let Some(started) = &started {
                    started.done();
                }
                busy
            }
            Err(error) => {
                tracing::warn!(%error, controller = name, "controller pass failed");
                true
            }
        };
        drop(strong);
        tokio::time::sleep(if busy { BUSY } else { idle }).await;
    }
}

/// When work that failed, or is not finished, is looked at again: after a pause that
/// doubles each time, up to a bound.
#[derive(Clone, Copy, Debug)]
struct Retry {
    /// When.
    due: tokio::time::Instant,
    /// The pause after the next try.
    pause: Duration,
}

impl Retry {
    /// Due now; the pause after the first try is `first`.
    fn now(first: Duration) -> Retry {
        Retry {
            due: tokio::time::Instant::now(),
            pause: first,
        }
    }

    /// Due after the current pause, which then doubles up to `max`.
    fn again(&mut self, max: Duration) {
        self.due = tokio::time::Instant::now() + self.pause;
        self.pause = (self.pause * 2).min(max);
    }
}

/// What the controllers are configured with.
#[derive(Clone)]
pub struct ControllerOptions {
    /// How long an Event lives after its last write (`--event-ttl`).
    pub event_ttl: Duration,
    /// The aggregator whose APIServices `apiservices` keeps (none: not run).
    pub aggregator: crate::filters::Aggregation,
    /// What [`client_trust`] publishes for extension API servers (none: not run).
    pub published_trust: Option<client_trust::Published>,
    /// The server's health checks: each controller registers its kube counterpart's
    /// post-start hooks and reports them done.
    pub health: Arc<Health>,
    /// The classifier of API Priority and Fairness, whose configuration the APF
    /// controllers keep (none: not run).
    pub flow_control: Option<Arc<crate::flowcontrol::FlowControl>>,
    /// The CA bundle (PEM) [`root_ca`] publishes in every namespace (none: not run).
    pub root_ca: Option<String>,
    /// The service-account tokens `service_account_tokens` writes into token Secrets
    /// (none: not run).
    #[cfg(feature = "builtin")]
    pub service_account_tokens: Option<Arc<crate::serviceaccount::Tokens>>,
}

impl Default for ControllerOptions {
    fn default() -> ControllerOptions {
        ControllerOptions {
            event_ttl: event_ttl::DEFAULT_EVENT_TTL,
            aggregator: None,
            published_trust: None,
            health: Arc::default(),
            flow_control: None,
            root_ca: None,
            #[cfg(feature = "builtin")]
            service_account_tokens: None,
        }
    }
}

/// The running controllers.
pub struct Controllers {
    tasks: Vec<JoinHandle<()>>,
}

impl Controllers {
    /// Starts every controller on the current runtime. They hold the registry weakly: they
    /// end when it goes.
    pub fn start(registry: Weak<Registry>, options: ControllerOptions) -> Controllers {
        let ttl = options.event_ttl;
        let health = &options.health;
        #[cfg(any(feature = "aggregation", feature = "crds", feature = "rbac"))]
        let serves = |group: &str, kind: &str| {
            (registry.upgrade()).is_some_and(|r| r.scheme().by_kind(group, kind).is_some())
        };
        // The watch caches the controllers follow run from the registry's start.
        health
            .post_start_hook("generic-apiserver-start-informers")
            .done();
        let mut tasks = Vec::new();
        #[cfg(feature = "aggregation")]
        if let Some(aggregator) = (options.aggregator)
            .filter(|_| serves(kapi_kinds::apiregistration::GROUP, "APIService"))
        {
            let hooks = apiservices::Hooks::register(health);
            tasks.push(tokio::spawn(apiservices::run(
                registry.clone(),
                aggregator,
                hooks,
            )));
        }
        // kube always runs this controller; with no client CA or front proxy configured
        // kapi has nothing to publish, and its hook reports started at once.
        let started = health.post_start_hook("start-cluster-authentication-info-controller");
        if options.published_trust.is_none() {
            started.done();
        }
        if let Some(data) = options.published_trust {
            tasks.push(tokio::spawn(run_passes(
                registry.clone(),
                "cluster authentication trust",
                Duration::from_secs(60),
                Some(started),
                async move |registry: &Registry| client_trust::sync(registry, &data).await,
            )));
        }
        #[cfg(feature = "crds")]
        if serves(kapi_kinds::apiextensions::GROUP, "CustomResourceDefinition") {
            let hooks = crd::Hooks::register(health);
            tasks.push(tokio::spawn(crd::run(registry.clone(), hooks)));
        }
        #[cfg(feature = "rbac")]
        if serves(kapi_kinds::rbac::GROUP, "ClusterRole") {
            tasks.push(tokio::spawn(run_passes(
                registry.clone(),
                "clusterrole aggregation",
                IDLE,
                None,
                cluster_role_aggregation::sync,
            )));
        }
        #[cfg(feature = "builtin")]
        if let Some(tokens) = options.service_account_tokens {
            let controller = Arc::new(service_account_tokens::TokensController::new(
                tokens,
                options.root_ca.clone(),
            ));
            tasks.push(tokio::spawn(run_passes(
                registry.clone(),
                "service-account tokens",
                Duration::from_millis(200),
                None,
                async move |registry: &Registry| controller.sync(registry).await,
            )));
        }
        if let Some(bundle) = options.root_ca {
            let publisher = Arc::new(root_ca::Publisher::new(bundle));
            tasks.push(tokio::spawn(run_passes(
                registry.clone(),
                "root CA publisher",
                Duration::from_millis(200),
                None,
                async move |registry: &Registry| publisher.sync(registry).await,
            )));
        }
        let started = health.post_start_hook("start-system-namespaces-controller");
        tasks.push(tokio::spawn(run_passes(
            registry.clone(),
            "system namespaces",
            Duration::from_secs(60),
            Some(started),
            async move |registry: &Registry| {
                registry.ensure_system_namespaces().await.map(|()| false)
            },
        )));
        if let Some(flow) = options.flow_control {
            tasks.push(tokio::spawn(run_passes(
                registry.clone(),
                "priority and fairness config producer",
                Duration::from_secs(60),
                None,
                async move |registry: &Registry| {
                    crate::flowcontrol::bootstrap::ensure(registry)
                        .await
                        .map(|()| false)
                },
            )));
            tasks.push(tokio::spawn(run_passes(
                registry.clone(),
                "priority and fairness config consumer",
                Duration::from_millis(200),
                None,
                async move |registry: &Registry| flow.sync(registry).await,
            )));
        }
        #[cfg(feature = "admission-webhooks")]
        tasks.push(tokio::spawn(run_passes(
            registry.clone(),
            "validating admission policy status",
            Duration::from_secs(1),
            None,
            policy_status::sync,
        )));
        tasks.extend([
            tokio::spawn(run_passes(
                registry.clone(),
                "resource quota",
                Duration::from_secs(1),
                None,
                resource_quota::sync,
            )),
            tokio::spawn(namespace::run(registry.clone())),
            tokio::spawn(gc::run(registry.clone())),
            tokio::spawn(run_passes(
                registry,
                "event expiry",
                event_ttl::period(ttl),
                None,
                async move |registry: &Registry| event_ttl::expire(registry, ttl).await,
            )),
        ]);
        Controllers { tasks }
    }

    /// Stops them.
    pub async fn stop(self) {
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks {
            let _ = task.await;
        }
    }
}
