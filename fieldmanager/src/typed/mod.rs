//! Values read through a schema: what server-side apply computes on objects
//! (structured-merge-diff's `typed` package), on JSON values and the compiled OpenAPI v3
//! schemas the registry validates with.
//!
//! The schema says how each value merges: a struct (declared `properties`) and a map
//! (`additionalProperties`) are granular unless `x-kubernetes-map-type: atomic`; a list is
//! `atomic` unless `x-kubernetes-list-type` makes it a `set` (items by value) or a `map`
//! (items by `x-kubernetes-list-map-keys`); anything else is a scalar. A value the schema
//! does not describe is read as kube reads untyped data: objects granular, lists atomic.
//!
//! - [`field_set`]: the fields a value sets (an applied configuration's ownership);
//! - [`compare`]: what changed between two values (added, modified, removed);
//! - [`merge`]: an applied configuration over a live value (`merge.rs`);
//! - [`remove`]: a value without some of its fields (pruning);
//! - [`check`]: what typing refuses of a value merged without an apply.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::path::{PathElement, compare as compare_values};
use super::set::Set;
use kapi_schema::KindSchema;
use kapi_schema::ListType;

pub mod check;
mod merge;

pub use merge::merge;

/// A position in a schema: a node of a kind's compiled schema, or none (untyped).
#[derive(Clone, Copy, Debug)]
pub struct TypeRef<'a> {
    schema: Option<KindSchema<'a>>,
    node: Option<usize>,
}

/// How a strategic merge patch merges a list (kube's `patchStrategy` and `patchMergeKey`):
/// as the schema's `x-kubernetes-patch-*` extensions say, else as its list type implies
/// (the same, for the compiled kinds: codegen publishes the extensions from the list type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListMerge {
    /// The patch's list replaces the object's (atomic lists, multi-key list maps).
    Replace,
    /// Scalars merge by value (`x-kubernetes-list-type: set`).
    Values,
    /// Items merge by one key (`x-kubernetes-list-type: map` with one key).
    Key(String),
}

/// How a value merges, resolved from its schema node and its JSON type.
#[derive(Clone, Debug)]
enum Atom<'a> {
    Scalar,
    Map {
        atomic: bool,
        /// Declared properties (struct fields) and their nodes.
        fields: Fields<'a>,
        /// The node of other keys (`additionalProperties`).
        elem: Option<usize>,
    },
    List {
        kind: ListType,
        elem: Option<usize>,
    },
}

/// A struct's declared properties, looked up in the schema nodes of its type (a later
/// node's declaration of a name wins) rather than copied out of them: every value read
/// through a schema asks for its type's fields, and a copy of their names per value was a
/// tenth of a server-side apply's instructions.
#[derive(Clone, Debug, Default)]
struct Fields<'a>(kapi_schema::Flat<'a>);

impl Fields<'_> {
    /// The node of property `name`.
    fn get(&self, name: &str) -> Option<usize> {
        (self.0.iter().rev())
            .find_map(|node| node.properties.iter().find(|(n, _)| n == name))
            .map(|(_, id)| *id)
    }

    fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

impl<'a> TypeRef<'a> {
    /// The root of a kind's schema.
    pub fn root(schema: KindSchema<'a>) -> TypeRef<'a> {
        TypeRef {
            node: Some(schema.root()),
            schema: Some(schema),
        }
    }

    /// No schema: objects granular, lists atomic.
    pub fn untyped() -> TypeRef<'static> {
        TypeRef {
            schema: None,
            node: None,
        }
    }

    /// The type of field or key `name` of an object here.
    pub fn field_type(&self, name: &str) -> TypeRef<'a> {
        match self.atom(Some(&Value::Object(Map::new()))) {
            Atom::Map { fields, elem, .. } => self.field(&fields, elem, name),
            _ => self.at(None),
        }
    }

    /// The type of the items of a list here.
    pub fn item_type(&self) -> TypeRef<'a> {
        match self.atom(Some(&Value::Array(Vec::new()))) {
            Atom::List { elem, .. } => self.at(elem),
            _ => self.at(None),
        }
    }

    /// Whether an object here is replaced whole (`x-kubernetes-map-type: atomic`).
    pub fn is_atomic_map(&self) -> bool {
        matches!(
            self.atom(Some(&Value::Object(Map::new()))),
            Atom::Map { atomic: true, .. }
        )
    }

    /// The schema nodes of this type (none when untyped).
    fn nodes(&self) -> kapi_schema::Flat<'a> {
        match (self.schema, self.node) {
            (Some(schema), Some(node)) => schema.nodes(node),
            _ => Default::default(),
        }
    }

    /// `x-kubernetes-patch-strategy` here, when declared, and whether it names `strategy`
    /// (it may list several: `merge,retainKeys`).
    fn patch_strategy_is(&self, strategy: &str) -> Option<bool> {
        let nodes = self.nodes();
        let declared = nodes.iter().find_map(|n| n.patch_strategy.as_deref())?;
        Some(declared.split(',').any(|s| s.trim() == strategy))
    }

    /// Whether a strategic merge patch replaces the value here whole
    /// (`x-kubernetes-patch-strategy: replace`, kube's `patchStrategy:"replace"`).
    pub fn patch_replaces(&self) -> bool {
        self.patch_strategy_is("replace") == Some(true)
    }

    /// How a strategic merge patch merges a list here.
    pub fn list_merge(&self) -> ListMerge {
        // The patch extensions when the schema has them: kubectl computed the patch from
        // them (kube's server from the same Go tags). Lists declared with a merge key but
        // no list type (webhooks by `name`, `ownerReferences` by `uid`) merge by it.
        if let Some(merges) = self.patch_strategy_is("merge") {
            let nodes = self.nodes();
            let key = nodes.iter().find_map(|n| n.patch_merge_key.as_deref());
            return match (merges, key) {
                (true, Some(key)) => ListMerge::Key(key.to_owned()),
                (true, None) => ListMerge::Values,
                (false, _) => ListMerge::Replace,
            };
        }
        match self.atom(Some(&Value::Array(Vec::new()))) {
            Atom::List {
                kind: ListType::Set,
                ..
            } => ListMerge::Values,
            Atom::List {
                kind: ListType::Map(keys),
                ..
            } if keys.len() == 1 => ListMerge::Key(keys[0].clone()),
            _ => ListMerge::Replace,
        }
    }

    fn at(&self, node: Option<usize>) -> TypeRef<'a> {
        TypeRef {
            schema: self.schema,
            node,
        }
    }

    /// The atom of this type for `value` (the value's JSON type decides where the schema
    /// says nothing: structured-merge-diff's `deduceAtom`).
    fn atom(&self, value: Option<&Value>) -> Atom<'a> {
        let nodes = self.nodes();
        let ty = nodes.iter().find_map(|n| n.ty.as_deref());
        let int_or_string = nodes.iter().any(|n| n.int_or_string);
        let has_properties = nodes.iter().any(|n| !n.properties.is_empty());
        let items = nodes.iter().find_map(|n| n.items);
        let is_map = match ty {
            Some("object") => true,
            Some(_) => false,
            None if int_or_string => false,
            None if has_properties => true,
            None => matches!(value, Some(Value::Object(_))),
        };
        let is_list = match ty {
            Some("array") => true,
            Some(_) => false,
            None => items.is_some() || matches!(value, Some(Value::Array(_))),
        };
        if is_map {
            Atom::Map {
                atomic: nodes.iter().any(|n| n.atomic_map),
                elem: nodes.iter().find_map(|n| n.additional),
                fields: Fields(nodes),
            }
        } else if is_list {
            Atom::List {
                kind: (nodes.iter().map(|n| n.list_type.clone()))
                    .find(|t| *t != ListType::Atomic)
                    .unwrap_or_default(),
                elem: items,
            }
        } else {
            Atom::Scalar
        }
    }

    /// Whether the type keeps fields it does not declare
    /// (`x-kubernetes-preserve-unknown-fields`): they are untyped, not unknown.
    fn preserves_unknown(&self) -> bool {
        match (self.schema, self.node) {
            (Some(schema), Some(node)) => schema.nodes(node).iter().any(|n| n.preserve_unknown),
            _ => false,
        }
    }

    /// The type of field or key `name` of a map.
    fn field(&self, fields: &Fields<'_>, elem: Option<usize>, name: &str) -> Self {
        self.at(fields.get(name).or(elem))
    }

    /// The default of `field` of a list-map item, for keys an item leaves out.
    fn key_default(&self, elem: Option<usize>, field: &str) -> Option<Value> {
        let Atom::Map { fields, .. } = self.at(elem).atom(None) else {
            return None;
        };
        let node = fields.get(field)?;
        (self.schema?.nodes(node).iter()).find_map(|n| n.default.clone())
    }
}

/// A value that cannot be read as its schema says (a list-map item without an object, a
/// set item that is not a scalar, duplicates in an applied configuration).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TypedError(pub String);

/// The element naming `item` in a list of `kind` (`None` for atomic lists).
fn item_element(
    tr: &TypeRef<'_>,
    kind: &ListType,
    elem: Option<usize>,
    item: &Value,
) -> Result<PathElement, TypedError> {
    match kind {
        ListType::Atomic => Err(TypedError(
            "cannot get path element for non-associative list".into(),
        )),
        ListType::Set => match item {
            Value::Array(_) | Value::Object(_) => Err(TypedError(
                "associative list without keys has an element that's a map type".into(),
            )),
            scalar => Ok(PathElement::value(scalar.clone())),
        },
        ListType::Map(keys) => {
            let Value::Object(fields) = item else {
                return Err(TypedError(match item {
                    Value::Null => "associative list with keys may not have a null element".into(),
                    _ => "associative list with keys may not have non-map elements".into(),
                }));
            };
            let key = keys
                .iter()
                .filter_map(|k| {
                    let value = fields.get(k).cloned().or_else(|| tr.key_default(elem, k))?;
                    Some((k.clone(), value))
                })
                .collect();
            Ok(PathElement::key(key))
        }
    }
}

fn is_empty_or_null(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Array(items)) => items.is_empty(),
        Some(Value::Object(map)) => map.is_empty(),
        Some(_) => false,
    }
}

/// Semantic equality: numbers by value, objects regardless of key order.
pub fn equal(a: &Value, b: &Value) -> bool {
    compare_values(a, b) == std::cmp::Ordering::Equal
}

// ---------------------------------------------------------------------------------------
// Field sets.

/// The fields `value` sets: scalars, atomic lists and maps, list items (with their
/// fields), map entries, and empty or null values; not the structs on the way.
pub fn field_set(value: &Value, tr: TypeRef<'_>) -> Set {
    let mut set = Set::new();
    field_set_into(value, tr, &mut Vec::new(), &mut set);
    set
}

fn field_set_into(value: &Value, tr: TypeRef<'_>, path: &mut Vec<PathElement>, set: &mut Set) {
    match tr.atom(Some(value)) {
        Atom::Scalar => set.insert(path),
        Atom::List { kind, elem } => {
            if kind == ListType::Atomic {
                set.insert(path);
                return;
            }
            let Value::Array(items) = value else { return };
            let mut seen = BTreeSet::new();
            let mut duplicates = BTreeSet::new();
            for item in items {
                let Ok(element) = item_element(&tr, &kind, elem, item) else {
                    continue;
                };
                if !seen.insert(element.clone()) && duplicates.insert(element.clone()) {
                    path.push(element);
                    set.insert(path);
                    path.pop();
                }
            }
            for item in items {
                let Ok(element) = item_element(&tr, &kind, elem, item) else {
                    continue;
                };
                if duplicates.contains(&element) {
                    continue;
                }
                path.push(element);
                field_set_into(item, tr.at(elem), path, set);
                set.insert(path);
                path.pop();
            }
        }
        Atom::Map {
            atomic,
            fields,
            elem,
        } => {
            if atomic {
                set.insert(path);
                return;
            }
            let Value::Object(map) = value else { return };
            for (key, child) in map {
                path.push(PathElement::Field(key.clone()));
                field_set_into(child, tr.field(&fields, elem, key), path, set);
                let empty = matches!(child, Value::Null)
                    || matches!(child, Value::Object(m) if m.is_empty());
                if empty || !fields.contains_key(key) {
                    set.insert(path);
                }
                path.pop();
            }
        }
    }
}

/// `set` plus, for every path below a declared struct field, that field itself
/// (structured-merge-diff's `EnsureNamedFieldsAreMembers`): what pruning compares.
pub fn with_named_fields(set: &Set, tr: TypeRef<'_>) -> Set {
    let atom = tr.atom(None);
    let mut members = BTreeSet::new();
    let mut children = BTreeMap::new();
    for element in set.elements() {
        let (child, member) = set.node(element);
        if member {
            members.insert(element.clone());
        }
        let Some(child) = child else { continue };
        let child_type = match (&atom, element) {
            (Atom::Map { fields, elem, .. }, PathElement::Field(name)) => {
                if fields.contains_key(name) {
                    members.insert(element.clone());
                }
                tr.field(fields, *elem, name)
            }
            (Atom::List { elem, .. }, PathElement::Key(_)) => tr.at(*elem),
            _ => tr.at(None),
        };
        children.insert(element.clone(), with_named_fields(child, child_type));
    }
    Set::from_parts(members, children)
}

// ---------------------------------------------------------------------------------------
// Comparison.

/// What changed from one value to another, as sets of paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// In both, with another value (an atomic list or map is one leaf).
    pub modified: Set,
    /// Only in the new value: every node on the way too.
    pub added: Set,
    /// Only in the old value.
    pub removed: Set,
}

impl Comparison {
    /// The comparison with only what `scope` allows.
    pub fn within(self, scope: &Scope) -> Comparison {
        Comparison {
            modified: scope.filter_owned(self.modified),
            added: scope.filter_owned(self.added),
            removed: scope.filter_owned(self.removed),
        }
    }
}

/// The paths a write may own: kube's reset fields, as paths excluded (with what is below
/// them) or as the only paths included.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// Everything.
    #[default]
    All,
    /// Everything but these paths and what is below them (`status` through the object).
    Except(Set),
    /// Only these paths and what is below them (`status` through `/status`).
    Only(Set),
}

impl Scope {
    /// The paths of `set` within the scope.
    pub fn filter(&self, set: &Set) -> Set {
        match self {
            Scope::All => set.clone(),
            Scope::Except(excluded) => set.recursive_difference(excluded),
            // What is not outside is inside.
            Scope::Only(included) => set.difference(&set.recursive_difference(included)),
        }
    }

    /// [`filter`](Scope::filter) of a set the caller gives up: what is excluded is taken
    /// out of it rather than the rest copied.
    pub fn filter_owned(&self, set: Set) -> Set {
        match self {
            Scope::All => set,
            Scope::Except(excluded) => set.into_recursive_difference(excluded),
            Scope::Only(_) => self.filter(&set),
        }
    }
}

/// The changes from `old` to `new`. `metadata.managedFields` is never compared: nobody
/// owns it (kube compares copies without it; this spares the copies).
pub fn compare(old: &Value, new: &Value, tr: TypeRef<'_>) -> Result<Comparison, TypedError> {
    // The whole object is never a member (the empty path is never owned).
    compare_node(Some(old), Some(new), tr, Depth::Root).map(|(below, _)| below)
}

/// Where a node being compared is: `metadata.managedFields` is passed over only there.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    Root,
    Metadata,
    Below,
}

/// What happened to one node itself, apart from what is below it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    Same,
    Added,
    Removed,
    Modified,
}

impl Comparison {
    /// Puts a child's comparison (what changed below `element`, and `element` itself)
    /// under `element`. The sets are built from the leaves up, each element copied once per
    /// set it is in, rather than a whole path copied for each path inserted.
    fn attach(&mut self, element: PathElement, (below, change): (Comparison, Change)) {
        let Comparison {
            modified,
            added,
            removed,
        } = below;
        self.modified.insert_child(&element, modified);
        self.added.insert_child(&element, added);
        self.removed.insert_child(&element, removed);
        match change {
            Change::Same => {}
            Change::Added => self.added.insert_member(element),
            Change::Removed => self.removed.insert_member(element),
            Change::Modified => self.modified.insert_member(element),
        }
    }
}

/// The changes below one node, and to the node itself.
fn compare_node(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    tr: TypeRef<'_>,
    depth: Depth,
) -> Result<(Comparison, Change), TypedError> {
    let leaf = || {
        let change = match (lhs, rhs) {
            (None, _) => Change::Added,
            (_, None) => Change::Removed,
            (Some(l), Some(r)) if !equal(l, r) => Change::Modified,
            _ => Change::Same,
        };
        Ok((Comparison::default(), change))
    };
    let lists_or_maps = match (lhs, rhs) {
        (Some(l), Some(r)) => kind_matches(l, r),
        _ => true,
    };
    if !lists_or_maps {
        return leaf();
    }
    let mut below = Comparison::default();
    match tr.atom(rhs.or(lhs)) {
        Atom::Scalar => return leaf(),
        Atom::List { kind, elem } => {
            if kind == ListType::Atomic || (is_empty_or_null(lhs) && is_empty_or_null(rhs)) {
                return leaf();
            }
            let (l, r) = (as_array(lhs), as_array(rhs));
            compare_items(&tr, &kind, elem, l, r, &mut below)?;
        }
        Atom::Map {
            atomic,
            fields,
            elem,
        } => {
            if atomic || (is_empty_or_null(lhs) && is_empty_or_null(rhs)) {
                return leaf();
            }
            let (l, r) = (as_object(lhs), as_object(rhs));
            let child_depth = |key: &str| match depth {
                Depth::Root if key == "metadata" => Depth::Metadata,
                _ => Depth::Below,
            };
            let passed_over = |key: &str| depth == Depth::Metadata && key == "managedFields";
            // The keys of both, each once: the old value's, then those only the new has.
            let old_keys = l.iter().map(|(key, value)| (key, Some(value), r.get(key)));
            let new_keys = (r.iter())
                .filter(|(key, _)| !l.contains_key(*key))
                .map(|(key, value)| (key, None, Some(value)));
            for (key, old, new) in old_keys.chain(new_keys) {
                if passed_over(key) {
                    continue;
                }
                let ty = tr.field(&fields, elem, key);
                let child = compare_node(old, new, ty, child_depth(key))?;
                below.attach(PathElement::Field(key.clone()), child);
            }
        }
    }
    let change = match (lhs, rhs) {
        (None, _) => Change::Added,
        (_, None) => Change::Removed,
        _ => Change::Same,
    };
    Ok((below, change))
}

/// Whether two values can be walked together (both lists, both maps, or either scalar or
/// null); a list replaced by a map is one modified leaf.
fn kind_matches(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => true,
        (Value::Array(_), Value::Object(_)) | (Value::Object(_), Value::Array(_)) => false,
        (Value::Array(_) | Value::Object(_), Value::Null)
        | (Value::Null, Value::Array(_) | Value::Object(_)) => true,
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => false,
        _ => true,
    }
}

fn as_array(value: Option<&Value>) -> &[Value] {
    match value {
        Some(Value::Array(items)) => items,
        _ => &[],
    }
}

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

fn as_object(value: Option<&Value>) -> &Map<String, Value> {
    match value {
        Some(Value::Object(map)) => map,
        _ => &EMPTY,
    }
}

/// Items of a list, grouped by element in first-seen order.
fn index<'v>(
    tr: &TypeRef<'_>,
    kind: &ListType,
    elem: Option<usize>,
    items: &'v [Value],
) -> Result<Vec<(PathElement, Vec<&'v Value>)>, TypedError> {
    let mut out: Vec<(PathElement, Vec<&Value>)> = Vec::new();
    let mut at: BTreeMap<PathElement, usize> = BTreeMap::new();
    for item in items {
        let element = item_element(tr, kind, elem, item)?;
        match at.get(&element) {
            Some(&i) => out[i].1.push(item),
            None => {
                at.insert(element.clone(), out.len());
                out.push((element, vec![item]));
            }
        }
    }
    Ok(out)
}

fn compare_items(
    tr: &TypeRef<'_>,
    kind: &ListType,
    elem: Option<usize>,
    lhs: &[Value],
    rhs: &[Value],
    out: &mut Comparison,
) -> Result<(), TypedError> {
    let left = index(tr, kind, elem, lhs)?;
    let right = index(tr, kind, elem, rhs)?;
    let right_of: BTreeMap<&PathElement, &Vec<&Value>> =
        right.iter().map(|(e, v)| (e, v)).collect();
    let left_of: BTreeMap<&PathElement, &Vec<&Value>> = left.iter().map(|(e, v)| (e, v)).collect();
    let order = (left.iter().map(|(e, _)| e)).chain(
        right
            .iter()
            .map(|(e, _)| e)
            .filter(|e| !left_of.contains_key(e)),
    );
    let none: Vec<&Value> = Vec::new();
    for element in order {
        let l = left_of.get(element).copied().unwrap_or(&none);
        let r = right_of.get(element).copied().unwrap_or(&none);
        let item = tr.at(elem);
        match (l.len(), r.len()) {
            (0..=1, 0..=1) => {
                let child =
                    compare_node(l.first().copied(), r.first().copied(), item, Depth::Below)?;
                out.attach(element.clone(), child);
            }
            (2.., 2..) => {
                if l.len() != r.len() || l.iter().zip(r.iter()).any(|(a, b)| !equal(a, b)) {
                    out.modified.insert_member(element.clone());
                }
            }
            (2.., _) => {
                if let Some(r) = r.first() {
                    let child = compare_node(None, Some(r), item, Depth::Below)?;
                    out.attach(element.clone(), child);
                }
                out.removed.insert_member(element.clone());
            }
            (_, 2..) => {
                if let Some(l) = l.first() {
                    let child = compare_node(Some(l), None, item, Depth::Below)?;
                    out.attach(element.clone(), child);
                }
                out.added.insert_member(element.clone());
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Pruning.

/// `value` without what its schema does not declare: keys of a struct (an object with
/// `properties` and no `additionalProperties`) that are not its properties, at any depth.
/// What server-side apply merges and owns (kube types the configuration first; a field
/// no schema has cannot be owned).
pub fn prune_unknown(value: &Value, tr: TypeRef<'_>) -> Value {
    match (value, tr.atom(Some(value))) {
        (Value::Object(map), Atom::Map { fields, elem, .. }) => Value::Object(
            map.iter()
                .filter(|(key, _)| {
                    tr.node.is_none()
                        || fields.contains_key(key)
                        || elem.is_some()
                        || tr.preserves_unknown()
                })
                .map(|(key, child)| {
                    (
                        key.clone(),
                        prune_unknown(child, tr.field(&fields, elem, key)),
                    )
                })
                .collect(),
        ),
        (Value::Array(items), Atom::List { elem, .. }) => Value::Array(
            (items.iter())
                .map(|item| prune_unknown(item, tr.at(elem)))
                .collect(),
        ),
        _ => value.clone(),
    }
}

// ---------------------------------------------------------------------------------------
// Removal.

/// `value` without the paths of `set` (what is below a removed path goes with it). A map
/// or list left empty by the removal becomes `null`, as in kube.
pub fn remove(value: &Value, set: &Set, tr: TypeRef<'_>) -> Value {
    match tr.atom(Some(value)) {
        Atom::Scalar => value.clone(),
        Atom::List { kind, elem } => {
            let Value::Array(items) = value else {
                return Value::Null;
            };
            if items.is_empty() || kind == ListType::Atomic {
                return Value::Null;
            }
            let mut out = Vec::new();
            for item in items {
                let Ok(element) = item_element(&tr, &kind, elem, item) else {
                    out.push(item.clone());
                    continue;
                };
                if set.has(std::slice::from_ref(&element)) {
                    continue;
                }
                let below = set.with_prefix(&element);
                out.push(match below.is_empty() {
                    true => item.clone(),
                    false => remove(item, &below, tr.at(elem)),
                });
            }
            match out.is_empty() {
                true => Value::Null,
                false => Value::Array(out),
            }
        }
        Atom::Map {
            atomic,
            fields,
            elem,
        } => {
            let Value::Object(map) = value else {
                return Value::Null;
            };
            if map.is_empty() || atomic {
                return Value::Null;
            }
            let mut out = Map::new();
            for (key, child) in map {
                let element = PathElement::Field(key.clone());
                if set.has(std::slice::from_ref(&element)) {
                    continue;
                }
                let below = set.with_prefix(&element);
                let child = match below.is_empty() {
                    true => child.clone(),
                    false => remove(child, &below, tr.field(&fields, elem, key)),
                };
                out.insert(key.clone(), child);
            }
            match out.is_empty() {
                true => Value::Null,
                false => Value::Object(out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn field(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    /// Nobody owns `managedFields`: a comparison never reports them, whatever they hold,
    /// and reports the rest of the metadata as usual.
    #[test]
    fn comparisons_pass_over_managed_fields() {
        let old = json!({"metadata": {"name": "a", "managedFields": [{"manager": "x"}]}});
        let new = json!({"metadata": {"name": "a", "managedFields": [{"manager": "y"}],
                                      "labels": {"app": "b"}}});
        let comparison = compare(&old, &new, TypeRef::untyped()).unwrap();
        assert!(comparison.modified.is_empty() && comparison.removed.is_empty());
        let mut added = Set::new();
        added.insert(&[field("metadata"), field("labels")]);
        added.insert(&[field("metadata"), field("labels"), field("app")]);
        assert_eq!(comparison.added, added);
        let gone = json!({"metadata": {"name": "a"}});
        let comparison = compare(&old, &gone, TypeRef::untyped()).unwrap();
        assert_eq!(comparison, Comparison::default());
        // Only at `metadata`: a field of that name elsewhere is compared.
        let spec = |v: u8| json!({"spec": {"managedFields": v}});
        let comparison = compare(&spec(1), &spec(2), TypeRef::untyped()).unwrap();
        assert!(
            comparison
                .modified
                .has(&[field("spec"), field("managedFields")])
        );
    }
}
