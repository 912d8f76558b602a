//! The rules of `#[convert(...)]`, one small function each, reporting into one accumulator.
//!
//! A hub field that does not exist, or whose type does not convert, is left to rustc: the
//! expansion accesses it with tokens spanned on the field or the literal (see
//! [`super::expand`]).

use darling::error::Accumulator;

use super::model::{Field, Mapping, Struct};
use crate::model::error;

/// Runs every check.
pub(super) fn check(item: &Struct, errors: &mut Accumulator) {
    for field in &item.fields {
        check_one_key(field, errors);
        check_field_path(field, errors);
    }
}

/// `rename`, `path`, `with` and `skip` each say where the field goes: one is enough.
fn check_one_key(field: &Field, errors: &mut Accumulator) {
    if let [(first, _), rest @ ..] = field.keys.as_slice() {
        for (key, span) in rest {
            errors.push(error(
                *span,
                format!(
                    "`{key}` cannot be combined with `{first}` on `{}`: use one of `rename`, \
                     `path`, `with` or `skip`",
                    field.ident
                ),
            ));
        }
    }
}

/// `rename` and `path` name Rust fields.
fn check_field_path(field: &Field, errors: &mut Accumulator) {
    if let Mapping::Field {
        lit: Some(lit),
        segments: Err(message),
    } = &field.mapping
    {
        errors.push(error(lit.span(), message));
    }
}
