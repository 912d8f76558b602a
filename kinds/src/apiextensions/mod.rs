//! `apiextensions.k8s.io/v1` CustomResourceDefinition: a kind defined at runtime, with its
//! group, names, scope, versions (each with its OpenAPI v3 schema, subresources, printer
//! columns and selectable fields) and how objects convert between versions.
//!
//! The object itself is declared here like any kind and validated as kube validates it
//! (`validation`: kube's `apiextensions/validation` for the v1 API, with its field paths
//! and messages; `structural`: its checks of each version's schema); its defaults and server-owned status are kube's strategy's. The schema of
//! each version is kept as written (`openAPIV3Schema`, like a `/status` subresource's `{}`,
//! is any JSON value to the CRD's own schema).

#[cfg(feature = "server")]
mod conversion;
#[cfg(feature = "server")]
mod defaults;
#[cfg(feature = "server")]
pub mod install;
mod openapi_schema;
mod rules;
mod structural;
mod validation;

use kapi_core::Resource;
use kapi_core::api::KindInfo;
use kapi_core::error::FieldError;
use kapi_core::meta::ObjectMeta;
use kapi_macros::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use kapi_core::ByteString;

/// The group of CustomResourceDefinitions.
pub const GROUP: &str = "apiextensions.k8s.io";

/// The kind, for an API's list of kinds.
pub const KINDS: &[&KindInfo] = &[CustomResourceDefinition::INFO];

/// The finalizer that holds a definition being deleted until its objects are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// `spec.scope` of a namespaced kind.
pub const NAMESPACED: &str = "Namespaced";
/// `spec.scope` of a cluster-scoped kind.
pub const CLUSTER: &str = "Cluster";

/// A kind served at runtime: the custom resource `spec` describes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "apiextensions.k8s.io",
    kind = "CustomResourceDefinition",
    plural = "customresourcedefinitions",
    delete_status,
    short_name = "crd",
    short_name = "crds",
    category = "api-extensions",
    status,
    printer_column(
        name = "Created At",
        type = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    version(name = "v1", storage)
)]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
)]
pub struct CustomResourceDefinition {
    /// Standard object metadata; the name is `<spec.names.plural>.<spec.group>`.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The kind it defines.
    #[serde(default)]
    pub spec: CustomResourceDefinitionSpec,
    /// What the server accepted and serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CustomResourceDefinitionStatus>,
}

/// The kind a CustomResourceDefinition defines.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec"
)]
pub struct CustomResourceDefinitionSpec {
    /// The API group of the kind (`stable.example.com`): a DNS subdomain with a dot.
    #[serde(default)]
    pub group: String,
    /// Its resource and kind names.
    #[serde(default)]
    pub names: CustomResourceDefinitionNames,
    /// `Namespaced` or `Cluster`.
    #[serde(default)]
    pub scope: String,
    /// Its versions: exactly one is the storage version.
    #[serde(default)]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub versions: Vec<CustomResourceDefinitionVersion>,
    /// How objects convert between versions (`None` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversion: Option<CustomResourceConversion>,
    /// Keep fields the schema does not name (deprecated; must be false in v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_unknown_fields: Option<bool>,
}

/// The names of a custom resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames"
)]
pub struct CustomResourceDefinitionNames {
    /// The resource in URLs (`crontabs`); lower case.
    #[serde(default)]
    pub plural: String,
    /// The singular name (`crontab`); defaults to the kind in lower case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub singular: Option<String>,
    /// Short names for kubectl (`ct`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub short_names: Vec<String>,
    /// The kind (`CronTab`).
    #[serde(default)]
    pub kind: String,
    /// The kind of lists; defaults to `<kind>List`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_kind: Option<String>,
    /// Groups of resources kubectl names together (`all`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub categories: Vec<String>,
}

/// One version of a custom resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion"
)]
pub struct CustomResourceDefinitionVersion {
    /// The version (`v1`, `v1beta1`): a DNS-1035 label.
    #[serde(default)]
    pub name: String,
    /// Whether it is served.
    #[serde(default)]
    pub served: bool,
    /// Whether objects are stored in it (exactly one version).
    #[serde(default)]
    pub storage: bool,
    /// Whether it is deprecated: responses then carry a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<bool>,
    /// The warning for a deprecated version, instead of the default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    /// The version's schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<CustomResourceValidation>,
    /// Its `status` and `scale` subresources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresources: Option<CustomResourceSubresources>,
    /// Its columns in `kubectl get`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub additional_printer_columns: Vec<CustomResourceColumnDefinition>,
    /// Fields a field selector may name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub selectable_fields: Vec<SelectableField>,
}

/// A version's schema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceValidation"
)]
pub struct CustomResourceValidation {
    /// The OpenAPI v3 schema of the objects, kept as written: every field of it is
    /// known (server-side apply merges and owns it, strict field validation accepts it).
    #[serde(
        default,
        rename = "openAPIV3Schema",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
    pub open_api_v3_schema: Option<Value>,
}

/// A version's subresources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresources"
)]
pub struct CustomResourceSubresources {
    /// `/status`, when present (an empty object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
    /// `/scale`, when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<CustomResourceSubresourceScale>,
}

/// Where `/scale` reads and writes the replicas.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceScale"
)]
pub struct CustomResourceSubresourceScale {
    /// The desired replicas (`.spec.replicas`), under `.spec`.
    #[serde(default)]
    pub spec_replicas_path: String,
    /// The observed replicas (`.status.replicas`), under `.status`.
    #[serde(default)]
    pub status_replicas_path: String,
    /// The label selector in string form (`.status.selector`), under `.spec` or `.status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector_path: Option<String>,
}

/// A column of `kubectl get`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition"
)]
pub struct CustomResourceColumnDefinition {
    /// The header.
    #[serde(default)]
    pub name: String,
    /// `integer`, `number`, `string`, `boolean` or `date`.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// An OpenAPI format (`int32`, `date-time`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// What the column shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// 0 in the default view; more only in `-o wide`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// The simple JSONPath of the value (`.spec.cronSpec`).
    #[serde(default, rename = "jsonPath")]
    pub json_path: String,
}

/// A field a field selector may name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.SelectableField")]
pub struct SelectableField {
    /// The simple JSONPath of the field (`.spec.color`).
    #[serde(default, rename = "jsonPath")]
    pub json_path: String,
}

/// How objects convert between versions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceConversion"
)]
pub struct CustomResourceConversion {
    /// `None` (only `apiVersion` changes) or `Webhook`.
    #[serde(default)]
    pub strategy: String,
    /// The webhook, for `Webhook`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookConversion>,
}

/// A conversion webhook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion")]
pub struct WebhookConversion {
    /// Where it is and how to trust it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_config: Option<WebhookClientConfig>,
    /// The `ConversionReview` versions it understands, preferred first.
    #[serde(default)]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub conversion_review_versions: Vec<String>,
}

/// How to reach a webhook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookClientConfig")]
pub struct WebhookClientConfig {
    /// `https://host:port/path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A Service in the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    /// PEM certificates that sign the webhook's serving certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<ByteString>,
}

/// A Service that serves a webhook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference")]
pub struct ServiceReference {
    /// Its namespace.
    #[serde(default)]
    pub namespace: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// The URL path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The port (443 by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// What the server made of a CustomResourceDefinition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus"
)]
pub struct CustomResourceDefinitionStatus {
    /// `NamesAccepted`, `Established`, `Terminating`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<CustomResourceDefinitionCondition>,
    /// The names the server serves the kind under.
    #[serde(default)]
    pub accepted_names: CustomResourceDefinitionNames,
    /// Every version objects have been stored in.
    #[serde(default)]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub stored_versions: Vec<String>,
}

/// One condition of a CustomResourceDefinition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    rename = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition"
)]
pub struct CustomResourceDefinitionCondition {
    /// `NamesAccepted`, `Established` or `Terminating`.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    pub status: String,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// A CamelCase reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A message for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl kapi_core::meta::StatusCondition for CustomResourceDefinitionCondition {
    fn condition_type(&self) -> &str {
        &self.type_
    }

    fn condition_status(&self) -> &str {
        &self.status
    }

    fn last_transition(&mut self) -> &mut Option<String> {
        &mut self.last_transition_time
    }
}

impl CustomResourceDefinition {
    /// The version objects are stored in: the first marked `storage` (validation refuses
    /// more than one).
    pub fn storage_version(&self) -> Option<&str> {
        (self.spec.versions.iter())
            .find(|v| v.storage)
            .map(|v| v.name.as_str())
    }

    /// kube's v1 defaults: the singular name is the kind in lower case, the list kind
    /// `<kind>List`, the conversion `None`, a webhook Service's port 443.
    fn default_fields(&mut self) {
        let names = &mut self.spec.names;
        if names.singular.as_deref().is_none_or(str::is_empty) {
            names.singular = Some(names.kind.to_lowercase());
        }
        if names.list_kind.as_deref().is_none_or(str::is_empty) && !names.kind.is_empty() {
            names.list_kind = Some(format!("{}List", names.kind));
        }
        let conversion = (self.spec.conversion).get_or_insert_with(|| CustomResourceConversion {
            strategy: "None".into(),
            webhook: None,
        });
        let service = (conversion.webhook.as_mut())
            .and_then(|webhook| webhook.client_config.as_mut())
            .and_then(|config| config.service.as_mut());
        if let Some(service) = service {
            service.port.get_or_insert(443);
        }
    }

    /// kube's `SetCRDCondition`: sets the condition of its type, its transition time now
    /// unless its status stays the same.
    pub fn set_condition(&mut self, condition: CustomResourceDefinitionCondition) {
        let status = self.status.get_or_insert_with(Default::default);
        kapi_core::meta::set_condition(&mut status.conditions, condition);
    }

    /// Adds the storage version to `status.storedVersions` (kube's strategy: every
    /// version objects may have been stored in stays listed until a migration removes it).
    fn record_storage_version(&mut self) {
        let Some(storage) = self.storage_version().map(str::to_owned) else {
            return;
        };
        let status = self.status.get_or_insert_with(Default::default);
        if !status.stored_versions.contains(&storage) {
            status.stored_versions.push(storage);
        }
    }
}

impl kapi_core::Strategy for CustomResourceDefinition {
    fn prepare_for_create(&mut self) {
        self.default_fields();
        self.record_storage_version();
    }

    fn prepare_for_update(&mut self, _old: &Self) {
        self.default_fields();
        self.record_storage_version();
    }

    fn validate(&self) -> Vec<FieldError> {
        validation::create(self)
    }

    fn validate_update(&self, old: &Self) -> Vec<FieldError> {
        validation::update(self, old)
    }

    fn has_delete_rules() -> bool {
        true
    }

    /// kube's CRD REST `Delete`: its objects go first, so the definition waits for the
    /// cleanup finalizer, and its status says so.
    fn prepare_for_delete(&mut self) {
        let finalizers = self.metadata.finalizers.get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(CLEANUP_FINALIZER.to_owned());
        }
        self.set_condition(CustomResourceDefinitionCondition {
            type_: "Terminating".into(),
            status: "True".into(),
            last_transition_time: None,
            reason: Some("InstanceDeletionPending".into()),
            message: Some(
                "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
                    .into(),
            ),
        });
    }
}
