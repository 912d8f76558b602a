use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "example.dev", status, version(name = "v1", storage))]
pub struct WebApp {
    pub metadata: ObjectMeta,
    pub spec: String,
}

fn main() {}
