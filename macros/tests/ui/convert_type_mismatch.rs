// A field whose type does not convert to its hub field's is rustc's error on the type.
use kapi::Convert;

mod hub {
    #[derive(Clone, Default)]
    pub struct Spec {
        pub replicas: String,
    }
}

#[derive(Convert)]
#[convert(hub = hub::Spec)]
pub struct Spec {
    pub replicas: i32,
}

fn main() {}
