//! Services' addresses and the server's own Service (kube's `ServiceClusterIPRanges`,
//! `ServiceNodePortRange`, `--advertise-address` and the endpoint reconciler's flags):
//! what cluster IPs and node ports are handed out from, and what `default/kubernetes`
//! names. Used when the API serves Services (kapi's `builtin` feature).

use std::net::IpAddr;
use std::time::Duration;

use kapi_core::net::cidr::Cidr;

/// How the server's addresses reach the `kubernetes` Service's endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EndpointReconciler {
    /// Each server keeps a lease on its address; the endpoints name every live one.
    Lease,
    /// The endpoints are not kept.
    None,
}

/// Services' addresses and the server's own Service.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Services")]
pub struct ServiceOptions {
    /// The CIDR cluster IPs are handed out from; two, comma-separated and of different
    /// families, for dual-stack Services (e.g. `10.96.0.0/12,fd00::/108`). Its first
    /// address is the `kubernetes` Service's.
    #[arg(long, value_name = "CIDRS", default_value = "10.0.0.0/24")]
    pub service_cluster_ip_range: String,

    /// The ports node ports are handed out from (`<first>-<last>`, both included).
    #[arg(long, value_name = "RANGE", default_value = "30000-32767")]
    pub service_node_port_range: String,

    /// The address the `kubernetes` Service's endpoints name for this server; by
    /// default the listening address, or (listening on loopback or every address) the
    /// address of the host's default route.
    #[arg(long, value_name = "IP")]
    pub advertise_address: Option<IpAddr>,

    /// How the `kubernetes` Service's endpoints are kept.
    #[arg(long, value_name = "TYPE", value_enum, default_value = "lease")]
    pub endpoint_reconciler_type: EndpointReconciler,

    /// A node port for the `kubernetes` Service (then of type NodePort); 0: none.
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub kubernetes_service_node_port: u16,

    /// How often the allocations of cluster IPs and node ports are checked against the
    /// Services that exist (kube's repair controllers run every three minutes; kapi's
    /// flag, for tests and operators that want a leak found sooner).
    #[arg(long, value_name = "DURATION", default_value = "3m", value_parser = humantime::parse_duration)]
    pub service_repair_interval: Duration,
}

impl ServiceOptions {
    /// The cluster IP ranges, checked as kube checks them.
    pub fn cluster_ip_ranges(&self) -> Result<Vec<Cidr>, String> {
        let flag = "--service-cluster-ip-range";
        let mut ranges = Vec::new();
        for (i, value) in self.service_cluster_ip_range.split(',').enumerate() {
            let value = value.trim();
            let cidr = Cidr::go_parse_prefix(value)
                .map_err(|e| format!("{flag}[{i}] {value:?} is not a valid CIDR: {e}"))?
                .masked();
            let (bits, largest) = if cidr.addr().is_ipv4() {
                (32, 12)
            } else {
                (128, 108)
            };
            if cidr.prefix_len() < largest {
                return Err(format!(
                    "specified {flag} is too large; for {bits}-bit addresses, the mask must be >= {largest}"
                ));
            }
            if bits - u32::from(cidr.prefix_len()) < 3 {
                return Err("the service cluster IP range must be at least 8 IP addresses".into());
            }
            ranges.push(cidr);
        }
        match ranges.as_slice() {
            [] => Err(format!("{flag} must contain at least one valid cidr")),
            [a, b] if a.addr().is_ipv4() == b.addr().is_ipv4() => Err(format!(
                "{flag}[0] and {flag}[1] must be of different IP family"
            )),
            [_, _, _, ..] => Err(format!("{flag} must not contain more than two entries")),
            _ => Ok(ranges),
        }
    }

    /// The checks that need no I/O.
    pub fn validate(&self) -> Vec<String> {
        let mut errors = Vec::new();
        if let Err(e) = self.cluster_ip_ranges() {
            errors.push(e);
        }
        match kapi_allocator::PortRange::parse(&self.service_node_port_range) {
            Err(e) => errors.push(format!("--service-node-port-range: {e}")),
            Ok(range) => {
                let port = i32::from(self.kubernetes_service_node_port);
                if port != 0 && range.offset(port).is_none() {
                    errors.push(format!(
                        "kubernetes service node port range {range} doesn't contain {port}"
                    ));
                }
            }
        }
        if self.service_repair_interval.is_zero() {
            errors.push("--service-repair-interval must be above zero".into());
        }
        errors
    }
}
