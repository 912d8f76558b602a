//! Services as kube-apiserver keeps them beyond storing them (kube's
//! `pkg/registry/core/service`): cluster IPs from `--service-cluster-ip-range` (one range,
//! or two of different families for dual-stack) and node ports from
//! `--service-node-port-range`, taken when a Service is written and given back when it
//! goes or no longer needs them (`hooks`, the registry's write hooks of `services`); the
//! repair pass that finds what a killed server left allocated (`repair`); and the
//! `default/kubernetes` Service with its endpoints (`kubernetes`).
//!
//! The bitmaps of the ranges live in storage ([`kapi_allocator`]), under kube's keys
//! (`<prefix>/ranges/serviceips`, `.../secondaryserviceips`, `.../servicenodeports`), so
//! every server on one store hands out from the same ones.

mod events;
mod hooks;
pub mod kubernetes;
mod repair;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use kapi_allocator::{IpAllocator, IpRange, PortAllocator, PortRange};
use kapi_core::net::cidr::Cidr;
use kapi_kinds::services::ClusterFamilies;
use kapi_registry::Registry;
use kapi_storage::Storage;

pub use repair::Repair;

/// What the server allocates Services' addresses and ports from.
#[derive(Clone, Debug)]
pub struct ServiceNetwork {
    /// The cluster IP ranges: the primary one, and for dual-stack one of the other family.
    pub cluster_ip_ranges: Vec<Cidr>,
    /// The node port range.
    pub node_ports: PortRange,
    /// How often the repair pass runs (kube's three minutes).
    pub repair_interval: Duration,
}

/// The allocators of one server, shared by its Service writes and its repair pass.
pub struct Allocators {
    ips: Vec<IpAllocator>,
    ports: PortAllocator,
}

impl Allocators {
    fn new(
        storage: &Arc<dyn Storage>,
        registry: &Registry,
        network: &ServiceNetwork,
    ) -> Allocators {
        let keys = ["ranges/serviceips", "ranges/secondaryserviceips"];
        let ips = (network.cluster_ip_ranges.iter().zip(keys))
            .map(|(cidr, key)| {
                IpAllocator::new(
                    Arc::clone(storage),
                    registry.raw_key(key),
                    IpRange::new(*cidr),
                )
            })
            .collect();
        let ports = PortAllocator::new(
            Arc::clone(storage),
            registry.raw_key("ranges/servicenodeports"),
            network.node_ports,
        );
        Allocators { ips, ports }
    }

    /// The cluster's families, the primary range's first.
    fn families(&self) -> ClusterFamilies {
        let family = |a: &IpAllocator| if a.range().is_ipv6() { "IPv6" } else { "IPv4" };
        ClusterFamilies {
            primary: self.ips.first().map_or("IPv4", family),
            secondary: self.ips.get(1).map(family),
        }
    }

    /// The allocator of `family` (`IPv4`, `IPv6`).
    fn of_family(&self, family: &str) -> Option<&IpAllocator> {
        (self.ips.iter()).find(|a| a.range().is_ipv6() == (family == "IPv6"))
    }

    /// The allocator whose family `ip` is of.
    fn of_ip(&self, ip: IpAddr) -> Option<&IpAllocator> {
        self.ips
            .iter()
            .find(|a| a.range().is_ipv6() == ip.is_ipv6())
    }

    /// The first address of the primary range: the `kubernetes` Service's.
    pub fn service_ip(&self) -> Option<IpAddr> {
        self.ips.first().map(|a| a.range().ip(0))
    }
}

/// Allocates Services' addresses and ports from `network` from now on (the registry's
/// write hooks of `services`), and returns the allocators; nothing when the scheme serves
/// no Services.
pub fn register(
    registry: &Registry,
    storage: &Arc<dyn Storage>,
    network: &ServiceNetwork,
) -> Option<Arc<Allocators>> {
    registry.scheme().by_resource("", "services")?;
    let allocators = Arc::new(Allocators::new(storage, registry, network));
    let hooks = hooks::ServiceHooks::new(Arc::clone(&allocators));
    registry.set_write_hooks("", "services", Arc::new(hooks));
    Some(allocators)
}
