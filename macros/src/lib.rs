//! Derives for kapi resource types. (Being written.)
use proc_macro::TokenStream;

/// Declares a kind on its hub type.
#[proc_macro_derive(Resource, attributes(resource))]
pub fn derive_resource(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
