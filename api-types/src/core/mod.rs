//! The core (legacy) group, served under `/api/v1`.

use std::collections::BTreeMap;

use kapi_runtime::Resource;
use kapi_runtime::error::{FieldError, FieldErrorType};
use kapi_runtime::meta::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A namespace: a scope for names of namespaced objects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "",
    kind = "Namespace",
    plural = "namespaces",
    short_name = "ns",
    status,
    printer_column(name = "Status", type = "string", json_path = ".status.phase"),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage)
)]
#[schemars(rename = "io.k8s.api.core.v1.Namespace")]
pub struct Namespace {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state of the namespace.
    #[serde(default)]
    pub spec: NamespaceSpec,
    /// Observed state of the namespace.
    #[serde(default)]
    pub status: NamespaceStatus,
}

/// Desired state of a [`Namespace`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.core.v1.NamespaceSpec")]
pub struct NamespaceSpec {
    /// Must be empty before the namespace is removed from storage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "set"))]
    pub finalizers: Vec<String>,
}

/// Observed state of a [`Namespace`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.core.v1.NamespaceStatus")]
pub struct NamespaceStatus {
    /// The lifecycle phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<NamespacePhase>,
}

/// Lifecycle phase of a [`Namespace`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum NamespacePhase {
    /// In use.
    Active,
    /// Being deleted, with its contents.
    Terminating,
}

/// Configuration data for other objects to consume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "",
    kind = "ConfigMap",
    plural = "configmaps",
    namespaced,
    short_name = "cm",
    printer_column(
        name = "Data",
        type = "integer",
        json_path = ".data",
        description = "Number of data entries"
    ),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage)
)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.core.v1.ConfigMap")]
pub struct ConfigMap {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// UTF-8 configuration data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<BTreeMap<String, String>>,
    /// Binary configuration data, base64-encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_data: Option<BTreeMap<String, String>>,
    /// When true, `data` and `binaryData` cannot be changed after creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
}

impl kapi_runtime::Strategy for Namespace {
    fn prepare_for_create(&mut self) {
        // A namespace is born active; only deletion moves it to `Terminating`.
        self.status.phase = Some(NamespacePhase::Active);
    }

    fn prepare_for_update(&mut self, old: &Self) {
        // The phase is the server's: clients cannot change it through an update.
        self.status.phase = old.status.phase;
    }
}

impl kapi_runtime::Strategy for ConfigMap {
    fn validate_update(&self, old: &Self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if old.immutable == Some(true) {
            if self.data != old.data || self.binary_data != old.binary_data {
                errors.push(FieldError::new(
                    FieldErrorType::Forbidden,
                    "data",
                    None,
                    "field is immutable when `immutable` is set",
                ));
            }
            if self.immutable != Some(true) {
                errors.push(FieldError::new(
                    FieldErrorType::Forbidden,
                    "immutable",
                    None,
                    "field is immutable when `immutable` is set",
                ));
            }
        }
        errors
    }
}
