//! What each route of a group-version looks like as an OpenAPI operation, independent of
//! the OpenAPI version: parameters, body, responses, content types, as kube-apiserver
//! documents them (`/openapi/v3/apis/apps/v1` was the reference).

use kapi_core::api::{Action, Method, Route, SubresourceShape};
use serde_json::{Value, json};

use super::Error;
use super::schema::{DELETE_OPTIONS, PATCH, SCALE, STATUS, WATCH_EVENT};
use crate::{GroupVersionModel, ResourceModel};

/// JSON and YAML: what POST, PUT and DELETE bodies may be, and what responses are.
pub(crate) const JSON_YAML: &[&str] = &["application/json", "application/yaml"];

/// The patch types the server accepts, in kube-apiserver's order; it implements all four.
/// kubectl 1.32's client-side apply (and `edit`) sends a strategic merge patch when the
/// PATCH operation lists it (a merge patch otherwise), computed from the schemas'
/// `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key`, which the model derives
/// from the list types the server merges by (`patch_strategy::patch_strategies`). Server-side apply
/// (`kubectl apply --server-side`) sends `application/apply-patch+yaml`.
pub(crate) const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// What a connect consumes and produces: whatever the node or endpoint speaks.
const ANY: &[&str] = &["*/*"];

/// What a pod's `log` produces (kube's `LogREST`).
const LOG: &[&str] = &[
    "text/plain",
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// What list and watch operations respond with: a watch (`?watch=true`) streams events.
const STREAMING: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/json;stream=watch",
];

/// One path of a group-version document.
#[derive(Debug)]
pub(crate) struct PathPlan {
    /// `/apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}`.
    pub path: &'static str,
    /// Parameters every operation of the path takes (path parameters, `pretty`, and all
    /// of them when the path has a single GET), sorted by name.
    pub parameters: Vec<Param>,
    /// The operations, in route order.
    pub operations: Vec<OperationPlan>,
}

/// One route as an operation.
#[derive(Debug)]
pub(crate) struct OperationPlan {
    /// The route.
    pub route: &'static Route,
    /// `read the specified WebApp`.
    pub description: String,
    /// `appsExampleDev_v1`: kube's tag for the group-version.
    pub tag: String,
    /// The operation's `x-kubernetes-group-version-kind` (an object).
    pub gvk: Value,
    /// The parameters the path item does not already give, sorted by name.
    pub parameters: Vec<Param>,
    /// The request body, for POST, PUT, PATCH and DELETE.
    pub body: Option<Body>,
    /// Responses, by status code.
    pub responses: Vec<Response>,
    /// Response content types.
    pub produces: &'static [&'static str],
    /// The version is deprecated (served with a Warning header).
    pub deprecated: bool,
}

/// A path or query parameter.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Param {
    /// Its name.
    pub name: &'static str,
    /// Path or query.
    pub location: Location,
    /// Documentation.
    pub description: String,
    /// `string`, `integer` or `boolean`.
    pub param_type: &'static str,
}

impl Param {
    /// Path parameters are required, query parameters are not.
    pub(super) fn required(&self) -> bool {
        self.location == Location::Path
    }
}

/// Where a parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    /// In the path template.
    Path,
    /// In the query string.
    Query,
}

impl Location {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
        }
    }
}

/// A request body.
#[derive(Debug)]
pub(crate) struct Body {
    /// Qualified schema name.
    pub schema: String,
    /// DELETE bodies are optional.
    pub required: bool,
    /// Accepted content types.
    pub consumes: &'static [&'static str],
}

/// One response.
#[derive(Debug)]
pub(crate) struct Response {
    /// HTTP status code.
    pub code: u16,
    /// `OK`, `Created`, ...
    pub description: &'static str,
    /// Qualified schema name of the body, if it has one.
    pub schema: Option<String>,
    /// The body is text (`{"type": "string"}`: a log, what a connect answers).
    pub text: bool,
}

/// The paths of a group-version, sorted by path.
pub(crate) fn plan(gv: &GroupVersionModel) -> Result<Vec<PathPlan>, Error> {
    let mut paths: Vec<PathPlan> = Vec::new();
    for resource in &gv.resources {
        for route in resource.routes() {
            let operation = operation(gv, resource, route);
            match paths.iter_mut().find(|p| p.path == route.path) {
                Some(path) => {
                    if let Some(other) = path
                        .operations
                        .iter()
                        .find(|o| o.route.method == route.method)
                    {
                        return Err(Error::DuplicateRoute {
                            method: route.method.as_str(),
                            path: route.path.to_owned(),
                            first: other.route.operation_id.to_owned(),
                            second: route.operation_id.to_owned(),
                        });
                    }
                    path.operations.push(operation);
                }
                None => paths.push(PathPlan {
                    path: route.path,
                    parameters: Vec::new(),
                    operations: vec![operation],
                }),
            }
        }
    }
    paths.iter_mut().for_each(hoist_common_parameters);
    paths.sort_by_key(|p| p.path);
    Ok(paths)
}

/// Moves the parameters every operation of a path takes to the path item, as kube does.
/// Query parameters stay on PATCH operations: kubectl 1.32 looks for `fieldValidation`
/// there (and only there) to decide whether the server validates fields.
fn hoist_common_parameters(path: &mut PathPlan) {
    let only_get = path.operations.len() == 1 && path.operations[0].route.method == Method::Get;
    let first = &path.operations[0];
    let common: Vec<Param> = (first.parameters.iter())
        .filter(|p| p.location == Location::Path || p.name == "pretty" || only_get)
        .filter(|p| path.operations.iter().all(|o| o.parameters.contains(p)))
        .cloned()
        .collect();
    for operation in &mut path.operations {
        operation.parameters.retain(|p| !common.contains(p));
    }
    path.parameters = common;
    path.parameters.sort_by_key(|p| p.name);
}

fn operation(
    gv: &GroupVersionModel,
    resource: &ResourceModel,
    route: &'static Route,
) -> OperationPlan {
    let kind = resource.kind.kind;
    let scale = route.subresource == Some("scale");
    let other = (route.subresource)
        .and_then(|name| resource.kind.subresources.other(name))
        .map(|other| &other.shape);
    // What the route's `name` names, and the kind of its operation.
    let (object_schema, gvk, named) = match other {
        _ if scale => (
            SCALE.to_owned(),
            json!({"group": "autoscaling", "kind": "Scale", "version": "v1"}),
            "Scale",
        ),
        Some(SubresourceShape::Create(body)) => {
            let name = route.subresource.unwrap_or_default();
            let schema = (resource.bodies.iter()).find(|(sub, _)| *sub == name);
            let gvk = json!({"group": body.group, "kind": body.kind, "version": body.version});
            (
                schema.map(|(_, s)| s.clone()).unwrap_or_default(),
                gvk,
                body.kind,
            )
        }
        Some(SubresourceShape::Connect { options, .. }) => {
            let gvk = json!({"group": gv.group, "kind": options, "version": gv.version});
            (String::new(), gvk, *options)
        }
        _ => {
            let gvk = json!({"group": gv.group, "kind": kind, "version": gv.version});
            (resource.schema_name.clone(), gvk, kind)
        }
    };

    let mut parameters = Vec::new();
    if route.is_namespaced() {
        parameters.push(path_param(
            "namespace",
            "object name and auth scope, such as for teams and projects".into(),
        ));
    }
    if route.is_object() {
        parameters.push(path_param("name", format!("name of the {named}")));
    }
    if route.path.ends_with("{path}") {
        parameters.push(path_param("path", "path to the resource".into()));
    }
    parameters.extend(
        query_params(route.action)
            .iter()
            .map(|&name| query_param(name, route.action)),
    );
    parameters.push(query_param("pretty", route.action));
    parameters.sort_by_key(|p| p.name);

    let (body, responses, produces) = match route.action {
        Action::Get if matches!(other, Some(SubresourceShape::Read)) => (None, text(), LOG),
        Action::Connect => (None, text(), ANY),
        Action::Get => (None, ok(&[(200, "OK")], &object_schema), JSON_YAML),
        Action::List => (
            None,
            ok(&[(200, "OK")], &resource.list_schema_name),
            STREAMING,
        ),
        Action::Watch | Action::WatchList => (None, ok(&[(200, "OK")], WATCH_EVENT), STREAMING),
        Action::Create => (
            Some(body(&object_schema, true, JSON_YAML)),
            ok(
                &[(200, "OK"), (201, "Created"), (202, "Accepted")],
                &object_schema,
            ),
            JSON_YAML,
        ),
        Action::Update => (
            Some(body(&object_schema, true, JSON_YAML)),
            ok(&[(200, "OK"), (201, "Created")], &object_schema),
            JSON_YAML,
        ),
        Action::Patch => (
            Some(body(PATCH, true, PATCH_TYPES)),
            ok(&[(200, "OK"), (201, "Created")], &object_schema),
            JSON_YAML,
        ),
        Action::Delete => (
            Some(body(DELETE_OPTIONS, false, JSON_YAML)),
            ok(&[(200, "OK"), (202, "Accepted")], STATUS),
            JSON_YAML,
        ),
        Action::DeleteCollection => (
            Some(body(DELETE_OPTIONS, false, JSON_YAML)),
            ok(&[(200, "OK")], STATUS),
            JSON_YAML,
        ),
    };
    OperationPlan {
        route,
        description: description(route, kind),
        tag: tag(route.path),
        gvk,
        parameters,
        body,
        responses,
        produces,
        deprecated: resource.version.deprecated,
    }
}

fn body(schema: &str, required: bool, consumes: &'static [&'static str]) -> Body {
    Body {
        schema: schema.to_owned(),
        required,
        consumes,
    }
}

/// The given responses with `schema`, and `401 Unauthorized`.
fn ok(codes: &[(u16, &'static str)], schema: &str) -> Vec<Response> {
    let mut responses: Vec<Response> = (codes.iter())
        .map(|&(code, description)| Response {
            code,
            description,
            schema: Some(schema.to_owned()),
            text: false,
        })
        .collect();
    responses.push(Response {
        code: 401,
        description: "Unauthorized",
        schema: None,
        text: false,
    });
    responses
}

/// `200 OK` with text, and `401 Unauthorized`.
fn text() -> Vec<Response> {
    let mut responses = ok(&[(200, "OK")], "");
    responses[0].schema = None;
    responses[0].text = true;
    responses
}

/// kube-apiserver's descriptions (`installer.go`).
fn description(route: &Route, kind: &str) -> String {
    let of = route
        .subresource
        .map(|s| format!("{s} of "))
        .unwrap_or_default();
    match route.action {
        Action::Get => format!("read {of}the specified {kind}"),
        Action::List => format!("list or watch objects of kind {kind}"),
        Action::Create if route.subresource.is_some() => format!("create {of}a {kind}"),
        Action::Create => format!("create a {kind}"),
        Action::Connect => format!("connect {} requests to {of}{kind}", route.method.as_str()),
        Action::Update => format!("replace {of}the specified {kind}"),
        Action::Patch => format!("partially update {of}the specified {kind}"),
        Action::Delete => format!("delete a {kind}"),
        Action::DeleteCollection => format!("delete collection of {kind}"),
        Action::Watch => format!(
            "watch changes to an object of kind {kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."
        ),
        Action::WatchList => format!(
            "watch individual changes to a list of {kind}. deprecated: use the 'watch' parameter with a list operation instead."
        ),
    }
}

const LIST: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];

/// The query parameters of an action, besides `pretty` (which every operation takes).
/// As kube-apiserver has them, minus `orphanDependents` (deprecated) and
/// `ignoreStoreReadErrorWithClusterBreakingPotential` (no corrupt-object deletion here).
pub(crate) fn query_params(action: Action) -> &'static [&'static str] {
    match action {
        Action::Get | Action::Connect => &[],
        Action::List | Action::Watch | Action::WatchList => LIST,
        Action::Create | Action::Update => &["dryRun", "fieldManager", "fieldValidation"],
        Action::Patch => &["dryRun", "fieldManager", "fieldValidation", "force"],
        Action::Delete => &["dryRun", "gracePeriodSeconds", "propagationPolicy"],
        Action::DeleteCollection => &[
            "continue",
            "dryRun",
            "fieldSelector",
            "gracePeriodSeconds",
            "labelSelector",
            "limit",
            "propagationPolicy",
            "resourceVersion",
            "resourceVersionMatch",
            "sendInitialEvents",
            "timeoutSeconds",
        ],
    }
}

fn path_param(name: &'static str, description: String) -> Param {
    Param {
        name,
        location: Location::Path,
        description,
        param_type: "string",
    }
}

/// A query parameter, typed and documented.
fn query_param(name: &'static str, action: Action) -> Param {
    let (param_type, description) = match name {
        "allowWatchBookmarks" => (
            "boolean",
            "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Bookmarks are sent at the server's discretion: clients must not assume they arrive at any interval, or at all. Ignored unless this is a watch.",
        ),
        "continue" => (
            "string",
            "The continue token of a previous, truncated list result with the same query: the list resumes after its last item, from the same snapshot. An expired token gives 410 Gone. Not supported with watch.",
        ),
        "fieldSelector" => (
            "string",
            "A selector to restrict the list of returned objects by their fields (metadata.name, metadata.namespace and the kind's selectable fields). Defaults to everything.",
        ),
        "labelSelector" => (
            "string",
            "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
        ),
        "limit" => (
            "integer",
            "The maximum number of items to return. When more exist, the list's metadata carries a continue token for the next page. Not supported with watch.",
        ),
        "resourceVersion" => (
            "string",
            "Constrains the resource version the request is served from: unset or 0 for the latest; for a watch, the events after it. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions.",
        ),
        "resourceVersionMatch" => (
            "string",
            "How resourceVersion applies to a list: NotOlderThan or Exact. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions.",
        ),
        "sendInitialEvents" => (
            "boolean",
            "With watch=true, start the stream with synthetic ADDED events for the objects that exist, then a BOOKMARK event annotated \"k8s.io/initial-events-end\": \"true\". Requires resourceVersionMatch=NotOlderThan.",
        ),
        "timeoutSeconds" => (
            "integer",
            "Timeout for the list/watch call, in seconds, regardless of activity.",
        ),
        "watch" => (
            "boolean",
            "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.",
        ),
        "dryRun" => (
            "string",
            "When present, the request is processed but not persisted. Valid values: All (every dry run stage is processed).",
        ),
        "fieldManager" if action == Action::Patch => (
            "string",
            "The name of the actor making these changes, recorded in managedFields: at most 128 printable characters.",
        ),
        "fieldManager" => (
            "string",
            "The name of the actor making these changes, recorded in managedFields: at most 128 printable characters.",
        ),
        "fieldValidation" => (
            "string",
            "How to treat unknown or duplicate fields in the request body: Ignore drops them silently, Warn drops them with a Warning header for each (the default), Strict fails the request with BadRequest listing them all.",
        ),
        "force" => (
            "boolean",
            "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.",
        ),
        "gracePeriodSeconds" => (
            "integer",
            "The duration in seconds before the object should be deleted: a non-negative integer, zero meaning immediately. Unset uses the kind's default.",
        ),
        "propagationPolicy" => (
            "string",
            "Whether and how dependents are garbage-collected: Orphan, Background or Foreground.",
        ),
        // `pretty`.
        _ => ("string", "If 'true', then the output is pretty printed."),
    };
    Param {
        name,
        location: Location::Query,
        description: description.to_owned(),
        param_type,
    }
}

/// kube-apiserver's tag of a path: `appsExampleDev_v1`, `core_v1`
/// (`GetOperationIDAndTags` in `k8s.io/apiserver/pkg/endpoints/openapi`).
pub(crate) fn tag(path: &str) -> String {
    let parts = path_parts(path);
    match parts.as_slice() {
        ["apis", group, version, ..] => format!(
            "{}_{}",
            valid_operation_id(group, false),
            valid_operation_id(version, false)
        ),
        ["apis", group] => valid_operation_id(group, false),
        [first, ..] => valid_operation_id(first, false),
        [] => String::new(),
    }
}

/// The verbs kube-apiserver's operation ids start with.
const VERBS: &[&str] = &[
    "get",
    "log",
    "read",
    "replace",
    "patch",
    "delete",
    "deletecollection",
    "watch",
    "connect",
    "proxy",
    "list",
    "create",
];

/// kube-apiserver's document-wide operation id: the route's (`listNamespacedWebApp`) with
/// the group and version after the verb (`listAppsExampleDevV1NamespacedWebApp`,
/// `deleteCoreV1CollectionNamespacedConfigMap`), as `GetOperationIDAndTags` makes it.
pub(crate) fn kube_operation_id(route: &Route) -> Result<String, Error> {
    // The shortest verb the id starts with, as kube's trie finds it: `deletecollection...`
    // is `delete` + `collection...`.
    let verb = (VERBS.iter())
        .filter(|v| route.operation_id.starts_with(**v))
        .min_by_key(|v| v.len())
        .ok_or_else(|| Error::OperationVerb(route.operation_id.to_owned()))?;
    let rest = &route.operation_id[verb.len()..];
    let mut id = (*verb).to_owned();
    if let ["apis", group, tail @ ..] = path_parts(route.path).as_slice() {
        id.push_str(&valid_operation_id(group, true));
        if let [version, ..] = tail {
            id.push_str(&valid_operation_id(version, true));
        }
    }
    id.push_str(&valid_operation_id(rest, true));
    Ok(id)
}

/// The segments of a path, with `/api/...` read as `/apis/core/...` and `.k8s.io` trimmed
/// from group names, as kube does.
fn path_parts(path: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    if parts.first() == Some(&"api") {
        parts.splice(0..1, ["apis", "core"]);
    }
    if parts.first() == Some(&"apis")
        && let Some(group) = parts.get_mut(1)
    {
        *group = group.strip_suffix(".k8s.io").unwrap_or(group);
    }
    parts
}

/// kube's `ToValidOperationID`: drops what is not a letter, `_` or a non-leading digit,
/// capitalizing the letter after each dropped character (and the first, if asked).
fn valid_operation_id(s: &str, capitalize_first: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut capitalize = capitalize_first;
    for (i, c) in s.char_indices() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_numeric()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use kapi_core::api::{Action, Method, Route};

    use super::*;

    fn route(path: &'static str, operation_id: &'static str) -> Route {
        Route {
            method: Method::Get,
            path,
            action: Action::Get,
            subresource: None,
            operation_id,
        }
    }

    #[track_caller]
    fn check(
        path: &'static str,
        operation_id: &'static str,
        expected_id: &str,
        expected_tag: &str,
    ) {
        let route = route(path, operation_id);
        assert_eq!(kube_operation_id(&route).unwrap(), expected_id);
        assert_eq!(tag(path), expected_tag);
    }

    #[test]
    fn operation_ids_and_tags_follow_kube() {
        // Kube's own documents: the route ids of the installer, and what kube-apiserver
        // serves for them.
        check(
            "/apis/apps/v1/namespaces/{namespace}/replicasets",
            "listNamespacedReplicaSet",
            "listAppsV1NamespacedReplicaSet",
            "apps_v1",
        );
        check(
            "/apis/apps/v1/namespaces/{namespace}/replicasets",
            "deletecollectionNamespacedReplicaSet",
            "deleteAppsV1CollectionNamespacedReplicaSet",
            "apps_v1",
        );
        check(
            "/apis/apps/v1/watch/replicasets",
            "watchReplicaSetListForAllNamespaces",
            "watchAppsV1ReplicaSetListForAllNamespaces",
            "apps_v1",
        );
        check(
            "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
            "patchNamespacedDeploymentScale",
            "patchAppsV1NamespacedDeploymentScale",
            "apps_v1",
        );
        check(
            "/api/v1/namespaces/{namespace}/resourcequotas",
            "createNamespacedResourceQuota",
            "createCoreV1NamespacedResourceQuota",
            "core_v1",
        );
        check(
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}",
            "readClusterRole",
            "readRbacAuthorizationV1ClusterRole",
            "rbacAuthorization_v1",
        );
        // Ours.
        check(
            "/apis/apps.example.dev/v1/namespaces/{namespace}/webapps",
            "listNamespacedWebApp",
            "listAppsExampleDevV1NamespacedWebApp",
            "appsExampleDev_v1",
        );
        check(
            "/apis/apps.example.dev/v1beta1/namespaces/{namespace}/webapps/{name}/status",
            "replaceNamespacedWebAppStatus",
            "replaceAppsExampleDevV1beta1NamespacedWebAppStatus",
            "appsExampleDev_v1beta1",
        );
        check(
            "/apis/platform.example.dev/v1/tenants/{name}",
            "readTenant",
            "readPlatformExampleDevV1Tenant",
            "platformExampleDev_v1",
        );
        check(
            "/api/v1/namespaces/{namespace}/configmaps",
            "listNamespacedConfigMap",
            "listCoreV1NamespacedConfigMap",
            "core_v1",
        );
    }

    #[test]
    fn operation_ids_need_a_verb() {
        let route = route("/api/v1/things", "frobnicateThing");
        assert_eq!(
            kube_operation_id(&route),
            Err(Error::OperationVerb("frobnicateThing".into()))
        );
    }
}
