// `crate = "..."` takes a path; one that does not parse is an error on it, and one that
// names no crate with kapi's items fails where the expansion uses it.
use kapi::Resource;
use kapi::meta::ObjectMeta;

#[derive(Resource)]
#[resource(crate = "not a path", group = "shop.example.dev", version(name = "v1", ty = Order, storage))]
pub struct Order {
    pub metadata: ObjectMeta,
}

#[derive(Resource)]
#[resource(crate = "::serde", group = "shop.example.dev", version(name = "v1", ty = Cart, storage))]
pub struct Cart {
    pub metadata: ObjectMeta,
}

fn main() {}
