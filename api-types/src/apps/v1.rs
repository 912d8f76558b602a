//! `apps.example.dev/v1` WebApp: the storage version.

use kapi::Convert;
use kapi::meta::{Condition, ObjectMeta};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::Protocol;

/// A web application run from one container image.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Convert)]
#[convert(hub = super::WebApp)]
pub struct WebApp {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: WebAppSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<WebAppStatus>,
}

/// Desired state of a [`WebApp`].
#[kapi::rules]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, Convert)]
#[convert(hub = super::WebAppSpec)]
#[serde(rename_all = "camelCase")]
#[rule(
    "!self.container.image.endsWith(':latest')",
    message = "the image must name a tag other than latest",
    field_path = ".container.image"
)]
pub struct WebAppSpec {
    /// How many instances to run.
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0, max = 1000))]
    pub replicas: i32,
    /// What to run.
    pub container: Container,
    /// Stop reconciling while true.
    #[serde(default)]
    pub paused: bool,
}

impl Default for WebAppSpec {
    fn default() -> Self {
        WebAppSpec {
            replicas: default_replicas(),
            container: Container::default(),
            paused: false,
        }
    }
}

fn default_replicas() -> i32 {
    1
}

/// The container a [`WebApp`] runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Convert)]
#[convert(hub = super::Container)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// Container image reference.
    #[schemars(length(min = 1))]
    pub image: String,
    /// Ports the container listens on, keyed by port number.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["containerPort"]))]
    pub ports: Vec<ContainerPort>,
    /// Environment variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub env: Vec<EnvVar>,
}

/// A port a [`Container`] listens on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Convert)]
#[convert(hub = super::ContainerPort)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    /// Optional name of the port. Once set it cannot change: Services refer to ports by
    /// name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kapi-immutable" = true))]
    pub name: Option<String>,
    /// Port number.
    #[schemars(range(min = 1, max = 65535))]
    pub container_port: i32,
    /// `TCP` or `UDP`.
    #[serde(default)]
    pub protocol: Protocol,
}

/// An environment variable of a [`Container`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Convert)]
#[convert(hub = super::EnvVar)]
pub struct EnvVar {
    /// Variable name: letters, digits and `_`, not starting with a digit.
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    pub name: String,
    /// Variable value.
    #[serde(default)]
    pub value: String,
}

/// Observed state of a [`WebApp`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Convert)]
#[convert(hub = super::WebAppStatus)]
#[serde(rename_all = "camelCase")]
pub struct WebAppStatus {
    /// Instances running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Instances ready to serve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// The generation the status was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Observations of the WebApp's state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}
