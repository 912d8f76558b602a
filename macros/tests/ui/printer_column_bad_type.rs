use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    printer_column(name = "Age", type = "timestamp", json_path = ".metadata.creationTimestamp"),
    printer_column(name = "Gen", type = "integer", format = "i64", json_path = ".metadata.generation"),
    version(name = "v1", storage)
)]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

fn main() {}
