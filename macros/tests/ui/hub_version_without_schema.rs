// The hub is its own version (no `ty`) but has no schema: the error points at `version`.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, Resource)]
#[resource(group = "example.dev", version(name = "v1", storage))]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

fn main() {}
