// A `read_only` kind is only read: it cannot also be only created, nor have subresources or
// several versions.
use kapi::Resource;
use kapi::meta::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "probes.example.dev",
    read_only,
    create_only,
    status,
    version(name = "v1", storage),
    version(name = "v2")
)]
pub struct Probe {
    pub metadata: ObjectMeta,
    pub status: ProbeStatus,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ProbeStatus {
    pub healthy: bool,
}

fn main() {}
