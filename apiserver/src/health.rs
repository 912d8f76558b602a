//! The server's named health checks, as kube-apiserver reports them on `/healthz`,
//! `/livez` and `/readyz` (`endpoints::health` serves them).
//!
//! A check is one of two things, as in k8s.io/apiserver's `healthz` package:
//!
//! - a **live** check, run on each request: `etcd` (the store answers), `informer-sync`
//!   (every watch cache has its first list), `shutdown` (the server is not draining);
//! - a **post-start hook** (`poststarthook/<name>`): a part of the server that finishes
//!   starting after the listener opens (the CRD controller's first list installed, the
//!   bootstrap RBAC roles reconciled, the local APIServices registered) reports itself
//!   done with [`Hook::done`]; until then the check fails with `not finished`.
//!
//! Each part of the server registers the checks of what it starts, under kube's name for
//! its kube counterpart, so a server lists exactly the checks of what it runs. They are
//! reported in kube-apiserver's order ([`ORDER`]), whoever registered them first; names
//! kube does not have come after kube's, before `shutdown`. `informer-sync` and `shutdown`
//! are `/readyz`'s only, as kube's.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// A live check's future: `Err` carries the reason, for the log and the check's own path.
pub type CheckFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// A live check.
pub type LiveCheck = Arc<dyn Fn() -> CheckFuture + Send + Sync>;

/// kube-apiserver 1.20's checks in the order it reports them (the outermost server, the
/// aggregator, lists its delegates' after its own ping, log and etcd; `shutdown` last).
pub const ORDER: &[&str] = &[
    "ping",
    "log",
    "etcd",
    "informer-sync",
    "poststarthook/start-kube-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/max-in-flight-filter",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/bootstrap-controller",
    // kube 1.32's (1.20's repair ran inside its bootstrap controller).
    "poststarthook/start-service-ip-repair-controllers",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/priority-and-fairness-config-producer",
    "poststarthook/start-cluster-authentication-info-controller",
    "poststarthook/start-kube-aggregator-informers",
    "poststarthook/apiservice-registration-controller",
    "poststarthook/apiservice-status-available-controller",
    "poststarthook/kube-apiserver-autoregistration",
    "autoregister-completion",
    "poststarthook/apiservice-openapi-controller",
    "shutdown",
];

/// Which endpoints report a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `/healthz`, `/livez` and `/readyz`.
    All,
    /// `/readyz` only (`informer-sync`, `shutdown`).
    Ready,
}

/// A part of the server that reports itself started: the probe of a post-start hook.
#[derive(Debug, Default)]
pub struct Hook {
    done: AtomicBool,
}

impl Hook {
    /// Started: the hook's check passes from now on.
    pub fn done(&self) {
        self.done.store(true, Ordering::SeqCst);
    }

    /// Whether [`Hook::done`] was called.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }
}

#[derive(Clone)]
enum Probe {
    Hook(Arc<Hook>),
    Live(LiveCheck),
}

/// One registered check.
#[derive(Clone)]
pub struct Check {
    name: String,
    scope: Scope,
    probe: Probe,
}

impl Check {
    /// Its name (`etcd`, `poststarthook/bootstrap-controller`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs it.
    pub async fn run(&self) -> Result<(), String> {
        match &self.probe {
            Probe::Hook(hook) if hook.is_done() => Ok(()),
            Probe::Hook(_) => Err("not finished".into()),
            Probe::Live(check) => check().await,
        }
    }
}

/// The server's checks.
pub struct Health {
    checks: RwLock<Vec<Check>>,
}

impl Default for Health {
    fn default() -> Health {
        Health::new()
    }
}

impl Health {
    /// `ping` and `log`, which every server has: it answers, and its log takes lines
    /// (written as they come: there is nothing to flush, which kube's `log` check waits
    /// for).
    pub fn new() -> Health {
        let health = Health {
            checks: RwLock::default(),
        };
        for name in ["ping", "log"] {
            health.live(name, Scope::All, || Box::pin(async { Ok(()) }));
        }
        health
    }

    /// Registers live check `name` (replacing one of that name).
    pub fn live(
        &self,
        name: &str,
        scope: Scope,
        check: impl Fn() -> CheckFuture + Send + Sync + 'static,
    ) {
        self.add(Check {
            name: name.to_owned(),
            scope,
            probe: Probe::Live(Arc::new(check)),
        });
    }

    /// Registers post-start hook `name`, reported as `poststarthook/<name>`, failing until
    /// the returned hook is [`done`](Hook::done).
    pub fn post_start_hook(&self, name: &str) -> Arc<Hook> {
        self.hook_check(&format!("poststarthook/{name}"))
    }

    /// Registers check `name` (as it is named), passing once the returned hook is done:
    /// kube's boot-sequence checks (`autoregister-completion`).
    pub fn hook_check(&self, name: &str) -> Arc<Hook> {
        let hook = Arc::new(Hook::default());
        self.add(Check {
            name: name.to_owned(),
            scope: Scope::All,
            probe: Probe::Hook(Arc::clone(&hook)),
        });
        hook
    }

    fn add(&self, check: Check) {
        let mut checks = self.checks.write().unwrap_or_else(|e| e.into_inner());
        checks.retain(|c| c.name != check.name);
        let rank = |name: &str| {
            // kube's names in kube's order; others after them, `shutdown` last.
            match ORDER.iter().position(|n| *n == name) {
                Some(at) if name == "shutdown" => (2, at),
                Some(at) => (0, at),
                None => (1, 0),
            }
        };
        let at = checks
            .iter()
            .position(|c| rank(&c.name) > rank(&check.name))
            .unwrap_or(checks.len());
        checks.insert(at, check);
    }

    /// The checks `endpoint` (`healthz`, `livez`, `readyz`) reports, in order.
    pub fn checks(&self, endpoint: &str) -> Vec<Check> {
        let checks = self.checks.read().unwrap_or_else(|e| e.into_inner());
        (checks.iter())
            .filter(|c| c.scope == Scope::All || endpoint == "readyz")
            .cloned()
            .collect()
    }

    /// Check `name` of `endpoint`, when it reports one.
    pub fn check(&self, endpoint: &str, name: &str) -> Option<Check> {
        (self.checks(endpoint).into_iter()).find(|c| c.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(health: &Health, endpoint: &str) -> Vec<String> {
        (health.checks(endpoint).iter())
            .map(|c| c.name().to_owned())
            .collect()
    }

    #[test]
    fn checks_come_in_kubes_order_whoever_registered_them_first() {
        let health = Health::new();
        health.live("shutdown", Scope::Ready, || Box::pin(async { Ok(()) }));
        health.post_start_hook("rbac/bootstrap-roles");
        health.live("mine", Scope::All, || Box::pin(async { Ok(()) }));
        health.live("etcd", Scope::All, || Box::pin(async { Ok(()) }));
        health.post_start_hook("bootstrap-controller");
        health.live("informer-sync", Scope::Ready, || Box::pin(async { Ok(()) }));
        let all = [
            "ping",
            "log",
            "etcd",
            "poststarthook/bootstrap-controller",
            "poststarthook/rbac/bootstrap-roles",
            "mine",
        ];
        assert_eq!(names(&health, "healthz"), all);
        assert_eq!(names(&health, "livez"), all);
        assert_eq!(
            names(&health, "readyz"),
            [
                "ping",
                "log",
                "etcd",
                "informer-sync",
                "poststarthook/bootstrap-controller",
                "poststarthook/rbac/bootstrap-roles",
                "mine",
                "shutdown",
            ]
        );
    }

    #[tokio::test]
    async fn a_hook_fails_until_done() {
        let health = Health::new();
        let hook = health.post_start_hook("crd-informer-synced");
        let check = health
            .check("livez", "poststarthook/crd-informer-synced")
            .unwrap();
        assert_eq!(check.run().await, Err("not finished".into()));
        hook.done();
        assert_eq!(check.run().await, Ok(()));
        assert!(health.check("livez", "informer-sync").is_none());
    }
}
