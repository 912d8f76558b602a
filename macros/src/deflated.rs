//! `deflated!("openapi/v2.json")`: a file of the calling crate compiled in deflated, as a
//! `kapi::api::Deflated`. The generated crate's OpenAPI documents are several megabytes of
//! JSON that compress tenfold; the program inflates one when it is first served.

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

/// How hard to compress: the best miniz has short of its slowest setting (the documents
/// compress in well under a second at this level, once per change of the generated crate).
const LEVEL: u8 = 9;

pub(crate) fn expand(path: &LitStr) -> TokenStream {
    let relative = path.value();
    let Some(directory) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return syn::Error::new(
            path.span(),
            "deflated! is only used in a crate cargo builds",
        )
        .to_compile_error();
    };
    let file = std::path::Path::new(&directory).join(&relative);
    let bytes = match std::fs::read(&file) {
        Ok(bytes) => bytes,
        Err(e) => {
            let message =
                format!("cannot read `{relative}` (relative to the crate's directory): {e}");
            return syn::Error::new(path.span(), message).to_compile_error();
        }
    };
    let deflated = miniz_oxide::deflate::compress_to_vec(&bytes, LEVEL);
    let deflated = proc_macro2::Literal::byte_string(&deflated);
    let len = bytes.len();
    let Some(absolute) = file.to_str() else {
        return syn::Error::new(path.span(), "the file's path is not UTF-8").to_compile_error();
    };
    quote! {
        {
            // Never used: it makes cargo build the crate again when the file changes, as
            // `include_bytes!` does (a constant nobody reads is not in the program).
            const _: &[u8] = include_bytes!(#absolute);
            ::kapi::api::Deflated::new(#deflated, #len)
        }
    }
}
