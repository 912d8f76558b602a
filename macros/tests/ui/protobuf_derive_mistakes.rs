// `#[derive(Protobuf)]`: every mistake of one struct in one compile, each at its place: a
// field with neither a number nor `skip`, a number used twice, a zero, a field both
// numbered and skipped, and a field whose type has no wire form (rustc's error on it).
use kapi::Protobuf;

pub struct NoWireForm;

#[derive(serde::Serialize, Protobuf)]
#[serde(rename_all = "camelCase")]
#[protobuf(name = "example.v1.Spec")]
pub struct Spec {
    pub unnumbered: String,
    #[protobuf(tag = 1)]
    pub first: String,
    #[protobuf(tag = 1)]
    pub second: i32,
    #[protobuf(tag = 0)]
    pub zero: bool,
    #[protobuf(tag = 4, skip)]
    pub both: String,
}

#[derive(Protobuf)]
#[protobuf(name = "example.v1.Status")]
pub struct Status {
    #[protobuf(tag = 1)]
    pub opaque: NoWireForm,
}

fn main() {}
