// A scale path that parses but names no field: rustc's error points at the literal.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    namespaced,
    scale(spec_replicas_path = ".spec.replics", status_replicas_path = ".status.replicas"),
    version(name = "v1", storage)
)]
pub struct WebApp {
    pub metadata: ObjectMeta,
    pub spec: WebAppSpec,
    pub status: WebAppStatus,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct WebAppSpec {
    pub replicas: i32,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct WebAppStatus {
    pub replicas: i32,
}

fn main() {}
