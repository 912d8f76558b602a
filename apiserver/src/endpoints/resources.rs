//! The resource routes: every [`RouteBinding`] mounted on its path, its generic
//! [`Handler`] calling the [`Registry`].
//!
//! Each request: negotiate the response format (406 before any work), read the body
//! (3 MiB), decode the query options, decode the body by its media type, check it
//! addresses the path's object, call the registry, render the answer (object, list or
//! Table) with the version's deprecation warning and the write's warnings.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{FromRequestParts, Path, Request};
use axum::http::StatusCode;
use axum::http::header::USER_AGENT;
use axum::http::request::Parts;
use axum::response::Response;
use axum::routing::{MethodRouter, delete, get, head, options, patch, post, put};
use serde_json::Value;

use super::media::{self, Format, Output};
use super::params::{self, Query};
use super::{MAX_REQUEST_BODY_BYTES, Shared};
use crate::authn::UserInfo;
use crate::http::ErrorResponse as _;
use crate::http::add_warning;
use kapi_core::api::protobuf::ProtoMessage;
use kapi_core::api::{
    BodyKind, Handler, KindInfo, Method, RouteBinding, SubresourceShape, VersionInfo,
};
use kapi_core::error::ApiError;
use kapi_core::meta::{DELETE_OPTIONS_PROTO, DeleteOptions};
use kapi_core::scheme::KindEntry;
use kapi_registry::{GetOptions, ObjectList, SharedObject, Subresource, Target, Written};

/// One mounted route.
struct Endpoint {
    binding: &'static RouteBinding,
    /// Index of the kind in the registry's scheme.
    kind: usize,
    /// The names of the path template's parameters, in order (`namespace`, `name`).
    params: Vec<&'static str>,
    /// `Warning` text for every response of a deprecated version.
    deprecation: Option<String>,
    /// Mounted at a proxy's root with a trailing slash (`.../proxy/`): the rest of the
    /// path is there and empty.
    empty_path: bool,
}

/// The routes of `bindings`, grouped by path: one method router per path.
pub(super) fn router(bindings: &'static [RouteBinding], shared: &Arc<Shared>) -> Router {
    // Each path, and whether it is a proxy's root with a trailing slash (`.../proxy/`),
    // which the router's wildcard (`{*path}`) does not match: kube proxies it to `/`.
    let mut paths: BTreeMap<(&'static str, bool), Vec<&'static RouteBinding>> = BTreeMap::new();
    for binding in bindings {
        paths
            .entry((binding.route.path, false))
            .or_default()
            .push(binding);
        if binding.route.path.ends_with("/{path}") {
            paths
                .entry((binding.route.path, true))
                .or_default()
                .push(binding);
        }
    }
    let scheme = shared.registry.scheme();
    let mut router = Router::new();
    for ((path, empty_path), bindings) in paths {
        let (mut template, params) = axum_path(path);
        if empty_path {
            let root = template.rfind('/').map_or(0, |slash| slash + 1);
            template.truncate(root);
        }
        let mut methods = MethodRouter::new();
        let mut seen = Vec::new();
        for binding in bindings {
            let method = binding.route.method;
            assert!(
                !seen.contains(&method),
                "two routes for {} {path}",
                method.as_str()
            );
            seen.push(method);
            let info = binding.kind;
            let kind = (scheme.by_kind(info.group, info.kind))
                .and_then(|kind| scheme.slot_of(&kind))
                .unwrap_or_else(|| {
                    panic!(
                        "the route table names {}, which the scheme lacks",
                        info.kind
                    )
                });
            let endpoint = Arc::new(Endpoint {
                binding,
                kind,
                params: params.clone(),
                deprecation: info
                    .version(binding.version)
                    .and_then(|v| deprecation(info, v)),
                empty_path,
            });
            let shared = Arc::clone(shared);
            let handler = move |request: Request| serve(shared, endpoint, request);
            methods = match method {
                Method::Get => methods.merge(get(handler)),
                Method::Post => methods.merge(post(handler)),
                Method::Put => methods.merge(put(handler)),
                Method::Patch => methods.merge(patch(handler)),
                Method::Delete => methods.merge(delete(handler)),
                Method::Head => methods.merge(head(handler)),
                Method::Options => methods.merge(options(handler)),
            };
        }
        router = router.route(&template, methods.fallback(super::method_not_allowed));
    }
    router
}

/// The axum path of a template, its parameters renamed by position (`{p0}`, `{p1}`) so that
/// `/api/v1/namespaces/{name}` and `/api/v1/namespaces/{namespace}/configmaps` share a
/// node, as the router requires; and the template's names, in order. A `{path}` (a proxy's
/// `.../proxy/{path}`) takes the rest of the path, slashes included.
fn axum_path(template: &'static str) -> (String, Vec<&'static str>) {
    let mut path = String::with_capacity(template.len());
    let mut params = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        path.push_str(&rest[..start]);
        let wildcard = if &rest[start + 1..start + len] == "path" {
            "*"
        } else {
            ""
        };
        path.push_str(&format!("{{{wildcard}p{}}}", params.len()));
        params.push(&rest[start + 1..start + len]);
        rest = &rest[start + len + 1..];
    }
    path.push_str(rest);
    (path, params)
}

/// kube-apiserver's default warning for a deprecated version:
/// `apps.example.dev/v1beta1 WebApp is deprecated; use apps.example.dev/v1 WebApp`.
pub(super) fn deprecation(info: &KindInfo, version: &VersionInfo) -> Option<String> {
    if !version.deprecated {
        return None;
    }
    if let Some(text) = version.deprecation_warning.filter(|t| !t.is_empty()) {
        return Some(text.to_owned());
    }
    let api_version = |v: &str| info.api_version(v);
    let mut text = format!("{} {} is deprecated", api_version(version.name), info.kind);
    let replacement = (info.versions.iter())
        .filter(|v| v.served && !v.deprecated)
        .min_by(|a, b| version_priority(a.name, b.name));
    if let Some(replacement) = replacement {
        text.push_str(&format!(
            "; use {} {}",
            api_version(replacement.name),
            info.kind
        ));
    }
    Some(text)
}

/// Kubernetes' version order, most preferred first.
pub(crate) use kapi_routes::version_order::compare as version_priority;

async fn serve(shared: Arc<Shared>, endpoint: Arc<Endpoint>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let call = match path_names(&endpoint, &mut parts).await {
        Ok(names) => Call {
            kind: shared.registry.scheme().kind(endpoint.kind),
            version: endpoint.binding.version,
            handler: endpoint.binding.handler,
            subresource: endpoint.binding.route.subresource,
            names,
            deprecation: endpoint.deprecation.clone(),
        },
        Err(error) => return error.into_response(),
    };
    call.serve(&shared, parts, body).await
}

/// The path's `namespace`, `name` and (a proxy's) rest of the `path`.
pub(super) struct Names {
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub path: Option<String>,
}

/// A resource request resolved to what serves it: from a route of the table, or from the
/// scheme for a kind installed while the server runs (`super::dynamic`).
pub(super) struct Call<'a> {
    /// The kind (`None`: the route's kind is no longer served).
    pub kind: Option<Arc<kapi_core::scheme::KindEntry>>,
    /// The served version the request speaks.
    pub version: &'a str,
    /// What the request does.
    pub handler: Handler,
    /// The route's subresource (`status`, `exec`).
    pub subresource: Option<&'static str>,
    /// Namespace and name from the path.
    pub names: Names,
    /// `Warning` text for a deprecated version.
    pub deprecation: Option<String>,
}

impl Call<'_> {
    /// Answers the request, with the version's deprecation and the write's warnings.
    pub(super) async fn serve(self, shared: &Shared, parts: Parts, body: Body) -> Response {
        let mut warnings = Vec::new();
        // Errors in protobuf for a request whose answer would be protobuf, as kube's.
        let protobuf = (self.kind.as_deref())
            .and_then(|kind| protobuf_of(kind, self.version, self.handler))
            .filter(|_| media::prefers_protobuf(&parts.headers));
        let mut response = handle(shared, &self, parts, body, &mut warnings)
            .await
            .unwrap_or_else(|error| match protobuf {
                Some(_) => error.into_protobuf_response(),
                None => error.into_response(),
            });
        let headers = response.headers_mut();
        // Each text once, as kube's warning recorder keeps them (a write retried after a
        // conflict meets its warnings again).
        let mut seen = std::collections::HashSet::new();
        for warning in self.deprecation.iter().chain(&warnings) {
            if seen.insert(warning) {
                add_warning(headers, warning);
            }
        }
        response
    }
}

async fn path_names(endpoint: &Endpoint, parts: &mut Parts) -> Result<Names, ApiError> {
    let Path(values) = Path::<Vec<String>>::from_request_parts(parts, &())
        .await
        .map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let mut names = Names {
        namespace: None,
        name: None,
        path: endpoint.empty_path.then(String::new),
    };
    for (param, value) in endpoint.params.iter().zip(values) {
        match *param {
            "namespace" => names.namespace = Some(value),
            "name" => names.name = Some(value),
            "path" => names.path = Some(value),
            _ => {}
        }
    }
    Ok(names)
}

async fn handle(
    shared: &Shared,
    call: &Call<'_>,
    parts: Parts,
    body: Body,
    warnings: &mut Vec<String>,
) -> Result<Response, ApiError> {
    let user = parts.extensions.get::<UserInfo>().cloned();
    let names = &call.names;
    let query = Query::parse(parts.uri.query());
    let registry = &shared.registry;
    let kind = (call.kind.as_deref()).ok_or(ApiError::NoRoute)?;
    let target = Target {
        kind,
        version: call.version,
        namespace: names.namespace.as_deref(),
    };
    let name = names.name.as_deref().unwrap_or("");
    let headers = &parts.headers;
    let user_agent = headers.get(USER_AGENT).and_then(|v| v.to_str().ok());
    let handler = call.handler;
    // A read answered by a connector (`log`), whatever the client accepts.
    if handler == Handler::Read {
        return Box::pin(super::connect::serve(
            registry, call, target, &parts, warnings,
        ))
        .await;
    }
    let tables = matches!(
        handler,
        Handler::Get
            | Handler::GetStatus
            | Handler::GetOther
            | Handler::List
            | Handler::Watch
            | Handler::WatchList
    );
    let output = media::negotiate(
        headers,
        query.pretty()?,
        tables,
        protobuf_of(kind, call.version, handler),
    )?;
    let include_object = match output.format {
        Format::Table(_) => query.include_object()?,
        Format::Json | Format::Yaml | Format::Protobuf(_) => "",
    };

    // All but a GET's futures are boxed: inline, the largest (a patch's, over 5 KiB) would
    // size this future, and every request's future is moved through the handler chain a
    // few times (a GET's copies were a tenth of its instructions).
    match handler {
        Handler::Get | Handler::GetStatus | Handler::GetScale | Handler::GetOther => {
            let subresource = subresource(handler, call.subresource);
            let options = GetOptions {
                resource_version: query.string("resourceVersion"),
            };
            let object = (registry.get_with(target, name, subresource, &options)).await?;
            if let Format::Table(version) = output.format {
                let objects = [object.value()];
                let table = registry.table(target, &objects, None, include_object)?;
                return Ok(render_table(table, None, version, output));
            }
            let type_meta = (kind.api_version(target.version), kind.info.kind);
            Ok(media::respond_shared(
                &object,
                (&type_meta.0, type_meta.1),
                output,
            ))
        }
        Handler::List => {
            if query.watch()? {
                let mut options = query.watch_options()?;
                options.timeout = shared.watch_timeout(options.timeout);
                let registry = Arc::clone(registry);
                let watch = super::watch::serve(registry, target, options, output, include_object);
                return Box::pin(watch).await;
            }
            let options = query.list_options()?;
            let list = Box::pin(registry.list(target, &options)).await?;
            if let Format::Table(version) = output.format {
                if !output.pretty {
                    let api_version = version.api_version();
                    let chunks = registry.table_json(target, list, include_object, api_version)?;
                    return Ok(super::list::streamed(None, chunks, media::JSON));
                }
                let objects: Vec<Value> = list.items.iter().map(SharedObject::value).collect();
                let table = registry.table(target, &objects, Some(&list), include_object)?;
                return Ok(render_table(table, Some(&list), version, output));
            }
            Ok(super::list::render(target, list, output))
        }
        Handler::Watch | Handler::WatchList => {
            let mut options = query.watch_options()?;
            options.timeout = shared.watch_timeout(options.timeout);
            if let Some(name) = names.name.as_deref().filter(|_| handler == Handler::Watch) {
                options.field_selector = Some(match options.field_selector.take() {
                    Some(fields) => format!("{fields},metadata.name={name}"),
                    None => format!("metadata.name={name}"),
                });
            }
            let registry = Arc::clone(registry);
            Box::pin(super::watch::serve(
                registry,
                target,
                options,
                output,
                include_object,
            ))
            .await
        }
        Handler::Create => {
            let body = read_body(body).await?;
            let mut options = query.write_options("CreateOptions", user_agent)?;
            let protobuf = kind.info.protobuf(target.version);
            let (object, duplicates) = media::decode_object(headers, &body, protobuf)?;
            options.duplicate_fields = duplicates;
            options.user = user;
            let written = Box::pin(registry.create(target, object, &options)).await?;
            Ok(render_written(written, output, warnings))
        }
        Handler::Update
        | Handler::UpdateStatus
        | Handler::UpdateScale
        | Handler::UpdateFinalize
        | Handler::UpdateOther => {
            let body = read_body(body).await?;
            let mut options = query.write_options("UpdateOptions", user_agent)?;
            options.user = user;
            let scale = handler == Handler::UpdateScale;
            // A `Scale` is not the kind: its protobuf is not the kind's.
            let protobuf = kind.info.protobuf(target.version).filter(|_| !scale);
            let (object, duplicates) = media::decode_object(headers, &body, protobuf)?;
            options.duplicate_fields = duplicates;
            let subresource = subresource(handler, call.subresource);
            let update = registry.update(target, name, object, subresource, &options);
            let written = Box::pin(update).await?;
            Ok(render_written(written, output, warnings))
        }
        Handler::Patch | Handler::PatchStatus | Handler::PatchScale | Handler::PatchOther => {
            let body = read_body(body).await?;
            let patch_type = media::patch_type(headers)?;
            let mut options = query.patch_options(patch_type, user_agent)?;
            options.user = user;
            let (patch, duplicates) = media::decode_patch(patch_type, &body)?;
            options.duplicate_fields = duplicates;
            let subresource = subresource(handler, call.subresource);
            let patch = registry.patch(target, name, patch_type, patch, subresource, &options);
            let written = Box::pin(patch).await?;
            Ok(render_written(written, output, warnings))
        }
        Handler::Delete => {
            let body = read_body(body).await?;
            let options = delete_options(headers, &body, &query)?;
            let deleted =
                Box::pin(registry.delete_as(target, name, &options, user.as_ref())).await?;
            warnings.extend(deleted.warnings);
            // kube's 202: not gone yet, though the client asked its dependents to go first
            // (the deprecated `orphanDependents: false`).
            let status = match !deleted.gone && options.orphan_dependents == Some(false) {
                true => StatusCode::ACCEPTED,
                false => StatusCode::OK,
            };
            Ok(media::respond(status, &deleted.answer, output))
        }
        Handler::Read | Handler::Connect => {
            Box::pin(super::connect::serve(
                registry, call, target, &parts, warnings,
            ))
            .await
        }
        Handler::CreateOther => {
            let body = read_body(body).await?;
            let mut options = query.write_options("CreateOptions", user_agent)?;
            let body_kind = call.body_kind(kind).ok_or(ApiError::NoRoute)?;
            let (object, duplicates) = media::decode_object(headers, &body, body_kind.protobuf)?;
            options.duplicate_fields = duplicates;
            options.user = user;
            let subresource = call.subresource.unwrap_or_default();
            let create = registry.create_on(target, name, subresource, object, &options, warnings);
            let written = Box::pin(create).await?;
            Ok(render_written(written, output, warnings))
        }
        Handler::DeleteCollection => {
            let body = read_body(body).await?;
            let options = delete_options(headers, &body, &query)?;
            let list_options = query.list_options()?;
            let delete = registry.delete_collection(target, &list_options, &options, user.as_ref());
            let (list, admitted) = Box::pin(delete).await?;
            warnings.extend(admitted);
            Ok(super::list::render(target, list, output))
        }
    }
}

/// The protobuf message of what `handler` answers with for `kind` in `version`: the
/// version's own, but for the scale subresource (a `Scale`, which has none here).
fn protobuf_of(kind: &KindEntry, version: &str, handler: Handler) -> Option<&'static ProtoMessage> {
    match handler {
        Handler::GetScale | Handler::UpdateScale | Handler::PatchScale => None,
        Handler::CreateOther | Handler::Read | Handler::Connect => None,
        _ => kind.info.protobuf(version),
    }
}

/// The registry's subresource of a handler, on a route of subresource `name`.
fn subresource(handler: Handler, name: Option<&'static str>) -> Option<Subresource> {
    match handler {
        Handler::GetStatus | Handler::UpdateStatus | Handler::PatchStatus => {
            Some(Subresource::Status)
        }
        Handler::GetScale | Handler::UpdateScale | Handler::PatchScale => Some(Subresource::Scale),
        Handler::UpdateFinalize => Some(Subresource::Finalize),
        Handler::GetOther | Handler::UpdateOther | Handler::PatchOther => {
            name.map(Subresource::Fields)
        }
        _ => None,
    }
}

impl Call<'_> {
    /// The kind the route's `Create` subresource takes (`Eviction`).
    fn body_kind(&self, kind: &KindEntry) -> Option<&'static BodyKind> {
        let other = (self.subresource).and_then(|name| kind.info.subresources.other(name));
        match other.map(|o| &o.shape) {
            Some(SubresourceShape::Create(body)) => Some(body),
            _ => None,
        }
    }
}

/// Reads the body, up to kube-apiserver's 3 MiB.
async fn read_body(body: Body) -> Result<axum::body::Bytes, ApiError> {
    let limited = http_body_util::Limited::new(body, MAX_REQUEST_BODY_BYTES);
    match http_body_util::BodyExt::collect(limited).await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(
            ApiError::RequestEntityTooLarge(format!("limit is {MAX_REQUEST_BODY_BYTES}")),
        ),
        Err(e) => Err(ApiError::BadRequest(format!(
            "reading the request body: {e}"
        ))),
    }
}

/// `DeleteOptions` from the body (JSON, YAML or protobuf) when there is one, else from the
/// query.
fn delete_options(
    headers: &axum::http::HeaderMap,
    body: &[u8],
    query: &Query,
) -> Result<DeleteOptions, ApiError> {
    let options = if body.iter().all(u8::is_ascii_whitespace) {
        query.delete_options()?
    } else {
        let (value, _) = media::decode_object(headers, body, Some(&DELETE_OPTIONS_PROTO))?;
        serde_json::from_value(value).map_err(|e| {
            ApiError::BadRequest(format!("the body is not a valid DeleteOptions: {e}"))
        })?
    };
    params::validate_delete_options(&options)?;
    Ok(options)
}

fn render_written(mut written: Written, output: Output, warnings: &mut Vec<String>) -> Response {
    let status = if written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    warnings.extend(std::mem::take(&mut written.warnings));
    if let Some(json) = written.json().filter(|_| media::is_plain_json(output)) {
        return media::respond_json(status, json);
    }
    match written.into_object() {
        Ok(object) => media::respond(status, &object, output),
        Err(error) => error.into_response(),
    }
}

fn render_table(
    mut table: kapi_core::meta::Table,
    list: Option<&ObjectList>,
    version: media::TableVersion,
    output: Output,
) -> Response {
    table.kind = Some("Table".into());
    table.api_version = Some(version.api_version().into());
    if let Some(list) = list {
        let meta = super::list::list_meta(list);
        table.metadata.resource_version = table.metadata.resource_version.or(meta.resource_version);
        table.metadata.continue_ = table.metadata.continue_.or(meta.continue_);
        table.metadata.remaining_item_count =
            (table.metadata.remaining_item_count).or(meta.remaining_item_count);
    }
    media::respond(StatusCode::OK, &table, output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_rename_parameters_by_position() {
        assert_eq!(
            axum_path("/api/v1/namespaces/{namespace}/configmaps/{name}"),
            (
                "/api/v1/namespaces/{p0}/configmaps/{p1}".to_owned(),
                vec!["namespace", "name"]
            )
        );
        assert_eq!(
            axum_path("/apis/g/v1/tenants"),
            ("/apis/g/v1/tenants".to_owned(), vec![])
        );
    }

    #[test]
    fn versions_order_as_kubernetes_orders_them() {
        let mut versions = vec!["v1beta1", "foo", "v1alpha2", "v2", "v1", "v2beta1"];
        versions.sort_by(|a, b| version_priority(a, b));
        assert_eq!(
            versions,
            ["v2", "v1", "v2beta1", "v1beta1", "v1alpha2", "foo"]
        );
    }
}
