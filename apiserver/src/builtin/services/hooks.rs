//! A Service's cluster IPs and node ports, taken before it is stored and given back when
//! the write fails or once it no longer needs them: kube's Service REST storage
//! (`beginCreate`, `beginUpdate`, `afterDelete` and the transactions of its `alloc.go`),
//! as the registry's write hooks of `services`.
//!
//! What a write takes is taken at once, in storage (so two servers never take one
//! value); what it gives back is given back only when the write is stored. Values a dry
//! run would take are made up as kube makes them up (the range's network address, node
//! ports from 32769), and nothing is taken.

use std::net::IpAddr;
use std::sync::Arc;

use serde_json::Value;

use super::Allocators;
use kapi_allocator::AllocateError;
use kapi_core::error::{ApiError, FieldError, FieldErrorType, go_strings};
use kapi_kinds::builtin::core::v1::Service;
use kapi_kinds::services::{
    self as rules, allocates_node_ports, drop_type_dependent_fields, init_ip_family_fields,
    needs_cluster_ip, needs_health_check, needs_node_ports, normalize_cluster_ips,
    patch_allocated_values,
};
use kapi_registry::write_hooks::{Finish, WriteHooks};
use kapi_registry::{Registry, Target};

/// The first node port a dry run makes up, less one (kube's).
const DRY_RUN_PORTS: i32 = 32768;

/// The write hooks of `services`.
pub(super) struct ServiceHooks {
    allocators: Arc<Allocators>,
}

impl ServiceHooks {
    pub(super) fn new(allocators: Arc<Allocators>) -> ServiceHooks {
        ServiceHooks { allocators }
    }
}

#[async_trait::async_trait]
impl WriteHooks for ServiceHooks {
    async fn begin_create(
        &self,
        _registry: &Registry,
        object: &mut Value,
        dry_run: bool,
    ) -> Result<Option<Box<dyn Finish>>, ApiError> {
        let mut service = decode(object)?;
        normalize_cluster_ips(&mut service.spec, None);
        let families = self.allocators.families();
        init_ip_family_fields(&mut service, None, families)
            .map_err(|causes| invalid(&service, causes))?;
        let mut txn = Transaction::new(&self.allocators, &service, dry_run);
        let taken = async {
            txn.allocate_cluster_ips(&mut service).await?;
            txn.allocate_node_ports(&mut service).await
        };
        if let Err(error) = taken.await {
            txn.revert().await;
            return Err(error);
        }
        *object = encode(&service)?;
        Ok(Some(Box::new(txn)))
    }

    async fn begin_update(
        &self,
        _registry: &Registry,
        object: &mut Value,
        old: &Value,
        dry_run: bool,
    ) -> Result<Option<Box<dyn Finish>>, ApiError> {
        let mut service = decode(object)?;
        let mut old = decode(old)?;
        normalize_cluster_ips(&mut old.spec, None);
        patch_allocated_values(&mut service.spec, &old.spec);
        normalize_cluster_ips(&mut service.spec, Some(&old.spec));
        let families = self.allocators.families();
        init_ip_family_fields(&mut service, Some(&old), families)
            .map_err(|causes| invalid(&service, causes))?;
        let mut txn = Transaction::new(&self.allocators, &service, dry_run);
        let taken = async {
            txn.update_cluster_ips(&mut service, &old).await?;
            txn.update_node_ports(&mut service, &old).await
        };
        if let Err(error) = taken.await {
            txn.revert().await;
            return Err(error);
        }
        drop_type_dependent_fields(&mut service, &old);
        *object = encode(&service)?;
        Ok(Some(Box::new(txn)))
    }

    async fn after_delete(&self, registry: &Registry, old: &Value) {
        let Ok(mut service) = decode(old) else {
            return;
        };
        normalize_cluster_ips(&mut service.spec, None);
        let name = service.metadata.name.clone().unwrap_or_default();
        let namespace = service.metadata.namespace.clone();
        let mut txn = Transaction::new(&self.allocators, &service, false);
        txn.release_all(&service);
        txn.commit().await;
        // kube deletes the Endpoints of the same name with the Service.
        if let Some(endpoints) = registry.scheme().by_resource("", "endpoints") {
            let target = Target {
                kind: &endpoints,
                version: "v1",
                namespace: namespace.as_deref(),
            };
            let options = Default::default();
            match registry.delete(target, &name, &options).await {
                Ok(_) | Err(ApiError::NotFound { .. }) => {}
                Err(error) => {
                    tracing::warn!(%error, service = name, "cannot delete the Service's endpoints")
                }
            }
        }
    }
}

fn decode(object: &Value) -> Result<Service, ApiError> {
    serde_json::from_value(object.clone())
        .map_err(|e| ApiError::Internal(format!("decoding a Service: {e}")))
}

fn encode(service: &Service) -> Result<Value, ApiError> {
    serde_json::to_value(service)
        .map_err(|e| ApiError::Internal(format!("encoding a Service: {e}")))
}

/// A Service's `Invalid` error.
fn invalid(service: &Service, causes: Vec<FieldError>) -> ApiError {
    invalid_named(service.metadata.name.as_deref().unwrap_or_default(), causes)
}

fn invalid_named(name: &str, causes: Vec<FieldError>) -> ApiError {
    ApiError::Invalid {
        group: String::new(),
        kind: "Service".into(),
        name: name.to_owned(),
        causes,
    }
}

/// What one write took, and what it gives back once stored.
struct Transaction {
    allocators: Arc<Allocators>,
    dry_run: bool,
    /// The Service's name, for errors and the log.
    name: String,
    /// Taken by this write: given back when it fails.
    taken_ips: Vec<IpAddr>,
    taken_ports: Vec<i32>,
    /// The old object's: given back when the write is stored.
    released_ips: Vec<IpAddr>,
    released_ports: Vec<i32>,
    /// A dry run's ports, taken by nothing.
    dry_ports: Vec<i32>,
}

#[async_trait::async_trait]
impl Finish for Transaction {
    async fn finish(self: Box<Self>, success: bool) {
        match success {
            true => self.commit().await,
            false => self.revert().await,
        }
    }
}

impl Transaction {
    fn new(allocators: &Arc<Allocators>, service: &Service, dry_run: bool) -> Transaction {
        Transaction {
            allocators: Arc::clone(allocators),
            dry_run,
            name: service.metadata.name.clone().unwrap_or_default(),
            taken_ips: Vec::new(),
            taken_ports: Vec::new(),
            released_ips: Vec::new(),
            released_ports: Vec::new(),
            dry_ports: Vec::new(),
        }
    }

    /// The write is stored: what the old object had and the new one has not goes back.
    async fn commit(self) {
        if !self.taken_ips.is_empty() {
            tracing::info!(service = self.name, cluster_ips = ?self.taken_ips, "allocated clusterIPs");
        }
        for ip in &self.released_ips {
            if let Some(allocator) = self.allocators.of_ip(*ip)
                && let Err(error) = allocator.release(*ip).await
            {
                tracing::error!(%error, %ip, "failed to release a cluster IP");
            }
        }
        for port in &self.released_ports {
            if let Err(error) = self.allocators.ports.release(*port).await {
                tracing::error!(%error, port, "failed to release a node port");
            }
        }
    }

    /// The write failed: what it took goes back.
    async fn revert(&self) {
        for ip in &self.taken_ips {
            if let Some(allocator) = self.allocators.of_ip(*ip)
                && let Err(error) = allocator.release(*ip).await
            {
                tracing::error!(%error, %ip, "failed to clean up after a failed service write");
            }
        }
        for port in &self.taken_ports {
            if let Err(error) = self.allocators.ports.release(*port).await {
                tracing::error!(%error, port, "failed to clean up after a failed service write");
            }
        }
    }

    /// Takes `ip` (of `family`) as the `spec.clusterIPs` of `listed` ask.
    async fn allocate_ip(
        &mut self,
        family: &str,
        ip: &str,
        listed: &[String],
    ) -> Result<String, ApiError> {
        let allocator = (self.allocators.of_family(family)).ok_or_else(|| {
            ApiError::Internal(format!("{family} is not configured on this cluster"))
        })?;
        if ip.is_empty() {
            if self.dry_run {
                return Ok(allocator.range().cidr().addr().to_string());
            }
            let ip = (allocator.allocate_next(false).await)
                .map_err(|e| ApiError::Internal(format!("failed to allocate a serviceIP: {e}")))?;
            self.taken_ips.push(ip);
            return Ok(ip.to_string());
        }
        let address: IpAddr = ip
            .parse()
            .map_err(|_| ApiError::Internal(format!("failed to parse service IP {ip:?}")))?;
        let taken = match self.dry_run {
            // A dry run checks the range only, as kube's.
            true => allocator.check(address).map(|_| ()),
            false => allocator.allocate(address, false).await,
        };
        if let Err(error) = taken {
            let listed: Vec<&str> = listed.iter().map(String::as_str).collect();
            let detail = format!(
                "{}: failed to allocate IP {ip}: {error}",
                go_strings(&listed)
            );
            let cause = FieldError::new(FieldErrorType::Invalid, "spec.clusterIPs", None, detail);
            return Err(invalid_named(&self.name, vec![cause]));
        }
        if !self.dry_run {
            self.taken_ips.push(address);
        }
        Ok(ip.to_owned())
    }

    /// kube's `allocClusterIPs`: an address of each family the Service has, the one asked
    /// for or a free one; none for ExternalName and headless Services.
    async fn allocate_cluster_ips(&mut self, service: &mut Service) -> Result<(), ApiError> {
        let spec = &mut service.spec;
        if !needs_cluster_ip(spec) || spec.cluster_ips.first().is_some_and(|ip| ip == "None") {
            return Ok(());
        }
        let listed = spec.cluster_ips.clone();
        spec.cluster_ips.resize(
            spec.ip_families.len().max(spec.cluster_ips.len()),
            String::new(),
        );
        for i in 0..spec.ip_families.len() {
            let family = spec.ip_families[i].clone();
            let ip = self
                .allocate_ip(&family, &spec.cluster_ips[i], &listed)
                .await?;
            spec.cluster_ips[i] = ip;
        }
        spec.cluster_ip = spec.cluster_ips.first().cloned().unwrap_or_default();
        Ok(())
    }

    /// kube's `updateClusterIPs`: the addresses a type or policy change adds or gives back.
    async fn update_cluster_ips(
        &mut self,
        service: &mut Service,
        old: &Service,
    ) -> Result<(), ApiError> {
        let (spec, before) = (&mut service.spec, &old.spec);
        let headless = |ips: &[String]| ips.first().is_some_and(|ip| ip == "None");
        // From ExternalName (or a Service stored before it had addresses): all of them.
        if needs_cluster_ip(spec) && (!needs_cluster_ip(before) || before.cluster_ips.is_empty()) {
            return self.allocate_cluster_ips(service).await;
        }
        if headless(&before.cluster_ips) {
            return Ok(());
        }
        // To ExternalName: all of them go back.
        if !needs_cluster_ip(spec) {
            self.release_ips(&before.cluster_ips);
            return Ok(());
        }
        // Upgraded to dual-stack: the second family's.
        if before.ip_families.len() < spec.ip_families.len() && spec.ip_families.len() == 2 {
            let listed = spec.cluster_ips.clone();
            if spec.cluster_ips.len() < 2 {
                spec.cluster_ips.push(String::new());
            }
            let family = spec.ip_families[1].clone();
            spec.cluster_ips[1] = self
                .allocate_ip(&family, &spec.cluster_ips[1], &listed)
                .await?;
            return Ok(());
        }
        // Downgraded: the secondary goes back.
        if before.cluster_ips.len() > spec.cluster_ips.len() && before.cluster_ips.len() == 2 {
            self.release_ips(&before.cluster_ips[1..]);
        }
        Ok(())
    }

    fn release_ips(&mut self, ips: &[String]) {
        if self.dry_run {
            return;
        }
        self.released_ips
            .extend(ips.iter().filter_map(|ip| ip.parse::<IpAddr>().ok()));
    }

    fn release_ports(&mut self, ports: impl IntoIterator<Item = i32>) {
        if self.dry_run {
            return;
        }
        self.released_ports
            .extend(ports.into_iter().filter(|&p| p != 0));
    }

    /// Everything `service` has, given back on commit (a delete).
    fn release_all(&mut self, service: &Service) {
        let spec = &service.spec;
        if needs_cluster_ip(spec) && !rules::is_headless(spec) {
            self.release_ips(&spec.cluster_ips);
        }
        self.release_ports(spec.ports.iter().map(|p| p.node_port));
        if needs_health_check(spec) {
            self.release_ports([spec.health_check_node_port]);
        }
    }

    /// A node port asked for that cannot be had: `Invalid` on its field.
    fn port_invalid(&self, at: &str, port: i32, error: AllocateError) -> ApiError {
        invalid_named(
            &self.name,
            vec![FieldError::invalid(at, port, error.to_string())],
        )
    }

    /// Takes `port`; a dry run checks that it is free.
    async fn allocate_port(&mut self, port: i32) -> Result<(), AllocateError> {
        if self.dry_run {
            let taken =
                (self.allocators.ports.is_taken(port).await).map_err(AllocateError::Other)?;
            if taken || self.dry_ports.contains(&port) {
                return Err(AllocateError::Allocated("port"));
            }
            self.dry_ports.push(port);
            return Ok(());
        }
        self.allocators.ports.allocate(port, false).await?;
        self.taken_ports.push(port);
        Ok(())
    }

    /// Takes a free port; a dry run makes one up.
    async fn allocate_next_port(&mut self) -> Result<i32, AllocateError> {
        if self.dry_run {
            let port = DRY_RUN_PORTS + 1 + self.dry_ports.len() as i32;
            self.dry_ports.push(port);
            return Ok(port);
        }
        let port = self.allocators.ports.allocate_next(false).await?;
        self.taken_ports.push(port);
        Ok(port)
    }

    /// kube's `initNodePorts` and health check port of a create: a node port for each
    /// port number (the one asked for, else a free one; ports of one number share it).
    async fn allocate_node_ports(&mut self, service: &mut Service) -> Result<(), ApiError> {
        let spec = &mut service.spec;
        if needs_node_ports(spec) {
            let allocates = allocates_node_ports(spec);
            let mut by_number: Vec<(i32, i32)> = Vec::new();
            for i in 0..spec.ports.len() {
                let (number, asked) = (spec.ports[i].port, spec.ports[i].node_port);
                if asked == 0 && !allocates {
                    continue;
                }
                let at = format!("spec.ports[{i}].nodePort");
                match by_number
                    .iter()
                    .find(|(n, _)| *n == number)
                    .map(|(_, p)| *p)
                {
                    None => {
                        let requested = (spec.ports.iter())
                            .find(|p| p.port == number && p.node_port != 0)
                            .map_or(0, |p| p.node_port);
                        let port = match requested {
                            0 => self.allocate_next_port().await.map_err(|e| {
                                ApiError::Internal(format!("failed to allocate a nodePort: {e}"))
                            })?,
                            port => {
                                (self.allocate_port(port).await)
                                    .map_err(|e| self.port_invalid(&at, port, e))?;
                                port
                            }
                        };
                        spec.ports[i].node_port = port;
                        by_number.push((number, port));
                    }
                    Some(shared) if asked == 0 => spec.ports[i].node_port = shared,
                    Some(shared) if asked == shared => {}
                    Some(_) => {
                        (self.allocate_port(asked).await)
                            .map_err(|e| self.port_invalid(&at, asked, e))?;
                    }
                }
            }
        }
        if needs_health_check(spec) {
            self.allocate_health_check(service).await?;
        }
        Ok(())
    }

    /// kube's `allocHealthCheckNodePort`: the one asked for, else a free one (every
    /// failure a 500, as kube's).
    async fn allocate_health_check(&mut self, service: &mut Service) -> Result<(), ApiError> {
        let asked = service.spec.health_check_node_port;
        if asked != 0 {
            return (self.allocate_port(asked).await).map_err(|e| {
                ApiError::Internal(format!(
                    "failed to allocate requested HealthCheck NodePort {asked}: {e}"
                ))
            });
        }
        let port = (self.allocate_next_port().await).map_err(|e| {
            ApiError::Internal(format!("failed to allocate a HealthCheck NodePort 0: {e}"))
        })?;
        service.spec.health_check_node_port = port;
        Ok(())
    }

    /// kube's `txnUpdateNodePorts`: new node ports taken, those no longer used given back.
    async fn update_node_ports(
        &mut self,
        service: &mut Service,
        old: &Service,
    ) -> Result<(), ApiError> {
        let before = &old.spec;
        let old_numbers: Vec<i32> = before
            .ports
            .iter()
            .map(|p| p.node_port)
            .filter(|&p| p != 0)
            .collect();
        if needs_node_ports(before) && !needs_node_ports(&service.spec) {
            self.release_ports(old_numbers.iter().copied());
        }
        if needs_node_ports(&service.spec) {
            let spec = &mut service.spec;
            let allocates = allocates_node_ports(spec);
            let mut taken_now: Vec<i32> = Vec::new();
            let mut seen: Vec<(String, i32)> = Vec::new();
            for i in 0..spec.ports.len() {
                let asked = spec.ports[i].node_port;
                if asked == 0 && !allocates {
                    continue;
                }
                let port = match asked {
                    0 => self.allocate_next_port().await.map_err(|e| {
                        ApiError::Internal(format!("failed to allocate a nodePort: {e}"))
                    })?,
                    port if old_numbers.contains(&port) || taken_now.contains(&port) => port,
                    port => {
                        let at = format!("spec.ports[{i}].nodePort");
                        (self.allocate_port(port).await)
                            .map_err(|e| self.port_invalid(&at, port, e))?;
                        taken_now.push(port);
                        port
                    }
                };
                spec.ports[i].node_port = port;
                let key = (spec.ports[i].protocol.clone(), port);
                if seen.contains(&key) {
                    return Err(ApiError::Unclassified(format!(
                        "duplicate nodePort: {{{} {}}}",
                        key.0, key.1
                    )));
                }
                seen.push(key);
            }
            let new_numbers: Vec<i32> = spec.ports.iter().map(|p| p.node_port).collect();
            let gone: Vec<i32> = (old_numbers.iter().copied())
                .filter(|p| !new_numbers.contains(p))
                .collect();
            if needs_node_ports(before) {
                self.release_ports(gone);
            }
        }
        let (needed, needs) = (
            needs_health_check(before),
            needs_health_check(&service.spec),
        );
        if !needed && needs {
            self.allocate_health_check(service).await?;
        } else if needed && !needs {
            self.release_ports([before.health_check_node_port]);
        }
        Ok(())
    }
}
