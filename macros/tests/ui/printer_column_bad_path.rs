// JSON path syntax errors, each on its literal.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    printer_column(name = "Image", type = "string", json_path = "spec.image"),
    printer_column(name = "Port", type = "integer", json_path = ".spec.ports[first].port"),
    printer_column(name = "Env", type = "string", json_path = ".spec.env-vars"),
    version(name = "v1", storage)
)]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

fn main() {}
