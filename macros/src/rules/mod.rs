//! `#[kapi::rules]`: CEL validation rules written next to what they constrain, as
//! `#[rule("...", message = "...")]` on a version type and on its fields.
//!
//! The same pipeline as the derives', on one attribute macro:
//!
//! 1. `attr`: each `#[rule(...)]` parsed (darling for the keys) into a [`attr::Rule`] that
//!    keeps its spans.
//! 2. `check`: what can be judged from the item alone: the keys' values as kube's
//!    definition checks judge them, the rule and its message expression parsed with the
//!    CEL grammar, and the fields a struct's own rules select from `self`.
//! 3. `expand`: the item again, its `#[rule]`s turned into schemars'
//!    `#[schemars(extend("x-kubernetes-validations" = [...]))]`, so the rules are published
//!    where kube publishes them: a type's on its schema, a field's on the field's.
//!
//! It must come before `#[derive(JsonSchema)]`: an attribute macro sees only the
//! attributes below it, and schemars must see what it writes. Each published rule carries
//! where it was written (`x-kapi-source`, file and line), which `cargo xtask generate`
//! names when the rule does not type-check or costs too much against the whole schema,
//! and drops from what it renders.

mod attr;
mod check;
mod expand;

use proc_macro2::TokenStream;
use syn::DeriveInput;

/// The attribute's output for `item`: the item with its rules published, or every error
/// (with the item, its `#[rule]`s removed, so that one mistake does not bury others).
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut input: DeriveInput = match syn::parse2(item) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = darling::Error::accumulator();
    if !args.is_empty() {
        errors.push(
            darling::Error::custom("#[kapi::rules] takes no arguments: rules go in #[rule(...)]")
                .with_span(&args),
        );
    }
    let sites = attr::take_rules(&mut input, &mut errors);
    check::check(&input, &sites, &mut errors);
    // Without schemars' derive nothing would read what the expansion adds.
    let output = match check::derives_json_schema(&input) {
        true => expand::expand(input, sites),
        false => quote::quote!(#input),
    };
    match errors.finish() {
        Ok(()) => output,
        Err(errors) => {
            let mut tokens = errors.write_errors();
            tokens.extend(output);
            tokens
        }
    }
}
