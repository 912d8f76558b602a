//! `apps.example.dev/v1beta1` WebApp: deprecated, a single image and port.

use kapi::Convert;
use kapi::meta::{Condition, ObjectMeta};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, Convert)]
#[convert(hub = super::WebAppSpec)]
#[serde(rename_all = "camelCase")]
pub struct WebAppSpec {
    /// How many instances to run.
    #[serde(default = "kapi::defaults::i32::<1>")]
    #[schemars(range(min = 0, max = 1000))]
    pub replicas: i32,
    /// Container image reference (v1: `spec.container.image`).
    #[schemars(length(min = 1))]
    #[convert(path = "container.image")]
    pub image: String,
    /// The port the container listens on (v1: the first of `spec.container.ports`).
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    #[convert(with = "first_port")]
    pub port: i32,
}

impl Default for WebAppSpec {
    fn default() -> Self {
        WebAppSpec {
            replicas: kapi::defaults::i32::<1>(),
            image: String::new(),
            port: default_port(),
        }
    }
}

fn default_port() -> i32 {
    8080
}

/// `port` is the number of the hub's first container port, or 8080 when it has none; the
/// other ports, and the first one's name and protocol, are not expressed here and keep the
/// base hub's values.
///
/// Writing back the port a hub reads as changes nothing (the `Convert` law the generated
/// round-trip tests check): a hub with no ports reads as 8080, so 8080 onto it leaves it
/// without ports rather than adding one.
mod first_port {
    use super::super::{ContainerPort, WebAppSpec};

    pub(super) fn into_hub(port: i32, hub: &mut WebAppSpec) {
        if port == from_hub(hub) {
            return;
        }
        match hub.container.ports.first_mut() {
            Some(first) => first.container_port = port,
            None => hub.container.ports.push(ContainerPort {
                container_port: port,
                ..ContainerPort::default()
            }),
        }
    }

    pub(super) fn from_hub(hub: &WebAppSpec) -> i32 {
        (hub.container.ports.first()).map_or_else(super::default_port, |p| p.container_port)
    }
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
