//! `#[rule(...)]` as written: taken off the item (the attribute macro owns them) and read
//! into [`Rule`]s that keep their spans. Syntax only; [`super::check`] judges the values.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::Flag;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Lit, LitStr};

/// The keys of `#[rule(...)]` besides the leading expression.
#[derive(Debug, Default, FromMeta)]
struct Keys {
    /// `rule = "..."`, for those who prefer to name it.
    rule: Option<LitStr>,
    /// `message = "..."`: what a failure says (kube's `message`).
    message: Option<LitStr>,
    /// `message_expression = "..."`: a CEL expression making the message.
    message_expression: Option<LitStr>,
    /// `reason = "FieldValueForbidden"`: the error type of a failure.
    reason: Option<LitStr>,
    /// `field_path = ".container.image"`: where a failure is reported, below the node.
    field_path: Option<LitStr>,
    /// `optional_old_self`: a transition rule also runs on create, `oldSelf` an optional.
    optional_old_self: Flag,
}

/// One rule, as kube's `ValidationRule` has it, with where each part was written.
#[derive(Debug)]
pub(super) struct Rule {
    /// The CEL expression.
    pub rule: LitStr,
    pub message: Option<LitStr>,
    pub message_expression: Option<LitStr>,
    pub reason: Option<LitStr>,
    pub field_path: Option<LitStr>,
    pub optional_old_self: Option<Span>,
}

/// The rules of one item: its own, then each named field's (by index).
#[derive(Debug, Default)]
pub(super) struct Sites {
    pub item: Vec<Rule>,
    pub fields: Vec<(usize, Vec<Rule>)>,
}

/// Removes every `#[rule]` from `input` and reads them; errors go to `errors`.
pub(super) fn take_rules(
    input: &mut DeriveInput,
    errors: &mut darling::error::Accumulator,
) -> Sites {
    let mut sites = Sites {
        item: take(&mut input.attrs, errors),
        ..Sites::default()
    };
    let fields: Vec<&mut syn::Field> = match &mut input.data {
        Data::Struct(data) => data.fields.iter_mut().collect(),
        Data::Enum(data) => {
            for variant in &mut data.variants {
                for rule in take(&mut variant.attrs, errors) {
                    errors.push(
                        darling::Error::custom(
                            "a rule goes on the enum, not on a variant: kube's schemas \
                             have no place for a variant's",
                        )
                        .with_span(&rule.rule),
                    );
                }
                for field in &mut variant.fields {
                    for rule in take(&mut field.attrs, errors) {
                        errors.push(
                            darling::Error::custom(
                                "rules on an enum's fields are not supported: put the rule \
                                 on a struct's field or on the enum",
                            )
                            .with_span(&rule.rule),
                        );
                    }
                }
            }
            Vec::new()
        }
        Data::Union(_) => {
            errors.push(
                darling::Error::custom("#[kapi::rules] goes on a struct or an enum")
                    .with_span(&input.ident),
            );
            Vec::new()
        }
    };
    for (index, field) in fields.into_iter().enumerate() {
        let rules = take(&mut field.attrs, errors);
        if !rules.is_empty() {
            sites.fields.push((index, rules));
        }
    }
    sites
}

/// The `#[rule]`s of `attrs`, removed from them.
fn take(attrs: &mut Vec<Attribute>, errors: &mut darling::error::Accumulator) -> Vec<Rule> {
    let mut rules = Vec::new();
    attrs.retain(|attr| {
        if !attr.path().is_ident("rule") {
            return true;
        }
        if let Some(rule) = errors.handle(parse(attr)) {
            rules.push(rule);
        }
        false
    });
    rules
}

/// One `#[rule("expr", key = ...)]` or `#[rule(rule = "expr", key = ...)]`.
fn parse(attr: &Attribute) -> darling::Result<Rule> {
    let list = attr.meta.require_list().map_err(darling::Error::from)?;
    let mut items = NestedMeta::parse_meta_list(list.tokens.clone())?;
    let leading = match items.first() {
        Some(NestedMeta::Lit(Lit::Str(rule))) => Some(rule.clone()),
        Some(NestedMeta::Lit(other)) => {
            return Err(darling::Error::custom(
                "the rule is a string literal: #[rule(\"self.x > 0\")]",
            )
            .with_span(other));
        }
        _ => None,
    };
    if leading.is_some() {
        items.remove(0);
    }
    if let Some(NestedMeta::Lit(lit)) = items.iter().find(|i| matches!(i, NestedMeta::Lit(_))) {
        return Err(darling::Error::custom(
            "only the rule itself comes without a key; name the others: message = \"...\"",
        )
        .with_span(lit));
    }
    let keys = Keys::from_list(&items).map_err(|e| {
        if e.has_span() {
            e
        } else {
            e.with_span(&attr.meta)
        }
    })?;
    let rule = match (leading, keys.rule) {
        (Some(rule), None) | (None, Some(rule)) => rule,
        (Some(_), Some(named)) => {
            return Err(darling::Error::custom(
                "the rule is given twice: as the first item and as `rule = ...`",
            )
            .with_span(&named));
        }
        (None, None) => {
            return Err(darling::Error::custom(
                "a rule needs its CEL expression: #[rule(\"self.minReplicas <= self.replicas\")]",
            )
            .with_span(&attr.meta.span()));
        }
    };
    Ok(Rule {
        rule,
        message: keys.message,
        message_expression: keys.message_expression,
        reason: keys.reason,
        field_path: keys.field_path,
        optional_old_self: keys
            .optional_old_self
            .is_present()
            .then(|| keys.optional_old_self.span()),
    })
}
