//! The repair pass (kube's Service IP and node port repair controllers,
//! `ipallocator/controller` and `portallocator/controller`): the stored bitmaps rebuilt
//! from the Services that exist, at start and then periodically, so that what a killed
//! server took for a write it never stored goes back, and what a Service has but its
//! bitmap lacks (a range changed, a store restored) is marked taken again.
//!
//! As kube's, a value taken but used by no Service is first only flagged: a write may be
//! between taking it and storing its Service. It goes back on the third pass in a row
//! that finds it unused. Problems are Warning Events on the Service (a cluster IP out of
//! the range, one given to two Services, one not marked taken) and log lines.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use super::{Allocators, events};
use kapi_allocator::{Bitmap, Snapshot, Stored};
use kapi_core::error::ApiError;
use kapi_kinds::builtin::core::v1::Service;
use kapi_kinds::services::{is_headless, needs_cluster_ip};
use kapi_registry::{ListOptions, Registry, Target};

/// kube's `numRepairsBeforeLeakCleanup`.
const PASSES_BEFORE_LEAK_CLEANUP: u32 = 3;

/// How often a pass is tried again when another write changed a bitmap under it.
const ATTEMPTS: usize = 5;

const IP_CONTROLLER: &str = "ipallocator-repair-controller";
const PORT_CONTROLLER: &str = "portallocator-repair-controller";

/// What one pass found, for the log and the tests that read it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Values in use and marked taken.
    pub in_use: usize,
    /// Values in use that were not marked taken: marked again.
    pub not_allocated: usize,
    /// Values taken by no Service, flagged (kept until the third pass).
    pub flagged: usize,
    /// Values taken by no Service for three passes: given back.
    pub released: usize,
    /// Values a Service has that cannot be marked (out of the range, or another's).
    pub conflicts: usize,
}

impl std::ops::AddAssign for Found {
    fn add_assign(&mut self, other: Found) {
        self.in_use += other.in_use;
        self.not_allocated += other.not_allocated;
        self.flagged += other.flagged;
        self.released += other.released;
        self.conflicts += other.conflicts;
    }
}

/// The repair pass of one server's allocators, with its leak counts.
pub struct Repair {
    allocators: Arc<Allocators>,
    /// Per cluster IP range (by index), then the port range: flagged values and how many
    /// more passes they are kept.
    leaks: Mutex<HashMap<(usize, usize), u32>>,
}

/// One value a Service uses, with what to say about it.
struct Use<'a> {
    offset: Option<usize>,
    service: &'a Service,
    value: String,
}

impl Repair {
    /// The repair pass of `allocators`.
    pub fn new(allocators: Arc<Allocators>) -> Repair {
        Repair {
            allocators,
            leaks: Mutex::new(HashMap::new()),
        }
    }

    /// Runs passes every `interval` until the registry goes.
    pub fn start(
        self: Arc<Self>,
        registry: Weak<Registry>,
        interval: Duration,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(interval).await;
                let Some(registry) = registry.upgrade() else {
                    return;
                };
                if let Err(error) = self.run_once(&registry).await {
                    tracing::warn!(%error, "service allocation repair failed; retrying at the next pass");
                }
            }
        })
    }

    /// One pass over every range.
    pub async fn run_once(&self, registry: &Registry) -> Result<Found, String> {
        let mut found = Found::default();
        for index in 0..self.allocators.ips.len() {
            found += self.repair(registry, Some(index)).await?;
        }
        found += self.repair(registry, None).await?;
        if found != Found::default()
            && (found.not_allocated + found.flagged + found.released + found.conflicts) > 0
        {
            tracing::info!(?found, "service allocation repair");
        }
        Ok(found)
    }

    /// One range: the cluster IP range `index`, or the node port range.
    async fn repair(&self, registry: &Registry, index: Option<usize>) -> Result<Found, String> {
        for _ in 0..ATTEMPTS {
            let stored = self.stored(index);
            let snapshot = (stored.snapshot().await)
                .map_err(|e| format!("unable to refresh the allocations: {e}"))?;
            let services = services(registry)
                .await
                .map_err(|e| format!("unable to list services: {e}"))?;
            let (rebuilt, found) = self.rebuild(registry, index, &snapshot, &services).await;
            if rebuilt == snapshot.bitmap
                && snapshot.range == self.range(index)
                && snapshot.revision.is_some()
            {
                return Ok(found);
            }
            match stored.replace(&rebuilt, snapshot.revision).await {
                Ok(true) => return Ok(found),
                Ok(false) => continue,
                Err(e) => return Err(format!("unable to persist the updated allocations: {e}")),
            }
        }
        Err("the allocations kept changing during the repair".into())
    }

    fn stored(&self, index: Option<usize>) -> &Stored {
        match index {
            Some(i) => self.allocators.ips[i].stored(),
            None => self.allocators.ports.stored(),
        }
    }

    fn range(&self, index: Option<usize>) -> String {
        match index {
            Some(i) => self.allocators.ips[i].range().to_string(),
            None => self.allocators.ports.range().to_string(),
        }
    }

    /// The bitmap the Services make of the range, leaks kept until they expire, with
    /// Events on the Services whose values are wrong.
    async fn rebuild(
        &self,
        registry: &Registry,
        index: Option<usize>,
        snapshot: &Snapshot,
        services: &[Service],
    ) -> (Bitmap, Found) {
        let size = snapshot.bitmap.size();
        // A bitmap of another range says nothing of this one.
        let same_range = snapshot.range == self.range(index);
        let stored = if same_range {
            snapshot.bitmap.clone()
        } else {
            Bitmap::new(size)
        };
        let mut rebuilt = Bitmap::new(size);
        let mut found = Found::default();
        let mut uses = Vec::new();
        for service in services {
            match index {
                Some(i) => uses.extend(self.cluster_ips(registry, i, service).await),
                None => uses.extend(self.node_ports(service)),
            }
        }
        let key = |offset| (index.map_or(usize::MAX, |i| i), offset);
        for used in &uses {
            let (controller, action, subject) = match index {
                Some(i) => {
                    let family = if self.allocators.ips[i].range().is_ipv6() {
                        "IPv6"
                    } else {
                        "IPv4"
                    };
                    (
                        IP_CONTROLLER,
                        "ClusterIPAllocation",
                        format!("Cluster IP [{family}]:{}", used.value),
                    )
                }
                None => (
                    PORT_CONTROLLER,
                    "PortAllocation",
                    format!("Port {}", used.value),
                ),
            };
            let prefix = if index.is_some() { "ClusterIP" } else { "Port" };
            let Some(offset) = used.offset else {
                found.conflicts += 1;
                let note = match index {
                    Some(i) => format!(
                        "{subject} is not within the service CIDR {}; please recreate service",
                        self.allocators.ips[i].range()
                    ),
                    None => format!(
                        "{subject} is not within the port range {}; please recreate service",
                        self.allocators.ports.range()
                    ),
                };
                tracing::warn!(service = ?used.service.metadata.name, "{note}");
                events::warn(
                    registry,
                    controller,
                    used.service,
                    &format!("{prefix}OutOfRange"),
                    action,
                    &note,
                )
                .await;
                continue;
            };
            if !rebuilt.set(offset) {
                found.conflicts += 1;
                let note =
                    format!("{subject} was assigned to multiple services; please recreate service");
                tracing::warn!(service = ?used.service.metadata.name, "{note}");
                events::warn(
                    registry,
                    controller,
                    used.service,
                    &format!("{prefix}AlreadyAllocated"),
                    action,
                    &note,
                )
                .await;
                continue;
            }
            found.in_use += 1;
            self.leaks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&key(offset));
            if !stored.has(offset) {
                found.not_allocated += 1;
                let note = format!("{subject} is not allocated; repairing");
                tracing::warn!(service = ?used.service.metadata.name, "{note}");
                events::warn(
                    registry,
                    controller,
                    used.service,
                    &format!("{prefix}NotAllocated"),
                    action,
                    &note,
                )
                .await;
            }
        }
        let mut leaks = self.leaks.lock().unwrap_or_else(|e| e.into_inner());
        let unused: Vec<usize> = stored.taken().filter(|&o| !rebuilt.has(o)).collect();
        for offset in unused {
            let value = match index {
                Some(i) => self.allocators.ips[i].range().ip(offset).to_string(),
                None => self.allocators.ports.range().port(offset).to_string(),
            };
            let count = match leaks.get(&key(offset)) {
                None => {
                    tracing::warn!(
                        value,
                        "the allocated value may have leaked: flagging for later clean up"
                    );
                    PASSES_BEFORE_LEAK_CLEANUP - 1
                }
                Some(&count) => count,
            };
            if count > 0 {
                leaks.insert(key(offset), count - 1);
                rebuilt.set(offset);
                found.flagged += 1;
            } else {
                tracing::warn!(
                    value,
                    "the allocated value appears to have leaked: cleaning up"
                );
                leaks.remove(&key(offset));
                found.released += 1;
            }
        }
        (rebuilt, found)
    }

    /// The cluster IPs `service` has of range `index`'s family.
    async fn cluster_ips<'a>(
        &self,
        registry: &Registry,
        index: usize,
        service: &'a Service,
    ) -> Vec<Use<'a>> {
        let spec = &service.spec;
        if !needs_cluster_ip(spec) || is_headless(spec) || spec.cluster_ip.is_empty() {
            return Vec::new();
        }
        let allocator = &self.allocators.ips[index];
        let mut uses = Vec::new();
        let listed = match spec.cluster_ips.is_empty() {
            true => std::slice::from_ref(&spec.cluster_ip),
            false => spec.cluster_ips.as_slice(),
        };
        for ip in listed {
            let Ok(address) = ip.parse::<IpAddr>() else {
                if index == 0 {
                    let note =
                        format!("Cluster IP {ip} is not a valid IP; please recreate service");
                    events::warn(
                        registry,
                        IP_CONTROLLER,
                        service,
                        "ClusterIPNotValid",
                        "ClusterIPValidation",
                        &note,
                    )
                    .await;
                }
                continue;
            };
            if address.is_ipv6() != allocator.range().is_ipv6() {
                continue;
            }
            uses.push(Use {
                offset: allocator.range().offset(address),
                service,
                value: ip.clone(),
            });
        }
        uses
    }

    /// The node ports `service` has (each number once), with its health check port.
    fn node_ports<'a>(&self, service: &'a Service) -> Vec<Use<'a>> {
        let spec = &service.spec;
        let mut numbers: Vec<i32> = spec
            .ports
            .iter()
            .map(|p| p.node_port)
            .filter(|&p| p != 0)
            .collect();
        numbers.push(spec.health_check_node_port);
        let mut seen = Vec::new();
        numbers.retain(|&p| {
            p != 0 && !seen.contains(&p) && {
                seen.push(p);
                true
            }
        });
        let range = self.allocators.ports.range();
        (numbers.into_iter())
            .map(|port| Use {
                offset: range.offset(port),
                service,
                value: port.to_string(),
            })
            .collect()
    }
}

/// Every Service, decoded.
async fn services(registry: &Registry) -> Result<Vec<Service>, ApiError> {
    let Some(kind) = registry.scheme().by_resource("", "services") else {
        return Ok(Vec::new());
    };
    let target = Target {
        kind: &kind,
        version: "v1",
        namespace: None,
    };
    let list = registry.list(target, &ListOptions::default()).await?;
    Ok((list.items.iter())
        .filter_map(|item| serde_json::from_value(item.value()).ok())
        .collect())
}
