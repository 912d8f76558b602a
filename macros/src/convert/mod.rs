//! `#[derive(Convert)]`: the same pipeline as `Resource`'s, on a smaller input.
//!
//! 1. `attr`: darling parses `#[convert(...)]` on the struct and its fields.
//! 2. `model`: each field with where it lives in the hub and the shape of its type.
//! 3. `check`: the rules between keys.
//! 4. `expand`: the `Convert<Hub>` impl; rustc checks that hub fields exist and convert.

mod attr;
mod check;
mod expand;
mod model;

use darling::FromDeriveInput;
use proc_macro2::TokenStream;
use syn::DeriveInput;

/// The derive's output for `input`: the impl, or every error.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = darling::Error::accumulator();
    let Some(attrs) = errors.handle(attr::ConvertAttrs::from_derive_input(input)) else {
        return (errors.finish().err())
            .map(darling::Error::write_errors)
            .unwrap_or_default();
    };
    let item = model::Struct::new(attrs);
    check::check(&item, &mut errors);
    match errors.finish() {
        Ok(()) => expand::expand(&item),
        // The impl goes out with the errors, so that a hub field that does not exist shows
        // up in the same compile (fields with errors are left out of it).
        Err(errors) => {
            let mut tokens = errors.write_errors();
            tokens.extend(expand::expand(&item));
            tokens
        }
    }
}
