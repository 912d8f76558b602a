// `protobuf` must name a `ProtoMessage`: rustc says so at the path, also when the attribute
// has other mistakes (the second kind's unknown printer column type).
use kapi::Resource;
use kapi::meta::ObjectMeta;

pub static WEB_APP_PROTO: &str = "k8s.io.api.apps.v1.WebApp";

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "example.dev", version(name = "v1", storage), protobuf = WEB_APP_PROTO)]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    printer_column(name = "Age", type = "duration", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage),
    protobuf = WEB_APP_PROTO
)]
pub struct Tenant {
    pub metadata: ObjectMeta,
}

fn main() {}
