// A selectable field's fallback path (`or`, kube's core Event `source`: the component, else
// the reporting controller) is checked like its path: a missing field is reported on the
// `or` literal.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    namespaced,
    selectable_field(label = "source", path = ".source.component", or = ".reporter"),
    selectable_field(label = "origin", path = ".source.component", or = ".reportr"),
    version(name = "v1", storage)
)]
pub struct Report {
    pub metadata: ObjectMeta,
    pub source: Option<EventSource>,
    pub reporter: Option<String>,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct EventSource {
    pub component: Option<String>,
}

fn main() {}
