// A misspelled key gets darling's "did you mean" suggestion; `hub` is required.
use kapi::Convert;

mod hub {
    #[derive(Clone, Default)]
    pub struct Spec {
        pub replicas: i32,
    }
}

#[derive(Convert)]
#[convert(hub = hub::Spec)]
pub struct Spec {
    #[convert(renmae = "replicas")]
    pub count: i32,
}

#[derive(Convert)]
pub struct NoHub {
    pub replicas: i32,
}

fn main() {}
