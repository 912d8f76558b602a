// A misspelled key gets darling's "did you mean" suggestion.
use kapi_runtime::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "example.dev", shortnames = "wa", version(name = "v1", storage))]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

fn main() {}
