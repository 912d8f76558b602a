// Every mistake is reported in one compile, including the one only rustc can see (a
// printer column path naming no field).
use kapi::Resource;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "Example.dev",
    kind = "webApp",
    plural = "Web_Apps",
    short_name = "wa",
    short_name = "wa",
    status,
    printer_column(name = "Image", type = "str", json_path = ".spec.image"),
    printer_column(name = "Port", type = "integer", json_path = ".spec.port."),
    selectable_field = ".spec.image",
    selectable_field = ".spec.image",
    version(name = "v1"),
    version(name = "v1", deprecated = "")
)]
pub struct WebApp {
    pub spec: WebAppSpec,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct WebAppSpec {
    pub images: Vec<String>,
}

fn main() {}
