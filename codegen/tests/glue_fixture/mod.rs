//! A small hand-written API for the glue and discovery tests, shaped like the example API
//! (`api-types`) but independent of the derive: core `ConfigMap`, `apps.example.dev`
//! `WebApp` (`v1` stored, `v1beta1` deprecated; `status` and `scale`), cluster-scoped
//! `platform.example.dev` `Tenant`. Routes are a representative subset of what the derive
//! emits.

#![allow(dead_code)]

use kapi_codegen::ApiModel;
use kapi_core::api::{
    Action, KindInfo, Method, NameRule, Route, ScaleInfo, Scope, Subresources, VersionInfo,
    VersionSchema,
};
use schemars::{JsonSchema, Schema, SchemaGenerator};

#[derive(JsonSchema)]
pub(crate) struct ConfigMap {
    /// Configuration data.
    pub data: Option<std::collections::BTreeMap<String, String>>,
}

#[derive(JsonSchema)]
#[schemars(rename = "WebApp")]
pub(crate) struct WebAppV1 {
    /// Desired replicas.
    pub replicas: i32,
}

#[derive(JsonSchema)]
#[schemars(rename = "WebApp")]
pub(crate) struct WebAppV1beta1 {
    /// Desired replicas.
    pub replicas: i32,
    /// Image.
    pub image: String,
}

#[derive(JsonSchema)]
pub(crate) struct Tenant {
    /// Display name.
    pub display_name: String,
    /// Administrators.
    #[schemars(extend("x-kubernetes-list-type" = "set"))]
    pub owners: Vec<String>,
    /// Quotas, one per resource.
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["resource"]))]
    pub quotas: Vec<Quota>,
}

#[derive(JsonSchema)]
pub(crate) struct Quota {
    /// The resource limited.
    pub resource: String,
    /// How many.
    pub limit: i64,
}

fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

const fn route(
    method: Method,
    path: &'static str,
    action: Action,
    subresource: Option<&'static str>,
    operation_id: &'static str,
) -> Route {
    Route {
        method,
        path,
        action,
        subresource,
        operation_id,
    }
}

pub(crate) static CONFIG_MAP: KindInfo = KindInfo {
    group: "",
    kind: "ConfigMap",
    plural: "configmaps",
    singular: "configmap",
    scope: Scope::Namespaced,
    names: NameRule::DnsSubdomain,
    short_names: &["cm"],
    categories: &[],
    subresources: Subresources {
        status: false,
        scale: None,
        others: &[],
    },
    printer_columns: &[],
    selectable_fields: &[],
    versions: &[VersionInfo {
        name: "v1",
        served: true,
        storage: true,
        deprecated: false,
        deprecation_warning: None,
        off_by_default: false,
        lossy: false,
        rust_type: "fixture_api::core::ConfigMap",
        schema: VersionSchema::Type(schema::<ConfigMap>),
        printer_columns: None,
        protobuf: None,
        zero: None,
        routes: &[
            route(
                Method::Get,
                "/api/v1/namespaces/{namespace}/configmaps",
                Action::List,
                None,
                "listNamespacedConfigMap",
            ),
            route(
                Method::Post,
                "/api/v1/namespaces/{namespace}/configmaps",
                Action::Create,
                None,
                "createNamespacedConfigMap",
            ),
            route(
                Method::Get,
                "/api/v1/namespaces/{namespace}/configmaps/{name}",
                Action::Get,
                None,
                "readNamespacedConfigMap",
            ),
            route(
                Method::Delete,
                "/api/v1/namespaces/{namespace}/configmaps/{name}",
                Action::Delete,
                None,
                "deleteNamespacedConfigMap",
            ),
            route(
                Method::Get,
                "/api/v1/watch/namespaces/{namespace}/configmaps",
                Action::WatchList,
                None,
                "watchNamespacedConfigMapList",
            ),
        ],
    }],
    rust_type: "fixture_api::core::ConfigMap",
    stored_with: None,
    create_only: false,
    delete_status: false,
    storage_key: None,
    strategy_validates: false,
    defaulted: false,
    generation: kapi_core::api::Generation::Untracked,
    read_only: false,
};

const fn web_app_routes(
    list: &'static str,
    object: &'static str,
    status: &'static str,
    scale: &'static str,
) -> [Route; 9] {
    [
        route(
            Method::Get,
            list,
            Action::List,
            None,
            "listNamespacedWebApp",
        ),
        route(
            Method::Post,
            list,
            Action::Create,
            None,
            "createNamespacedWebApp",
        ),
        route(
            Method::Get,
            object,
            Action::Get,
            None,
            "readNamespacedWebApp",
        ),
        route(
            Method::Patch,
            object,
            Action::Patch,
            None,
            "patchNamespacedWebApp",
        ),
        route(
            Method::Get,
            status,
            Action::Get,
            Some("status"),
            "readNamespacedWebAppStatus",
        ),
        route(
            Method::Put,
            status,
            Action::Update,
            Some("status"),
            "replaceNamespacedWebAppStatus",
        ),
        route(
            Method::Get,
            scale,
            Action::Get,
            Some("scale"),
            "readNamespacedWebAppScale",
        ),
        route(
            Method::Put,
            scale,
            Action::Update,
            Some("scale"),
            "replaceNamespacedWebAppScale",
        ),
        route(
            Method::Patch,
            scale,
            Action::Patch,
            Some("scale"),
            "patchNamespacedWebAppScale",
        ),
    ]
}

static WEB_APP_V1_ROUTES: [Route; 9] = web_app_routes(
    "/apis/apps.example.dev/v1/namespaces/{namespace}/webapps",
    "/apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}",
    "/apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/status",
    "/apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/scale",
);

static WEB_APP_V1BETA1_ROUTES: [Route; 9] = web_app_routes(
    "/apis/apps.example.dev/v1beta1/namespaces/{namespace}/webapps",
    "/apis/apps.example.dev/v1beta1/namespaces/{namespace}/webapps/{name}",
    "/apis/apps.example.dev/v1beta1/namespaces/{namespace}/webapps/{name}/status",
    "/apis/apps.example.dev/v1beta1/namespaces/{namespace}/webapps/{name}/scale",
);

pub(crate) static WEB_APP: KindInfo = KindInfo {
    group: "apps.example.dev",
    kind: "WebApp",
    plural: "webapps",
    singular: "webapp",
    scope: Scope::Namespaced,
    names: NameRule::DnsSubdomain,
    short_names: &["wa"],
    categories: &["all"],
    subresources: Subresources {
        status: true,
        scale: Some(ScaleInfo {
            spec_replicas_path: ".spec.replicas",
            status_replicas_path: ".status.replicas",
            label_selector_path: None,
        }),
        others: &[],
    },
    printer_columns: &[],
    selectable_fields: &[],
    // Declared beta first: discovery must still prefer v1.
    versions: &[
        VersionInfo {
            name: "v1beta1",
            served: true,
            storage: false,
            deprecated: true,
            deprecation_warning: None,
            off_by_default: false,
            lossy: false,
            rust_type: "fixture_api::apps::v1beta1::WebApp",
            schema: VersionSchema::Type(schema::<WebAppV1beta1>),
            printer_columns: None,
            protobuf: None,
            zero: None,
            routes: &WEB_APP_V1BETA1_ROUTES,
        },
        VersionInfo {
            name: "v1",
            served: true,
            storage: true,
            deprecated: false,
            deprecation_warning: None,
            off_by_default: false,
            lossy: false,
            rust_type: "fixture_api::apps::v1::WebApp",
            schema: VersionSchema::Type(schema::<WebAppV1>),
            printer_columns: None,
            protobuf: None,
            zero: None,
            routes: &WEB_APP_V1_ROUTES,
        },
        VersionInfo {
            name: "v1alpha1",
            served: false,
            storage: false,
            deprecated: false,
            deprecation_warning: None,
            off_by_default: false,
            lossy: false,
            rust_type: "fixture_api::apps::v1alpha1::WebApp",
            schema: VersionSchema::Type(schema::<WebAppV1beta1>),
            printer_columns: None,
            protobuf: None,
            zero: None,
            routes: &[],
        },
    ],
    rust_type: "fixture_api::apps::WebApp",
    stored_with: None,
    create_only: false,
    delete_status: false,
    storage_key: None,
    strategy_validates: false,
    defaulted: false,
    generation: kapi_core::api::Generation::Object,
    read_only: false,
};

pub(crate) static TENANT: KindInfo = KindInfo {
    group: "platform.example.dev",
    kind: "Tenant",
    plural: "tenants",
    singular: "tenant",
    scope: Scope::Cluster,
    names: NameRule::DnsSubdomain,
    short_names: &["tn"],
    categories: &[],
    subresources: Subresources {
        status: false,
        scale: None,
        others: &[],
    },
    printer_columns: &[],
    selectable_fields: &[],
    versions: &[VersionInfo {
        name: "v1",
        served: true,
        storage: true,
        deprecated: false,
        deprecation_warning: None,
        off_by_default: false,
        lossy: false,
        rust_type: "fixture_api::platform::Tenant",
        schema: VersionSchema::Type(schema::<Tenant>),
        printer_columns: None,
        protobuf: None,
        zero: None,
        routes: &[
            route(
                Method::Get,
                "/apis/platform.example.dev/v1/tenants",
                Action::List,
                None,
                "listTenant",
            ),
            route(
                Method::Get,
                "/apis/platform.example.dev/v1/tenants/{name}",
                Action::Get,
                None,
                "readTenant",
            ),
            route(
                Method::Put,
                "/apis/platform.example.dev/v1/tenants/{name}",
                Action::Update,
                None,
                "replaceTenant",
            ),
            route(
                Method::Get,
                "/apis/platform.example.dev/v1/watch/tenants/{name}",
                Action::Watch,
                None,
                "watchTenant",
            ),
        ],
    }],
    rust_type: "fixture_api::platform::Tenant",
    stored_with: None,
    create_only: false,
    delete_status: false,
    storage_key: None,
    strategy_validates: false,
    defaulted: false,
    generation: kapi_core::api::Generation::Object,
    read_only: false,
};

/// Every fixture kind.
pub(crate) static KINDS: &[&KindInfo] = &[&CONFIG_MAP, &WEB_APP, &TENANT];

/// The model of `kinds`.
pub(crate) fn model(kinds: &[&'static KindInfo]) -> ApiModel {
    ApiModel::build(kinds).expect("the fixture is a consistent API")
}
