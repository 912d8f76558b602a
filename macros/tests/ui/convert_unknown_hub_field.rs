// A hub field that does not exist is rustc's "no field" error, on the field's name or on
// the `rename`/`path` literal.
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
    pub replica: i32,
    #[convert(path = "container.imag")]
    pub image: String,
    #[convert(rename = "pause")]
    pub paused: bool,
}

fn main() {}
