// Every mistake a `subresource(...)` can hold, reported in one compile, each on its token:
// a reserved or malformed name, no shape or two, a method HTTP connects with no, a body
// kind that cannot be named, a name given twice.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(
    group = "example.dev",
    namespaced,
    subresource(name = "status", field = ".spec.replicas"),
    subresource(name = "Log_Files", read),
    subresource(name = "nothing"),
    subresource(name = "both", read, field = ".spec.replicas"),
    subresource(name = "exec", connect(options = "ExecOptions", method = "TRACE", method = "GET", method = "GET")),
    subresource(name = "proxy", connect(options = "proxyOptions")),
    subresource(name = "evict", create(group = "Policy", version = "V1", kind = "eviction", body = Eviction)),
    subresource(name = "approval", field = ".spec.replicas"),
    subresource(name = "approval", field = ".spec.replicas"),
    version(name = "v1", storage)
)]
pub struct WebApp {
    pub metadata: ObjectMeta,
    pub spec: WebAppSpec,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct WebAppSpec {
    pub replicas: i32,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Eviction {}

fn main() {}
