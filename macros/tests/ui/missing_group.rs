use kapi_runtime::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(kind = "WebApp", version(name = "v1", storage))]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

fn main() {}
