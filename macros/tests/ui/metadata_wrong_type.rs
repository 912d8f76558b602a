use kapi::Resource;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "example.dev", version(name = "v1", storage))]
pub struct WebApp {
    pub metadata: String,
}

fn main() {}
