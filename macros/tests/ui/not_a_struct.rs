use kapi_runtime::Resource;

#[derive(Resource)]
#[resource(group = "example.dev", version(name = "v1", storage))]
pub enum WebApp {
    Running,
}

#[derive(Resource)]
#[resource(group = "example.dev", version(name = "v1", storage))]
pub struct Tuple(pub kapi_runtime::meta::ObjectMeta);

fn main() {}
