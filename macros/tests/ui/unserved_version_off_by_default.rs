use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    version(name = "v1", storage),
    version(name = "v1beta1", served = false, off_by_default)
)]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

fn main() {}
