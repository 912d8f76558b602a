//! The `default/kubernetes` Service and its endpoints (kube's kubernetesservice
//! controller and lease endpoint reconciler, `pkg/controlplane`): every server makes the
//! Service when it is missing (the primary range's first address, port `https` 443 to
//! the server's port), keeps a lease on its own address in storage, and writes the
//! `default/kubernetes` Endpoints and EndpointSlice naming the address of every server
//! whose lease is live, every ten seconds. A server stopping gives its lease up and takes
//! its address out; a killed one's goes when its lease expires (fifteen seconds).
//!
//! kube's leases are etcd leases; kapi's stores have none, so a lease here is a key under
//! `<prefix>/masterleases/` whose value says until when it holds (servers sharing a store
//! are assumed to agree on the time, as kube's Leases assume).

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use serde_json::{Value, json};

use kapi_core::error::ApiError;
use kapi_core::meta::DeleteOptions;
use kapi_registry::{Registry, Target, WriteOptions};
use kapi_storage::{ListRequest, Storage};

/// kube's `DefaultEndpointReconcilerInterval`.
const INTERVAL: Duration = Duration::from_secs(10);
/// kube's `DefaultEndpointReconcilerTTL`.
const TTL: Duration = Duration::from_secs(15);
/// The field manager of what the controller writes.
const MANAGER: &str = "kube-apiserver";

/// What the controller keeps, for one server.
pub struct KubernetesService {
    registry: Weak<Registry>,
    storage: Arc<dyn Storage>,
    /// `<prefix>/masterleases/`.
    leases: String,
    service_ip: IpAddr,
    /// The server's port (the Service's target port and the endpoints' port).
    port: u16,
    node_port: u16,
    /// This server's address in the endpoints; none: the endpoints are not kept.
    address: Option<IpAddr>,
}

impl KubernetesService {
    /// The controller of a server listening on `port`, whose Service has `service_ip`;
    /// `address` is what its endpoints name for it (none: no endpoints are kept).
    pub fn new(
        registry: &Arc<Registry>,
        storage: Arc<dyn Storage>,
        service_ip: IpAddr,
        port: u16,
        node_port: u16,
        address: Option<IpAddr>,
    ) -> KubernetesService {
        KubernetesService {
            leases: registry.raw_key("masterleases/"),
            registry: Arc::downgrade(registry),
            storage,
            service_ip,
            port,
            node_port,
            address,
        }
    }

    /// Runs the controller every ten seconds until the registry goes (the server's start
    /// ran [`KubernetesService::sync`] once already).
    pub fn start(self: Arc<Self>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(INTERVAL).await;
                let Some(registry) = self.registry.upgrade() else {
                    return;
                };
                if let Err(error) = self.sync(&registry).await {
                    tracing::warn!(%error, "unable to sync kubernetes service");
                }
            }
        })
    }

    /// One round: the Service made if missing, this server's lease renewed, the endpoints
    /// written from the live leases.
    pub async fn sync(&self, registry: &Registry) -> Result<(), ApiError> {
        self.ensure_service(registry).await?;
        let Some(address) = self.address else {
            return Ok(());
        };
        self.renew(address).await?;
        self.reconcile(registry, false).await
    }

    /// At shutdown: this server's lease given up and its address taken out of the
    /// endpoints (the last server leaves them empty).
    pub async fn stop(&self) {
        let (Some(address), Some(registry)) = (self.address, self.registry.upgrade()) else {
            return;
        };
        let key = format!("{}{address}", self.leases);
        if let Err(error) = self.storage.delete(&key, None).await {
            tracing::warn!(%error, "cannot give up the kubernetes service lease");
        }
        if let Err(error) = self.reconcile(&registry, true).await {
            tracing::warn!(%error, "cannot remove this server from the kubernetes service's endpoints");
        }
    }

    async fn ensure_service(&self, registry: &Registry) -> Result<(), ApiError> {
        let Some(services) = registry.scheme().by_resource("", "services") else {
            return Ok(());
        };
        let target = target(&services);
        match registry.get(target, "kubernetes", None).await {
            Ok(_) => return Ok(()),
            Err(ApiError::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
        let mut port =
            json!({"name": "https", "protocol": "TCP", "port": 443, "targetPort": self.port});
        if self.node_port != 0 {
            port["nodePort"] = json!(self.node_port);
        }
        let service = json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "kubernetes",
                "namespace": "default",
                "labels": {"component": "apiserver", "provider": "kubernetes"},
            },
            "spec": {
                "ports": [port],
                "clusterIP": self.service_ip.to_string(),
                "sessionAffinity": "None",
                "type": if self.node_port != 0 { "NodePort" } else { "ClusterIP" },
                "ipFamilyPolicy": "SingleStack",
            },
        });
        match registry.create(target, service, &manager()).await {
            Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// This server's lease, holding for another fifteen seconds.
    async fn renew(&self, address: IpAddr) -> Result<(), ApiError> {
        let key = format!("{}{address}", self.leases);
        let until = now_millis() + TTL.as_millis() as u64;
        let value = Bytes::from(
            json!({"ip": address.to_string(), "port": self.port, "holdUntil": until}).to_string(),
        );
        let storage_error =
            |e: kapi_storage::Error| ApiError::Internal(format!("renewing the lease {key}: {e}"));
        for _ in 0..3 {
            let written = match self.storage.get(&key, 0).await.map_err(storage_error)? {
                Some(kv) => {
                    self.storage
                        .update(&key, value.clone(), kv.mod_revision)
                        .await
                }
                None => self.storage.create(&key, value.clone()).await,
            };
            match written {
                Ok(_) => return Ok(()),
                Err(
                    kapi_storage::Error::Conflict { .. }
                    | kapi_storage::Error::AlreadyExists { .. },
                ) => {}
                Err(e) => return Err(storage_error(e)),
            }
        }
        Ok(())
    }

    /// The addresses of the live leases; expired ones are deleted.
    async fn live_addresses(&self) -> Result<BTreeSet<IpAddr>, ApiError> {
        let listed = (self
            .storage
            .list(ListRequest::prefix(self.leases.clone()))
            .await)
            .map_err(|e| {
                ApiError::Internal(format!("listing the kubernetes service leases: {e}"))
            })?;
        let now = now_millis();
        let mut live = BTreeSet::new();
        for kv in listed.items {
            let lease: Value = serde_json::from_slice(&kv.value).unwrap_or_default();
            let ip = lease
                .get("ip")
                .and_then(Value::as_str)
                .and_then(|ip| ip.parse::<IpAddr>().ok());
            let until = lease.get("holdUntil").and_then(Value::as_u64).unwrap_or(0);
            match ip {
                Some(ip) if until > now => {
                    live.insert(ip);
                }
                _ => {
                    let _ = self.storage.delete(&kv.key, Some(kv.mod_revision)).await;
                }
            }
        }
        Ok(live)
    }

    /// The Endpoints and EndpointSlice from the live leases (kube's `doReconcile` and
    /// `EnsureEndpointSliceFromEndpoints`); `stopping`: this server is going, and may
    /// leave them empty.
    async fn reconcile(&self, registry: &Registry, stopping: bool) -> Result<(), ApiError> {
        let addresses = self.live_addresses().await?;
        if addresses.is_empty() && !stopping {
            return Err(ApiError::Internal(
                "no API server IP addresses were listed in storage, refusing to erase all endpoints for the kubernetes Service".into(),
            ));
        }
        let Some(kind) = registry.scheme().by_resource("", "endpoints") else {
            return Ok(());
        };
        let ports = json!([{"name": "https", "port": self.port, "protocol": "TCP"}]);
        let subsets = match addresses.is_empty() {
            true => json!([]),
            false => {
                let listed: Vec<Value> = addresses
                    .iter()
                    .map(|ip| json!({"ip": ip.to_string()}))
                    .collect();
                json!([{"addresses": listed, "ports": ports}])
            }
        };
        let target = target(&kind);
        let current = match registry.get(target, "kubernetes", None).await {
            Ok(current) => Some(current),
            Err(ApiError::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        let skip_mirror = "endpointslice.kubernetes.io/skip-mirror";
        let up_to_date = current.as_ref().is_some_and(|current| {
            let labelled = current
                .pointer("/metadata/labels")
                .and_then(|l| l.get(skip_mirror))
                == Some(&json!("true"));
            let same = same_addresses(current, &addresses);
            labelled && same
        });
        if !up_to_date {
            tracing::info!(
                ?addresses,
                "Resetting endpoints for master service \"kubernetes\""
            );
            let mut endpoints = current.unwrap_or_else(|| {
                json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "kubernetes", "namespace": "default"}})
            });
            endpoints["metadata"]["labels"][skip_mirror] = json!("true");
            endpoints["subsets"] = subsets;
            let options = manager();
            match endpoints.pointer("/metadata/resourceVersion").is_some() {
                true => {
                    registry
                        .update(target, "kubernetes", endpoints, None, &options)
                        .await?
                }
                false => registry.create(target, endpoints, &options).await?,
            };
        }
        self.ensure_slice(registry, &addresses, ports).await
    }

    /// The EndpointSlice of the Endpoints.
    async fn ensure_slice(
        &self,
        registry: &Registry,
        addresses: &BTreeSet<IpAddr>,
        ports: Value,
    ) -> Result<(), ApiError> {
        let Some(kind) = registry
            .scheme()
            .by_resource("discovery.k8s.io", "endpointslices")
        else {
            return Ok(());
        };
        let target = target(&kind);
        let address_type = match !addresses.is_empty() && addresses.iter().all(IpAddr::is_ipv6) {
            true => "IPv6",
            false => "IPv4",
        };
        let endpoints: Vec<Value> = (addresses.iter())
            .filter(|ip| ip.is_ipv6() == (address_type == "IPv6"))
            .map(|ip| json!({"addresses": [ip.to_string()], "conditions": {"ready": true}}))
            .collect();
        let labels = json!({"kubernetes.io/service-name": "kubernetes"});
        let current = match registry.get(target, "kubernetes", None).await {
            Ok(current) => Some(current),
            Err(ApiError::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        let wanted = json!({
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": "kubernetes", "namespace": "default", "labels": labels},
            "addressType": address_type,
            "endpoints": endpoints,
            "ports": ports,
        });
        let options = manager();
        let Some(mut current) = current else {
            return match registry.create(target, wanted, &options).await {
                Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
                Err(e) => Err(e),
            };
        };
        if current.get("addressType") != Some(&json!(address_type)) {
            registry
                .delete(target, "kubernetes", &DeleteOptions::default())
                .await?;
            registry.create(target, wanted, &options).await?;
            return Ok(());
        }
        let same = current.get("endpoints").unwrap_or(&json!([])) == &wanted["endpoints"]
            && current.get("ports") == Some(&wanted["ports"])
            && current.pointer("/metadata/labels") == Some(&wanted["metadata"]["labels"]);
        if !same {
            current["endpoints"] = wanted["endpoints"].clone();
            current["ports"] = wanted["ports"].clone();
            current["metadata"]["labels"] = wanted["metadata"]["labels"].clone();
            registry
                .update(target, "kubernetes", current, None, &options)
                .await?;
        }
        Ok(())
    }
}

/// Whether `endpoints` has one subset naming exactly `addresses`.
fn same_addresses(endpoints: &Value, addresses: &BTreeSet<IpAddr>) -> bool {
    let subsets = endpoints
        .get("subsets")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if addresses.is_empty() {
        return subsets.is_empty();
    }
    let [subset] = subsets.as_slice() else {
        return false;
    };
    let listed: BTreeSet<IpAddr> = (subset
        .get("addresses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(|a| a.get("ip")?.as_str()?.parse().ok())
    .collect();
    &listed == addresses
}

fn target(kind: &kapi_core::scheme::KindEntry) -> Target<'_> {
    Target {
        kind,
        version: kind.info.storage_version().name,
        namespace: Some("default"),
    }
}

fn manager() -> WriteOptions {
    WriteOptions {
        field_manager: Some(MANAGER.into()),
        ..WriteOptions::default()
    }
}

fn now_millis() -> u64 {
    (SystemTime::now().duration_since(UNIX_EPOCH)).map_or(0, |d| d.as_millis() as u64)
}

/// The address the endpoints name for a server listening on `listening`: `advertised`
/// when given, else the listening address unless it is loopback or every address, else
/// the address the host reaches its default route from (as kube resolves its bind
/// address); none when there is no such route.
pub fn advertise_address(advertised: Option<IpAddr>, listening: SocketAddr) -> Option<IpAddr> {
    if advertised.is_some() {
        return advertised;
    }
    let ip = listening.ip();
    if !ip.is_loopback() && !ip.is_unspecified() {
        return Some(ip);
    }
    // Connecting a datagram socket sends nothing; it only picks the route's source.
    let routed = |bind: &str, to: &str| {
        let socket = UdpSocket::bind(bind).ok()?;
        socket.connect(to).ok()?;
        let ip = socket.local_addr().ok()?.ip();
        (!ip.is_unspecified() && !ip.is_loopback()).then_some(ip)
    };
    routed("0.0.0.0:0", "203.0.113.1:9").or_else(|| routed("[::]:0", "[2001:db8::1]:9"))
}
