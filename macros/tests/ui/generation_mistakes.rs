// `generation(...)` takes one form; its paths name fields alone; `zero_object` needs each
// version type's `Default`.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    namespaced,
    generation(created, path = ".spec"),
    version(name = "v1", storage)
)]
pub struct TwoForms {
    pub metadata: ObjectMeta,
    pub spec: Spec,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    namespaced,
    generation(path = ".spec.items[0]", path = "spec"),
    version(name = "v1", storage)
)]
pub struct IndexedPath {
    pub metadata: ObjectMeta,
    pub spec: Spec,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "example.dev", namespaced, zero_object, version(name = "v1", storage))]
pub struct NoDefault {
    pub metadata: ObjectMeta,
    pub spec: Spec,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Spec {
    pub items: Vec<String>,
}

fn main() {}
