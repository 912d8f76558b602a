use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(kind = "WebApp", version(name = "v1", storage))]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

fn main() {}
