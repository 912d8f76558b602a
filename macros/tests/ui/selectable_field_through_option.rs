// A path may step through `Option` fields (`.source.component` with `source:
// Option<EventSource>`), and a field missing behind one is still reported on the literal,
// naming the type inside the `Option`.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    namespaced,
    selectable_field(label = "source", path = ".source.component"),
    selectable_field(label = "host", path = ".source.hots"),
    selectable_field = ".ports[0].name",
    version(name = "v1", storage)
)]
pub struct Report {
    pub metadata: ObjectMeta,
    pub source: Option<EventSource>,
    pub ports: Option<Vec<Port>>,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct EventSource {
    pub component: Option<String>,
    pub host: Option<String>,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Port {
    pub name: String,
}

fn main() {}
