// A version type that has no `Convert<Hub>` impl, no schema and no serde impls.
use kapi::Resource;
use kapi::meta::ObjectMeta;

pub mod v1 {
    pub struct WebApp {
        pub metadata: kapi::meta::ObjectMeta,
    }
}

#[derive(Resource)]
#[resource(group = "example.dev", version(name = "v1", ty = v1::WebApp, storage))]
pub struct WebApp {
    pub metadata: ObjectMeta,
}

fn main() {}
