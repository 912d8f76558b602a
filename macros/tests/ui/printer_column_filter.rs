// Equality filters (`[?(@.type=="Ready")]`) are printer columns' only: elsewhere they are
// refused on the literal; the filter's own path is checked on the list's items.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    printer_column(
        name = "Ready",
        type = "string",
        json_path = ".status.conditions[?(@.type==\"Ready\")].status"
    ),
    printer_column(
        name = "Why",
        type = "string",
        json_path = ".status.conditions[?(@.kind==\"Ready\")].reason"
    ),
    printer_column(name = "Odd", type = "string", json_path = ".status.conditions[?(@.type)]"),
    selectable_field = ".status.conditions[?(@.type==\"Ready\")].status",
    version(name = "v1", storage)
)]
pub struct Machine {
    pub metadata: ObjectMeta,
    pub status: Option<Status>,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Status {
    pub conditions: Vec<Condition>,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Condition {
    pub r#type: String,
    pub status: String,
    pub reason: Option<String>,
}

fn main() {}
