// A field takes one of `rename`, `path`, `with` and `skip`; `path` names Rust fields.
use kapi::Convert;

mod hub {
    #[derive(Clone, Default)]
    pub struct Spec {
        pub replicas: i32,
        pub container: Container,
    }

    #[derive(Clone, Default)]
    pub struct Container {
        pub image: String,
    }
}

#[derive(Convert)]
#[convert(hub = hub::Spec)]
pub struct Spec {
    #[convert(path = "container.image", rename = "image")]
    pub image: String,
    #[convert(skip, with = "replicas")]
    pub replicas: i32,
    #[convert(path = "container..image")]
    pub other_image: String,
}

fn main() {}
