//! [`Api`] and [`Resources`] facts rendered as kapi declarations: one Rust module per
//! group-version (`core/v1.rs`), each type a struct with kapi's derives, each served kind
//! with its `#[resource(...)]`, and the feature sets (`sets.rs`).
//!
//! How Go's JSON and protobuf rules become serde's and the `Protobuf` derive's:
//!
//! - a Go pointer (`*int32`) is an `Option`, written when set (`omitempty`) or as `null`;
//! - a value (`int32`, `string`, a struct) is the type itself, omitted when zero only if
//!   its tag says `omitempty` (Go never omits a struct: `"spec": {}`), and `null` on input
//!   is its zero, as Go's decoder reads it;
//! - slices and maps are `Vec` and `BTreeMap`, omitted when empty under `omitempty`;
//! - `json:",inline"` is `#[serde(flatten)]`, an inlined message on the wire;
//! - a `metav1.Time` value is an `Option<Time>` (Go's zero time is `null` in JSON);
//! - named string types (kube's enums) are `String`s: unknown values pass through, as
//!   they do through Go's types, and kube's validation judges them.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{Context, Result, bail};

use crate::extract::package_of;
use crate::facts::{Api, Field, Resource, Resources, SubresourceShape, Type};

/// The rendered files, by path relative to the generated module's directory.
pub fn render(api: &Api, resources: &Resources) -> Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    let mut kinds: Kinds = BTreeMap::new();
    for r in resources.resources.iter().filter(|r| r.is_hub()) {
        // The kind's other versions, converted through this one by hand.
        let others: Vec<&Resource> = (resources.resources.iter())
            .filter(|o| o.generated() && o.kind == r.kind)
            .filter(|o| o.hub.as_deref() == Some(r.group_version.as_str()))
            .collect();
        let attribute = resource_attribute(r, &others, &resources.subresource_shapes)?;
        kinds.insert(
            (package_of(&r.group_version), r.kind.clone()),
            (r, attribute),
        );
    }
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (package, facts) in &api.packages {
        let (group, version) = package.split_once('/').context("package path")?;
        groups.entry(group).or_default().push(version);
        let mut out = String::new();
        module(&mut out, api, package, facts, &kinds)?;
        files.insert(format!("{package}.rs"), out);
    }
    let mut root = String::from(HEADER);
    root.push_str(
        "//! Kubernetes' built-in API groups, one module per group-version, generated from\n\
         //! k8s.io/api (see `apigen/`). Do not edit: `cargo xtask generate` writes them.\n\n",
    );
    for (group, versions) in &groups {
        let _ = writeln!(root, "pub mod {};", module_name(group));
        let mut group_mod = String::from(HEADER);
        let _ = writeln!(group_mod, "//! The `{group}` packages of k8s.io/api.\n");
        for version in versions {
            let _ = writeln!(group_mod, "pub mod {version};");
        }
        files.insert(format!("{group}/mod.rs"), group_mod);
    }
    root.push_str("pub mod sets;\n");
    files.insert("mod.rs".into(), root);
    files.insert("sets.rs".into(), sets(resources));
    files.insert(TEST_KINDS_FILE.into(), test_kinds(resources));
    Ok(files)
}

/// The name [`render`] gives the round-trip test's list of kinds.
pub const TEST_KINDS_FILE: &str = "test-kinds";

/// The round-trip fixtures of the kinds the facts reach from (`core.v1.Pod`), as
/// k8s.io/api's `testdata/HEAD` names them, with the Rust paths of their types.
pub fn fixture_kinds(resources: &Resources) -> Vec<(String, String)> {
    crate::extract::roots(resources)
        .into_iter()
        .map(|(package, kind)| {
            let (group, version) = package.split_once('/').expect("package");
            let fixture_group = resources
                .resources
                .iter()
                .find(|r| package_of(&r.group_version) == package)
                .map(|r| match r.group_version.split_once('/') {
                    Some((group, _)) => group.to_string(),
                    None => "core".to_string(),
                })
                .unwrap_or_else(|| group.to_string());
            (
                format!("{fixture_group}.{version}.{kind}"),
                format!(
                    "kapi_builtin::api::{}::{version}::{kind}",
                    module_name(group)
                ),
            )
        })
        .collect()
}

/// The fixtures' names.
pub fn fixture_names(resources: &Resources) -> Vec<String> {
    fixture_kinds(resources)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

fn test_kinds(resources: &Resources) -> String {
    let mut out = String::from(HEADER);
    out.push_str("// The round-trip test's kinds: each fixture's name and the type it decodes to.\n\nkinds! {\n");
    for (name, path) in fixture_kinds(resources) {
        let _ = writeln!(out, "    \"{name}\" => {path},");
    }
    out.push_str("}\n");
    out
}

/// The kinds whose strategy kapi-builtin's `strategies` writes itself (what their
/// conversions need), rather than the generic one.
const OWN_STRATEGY: &[&str] = &["autoscaling/v2.HorizontalPodAutoscaler"];

const HEADER: &str = "// Generated by kapi-apigen from k8s.io/api's description: do not edit.\n";

fn module_name(group: &str) -> String {
    match group {
        "core" => "core".into(),
        other => other.replace('.', "_"),
    }
}

/// The generated kinds by package and kind, with their `#[resource(...)]` attributes.
type Kinds<'a> = BTreeMap<(String, String), (&'a Resource, String)>;

fn module(
    out: &mut String,
    api: &Api,
    package: &str,
    facts: &crate::facts::Package,
    kinds: &Kinds<'_>,
) -> Result<()> {
    out.push_str(HEADER);
    let _ = writeln!(
        out,
        "//! `{package}` of k8s.io/api {} ({}).\n",
        api.source.tag, api.source.commit
    );
    out.push_str(
        "#![allow(missing_docs)]\n\n\
         use kapi_macros::Protobuf;\n\
         use schemars::JsonSchema;\n\
         use serde::{Deserialize, Serialize};\n\n",
    );
    if kinds.keys().any(|(p, _)| p == package) {
        out.push_str("use kapi_macros::Resource;\n\n");
    }
    let mut served = Vec::new();
    for (name, ty) in &facts.types {
        if PROVIDED
            .iter()
            .any(|(go, _)| *go == format!("{package}.{name}"))
        {
            continue;
        }
        if let Some(fields) = &ty.fields {
            let kind = (kinds.get(&(package.to_string(), name.clone())))
                .map(|(resource, attribute)| (*resource, attribute.as_str()));
            if kind.is_some() {
                served.push(name.as_str());
            }
            render_struct(
                out,
                api,
                package,
                &facts.proto_package,
                name,
                ty,
                fields,
                kind,
            )?;
        } else if ty.markers.contains_key("protobuf.nullable") {
            render_nullable(out, package, name, ty)?;
        }
    }
    served.retain(|kind| !OWN_STRATEGY.contains(&format!("{package}.{kind}").as_str()));
    if !served.is_empty() {
        let _ = writeln!(
            out,
            "crate::strategies::kube_defaults!({});",
            served.join(", ")
        );
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn render_struct(
    out: &mut String,
    api: &Api,
    package: &str,
    proto_package: &str,
    name: &str,
    ty: &Type,
    fields: &[Field],
    kind: Option<(&Resource, &str)>,
) -> Result<()> {
    let schema_name = format!("io.k8s.api.{}", package.replace('/', "."));
    let derives = match kind {
        Some(_) => {
            "Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Protobuf, Resource"
        }
        None => "Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Protobuf",
    };
    if let Some((kind, _)) = kind {
        let _ = writeln!(out, "/// {}: `{}` objects.", kind.kind, kind.plural);
    }
    let _ = writeln!(out, "#[derive({derives})]");
    if let Some((_, attribute)) = kind {
        out.push_str(attribute);
    }
    out.push_str("#[serde(rename_all = \"camelCase\")]\n");
    let _ = writeln!(out, "#[schemars(rename = \"{schema_name}.{name}\")]");
    out.push_str("#[schemars(transform = kapi::api::wire::drop_defaults)]\n");
    if ty
        .markers
        .get("structType")
        .is_some_and(|v| v.iter().any(|v| v == "atomic"))
    {
        out.push_str("#[schemars(extend(\"x-kubernetes-map-type\" = \"atomic\"))]\n");
    }
    let _ = writeln!(out, "#[protobuf(name = \"{proto_package}.{name}\")]");
    let _ = writeln!(out, "pub struct {name} {{");
    for field in fields {
        render_field(out, api, package, field)
            .with_context(|| format!("{package}.{name}.{}", field.go))?;
    }
    out.push_str("}\n\n");
    Ok(())
}

/// A named slice that protobuf wraps in a message of its own (`+protobuf.nullable=true`:
/// `ExtraValue {repeated string items = 1}`), a list in JSON.
fn render_nullable(out: &mut String, package: &str, name: &str, ty: &Type) -> Result<()> {
    let underlying = ty.underlying.as_deref().unwrap_or("");
    if underlying != "[]string" {
        bail!("{package}.{name}: a wrapped `{underlying}` is not supported");
    }
    let schema_name = format!("io.k8s.api.{}", package.replace('/', "."));
    let _ = writeln!(
        out,
        "#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]\n\
         #[serde(transparent)]\n\
         #[schemars(rename = \"{schema_name}.{name}\")]\n\
         pub struct {name}(pub Vec<String>);\n\n\
         /// A message of its own on the wire: `{{repeated string items = 1}}`.\n\
         impl kapi::api::protobuf::ProtoValue for {name} {{\n    \
         const KIND: kapi::api::ProtoKind = kapi::api::ProtoKind::Strings;\n}}\n"
    );
    Ok(())
}

/// The `#[resource(...)]` of a generated kind, with its `others` versions.
fn resource_attribute(
    kind: &Resource,
    others: &[&Resource],
    shapes: &BTreeMap<String, SubresourceShape>,
) -> Result<String> {
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
    } else if !kind.returns_deleted_object {
        items.push("delete_status".into());
    }
    for short in &kind.short_names {
        items.push(format!("short_name = \"{short}\""));
    }
    for category in &kind.categories {
        items.push(format!("category = \"{category}\""));
    }
    if kind.subresources.iter().any(|s| s == "status") {
        items.push("status".into());
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
        match field.split_once('=') {
            Some((label, path)) => items.push(format!(
                "selectable_field(label = \"{label}\", path = \"{path}\")"
            )),
            None => items.push(format!("selectable_field = \".{field}\"")),
        }
    }
    for name in kind
        .subresources
        .iter()
        .filter(|s| !["status", "scale"].contains(&s.as_str()))
    {
        let shape = (shapes.get(name))
            .with_context(|| format!("{} subresource {name}: no shape in the facts", kind.kind))?;
        if shape.pending.is_none() {
            items.push(subresource(name, shape, kind)?);
        }
    }
    if let Some(key) = &kind.storage_key {
        items.push(format!("storage_key = \"{key}\""));
    } else {
        items.push(format!("storage_key = \"{}\"", kind.plural));
    }
    items.push(format!("version(name = \"{version}\", storage)"));
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
    items.push("protobuf".into());
    out.push_str("#[resource(\n");
    for item in items {
        let _ = writeln!(out, "    {item},");
    }
    out.push_str(")]\n");
    Ok(out)
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
        let module = module_name(if group.is_empty() { "core" } else { group });
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

fn render_field(out: &mut String, api: &Api, package: &str, field: &Field) -> Result<()> {
    let shape = rust_type(api, package, &field.ty)?;
    let rust_name = rust_field_name(field.json.as_deref().unwrap_or(&field.go));
    let mut serde: Vec<String> = Vec::new();
    match &field.json {
        None => serde.push("flatten".into()),
        Some(json) => {
            if camel(&rust_name) != *json {
                serde.push(format!("rename = \"{json}\""));
            }
            serde.push("default".into());
            match (&shape, field.omitempty) {
                (Shape::Option(_), true) => {
                    serde.push("skip_serializing_if = \"Option::is_none\"".into())
                }
                (Shape::Option(_), false) => {}
                (Shape::Vec(_), true) => {
                    serde.push("skip_serializing_if = \"Vec::is_empty\"".into())
                }
                (Shape::Map(_), true) => serde
                    .push("skip_serializing_if = \"std::collections::BTreeMap::is_empty\"".into()),
                (Shape::Scalar(_), true) => {
                    serde.push("skip_serializing_if = \"kapi::api::wire::is_zero\"".into())
                }
                _ => {}
            }
            if !matches!(shape, Shape::Option(_)) {
                serde.push("deserialize_with = \"kapi::api::wire::null_as_default\"".into());
            }
        }
    }
    let _ = writeln!(out, "    #[serde({})]", serde.join(", "));
    let mut extend: Vec<String> = Vec::new();
    if let Some(list_type) = field.markers.get("listType").and_then(|v| v.first()) {
        extend.push(format!("\"x-kubernetes-list-type\" = \"{list_type}\""));
        if let Some(keys) = field.markers.get("listMapKey") {
            let keys: Vec<String> = keys.iter().map(|k| format!("\"{k}\"")).collect();
            extend.push(format!(
                "\"x-kubernetes-list-map-keys\" = [{}]",
                keys.join(", ")
            ));
        }
    }
    if let Some(map_type) = field.markers.get("mapType").and_then(|v| v.first()) {
        extend.push(format!("\"x-kubernetes-map-type\" = \"{map_type}\""));
    }
    if let Some(key) = &field.patch_merge_key {
        extend.push(format!("\"x-kubernetes-patch-merge-key\" = \"{key}\""));
    }
    if let Some(strategy) = &field.patch_strategy {
        extend.push(format!("\"x-kubernetes-patch-strategy\" = \"{strategy}\""));
    }
    if !extend.is_empty() {
        let _ = writeln!(out, "    #[schemars(extend({}))]", extend.join(", "));
    }
    let required = field.json.is_some()
        && !field.omitempty
        && !field.markers.contains_key("optional")
        && !matches!(shape, Shape::Option(_));
    if required {
        out.push_str("    #[schemars(required)]\n");
    }
    match field.proto {
        Some(tag) => {
            let _ = writeln!(out, "    #[protobuf(tag = {tag})]");
        }
        None => out.push_str("    #[protobuf(skip)]\n"),
    }
    let _ = writeln!(out, "    pub {rust_name}: {},", shape.text());
    Ok(())
}

/// A field's Rust type, by the shape serde treats it as.
enum Shape {
    Option(String),
    Vec(String),
    Map(String),
    Scalar(String),
    Struct(String),
}

impl Shape {
    fn text(&self) -> String {
        match self {
            Shape::Option(inner) => format!("Option<{inner}>"),
            Shape::Vec(inner) => format!("Vec<{inner}>"),
            Shape::Map(inner) => format!("std::collections::BTreeMap<String, {inner}>"),
            Shape::Scalar(text) | Shape::Struct(text) => text.clone(),
        }
    }
}

/// The Rust type of a Go type written as the facts write it.
fn rust_type(api: &Api, package: &str, go: &str) -> Result<Shape> {
    if let Some(inner) = go.strip_prefix('*') {
        return Ok(Shape::Option(rust_type(api, package, inner)?.text()));
    }
    if go == "[]byte" {
        return Ok(Shape::Scalar("kapi::ByteString".into()));
    }
    // Items and map values too: Go's zero time in a map is `null` (`disruptedPods`).
    let item = |inner: &str| -> Result<String> { Ok(rust_type(api, package, inner)?.text()) };
    if let Some(inner) = go.strip_prefix("[]") {
        return Ok(Shape::Vec(item(inner)?));
    }
    if let Some(rest) = go.strip_prefix("map[") {
        let (_key, value) = rest.split_once(']').context("map type")?;
        return Ok(Shape::Map(item(value)?));
    }
    Ok(match go {
        "string" | "types.UID" => Shape::Scalar("String".into()),
        "int32" => Shape::Scalar("i32".into()),
        "int64" => Shape::Scalar("i64".into()),
        "bool" => Shape::Scalar("bool".into()),
        "float64" => Shape::Scalar("f64".into()),
        "meta/v1.Time" => Shape::Option("kapi::meta::Time".into()),
        "meta/v1.ObjectMeta" => Shape::Struct("kapi::meta::ObjectMeta".into()),
        "meta/v1.LabelSelector" => Shape::Struct("kapi::meta::LabelSelector".into()),
        "meta/v1.Condition" => Shape::Struct("kapi::meta::Condition".into()),
        "meta/v1.DeleteOptions" => Shape::Struct("kapi::meta::DeleteOptions".into()),
        "resource.Quantity" => Shape::Scalar("kapi::meta::Quantity".into()),
        "intstr.IntOrString" => Shape::Scalar("kapi::meta::IntOrString".into()),
        "runtime.RawExtension" => Shape::Struct("kapi::meta::RawExtension".into()),
        named if PROVIDED.iter().any(|(go, _)| *go == named) => {
            let (_, rust) = PROVIDED.iter().find(|(go, _)| *go == named).expect("found");
            Shape::Struct((*rust).into())
        }
        named => {
            let (other, name) = named.rsplit_once('.').context("a named type")?;
            let ty = api
                .packages
                .get(other)
                .and_then(|p| p.types.get(name))
                .with_context(|| format!("`{named}` is not in the facts"))?;
            if ty.fields.is_some() || ty.markers.contains_key("protobuf.nullable") {
                let path = if other == package {
                    name.to_string()
                } else {
                    let (group, version) = other.split_once('/').context("package")?;
                    format!("crate::api::{}::{version}::{name}", module_name(group))
                };
                Shape::Struct(path)
            } else {
                rust_type(api, other, ty.underlying.as_deref().context("underlying")?)?
            }
        }
    })
}

/// k8s.io/api types kapi-core declares, because kinds declared by hand use them too (the
/// API has one definition of each): not rendered, named where used.
const PROVIDED: &[(&str, &str)] = &[("core/v1.ObjectReference", "kapi::meta::ObjectReference")];

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static",
    "struct", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized",
    "virtual", "yield", "try", "gen",
];

/// The snake_case Rust name of a JSON field (`podIPs` → `pod_ips`, `type` → `r#type`),
/// as the derive maps JSON paths to fields.
fn rust_field_name(json: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = json.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase())
                // `IPs`: a plural acronym stays one word.
                && !(chars.get(i + 1) == Some(&'s') && chars.get(i + 2).is_none_or(|n| n.is_uppercase()) && i > 0 && chars[i - 1].is_uppercase());
            if i > 0 && (prev_lower || (next_lower && chars[i - 1].is_uppercase())) {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    if KEYWORDS.contains(&out.as_str()) {
        format!("r#{out}")
    } else {
        out
    }
}

/// serde's camelCase of a Rust field name.
fn camel(name: &str) -> String {
    let name = name.trim_start_matches("r#");
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `sets.rs`: each feature set's kinds.
fn sets(resources: &Resources) -> String {
    let mut sets: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for resource in resources.resources.iter().filter(|r| r.is_hub()) {
        let package = package_of(&resource.group_version);
        let (group, version) = package.split_once('/').expect("package");
        sets.entry(resource.set.as_str()).or_default().push(format!(
            "crate::api::{}::{version}::{}::INFO",
            module_name(group),
            resource.kind
        ));
    }
    let mut out = String::from(HEADER);
    out.push_str("//! The feature sets of built-in kinds an API lists.\n\nuse kapi::Resource as _;\nuse kapi::api::KindInfo;\n\n");
    for (set, kinds) in sets {
        let _ = writeln!(out, "/// The `{set}` set.");
        let _ = writeln!(out, "pub const {}: &[&KindInfo] = &[", set.to_uppercase());
        for kind in kinds {
            let _ = writeln!(out, "    {kind},");
        }
        out.push_str("];\n\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::rust_field_name;

    #[test]
    fn field_names_are_snake_case() {
        for (json, rust) in [
            ("podIPs", "pod_ips"),
            ("podIP", "pod_ip"),
            ("hostIPC", "host_ipc"),
            ("type", "r#type"),
            ("apiVersion", "api_version"),
            ("externalIPs", "external_ips"),
            ("tcpSocket", "tcp_socket"),
            ("volumeID", "volume_id"),
            ("iscsiInterface", "iscsi_interface"),
            ("fsGroup", "fs_group"),
        ] {
            assert_eq!(rust_field_name(json), rust, "{json}");
        }
    }
}
