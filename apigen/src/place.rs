//! Which crate declares each kind and type: kapi-kinds the kinds every server has or one
//! of its features serves (Namespaces, ConfigMaps, Events, Leases, RBAC and the reviews,
//! the admission webhook configurations), kapi-builtin the rest of kube's built-in API.
//! A type is declared where the kinds that reach it are; one that kinds of both crates
//! reach could be declared in neither (kapi-builtin is optional, kapi-kinds must not
//! depend on it), so the generator refuses it.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};

use crate::extract::{extracted, is_foreign, package_of, referenced};
use crate::facts::{Api, Resource, Resources};

/// A crate the generator writes declarations into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Crate {
    /// `kapi-kinds`.
    Kinds,
    /// `kapi-builtin`.
    Builtin,
}

impl Crate {
    /// The directory its generated module is, relative to the workspace root.
    pub fn dir(self) -> &'static str {
        match self {
            Crate::Kinds => "kinds/src/api",
            Crate::Builtin => "builtin/src/api",
        }
    }

    /// Its name in Rust paths.
    pub fn name(self) -> &'static str {
        match self {
            Crate::Kinds => "kapi_kinds",
            Crate::Builtin => "kapi_builtin",
        }
    }
}

/// kapi-kinds' feature sets, with the cargo feature that compiles each (`None`: always).
pub const KINDS_SETS: &[(&str, Option<&str>)] = &[
    ("core", None),
    ("rbac", Some("rbac")),
    ("admission-webhooks", Some("admission-webhooks")),
    ("crds", Some("crds")),
    ("aggregation", Some("aggregation")),
];

/// The crate declaring a resource's kind.
pub fn crate_of(resource: &Resource) -> Crate {
    match KINDS_SETS.iter().any(|(set, _)| *set == resource.set) {
        true => Crate::Kinds,
        false => Crate::Builtin,
    }
}

/// The cargo feature of kapi-kinds a set needs, if any.
pub fn feature_of(set: &str) -> Option<&'static str> {
    KINDS_SETS
        .iter()
        .find(|(name, _)| *name == set)
        .and_then(|(_, feature)| *feature)
}

/// Each type of the facts (`core/v1`, `Pod`) with the crate declaring it.
pub type Placement = BTreeMap<(String, String), Crate>;

/// Places every type of the facts: kapi-kinds' kinds and what they reach there, everything
/// else (kapi-builtin's kinds, the kinds subresources take, conversions' types) in
/// kapi-builtin.
pub fn place(api: &Api, resources: &Resources) -> Result<Placement> {
    let kinds_roots: BTreeSet<(String, String)> = (resources.resources.iter())
        .filter(|r| r.generated() && crate_of(r) == Crate::Kinds)
        .map(|r| (package_of(&r.group_version), r.kind.clone()))
        .collect();
    let builtin_roots: Vec<(String, String)> = extracted(resources)
        .into_iter()
        .filter(|root| !kinds_roots.contains(root))
        .collect();
    let in_kinds = reach(api, kinds_roots.iter().cloned());
    let in_builtin = reach(api, builtin_roots);
    let shared: Vec<String> = (in_kinds.intersection(&in_builtin))
        .filter(|(package, name)| declared(api, package, name))
        .map(|(package, name)| format!("{package}.{name}"))
        .collect();
    if !shared.is_empty() {
        bail!(
            "types reached by kinds of both kapi-kinds and kapi-builtin, which neither can \
             declare for the other: {}",
            shared.join(", ")
        );
    }
    let mut placement = Placement::new();
    for (package, facts) in &api.packages {
        for name in facts.types.keys() {
            let key = (package.clone(), name.clone());
            let home = match in_kinds.contains(&key) {
                true => Crate::Kinds,
                false => Crate::Builtin,
            };
            placement.insert(key, home);
        }
    }
    Ok(placement)
}

/// Whether the generator declares a type: a struct, or a list wrapped in a message of its
/// own (named scalars are their Rust types, kapi-core declares what both crates' kinds
/// use, `core/v1.ObjectReference`).
fn declared(api: &Api, package: &str, name: &str) -> bool {
    let qualified = format!("{package}.{name}");
    let Some(ty) = api.packages.get(package).and_then(|p| p.types.get(name)) else {
        return false;
    };
    (ty.fields.is_some() || ty.markers.contains_key("protobuf.nullable"))
        && !crate::render::PROVIDED
            .iter()
            .any(|(go, _)| *go == qualified)
}

/// The types of the facts `roots` reach (themselves included).
fn reach(
    api: &Api,
    roots: impl IntoIterator<Item = (String, String)>,
) -> BTreeSet<(String, String)> {
    let mut seen = BTreeSet::new();
    let mut pending: Vec<(String, String)> = roots.into_iter().collect();
    while let Some(key) = pending.pop() {
        let Some(ty) = api.packages.get(&key.0).and_then(|p| p.types.get(&key.1)) else {
            continue;
        };
        if !seen.insert(key) {
            continue;
        }
        for reference in referenced(ty) {
            if let Some((package, name)) = reference.rsplit_once('.')
                && !is_foreign(package)
            {
                pending.push((package.to_string(), name.to_string()));
            }
        }
    }
    seen
}
