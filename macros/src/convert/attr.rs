//! `#[convert(...)]` as written: darling receivers for the struct and its fields.
//!
//! Syntax only (known keys, value types); meaning and the rules between keys are in
//! [`super::model`] and [`super::check`].

use darling::{FromDeriveInput, FromField};
use syn::{Generics, Ident, LitStr, Type};

use crate::attr::Word;

/// `#[convert(hub = super::WebApp)]` on a version struct (or a struct nested in one).
#[derive(Debug, FromDeriveInput)]
#[darling(attributes(convert), supports(struct_named))]
pub(super) struct ConvertAttrs {
    /// The struct's name.
    pub ident: Ident,
    /// Carried over to the impl.
    pub generics: Generics,
    /// The fields, with their attributes.
    pub data: darling::ast::Data<(), FieldAttrs>,
    /// `hub = super::WebApp`: the hub struct this one converts to and from, as a path or a
    /// string. Required.
    pub hub: syn::Path,
    /// `crate = "::my_kapi"`: the path the impl reaches kapi by; `::kapi` by default.
    #[darling(rename = "crate")]
    pub krate: Option<syn::Path>,
}

/// `#[convert(...)]` on a field. At most one key.
#[derive(Debug, FromField)]
#[darling(attributes(convert))]
pub(super) struct FieldAttrs {
    /// The field's name (always present: the struct has named fields).
    pub ident: Option<Ident>,
    /// The field's type.
    pub ty: Type,
    /// `rename = "hub_field"`: the hub field has another name.
    pub rename: Option<LitStr>,
    /// `path = "container.image"`: the hub field is nested, or elsewhere; Rust field names
    /// separated by dots, from the hub struct.
    pub path: Option<LitStr>,
    /// `with = "module"`: `module::into_hub(value, &mut HubStruct)` and
    /// `module::from_hub(&HubStruct) -> value` convert the field.
    pub with: Option<syn::Path>,
    /// `skip`: the field has no hub counterpart; it is its default when read from the hub.
    pub skip: Word,
}
