//! The `Convert<Hub>` impl.
//!
//! `into_hub` writes each field onto its hub field and leaves every other hub field alone;
//! `from_hub` builds the struct field by field. Hub fields are accessed with tokens spanned
//! on the field (same name) or on the `rename`/`path` literal, so a hub field that does not
//! exist is rustc's "no field" error there, and a type that does not convert is its
//! "`Convert<..>` is not implemented" error on the field's type.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::model::{Field, Mapping, Shape, Struct};

/// The impl.
pub(super) fn expand(item: &Struct) -> TokenStream {
    let ident = &item.ident;
    let hub = &item.hub;
    let (impl_generics, ty_generics, where_clause) = item.generics.split_for_impl();
    let into = item.fields.iter().map(into_hub);
    let from = item.fields.iter().map(from_hub);
    // A field whose path the checks rejected reads as `unreachable!()`.
    let unreachable = (item.fields.iter())
        .any(|f| {
            matches!(
                f.mapping,
                Mapping::Field {
                    segments: Err(_),
                    ..
                }
            )
        })
        .then(|| quote!(#[allow(unreachable_code)]));
    crate::expand::in_crate(
        &item.krate,
        quote! {
            #[automatically_derived]
            impl #impl_generics __kapi::Convert<#hub> for #ident #ty_generics #where_clause {
                #[allow(unused_imports)]
                fn into_hub(self, hub: &mut #hub) {
                    use __kapi::api::__convert::{OptionIntoOption as _, OptionIntoPlain as _, OptionOfLeaf as _};
                    #(#into)*
                }

                #[allow(unused_imports)]
                #unreachable
                fn from_hub(hub: &#hub) -> Self {
                    use __kapi::api::__convert::{OptionFromOption as _, OptionFromPlain as _};
                    Self { #(#from,)* }
                }
            }
        },
    )
}

/// `hub.container.image`, spanned on where the path was written.
fn target(segments: &[syn::Ident], span: proc_macro2::Span) -> TokenStream {
    let hub = syn::Ident::new("hub", span);
    quote_spanned!(span=> #hub #(.#segments)*)
}

fn into_hub(field: &Field) -> TokenStream {
    let ident = &field.ident;
    let span = field.ty.span();
    match &field.mapping {
        Mapping::Skip => TokenStream::new(),
        Mapping::With(module) => quote_spanned! {module.span()=>
            #module::into_hub(self.#ident, hub);
        },
        Mapping::Field { lit, segments } => {
            let Ok(segments) = segments else {
                return TokenStream::new();
            };
            let at = lit.as_ref().map_or_else(|| ident.span(), |l| l.span());
            let target = target(segments, at);
            match field.shape {
                Shape::Plain => quote_spanned! {span=>
                    __kapi::Convert::into_hub(self.#ident, &mut #target);
                },
                Shape::Vec => quote_spanned! {span=>
                    __kapi::api::__convert::vec_into_hub(self.#ident, &mut #target);
                },
                Shape::Option => quote_spanned! {span=>
                    __kapi::api::__convert::OptSlot(&mut #target).merge_option(self.#ident);
                },
            }
        }
    }
}

fn from_hub(field: &Field) -> TokenStream {
    let ident = &field.ident;
    let span = field.ty.span();
    let value = match &field.mapping {
        Mapping::Skip => quote_spanned!(span=> ::core::default::Default::default()),
        Mapping::With(module) => quote_spanned!(module.span()=> #module::from_hub(hub)),
        Mapping::Field { lit, segments } => {
            let Ok(segments) = segments else {
                // Reported by the checks; the impl only carries rustc's errors.
                return quote!(#ident: ::core::unreachable!());
            };
            let at = lit.as_ref().map_or_else(|| ident.span(), |l| l.span());
            let target = target(segments, at);
            match field.shape {
                Shape::Plain => quote_spanned!(span=> __kapi::Convert::from_hub(&#target)),
                Shape::Vec => {
                    quote_spanned!(span=> __kapi::api::__convert::vec_from_hub(&#target))
                }
                Shape::Option => quote_spanned! {span=>
                    __kapi::api::__convert::OptRead(&#target).read_option()
                },
            }
        }
    };
    quote!(#ident: #value)
}
