//! The core (legacy) group, served under `/api/v1`: Namespaces, ConfigMaps and Events,
//! generated with kube's other kinds ([`crate::api::core::v1`]), and their strategies.

pub mod event;

use kapi_core::error::{FieldError, FieldErrorType};
use kapi_core::validation;
use serde_json::Value;

pub use crate::api::core::v1::{
    ConfigMap, Event, EventSeries, EventSource, Namespace, NamespaceCondition, NamespaceSpec,
    NamespaceStatus,
};

/// The finalizer of kube's namespace controller: a namespace goes once its content has.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

/// A namespace's phase while in use.
pub const NAMESPACE_ACTIVE: &str = "Active";

/// A namespace's phase once it is being deleted, with its contents.
pub const NAMESPACE_TERMINATING: &str = "Terminating";

impl kapi_core::Strategy for Namespace {
    /// kube's own kinds may be replaced without a resourceVersion.
    fn allow_unconditional_update() -> bool {
        true
    }

    fn subresource_metadata(subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => kapi_core::api::STATUS_METADATA,
            _ => &[],
        }
    }

    fn has_canonical_form() -> bool {
        true
    }

    /// The name label once the name is known (a generated name is chosen after the
    /// defaults, `SetDefaults_Namespace`, ran), as kube's strategy canonicalizes a namespace.
    fn canonicalize(&mut self) {
        crate::defaults::core_v1::namespace(self);
    }

    fn prepare_for_create(&mut self) {
        // A namespace is born active; only deletion moves it to `Terminating`. Its content
        // is removed before it goes (kube's namespace strategy).
        self.status = NamespaceStatus {
            phase: NAMESPACE_ACTIVE.to_owned(),
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
        // `spec.finalizers` changes only through `/finalize` (kube's namespace strategy);
        // the status only through `/status`, as for every kind with that subresource.
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

/// The label kube gives every namespace, its name (so that selectors can name namespaces).
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

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
        let (data, binary) = (&self.data, &self.binary_data);
        let mut size = 0;
        for (key, value) in data {
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
        for (key, value) in binary {
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
