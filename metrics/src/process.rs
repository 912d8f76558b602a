//! The process metrics of Prometheus' Go client, which kube-apiserver exports
//! (`process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_open_fds`, ...),
//! read from `/proc/self` with `procfs` once per scrape. Where `/proc` cannot be read (not
//! Linux), they read 0 rather than failing the scrape.

use fastmetrics::metrics::lazy_group::LazyGroup;
use fastmetrics::registry::Registry;
use procfs::WithCurrentSystemInfo;
use procfs::process::{LimitValue, Process};

/// The names of the process metrics (text format).
pub(super) const NAMES: [&str; 7] = [
    "process_cpu_seconds_total",
    "process_open_fds",
    "process_max_fds",
    "process_virtual_memory_bytes",
    "process_virtual_memory_max_bytes",
    "process_resident_memory_bytes",
    "process_start_time_seconds",
];

/// One reading of `/proc/self`.
#[derive(Clone, Copy, Default)]
struct Sample {
    cpu_seconds: f64,
    open_fds: i64,
    max_fds: i64,
    virtual_bytes: i64,
    max_virtual_bytes: i64,
    resident_bytes: i64,
    start_time_seconds: f64,
}

fn limit(value: LimitValue) -> i64 {
    match value {
        // Go's client reports an unlimited limit as the largest value it can hold.
        LimitValue::Unlimited => i64::MAX,
        LimitValue::Value(v) => i64::try_from(v).unwrap_or(i64::MAX),
    }
}

fn sample() -> Sample {
    let Ok(process) = Process::myself() else {
        return Sample::default();
    };
    let mut sample = Sample::default();
    if let Ok(stat) = process.stat() {
        let ticks = procfs::ticks_per_second() as f64;
        sample.cpu_seconds = (stat.utime + stat.stime) as f64 / ticks;
        sample.virtual_bytes = i64::try_from(stat.vsize).unwrap_or(i64::MAX);
        sample.resident_bytes = i64::try_from(stat.rss_bytes().get()).unwrap_or(i64::MAX);
        if let Ok(boot) = procfs::boot_time_secs() {
            sample.start_time_seconds = boot as f64 + stat.starttime as f64 / ticks;
        }
    }
    if let Ok(count) = process.fd_count() {
        sample.open_fds = i64::try_from(count).unwrap_or(i64::MAX);
    }
    if let Ok(limits) = process.limits() {
        sample.max_fds = limit(limits.max_open_files.soft_limit);
        sample.max_virtual_bytes = limit(limits.max_address_space.soft_limit);
    }
    sample
}

/// Registers the process metrics, sampled together at each scrape.
/// `openmetrics`: under the OpenMetrics name of the CPU counter (without `_total`).
pub(super) fn register(
    registry: &mut Registry,
    openmetrics: bool,
) -> Result<(), fastmetrics::error::Error> {
    let group = LazyGroup::new(sample);
    registry.register(
        if openmetrics {
            "process_cpu_seconds"
        } else {
            "process_cpu_seconds_total"
        },
        "Total user and system CPU time spent in seconds.",
        group.counter(|s| s.cpu_seconds),
    )?;
    registry.register(
        "process_open_fds",
        "Number of open file descriptors.",
        group.gauge(|s| s.open_fds),
    )?;
    registry.register(
        "process_max_fds",
        "Maximum number of open file descriptors.",
        group.gauge(|s| s.max_fds),
    )?;
    registry.register(
        "process_virtual_memory_bytes",
        "Virtual memory size in bytes.",
        group.gauge(|s| s.virtual_bytes),
    )?;
    registry.register(
        "process_virtual_memory_max_bytes",
        "Maximum amount of virtual memory available in bytes.",
        group.gauge(|s| s.max_virtual_bytes),
    )?;
    registry.register(
        "process_resident_memory_bytes",
        "Resident memory size in bytes.",
        group.gauge(|s| s.resident_bytes),
    )?;
    registry.register(
        "process_start_time_seconds",
        "Start time of the process since unix epoch in seconds.",
        group.gauge(|s| s.start_time_seconds),
    )?;
    Ok(())
}
