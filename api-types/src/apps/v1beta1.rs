//! `apps.example.dev/v1beta1` WebApp: deprecated, a single image and port.

use kapi_runtime::Convert;
use kapi_runtime::meta::{Condition, ObjectMeta};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A web application run from one container image.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebAppSpec {
    /// How many instances to run.
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0, max = 1000))]
    pub replicas: i32,
    /// Container image reference (v1: `spec.container.image`).
    #[schemars(length(min = 1))]
    pub image: String,
    /// The port the container listens on (v1: the first of `spec.container.ports`).
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,
}

impl Default for WebAppSpec {
    fn default() -> Self {
        WebAppSpec {
            replicas: default_replicas(),
            image: String::new(),
            port: default_port(),
        }
    }
}

fn default_replicas() -> i32 {
    1
}

fn default_port() -> i32 {
    8080
}

/// Observed state of a [`WebApp`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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

// Written by hand until conversion attributes land (issue "API versions"). v1beta1 cannot
// express env, paused or more than one port: that issue makes them survive a round trip.
impl Convert<super::WebApp> for WebApp {
    fn into_hub(self) -> super::WebApp {
        let status = self.status.unwrap_or_default();
        super::WebApp {
            metadata: self.metadata,
            spec: super::WebAppSpec {
                replicas: self.spec.replicas,
                container: super::Container {
                    image: self.spec.image,
                    ports: vec![super::ContainerPort {
                        name: None,
                        container_port: self.spec.port,
                        protocol: super::Protocol::TCP,
                    }],
                    env: Vec::new(),
                },
                paused: false,
            },
            status: super::WebAppStatus {
                replicas: status.replicas,
                ready_replicas: status.ready_replicas,
                observed_generation: status.observed_generation,
                conditions: status.conditions,
            },
        }
    }

    fn from_hub(hub: super::WebApp) -> Self {
        let status = hub.status;
        let port =
            (hub.spec.container.ports.first()).map_or_else(default_port, |p| p.container_port);
        WebApp {
            metadata: hub.metadata,
            spec: WebAppSpec {
                replicas: hub.spec.replicas,
                image: hub.spec.container.image,
                port,
            },
            status: (status != super::WebAppStatus::default()).then_some(WebAppStatus {
                replicas: status.replicas,
                ready_replicas: status.ready_replicas,
                observed_generation: status.observed_generation,
                conditions: status.conditions,
            }),
        }
    }
}
