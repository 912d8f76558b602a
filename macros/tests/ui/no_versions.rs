use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "example.dev", namespaced)]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "example.dev", version(name = "v1", served = false), version(name = "v2", served = false))]
pub struct Tenant {
    pub metadata: ObjectMeta,
}

fn main() {}
