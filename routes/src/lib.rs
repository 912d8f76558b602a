//! The routes kube-apiserver's installer (`k8s.io/apiserver/pkg/endpoints/installer.go`)
//! registers for a kind in one version: one implementation for the derive, which writes
//! them into each compiled kind's `&'static` description at expansion time, and for the
//! runtime, which computes them for the kinds CustomResourceDefinitions define.
//!
//! Operation ids follow the installer: `<verb><Namespaced?><Kind><Subresource?><List?>` plus
//! `ForAllNamespaces` on the cross-namespace routes (`listNamespacedWebApp`,
//! `watchWebAppListForAllNamespaces`, `readNamespacedWebAppStatus`). They are unique within a
//! group-version, which OpenAPI needs.
//!
//! Order is fixed so the expansion is deterministic: collection, object, all-namespaces,
//! the deprecated `/watch/` routes, the `status` and `scale` subresources, `finalize`, then
//! the kind's other subresources in declaration order ([`Other`]: kube's `approval`,
//! `binding`, `eviction`, `log`, `exec`, `proxy`, ...).

pub mod version_order;

/// HTTP method of a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// GET
    Get,
    /// POST
    Post,
    /// PUT
    Put,
    /// PATCH
    Patch,
    /// DELETE
    Delete,
    /// HEAD (only proxies connect it)
    Head,
    /// OPTIONS (only proxies connect it)
    Options,
}

impl Method {
    /// The method of an upper-case HTTP method name (`GET`), if routes take it.
    pub fn from_http(name: &str) -> Option<Method> {
        Some(match name {
            "GET" => Method::Get,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "DELETE" => Method::Delete,
            "HEAD" => Method::Head,
            "OPTIONS" => Method::Options,
            _ => return None,
        })
    }

    /// Upper-case name, as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Head => "HEAD",
            Method::Options => "OPTIONS",
        }
    }
}

/// What a route does: kube-apiserver's `x-kubernetes-action`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Read one object.
    Get,
    /// List a collection (and watch it with `?watch=true`).
    List,
    /// Create an object in a collection (`post`).
    Create,
    /// Replace an object (`put`).
    Update,
    /// Patch an object.
    Patch,
    /// Delete an object.
    Delete,
    /// Delete the objects of a collection that match the selectors.
    DeleteCollection,
    /// Watch one object: the deprecated `/watch/.../{name}` path.
    Watch,
    /// Watch a collection: the deprecated `/watch/...` path.
    WatchList,
    /// Connect to what serves the object (a node's kubelet, a Service's endpoints):
    /// kube's `exec`, `attach`, `portforward` and `proxy` subresources.
    Connect,
}

impl Action {
    /// The value of `x-kubernetes-action`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Get => "get",
            Action::List => "list",
            Action::Create => "post",
            Action::Update => "put",
            Action::Patch => "patch",
            Action::Delete => "delete",
            Action::DeleteCollection => "deletecollection",
            Action::Watch => "watch",
            Action::WatchList => "watchlist",
            Action::Connect => "connect",
        }
    }

    /// The authorization / discovery verb the action belongs to (a connect's depends on
    /// its method: [`Route::verb`]).
    pub fn verb(self) -> &'static str {
        match self {
            Action::Get => "get",
            Action::List => "list",
            Action::Create => "create",
            Action::Update => "update",
            Action::Patch => "patch",
            Action::Delete => "delete",
            Action::DeleteCollection => "deletecollection",
            Action::Watch | Action::WatchList => "watch",
            Action::Connect => "get",
        }
    }
}

/// What the routes of one version depend on.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// `apps.example.dev`, or empty for the core group.
    pub group: &'a str,
    /// `v1`.
    pub version: &'a str,
    /// `WebApp`.
    pub kind: &'a str,
    /// `webapps`.
    pub plural: &'a str,
    /// Routes live under `/namespaces/{namespace}/`.
    pub namespaced: bool,
    /// The kind has a `status` subresource.
    pub status: bool,
    /// The kind has a `scale` subresource.
    pub scale: bool,
    /// The kind has a `finalize` subresource (replaced only, as kube's namespaces).
    pub finalize: bool,
    /// The kind is only created (kube's reviews): one `POST` on the collection.
    pub create_only: bool,
    /// The kind's objects are made when read (kube's ComponentStatuses): a list of the
    /// collection and a get of an object, nothing else (no watch).
    pub read_only: bool,
    /// The kind's other subresources, in declaration order.
    pub others: &'a [Other<'a>],
}

/// A subresource beside `status`, `scale` and `finalize`, by the routes it has.
#[derive(Clone, Copy, Debug)]
pub struct Other<'a> {
    /// `approval`, `binding`, `exec`: a path segment.
    pub name: &'a str,
    /// Its routes.
    pub shape: Shape<'a>,
}

/// The routes of a subresource, as kube's installer makes them from what its storage does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape<'a> {
    /// Read, replaced and patched, as `status` (kube's `approval`, `ephemeralcontainers`).
    View,
    /// Only created: a `POST` of another kind's object about the object (kube's
    /// `binding`, `eviction`, `token`).
    Create,
    /// Only read (kube's `log`).
    Read,
    /// Connected to with these methods (kube's `exec`: `GET` and `POST`), also under a
    /// trailing `/{path}` when `path` is set (kube's `proxy`).
    Connect {
        /// The methods, in kube's order.
        methods: &'a [Method],
        /// Whether a second route takes the rest of the path (`.../proxy/{path}`).
        path: bool,
    },
}

/// One route, owned: the derive writes it into a `kapi::api::Route`, the runtime
/// leaks it into one for a kind it installs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// HTTP method.
    pub method: Method,
    /// Path template with `{namespace}` and `{name}` parameters.
    pub path: String,
    /// What the route does.
    pub action: Action,
    /// `status`, `scale`, `finalize` or another subresource's name, for subresource routes.
    pub subresource: Option<String>,
    /// The installer's operation id (`listNamespacedWebApp`).
    pub operation_id: String,
}

/// Every route of one kind in one version.
pub fn routes(input: &Input) -> Vec<Route> {
    let Input {
        kind,
        plural,
        namespaced,
        ..
    } = *input;
    let prefix = if input.group.is_empty() {
        // The core group predates API groups and keeps its legacy prefix (always `v1`).
        format!("/api/{}", input.version)
    } else {
        format!("/apis/{}/{}", input.group, input.version)
    };
    // `Namespaced` in operation ids and the `/namespaces/{namespace}` path segment come
    // together, as in the installer's `namespaced` string.
    let (scope_path, ns) = if namespaced {
        ("/namespaces/{namespace}", "Namespaced")
    } else {
        ("", "")
    };
    let collection = format!("{prefix}{scope_path}/{plural}");
    let object = format!("{collection}/{{name}}");
    let watch_collection = format!("{prefix}/watch{scope_path}/{plural}");

    let route =
        |method, path: &str, action, subresource: Option<&str>, operation_id: String| Route {
            method,
            path: path.to_owned(),
            action,
            subresource: subresource.map(str::to_owned),
            operation_id,
        };
    if input.create_only {
        let create = format!("create{ns}{kind}");
        return vec![route(
            Method::Post,
            &collection,
            Action::Create,
            None,
            create,
        )];
    }
    if input.read_only {
        return vec![
            route(
                Method::Get,
                &collection,
                Action::List,
                None,
                format!("list{ns}{kind}"),
            ),
            route(
                Method::Get,
                &object,
                Action::Get,
                None,
                format!("read{ns}{kind}"),
            ),
        ];
    }
    let mut routes = vec![
        route(
            Method::Get,
            &collection,
            Action::List,
            None,
            format!("list{ns}{kind}"),
        ),
        route(
            Method::Post,
            &collection,
            Action::Create,
            None,
            format!("create{ns}{kind}"),
        ),
        route(
            Method::Delete,
            &collection,
            Action::DeleteCollection,
            None,
            format!("deletecollection{ns}{kind}"),
        ),
        route(
            Method::Get,
            &object,
            Action::Get,
            None,
            format!("read{ns}{kind}"),
        ),
        route(
            Method::Put,
            &object,
            Action::Update,
            None,
            format!("replace{ns}{kind}"),
        ),
        route(
            Method::Patch,
            &object,
            Action::Patch,
            None,
            format!("patch{ns}{kind}"),
        ),
        route(
            Method::Delete,
            &object,
            Action::Delete,
            None,
            format!("delete{ns}{kind}"),
        ),
    ];
    if namespaced {
        routes.push(route(
            Method::Get,
            &format!("{prefix}/{plural}"),
            Action::List,
            None,
            format!("list{kind}ForAllNamespaces"),
        ));
    }
    routes.push(route(
        Method::Get,
        &watch_collection,
        Action::WatchList,
        None,
        format!("watch{ns}{kind}List"),
    ));
    routes.push(route(
        Method::Get,
        &format!("{watch_collection}/{{name}}"),
        Action::Watch,
        None,
        format!("watch{ns}{kind}"),
    ));
    if namespaced {
        routes.push(route(
            Method::Get,
            &format!("{prefix}/watch/{plural}"),
            Action::WatchList,
            None,
            format!("watch{kind}ListForAllNamespaces"),
        ));
    }
    let subresources = [
        (input.status, "status", "Status"),
        (input.scale, "scale", "Scale"),
    ];
    for (_, name, title) in subresources.into_iter().filter(|(present, ..)| *present) {
        // Subresources are read, replaced and patched; they have no collection routes.
        let path = format!("{object}/{name}");
        for (method, action, verb) in [
            (Method::Get, Action::Get, "read"),
            (Method::Put, Action::Update, "replace"),
            (Method::Patch, Action::Patch, "patch"),
        ] {
            routes.push(route(
                method,
                &path,
                action,
                Some(name),
                format!("{verb}{ns}{kind}{title}"),
            ));
        }
    }
    if input.finalize {
        routes.push(route(
            Method::Put,
            &format!("{object}/finalize"),
            Action::Update,
            Some("finalize"),
            format!("replace{ns}{kind}Finalize"),
        ));
    }
    for other in input.others {
        let name = other.name;
        let path = format!("{object}/{name}");
        let titled = title(name);
        match other.shape {
            Shape::View => {
                for (method, action, verb) in [
                    (Method::Get, Action::Get, "read"),
                    (Method::Put, Action::Update, "replace"),
                    (Method::Patch, Action::Patch, "patch"),
                ] {
                    let id = format!("{verb}{ns}{kind}{titled}");
                    routes.push(route(method, &path, action, Some(name), id));
                }
            }
            Shape::Create => {
                let id = format!("create{ns}{kind}{titled}");
                routes.push(route(Method::Post, &path, Action::Create, Some(name), id));
            }
            Shape::Read => {
                let id = format!("read{ns}{kind}{titled}");
                routes.push(route(Method::Get, &path, Action::Get, Some(name), id));
            }
            Shape::Connect {
                methods,
                path: rest,
            } => {
                let with_path = format!("{path}/{{path}}");
                let paths = [(&path, ""), (&with_path, "WithPath")];
                for (path, suffix) in paths.into_iter().take(if rest { 2 } else { 1 }) {
                    for &method in methods {
                        let verb = title(&method.as_str().to_lowercase());
                        let id = format!("connect{verb}{ns}{kind}{titled}{suffix}");
                        routes.push(route(method, path, Action::Connect, Some(name), id));
                    }
                }
            }
        }
    }
    routes
}

/// `Ephemeralcontainers` for `ephemeralcontainers`: the installer's operation-id casing.
fn title(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl Route {
    /// The authorization and discovery verb of the route: its action's, but a connect's
    /// comes from its method (kube's request info: `POST` creates, `PUT` updates), and a
    /// connect by `HEAD` or `OPTIONS` has none in discovery.
    pub fn verb(&self) -> Option<&'static str> {
        if self.action != Action::Connect {
            return Some(self.action.verb());
        }
        connect_verb(self.method)
    }
}

/// The verb of a connect by `method` (kube's request info; none for `HEAD` and `OPTIONS`,
/// which discovery does not list).
pub fn connect_verb(method: Method) -> Option<&'static str> {
    match method {
        Method::Get => Some("get"),
        Method::Post => Some("create"),
        Method::Put => Some("update"),
        Method::Patch => Some("patch"),
        Method::Delete => Some("delete"),
        Method::Head | Method::Options => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Routes as lines of `METHOD path Action [subresource] operationId`.
    fn render(routes: &[Route]) -> String {
        routes
            .iter()
            .map(|r| {
                let sub = (r.subresource.as_ref())
                    .map(|s| format!("[{s}] "))
                    .unwrap_or_default();
                let method = format!("{:?}", r.method).to_uppercase();
                format!(
                    "{method} {} {:?} {sub}{}\n",
                    r.path, r.action, r.operation_id
                )
            })
            .collect()
    }

    fn check(input: Input, expected: &str) {
        let actual = render(&routes(&input));
        let expected: String = expected
            .lines()
            .map(|l| format!("{}\n", l.trim()))
            .filter(|l| l != "\n")
            .collect();
        assert_eq!(actual, expected, "\nactual:\n{actual}");
    }

    const WEBAPP: Input = Input {
        group: "apps.example.dev",
        version: "v1",
        kind: "WebApp",
        plural: "webapps",
        namespaced: true,
        status: true,
        scale: true,
        finalize: false,
        create_only: false,
        read_only: false,
        others: &[],
    };

    #[test]
    fn namespaced_with_subresources() {
        check(
            WEBAPP,
            "
            GET /apis/apps.example.dev/v1/namespaces/{namespace}/webapps List listNamespacedWebApp
            POST /apis/apps.example.dev/v1/namespaces/{namespace}/webapps Create createNamespacedWebApp
            DELETE /apis/apps.example.dev/v1/namespaces/{namespace}/webapps DeleteCollection deletecollectionNamespacedWebApp
            GET /apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name} Get readNamespacedWebApp
            PUT /apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name} Update replaceNamespacedWebApp
            PATCH /apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name} Patch patchNamespacedWebApp
            DELETE /apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name} Delete deleteNamespacedWebApp
            GET /apis/apps.example.dev/v1/webapps List listWebAppForAllNamespaces
            GET /apis/apps.example.dev/v1/watch/namespaces/{namespace}/webapps WatchList watchNamespacedWebAppList
            GET /apis/apps.example.dev/v1/watch/namespaces/{namespace}/webapps/{name} Watch watchNamespacedWebApp
            GET /apis/apps.example.dev/v1/watch/webapps WatchList watchWebAppListForAllNamespaces
            GET /apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/status Get [status] readNamespacedWebAppStatus
            PUT /apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/status Update [status] replaceNamespacedWebAppStatus
            PATCH /apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/status Patch [status] patchNamespacedWebAppStatus
            GET /apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/scale Get [scale] readNamespacedWebAppScale
            PUT /apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/scale Update [scale] replaceNamespacedWebAppScale
            PATCH /apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/scale Patch [scale] patchNamespacedWebAppScale
            ",
        );
    }

    #[test]
    fn cluster_scoped_with_status() {
        check(
            Input {
                group: "platform.example.dev",
                kind: "Tenant",
                plural: "tenants",
                namespaced: false,
                scale: false,
                ..WEBAPP
            },
            "
            GET /apis/platform.example.dev/v1/tenants List listTenant
            POST /apis/platform.example.dev/v1/tenants Create createTenant
            DELETE /apis/platform.example.dev/v1/tenants DeleteCollection deletecollectionTenant
            GET /apis/platform.example.dev/v1/tenants/{name} Get readTenant
            PUT /apis/platform.example.dev/v1/tenants/{name} Update replaceTenant
            PATCH /apis/platform.example.dev/v1/tenants/{name} Patch patchTenant
            DELETE /apis/platform.example.dev/v1/tenants/{name} Delete deleteTenant
            GET /apis/platform.example.dev/v1/watch/tenants WatchList watchTenantList
            GET /apis/platform.example.dev/v1/watch/tenants/{name} Watch watchTenant
            GET /apis/platform.example.dev/v1/tenants/{name}/status Get [status] readTenantStatus
            PUT /apis/platform.example.dev/v1/tenants/{name}/status Update [status] replaceTenantStatus
            PATCH /apis/platform.example.dev/v1/tenants/{name}/status Patch [status] patchTenantStatus
            ",
        );
    }

    #[test]
    fn core_group_namespaced_without_subresources() {
        check(
            Input {
                group: "",
                kind: "ConfigMap",
                plural: "configmaps",
                status: false,
                scale: false,
                finalize: false,
                create_only: false,
                read_only: false,
                ..WEBAPP
            },
            "
            GET /api/v1/namespaces/{namespace}/configmaps List listNamespacedConfigMap
            POST /api/v1/namespaces/{namespace}/configmaps Create createNamespacedConfigMap
            DELETE /api/v1/namespaces/{namespace}/configmaps DeleteCollection deletecollectionNamespacedConfigMap
            GET /api/v1/namespaces/{namespace}/configmaps/{name} Get readNamespacedConfigMap
            PUT /api/v1/namespaces/{namespace}/configmaps/{name} Update replaceNamespacedConfigMap
            PATCH /api/v1/namespaces/{namespace}/configmaps/{name} Patch patchNamespacedConfigMap
            DELETE /api/v1/namespaces/{namespace}/configmaps/{name} Delete deleteNamespacedConfigMap
            GET /api/v1/configmaps List listConfigMapForAllNamespaces
            GET /api/v1/watch/namespaces/{namespace}/configmaps WatchList watchNamespacedConfigMapList
            GET /api/v1/watch/namespaces/{namespace}/configmaps/{name} Watch watchNamespacedConfigMap
            GET /api/v1/watch/configmaps WatchList watchConfigMapListForAllNamespaces
            ",
        );
    }

    #[test]
    fn core_group_cluster_scoped() {
        check(
            Input {
                group: "",
                kind: "Namespace",
                plural: "namespaces",
                namespaced: false,
                scale: false,
                finalize: true,
                create_only: false,
                read_only: false,
                ..WEBAPP
            },
            "
            GET /api/v1/namespaces List listNamespace
            POST /api/v1/namespaces Create createNamespace
            DELETE /api/v1/namespaces DeleteCollection deletecollectionNamespace
            GET /api/v1/namespaces/{name} Get readNamespace
            PUT /api/v1/namespaces/{name} Update replaceNamespace
            PATCH /api/v1/namespaces/{name} Patch patchNamespace
            DELETE /api/v1/namespaces/{name} Delete deleteNamespace
            GET /api/v1/watch/namespaces WatchList watchNamespaceList
            GET /api/v1/watch/namespaces/{name} Watch watchNamespace
            GET /api/v1/namespaces/{name}/status Get [status] readNamespaceStatus
            PUT /api/v1/namespaces/{name}/status Update [status] replaceNamespaceStatus
            PATCH /api/v1/namespaces/{name}/status Patch [status] patchNamespaceStatus
            PUT /api/v1/namespaces/{name}/finalize Update [finalize] replaceNamespaceFinalize
            ",
        );
    }

    /// kube 1.32's pod routes besides the collection's, object's and status's, with the
    /// operation ids of its OpenAPI document.
    #[test]
    fn other_subresources_route_as_kubes_pods() {
        const PROXY: &[Method] = &[
            Method::Delete,
            Method::Get,
            Method::Head,
            Method::Options,
            Method::Patch,
            Method::Post,
            Method::Put,
        ];
        let connect = Shape::Connect {
            methods: &[Method::Get, Method::Post],
            path: false,
        };
        let others = [
            Other {
                name: "binding",
                shape: Shape::Create,
            },
            Other {
                name: "ephemeralcontainers",
                shape: Shape::View,
            },
            Other {
                name: "log",
                shape: Shape::Read,
            },
            Other {
                name: "exec",
                shape: connect,
            },
            Other {
                name: "proxy",
                shape: Shape::Connect {
                    methods: PROXY,
                    path: true,
                },
            },
        ];
        let pods = Input {
            group: "",
            kind: "Pod",
            plural: "pods",
            status: false,
            scale: false,
            others: &others,
            ..WEBAPP
        };
        let routes = routes(&pods);
        let lines = render(&routes[11..]);
        let expected = "
            POST /api/v1/namespaces/{namespace}/pods/{name}/binding Create [binding] createNamespacedPodBinding
            GET /api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers Get [ephemeralcontainers] readNamespacedPodEphemeralcontainers
            PUT /api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers Update [ephemeralcontainers] replaceNamespacedPodEphemeralcontainers
            PATCH /api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers Patch [ephemeralcontainers] patchNamespacedPodEphemeralcontainers
            GET /api/v1/namespaces/{namespace}/pods/{name}/log Get [log] readNamespacedPodLog
            GET /api/v1/namespaces/{namespace}/pods/{name}/exec Connect [exec] connectGetNamespacedPodExec
            POST /api/v1/namespaces/{namespace}/pods/{name}/exec Connect [exec] connectPostNamespacedPodExec
            DELETE /api/v1/namespaces/{namespace}/pods/{name}/proxy Connect [proxy] connectDeleteNamespacedPodProxy
            GET /api/v1/namespaces/{namespace}/pods/{name}/proxy Connect [proxy] connectGetNamespacedPodProxy
            HEAD /api/v1/namespaces/{namespace}/pods/{name}/proxy Connect [proxy] connectHeadNamespacedPodProxy
            OPTIONS /api/v1/namespaces/{namespace}/pods/{name}/proxy Connect [proxy] connectOptionsNamespacedPodProxy
            PATCH /api/v1/namespaces/{namespace}/pods/{name}/proxy Connect [proxy] connectPatchNamespacedPodProxy
            POST /api/v1/namespaces/{namespace}/pods/{name}/proxy Connect [proxy] connectPostNamespacedPodProxy
            PUT /api/v1/namespaces/{namespace}/pods/{name}/proxy Connect [proxy] connectPutNamespacedPodProxy
            DELETE /api/v1/namespaces/{namespace}/pods/{name}/proxy/{path} Connect [proxy] connectDeleteNamespacedPodProxyWithPath
            GET /api/v1/namespaces/{namespace}/pods/{name}/proxy/{path} Connect [proxy] connectGetNamespacedPodProxyWithPath
            HEAD /api/v1/namespaces/{namespace}/pods/{name}/proxy/{path} Connect [proxy] connectHeadNamespacedPodProxyWithPath
            OPTIONS /api/v1/namespaces/{namespace}/pods/{name}/proxy/{path} Connect [proxy] connectOptionsNamespacedPodProxyWithPath
            PATCH /api/v1/namespaces/{namespace}/pods/{name}/proxy/{path} Connect [proxy] connectPatchNamespacedPodProxyWithPath
            POST /api/v1/namespaces/{namespace}/pods/{name}/proxy/{path} Connect [proxy] connectPostNamespacedPodProxyWithPath
            PUT /api/v1/namespaces/{namespace}/pods/{name}/proxy/{path} Connect [proxy] connectPutNamespacedPodProxyWithPath
        ";
        let expected: String = (expected.lines())
            .map(|l| format!("{}\n", l.trim()))
            .filter(|l| l != "\n")
            .collect();
        assert_eq!(lines, expected, "\nactual:\n{lines}");
        let verbs: Vec<_> = (routes.iter())
            .filter(|r| r.subresource.as_deref() == Some("proxy") && !r.path.ends_with("{path}"))
            .filter_map(Route::verb)
            .collect();
        assert_eq!(verbs, ["delete", "get", "patch", "create", "update"]);
    }

    #[test]
    fn operation_ids_are_unique() {
        let routes = routes(&WEBAPP);
        let mut ids: Vec<_> = routes.iter().map(|r| &r.operation_id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), routes.len());
    }
}
