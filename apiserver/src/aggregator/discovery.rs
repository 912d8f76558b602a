//! Discovery with the other servers' groups merged in, as kube-aggregator serves it.
//!
//! - `/apis`, legacy (`APIGroupList`): the local groups as the router lists them, then each
//!   group of a remote APIService the router does not list, in kube's order (group
//!   priority, then name), its versions in their APIServices' order (version priority,
//!   then kube's version order), the first preferred. Unavailable APIServices are listed
//!   too, as kube lists them; clients then see their 503.
//! - `/apis`, aggregated (`APIGroupDiscoveryList`): each remote group-version's entry as
//!   its server's own aggregated discovery describes it (fetched by the availability
//!   controller), or, before it could be fetched, an empty entry marked `Stale`.
//! - `/apis/<group>` of a group with a remote APIService: the `APIGroup` of its
//!   APIServices.
//!
//! Merged documents carry their own entity tag (`If-None-Match` answers 304).

use std::cmp::Ordering;

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{CONTENT_TYPE, HeaderValue, IF_NONE_MATCH, VARY};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use super::{Entry, Registered};
use crate::http::ErrorResponse as _;
use crate::http::Next;
use crate::http::Prepared;
use kapi_core::api::version_order;
use kapi_kinds::apiregistration::APIService;

/// kube's `SortedByGroupAndVersion` order of all APIServices: group priority (highest
/// first), then name. Versions are ordered within their group by [`versions`].
pub(super) fn order(a: &APIService, b: &APIService) -> Ordering {
    (b.spec
        .group_priority_minimum
        .cmp(&a.spec.group_priority_minimum))
    .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// The groups of the APIServices, in the order of their first APIService, each with its
/// APIServices ordered by version priority, then version.
pub(super) fn groups(registered: &Registered) -> Vec<(&str, Vec<&Entry>)> {
    let mut groups: Vec<(&str, Vec<&Entry>)> = Vec::new();
    for entry in registered.entries() {
        let group = entry.service.spec.group.as_str();
        match groups.iter_mut().find(|(name, _)| *name == group) {
            Some((_, entries)) => entries.push(entry),
            None => groups.push((group, vec![entry])),
        }
    }
    for (_, entries) in &mut groups {
        entries.sort_by(|a, b| {
            let (a, b) = (&a.service.spec, &b.service.spec);
            (b.version_priority.cmp(&a.version_priority))
                .then_with(|| version_order::compare(&a.version, &b.version))
        });
    }
    groups
}

fn group_version(group: &str, version: &str) -> Value {
    json!({"groupVersion": format!("{group}/{version}"), "version": version})
}

/// An `APIGroup` (without kind, as in a list) of `entries`.
fn api_group(group: &str, entries: &[&Entry]) -> Value {
    let versions: Vec<Value> = (entries.iter())
        .map(|e| group_version(group, &e.service.spec.version))
        .collect();
    json!({
        "name": group,
        "versions": versions,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
    })
}

/// `/apis/<group>`.
pub(super) fn group(registered: &Registered, group: &str, headers: &HeaderMap) -> Response {
    let groups = groups(registered);
    let Some((_, entries)) = groups.iter().find(|(name, _)| *name == group) else {
        return kapi_core::error::ApiError::NoRoute.into_response();
    };
    let mut document = api_group(group, entries);
    document["kind"] = json!("APIGroup");
    document["apiVersion"] = json!("v1");
    respond(headers, json_bytes(&document), "application/json")
}

/// `/apis`: the router's answer, with the remote groups merged in.
pub(super) async fn apis(
    registered: &Registered,
    mut request: Request,
    next: impl Next,
) -> Response {
    let headers = request.headers().clone();
    // The merged document has its own tag: the router's answer must be whole.
    request.headers_mut().remove(IF_NONE_MATCH);
    let response = next.run(request).await;
    if response.status() != StatusCode::OK {
        return response;
    }
    let content_type = (response.headers().get(CONTENT_TYPE))
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let (parts, body) = response.into_parts();
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let Ok(mut document) = serde_json::from_slice::<Value>(&body) else {
        return Response::from_parts(parts, Body::from(body));
    };
    match document.get("kind").and_then(Value::as_str) {
        Some("APIGroupList") => merge_legacy(registered, &mut document),
        Some("APIGroupDiscoveryList") => merge_aggregated(registered, &mut document),
        _ => return Response::from_parts(parts, Body::from(body)),
    }
    respond(&headers, json_bytes(&document), &content_type)
}

/// Adds the remote groups (and remote versions of local groups) to an `APIGroupList`.
fn merge_legacy(registered: &Registered, document: &mut Value) {
    let Some(list) = document.get_mut("groups").and_then(Value::as_array_mut) else {
        return;
    };
    for (group, entries) in groups(registered) {
        if group.is_empty() || !entries.iter().any(|e| !e.service.is_local()) {
            continue;
        }
        let merged = api_group(group, &entries);
        match list.iter_mut().find(|g| g["name"] == group) {
            Some(existing) => *existing = merged,
            None => list.push(merged),
        }
    }
}

/// Adds each remote group-version's entry to an `APIGroupDiscoveryList`.
fn merge_aggregated(registered: &Registered, document: &mut Value) {
    let Some(items) = document.get_mut("items").and_then(Value::as_array_mut) else {
        return;
    };
    for (group, entries) in groups(registered) {
        if group.is_empty() || !entries.iter().any(|e| !e.service.is_local()) {
            continue;
        }
        let index = match items.iter().position(|g| g["metadata"]["name"] == group) {
            Some(index) => index,
            None => {
                items.push(
                    json!({"metadata": {"name": group, "creationTimestamp": null}, "versions": []}),
                );
                items.len() - 1
            }
        };
        let local: Vec<Value> = (items[index]["versions"].as_array())
            .cloned()
            .unwrap_or_default();
        let versions: Vec<Value> = (entries.iter())
            .filter_map(|entry| {
                let version = entry.service.spec.version.as_str();
                if entry.service.is_local() {
                    return local.iter().find(|v| v["version"] == version).cloned();
                }
                Some(match entry.fetched().discovery {
                    Some(fetched) => (*fetched).clone(),
                    None => json!({"version": version, "resources": [], "freshness": "Stale"}),
                })
            })
            .collect();
        items[index]["versions"] = Value::Array(versions);
    }
}

fn json_bytes(document: &Value) -> Vec<u8> {
    let mut body = serde_json::to_vec(document).unwrap_or_default();
    body.push(b'\n');
    body
}

/// 200 with `body` and its own entity tag, or 304 when the client has it; varying by
/// `Accept`.
pub(super) fn respond(headers: &HeaderMap, body: Vec<u8>, content_type: &str) -> Response {
    let mut response = Prepared::new(body).respond(headers, content_type);
    (response.headers_mut()).insert(VARY, HeaderValue::from_static("Accept"));
    response
}

/// The aggregated discovery entry (`APIVersionDiscovery`) of a group-version, made from
/// its legacy `APIResourceList` (for servers that do not serve aggregated discovery):
/// subresources (`webapps/status`) under their resource.
pub(crate) fn version_entry(group: &str, version: &str, list: &Value) -> Value {
    let resources = list["resources"].as_array().cloned().unwrap_or_default();
    let response_kind = |resource: &Value| {
        json!({
            "group": resource.get("group").and_then(Value::as_str).unwrap_or(group),
            "version": resource.get("version").and_then(Value::as_str).unwrap_or(version),
            "kind": resource["kind"],
        })
    };
    let mut entries: Vec<Value> = Vec::new();
    for resource in resources
        .iter()
        .filter(|r| !r["name"].as_str().unwrap_or("/").contains('/'))
    {
        let mut entry = json!({
            "resource": resource["name"],
            "responseKind": response_kind(resource),
            "scope": if resource["namespaced"] == true { "Namespaced" } else { "Cluster" },
            "singularResource": resource.get("singularName").cloned().unwrap_or(json!("")),
            "verbs": resource.get("verbs").cloned().unwrap_or(json!([])),
        });
        for key in ["shortNames", "categories"] {
            if let Some(value) = resource
                .get(key)
                .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
            {
                entry[key] = value.clone();
            }
        }
        let prefix = format!("{}/", resource["name"].as_str().unwrap_or_default());
        let subresources: Vec<Value> = (resources.iter())
            .filter_map(|sub| {
                let name = sub["name"].as_str()?.strip_prefix(&prefix)?;
                Some(json!({
                    "subresource": name,
                    "responseKind": response_kind(sub),
                    "verbs": sub.get("verbs").cloned().unwrap_or(json!([])),
                }))
            })
            .collect();
        if !subresources.is_empty() {
            entry["subresources"] = Value::Array(subresources);
        }
        entries.push(entry);
    }
    json!({"version": version, "resources": entries, "freshness": "Current"})
}

#[cfg(test)]
mod tests {
    use super::*;
    use kapi_kinds::apiregistration::APIServiceSpec;

    fn service(group: &str, version: &str, priorities: (i32, i32), remote: bool) -> APIService {
        let mut service = APIService {
            spec: APIServiceSpec {
                group: group.into(),
                version: version.into(),
                group_priority_minimum: priorities.0,
                version_priority: priorities.1,
                url: remote.then(|| "https://127.0.0.1:1".to_owned()),
                ..APIServiceSpec::default()
            },
            ..APIService::default()
        };
        service.metadata.name = Some(format!("{version}.{group}"));
        service
    }

    fn registered() -> std::sync::Arc<Registered> {
        let aggregator = super::super::Aggregator::new(None, None);
        aggregator.set(vec![
            service("metrics.example", "v1beta1", (100, 15), true),
            service("apps", "v1", (17800, 15), false),
            service("metrics.example", "v1", (100, 20), true),
            service("", "v1", (18000, 1), false),
        ]);
        aggregator.registered()
    }

    #[test]
    fn groups_and_versions_sort_as_kube_sorts_them() {
        let registered = registered();
        let groups: Vec<(&str, Vec<&str>)> = (groups(&registered).into_iter())
            .map(|(group, entries)| {
                let versions = entries.iter().map(|e| e.service.spec.version.as_str());
                (group, versions.collect())
            })
            .collect();
        assert_eq!(
            groups,
            [
                ("", vec!["v1"]),
                ("apps", vec!["v1"]),
                ("metrics.example", vec!["v1", "v1beta1"])
            ]
        );
        assert!(registered.is_remote_group("metrics.example"));
        assert!(!registered.is_remote_group("apps"));
        assert!(registered.remote("metrics.example", "v1beta1").is_some());
        assert!(registered.remote("apps", "v1").is_none());
    }

    #[test]
    fn remote_groups_join_the_local_documents() {
        let registered = registered();
        let mut legacy = json!({"kind": "APIGroupList", "groups": [{"name": "apps"}]});
        merge_legacy(&registered, &mut legacy);
        assert_eq!(
            legacy["groups"][1],
            json!({"name": "metrics.example",
                "versions": [
                    {"groupVersion": "metrics.example/v1", "version": "v1"},
                    {"groupVersion": "metrics.example/v1beta1", "version": "v1beta1"}
                ],
                "preferredVersion": {"groupVersion": "metrics.example/v1", "version": "v1"}})
        );
        assert_eq!(
            legacy["groups"].as_array().unwrap().len(),
            2,
            "no legacy v1"
        );

        let mut aggregated = json!({"kind": "APIGroupDiscoveryList", "items": []});
        merge_aggregated(&registered, &mut aggregated);
        assert_eq!(
            aggregated["items"][0]["versions"],
            json!([{"version": "v1", "resources": [], "freshness": "Stale"},
                {"version": "v1beta1", "resources": [], "freshness": "Stale"}])
        );
    }

    #[test]
    fn a_resource_list_becomes_an_aggregated_entry() {
        let list = json!({"resources": [
            {"name": "crontabs", "singularName": "crontab", "namespaced": true,
             "kind": "CronTab", "verbs": ["get", "list"], "shortNames": ["ct"]},
            {"name": "crontabs/status", "singularName": "", "namespaced": true,
             "kind": "CronTab", "verbs": ["get"]},
        ]});
        assert_eq!(
            version_entry("stable.example.com", "v1", &list),
            json!({"version": "v1", "freshness": "Current", "resources": [{
                "resource": "crontabs",
                "responseKind": {"group": "stable.example.com", "version": "v1", "kind": "CronTab"},
                "scope": "Namespaced", "singularResource": "crontab", "verbs": ["get", "list"],
                "shortNames": ["ct"],
                "subresources": [{"subresource": "status", "verbs": ["get"],
                    "responseKind": {"group": "stable.example.com", "version": "v1", "kind": "CronTab"}}]
            }]})
        );
    }
}
