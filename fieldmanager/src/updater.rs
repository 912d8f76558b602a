//! Who owns what after a write (structured-merge-diff's `merge.Updater`): the policy of
//! server-side apply over the algebra of [`Set`] and the typed operations.
//!
//! - An **update** (create, update, patch) makes its manager own what it added or changed;
//!   every other manager loses those fields, and everyone loses what was removed. Never a
//!   conflict.
//! - An **apply** merges the configuration into the live object, makes its manager own
//!   exactly the configuration's fields, removes what the manager applied last time and no
//!   longer applies (unless another manager owns it), and fails with [`Conflicts`] when it
//!   would change a field another manager owns, unless forced; a forced apply takes them.
//!
//! Each manager's set is in its own API version; objects are converted to it (through
//! [`Versions`]) to compare there, so ownership follows a field across versions.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use super::path::Path;
use super::set::Set;
use super::typed::{self, Comparison, Scope, TypeRef, TypedError};

/// Who a manager is: its name, operation and, for updates, API version and subresource.
/// Apply entries are one per name and subresource, whatever the version (kube's
/// `BuildManagerIdentifier`); update entries one per version too.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ManagerId {
    /// `fieldManager`.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: Operation,
    /// The version of an `Update` entry; `None` for `Apply`.
    pub api_version: Option<String>,
    /// `status`, `scale`, or empty for the object itself.
    pub subresource: String,
}

/// How a manager wrote its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Any other write.
    Update,
}

impl Operation {
    /// The operation's name in `managedFields`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// What a manager owns, in its version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionedSet {
    /// The owned fields.
    pub set: Set,
    /// The API version the paths are in (`apps.example.dev/v1`).
    pub api_version: String,
}

/// Every manager's fields.
pub type Managers = BTreeMap<ManagerId, VersionedSet>;

/// The versions of one kind: objects converted between them, and each one's schema.
pub trait Versions {
    /// `object` (in `from`) in `to`; `None` when `to` is not served (any more): its
    /// managers are dropped, as kube drops entries of versions it no longer has.
    fn convert(&self, object: &Value, from: &str, to: &str) -> Option<Value>;

    /// The schema of version `version`; `None` when it is not served.
    fn type_of(&self, version: &str) -> Option<TypeRef<'_>>;
}

/// Fields an apply would change that others own: each manager and path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflicts(pub Vec<(ManagerId, Path)>);

/// Why a write's ownership could not be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The apply conflicts with other managers.
    #[error("conflicts")]
    Conflicts(Conflicts),
    /// A value does not fit its schema (a malformed configuration).
    #[error(transparent)]
    Typed(#[from] TypedError),
}

/// Computes ownership for the writes of one kind.
pub struct Updater<'a> {
    /// The kind's versions.
    pub versions: &'a dyn Versions,
    /// The paths this request may own (kube's reset fields: not `status` through the
    /// object; only `status` through `/status`).
    pub scope: Scope,
    /// Paths the writer never owns, though what is below them may be owned (kube's
    /// `stripMeta`: `apiVersion`, `kind`, `metadata` and its server-set fields), taken
    /// from its set after the write, as kube does.
    pub stripped: &'a Set,
}

impl Updater<'_> {
    fn type_of(&self, version: &str) -> Result<TypeRef<'_>, TypedError> {
        (self.versions.type_of(version))
            .ok_or_else(|| TypedError(format!("no schema for version {version}")))
    }

    /// The common part of update and apply: compares `old` and `new` (in `version`) in
    /// every other manager's version; without `force`, fields of others that changed are
    /// conflicts; otherwise others lose them, and everyone loses what was removed.
    fn update_others(
        &self,
        old: &Value,
        new: &Value,
        version: &str,
        managers: &mut Managers,
        current: &ManagerId,
        force: bool,
    ) -> Result<Comparison, Failure> {
        let own = typed::compare(old, new, self.type_of(version)?)?.within(&self.scope);
        // The comparison in every other version a manager's set is in.
        let mut by_version: BTreeMap<String, Comparison> = BTreeMap::new();
        let mut conflicts = Vec::new();
        let mut lost: Vec<(ManagerId, Set)> = Vec::new();
        let mut dropped = Vec::new();
        for (id, owned) in managers.iter() {
            if id == current {
                continue;
            }
            if owned.api_version != version && !by_version.contains_key(&owned.api_version) {
                let converted = (self.versions.convert(old, version, &owned.api_version))
                    .zip(self.versions.convert(new, version, &owned.api_version))
                    .zip(self.versions.type_of(&owned.api_version));
                let Some(((old, new), tr)) = converted else {
                    dropped.push(id.clone());
                    continue;
                };
                let comparison = typed::compare(&old, &new, tr)?.within(&self.scope);
                by_version.insert(owned.api_version.clone(), comparison);
            }
            let comparison = match owned.api_version == version {
                true => &own,
                false => &by_version[&owned.api_version],
            };
            let changed = comparison.modified.union(&comparison.added);
            let conflicting = owned.set.intersection(&changed);
            if !conflicting.is_empty() {
                conflicts.extend(conflicting.paths().into_iter().map(|p| (id.clone(), p)));
            }
            lost.push((id.clone(), conflicting.union(&comparison.removed)));
        }
        if !force && !conflicts.is_empty() {
            return Err(Failure::Conflicts(Conflicts(conflicts)));
        }
        for id in dropped {
            managers.remove(&id);
        }
        for (id, lost) in lost {
            if let Some(owned) = managers.get_mut(&id) {
                owned.set = owned.set.difference(&lost);
            }
        }
        managers.retain(|_, owned| !owned.set.is_empty());
        Ok(own)
    }

    /// A write other than apply by `manager` from `old` to `new` (both in `version`):
    /// `manager` owns what it added or changed, others lose it, everyone loses what was
    /// removed. Returns whether `manager` gained or changed anything (its time moves).
    pub fn update(
        &self,
        old: &Value,
        new: &Value,
        version: &str,
        managers: &mut Managers,
        manager: &ManagerId,
    ) -> Result<bool, Failure> {
        let Comparison {
            modified,
            added,
            removed,
        } = self.update_others(old, new, version, managers, manager, true)?;
        let changed = added.into_union(modified);
        let gained = !changed.is_empty();
        let set = match managers.remove(manager) {
            Some(previous) => previous.set.into_difference(&removed),
            None => Set::new(),
        };
        let set = (self.scope)
            .filter_owned(set.into_union(changed))
            .into_difference(self.stripped);
        if !set.is_empty() {
            managers.insert(
                manager.clone(),
                VersionedSet {
                    set,
                    api_version: version.to_owned(),
                },
            );
        }
        Ok(gained)
    }

    /// Applies `config` (in `version`) over `live` for `manager`; returns the new object,
    /// `None` when it equals `live`.
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        version: &str,
        managers: &mut Managers,
        manager: &ManagerId,
        force: bool,
    ) -> Result<Option<Value>, Failure> {
        let tr = self.type_of(version)?;
        let merged = typed::merge(live, config, tr)?;
        // Stripped only once merged and pruned (kube's `stripMetaManager` wraps the merge):
        // pruning must see that the configuration still sets `metadata.name`.
        let set = self.scope.filter(&typed::field_set(config, tr));
        // On a copy: a conflicting apply changes nobody's fields.
        let mut work = managers.clone();
        let last = work.insert(
            manager.clone(),
            VersionedSet {
                set,
                api_version: version.to_owned(),
            },
        );
        let pruned = self.prune(&merged, version, &work, manager, last.as_ref())?;
        self.update_others(live, &pruned, version, &mut work, manager, force)?;
        if let Some(owned) = work.get_mut(manager) {
            owned.set = owned.set.difference(self.stripped);
            if owned.set.is_empty() {
                work.remove(manager);
            }
        }
        *managers = work;
        Ok((!typed::equal(live, &pruned)).then_some(pruned))
    }

    /// `merged` without what `manager` applied last time (`last`) and no longer applies,
    /// unless another manager owns it.
    fn prune(
        &self,
        merged: &Value,
        version: &str,
        managers: &Managers,
        manager: &ManagerId,
        last: Option<&VersionedSet>,
    ) -> Result<Value, TypedError> {
        let Some(last) = last.filter(|l| !l.set.is_empty()) else {
            return Ok(merged.clone());
        };
        let at = last.api_version.as_str();
        let (Some(merged_at), Some(tr)) = (
            self.in_version(merged, version, at),
            self.versions.type_of(at),
        ) else {
            return Ok(merged.clone());
        };
        // Each set is computed once: they are most of an apply's work.
        let merged_set = typed::with_named_fields(&typed::field_set(&merged_at, tr), tr);
        let last_set = typed::with_named_fields(&last.set, tr);
        let pruned = typed::remove(&merged_at, &last_set, tr);
        let pruned = self.add_back_owned(&merged_at, &merged_set, pruned, at, managers)?;
        // Only what the manager applied last time may go: put back anything else the
        // removal took with it.
        let pruned_set = typed::with_named_fields(&typed::field_set(&pruned, tr), tr);
        let gone = merged_set.difference(&pruned_set).intersection(&last_set);
        let pruned = typed::remove(&merged_at, &gone, tr);
        let current = &managers[manager].api_version;
        Ok(match at == current {
            true => pruned,
            false => (self.versions.convert(&pruned, at, current)).unwrap_or(pruned),
        })
    }

    /// `value` (in `from`) in `to`, borrowed when they are the same version.
    fn in_version<'v>(&self, value: &'v Value, from: &str, to: &str) -> Option<Cow<'v, Value>> {
        match from == to {
            true => Some(Cow::Borrowed(value)),
            false => self.versions.convert(value, from, to).map(Cow::Owned),
        }
    }

    /// `pruned` with every field some manager owns put back from `merged` (both in
    /// version `at`; `merged_set`: the fields `merged` sets, named), version by version.
    fn add_back_owned(
        &self,
        merged: &Value,
        merged_set: &Set,
        mut pruned: Value,
        at: &str,
        managers: &Managers,
    ) -> Result<Value, TypedError> {
        let mut owned_by_version: BTreeMap<&str, Set> = BTreeMap::new();
        for owned in managers.values() {
            let entry = owned_by_version.entry(&owned.api_version).or_default();
            *entry = entry.union(&owned.set);
        }
        // The pruned version first, then the others.
        let mut order: Vec<&str> = owned_by_version.keys().copied().collect();
        order.sort_by_key(|v| *v != at);
        let mut current = at;
        let mut merged = Cow::Borrowed(merged);
        for version in order {
            let owned = &owned_by_version[version];
            let Some(tr) = self.versions.type_of(version) else {
                continue;
            };
            if version != current {
                let (Some(m), Some(p)) = (
                    self.versions.convert(&merged, current, version),
                    self.versions.convert(&pruned, current, version),
                ) else {
                    continue;
                };
                (merged, pruned, current) = (Cow::Owned(m), p, version);
            }
            // `at` comes first, if at all: `merged` is then the caller's.
            let merged_set = match version == at {
                true => Cow::Borrowed(merged_set),
                false => Cow::Owned(typed::with_named_fields(&typed::field_set(&merged, tr), tr)),
            };
            let pruned_set = typed::with_named_fields(&typed::field_set(&pruned, tr), tr);
            let keep = pruned_set.union(&typed::with_named_fields(owned, tr));
            pruned = typed::remove(&merged, &merged_set.difference(&keep), tr);
        }
        Ok(match current == at {
            true => pruned,
            false => (self.versions.convert(&pruned, current, at)).unwrap_or(pruned),
        })
    }
}
