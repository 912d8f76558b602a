//! `apps.example.dev`: web applications.
//!
//! [`WebApp`] here is the hub (internal) type: never served itself, it is what every served
//! version ([`v1`], [`v1beta1`]) converts to and from, and what printer columns and the
//! scale subresource read.

pub mod v1;
pub mod v1beta1;

use kapi::Resource;
use kapi::error::{FieldError, FieldErrorType};
use kapi::meta::{Condition, ObjectMeta};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A web application run from one container image.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, Resource)]
#[resource(
    group = "apps.example.dev",
    kind = "WebApp",
    plural = "webapps",
    namespaced,
    short_name = "wa",
    category = "all",
    status,
    scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas"),
    printer_column(name = "Image", type = "string", json_path = ".spec.container.image"),
    printer_column(name = "Replicas", type = "integer", json_path = ".spec.replicas"),
    printer_column(name = "Ready", type = "integer", json_path = ".status.readyReplicas"),
    printer_column(name = "Paused", type = "boolean", json_path = ".spec.paused", priority = 1),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    selectable_field = ".spec.container.image",
    version(name = "v1", ty = v1::WebApp, storage),
    version(
        name = "v1beta1",
        ty = v1beta1::WebApp,
        deprecated = "apps.example.dev/v1beta1 WebApp is deprecated; use apps.example.dev/v1 WebApp"
    )
)]
pub struct WebApp {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: WebAppSpec,
    /// Observed state.
    pub status: WebAppStatus,
}

/// Desired state of a [`WebApp`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebAppSpec {
    /// How many instances to run.
    pub replicas: i32,
    /// What to run.
    pub container: Container,
    /// Stop reconciling while true.
    pub paused: bool,
}

/// The container a [`WebApp`] runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// Container image reference.
    pub image: String,
    /// Ports the container listens on.
    pub ports: Vec<ContainerPort>,
    /// Environment variables.
    pub env: Vec<EnvVar>,
}

/// A port a [`Container`] listens on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    /// Optional name of the port.
    pub name: Option<String>,
    /// Port number.
    pub container_port: i32,
    /// `TCP` or `UDP`.
    pub protocol: Protocol,
}

/// Transport protocol of a [`ContainerPort`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[allow(clippy::upper_case_acronyms)]
pub enum Protocol {
    /// TCP.
    #[default]
    TCP,
    /// UDP.
    UDP,
}

/// An environment variable of a [`Container`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvVar {
    /// Variable name.
    pub name: String,
    /// Variable value.
    pub value: String,
}

/// Observed state of a [`WebApp`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebAppStatus {
    /// Instances running.
    pub replicas: Option<i32>,
    /// Instances ready to serve.
    pub ready_replicas: Option<i32>,
    /// The generation the status was computed for.
    pub observed_generation: Option<i64>,
    /// Observations of the WebApp's state.
    pub conditions: Vec<Condition>,
}

impl kapi::Strategy for WebApp {
    /// Replicas must all run the same code: an image tagged `latest` can be a different
    /// image on each node that pulls it, so it may run at most one replica.
    fn validate(&self) -> Vec<FieldError> {
        let image = &self.spec.container.image;
        if self.spec.replicas > 1 && image.ends_with(":latest") {
            return vec![FieldError::new(
                FieldErrorType::Invalid,
                "spec.container.image",
                Some(image.as_str().into()),
                "an image tagged `latest` may run only one replica: pin a version or a digest",
            )];
        }
        Vec::new()
    }
}
