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
//! - slices and maps are `Vec` and `BTreeMap`, omitted when empty under `omitempty` and
//!   written as `null` when empty without it (Go's nil slice or map);
//! - `json:",inline"` is `#[serde(flatten)]`, an inlined message on the wire;
//! - a `metav1.Time` value is an `Option<Time>` (Go's zero time is `null` in JSON), and
//!   so is a pointer to one;
//! - named string types (kube's enums) are `String`s: unknown values pass through, as
//!   they do through Go's types, and kube's validation judges them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use anyhow::{Context, Result, bail};

use crate::defaults::Defaulting;
use crate::extract::package_of;
use crate::facts::{Api, Extension, Field, Resource, Resources, Type};
use crate::place::{Crate, crate_of, feature_of, place};

/// The rendered files, by path relative to the workspace root.
pub fn render(api: &Api, resources: &Resources) -> Result<BTreeMap<String, String>> {
    let placement = place(api, resources)?;
    let defaulting = Defaulting::new(api, resources)?;
    // Each kind's version types: all implement `Defaults` when one has defaults.
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in resources.resources.iter().filter(|r| r.generated()) {
        let hub = match &r.hub {
            Some(hub) => format!("{}.{}", package_of(hub), r.kind),
            None => format!("{}.{}", package_of(&r.group_version), r.kind),
        };
        let own = format!("{}.{}", package_of(&r.group_version), r.kind);
        versions.entry(hub).or_default().push(own);
    }
    let forced = crate::defaults::forced(&defaulting, &versions);
    let mut files = BTreeMap::new();
    let mut kinds: Kinds = BTreeMap::new();
    // Kinds stored with another (`events.k8s.io` Events), declared on a unit struct in
    // their group's module, by crate and group.
    let mut markers: BTreeMap<(Crate, String), String> = BTreeMap::new();
    for r in resources.resources.iter().filter(|r| r.is_hub()) {
        // The kind's other versions, converted through this one by hand.
        let others: Vec<&Resource> = (resources.resources.iter())
            .filter(|o| o.generated() && o.kind == r.kind)
            .filter(|o| o.hub.as_deref() == Some(r.group_version.as_str()))
            .collect();
        let own = format!("{}.{}", package_of(&r.group_version), r.kind);
        let attribute =
            crate::attribute::resource_attribute(r, &others, resources, forced.contains(&own))?;
        let package = package_of(&r.group_version);
        if r.stored_with.is_some() {
            let group = package.split_once('/').context("package path")?.0;
            let marker = markers.entry((crate_of(r), group.to_string())).or_default();
            let doc = match &r.description {
                Some(description) => description.clone(),
                None => format!("{}: `{}` objects.", r.kind, r.plural),
            };
            let _ = writeln!(
                marker,
                "/// {doc}\n#[derive(kapi_macros::Resource)]\n{attribute}pub struct {};\n",
                r.kind
            );
        } else {
            kinds.insert((package, r.kind.clone()), (r, attribute));
        }
    }
    for krate in [Crate::Kinds, Crate::Builtin] {
        let dir = krate.dir();
        let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (package, facts) in &api.packages {
            let (group, version) = package.split_once('/').context("package path")?;
            let types: BTreeMap<&String, &Type> = (facts.types.iter())
                .filter(|(name, _)| {
                    placement.get(&(package.clone(), (*name).clone())) == Some(&krate)
                })
                .collect();
            if types.is_empty() {
                continue;
            }
            groups.entry(group).or_default().push(version);
            let mut out = String::new();
            module(
                &mut out,
                Rendering {
                    resources,
                    api,
                    defaulting: &defaulting,
                    forced: &forced,
                },
                package,
                &facts.proto_package,
                &types,
                &kinds,
                krate,
            )?;
            files.insert(format!("{dir}/{package}.rs"), out);
        }
        let mut root = String::from(HEADER);
        let _ = writeln!(
            root,
            "//! {}\n\
             //! one module per group-version, generated from kube's API (see `apigen/`). Do\n\
             //! not edit: `cargo xtask generate` writes them.\n",
            match krate {
                Crate::Kinds => "The Kubernetes kinds every server has or its features serve,",
                Crate::Builtin => "Kubernetes' built-in API groups,",
            }
        );
        for (group, versions) in &groups {
            // kapi-kinds' sets have features; kapi-builtin is compiled whole.
            if krate == Crate::Kinds
                && let Some(feature) = group_feature(resources, group)?
            {
                let _ = writeln!(root, "#[cfg(feature = \"{feature}\")]");
            }
            let _ = writeln!(root, "pub mod {};", module_name(group));
            let mut group_mod = String::from(HEADER);
            let module = module_of(
                &api.source_of(&format!("{group}/{}", versions[0]))
                    .repository,
            );
            let _ = writeln!(group_mod, "//! The `{group}` packages of {module}.\n");
            for version in versions {
                let _ = writeln!(group_mod, "pub mod {version};");
            }
            if let Some(marker) = markers.get(&(krate, group.to_string())) {
                group_mod.push('\n');
                group_mod.push_str(marker);
            }
            files.insert(format!("{dir}/{group}/mod.rs"), group_mod);
        }
        root.push_str("pub mod sets;\n");
        files.insert(format!("{dir}/mod.rs"), root);
        files.insert(format!("{dir}/sets.rs"), sets(resources, krate));
    }
    files.insert(TEST_KINDS.into(), test_kinds(resources));
    Ok(files)
}

/// The directories the generator owns, relative to the workspace root: every file in
/// them is rendered, and one it no longer renders is extra.
pub const OWNED_DIRS: &[&str] = &["builtin/src/api", "kinds/src/api"];

/// The round-trip test's list of kinds and fixtures, rendered too.
pub const TEST_KINDS: &str = "builtin/tests/roundtrip/kinds.rs";

/// The cargo feature of kapi-kinds that compiles a group's module: that of its kinds'
/// set, which must be one.
fn group_feature(resources: &Resources, group: &str) -> Result<Option<&'static str>> {
    let mut features = (resources.resources.iter())
        .filter(|r| r.generated() && crate_of(r) == Crate::Kinds)
        .filter(|r| package_of(&r.group_version).split_once('/').map(|(g, _)| g) == Some(group))
        .map(|r| feature_of(&r.set));
    let first = features.next().flatten();
    if features.any(|other| other != first) {
        bail!("the `{group}` kinds of kapi-kinds are in sets of different features");
    }
    Ok(first)
}

/// The round-trip fixtures of k8s.io/api's kinds the facts reach from (`core.v1.Pod`), as
/// its `testdata/HEAD` names them, with the Rust paths of their types (the other modules
/// keep no such fixtures).
pub fn fixture_kinds(resources: &Resources) -> Vec<(String, String)> {
    fixtures(resources)
        .into_iter()
        .map(|fixture| (fixture.name, fixture.path))
        .collect()
}

/// The fixtures' names, each with the later tag its kind is read at (`None`: the
/// release's), where its fixture is taken from too.
pub fn fixture_names(resources: &Resources) -> Vec<(String, Option<String>)> {
    fixtures(resources)
        .into_iter()
        .map(|fixture| (fixture.name, fixture.tag))
        .collect()
}

/// One of k8s.io/api's round-trip fixtures.
struct Fixture {
    /// `core.v1.Pod`.
    name: String,
    /// The Rust path of its type.
    path: String,
    /// The later tag its kind is read at, if any.
    tag: Option<String>,
}

fn fixtures(resources: &Resources) -> Vec<Fixture> {
    crate::extract::roots(resources)
        .into_iter()
        .filter(|(package, _)| crate::extract::API.holds(package))
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
            let tag = (resources.resources.iter())
                .find(|r| {
                    r.generated() && package_of(&r.group_version) == package && r.kind == kind
                })
                .and_then(|r| r.tag.clone());
            Fixture {
                name: format!("{fixture_group}.{version}.{kind}"),
                path: format!(
                    "{}::api::{}::{version}::{kind}",
                    home(resources, &package, &kind).name(),
                    module_name(group)
                ),
                tag,
            }
        })
        .collect()
}

/// The crate declaring a kind's type: kapi-kinds' kinds and the versions stored with
/// them, kapi-builtin the rest (the kinds subresources take).
fn home(resources: &Resources, package: &str, kind: &str) -> Crate {
    (resources.resources.iter())
        .find(|r| r.generated() && package_of(&r.group_version) == package && r.kind == kind)
        .map_or(Crate::Builtin, crate_of)
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

/// The kinds whose strategy kapi-builtin's `strategies` writes itself (their validation,
/// what their creation sets, what their conversions need), rather than the generic one.
const OWN_STRATEGY: &[&str] = &[
    "apps/v1.ControllerRevision",
    "apps/v1.DaemonSet",
    "apps/v1.Deployment",
    "apps/v1.ReplicaSet",
    "apps/v1.StatefulSet",
    "autoscaling/v2.HorizontalPodAutoscaler",
    "batch/v1.CronJob",
    "batch/v1.Job",
    "certificates/v1.CertificateSigningRequest",
    "core/v1.Endpoints",
    "core/v1.LimitRange",
    "core/v1.Node",
    "core/v1.PersistentVolume",
    "core/v1.PersistentVolumeClaim",
    "core/v1.Pod",
    "core/v1.PodTemplate",
    "core/v1.ReplicationController",
    "core/v1.ResourceQuota",
    "core/v1.Secret",
    "core/v1.Service",
    "networking/v1.Ingress",
    "networking/v1.IngressClass",
    "networking/v1.NetworkPolicy",
    "node/v1.RuntimeClass",
    "policy/v1.PodDisruptionBudget",
    "scheduling/v1.PriorityClass",
    "storage/v1.StorageClass",
    "storage/v1.VolumeAttachment",
];

const HEADER: &str =
    "// Generated by kapi-apigen from kube's description of its API: do not edit.\n";

pub(crate) fn module_name(group: &str) -> String {
    match group {
        "core" => "core".into(),
        other => other.replace('.', "_"),
    }
}

/// The generated kinds by package and kind, with their `#[resource(...)]` attributes.
type Kinds<'a> = BTreeMap<(String, String), (&'a Resource, String)>;

/// What every module's rendering reads.
struct Rendering<'a> {
    resources: &'a Resources,
    api: &'a Api,
    defaulting: &'a Defaulting<'a>,
    /// Version types that implement `Defaults` though they set none.
    forced: &'a BTreeSet<String>,
}

fn module(
    out: &mut String,
    context: Rendering<'_>,
    package: &str,
    proto_package: &str,
    types: &BTreeMap<&String, &Type>,
    kinds: &Kinds<'_>,
    krate: Crate,
) -> Result<()> {
    let Rendering { resources, api, .. } = context;
    out.push_str(HEADER);
    let source = api.source_of(package);
    let _ = writeln!(
        out,
        "//! `{package}` of {} {} ({}).\n",
        module_of(&source.repository),
        source.tag,
        source.commit
    );
    let wire = Wire::of(resources, package);
    out.push_str("#![allow(missing_docs)]\n\n");
    if wire == Wire::Protobuf {
        out.push_str("use kapi_macros::Protobuf;\n");
    }
    out.push_str(
        "use schemars::JsonSchema;\n\
         use serde::{Deserialize, Serialize};\n\n",
    );
    if (kinds.keys()).any(|(p, kind)| p == package && types.contains_key(kind)) {
        out.push_str("use kapi_macros::Resource;\n\n");
    }
    let mut served = Vec::new();
    for (&name, &ty) in types {
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
            // A kind's type (or a version's stored with another kind) says what it is.
            let doc = (resources.resources.iter())
                .find(|r| {
                    r.generated() && package_of(&r.group_version) == package && r.kind == *name
                })
                .map(|r| match &r.description {
                    Some(description) => description.clone(),
                    None => format!("{}: `{}` objects.", r.kind, r.plural),
                });
            let extensions: Vec<&Extension> = (resources.extensions.iter())
                .filter(|e| e.ty == format!("{package}.{name}"))
                .collect();
            render_struct(
                out,
                api,
                package,
                proto_package,
                Declared {
                    name,
                    ty,
                    fields,
                    extensions: &extensions,
                    wire,
                },
                kind,
                doc,
            )?;
            let qualified = format!("{package}.{name}");
            (context.defaulting).render(
                out,
                package,
                name,
                fields,
                context.forced.contains(&qualified),
            )?;
        } else if ty.markers.contains_key("protobuf.nullable") {
            render_nullable(out, api, package, name, ty)?;
        }
    }
    served.retain(|kind| !OWN_STRATEGY.contains(&format!("{package}.{kind}").as_str()));
    // kapi-kinds' kinds have strategies of their own (hand-written, beside them).
    if !served.is_empty() && krate == Crate::Builtin {
        let _ = writeln!(
            out,
            "crate::strategies::kube_defaults!({});",
            served.join(", ")
        );
    }
    Ok(())
}

/// How a package's kinds are served: in protobuf too, as kube serves every kind, or in
/// JSON alone where the facts say why (`jsonOnly`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wire {
    Protobuf,
    JsonOnly,
}

impl Wire {
    pub(crate) fn of(resources: &Resources, package: &str) -> Wire {
        match resources.json_only.contains_key(package) {
            true => Wire::JsonOnly,
            false => Wire::Protobuf,
        }
    }
}

/// A struct to declare: kube's type, with kapi's extensions to it.
struct Declared<'a> {
    name: &'a str,
    ty: &'a Type,
    fields: &'a [Field],
    extensions: &'a [&'a Extension],
    wire: Wire,
}

/// `github.com/kubernetes/api` → `k8s.io/api`.
fn module_of(repository: &str) -> String {
    let name = repository.rsplit('/').next().unwrap_or(repository);
    format!("k8s.io/{name}")
}

/// The prefix of a package's type names in kube's OpenAPI.
fn schema_prefix(api: &Api, package: &str) -> String {
    match api.packages.get(package) {
        Some(facts) => facts.openapi_prefix(package),
        None => format!("io.k8s.api.{}", package.replace('/', ".")),
    }
}

fn render_struct(
    out: &mut String,
    api: &Api,
    package: &str,
    proto_package: &str,
    declared: Declared<'_>,
    kind: Option<(&Resource, &str)>,
    doc: Option<String>,
) -> Result<()> {
    let Declared {
        name,
        ty,
        fields,
        extensions,
        wire,
    } = declared;
    let schema_name = schema_prefix(api, package);
    let mut derives =
        String::from("Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema");
    if wire == Wire::Protobuf {
        derives.push_str(", Protobuf");
    }
    if kind.is_some() {
        derives.push_str(", Resource");
    }
    if let Some(doc) = doc {
        let _ = writeln!(out, "/// {doc}");
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
        out.push_str("#[schemars(transform = kapi::api::wire::atomic_struct)]\n");
    }
    if fields.is_empty() && extensions.is_empty() {
        // An empty Go struct keeps no field (`{}` whatever was sent): said, so that the
        // schema is not read as a free-form object's.
        out.push_str("#[schemars(extend(\"additionalProperties\" = false))]\n");
    }
    if wire == Wire::Protobuf {
        let _ = writeln!(out, "#[protobuf(name = \"{proto_package}.{name}\")]");
    }
    let _ = writeln!(out, "pub struct {name} {{");
    for field in fields {
        render_field(out, api, package, field, wire)
            .with_context(|| format!("{package}.{name}.{}", field.go))?;
    }
    for extension in extensions {
        let field = &extension.field;
        if field.proto.is_some() {
            bail!(
                "{package}.{name}.{}: kapi's fields are not on the protobuf wire",
                field.go
            );
        }
        let _ = writeln!(out, "    /// kapi's own field: {}", extension.why);
        render_field(out, api, package, field, wire)
            .with_context(|| format!("{package}.{name}.{}", field.go))?;
    }
    out.push_str("}\n\n");
    Ok(())
}

/// A named slice that protobuf wraps in a message of its own (`+protobuf.nullable=true`:
/// `ExtraValue {repeated string items = 1}`), a list in JSON.
fn render_nullable(
    out: &mut String,
    api: &Api,
    package: &str,
    name: &str,
    ty: &Type,
) -> Result<()> {
    let underlying = ty.underlying.as_deref().unwrap_or("");
    if underlying != "[]string" {
        bail!("{package}.{name}: a wrapped `{underlying}` is not supported");
    }
    let schema_name = schema_prefix(api, package);
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

fn render_field(
    out: &mut String,
    api: &Api,
    package: &str,
    field: &Field,
    wire: Wire,
) -> Result<()> {
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
                // Go writes a nil slice or map as `null` unless `omitempty`.
                (Shape::Vec(_), false) => {
                    serde.push("serialize_with = \"kapi::api::wire::empty_list_as_null\"".into())
                }
                (Shape::Map(_), false) => {
                    serde.push("serialize_with = \"kapi::api::wire::empty_map_as_null\"".into())
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
    if let Some(values) = enum_values(api, package, &field.ty) {
        let values: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
        extend.push(format!("\"enum\" = [{}]", values.join(", ")));
    }
    if let Some(strategy) = &field.patch_strategy {
        extend.push(format!("\"x-kubernetes-patch-strategy\" = \"{strategy}\""));
    }
    // kube's published default (a `+default` marker's JSON literal; a `ref(Constant)` is
    // set by the type's own defaulting function and not published here).
    let literal = (field.markers.get("default").and_then(|v| v.first()))
        .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok());
    if let Some(value) = literal {
        // `kapi::api::wire::KUBE_DEFAULT`, which `drop_defaults` publishes as `default`.
        extend.push(format!("\"x-kapi-kube-default\" = {value}"));
    }
    if !extend.is_empty() {
        let _ = writeln!(out, "    #[schemars(extend({}))]", extend.join(", "));
    }
    // kube's `required` lists are not published yet: schemars' `required` would inline the
    // field's schema (no `$ref`) and still leave it out of the list, the field having a
    // serde default; the lists come with the kinds' validation.
    match (wire, field.proto) {
        (Wire::JsonOnly, _) => {}
        (Wire::Protobuf, Some(tag)) => {
            let _ = writeln!(out, "    #[protobuf(tag = {tag})]");
        }
        (Wire::Protobuf, None) => out.push_str("    #[protobuf(skip)]\n"),
    }
    let _ = writeln!(out, "    pub {rust_name}: {},", shape.text());
    Ok(())
}

/// The values of a field whose type is one of kube's enums (`+enum`: a named string with
/// its constants), sorted as kube's OpenAPI lists them; a pointer to one too.
fn enum_values(api: &Api, package: &str, go: &str) -> Option<Vec<String>> {
    let named = go.strip_prefix('*').unwrap_or(go);
    let (other, name) = named.rsplit_once('.')?;
    let other = if other.is_empty() { package } else { other };
    let ty = api.packages.get(other)?.types.get(name)?;
    if !ty.markers.contains_key("enum") || ty.values.is_empty() {
        return None;
    }
    let mut values = ty.values.clone();
    values.sort();
    values.dedup();
    Some(values)
}

/// A field's Rust type, by the shape serde treats it as.
pub(crate) enum Shape {
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
pub(crate) fn rust_type(api: &Api, package: &str, go: &str) -> Result<Shape> {
    if let Some(inner) = go.strip_prefix('*') {
        // A pointer to a time is one `Option`, as a time is: nil and zero are both absent
        // once read back from JSON (`null`).
        return Ok(match rust_type(api, package, inner)? {
            Shape::Option(text) => Shape::Option(text),
            other => Shape::Option(other.text()),
        });
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
        // `meta/v1.StatusReason`: a string (a policy's validation `reason`).
        "string" | "types.UID" | "meta/v1.StatusReason" => Shape::Scalar("String".into()),
        "int32" => Shape::Scalar("i32".into()),
        "int64" => Shape::Scalar("i64".into()),
        "bool" => Shape::Scalar("bool".into()),
        "float64" => Shape::Scalar("f64".into()),
        "meta/v1.Time" => Shape::Option("kapi::meta::Time".into()),
        "meta/v1.MicroTime" => Shape::Option("kapi::meta::MicroTime".into()),
        "meta/v1.ObjectMeta" => Shape::Struct("kapi::meta::ObjectMeta".into()),
        "meta/v1.LabelSelector" => Shape::Struct("kapi::meta::LabelSelector".into()),
        "meta/v1.LabelSelectorRequirement" => {
            Shape::Struct("kapi::meta::LabelSelectorRequirement".into())
        }
        "meta/v1.FieldSelectorRequirement" => {
            Shape::Struct("kapi::meta::FieldSelectorRequirement".into())
        }
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

/// Types of kube's API declared by hand, not rendered, named where used: kapi-core's,
/// because kinds declared by hand use them too (the API has one definition of each), and
/// kapi-kinds' where kapi keeps a value as written.
pub(crate) const PROVIDED: &[(&str, &str)] = &[
    ("core/v1.ObjectReference", "kapi::meta::ObjectReference"),
    // A CRD's schema is kept as written (any JSON, its own validation's to judge).
    (
        "apiextensions/v1.JSONSchemaProps",
        "crate::apiextensions::JsonSchemaProps",
    ),
];

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static",
    "struct", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized",
    "virtual", "yield", "try", "gen",
];

/// The snake_case Rust name of a JSON field (`podIPs` → `pod_ips`, `type` → `r#type`),
/// as the derive maps JSON paths to fields.
pub(crate) fn rust_field_name(json: &str) -> String {
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

/// `sets.rs`: each feature set's kinds of a crate.
fn sets(resources: &Resources, krate: Crate) -> String {
    let mut sets: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for resource in (resources.resources.iter()).filter(|r| r.is_hub() && crate_of(r) == krate) {
        let package = package_of(&resource.group_version);
        let (group, version) = package.split_once('/').expect("package");
        // A kind stored with another is declared in its group's module.
        let module = match resource.stored_with {
            Some(_) => module_name(group),
            None => format!("{}::{version}", module_name(group)),
        };
        sets.entry(resource.set.as_str())
            .or_default()
            .push(format!("crate::api::{module}::{}::INFO", resource.kind));
    }
    let mut out = String::from(HEADER);
    out.push_str("//! The feature sets of built-in kinds an API lists.\n\nuse kapi::Resource as _;\nuse kapi::api::KindInfo;\n\n");
    for (set, kinds) in sets {
        let _ = writeln!(out, "/// The `{set}` set.");
        if let Some(feature) = feature_of(set) {
            let _ = writeln!(out, "#[cfg(feature = \"{feature}\")]");
        }
        let _ = writeln!(
            out,
            "pub const {}: &[&KindInfo] = &[",
            set.to_uppercase().replace('-', "_")
        );
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
