//! The command line, as controllers take it: where the cluster is (`--kubeconfig`, else
//! `KUBECONFIG`, `~/.kube/config` or the in-cluster service account, as kube-rs infers it)
//! and kube-controller-manager's leader-election flags, with client-go's rules on their
//! values.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

/// client-go's `JitterFactor`: a retry waits up to 1.2 retry periods.
pub(crate) const JITTER_FACTOR: f64 = 1.2;

/// Reconciles every WebApp's status: a simulated rollout to `spec.replicas`, and a `Ready`
/// condition.
#[derive(Debug, Parser)]
#[command(name = "webapp-controller", version)]
pub(crate) struct Flags {
    /// The kubeconfig to connect with; without it, `KUBECONFIG`, `~/.kube/config`, then the
    /// in-cluster configuration.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// Elect a leader through a Lease before reconciling, so that of several instances
    /// only one works at a time.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub leader_elect: bool,
    /// How long candidates wait after the leader's last renewal before they take the lease.
    #[arg(long, default_value = "15s", value_parser = duration)]
    pub leader_elect_lease_duration: Duration,
    /// How long the leader keeps trying to renew before it stops leading.
    #[arg(long, default_value = "10s", value_parser = duration)]
    pub leader_elect_renew_deadline: Duration,
    /// How long candidates and the leader wait between tries.
    #[arg(long, default_value = "2s", value_parser = duration)]
    pub leader_elect_retry_period: Duration,
    /// The name of the Lease.
    #[arg(long, default_value = "webapp-controller")]
    pub leader_elect_resource_name: String,
    /// The namespace of the Lease.
    #[arg(long, default_value = "default")]
    pub leader_elect_resource_namespace: String,
    /// This instance's name in the Lease (default: the host name and a random suffix).
    #[arg(long)]
    pub identity: Option<String>,
}

impl Flags {
    /// client-go's checks of a leader election's configuration (`NewLeaderElector`).
    pub(crate) fn check(&self) -> Result<(), String> {
        let lease = self.leader_elect_lease_duration;
        let renew = self.leader_elect_renew_deadline;
        let retry = self.leader_elect_retry_period;
        if !self.leader_elect {
            return Ok(());
        }
        if lease <= renew {
            return Err("leaseDuration must be greater than renewDeadline".into());
        }
        if renew.as_secs_f64() <= JITTER_FACTOR * retry.as_secs_f64() {
            return Err("renewDeadline must be greater than retryPeriod*JitterFactor".into());
        }
        if lease.is_zero() || renew.is_zero() || retry.is_zero() {
            return Err(
                "leaseDuration, renewDeadline and retryPeriod must be greater than zero".into(),
            );
        }
        if self.identity.as_deref() == Some("") {
            return Err("Lock identity is empty".into());
        }
        Ok(())
    }

    /// `--identity`, or the host name and a random suffix (kube-controller-manager's
    /// `hostname_uuid`).
    pub(crate) fn identity(&self) -> String {
        self.identity.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|name| name.trim().to_owned())
                .unwrap_or_else(|_| "localhost".into());
            format!("{host}_{}", uuid::Uuid::new_v4())
        })
    }
}

/// A Go-style duration (`15s`, `500ms`, `1m30s`).
fn duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("invalid duration {text:?}: {e}"))
}
