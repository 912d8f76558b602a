//! Event expiry: kube-apiserver keeps each Event for `--event-ttl` (1 hour by default)
//! after its last write, then removes it, so that the reports of a busy cluster do not fill
//! its storage.
//!
//! kube does it in storage, with an etcd lease attached at each write. kapi's embedded
//! store has no leases, so the server does it the same way on both backends: this
//! controller lists the Events (from the watch cache) and deletes those whose last write is
//! older than the TTL. An Event's last write is the latest time its metadata records:
//! `creationTimestamp`, and the `time` of each `managedFields` entry, which the field
//! manager sets at every write that changes the object (as kube's lease is renewed by
//! writes, not by no-op updates). Each delete is conditional on the uid and
//! resourceVersion that were judged, so an Event written again meanwhile stays, and every
//! replica may run this: a delete already done by another is NotFound or a Conflict, both
//! harmless.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use kapi_core::error::ApiError;
use kapi_core::meta::{DeleteOptions, Preconditions};
use kapi_core::scheme::KindEntry;
use kapi_registry::{ListOptions, Registry, Target};

/// kube-apiserver's default `--event-ttl`.
pub const DEFAULT_EVENT_TTL: Duration = Duration::from_secs(60 * 60);

/// How often expired Events are looked for: a tenth of the TTL, between 1 s and a minute.
pub fn period(ttl: Duration) -> Duration {
    (ttl / 10).clamp(Duration::from_secs(1), Duration::from_secs(60))
}

/// The kind whose objects expire: the core Event, if the scheme serves it.
fn events(registry: &Registry) -> Option<std::sync::Arc<KindEntry>> {
    registry.scheme().by_kind("", "Event")
}

/// One pass: deletes every Event last written more than `ttl` ago. Never busy: expiry is
/// not urgent, and the next pass comes after [`period`].
pub async fn expire(registry: &Registry, ttl: Duration) -> Result<bool, ApiError> {
    let Some(kind) = events(registry) else {
        return Ok(false);
    };
    let version = kind.info.storage_version().name;
    let all = Target {
        kind: &kind,
        version,
        namespace: None,
    };
    let cached = ListOptions {
        resource_version: Some("0".into()),
        ..ListOptions::default()
    };
    let now = SystemTime::now();
    for event in registry.list(all, &cached).await?.items {
        let event = event.value();
        let Some(written) = last_write(&event) else {
            continue;
        };
        if now.duration_since(written).unwrap_or_default() <= ttl {
            continue;
        }
        let meta = |field: &str| event.pointer(&format!("/metadata/{field}"))?.as_str();
        let (Some(namespace), Some(name)) = (meta("namespace"), meta("name")) else {
            continue;
        };
        let target = Target {
            namespace: Some(namespace),
            ..all
        };
        let options = DeleteOptions {
            preconditions: Some(Preconditions {
                uid: meta("uid").map(str::to_owned),
                resource_version: meta("resourceVersion").map(str::to_owned),
            }),
            ..DeleteOptions::default()
        };
        match registry.delete(target, name, &options).await {
            Ok(_) => tracing::debug!(namespace, name, "expired event removed"),
            // Gone, or written again since it was judged: another pass judges it anew.
            Err(ApiError::NotFound { .. } | ApiError::Conflict { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(false)
}

/// The latest time `object`'s metadata records a write at.
fn last_write(object: &Value) -> Option<SystemTime> {
    let meta = object.get("metadata")?;
    let created = meta.get("creationTimestamp").and_then(Value::as_str);
    let managed = (meta.get("managedFields").and_then(Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.get("time")?.as_str());
    (created.into_iter().chain(managed))
        .filter_map(|time| humantime::parse_rfc3339_weak(time).ok())
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_write_is_the_latest_time_in_the_metadata() {
        let event = serde_json::json!({"metadata": {
            "creationTimestamp": "2026-11-25T10:00:00Z",
            "managedFields": [
                {"manager": "a", "time": "2026-11-25T10:05:00Z"},
                {"manager": "b", "time": "2026-11-25T10:02:00Z"},
                {"manager": "c"}
            ]
        }});
        let expected = humantime::parse_rfc3339("2026-11-25T10:05:00Z").unwrap();
        assert_eq!(last_write(&event), Some(expected));
        assert_eq!(last_write(&serde_json::json!({"metadata": {}})), None);
    }

    #[test]
    fn the_period_follows_the_ttl_within_bounds() {
        assert_eq!(period(DEFAULT_EVENT_TTL), Duration::from_secs(60));
        assert_eq!(period(Duration::from_secs(30)), Duration::from_secs(3));
        assert_eq!(period(Duration::from_secs(2)), Duration::from_secs(1));
    }
}
