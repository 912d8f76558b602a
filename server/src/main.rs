//! `kapi-server`: the example API server: kapi's API server (`kapi::server::app`) serving
//! the generated example API.

mod allocator;

use std::process::ExitCode;

fn main() -> ExitCode {
    kapi::server::app::main(kapi::server::app::Api {
        name: "kapi-server",
        scheme: kapi_generated::scheme,
        routes: kapi_generated::ROUTES,
        documents: &kapi_generated::documents::DOCUMENTS,
        // `build.rs` records the commit and the compiler.
        version: kapi::server::build_version!(),
    })
}
