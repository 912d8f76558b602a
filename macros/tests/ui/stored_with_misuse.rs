use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "example.dev", version(name = "v1", storage))]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

/// Has fields of its own, a storage version, and a selector label with an operator.
#[derive(Resource)]
#[resource(
    group = "other.example.dev",
    kind = "WebApp",
    stored_with = WebApp,
    selectable_field(label = "name!", path = ".metadata.name"),
    selectable_field(label = "metadata.name", path = ".metadata.name"),
    selectable_field(label = "x", path = ".spec.nothing"),
    version(name = "v1", storage)
)]
pub struct OtherWebApp {
    pub extra: i32,
}

fn main() {}
