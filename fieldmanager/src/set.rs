//! [`Set`]: a set of field paths, stored as a trie, with the algebra server-side apply
//! computes ownership with (structured-merge-diff's `fieldpath.Set`), and its `FieldsV1`
//! encoding, the `fieldsV1` of a `managedFields` entry.
//!
//! A path is in the set when its last element is a member of the node its prefix reaches;
//! a node's own membership and its children are independent, as in kube: a manager may own
//! a list item (`.`) and some of its fields, or only fields below it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::path::{Path, PathElement};

/// A set of field paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<PathElement>,
    /// Never holds an empty set.
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    /// The empty set.
    pub fn new() -> Set {
        Set::default()
    }

    /// Adds `path` (not its parents). The empty path (the whole object) is never owned.
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Adds the path of one element, `element`.
    pub fn insert_member(&mut self, element: PathElement) {
        self.members.insert(element);
    }

    /// Adds the paths of `child` below `element` (nothing when it is empty).
    pub fn insert_child(&mut self, element: &PathElement, child: Set) {
        if child.is_empty() {
            return;
        }
        match self.children.get_mut(element) {
            Some(mine) => *mine = std::mem::take(mine).into_union(child),
            None => {
                self.children.insert(element.clone(), child);
            }
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether no path is a member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// The paths below `element`, without it.
    pub fn with_prefix(&self, element: &PathElement) -> Set {
        self.children.get(element).cloned().unwrap_or_default()
    }

    /// Elements that are members or have members below them, in order.
    pub(crate) fn elements(&self) -> impl Iterator<Item = &PathElement> {
        let mut all: Vec<&PathElement> = self.members.iter().chain(self.children.keys()).collect();
        all.sort();
        all.dedup();
        all.into_iter()
    }

    /// [`elements`](Set::elements) with what [`node`](Set::node) tells of each, found by
    /// walking the members and the children (both in order) side by side.
    fn nodes(&self) -> impl Iterator<Item = (&PathElement, Option<&Set>, bool)> {
        let mut members = self.members.iter().peekable();
        let mut children = self.children.iter().peekable();
        std::iter::from_fn(move || match (members.peek(), children.peek()) {
            (Some(m), Some((c, _))) if m < c => Some((members.next()?, None, true)),
            (Some(m), Some((c, _))) if m == c => {
                let (element, child) = children.next()?;
                members.next();
                Some((element, Some(child), true))
            }
            (_, Some(_)) => children
                .next()
                .map(|(element, child)| (element, Some(child), false)),
            (Some(_), None) => Some((members.next()?, None, true)),
            (None, None) => None,
        })
    }

    /// The set below `element` (empty when none), and whether `element` is a member.
    pub(crate) fn node(&self, element: &PathElement) -> (Option<&Set>, bool) {
        (self.children.get(element), self.members.contains(element))
    }

    /// Paths in either set.
    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (element, child) in &other.children {
            let merged = match out.children.get(element) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(element.clone(), merged);
        }
        out
    }

    /// Paths in either set, made from `self` and `other` rather than copied.
    pub fn into_union(mut self, other: Set) -> Set {
        if self.is_empty() {
            return other;
        }
        self.members.extend(other.members);
        for (element, child) in other.children {
            match self.children.remove(&element) {
                Some(mine) => self.children.insert(element, mine.into_union(child)),
                None => self.children.insert(element, child),
            };
        }
        self
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        Set {
            members: self.members.intersection(&other.members).cloned().collect(),
            children: (self.children.iter())
                .filter_map(|(element, child)| {
                    let common = child.intersection(other.children.get(element)?);
                    (!common.is_empty()).then(|| (element.clone(), common))
                })
                .collect(),
        }
    }

    /// Paths of `self` that are not in `other`. A member of `other` removes only itself,
    /// not what `self` has below it.
    pub fn difference(&self, other: &Set) -> Set {
        Set {
            members: self.members.difference(&other.members).cloned().collect(),
            children: (self.children.iter())
                .filter_map(|(element, child)| match other.children.get(element) {
                    Some(theirs) => {
                        let rest = child.difference(theirs);
                        (!rest.is_empty()).then(|| (element.clone(), rest))
                    }
                    None => Some((element.clone(), child.clone())),
                })
                .collect(),
        }
    }

    /// [`difference`](Set::difference), made from `self` rather than copied.
    pub fn into_difference(self, other: &Set) -> Set {
        self.take_out(other, false)
    }

    /// `self` without the paths of `other`, and, when `below`, without what is below
    /// `other`'s members: [`into_difference`](Set::into_difference) and
    /// [`into_recursive_difference`](Set::into_recursive_difference).
    fn take_out(mut self, other: &Set, below: bool) -> Set {
        if other.is_empty() {
            return self;
        }
        self.members
            .retain(|element| !other.members.contains(element));
        self.children = (std::mem::take(&mut self.children).into_iter())
            .filter(|(element, _)| !below || !other.members.contains(element))
            .filter_map(|(element, child)| match other.children.get(&element) {
                Some(theirs) => {
                    let rest = child.take_out(theirs, below);
                    (!rest.is_empty()).then_some((element, rest))
                }
                None => Some((element, child)),
            })
            .collect();
        self
    }

    /// Paths of `self` that are not in `other`, nor below one of its members.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        Set {
            members: self.members.difference(&other.members).cloned().collect(),
            children: (self.children.iter())
                .filter(|(element, _)| !other.members.contains(element))
                .filter_map(|(element, child)| match other.children.get(element) {
                    Some(theirs) => {
                        let rest = child.recursive_difference(theirs);
                        (!rest.is_empty()).then(|| (element.clone(), rest))
                    }
                    None => Some((element.clone(), child.clone())),
                })
                .collect(),
        }
    }

    /// [`recursive_difference`](Set::recursive_difference), made from `self` rather than
    /// copied.
    pub fn into_recursive_difference(self, other: &Set) -> Set {
        self.take_out(other, true)
    }

    /// Every member, depth first: a node's members before what is below it.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for member in &self.members {
            let mut path = prefix.clone();
            path.push(member.clone());
            out.push(Path(path));
        }
        for (element, child) in &self.children {
            prefix.push(element.clone());
            child.collect(prefix, out);
            prefix.pop();
        }
    }

    /// A set with the given members and children, dropping empty children.
    pub(crate) fn from_parts(
        members: BTreeSet<PathElement>,
        children: BTreeMap<PathElement, Set>,
    ) -> Set {
        Set {
            members,
            children: children
                .into_iter()
                .filter(|(_, c)| !c.is_empty())
                .collect(),
        }
    }

    /// The set as `fieldsV1`: one key per element (`f:`, `k:`, `v:`, `i:`), in element
    /// order, `{}` for a member without children, and `"."` first where a member has some.
    pub fn to_fields_v1(&self) -> Value {
        let mut out = Map::new();
        self.fields_v1_into(&mut out);
        Value::Object(out)
    }

    /// [`to_fields_v1`](Set::to_fields_v1)'s entries, into `out`: a child's map is filled
    /// where it lies, not made apart and copied over.
    fn fields_v1_into(&self, out: &mut Map<String, Value>) {
        for (element, child, member) in self.nodes() {
            let mut inner = Map::new();
            if let Some(child) = child {
                if member {
                    inner.insert(".".into(), Value::Object(Map::new()));
                }
                child.fields_v1_into(&mut inner);
            }
            out.insert(serialize_element(element), Value::Object(inner));
        }
    }

    /// Reads `fieldsV1`. Unknown element prefixes are skipped, as kube skips them.
    pub fn from_fields_v1(value: &Value) -> Result<Set, String> {
        let object = value
            .as_object()
            .ok_or_else(|| format!("expected an object, got {value}"))?;
        let mut set = Set::new();
        for (key, inner) in object {
            if key == "." {
                continue;
            }
            let Some(element) = parse_element(key)? else {
                continue;
            };
            let inner_map = inner
                .as_object()
                .ok_or_else(|| format!("expected an object at {key:?}"))?;
            if inner_map.is_empty() || inner_map.contains_key(".") {
                set.members.insert(element.clone());
            }
            let child = Set::from_fields_v1(inner)?;
            if !child.is_empty() {
                set.children.insert(element, child);
            }
        }
        Ok(set)
    }
}

/// An element's `fieldsV1` key: `f:name`, `k:{"name":"a"}`, `v:"a"`, `i:0`.
pub(crate) fn serialize_element(element: &PathElement) -> String {
    match element {
        PathElement::Field(name) => {
            let mut key = String::with_capacity(name.len() + 2);
            key.push_str("f:");
            key.push_str(name);
            key
        }
        PathElement::Key(fields) => {
            let object: Map<String, Value> = fields.iter().cloned().collect();
            format!("k:{}", go_json(&Value::Object(object)))
        }
        PathElement::Value(value) => format!("v:{}", go_json(value)),
        PathElement::Index(index) => format!("i:{index}"),
    }
}

/// Compact JSON as Go's encoder writes it: `<`, `>` and `&` escaped.
fn go_json(value: &Value) -> String {
    serde_json::to_string(value)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The element of a `fieldsV1` key; `None` for a prefix kube does not know.
fn parse_element(key: &str) -> Result<Option<PathElement>, String> {
    let bad = |e: serde_json::Error| format!("invalid path element {key:?}: {e}");
    let Some((kind, rest)) = key.split_once(':') else {
        return Err(format!("missing colon: {key}"));
    };
    Ok(Some(match kind {
        "f" => PathElement::Field(rest.to_owned()),
        "v" => PathElement::value(serde_json::from_str(rest).map_err(bad)?),
        "k" => {
            let fields: Map<String, Value> = serde_json::from_str(rest).map_err(bad)?;
            PathElement::key(fields.into_iter().collect())
        }
        "i" => PathElement::Index(
            rest.parse()
                .map_err(|_| format!("invalid path element {key:?}"))?,
        ),
        _ if kind.len() == 1 => return Ok(None),
        _ => return Err(format!("invalid path element {key:?}")),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    fn set(paths: &[&[PathElement]]) -> Set {
        let mut set = Set::new();
        for path in paths {
            set.insert(path);
        }
        set
    }

    /// The consuming forms give what the copying ones give, for sets that share members,
    /// children, both, or nothing.
    #[test]
    fn consuming_union_and_difference_match_the_copying_ones() {
        let sets = [
            Set::new(),
            set(&[&[f("a")], &[f("b"), f("c")]]),
            set(&[&[f("b")], &[f("b"), f("c")], &[f("b"), f("d"), f("e")]]),
            set(&[&[f("a"), f("x")], &[f("b"), f("d"), f("e")], &[f("z")]]),
        ];
        for a in &sets {
            for b in &sets {
                assert_eq!(a.clone().into_union(b.clone()), a.union(b), "{a:?} ∪ {b:?}");
                assert_eq!(
                    a.clone().into_difference(b),
                    a.difference(b),
                    "{a:?} - {b:?}"
                );
            }
        }
        // A difference that empties a child drops it, as the copying form does.
        let emptied = set(&[&[f("b"), f("c")]]).into_difference(&set(&[&[f("b"), f("c")]]));
        assert!(emptied.is_empty());
    }

    #[test]
    fn fields_v1_round_trips_with_kubes_layout() {
        let port = PathElement::key(vec![("containerPort".into(), json!(80))]);
        let s = set(&[
            &[f("spec"), f("replicas")],
            &[f("spec"), f("ports"), port.clone()],
            &[f("spec"), f("ports"), port.clone(), f("name")],
            &[f("metadata"), f("labels"), f("app")],
            &[f("spec"), f("tags"), PathElement::value(json!("a<b"))],
        ]);
        let encoded = s.to_fields_v1();
        assert_eq!(
            serde_json::to_string(&encoded).unwrap(),
            r#"{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:ports":{"k:{\"containerPort\":80}":{".":{},"f:name":{}}},"f:replicas":{},"f:tags":{"v:\"a\\u003cb\"":{}}}}"#
        );
        assert_eq!(Set::from_fields_v1(&encoded).unwrap(), s);
        assert_eq!(
            Set::from_fields_v1(&json!({"x:y": {}, "f:a": {}})).unwrap(),
            set(&[&[f("a")]])
        );
        assert!(Set::from_fields_v1(&json!({"fa": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"k:{bad": {}})).is_err());
    }

    #[test]
    fn difference_of_a_parent_keeps_its_children_recursive_does_not() {
        let a = set(&[&[f("a")], &[f("a"), f("b")]]);
        let parent = set(&[&[f("a")]]);
        assert_eq!(a.difference(&parent), set(&[&[f("a"), f("b")]]));
        assert!(a.recursive_difference(&parent).is_empty());
        assert_eq!(
            a.intersection(&set(&[&[f("a"), f("b")], &[f("c")]])),
            set(&[&[f("a"), f("b")]])
        );
        assert_eq!(
            a.paths()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [".a", ".a.b"]
        );
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Paths over a small alphabet, so that sets share prefixes and members.
        fn paths() -> impl Strategy<Value = Vec<Vec<PathElement>>> {
            let element = prop_oneof![
                (0..3u8).prop_map(|i| f(["a", "b", "c"][usize::from(i)])),
                (0..2i64).prop_map(|i| PathElement::key(vec![("name".into(), json!(i))])),
                (0..2i64).prop_map(|i| PathElement::value(json!(i))),
            ];
            proptest::collection::vec(proptest::collection::vec(element, 1..4), 0..8)
        }

        fn all(a: &[Vec<PathElement>], b: &[Vec<PathElement>]) -> Vec<Vec<PathElement>> {
            let mut every: Vec<_> = a.iter().chain(b).cloned().collect();
            // Prefixes too: membership of a parent is independent of its children.
            for path in a.iter().chain(b) {
                for len in 1..path.len() {
                    every.push(path[..len].to_vec());
                }
            }
            every
        }

        proptest! {
            #[test]
            fn the_algebra_is_set_algebra_on_paths(a in paths(), b in paths()) {
                let (x, y) = (set(&a.iter().map(Vec::as_slice).collect::<Vec<_>>()),
                              set(&b.iter().map(Vec::as_slice).collect::<Vec<_>>()));
                let (union, inter, diff, rdiff) =
                    (x.union(&y), x.intersection(&y), x.difference(&y), x.recursive_difference(&y));
                for path in all(&a, &b) {
                    prop_assert_eq!(union.has(&path), x.has(&path) || y.has(&path));
                    prop_assert_eq!(inter.has(&path), x.has(&path) && y.has(&path));
                    prop_assert_eq!(diff.has(&path), x.has(&path) && !y.has(&path));
                    let below_y = (1..=path.len()).any(|len| y.has(&path[..len]));
                    prop_assert_eq!(rdiff.has(&path), x.has(&path) && !below_y);
                }
                prop_assert_eq!(union.is_empty(), x.is_empty() && y.is_empty());
                prop_assert_eq!(&x.union(&y), &y.union(&x));
                prop_assert_eq!(x.clone().into_union(y.clone()), union.clone());
                let walked: Vec<_> = union.nodes().collect();
                let looked_up: Vec<_> = (union.elements())
                    .map(|e| { let (child, member) = union.node(e); (e, child, member) })
                    .collect();
                prop_assert_eq!(walked, looked_up);
                prop_assert_eq!(x.clone().into_difference(&y), diff.clone());
                prop_assert_eq!(x.clone().into_recursive_difference(&y), rdiff.clone());
                prop_assert_eq!(&x.intersection(&y), &y.intersection(&x));
                prop_assert!(x.difference(&x).is_empty());
                prop_assert_eq!(Set::from_fields_v1(&x.to_fields_v1()).unwrap(), x.clone());
                prop_assert_eq!(x.paths().len(), {
                    let mut distinct = a.clone();
                    distinct.sort();
                    distinct.dedup();
                    distinct.len()
                });
            }
        }
    }
}
