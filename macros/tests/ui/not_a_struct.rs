use kapi::Resource;

#[derive(Resource)]
#[resource(group = "example.dev", version(name = "v1", storage))]
pub enum WebApp {
    Running,
}

#[derive(Resource)]
#[resource(group = "example.dev", version(name = "v1", storage))]
pub struct Tuple(pub kapi::meta::ObjectMeta);

fn main() {}
