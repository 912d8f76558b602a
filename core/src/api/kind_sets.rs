//! An API's kinds put together at compile time from sets (`kapi::kinds!`): Kubernetes'
//! feature sets a server includes and the user's own kinds, as one `&'static` list that
//! `cargo xtask generate` and the scheme read.

use super::KindInfo;

/// How many kinds `parts` hold together.
pub const fn kinds_len(parts: &[&[&'static KindInfo]]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < parts.len() {
        total += parts[i].len();
        i += 1;
    }
    total
}

/// The kinds of `parts`, in order. `N` is [`kinds_len`] of them (the macro computes it).
pub const fn concat_kinds<const N: usize>(
    parts: &[&[&'static KindInfo]],
) -> [&'static KindInfo; N] {
    assert!(N == kinds_len(parts), "N must be the kinds' count");
    let mut out = [first(parts); N];
    let (mut part, mut at, mut n) = (0, 0, 0);
    while part < parts.len() {
        if at < parts[part].len() {
            out[n] = parts[part][at];
            n += 1;
            at += 1;
        } else {
            part += 1;
            at = 0;
        }
    }
    out
}

/// A kind to fill the array with before it is written (any of them; with none, `N` is 0
/// and the array holds none).
const fn first(parts: &[&[&'static KindInfo]]) -> &'static KindInfo {
    let mut part = 0;
    while part < parts.len() {
        if !parts[part].is_empty() {
            return parts[part][0];
        }
        part += 1;
    }
    &EMPTY
}

/// What an empty list is filled with (never read).
static EMPTY: KindInfo = KindInfo {
    group: "",
    kind: "",
    plural: "",
    singular: "",
    scope: super::Scope::Cluster,
    names: super::NameRule::DnsSubdomain,
    short_names: &[],
    categories: &[],
    subresources: super::Subresources {
        status: false,
        scale: None,
        others: &[],
    },
    printer_columns: &[],
    selectable_fields: &[],
    versions: &[],
    rust_type: "",
    stored_with: None,
    create_only: false,
    delete_status: false,
    storage_key: None,
    strategy_validates: false,
    defaulted: false,
    generation: crate::api::Generation::Untracked,
    read_only: false,
};

/// An API's kinds as one `&'static [&KindInfo]`, from sets of them and single kinds'
/// lists, in order:
///
/// ```ignore
/// pub const KINDS: &[&KindInfo] = kapi::kinds![
///     kapi::kinds::CORE,
///     kapi::kinds::RBAC,
///     &[apps::WebApp::INFO, platform::Tenant::INFO],
/// ];
/// ```
#[macro_export]
macro_rules! kinds {
    ($($part:expr),* $(,)?) => {{
        const PARTS: &[&[&'static $crate::api::KindInfo]] = &[$($part),*];
        &$crate::api::concat_kinds::<{ $crate::api::kinds_len(PARTS) }>(PARTS)
    }};
}
