//! The rules a kind must follow, one small function each, all reporting into one accumulator
//! so that a user sees every mistake in one compile.
//!
//! Each error points at the token to change: the literal, the flag word, or (for something
//! missing) the `resource` attribute. Rules that need types (a JSON path naming no field, a
//! version type without `Convert<Hub>`) cannot be checked here; the expansion states them for
//! rustc instead (see [`crate::expand`]).

use std::collections::HashMap;

use darling::error::Accumulator;
use proc_macro2::Span;
use syn::LitStr;
use syn::spanned::Spanned;

use crate::json_path::{self, Segment};
use crate::model::{JsonPath, Kind, Version, VersionType, error};
use crate::names;

/// Runs every check.
pub(crate) fn check(kind: &Kind, errors: &mut Accumulator) {
    check_no_generics(kind, errors);
    check_stored_with(kind, errors);
    check_read_only(kind, errors);
    check_group(kind, errors);
    check_kind_name(kind, errors);
    check_resource_names(kind, errors);
    check_short_names(kind, errors);
    check_categories(kind, errors);
    check_metadata_field(kind, errors);
    check_status_field(kind, errors);
    check_scale(kind, errors);
    check_generation(kind, errors);
    check_subresources(kind, errors);
    check_printer_columns(kind, errors);
    check_selectable_fields(kind, errors);
    check_versions(kind, errors);
    check_version_types(kind, errors);
}

/// A kind made when read has a get and a list: nothing to create, no subresources, and
/// one version (its objects are made in it).
fn check_read_only(kind: &Kind, errors: &mut Accumulator) {
    if !kind.read_only.is_present() {
        return;
    }
    let span = kind.read_only.span();
    if kind.create_only.is_present() {
        errors.push(error(
            span,
            "a kind is `read_only` (read, never written) or `create_only` (written, never \
             read), not both",
        ));
    }
    if kind.status.is_present() || kind.scale.is_some() || !kind.subresources.is_empty() {
        errors.push(error(
            span,
            "a `read_only` kind has no subresources: remove `status`, `scale` and \
             `subresource(...)`",
        ));
    }
    if kind.versions.len() > 1 {
        errors.push(error(
            span,
            "a `read_only` kind's objects are made in its one version: declare one \
             `version(...)`",
        ));
    }
}

/// `INFO` is one value per kind; a generic hub would be a family of kinds.
fn check_no_generics(kind: &Kind, errors: &mut Accumulator) {
    let generics = &kind.hub.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        errors.push(error(
            generics.span(),
            "a resource's hub type cannot have generic parameters or a where clause",
        ));
    }
}

fn check_group(kind: &Kind, errors: &mut Accumulator) {
    match &kind.group {
        None => errors.push(error(
            kind.attr_span,
            "missing `group`: add `group = \"example.dev\"` to `#[resource(...)]`, \
             or `group = \"\"` for the core group",
        )),
        Some(group) if !group.value().is_empty() && !names::is_dns_subdomain(&group.value()) => {
            errors.push(error(
                group.span(),
                format!(
                    "`{}` is not a valid API group: use a lower-case DNS subdomain such as \
                     `apps.example.dev`, or `\"\"` for the core group",
                    group.value()
                ),
            ));
        }
        Some(_) => {}
    }
}

fn check_kind_name(kind: &Kind, errors: &mut Accumulator) {
    let name = &kind.kind;
    if names::is_upper_camel_case(&name.value) {
        return;
    }
    let message = if name.explicit {
        format!(
            "`{}` is not a valid kind: use UpperCamelCase ASCII letters and digits, such as `WebApp`",
            name.value
        )
    } else {
        format!(
            "the kind defaults to the struct's name, and `{}` is not UpperCamelCase ASCII: \
             add `kind = \"...\"` to `#[resource(...)]`",
            name.value
        )
    };
    errors.push(error(name.span, message));
}

/// Defaults derive from a valid kind and are valid, so only given names are checked
/// (an invalid kind is reported once, not three times).
fn check_resource_names(kind: &Kind, errors: &mut Accumulator) {
    for (what, name, example) in [
        ("plural", &kind.plural, "webapps"),
        ("singular", &kind.singular, "webapp"),
    ] {
        if name.explicit && !names::is_dns_label(&name.value) {
            errors.push(error(
                name.span,
                format!(
                    "`{}` is not a valid {what}: use lower-case letters, digits and `-` \
                     (a DNS label), such as `{example}`",
                    name.value
                ),
            ));
        }
    }
}

fn check_short_names(kind: &Kind, errors: &mut Accumulator) {
    check_labels("short name", &kind.short_names, errors);
    for duplicate in duplicates(kind.short_names.iter().map(|l| (l.value(), l.span()))) {
        errors.push(error(
            duplicate.1,
            format!("duplicate short name `{}`", duplicate.0),
        ));
    }
}

fn check_categories(kind: &Kind, errors: &mut Accumulator) {
    check_labels("category", &kind.categories, errors);
}

fn check_labels(what: &str, lits: &[LitStr], errors: &mut Accumulator) {
    for lit in lits.iter().filter(|l| !names::is_dns_label(&l.value())) {
        errors.push(error(
            lit.span(),
            format!(
                "`{}` is not a valid {what}: use lower-case letters, digits and `-` (a DNS label)",
                lit.value()
            ),
        ));
    }
}

/// A kind stored with another has that kind's hub, so no fields of its own.
fn check_stored_with(kind: &Kind, errors: &mut Accumulator) {
    let (Some(path), false) = (&kind.stored_with, kind.hub.unit) else {
        return;
    };
    errors.push(error(
        kind.hub.ident.span(),
        format!(
            "a kind `stored_with` another has that kind's hub type (`{}`): declare it on a \
             unit struct, `pub struct {};`",
            path_text(path),
            kind.hub.ident
        ),
    ));
}

/// Every object has standard metadata; the runtime reads names, namespaces and resource
/// versions from it. (Its type is checked by the expansion.)
fn check_metadata_field(kind: &Kind, errors: &mut Accumulator) {
    let hub = &kind.hub;
    if kind.stored_with.is_none() && hub.fields.is_some() && hub.field("metadata").is_none() {
        errors.push(error(
            hub.ident.span(),
            format!(
                "`{}` has no `metadata` field: a resource needs \
                 `pub metadata: kapi::meta::ObjectMeta`",
                hub.ident
            ),
        ));
    }
}

/// The status subresource reads and writes the hub's `status` field.
fn check_status_field(kind: &Kind, errors: &mut Accumulator) {
    let hub = &kind.hub;
    if kind.stored_with.is_none()
        && kind.status.is_present()
        && hub.fields.is_some()
        && hub.field("status").is_none()
    {
        errors.push(error(
            kind.status.span(),
            format!(
                "the `status` subresource needs a `status` field, and `{}` has none",
                hub.ident
            ),
        ));
    }
}

/// As kube-apiserver validates a CRD's scale subresource: the desired count lives under
/// `.spec`, the observed count under `.status`, the selector under either.
fn check_scale(kind: &Kind, errors: &mut Accumulator) {
    let Some(scale) = &kind.scale else { return };
    type Rule<'a> = (
        &'a str,
        Option<&'a JsonPath>,
        &'a [&'a str],
        &'a str,
        &'a str,
    );
    let rules: [Rule; 3] = [
        (
            "spec_replicas_path",
            Some(&scale.spec_replicas_path),
            &["spec"],
            "`.spec`",
            ".spec.replicas",
        ),
        (
            "status_replicas_path",
            Some(&scale.status_replicas_path),
            &["status"],
            "`.status`",
            ".status.replicas",
        ),
        (
            "label_selector_path",
            scale.label_selector_path.as_ref(),
            &["spec", "status"],
            "`.spec` or `.status`",
            ".status.selector",
        ),
    ];
    for (key, path, roots, under, example) in rules {
        let Some(path) = path else { continue };
        if !check_json_path(path, false, errors) {
            continue;
        }
        // A field *under* the root: `.spec` itself is not a replica count.
        let under_root = match path.segments.as_deref() {
            Ok([Segment::Field(root), _, ..]) => roots.contains(&root.as_str()),
            _ => false,
        };
        if !under_root {
            errors.push(error(
                path.lit.span(),
                format!("`{key}` must be a path under {under}, such as `{example}`"),
            ));
        }
    }
}

/// The methods a connect subresource may take: kube's proxies connect all of them.
const CONNECT_METHODS: &[&str] = &["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"];

/// Each other subresource: a lower-case name no other subresource has, exactly one shape,
/// fields that are simple paths, a body kind that can be named, methods HTTP has.
/// `generation(...)` takes one form; its paths are simple field paths (no index, no
/// filter), which the registry reads from both objects of an update.
fn check_generation(kind: &Kind, errors: &mut Accumulator) {
    let Some((span, rule)) = &kind.generation else {
        return;
    };
    let forms = [
        !rule.paths.is_empty(),
        rule.created.is_present(),
        rule.untracked.is_present(),
    ];
    if forms.iter().filter(|f| **f).count() != 1 {
        errors.push(error(
            *span,
            "`generation(...)` takes one of `path = \".spec\"` (repeatable), `created` or \
             `untracked`",
        ));
    }
    for path in &rule.paths {
        if !check_json_path(path, false, errors) {
            continue;
        }
        let fields_only = (path.segments.iter().flatten()).all(|s| matches!(s, Segment::Field(_)));
        if !fields_only {
            errors.push(error(
                path.lit.span(),
                "a generation path names fields alone, such as `.spec` or \
                 `.metadata.annotations`",
            ));
        }
    }
}

fn check_subresources(kind: &Kind, errors: &mut Accumulator) {
    let reserved = ["status", "scale", "finalize"];
    for sub in &kind.subresources {
        let name = sub.name.value();
        if !names::is_dns_label(&name) {
            errors.push(error(
                sub.name.span(),
                format!("`{name}` is not a subresource name: use lower-case letters and digits, such as `approval`"),
            ));
        } else if reserved.contains(&name.as_str()) {
            errors.push(error(
                sub.name.span(),
                format!("`{name}` has its own key: write `{name}` in `#[resource(...)]`, not `subresource(name = \"{name}\")`"),
            ));
        }
        let shapes = [
            !sub.fields.is_empty(),
            sub.create.is_some(),
            sub.read.is_present(),
            sub.connect.is_some(),
        ];
        if shapes.iter().filter(|s| **s).count() != 1 {
            errors.push(error(
                sub.span,
                format!(
                    "subresource `{name}` needs exactly one of `field = \".spec.x\"` (repeatable), \
                     `create(...)`, `read` or `connect(...)`"
                ),
            ));
        }
        for path in &sub.fields {
            check_json_path(path, false, errors);
        }
        if let Some(create) = &sub.create {
            let group = create.group.value();
            if !group.is_empty() && !names::is_dns_subdomain(&group) {
                errors.push(error(
                    create.group.span(),
                    format!("`{group}` is not a valid API group"),
                ));
            }
            if !names::is_dns_label(&create.version.value()) {
                errors.push(error(
                    create.version.span(),
                    "expected a version such as `v1`",
                ));
            }
            if !names::is_upper_camel_case(&create.kind.value()) {
                errors.push(error(
                    create.kind.span(),
                    "expected a kind in UpperCamelCase, such as `Eviction`",
                ));
            }
        }
        if let Some(connect) = &sub.connect {
            if !names::is_upper_camel_case(&connect.options.value()) {
                errors.push(error(
                    connect.options.span(),
                    "expected a kind in UpperCamelCase, such as `PodExecOptions`",
                ));
            }
            if connect.methods.is_empty() {
                errors.push(error(
                    sub.span,
                    format!("subresource `{name}` connects with no method: add `method = \"GET\"`"),
                ));
            }
            for method in &connect.methods {
                if !CONNECT_METHODS.contains(&method.value().as_str()) {
                    errors.push(error(
                        method.span(),
                        format!(
                            "`{}` is not a method to connect with: use one of {}",
                            method.value(),
                            CONNECT_METHODS.join(", ")
                        ),
                    ));
                }
            }
            let methods = connect.methods.iter().map(|m| (m.value(), m.span()));
            for (method, span) in duplicates(methods) {
                errors.push(error(span, format!("duplicate method `{method}`")));
            }
        }
    }
    let subresources = (kind.subresources.iter()).map(|s| (s.name.value(), s.name.span()));
    for (name, span) in duplicates(subresources) {
        errors.push(error(span, format!("duplicate subresource `{name}`")));
    }
}

/// The column types and formats kube-apiserver accepts for CRD printer columns.
fn check_printer_columns(kind: &Kind, errors: &mut Accumulator) {
    const TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];
    const FORMATS: &[&str] = &[
        "int32",
        "int64",
        "float",
        "double",
        "byte",
        "date",
        "date-time",
        "password",
    ];
    for column in &kind.printer_columns {
        if column.name.value().trim().is_empty() {
            errors.push(error(
                column.name.span(),
                "the printer column's name is empty",
            ));
        }
        let ty = column.column_type.value();
        if !TYPES.contains(&ty.as_str()) {
            errors.push(error(
                column.column_type.span(),
                format!(
                    "unknown printer column type `{ty}`: expected one of {}",
                    list(TYPES)
                ),
            ));
        }
        if let Some(format) = &column.format {
            let value = format.value();
            if !value.is_empty() && !FORMATS.contains(&value.as_str()) {
                errors.push(error(
                    format.span(),
                    format!(
                        "unknown printer column format `{value}`: expected one of {}",
                        list(FORMATS)
                    ),
                ));
            }
        }
        check_json_path(&column.json_path, true, errors);
    }
}

/// Paths are simple JSON paths; labels are what a field selector can name (no separators
/// or operators) and are unique, also against the two every kind has.
fn check_selectable_fields(kind: &Kind, errors: &mut Accumulator) {
    for field in &kind.selectable_fields {
        check_json_path(&field.path, false, errors);
        if let Some(or) = &field.or {
            check_json_path(or, false, errors);
        }
        let label = &field.label;
        if label.is_empty() || label.contains(|c: char| c.is_whitespace() || ",=!".contains(c)) {
            errors.push(error(
                field.label_span,
                format!(
                    "`{label}` cannot be named in a field selector: use a dotted name \
                     without spaces, `,`, `=` or `!`, such as `regarding.kind`"
                ),
            ));
        } else if label == "metadata.name" || label == "metadata.namespace" {
            errors.push(error(
                field.label_span,
                format!("`{label}` is selectable on every kind: remove it"),
            ));
        }
    }
    let labels = (kind.selectable_fields.iter()).map(|f| (f.label.clone(), f.label_span));
    for (label, span) in duplicates(labels) {
        errors.push(error(span, format!("duplicate selectable field `{label}`")));
    }
}

/// Reports a path that is not a simple JSON path (filters only where `filters`, printer
/// columns), or names a field no Rust field can stand for; returns whether the path is
/// fine.
fn check_json_path(path: &JsonPath, filters: bool, errors: &mut Accumulator) -> bool {
    let segments = match &path.segments {
        Ok(segments) => segments,
        Err(reason) => {
            errors.push(error(
                path.lit.span(),
                format!(
                    "{reason} (expected a simple JSON path such as `.spec.container.image` \
                     or `.spec.ports[0].name`)"
                ),
            ));
            return false;
        }
    };
    let mut ok = true;
    let mut fields = Vec::new();
    for segment in segments {
        match segment {
            Segment::Field(name) => fields.push(name),
            Segment::Index(_) => {}
            Segment::Filter(condition) => {
                if !filters {
                    errors.push(error(
                        path.lit.span(),
                        "filters (`[?(...)]`) are only supported in printer columns",
                    ));
                    ok = false;
                }
                fields.extend(condition.iter().filter_map(|step| match step {
                    Segment::Field(name) => Some(name),
                    _ => None,
                }));
            }
        }
    }
    for name in fields {
        if let Err(reason) = json_path::rust_field(name) {
            errors.push(error(path.lit.span(), reason));
            ok = false;
        }
    }
    ok
}

fn check_versions(kind: &Kind, errors: &mut Accumulator) {
    let versions = &kind.versions;
    let Some(first) = versions.first() else {
        errors.push(error(
            kind.attr_span,
            "missing `version(...)`: declare at least one, such as `version(name = \"v1\", storage)`",
        ));
        return;
    };

    for version in versions {
        let name = version.name.value();
        if !names::is_dns1035_label(&name) {
            errors.push(error(
                version.name.span(),
                format!(
                    "`{name}` is not a valid version name: use a DNS label starting with a letter, \
                     such as `v1` or `v1beta1`"
                ),
            ));
        }
        if let Some(warning) = &version.deprecation_warning
            && warning.value().trim().is_empty()
        {
            errors.push(error(
                warning.span(),
                "the deprecation warning is empty: write one, or use the `deprecated` flag \
                 for the default warning",
            ));
        }
        if !version.served && version.off_by_default.is_present() {
            errors.push(error(
                version.off_by_default.span(),
                format!(
                    "version `{name}` is not served (`served = false`), so it cannot be served \
                     off by default: remove `off_by_default` or `served = false`"
                ),
            ));
        }
    }

    for (name, span) in duplicates(versions.iter().map(|v| (v.name.value(), v.name.span()))) {
        errors.push(error(span, format!("duplicate version `{name}`")));
    }

    let mut storage = versions.iter().filter(|v| v.storage.is_present());
    if let Some(path) = &kind.stored_with {
        for stored in storage {
            errors.push(error(
                stored.storage.span(),
                format!(
                    "the objects of a kind `stored_with` `{}` are stored in that kind's \
                     storage version: remove `storage`",
                    path_text(path)
                ),
            ));
        }
    } else {
        check_one_storage_version(first, &mut storage, errors);
    }

    if !versions.iter().any(|v| v.served) {
        errors.push(error(
            first.span,
            "no version is served: remove `served = false` from one",
        ));
    }
}

fn check_one_storage_version<'a>(
    first: &Version,
    storage: &mut impl Iterator<Item = &'a Version>,
    errors: &mut Accumulator,
) {
    match storage.next() {
        None => errors.push(error(
            first.span,
            "no version is the storage version: mark exactly one `version(...)` with `storage`",
        )),
        Some(stored) => {
            for extra in storage {
                errors.push(error(
                    extra.storage.span(),
                    format!(
                        "only one version can be the storage version, and `{}` already is",
                        stored.name.value()
                    ),
                ));
            }
        }
    }
}

/// `rust_type` is built from the path as written, relative to the hub's module; a path up
/// through `super` cannot be spelled out that way at expansion time.
fn check_version_types(kind: &Kind, errors: &mut Accumulator) {
    for version in &kind.versions {
        if let VersionType::Path(path) = &version.ty
            && let Some(first) = path.segments.first()
            && first.ident == "super"
        {
            errors.push(error(
                first.ident.span(),
                "write `ty` relative to the hub's module or from `crate::`; `super::` is not supported",
            ));
        }
    }
}

/// A path as written, without token spacing (`crate::core::Event`).
fn path_text(path: &syn::Path) -> String {
    quote::ToTokens::to_token_stream(path)
        .to_string()
        .replace(' ', "")
}

/// The second and later occurrences of each value.
fn duplicates(items: impl IntoIterator<Item = (String, Span)>) -> Vec<(String, Span)> {
    let mut seen = HashMap::new();
    items
        .into_iter()
        .filter(|(value, _)| {
            let count = seen.entry(value.clone()).or_insert(0);
            *count += 1;
            *count > 1
        })
        .collect()
}

/// `` `a`, `b`, `c` ``.
fn list(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
