//! What the templates print, prepared from the model: one serializable struct per template.

use std::collections::{BTreeMap, BTreeSet};

use heck::{ToShoutySnakeCase, ToSnakeCase};
use kapi_core::api::{Handler, KindInfo};
use serde::Serialize;

use super::GlueError;
use crate::model::{ApiModel, api_version};

/// The document files `documents.rs` compiles in, with paths relative to `generated/`.
#[derive(Debug, Clone, Default)]
pub struct DocumentIndex {
    /// `openapi/v2.json` and `openapi/v2.pb`.
    pub openapi_v2: Option<OpenApiV2Files>,
    /// `openapi/v3/index.json`: the body of `GET /openapi/v3`.
    pub openapi_v3_index: Option<String>,
    /// One file per group-version served by default.
    pub openapi_v3: Vec<OpenApiV3File>,
    /// The files of group-versions of kinds off by default, as they are once turned on.
    pub openapi_v3_off_by_default: Vec<OpenApiV3File>,
    /// Every discovery document.
    pub discovery: Vec<DiscoveryFile>,
}

/// The whole-API OpenAPI v2 document, as JSON and as gnostic protobuf.
#[derive(Debug, Clone)]
pub struct OpenApiV2Files {
    /// `openapi/v2.json`.
    pub json: String,
    /// `openapi/v2.pb`.
    pub proto: String,
}

/// One group-version's OpenAPI v3 document.
#[derive(Debug, Clone)]
pub struct OpenApiV3File {
    /// Its key in `/openapi/v3`: `api/v1`, `apis/apps.example.dev/v1`.
    pub key: String,
    /// `openapi/v3/apis/apps.example.dev/v1.json`.
    pub file: String,
    /// Uppercase hex SHA-512 of the file: the `?hash=` of its URL and its `ETag`.
    pub hash: String,
}

/// One discovery document.
#[derive(Debug, Clone)]
pub struct DiscoveryFile {
    /// The URL path it is served at: `/apis/apps.example.dev/v1`.
    pub path: String,
    /// The aggregated (`apidiscovery.k8s.io/v2`) form of `/api` or `/apis`.
    pub aggregated: bool,
    /// `discovery/apis/apps.example.dev/v1.json`.
    pub file: String,
}

#[derive(Serialize)]
pub(super) struct Lib {
    header: &'static str,
    groups: Vec<LibGroup>,
}

#[derive(Serialize)]
struct LibGroup {
    /// `` `apps.example.dev` ``, or `the core group`.
    name: String,
    /// `/apis/apps.example.dev`, `/api`.
    path: String,
    /// `v1, v1beta1`, most preferred first.
    versions: String,
    /// `WebApp, Tenant`.
    kinds: String,
}

pub(super) fn lib(model: &ApiModel) -> Lib {
    let groups = (model.groups.iter())
        .map(|g| {
            let mut kinds: Vec<&str> = Vec::new();
            for r in g.versions.iter().flat_map(|gv| &gv.resources) {
                if !kinds.contains(&r.kind.kind) {
                    kinds.push(r.kind.kind);
                }
            }
            let versions: Vec<&str> = g.versions.iter().map(|gv| gv.version).collect();
            let path = if g.name.is_empty() {
                "/api".to_owned()
            } else {
                format!("/apis/{}", g.name)
            };
            LibGroup {
                name: group_display(g.name),
                path,
                versions: code_list(&versions),
                kinds: code_list(&kinds),
            }
        })
        .collect();
    Lib {
        header: super::HEADER,
        groups,
    }
}

/// `` `a`, `b` ``.
fn code_list(items: &[&str]) -> String {
    let items: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
    items.join(", ")
}

#[derive(Serialize)]
pub(super) struct Scheme {
    header: &'static str,
    /// `api_types::{apps, platform}`.
    uses: Vec<String>,
    kinds: Vec<SchemeKind>,
}

#[derive(Serialize)]
struct SchemeKind {
    hub: String,
    /// The type a kind `stored_with` another is declared on (its `INFO`); `None` for a
    /// kind declared on its hub.
    declared_on: Option<String>,
    versions: Vec<SchemeVersion>,
}

#[derive(Serialize)]
struct SchemeVersion {
    name: &'static str,
    rust_type: String,
    /// `version`, or `defaulted_version` for a kind whose types default by code.
    register: &'static str,
}

/// Every kind with its hub type and the types of the versions the server decodes: the
/// served ones and the storage version, in declaration order.
pub(super) fn scheme(model: &ApiModel) -> Result<Scheme, GlueError> {
    let mut kinds = kinds(model);
    // A kind stored with another is registered after it, to share its versions.
    kinds.sort_by_key(|k| k.stored_with.is_some());
    let mut paths = Vec::new();
    for kind in &kinds {
        paths.push(rust_path(kind.rust_type, kind)?);
        paths.push(rust_path(kind.hub_rust_type(), kind)?);
        for version in kind.versions.iter().filter(|v| v.served || v.storage) {
            paths.push(rust_path(version.rust_type, kind)?);
        }
    }
    let imports = Imports::new(&paths, &["KindEntry", "Scheme"]);
    let kinds = (kinds.iter())
        .map(|kind| SchemeKind {
            hub: imports.shorten(kind.hub_rust_type()),
            declared_on: (kind.stored_with.is_some()).then(|| imports.shorten(kind.rust_type)),
            versions: (kind.versions.iter())
                .filter(|v| v.served || v.storage)
                .map(|v| SchemeVersion {
                    name: v.name,
                    rust_type: imports.shorten(v.rust_type),
                    register: match kind.defaulted {
                        true => "defaulted_version",
                        false => "version",
                    },
                })
                .collect(),
        })
        .collect();
    Ok(Scheme {
        header: super::HEADER,
        uses: imports.uses(),
        kinds,
    })
}

/// The modules glue imports so it can name types as a person would (`apps::v1::WebApp`
/// after `use api_types::apps;`). A module is imported only when its name is unambiguous
/// and shadows nothing a reader knows (`core`, `std`, a crate, a name already in scope);
/// other paths stay absolute.
struct Imports {
    /// `api_types::apps` -> `apps`.
    modules: BTreeMap<String, String>,
}

impl Imports {
    fn new(paths: &[String], in_scope: &[&str]) -> Imports {
        const SHADOWED: &[&str] = &["core", "std", "alloc", "kapi", "crate", "self", "super"];
        let split = |path: &str| -> Option<(String, String)> {
            let segments: Vec<&str> = path.split("::").collect();
            (segments.len() >= 3).then(|| {
                (
                    format!("{}::{}", segments[0], segments[1]),
                    segments[1].to_owned(),
                )
            })
        };
        let crates: BTreeSet<&str> = paths.iter().filter_map(|p| p.split("::").next()).collect();
        let mut by_alias: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (module, alias) in paths.iter().filter_map(|p| split(p)) {
            by_alias.entry(alias).or_default().insert(module);
        }
        let modules = (by_alias.into_iter())
            .filter(|(alias, modules)| {
                modules.len() == 1
                    && !SHADOWED.contains(&alias.as_str())
                    && !in_scope.contains(&alias.as_str())
                    && !crates.contains(alias.as_str())
            })
            .filter_map(|(alias, modules)| Some((modules.into_iter().next()?, alias)))
            .collect();
        Imports { modules }
    }

    /// `apps::v1::WebApp` for `api_types::apps::v1::WebApp`, when `api_types::apps` is
    /// imported.
    fn shorten(&self, path: &str) -> String {
        let path = &reachable(path);
        for (module, alias) in &self.modules {
            if let Some(rest) = path
                .strip_prefix(module.as_str())
                .and_then(|r| r.strip_prefix("::"))
            {
                return format!("{alias}::{rest}");
            }
        }
        path.to_owned()
    }

    /// `api_types::{apps, platform}`, one per crate, sorted.
    fn uses(&self) -> Vec<String> {
        let mut by_crate: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (module, alias) in &self.modules {
            let krate = module.split("::").next().unwrap_or_default();
            by_crate.entry(krate).or_default().push(alias);
        }
        (by_crate.into_iter())
            .map(|(krate, aliases)| match aliases.as_slice() {
                [one] => format!("{krate}::{one}"),
                many => format!("{krate}::{{{}}}", many.join(", ")),
            })
            .collect()
    }
}

#[derive(Serialize)]
pub(super) struct Routes {
    header: &'static str,
    kinds: Vec<KindConst>,
    versions: Vec<VersionRoutes>,
}

#[derive(Serialize)]
struct KindConst {
    /// `WEB_APP`.
    name: String,
    /// `WebApp`.
    kind: &'static str,
    /// `` `apps.example.dev` ``, or `the core group`.
    group: String,
    /// `api_types::apps::WebApp`.
    hub: String,
}

#[derive(Serialize)]
struct VersionRoutes {
    /// The kind's const.
    kind_const: String,
    /// `WebApp`.
    kind: &'static str,
    /// `apps.example.dev/v1`.
    api_version: String,
    /// Index of the version in `KindInfo::versions`.
    version_index: usize,
    routes: Vec<RouteLine>,
}

#[derive(Serialize)]
struct RouteLine {
    /// Index of the route in `VersionInfo::routes`.
    index: usize,
    /// `PatchStatus`: a `Handler` variant.
    handler: String,
    /// `PATCH`.
    method: &'static str,
    /// `/apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/status`.
    path: &'static str,
}

/// Every route of every served version, in model order (groups, versions most preferred
/// first, kinds), each bound to the handler `Handler::for_route` names.
pub(super) fn routes(model: &ApiModel) -> Result<Routes, GlueError> {
    let kinds = kinds(model);
    let names = const_names(&kinds);
    let kind_consts = (kinds.iter().zip(&names))
        .map(|(kind, name)| {
            Ok(KindConst {
                name: name.clone(),
                kind: kind.kind,
                group: group_display(kind.group),
                hub: rust_path(kind.rust_type, kind)?,
            })
        })
        .collect::<Result<_, GlueError>>()?;

    let mut versions = Vec::new();
    for (_, resource) in model.resources() {
        let kind = resource.kind;
        let position = kinds.iter().position(|k| same_kind(k, kind));
        let kind_const = position.map(|i| names[i].clone()).unwrap_or_default();
        let version_index = (kind.versions.iter())
            .position(|v| v.name == resource.version.name)
            .unwrap_or_default();
        let routes = (resource.routes().iter().enumerate())
            .map(|(index, route)| {
                let handler =
                    Handler::for_route(kind, route).ok_or_else(|| GlueError::NoHandler {
                        kind: kind.kind.into(),
                        version: resource.version.name.into(),
                        method: route.method.as_str().into(),
                        path: route.path.into(),
                    })?;
                Ok(RouteLine {
                    index,
                    handler: format!("{handler:?}"),
                    method: route.method.as_str(),
                    path: route.path,
                })
            })
            .collect::<Result<_, GlueError>>()?;
        versions.push(VersionRoutes {
            kind_const,
            kind: kind.kind,
            api_version: api_version(kind.group, resource.version.name),
            version_index,
            routes,
        });
    }
    Ok(Routes {
        header: super::HEADER,
        kinds: kind_consts,
        versions,
    })
}

#[derive(Serialize)]
pub(super) struct Documents {
    header: &'static str,
    openapi_v2: Option<Files>,
    openapi_v3_index: Option<String>,
    openapi_v3: Vec<V3Document>,
    /// How many of the v3 documents are served by default (the first ones).
    served_v3: usize,
    openapi_v3_off_by_default: Vec<V3Document>,
    discovery: Vec<DiscoveryDocument>,
    aggregated: Vec<DiscoveryDocument>,
}

#[derive(Serialize)]
struct Files {
    json: String,
    proto: String,
}

#[derive(Serialize)]
struct V3Document {
    key: String,
    hash: String,
    file: String,
}

#[derive(Serialize)]
struct DiscoveryDocument {
    path: String,
    file: String,
}

/// File paths become relative to `src/`, as `include_str!` resolves them; those of the
/// OpenAPI documents stay relative to the crate, as `kapi::deflated!` resolves them.
pub(super) fn documents(index: &DocumentIndex) -> Documents {
    let from_src = |file: &str| format!("../{file}");
    let discovery = |aggregated: bool| {
        (index.discovery.iter())
            .filter(|d| d.aggregated == aggregated)
            .map(|d| DiscoveryDocument {
                path: d.path.clone(),
                file: from_src(&d.file),
            })
            .collect()
    };
    Documents {
        header: super::HEADER,
        openapi_v2: index.openapi_v2.as_ref().map(|v2| Files {
            json: v2.json.clone(),
            proto: v2.proto.clone(),
        }),
        openapi_v3_index: index.openapi_v3_index.as_deref().map(from_src),
        openapi_v3: index.openapi_v3.iter().map(v3_document).collect(),
        served_v3: index.openapi_v3.len(),
        openapi_v3_off_by_default: (index.openapi_v3_off_by_default.iter())
            .map(v3_document)
            .collect(),
        discovery: discovery(false),
        aggregated: discovery(true),
    }
}

fn v3_document(file: &OpenApiV3File) -> V3Document {
    V3Document {
        key: file.key.clone(),
        hash: file.hash.clone(),
        file: file.file.clone(),
    }
}

/// The kinds of the model, in model order, each once.
fn kinds(model: &ApiModel) -> Vec<&'static KindInfo> {
    let mut kinds: Vec<&'static KindInfo> = Vec::new();
    for (_, resource) in model.resources() {
        if !kinds.iter().any(|k| same_kind(k, resource.kind)) {
            kinds.push(resource.kind);
        }
    }
    kinds
}

/// Kinds are identified by group and kind (the model rejects duplicates), never by address.
fn same_kind(a: &KindInfo, b: &KindInfo) -> bool {
    (a.group, a.kind) == (b.group, b.kind)
}

/// `WEB_APP`; qualified with the group (`APPS_EXAMPLE_DEV_WEB_APP`, `CORE_SCALE`) when two
/// groups have a kind of the same name.
fn const_names(kinds: &[&KindInfo]) -> Vec<String> {
    let plain: Vec<String> = kinds
        .iter()
        .map(|k| k.kind.to_shouty_snake_case())
        .collect();
    (kinds.iter().zip(&plain))
        .map(|(kind, name)| {
            if plain.iter().filter(|n| *n == name).count() > 1 {
                let group = if kind.group.is_empty() {
                    "core"
                } else {
                    kind.group
                };
                let group = group.replace('.', "_");
                format!("{}_{name}", group.to_shouty_snake_case())
            } else {
                name.clone()
            }
        })
        .collect()
}

/// `` `apps.example.dev` ``, or `the core group`.
fn group_display(group: &str) -> String {
    if group.is_empty() {
        "the core group".to_owned()
    } else {
        format!("`{group}`")
    }
}

/// Checks that `path` (a `module_path!()`-based `rust_type`) names an item from another
/// crate: `crate_name::module::Type`, every segment an identifier.
fn rust_path(path: &str, kind: &KindInfo) -> Result<String, GlueError> {
    let segments: Vec<&str> = path.split("::").collect();
    let is_ident = |s: &str| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && s != "_"
    };
    let relative = matches!(segments[0], "crate" | "self" | "super" | "Self");
    if segments.len() < 2 || relative || !segments.iter().all(|s| is_ident(s)) {
        return Err(GlueError::InvalidRustPath {
            path: path.into(),
            kind: kind.kind.into(),
        });
    }
    // Kubernetes' kinds are declared in `kapi-kinds`, which a user's crates reach through
    // the facade, as `kapi::kinds`.
    Ok(reachable(path))
}

/// `path` as the generated crate reaches it: Kubernetes' kinds are declared in
/// `kapi-kinds`, which a user's crates reach through the facade, as `kapi::kinds`.
fn reachable(path: &str) -> String {
    if let Some(rest) = path.strip_prefix("kapi_kinds::") {
        return format!("kapi::kinds::{rest}");
    }
    // The built-in API's, as `kapi-kinds` re-exports it.
    match path.strip_prefix("kapi_builtin::api::") {
        Some(rest) => format!("kapi::kinds::builtin::{rest}"),
        None => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_paths() {
        static KIND: KindInfo = KindInfo {
            group: "",
            kind: "Thing",
            plural: "things",
            singular: "thing",
            scope: kapi_core::api::Scope::Cluster,
            names: kapi_core::api::NameRule::DnsSubdomain,
            short_names: &[],
            categories: &[],
            subresources: kapi_core::api::Subresources {
                status: false,
                scale: None,
                others: &[],
            },
            printer_columns: &[],
            selectable_fields: &[],
            versions: &[],
            rust_type: "my_api::Thing",
            stored_with: None,
            create_only: false,
            delete_status: false,
            storage_key: None,
            strategy_validates: false,
            defaulted: false,
            generation: kapi_core::api::Generation::Object,
            read_only: false,
        };
        for ok in ["my_api::Thing", "api_types::core::Namespace"] {
            assert_eq!(rust_path(ok, &KIND).unwrap(), ok);
        }
        for bad in [
            "Thing",
            "crate::Thing",
            "a::b<T>",
            "a::",
            "::a::B",
            "a b::C",
            "self::X",
        ] {
            assert!(rust_path(bad, &KIND).is_err(), "{bad}");
        }
    }
}

#[derive(Serialize)]
pub(super) struct RoundTrip {
    header: &'static str,
    groups: Vec<RoundTripGroup>,
}

#[derive(Serialize)]
struct RoundTripGroup {
    /// `apps_example_dev`, `core_group`: the test module.
    module: String,
    /// `` `apps.example.dev` ``, or `the core group`.
    display: String,
    tests: Vec<RoundTripTest>,
}

#[derive(Serialize)]
struct RoundTripTest {
    /// `web_app_v1beta1`.
    name: String,
    /// `apps.example.dev`, `` for the core group.
    group: &'static str,
    /// `WebApp`.
    kind: &'static str,
    /// `v1beta1`.
    version: &'static str,
    /// `apps.example.dev/v1beta1`.
    api_version: String,
}

/// One round-trip test per kind and served version, grouped by API group in model order.
pub(super) fn round_trip(model: &ApiModel) -> RoundTrip {
    let groups = (model.groups.iter())
        .map(|group| {
            let mut tests = Vec::new();
            for kind in kinds(model).into_iter().filter(|k| k.group == group.name) {
                for version in kind.versions.iter().filter(|v| v.served) {
                    tests.push(RoundTripTest {
                        name: format!(
                            "{}_{}",
                            kind.kind.to_snake_case(),
                            version.name.to_snake_case()
                        ),
                        group: kind.group,
                        kind: kind.kind,
                        version: version.name,
                        api_version: api_version(kind.group, version.name),
                    });
                }
            }
            RoundTripGroup {
                module: match group.name {
                    "" => "core_group".to_owned(),
                    name => name.to_snake_case(),
                },
                display: group_display(group.name),
                tests,
            }
        })
        .collect();
    RoundTrip {
        header: super::HEADER,
        groups,
    }
}
