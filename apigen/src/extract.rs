//! kube's API modules reduced to [`Api`] facts: each package's `types.go` read with
//! [`crate::go`], its `generated.proto` with [`crate::proto`], the two compared, and only
//! the types the served kinds reach kept, without kube's descriptions. k8s.io/api holds
//! nearly every kind; the CustomResourceDefinition and the APIService are their servers'
//! own modules' ([`MODULES`]).
//!
//! A module's facts are read at the release's tag, except the kinds whose resources name a
//! later one (`"tag": "v0.34.1"`: a kind the release does not serve yet): those are read at
//! it, into a facts file of their own holding only their packages. What they reach in a
//! package the release's facts hold (`admissionregistration/v1.RuleWithOperations`,
//! which `v1beta1` names through a Go alias) is taken from those, once read at the later
//! tag too and found the same; a type that changed is refused, since each package's facts
//! come from one tag.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::facts::{Api, Field, Package, Resource, Resources, Source, Type};
use crate::go::{self, GoType, TypeBody};
use crate::proto;

/// The markers the facts keep: those that change the wire, the schema or the kind.
pub const KEPT_MARKERS: &[&str] = &[
    "optional",
    "required",
    "listType",
    "listMapKey",
    "mapType",
    "structType",
    "enum",
    "default",
    "genclient",
    "genclient:nonNamespaced",
    "protobuf.nullable",
    "protobuf.as",
    "union",
    "unionDiscriminator",
    "oneOf",
];

/// Packages of other modules the API's types use, by import path, and the canonical names
/// the facts give them.
const FOREIGN: &[(&str, &str)] = &[
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "meta/v1"),
    ("k8s.io/apimachinery/pkg/api/resource", "resource"),
    ("k8s.io/apimachinery/pkg/util/intstr", "intstr"),
    ("k8s.io/apimachinery/pkg/runtime", "runtime"),
    ("k8s.io/apimachinery/pkg/types", "types"),
];

/// A Go module kube declares kinds in.
pub struct Module {
    /// Its import path (`k8s.io/api`).
    pub import: &'static str,
    /// `github.com/kubernetes/api`, as `fetch` names it.
    pub repository: &'static str,
    /// The directory its API packages are in (`pkg/apis`), empty for k8s.io/api.
    pub apis_dir: &'static str,
    /// The packages it holds (`apiextensions/v1`); none: every package no other module
    /// holds (k8s.io/api).
    pub packages: &'static [&'static str],
    /// The name of its facts file under `apigen/inputs`, before the tag.
    pub facts: &'static str,
}

impl Module {
    /// Whether a package (`core/v1`) is this module's.
    pub fn holds(&self, package: &str) -> bool {
        match self.packages.is_empty() {
            true => !MODULES.iter().any(|m| m.packages.contains(&package)),
            false => self.packages.contains(&package),
        }
    }

    /// A package's directory in the module's repository.
    fn dir(&self, package: &str) -> String {
        match self.apis_dir {
            "" => package.to_string(),
            dir => format!("{dir}/{package}"),
        }
    }

    /// A package's Go import path, when it is not k8s.io/api's.
    fn import_path(&self, package: &str) -> Option<String> {
        (!self.apis_dir.is_empty()).then(|| format!("{}/{}", self.import, self.dir(package)))
    }
}

/// k8s.io/api, the first: every built-in kind but the two below.
pub const API: Module = Module {
    import: "k8s.io/api",
    repository: "github.com/kubernetes/api",
    apis_dir: "",
    packages: &[],
    facts: "k8s.io-api",
};

/// The modules facts are read from, k8s.io/api first.
pub const MODULES: &[Module] = &[
    API,
    Module {
        import: "k8s.io/apiextensions-apiserver",
        repository: "github.com/kubernetes/apiextensions-apiserver",
        apis_dir: "pkg/apis",
        packages: &["apiextensions/v1"],
        facts: "k8s.io-apiextensions-apiserver",
    },
    Module {
        import: "k8s.io/kube-aggregator",
        repository: "github.com/kubernetes/kube-aggregator",
        apis_dir: "pkg/apis",
        packages: &["apiregistration/v1"],
        facts: "k8s.io-kube-aggregator",
    },
];

/// Go's predeclared types the API uses.
const PREDECLARED: &[&str] = &[
    "string", "bool", "int32", "int64", "int", "float64", "byte", "uint32", "uint64",
];

/// A package read whole: its types (every one, before reduction) and constants.
struct Read {
    import_path: Option<String>,
    proto_package: String,
    types: BTreeMap<String, Type>,
    messages: BTreeMap<String, proto::Message>,
}

/// Which facts file of a module an extraction writes.
#[derive(Clone, Copy, Debug)]
pub enum Reading<'a> {
    /// The release's, at its tag: the kinds whose resources name no later tag, the kinds
    /// subresources take and the types conversions use.
    Release,
    /// A later tag's: the kinds whose resources name it, and what they reach that
    /// `release` (the release's facts of every module, merged) does not hold.
    Later {
        /// The release's facts.
        release: &'a Api,
    },
}

/// Reads the packages of `module` the resources' kinds read at `tag` need from its git
/// directory at `tag`, and keeps what they reach (for a later tag, what the release's facts
/// do not already hold).
pub fn extract(
    module: &Module,
    git_dir: &Path,
    tag: &str,
    resources: &Resources,
    reading: Reading<'_>,
) -> Result<Api> {
    let commit = git(git_dir, &["rev-parse", &format!("{tag}^{{commit}}")])?
        .trim()
        .to_string();
    let mut read = BTreeMap::new();
    let roots: Vec<(String, String)> = match reading {
        Reading::Release => extracted_at(resources, None),
        Reading::Later { .. } => extracted_at(resources, Some(tag)),
    };
    let roots: Vec<(String, String)> = (roots.into_iter())
        .filter(|(package, _)| module.holds(package))
        .collect();
    let release = match reading {
        Reading::Release => None,
        Reading::Later { release } => Some(release),
    };
    if let Some(release) = release
        && let Some((package, _)) = roots.iter().find(|(p, _)| release.packages.contains_key(p))
    {
        bail!(
            "{package} is in the release's facts: a kind read at {tag} must be in a package \
             of its own, since each package's facts come from one tag"
        );
    }
    let mut pending: Vec<String> = roots.iter().map(|(package, _)| package.clone()).collect();
    while let Some(package) = pending.pop() {
        if read.contains_key(&package) {
            continue;
        }
        let dir = module.dir(&package);
        let types_go = git(git_dir, &["show", &format!("{tag}:{dir}/types.go")])?;
        let proto = git(git_dir, &["show", &format!("{tag}:{dir}/generated.proto")])?;
        let package_read = read_package(module, &package, &types_go, &proto)
            .with_context(|| format!("reading {package}"))?;
        for ty in package_read.types.values() {
            for name in referenced(ty) {
                if let Some((other, _)) = name.rsplit_once('.')
                    && !is_foreign(other)
                    && module.holds(other)
                    && !read.contains_key(other)
                {
                    pending.push(other.to_string());
                }
            }
        }
        read.insert(package, package_read);
    }
    let mut api = Api {
        source: Source {
            repository: module.repository.into(),
            tag: tag.into(),
            commit,
        },
        disagreements: Vec::new(),
        packages: BTreeMap::new(),
    };
    reduce(module, &read, &roots, release, &mut api)?;
    for (package, package_read) in &read {
        if let Some(kept) = api.packages.get(package) {
            compare(
                package,
                kept,
                &package_read.messages,
                &mut api.disagreements,
            );
        }
    }
    Ok(api)
}

/// The kinds the resources serve (their packages and names), and the kinds their
/// subresources take.
pub(crate) fn roots(resources: &Resources) -> Vec<(String, String)> {
    roots_where(resources, |_| true, true)
}

/// The kinds of the resources `keep` keeps, and with `subresources` the kinds subresources
/// take.
fn roots_where(
    resources: &Resources,
    keep: impl Fn(&Resource) -> bool,
    subresources: bool,
) -> Vec<(String, String)> {
    let mut roots = BTreeSet::new();
    for resource in (resources.resources.iter()).filter(|r| r.generated() && keep(r)) {
        roots.insert((package_of(&resource.group_version), resource.kind.clone()));
    }
    if subresources {
        // The scale subresource's body, and the kinds other subresources' creates take.
        roots.insert(("autoscaling/v1".into(), "Scale".into()));
        for create in (resources.subresource_shapes.values()).filter_map(|s| s.create.as_deref()) {
            if let Some((group_version, kind)) = create.rsplit_once('/') {
                roots.insert((package_of(group_version), kind.to_owned()));
            }
        }
    }
    roots.into_iter().collect()
}

/// What the facts keep types from: the [`roots`], and the types conversions use.
pub(crate) fn extracted(resources: &Resources) -> Vec<(String, String)> {
    let mut types = roots(resources);
    types.extend(conversion_types(resources));
    types
}

/// What one facts file keeps types from: at the release's tag (`None`) the kinds of the
/// resources naming no later tag, the kinds subresources take and the types conversions
/// use; at a later tag the kinds of the resources naming it.
pub(crate) fn extracted_at(resources: &Resources, later: Option<&str>) -> Vec<(String, String)> {
    let mut types = roots_where(resources, |r| r.tag.as_deref() == later, later.is_none());
    if later.is_none() {
        types.extend(conversion_types(resources));
    }
    types
}

fn conversion_types(resources: &Resources) -> impl Iterator<Item = (String, String)> + '_ {
    (resources.conversion_types.iter())
        .filter_map(|qualified| qualified.rsplit_once('.'))
        .map(|(package, name)| (package.to_string(), name.to_string()))
}

/// The later tags the resources of `module`'s kinds name, each once, in order; a resource
/// naming the `release`'s own tag is refused (it names none).
pub fn later_tags(module: &Module, resources: &Resources, release: &str) -> Result<Vec<String>> {
    let tags: BTreeSet<&str> = (resources.resources.iter())
        .filter(|r| r.generated() && module.holds(&package_of(&r.group_version)))
        .filter_map(|r| r.tag.as_deref())
        .collect();
    if tags.contains(release) {
        bail!("a resource names the release's tag {release}: the release's kinds name none");
    }
    Ok(tags.into_iter().map(str::to_owned).collect())
}

/// `apps/v1` → `apps/v1`; `v1` → `core/v1`; `networking.k8s.io/v1` → `networking/v1`;
/// `flowcontrol.apiserver.k8s.io/v1` → `flowcontrol/v1`.
pub fn package_of(group_version: &str) -> String {
    match group_version.split_once('/') {
        None => format!("core/{group_version}"),
        Some((group, version)) => {
            let short = group.split('.').next().unwrap_or(group);
            format!("{short}/{version}")
        }
    }
}

pub(crate) fn is_foreign(package: &str) -> bool {
    FOREIGN.iter().any(|(_, name)| *name == package)
}

fn git(git_dir: &Path, args: &[&str]) -> Result<String> {
    Ok(String::from_utf8(git_bytes(git_dir, args)?)?)
}

/// What `git --git-dir <git_dir> <args>` prints.
pub fn git_bytes(git_dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let output = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(args)
        .output()
        .context("running git")?;
    if !output.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(output.stdout)
}

fn read_package(module: &Module, package: &str, types_go: &str, proto_text: &str) -> Result<Read> {
    let file = go::parse(types_go)?;
    let (proto_package, messages) = proto::parse(proto_text)?;
    let names = Names {
        package,
        imports: (file.imports.iter())
            .map(|(alias, path)| (alias.as_str(), canonical_package(module, path)))
            .collect(),
        aliases: (file.types.iter())
            .filter_map(|decl| match &decl.body {
                TypeBody::Alias(aliased) => Some((decl.name.as_str(), aliased)),
                _ => None,
            })
            .collect(),
    };
    let mut types = BTreeMap::new();
    for decl in &file.types {
        let markers = kept(&decl.markers);
        let ty = match &decl.body {
            // Another name for a type: every use of it is written as the aliased type.
            TypeBody::Alias(_) => continue,
            TypeBody::Struct(fields) => {
                let mut out = Vec::new();
                for field in fields {
                    let json = field.tags.get("json").map(String::as_str).unwrap_or("");
                    let mut parts = json.split(',');
                    let name = parts.next().unwrap_or("");
                    let options: Vec<&str> = parts.collect();
                    if name == "-" {
                        continue;
                    }
                    let ty = names.type_string(&field.ty)?;
                    if ty == "meta/v1.TypeMeta" {
                        continue;
                    }
                    let inline = options.contains(&"inline") || (name.is_empty() && field.embedded);
                    if name.is_empty() && !inline {
                        bail!("{}.{}: no JSON name", decl.name, field.name);
                    }
                    out.push(Field {
                        go: field.name.clone(),
                        json: (!inline).then(|| name.to_string()),
                        ty,
                        omitempty: options.contains(&"omitempty"),
                        proto: proto_number(field.tags.get("protobuf"))?,
                        patch_strategy: field.tags.get("patchStrategy").cloned(),
                        patch_merge_key: field.tags.get("patchMergeKey").cloned(),
                        markers: resolved(kept(&field.markers), &file.consts),
                    });
                }
                Type {
                    markers,
                    fields: Some(out),
                    underlying: None,
                    values: Vec::new(),
                }
            }
            TypeBody::Named(underlying) => Type {
                markers,
                fields: None,
                underlying: Some(names.type_string(underlying)?),
                values: file
                    .consts
                    .iter()
                    .filter(|c| c.ty == decl.name)
                    .map(|c| c.value.clone())
                    .collect(),
            },
        };
        types.insert(decl.name.clone(), ty);
    }
    Ok(Read {
        import_path: module.import_path(package),
        proto_package,
        types,
        messages: messages.into_iter().map(|m| (m.name.clone(), m)).collect(),
    })
}

fn kept(markers: &go::Markers) -> BTreeMap<String, Vec<String>> {
    markers
        .iter()
        .filter(|(key, _)| KEPT_MARKERS.contains(&key.as_str()))
        .map(|(key, values)| (key.clone(), values.clone()))
        .collect()
}

/// A `+default=ref(Constant)` marker with the constant's value written as the literal
/// (`"ReadWrite"`), as kube's defaulter-gen resolves it; a constant of another package or
/// an untyped one is left as it is (the generator refuses it).
fn resolved(
    mut markers: BTreeMap<String, Vec<String>>,
    consts: &[go::ConstDecl],
) -> BTreeMap<String, Vec<String>> {
    for value in markers.get_mut("default").into_iter().flatten() {
        let constant = value.strip_prefix("ref(").and_then(|v| v.strip_suffix(')'));
        if let Some(found) = constant.and_then(|name| consts.iter().find(|c| c.name == name)) {
            *value = serde_json::to_string(&found.value).expect("a string");
        }
    }
    markers
}

/// `bytes,2,rep,name=volumes` → 2.
fn proto_number(tag: Option<&String>) -> Result<Option<u32>> {
    let Some(tag) = tag else {
        return Ok(None);
    };
    let number = tag
        .split(',')
        .nth(1)
        .context("protobuf tag without a number")?;
    Ok(Some(number.parse()?))
}

fn canonical_package(module: &Module, path: &str) -> String {
    if let Some((_, name)) = FOREIGN.iter().find(|(p, _)| *p == path) {
        return (*name).to_string();
    }
    let own = match module.apis_dir {
        "" => format!("{}/", module.import),
        dir => format!("{}/{dir}/", module.import),
    };
    (path.strip_prefix(&own))
        .or_else(|| path.strip_prefix("k8s.io/api/"))
        .map_or_else(|| path.to_string(), str::to_string)
}

/// How one package's `types.go` names types: its own package, its imports' aliases (to
/// canonical packages) and its type aliases (`type Rule = v1.Rule`).
struct Names<'a> {
    package: &'a str,
    imports: BTreeMap<&'a str, String>,
    aliases: BTreeMap<&'a str, &'a GoType>,
}

impl Names<'_> {
    /// A Go type as the facts write it, an alias written as the type it names.
    fn type_string(&self, ty: &GoType) -> Result<String> {
        self.written(ty, 0)
    }

    fn written(&self, ty: &GoType, depth: usize) -> Result<String> {
        Ok(match ty {
            GoType::Name(alias, name) if alias.is_empty() => {
                if PREDECLARED.contains(&name.as_str()) {
                    name.clone()
                } else if let Some(aliased) = self.aliases.get(name.as_str()) {
                    // Go refuses alias cycles; a bound keeps a bad file from looping here.
                    if depth > 8 {
                        bail!("type alias `{name}` does not resolve");
                    }
                    self.written(aliased, depth + 1)?
                } else {
                    format!("{}.{name}", self.package)
                }
            }
            GoType::Name(alias, name) => match self.imports.get(alias.as_str()) {
                Some(path) => format!("{path}.{name}"),
                None => bail!("unknown package `{alias}`"),
            },
            GoType::Pointer(inner) => format!("*{}", self.written(inner, depth)?),
            GoType::Slice(inner) => format!("[]{}", self.written(inner, depth)?),
            GoType::Map(key, value) => format!(
                "map[{}]{}",
                self.written(key, depth)?,
                self.written(value, depth)?
            ),
        })
    }
}

/// The named types (`package.Name`) a type's declaration mentions.
pub(crate) fn referenced(ty: &Type) -> Vec<String> {
    let mut names = Vec::new();
    let mut add = |text: &str| {
        for part in text.split(['*', '[', ']']) {
            let part = part.trim_start_matches("map");
            if part.contains('.') {
                names.push(part.to_string());
            }
        }
    };
    if let Some(fields) = &ty.fields {
        for field in fields {
            add(&field.ty);
        }
    }
    if let Some(underlying) = &ty.underlying {
        add(underlying);
    }
    names
}

/// Keeps the types the roots reach, but those kapi declares itself (`render::PROVIDED`)
/// and what only they reach. With the `release`'s facts (a later tag's reading), a type of
/// a package they hold is not kept but checked: it must be there, as read at this tag.
fn reduce(
    module: &Module,
    read: &BTreeMap<String, Read>,
    roots: &[(String, String)],
    release: Option<&Api>,
    api: &mut Api,
) -> Result<()> {
    let mut pending: Vec<(String, String)> = roots.to_vec();
    let mut checked: BTreeSet<(String, String)> = BTreeSet::new();
    while let Some((package, name)) = pending.pop() {
        let qualified = format!("{package}.{name}");
        if crate::render::PROVIDED
            .iter()
            .any(|(go, _)| *go == qualified)
        {
            continue;
        }
        let Some(package_read) = read.get(&package) else {
            bail!("package {package} was not read");
        };
        let Some(ty) = package_read.types.get(&name) else {
            bail!("{package} has no type {name}");
        };
        if let Some(held) = release.and_then(|r| r.packages.get(&package)) {
            if !checked.insert((package.clone(), name.clone())) {
                continue;
            }
            match held.types.get(&name) {
                Some(kept) if kept == ty => {}
                Some(_) => bail!(
                    "{qualified} differs from the release's facts at {}: a package's facts \
                     come from one tag",
                    api.source.tag
                ),
                None => bail!(
                    "{qualified}, reached at {}, is not in the release's facts: a package's \
                     facts come from one tag",
                    api.source.tag
                ),
            }
        } else {
            let entry = api
                .packages
                .entry(package.clone())
                .or_insert_with(|| Package {
                    import_path: package_read.import_path.clone(),
                    proto_package: package_read.proto_package.clone(),
                    types: BTreeMap::new(),
                    origin: None,
                });
            if entry.types.insert(name.clone(), ty.clone()).is_some() {
                continue;
            }
        }
        for reference in referenced(ty) {
            let (other, other_name) = reference.rsplit_once('.').expect("qualified");
            if !is_foreign(other) && module.holds(other) {
                pending.push((other.to_string(), other_name.to_string()));
            }
        }
    }
    Ok(())
}

/// Where `generated.proto` says otherwise than `types.go`'s tags.
fn compare(
    package: &str,
    kept: &Package,
    messages: &BTreeMap<String, proto::Message>,
    out: &mut Vec<String>,
) {
    for (name, ty) in &kept.types {
        let Some(fields) = &ty.fields else {
            continue;
        };
        let Some(message) = messages.get(name) else {
            out.push(format!("{package}.{name}: no message in generated.proto"));
            continue;
        };
        for field in fields {
            let Some(number) = field.proto else {
                out.push(format!("{package}.{name}.{}: no protobuf tag", field.go));
                continue;
            };
            match message.fields.iter().find(|f| f.number == number) {
                None => out.push(format!(
                    "{package}.{name}.{}: field {number} is not in the message",
                    field.go
                )),
                Some(proto_field) => {
                    // An inlined field's message field has a name of its own
                    // (`ProbeHandler` is `handler`): only the number matters on the wire.
                    if let Some(json) = &field.json
                        && proto_field.name != *json
                    {
                        out.push(format!(
                            "{package}.{name}.{}: field {number} is `{}` in the message",
                            field.go, proto_field.name
                        ));
                    }
                    let repeated = field.ty.starts_with("[]") && field.ty != "[]byte";
                    if repeated != (proto_field.label == "repeated") {
                        out.push(format!(
                            "{package}.{name}.{}: `{}` in Go, `{} {}` in the message",
                            field.go, field.ty, proto_field.label, proto_field.ty
                        ));
                    }
                }
            }
        }
        for proto_field in &message.fields {
            if !fields.iter().any(|f| f.proto == Some(proto_field.number)) {
                out.push(format!(
                    "{package}.{name}: message field {} `{}` has no Go field",
                    proto_field.number, proto_field.name
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1BETA1: &str = r#"package v1beta1

import (
	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type Rule = v1.Rule

type RuleWithOperations = v1.RuleWithOperations

type NamedRuleWithOperations struct {
	ResourceNames []string `json:"resourceNames,omitempty" protobuf:"bytes,1,rep,name=resourceNames"`
	RuleWithOperations `json:",inline" protobuf:"bytes,2,opt,name=ruleWithOperations"`
}

type Policy struct {
	metav1.TypeMeta `json:",inline"`
	Rules []NamedRuleWithOperations `json:"rules,omitempty" protobuf:"bytes,1,rep,name=rules"`
	Reinvocation *ReinvocationPolicyType `json:"reinvocation,omitempty" protobuf:"bytes,2,opt,name=reinvocation"`
}

type ReinvocationPolicyType = v1.ReinvocationPolicyType
"#;

    const PROTO: &str = "syntax = \"proto2\";\npackage k8s.io.api.admissionregistration.v1beta1;\n";

    #[test]
    fn aliases_are_written_as_the_types_they_name() {
        let read = read_package(&API, "admissionregistration/v1beta1", V1BETA1, PROTO).unwrap();
        assert_eq!(
            read.types.keys().collect::<Vec<_>>(),
            ["NamedRuleWithOperations", "Policy"]
        );
        let fields = read.types["NamedRuleWithOperations"]
            .fields
            .as_ref()
            .unwrap();
        assert_eq!(fields[1].ty, "admissionregistration/v1.RuleWithOperations");
        assert_eq!(fields[1].json, None);
        let fields = read.types["Policy"].fields.as_ref().unwrap();
        assert_eq!(
            fields[1].ty,
            "*admissionregistration/v1.ReinvocationPolicyType"
        );
    }

    fn named(underlying: &str) -> Type {
        Type {
            markers: BTreeMap::new(),
            fields: None,
            underlying: Some(underlying.into()),
            values: vec!["Never".into()],
        }
    }

    fn source(tag: &str) -> Source {
        Source {
            repository: API.repository.into(),
            tag: tag.into(),
            commit: String::new(),
        }
    }

    /// `v1beta1`'s `Policy` reduced at a later tag, `v1`'s types read there as `v1`, against
    /// release facts holding `v1`'s `held`.
    fn later(v1: &[(&str, Type)], held: &[(&str, Type)]) -> Result<Api> {
        let beta = read_package(&API, "admissionregistration/v1beta1", V1BETA1, PROTO)?;
        let types = |types: &[(&str, Type)]| -> BTreeMap<String, Type> {
            (types.iter())
                .map(|(name, ty)| (name.to_string(), ty.clone()))
                .collect()
        };
        let v1_read = Read {
            import_path: None,
            proto_package: "k8s.io.api.admissionregistration.v1".into(),
            types: types(v1),
            messages: BTreeMap::new(),
        };
        let read = BTreeMap::from([
            ("admissionregistration/v1beta1".to_string(), beta),
            ("admissionregistration/v1".to_string(), v1_read),
        ]);
        let release = Api {
            source: source("v0.32.1"),
            disagreements: Vec::new(),
            packages: BTreeMap::from([(
                "admissionregistration/v1".to_string(),
                Package {
                    import_path: None,
                    proto_package: "k8s.io.api.admissionregistration.v1".into(),
                    types: types(held),
                    origin: None,
                },
            )]),
        };
        let mut api = Api {
            source: source("v0.34.1"),
            disagreements: Vec::new(),
            packages: BTreeMap::new(),
        };
        let roots = [("admissionregistration/v1beta1".into(), "Policy".into())];
        reduce(&API, &read, &roots, Some(&release), &mut api)?;
        Ok(api)
    }

    #[test]
    fn a_later_tag_keeps_its_own_packages_and_takes_the_releases() {
        let v1 = [
            ("RuleWithOperations", named("string")),
            ("ReinvocationPolicyType", named("string")),
        ];
        let api = later(&v1, &v1).unwrap();
        assert_eq!(
            api.packages.keys().collect::<Vec<_>>(),
            ["admissionregistration/v1beta1"]
        );
        assert_eq!(
            (api.packages["admissionregistration/v1beta1"].types.keys()).collect::<Vec<_>>(),
            ["NamedRuleWithOperations", "Policy"]
        );
    }

    #[test]
    fn a_type_that_changed_since_the_release_is_refused() {
        let v1 = [
            ("RuleWithOperations", named("string")),
            ("ReinvocationPolicyType", named("string")),
        ];
        let changed = [
            ("RuleWithOperations", named("string")),
            ("ReinvocationPolicyType", named("int32")),
        ];
        let error = later(&v1, &changed).unwrap_err().to_string();
        assert_eq!(
            error,
            "admissionregistration/v1.ReinvocationPolicyType differs from the release's facts \
             at v0.34.1: a package's facts come from one tag"
        );
        let error = later(&v1, &v1[..1]).unwrap_err().to_string();
        assert_eq!(
            error,
            "admissionregistration/v1.ReinvocationPolicyType, reached at v0.34.1, is not in the \
             release's facts: a package's facts come from one tag"
        );
    }
}
