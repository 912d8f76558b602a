use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "apps_example.dev",
    singular = "-webapp",
    category = "All",
    scale(spec_replicas_path = ".status.replicas", status_replicas_path = ".spec.replicas"),
    version(name = "V1", storage)
)]
#[allow(non_camel_case_types)]
pub struct Web_App {
    pub metadata: ObjectMeta,
    pub spec: Replicas,
    pub status: Replicas,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Replicas {
    pub replicas: i32,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "example.dev", version(name = "v1", ty = super::Other, storage))]
pub struct Generic<T> {
    pub metadata: ObjectMeta,
    pub spec: T,
}

fn main() {}
