// Errors darling finds while parsing: all reported, with the hub-shape error found alongside.
use kapi::Resource;

#[derive(Resource)]
#[resource(
    group = "example.dev",
    group = "other.dev",
    namespaced = "yes",
    names = "dns",
    printer_column(name = "Image", type = "string", jsonpath = ".spec.image"),
    version(name = "v1", storage, deprecated = 1)
)]
pub enum WebApp {}

fn main() {}
