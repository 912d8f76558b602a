//! The core (legacy) group, served under `/api/v1`.
//!
//! Both kinds are built into kubectl, which sends them as protobuf (`kubectl create
//! namespace`, `kubectl create configmap`): their descriptors (`*_PROTO`) follow
//! k8s.io/api's `core/v1/generated.proto`.

pub mod event;

use std::collections::BTreeMap;

use kapi_core::api::{ProtoField, ProtoKind, ProtoMessage};
use kapi_core::error::{FieldError, FieldErrorType};
use kapi_core::meta::{OBJECT_META_PROTO, ObjectMeta};
use kapi_core::{ByteString, validation};
use kapi_macros::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use event::Event;

/// A namespace: a scope for names of namespaced objects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "",
    kind = "Namespace",
    plural = "namespaces",
    short_name = "ns",
    names = "dns_label",
    status,
    printer_column(name = "Status", type = "string", json_path = ".status.phase"),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    finalize,
    version(name = "v1", storage),
    protobuf = NAMESPACE_PROTO
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

/// `k8s.io.api.core.v1.Namespace` on the wire.
pub static NAMESPACE_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.core.v1.Namespace",
    fields: &[
        ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
        ProtoField::new(2, "spec", ProtoKind::Message(&NAMESPACE_SPEC_PROTO)),
        ProtoField::new(3, "status", ProtoKind::Message(&NAMESPACE_STATUS_PROTO)),
    ],
};

/// Desired state of a [`Namespace`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.core.v1.NamespaceSpec")]
pub struct NamespaceSpec {
    /// Must be empty before the namespace is removed from storage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "set"))]
    pub finalizers: Vec<String>,
}

/// `k8s.io.api.core.v1.NamespaceSpec` on the wire.
pub static NAMESPACE_SPEC_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.core.v1.NamespaceSpec",
    fields: &[ProtoField::repeated(1, "finalizers", ProtoKind::String)],
};

/// Observed state of a [`Namespace`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.api.core.v1.NamespaceStatus")]
pub struct NamespaceStatus {
    /// The lifecycle phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<NamespacePhase>,
    /// What the namespace's deletion waits for (`NamespaceContentRemaining`,
    /// `NamespaceFinalizersRemaining`, `NamespaceDeletionContentFailure`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<NamespaceCondition>,
}

/// `k8s.io.api.core.v1.NamespaceStatus` on the wire.
pub static NAMESPACE_STATUS_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.core.v1.NamespaceStatus",
    fields: &[
        ProtoField::new(1, "phase", ProtoKind::String),
        ProtoField::repeated(
            2,
            "conditions",
            ProtoKind::Message(&NAMESPACE_CONDITION_PROTO),
        ),
    ],
};

/// One condition of a [`Namespace`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.core.v1.NamespaceCondition")]
pub struct NamespaceCondition {
    /// The condition's type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<kapi_core::meta::Time>,
    /// Why, in one word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `k8s.io.api.core.v1.NamespaceCondition` on the wire.
pub static NAMESPACE_CONDITION_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.core.v1.NamespaceCondition",
    fields: &[
        ProtoField::new(1, "type", ProtoKind::String),
        ProtoField::new(2, "status", ProtoKind::String),
        ProtoField::new(4, "lastTransitionTime", ProtoKind::Time),
        ProtoField::new(5, "reason", ProtoKind::String),
        ProtoField::new(6, "message", ProtoKind::String),
    ],
};

/// The finalizer of kube's namespace controller: a namespace goes once its content has.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

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
    delete_status,
    namespaced,
    short_name = "cm",
    printer_column(
        name = "Data",
        type = "integer",
        json_path = ".data",
        description = "Number of data entries"
    ),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage),
    protobuf = CONFIG_MAP_PROTO
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
    pub binary_data: Option<BTreeMap<String, ByteString>>,
    /// When true, `data` and `binaryData` cannot be changed after creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
}

/// `k8s.io.api.core.v1.ConfigMap` on the wire: `binaryData` is `map<string, bytes>`,
/// base64 in JSON; `immutable` is a Go `*bool`, so `false` sent is kept.
pub static CONFIG_MAP_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.core.v1.ConfigMap",
    fields: &[
        ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
        ProtoField::map(2, "data", &ProtoKind::String, &ProtoKind::String),
        ProtoField::map(3, "binaryData", &ProtoKind::String, &ProtoKind::Bytes),
        ProtoField::new(4, "immutable", ProtoKind::Bool).keep_zero(),
    ],
};

impl kapi_core::Strategy for Namespace {
    /// kube's own kinds may be replaced without a resourceVersion.
    fn allow_unconditional_update() -> bool {
        true
    }

    fn prepare_for_create(&mut self) {
        // A namespace is born active; only deletion moves it to `Terminating`. Its content
        // is removed before it goes (kube's namespace strategy).
        self.status = NamespaceStatus {
            phase: Some(NamespacePhase::Active),
            conditions: Vec::new(),
        };
        if !self
            .spec
            .finalizers
            .iter()
            .any(|f| f == NAMESPACE_FINALIZER)
        {
            self.spec.finalizers.push(NAMESPACE_FINALIZER.to_owned());
        }
    }

    fn prepare_for_update(&mut self, old: &Self) {
        // The status is the server's, and `spec.finalizers` changes only through
        // `/finalize` (kube's namespace strategy).
        self.status = old.status.clone();
        self.spec.finalizers = old.spec.finalizers.clone();
    }

    /// kube's `ValidateNamespace`: each of `spec.finalizers` is a finalizer name.
    fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        for finalizer in &self.spec.finalizers {
            for message in validation::finalizer_name(finalizer) {
                errors.push(invalid("spec.finalizers", finalizer, message));
            }
        }
        errors
    }
}

/// A `FieldValueInvalid` error showing the string `value`.
fn invalid(field: impl Into<String>, value: &str, message: String) -> FieldError {
    FieldError::new(
        FieldErrorType::Invalid,
        field,
        Some(Value::String(value.to_owned())),
        message,
    )
}

/// kube's `MaxSecretSize`: what `data` and `binaryData` may hold together.
pub const CONFIG_MAP_MAX_SIZE: usize = 1024 * 1024;

impl kapi_core::Strategy for ConfigMap {
    /// kube's own kinds may be replaced without a resourceVersion.
    fn allow_unconditional_update() -> bool {
        true
    }

    /// kube's `ValidateConfigMap`: every key is a config key and in one map only, and both
    /// maps hold at most [`CONFIG_MAP_MAX_SIZE`] bytes (`binaryData` counted decoded).
    fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let (data, binary) = (
            self.data.clone().unwrap_or_default(),
            self.binary_data.clone().unwrap_or_default(),
        );
        let mut size = 0;
        for (key, value) in &data {
            let field = format!("data[{key}]");
            for message in validation::config_map_key(key) {
                errors.push(invalid(field.as_str(), key, message));
            }
            if binary.contains_key(key) {
                errors.push(invalid(
                    field,
                    key,
                    "duplicate of key present in binaryData".into(),
                ));
            }
            size += value.len();
        }
        for (key, value) in &binary {
            for message in validation::config_map_key(key) {
                errors.push(invalid(format!("binaryData[{key}]"), key, message));
            }
            size += value.0.len();
        }
        if size > CONFIG_MAP_MAX_SIZE {
            // kube reports the whole object, at the empty path (`field.NewPath("")`).
            errors.push(FieldError::new(
                FieldErrorType::TooLong,
                "[]",
                None,
                format!("may not be more than {CONFIG_MAP_MAX_SIZE} bytes"),
            ));
        }
        errors
    }

    /// kube's `ValidateConfigMapUpdate`: an immutable ConfigMap keeps `immutable`, `data`
    /// and `binaryData`; then the rules of a new one.
    fn validate_update(&self, old: &Self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if old.immutable == Some(true) {
            let forbidden = |field: &str| {
                FieldError::new(
                    FieldErrorType::Forbidden,
                    field,
                    None,
                    "field is immutable when `immutable` is set",
                )
            };
            if self.immutable != Some(true) {
                errors.push(forbidden("immutable"));
            }
            if self.data != old.data {
                errors.push(forbidden("data"));
            }
            if self.binary_data != old.binary_data {
                errors.push(forbidden("binaryData"));
            }
        }
        errors.extend(self.validate());
        errors
    }
}
