// A misspelled key gets darling's "did you mean" suggestion.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "example.dev", shortnames = "wa", version(name = "v1", storage))]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

fn main() {}
