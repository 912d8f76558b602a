//! The item again, with each site's rules published through schemars: one
//! `#[schemars(extend("x-kubernetes-validations" = [...]))]` on the item or field, each
//! rule an object with kube's keys and `x-kapi-source`, where it was written.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Attribute, Data, DeriveInput, LitStr};

use super::attr::{Rule, Sites};

pub(super) fn expand(mut input: DeriveInput, sites: Sites) -> TokenStream {
    if !sites.item.is_empty() {
        input.attrs.push(extend(&sites.item));
    }
    if let Data::Struct(data) = &mut input.data {
        for (index, rules) in &sites.fields {
            if let Some(field) = data.fields.iter_mut().nth(*index) {
                field.attrs.push(extend(rules));
            }
        }
    }
    quote!(#input)
}

/// The schemars attribute publishing `rules`.
fn extend(rules: &[Rule]) -> Attribute {
    let rules = rules.iter().map(rule_object);
    syn::parse_quote! {
        #[schemars(extend("x-kubernetes-validations" = [#(#rules),*]))]
    }
}

/// One rule as JSON (`serde_json::json!`'s syntax, which schemars' `extend` takes).
fn rule_object(rule: &Rule) -> TokenStream {
    let expression = &rule.rule;
    let mut entries = vec![quote!("rule": #expression)];
    let mut text = |key: &str, value: &Option<LitStr>| {
        if let Some(value) = value {
            entries.push(quote!(#key: #value));
        }
    };
    text("message", &rule.message);
    text("messageExpression", &rule.message_expression);
    text("reason", &rule.reason);
    text("fieldPath", &rule.field_path);
    if rule.optional_old_self.is_some() {
        entries.push(quote!("optionalOldSelf": true));
    }
    let source = source(rule.rule.span());
    entries.push(quote!("x-kapi-source": #source));
    quote!({ #(#entries),* })
}

/// Where `span` starts: `file:line:column`, as rustc names places.
fn source(span: Span) -> String {
    if !proc_macro::is_available() {
        return String::new();
    }
    let span = span.unwrap();
    format!("{}:{}:{}", span.file(), span.line(), span.column())
}
