// A computed cell is a `fn(&serde_json::Value) -> serde_json::Value`; another function is
// reported on its path, and a path that names nothing too.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    printer_column(name = "Size", type = "string", json_path = ".size", cell = "wrong_type"),
    printer_column(name = "Kind", type = "string", json_path = ".size", cell = "missing"),
    version(name = "v1", storage)
)]
pub struct Thing {
    pub metadata: ObjectMeta,
    pub size: String,
}

fn wrong_type(_: &str) -> String {
    String::new()
}

fn main() {}
