//! The generator of Kubernetes' built-in kinds: kube's own description of its API
//! (k8s.io/api's `types.go` and `generated.proto`, at the tag kube 1.32 ships, and for the
//! few kinds of later kubes whose resources name it, at a later tag) reduced to checked-in
//! facts ([`extract`], run once by `cargo xtask builtin-inputs`), and those facts rendered
//! as kapi declarations ([`render`], by `cargo xtask generate`; a test checks the rendered
//! files are fresh, offline).

mod attribute;
pub mod defaults;
pub mod extract;
pub mod facts;
pub mod generate;
mod generation;
pub mod go;
pub mod place;
pub mod proto;
pub mod render;
