//! The `#[resource(...)]` attribute of a generated kind: what the resources facts say of
//! it (names, scope, subresources and their shapes, columns, field selectors, storage key,
//! versions, the wire) in the derive's own words.

use std::fmt::Write as _;

use anyhow::{Context, Result, bail};

use crate::extract::package_of;
use crate::facts::{PrinterColumn, Resource, Resources, SubresourceShape};
use crate::render::{Wire, module_name};

/// The `#[resource(...)]` of a generated kind, with its `others` versions.
pub(crate) fn resource_attribute(
    kind: &Resource,
    others: &[&Resource],
    resources: &Resources,
    defaulted: bool,
) -> Result<String> {
    let shapes = &resources.subresource_shapes;
    let mut out = String::new();
    let (group, version) = match kind.group_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", kind.group_version.as_str()),
    };
    let mut items: Vec<String> = vec![
        format!("group = \"{group}\""),
        format!("kind = \"{}\"", kind.kind),
        format!("plural = \"{}\"", kind.plural),
    ];
    if kind.namespaced {
        items.push("namespaced".into());
    }
    if kind.create_only {
        items.push("create_only".into());
    } else if kind.read_only {
        items.push("read_only".into());
    } else if !kind.returns_deleted_object {
        items.push("delete_status".into());
    }
    // kube checks its own kinds with their validation code, never against their OpenAPI.
    items.push("strategy_validates".into());
    // kube's creates of its own kinds own what changed from Go's zero value of the type.
    items.push("zero_object".into());
    items.push(crate::generation::generation(group, &kind.kind).into());
    if defaulted {
        items.push("defaults".into());
    }
    for short in &kind.short_names {
        items.push(format!("short_name = \"{short}\""));
    }
    for category in &kind.categories {
        items.push(format!("category = \"{category}\""));
    }
    if let Some(names) = &kind.names {
        items.push(format!("names = \"{names}\""));
    }
    if kind.subresources.iter().any(|s| s == "status") {
        items.push("status".into());
    }
    if kind.subresources.iter().any(|s| s == "finalize") {
        items.push("finalize".into());
    }
    for column in &kind.printer_columns {
        items.push(printer_column(column));
    }
    if kind.subresources.iter().any(|s| s == "scale") {
        items.push(
            // kube's scales of its kinds give their `spec.selector` in string form.
            "scale(spec_replicas_path = \".spec.replicas\", status_replicas_path = \".status.replicas\", label_selector_path = \".spec.selector\")"
                .into(),
        );
    }
    for field in &kind.selectable_fields {
        // `label=.path` where kube's label is not the path (`status.successful`).
        // `label=.path|.other`: the other path when the first is empty (kube's Event
        // `source`).
        match field.split_once('=') {
            Some((label, paths)) => match paths.split_once('|') {
                Some((path, or)) => items.push(format!(
                    "selectable_field(label = \"{label}\", path = \"{path}\", or = \"{or}\")"
                )),
                None => items.push(format!(
                    "selectable_field(label = \"{label}\", path = \"{paths}\")"
                )),
            },
            None => items.push(format!("selectable_field = \".{field}\"")),
        }
    }
    for name in kind
        .subresources
        .iter()
        .filter(|s| !["status", "scale", "finalize"].contains(&s.as_str()))
    {
        let shape = (shapes.get(name))
            .with_context(|| format!("{} subresource {name}: no shape in the facts", kind.kind))?;
        if shape.pending.is_none() {
            items.push(subresource(name, shape, kind)?);
        }
    }
    if let Some(stored_with) = &kind.stored_with {
        // The other kind's storage, hub and storage version; this version converts to and
        // from its hub by hand.
        let (package, other) = split_kind(stored_with)?;
        let (other_group, other_version) = package.split_once('/').context("package path")?;
        items.push(format!(
            "stored_with = crate::api::{}::{other_version}::{other}",
            module_name(other_group)
        ));
        let own = package_of(&kind.group_version);
        let own_group = own.split_once('/').context("package path")?.0;
        items.push(format!(
            "version(name = \"{version}\", ty = crate::api::{}::{version}::{})",
            module_name(own_group),
            kind.kind
        ));
    } else {
        if let Some(key) = &kind.storage_key {
            items.push(format!("storage_key = \"{key}\""));
        } else {
            items.push(format!("storage_key = \"{}\"", kind.plural));
        }
        let off = match kind.off_by_default {
            true => ", off_by_default",
            false => "",
        };
        match &kind.deprecation {
            Some(warning) => items.push(format!(
                "version(name = \"{version}\", storage, deprecated = \"{warning}\"{off})"
            )),
            None => items.push(format!("version(name = \"{version}\", storage{off})")),
        }
    }
    for other in others {
        let package = package_of(&other.group_version);
        let (other_group, other_version) = package.split_once('/').context("package path")?;
        if other_group
            != package_of(&kind.group_version)
                .split_once('/')
                .context("package")?
                .0
        {
            bail!("{}: {} is another group's", kind.kind, other.group_version);
        }
        items.push(format!(
            // kube's hand-written conversions keep only part of the hub (in annotations).
            "version(name = \"{other_version}\", ty = crate::api::{}::{other_version}::{}, lossy)",
            module_name(other_group),
            other.kind
        ));
    }
    if Wire::of(resources, &package_of(&kind.group_version)) == Wire::Protobuf {
        items.push("protobuf".into());
    }
    out.push_str("#[resource(\n");
    for item in items {
        let _ = writeln!(out, "    {item},");
    }
    out.push_str(")]\n");
    Ok(out)
}

/// `v1/Event` → (`core/v1`, `Event`).
fn split_kind(qualified: &str) -> Result<(String, &str)> {
    let (group_version, kind) = qualified.rsplit_once('/').context("a group/version/Kind")?;
    Ok((package_of(group_version), kind))
}

/// A column's `printer_column(...)`.
fn printer_column(column: &PrinterColumn) -> String {
    // Debug-formatted: a path may quote (`[?(@.type=="Available")]`).
    let mut parts = vec![
        format!("name = {:?}", column.name),
        format!("type = {:?}", column.ty),
        format!("json_path = {:?}", column.json_path),
    ];
    if let Some(format) = &column.format {
        parts.push(format!("format = \"{format}\""));
    }
    if let Some(priority) = column.priority {
        parts.push(format!("priority = {priority}"));
    }
    if let Some(description) = &column.description {
        parts.push(format!("description = {description:?}"));
    }
    if let Some(cell) = &column.cell {
        parts.push(format!("cell = {cell}"));
    }
    format!("printer_column({})", parts.join(", "))
}

/// A subresource's `subresource(...)`, from what the facts say it is.
fn subresource(name: &str, shape: &SubresourceShape, kind: &Resource) -> Result<String> {
    let mut parts = vec![format!("name = \"{name}\"")];
    for field in &shape.fields {
        parts.push(format!("field = \"{field}\""));
    }
    if let Some(create) = &shape.create {
        let (group_version, body) = create.rsplit_once('/').context("a create's kind")?;
        let (group, version) = group_version.split_once('/').unwrap_or(("", group_version));
        let package = crate::extract::package_of(group_version);
        let module = module_name(package.split_once('/').context("package path")?.0);
        parts.push(format!(
            "create(group = \"{group}\", version = \"{version}\", kind = \"{body}\", body = crate::api::{module}::{version}::{body}, protobuf)"
        ));
    }
    if shape.read {
        parts.push("read".into());
    }
    if !shape.connect.is_empty() {
        let options = (shape.options.as_deref())
            .context("a connect's options kind")?
            .replace("{kind}", &kind.kind);
        let mut connect = vec![format!("options = \"{options}\"")];
        connect.extend(shape.connect.iter().map(|m| format!("method = \"{m}\"")));
        if shape.path {
            connect.push("path".into());
        }
        parts.push(format!("connect({})", connect.join(", ")));
    }
    Ok(format!("subresource({})", parts.join(", ")))
}
