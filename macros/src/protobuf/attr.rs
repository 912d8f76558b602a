//! `#[protobuf(...)]` as written, and each field's JSON name as serde has it.

use darling::util::Flag;
use darling::{FromDeriveInput, FromField};
use proc_macro2::Span;
use syn::{Ident, LitStr, Type};

use crate::serde_names::{camel, serde_flag, serde_values};

/// `#[protobuf(name = "k8s.io.api.core.v1.Pod")]` on the struct.
#[derive(Debug, FromDeriveInput)]
#[darling(attributes(protobuf), forward_attrs(serde), supports(struct_named))]
pub(crate) struct MessageAttrs {
    pub ident: Ident,
    pub generics: syn::Generics,
    pub attrs: Vec<syn::Attribute>,
    pub data: darling::ast::Data<(), FieldAttrs>,
    /// The message's full name, as kube's `.proto` files and errors name it.
    pub name: LitStr,
    /// `crate = "::my_kapi"`: the path kapi is reached by (as `#[resource(crate)]`).
    #[darling(rename = "crate")]
    pub krate: Option<syn::Path>,
}

/// `#[protobuf(tag = 1)]`, `#[protobuf(skip)]` on a field.
#[derive(Debug, FromField)]
#[darling(attributes(protobuf), forward_attrs(serde))]
pub(crate) struct FieldAttrs {
    pub ident: Option<Ident>,
    pub ty: Type,
    pub attrs: Vec<syn::Attribute>,
    /// The field number on the wire.
    pub tag: Option<syn::LitInt>,
    /// Not on the wire.
    pub skip: Flag,
}

/// A field ready to expand.
pub(crate) struct Field {
    /// Where errors about it point.
    pub span: Span,
    /// Its number (checked), or `None` when skipped.
    pub tag: Option<(u32, Span)>,
    /// Its JSON name.
    pub json_name: String,
    /// Its Rust type.
    pub ty: Type,
    /// `#[serde(flatten)]`: its message's fields are the parent's in JSON.
    pub inline: bool,
}

/// The fields with their JSON names (serde's `rename`, or the struct's `rename_all =
/// "camelCase"` applied to the Rust name) and numbers.
pub(crate) fn fields(attrs: &MessageAttrs, errors: &mut darling::error::Accumulator) -> Vec<Field> {
    let camel_case = serde_values(&attrs.attrs, "rename_all")
        .iter()
        .any(|v| v.value() == "camelCase");
    let Some(fields) = attrs.data.as_ref().take_struct() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for field in fields.fields {
        let Some(ident) = &field.ident else {
            continue;
        };
        let rust_name = ident.to_string();
        let rust_name = rust_name.trim_start_matches("r#");
        let json_name = match serde_values(&field.attrs, "rename").first() {
            Some(rename) => rename.value(),
            None if camel_case => camel(rust_name),
            None => rust_name.to_string(),
        };
        let tag = match (&field.tag, field.skip.is_present()) {
            (Some(tag), false) => match tag.base10_parse::<u32>() {
                Ok(number) => Some((number, tag.span())),
                Err(e) => {
                    errors.push(darling::Error::custom(e).with_span(tag));
                    None
                }
            },
            (None, true) => continue,
            (Some(tag), true) => {
                errors.push(
                    darling::Error::custom("a field is either numbered or `skip`ped")
                        .with_span(tag),
                );
                None
            }
            (None, false) => {
                errors.push(
                    darling::Error::custom(
                        "every field needs `#[protobuf(tag = N)]` (its number on the wire) \
                         or `#[protobuf(skip)]`",
                    )
                    .with_span(ident),
                );
                None
            }
        };
        out.push(Field {
            span: ident.span(),
            tag,
            json_name,
            ty: field.ty.clone(),
            inline: serde_flag(&field.attrs, "flatten"),
        });
    }
    out
}
