//! The `Protobuf` and `ProtoValue` impls.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::attr::{Field, MessageAttrs};

/// The impls, in a `const _` block binding `__kapi`.
pub(crate) fn expand(attrs: &MessageAttrs, fields: &[Field]) -> TokenStream {
    let ident = &attrs.ident;
    let (impl_generics, ty_generics, where_clause) = attrs.generics.split_for_impl();
    let name = &attrs.name;
    let fields = fields.iter().filter_map(|field| {
        let (tag, _) = field.tag?;
        let ty = &field.ty;
        let json_name = &field.json_name;
        let inline = field.inline.then(|| quote!(.inline()));
        Some(quote_spanned! {field.span=>
            __kapi::api::ProtoField::of::<#ty>(#tag, #json_name) #inline
        })
    });
    let krate = attrs
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::kapi));
    crate::expand::in_crate(
        &krate,
        quote! {
            impl #impl_generics __kapi::api::protobuf::Protobuf for #ident #ty_generics #where_clause {
                const MESSAGE: &'static __kapi::api::ProtoMessage = &__kapi::api::ProtoMessage {
                    name: #name,
                    fields: &[#(#fields),*],
                };
            }
            impl #impl_generics __kapi::api::protobuf::ProtoValue for #ident #ty_generics #where_clause {
                const KIND: __kapi::api::ProtoKind = __kapi::api::ProtoKind::Message(
                    <Self as __kapi::api::protobuf::Protobuf>::MESSAGE,
                );
            }
        },
    )
}
