// A subresource's field that parses but names no field: rustc's error points at the literal.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    namespaced,
    subresource(name = "approval", field = ".spec.aproval"),
    version(name = "v1", storage)
)]
pub struct WebApp {
    pub metadata: ObjectMeta,
    pub spec: WebAppSpec,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct WebAppSpec {
    pub approval: bool,
}

fn main() {}
