//! The controllers built into the server: what kube-controller-manager runs beside
//! kube-apiserver for the lifecycle of objects, so that one `kapi-server` behaves like an
//! API server with its controllers running.
//!
//! A controller is a client of the [`Registry`]: it reads and writes through the same
//! operations requests use, holds no state a restart would lose (it finds its work again
//! from what is stored), and is safe to run in every replica at once (its writes are
//! idempotent or conditional, and what it deletes it verifies with a live read): no leader
//! is elected. [`namespace`] empties a terminating namespace and lets it go; [`gc`], the
//! garbage collector, makes dependents follow their owners.

pub mod gc;
pub mod namespace;

use std::sync::Weak;

use tokio::task::JoinHandle;

use crate::registry::Registry;

/// The running controllers.
pub struct Controllers {
    tasks: Vec<JoinHandle<()>>,
}

impl Controllers {
    /// Starts every controller on the current runtime. They hold the registry weakly: they
    /// end when it goes.
    pub fn start(registry: Weak<Registry>) -> Controllers {
        Controllers {
            tasks: vec![
                tokio::spawn(namespace::run(registry.clone())),
                tokio::spawn(gc::run(registry)),
            ],
        }
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
