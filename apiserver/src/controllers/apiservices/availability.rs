//! kube's `AvailableConditionController`: whether each APIService is available, in its
//! `status.conditions[Available]` with kube's reasons and messages.
//!
//! - A local APIService is `True`, `Local`.
//! - A remote one is checked by asking its server for its group-version's discovery
//!   (`GET /apis/<group>/<version>`, as `system:kube-aggregator` in `system:masters`,
//!   within 5 s): a 2xx is `True`, `Passed`; anything else `False`,
//!   `FailedDiscoveryCheck`, with kube's `failing or missing response from <url>: ...`.
//!   Unlike kube's check, this one verifies the server's certificate as the proxy does,
//!   so a wrong `caBundle` shows here rather than only on requests.
//! - When: at once when the APIService appears or changes, every 30 s after a pass, and
//!   after a failure again after 1 s, doubling up to 30 s (kube's rate-limited requeue);
//!   a request that found it unavailable or unreachable asks for a check, which comes no
//!   sooner than 1 s after the last one.
//! - Each APIService is checked on its own, and its condition written (only when it
//!   changed) right after its probe, so one slow server delays no other's status.
//! - A server that answers also gives its documents, as `system:aggregator`: its
//!   aggregated discovery entry (or one made from its resource list), its `/openapi/v2`
//!   and its `/openapi/v3` document, fetched when first available and then every minute
//!   (kube's OpenAPI downloads); a server that stops answering keeps its last ones.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::{KIND, typed_body, writes};
use crate::aggregator::{Aggregator, Caller, Document, Entry, FetchError, Fetched, Remote};
use kapi_core::error::ApiError;
use kapi_kinds::apiregistration::{APIService, APIServiceCondition, AVAILABLE, GROUP};
use kapi_registry::{Registry, Subresource, Target};

/// How often an APIService that passed is checked again.
const INTERVAL: Duration = Duration::from_secs(30);
/// The first pause after a failure; it doubles up to [`INTERVAL`].
const RETRY: Duration = Duration::from_secs(1);
/// How long a check or a download waits for an answer.
const TIMEOUT: Duration = Duration::from_secs(5);
/// How often a server's documents are fetched again.
const DOCUMENTS: Duration = Duration::from_secs(60);

/// When an APIService is checked next.
struct Schedule {
    due: Instant,
    last: Option<Instant>,
    failures: u32,
    documents: Option<Instant>,
}

/// Checks the APIServices until the registry goes.
pub(super) async fn run(registry: Weak<Registry>, aggregator: Arc<Aggregator>) {
    let mut schedules: HashMap<String, Schedule> = HashMap::new();
    loop {
        let registered = aggregator.registered();
        let now = Instant::now();
        schedules.retain(|name, _| registered.named(name).is_some());
        for entry in registered.entries() {
            schedules
                .entry(entry.name().to_owned())
                .or_insert_with(|| Schedule {
                    due: now,
                    last: None,
                    failures: 0,
                    documents: None,
                });
        }
        let next = schedules.values().map(|s| s.due).min();
        tokio::select! {
            asked = aggregator.rechecks() => {
                for name in asked {
                    if let Some(schedule) = schedules.get_mut(&name) {
                        let earliest = schedule.last.map_or(now, |last| last + RETRY);
                        schedule.due = schedule.due.min(earliest.max(now));
                    }
                }
                continue;
            }
            () = tokio::time::sleep_until(next.unwrap_or(now + INTERVAL)) => {}
        }
        let now = Instant::now();
        let registered = aggregator.registered();
        let due: Vec<(&Arc<Entry>, bool)> = (registered.entries().iter())
            .filter_map(|entry| {
                let schedule = schedules.get(entry.name())?;
                let documents = schedule.documents.is_none_or(|at| now >= at + DOCUMENTS);
                (schedule.due <= now).then_some((entry, documents))
            })
            .collect();
        let Some(strong) = registry.upgrade() else {
            return;
        };
        let checks = due.into_iter().map(|(entry, documents)| {
            let registry = &strong;
            async move { (entry, check(registry, entry, documents).await) }
        });
        for (entry, (available, fetched)) in futures_util::future::join_all(checks).await {
            let Some(schedule) = schedules.get_mut(entry.name()) else {
                continue;
            };
            let now = Instant::now();
            schedule.last = Some(now);
            if fetched {
                schedule.documents = Some(now);
            }
            if available {
                schedule.failures = 0;
                schedule.due = now + INTERVAL;
            } else {
                schedule.failures += 1;
                let pause = RETRY.saturating_mul(1 << schedule.failures.min(5).saturating_sub(1));
                schedule.due = now + pause.min(INTERVAL);
            }
        }
    }
}

/// Checks `entry`, writes its condition, and fetches its server's documents when
/// `documents`: whether it is available, and whether documents were fetched.
async fn check(registry: &Registry, entry: &Entry, documents: bool) -> (bool, bool) {
    let (condition, list) = probe(entry).await;
    record(entry, &condition);
    // A status that could not be written is checked again soon, as a failure is.
    let mut available = condition.status == "True";
    if let Err(error) = write_condition(registry, &entry.service, condition).await {
        tracing::warn!(apiservice = entry.name(), %error, "cannot write its status");
        available = false;
    }
    let (Some(list), Some(Ok(remote))) = (list, entry.remote()) else {
        return (available, false);
    };
    if !documents {
        return (available, false);
    }
    let spec = &entry.service.spec;
    entry.keep(Fetched {
        discovery: discovery(remote, &spec.group, &spec.version, &list)
            .await
            .map(Arc::new),
        openapi_v2: openapi_v2(remote).await.map(Arc::new),
        openapi_v3: openapi_v3(remote, &spec.group, &spec.version)
            .await
            .map(Arc::new),
    });
    (available, true)
}

/// kube's aggregator metrics: the gauge of unavailable APIServices, and a count of each
/// time one is marked unavailable (a change to `False`, by reason).
fn record(entry: &Entry, condition: &APIServiceCondition) {
    let metrics = kapi_metrics::global();
    let name = entry.name().to_owned();
    let unavailable = condition.status != "True";
    let labels = kapi_metrics::ApiServiceLabels { name: name.clone() };
    (metrics.unavailable_apiservices).with_or_new(&labels, |g| g.set(i64::from(unavailable)));
    let was_unavailable = (entry.service.available()).is_some_and(|c| c.status != "True");
    if unavailable && !was_unavailable {
        let labels = kapi_metrics::ApiServiceReasonLabels {
            name,
            reason: condition.reason.clone(),
        };
        (metrics.unavailable_apiservice_marks).with_or_new(&labels, |c| c.inc());
    }
}

fn condition(status: bool, reason: &str, message: String) -> APIServiceCondition {
    APIServiceCondition {
        r#type: AVAILABLE.into(),
        status: if status { "True" } else { "False" }.into(),
        last_transition_time: None,
        reason: reason.into(),
        message,
    }
}

/// The `Available` condition of `entry`, and the resource list its server answered.
async fn probe(entry: &Entry) -> (APIServiceCondition, Option<bytes::Bytes>) {
    let Some(remote) = entry.remote() else {
        let message = "Local APIServices are always available".to_owned();
        return (condition(true, "Local", message), None);
    };
    let remote = match remote {
        Ok(remote) => remote,
        Err(error) => {
            let reason = "FailedDiscoveryCheck";
            return (condition(false, reason, error.clone()), None);
        }
    };
    let spec = &entry.service.spec;
    let path = match spec.group.as_str() {
        "" => format!("/api/{}", spec.version),
        group => format!("/apis/{group}/{}", spec.version),
    };
    let url = format!("{}{path}", remote.base);
    let failed = |detail: String| {
        let message = format!("failing or missing response from {url}: {detail}");
        (condition(false, "FailedDiscoveryCheck", message), None)
    };
    match remote
        .fetch(&path, "application/json", Caller::Checker, TIMEOUT)
        .await
    {
        Ok((status, body)) if (200..300).contains(&status) => {
            let passed = "all checks passed".to_owned();
            (condition(true, "Passed", passed), Some(body))
        }
        Ok((status, _)) => failed(format!("bad status from {url}: {status}")),
        Err(error) => failed(error.to_string()),
    }
}

/// A document the server answers at `path`, as JSON (none on any failure).
async fn document(remote: &Remote, path: &str) -> Option<Document> {
    match remote
        .fetch(path, "application/json", Caller::Downloader, TIMEOUT)
        .await
    {
        Ok((200, body)) => Document::parse(&body),
        Ok(_) => None,
        Err(error @ FetchError::NotAPath(_)) => {
            tracing::warn!(base = %remote.base, %error, "a document names no path of its server");
            None
        }
        Err(_) => None,
    }
}

/// The group-version's aggregated discovery entry: from the server's own aggregated
/// `/apis` when it serves one, else made from its resource list.
async fn discovery(remote: &Remote, group: &str, version: &str, list: &[u8]) -> Option<Value> {
    const AGGREGATED: &str =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    if let Ok((200, body)) = (remote)
        .fetch("/apis", AGGREGATED, Caller::Downloader, TIMEOUT)
        .await
        && let Ok(document) = serde_json::from_slice::<Value>(&body)
        && document["kind"] == "APIGroupDiscoveryList"
    {
        let groups = document["items"].as_array().into_iter().flatten();
        let found = (groups.filter(|g| g["metadata"]["name"] == group))
            .flat_map(|g| g["versions"].as_array().into_iter().flatten())
            .find(|v| v["version"] == version);
        if let Some(found) = found {
            return Some(found.clone());
        }
    }
    let list: Value = serde_json::from_slice(list).ok()?;
    Some(crate::aggregator::version_entry(group, version, &list))
}

/// The server's `/openapi/v2`.
async fn openapi_v2(remote: &Remote) -> Option<Document> {
    document(remote, "/openapi/v2").await
}

/// The server's `/openapi/v3` document of the group-version, found through its index.
async fn openapi_v3(remote: &Remote, group: &str, version: &str) -> Option<Document> {
    let index = document(remote, "/openapi/v3").await?;
    let key = format!("apis/{group}/{version}");
    let url = index.value["paths"][key]["serverRelativeURL"].as_str()?;
    document(remote, url).await
}

/// Type, status, reason and message (kube's comparison of conditions).
fn same(a: &APIServiceCondition, b: &APIServiceCondition) -> bool {
    (&a.r#type, &a.status, &a.reason, &a.message) == (&b.r#type, &b.status, &b.reason, &b.message)
}

/// Writes `condition` into `service`'s status unless it already says so (a conflict or a
/// deletion meanwhile is left to the next check, which a conflict brings forward).
async fn write_condition(
    registry: &Registry,
    service: &APIService,
    condition: APIServiceCondition,
) -> Result<(), ApiError> {
    if service.available().is_some_and(|c| same(c, &condition)) {
        return Ok(());
    }
    let mut updated = service.clone();
    updated.set_condition(condition);
    let Some(kind) = registry.scheme().by_kind(GROUP, KIND) else {
        return Ok(());
    };
    let body = typed_body(&updated)?;
    let name = service.metadata.name.as_deref().unwrap_or_default();
    let target = Target {
        kind: &kind,
        version: "v1",
        namespace: None,
    };
    match (registry)
        .update(target, name, body, Some(Subresource::Status), &writes())
        .await
    {
        Ok(_) | Err(ApiError::NotFound { .. }) => Ok(()),
        Err(ApiError::Conflict { .. }) => Err(ApiError::Internal(
            "it changed meanwhile; checking again".into(),
        )),
        Err(error) => Err(error),
    }
}
