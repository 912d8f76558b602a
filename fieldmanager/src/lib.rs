//! Field management: who owns which field of an object, and server-side apply
//! (k8s.io/apiserver's field manager over sigs.k8s.io/structured-merge-diff).
//!
//! Kept apart as kube keeps them, from the pure algebra up to policy:
//!
//! - [`path`] and [`set`]: field paths and sets of them (union, intersection, difference),
//!   with their `fieldsV1` encoding;
//! - [`typed`]: values read through their OpenAPI v3 schema: the fields a value sets,
//!   what changed between two values, an applied configuration merged over a live object,
//!   fields removed;
//! - [`updater`]: ownership after an update or an apply, conflicts, pruning of what an
//!   applier stopped applying;
//! - [`entries`]: `metadata.managedFields` read, validated, sorted and written;
//! - [`manager`]: [`FieldManager`], one write's field management for the registry, with
//!   versions reached through the kind's hub.
//!
//! The schema extensions the derives already publish (`x-kubernetes-list-type`,
//! `x-kubernetes-list-map-keys`, `x-kubernetes-map-type`) say how everything merges, so a
//! kind's merge semantics are declared once, with its types.

pub mod entries;
pub mod manager;
pub mod path;
pub mod set;
pub mod typed;
pub mod updater;

#[cfg(test)]
mod conformance;

pub use manager::FieldManager;
pub use path::{Path, PathElement};
pub use set::Set;
pub use updater::{Conflicts, ManagerId, Managers, Operation, Updater, VersionedSet, Versions};
