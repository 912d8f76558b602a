//! `platform.example.dev`: tenants of the platform.

use kapi::Resource;
use kapi::meta::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A tenant of the platform: who owns it and how much it may run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "platform.example.dev",
    kind = "Tenant",
    plural = "tenants",
    short_name = "tn",
    status,
    printer_column(
        name = "Display Name",
        type = "string",
        json_path = ".spec.displayName"
    ),
    printer_column(
        name = "Max WebApps",
        type = "integer",
        json_path = ".spec.quota.maxWebApps"
    ),
    printer_column(name = "WebApps", type = "integer", json_path = ".status.webApps"),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage)
)]
pub struct Tenant {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state of the tenant.
    pub spec: TenantSpec,
    /// Observed state of the tenant.
    #[serde(default)]
    pub status: TenantStatus,
}

/// Desired state of a [`Tenant`].
#[kapi::rules]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantSpec {
    /// Human-friendly name of the tenant. Once set, it cannot change.
    #[serde(default)]
    #[rule(
        "oldSelf == '' || self == oldSelf",
        message = "displayName is immutable"
    )]
    #[schemars(length(max = 63))]
    pub display_name: String,
    /// Users who administer the tenant: at least one when given, at most ten.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 10), extend("x-kubernetes-list-type" = "set"))]
    pub owners: Vec<String>,
    /// Limits on what the tenant may run.
    #[serde(default)]
    pub quota: Quota,
}

/// Limits on what a [`Tenant`] may run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Quota {
    /// The most WebApps the tenant may have.
    #[serde(default = "default_max_web_apps")]
    #[schemars(range(min = 0))]
    pub max_web_apps: i32,
    /// CPU cores all the tenant's WebApps may use together: more than 0 and less than
    /// 1024. No limit when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        range(min = 0, max = 1024),
        extend("exclusiveMinimum" = true, "exclusiveMaximum" = true)
    )]
    pub cpu: Option<f64>,
}

impl Default for Quota {
    fn default() -> Self {
        Quota {
            max_web_apps: default_max_web_apps(),
            cpu: None,
        }
    }
}

fn default_max_web_apps() -> i32 {
    10
}

/// Observed state of a [`Tenant`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantStatus {
    /// How many WebApps the tenant has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_apps: Option<i32>,
}
impl kapi::Strategy for Tenant {}
