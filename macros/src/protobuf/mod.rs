//! `#[derive(Protobuf)]`: a struct's protobuf descriptor from its fields, the same pipeline
//! as the other derives.
//!
//! 1. `attr`: darling parses `#[protobuf(...)]` on the struct and its fields, and the serde
//!    attributes that name fields in JSON (`rename`, `rename_all = "camelCase"`, `flatten`).
//! 2. `check`: every field numbered or skipped, numbers positive and unique.
//! 3. `expand`: `Protobuf` (the message) and `ProtoValue` (a field of this type is that
//!    message); each field's kind comes from its Rust type through `ProtoValue`, so rustc
//!    reports a type with no wire form on the field.

mod attr;
mod check;
mod expand;

use darling::FromDeriveInput;
use proc_macro2::TokenStream;
use syn::DeriveInput;

/// The derive's output for `input`: the impls, or every error.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = darling::Error::accumulator();
    let Some(attrs) = errors.handle(attr::MessageAttrs::from_derive_input(input)) else {
        return (errors.finish().err())
            .map(darling::Error::write_errors)
            .unwrap_or_default();
    };
    let fields = attr::fields(&attrs, &mut errors);
    check::check(&fields, &mut errors);
    match errors.finish() {
        Ok(()) => expand::expand(&attrs, &fields),
        Err(errors) => errors.write_errors(),
    }
}
