//! The server's run (kube's `ServerRunOptions`): request limits and timeouts, how long
//! Events live, and the shutdown sequence.

use std::time::Duration;

use crate::filters::max_inflight::Limits;

/// Limits, timeouts and shutdown.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Generic")]
pub struct ServerRunOptions {
    /// How many read-only requests may run at once (watches, health checks and
    /// `system:masters` not counted); over it, 429. 0: no limit.
    #[arg(long, value_name = "N", default_value_t = crate::filters::max_inflight::DEFAULT_READONLY)]
    pub max_requests_inflight: usize,

    /// How many mutating requests may run at once; over it, 429. 0: no limit.
    #[arg(long, value_name = "N", default_value_t = crate::filters::max_inflight::DEFAULT_MUTATING)]
    pub max_mutating_requests_inflight: usize,

    /// How long a request that is not a watch may take before it is answered 504 (e.g.
    /// `60s`, `1m`); a request's own `timeout` parameter may ask for less. `0` disables.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = humantime::parse_duration)]
    pub request_timeout: std::time::Duration,

    /// A watch without `timeoutSeconds` ends at a random point between this and twice this
    /// (kube-apiserver's `--min-request-timeout`, in seconds), so clients reconnect spread
    /// out; `0` lets such watches run until the client or the server ends them.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800)]
    pub min_request_timeout: u64,

    /// How long an Event is kept after its last write (kube-apiserver's `--event-ttl`; e.g.
    /// `1h`, `30m`). At least 1s.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = event_ttl)]
    pub event_ttl: Duration,

    /// After SIGTERM, how long to keep serving while `/readyz` fails (500), so that load
    /// balancers notice before the listener closes (kube-apiserver's
    /// `--shutdown-delay-duration`; e.g. `10s`).
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = humantime::parse_duration)]
    pub shutdown_delay_duration: Duration,

    /// Then, how long in-flight requests may take to finish before the server stops anyway.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = humantime::parse_duration)]
    pub shutdown_timeout: Duration,
}

impl ServerRunOptions {
    /// The in-flight limits.
    pub fn limits(&self) -> Limits {
        Limits::new(
            self.max_requests_inflight,
            self.max_mutating_requests_inflight,
        )
    }
}

/// `--event-ttl`: a duration of at least a second (kube's flag takes Go durations; these
/// are the same for the usual `1h`, `30m`, `90s`).
fn event_ttl(value: &str) -> Result<Duration, String> {
    let ttl = humantime::parse_duration(value).map_err(|e| e.to_string())?;
    if ttl < Duration::from_secs(1) {
        return Err("must be at least 1s".into());
    }
    Ok(ttl)
}
