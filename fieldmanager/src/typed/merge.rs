//! Merging: an applied configuration over a live value, as structured-merge-diff merges
//! them (`merge`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{
    Atom, ListType, PathElement, TypeRef, TypedError, as_array, as_object, is_empty_or_null,
    item_element, kind_matches,
};

/// `config` applied over `live`: scalars and atomic values replaced, structs and maps
/// merged key by key, list-map and set items merged by their element (config order, with
/// items only in `live` kept where they stood). Duplicates in `config` are an error.
pub fn merge(live: &Value, config: &Value, tr: TypeRef<'_>) -> Result<Value, TypedError> {
    Ok(merge_into(Some(live), Some(config), tr)?.unwrap_or(Value::Null))
}

fn merge_into(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    tr: TypeRef<'_>,
) -> Result<Option<Value>, TypedError> {
    let leaf = || Ok(rhs.or(lhs).cloned());
    if let (Some(l), Some(r)) = (lhs, rhs)
        && !kind_matches(l, r)
    {
        return leaf();
    }
    match tr.atom(rhs.or(lhs)) {
        Atom::Scalar => leaf(),
        Atom::List { kind, elem } => {
            if kind == ListType::Atomic || (is_empty_or_null(lhs) && is_empty_or_null(rhs)) {
                return leaf();
            }
            let items = merge_items(&tr, &kind, elem, as_array(lhs), as_array(rhs))?;
            Ok((!items.is_empty()).then_some(Value::Array(items)))
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
            let mut out = Map::new();
            // Live's keys in their order, then the configuration's new ones.
            let keys = l.keys().chain(r.keys().filter(|k| !l.contains_key(*k)));
            for key in keys {
                let merged = merge_into(l.get(key), r.get(key), tr.field(&fields, elem, key))?;
                if let Some(merged) = merged {
                    out.insert(key.clone(), merged);
                }
            }
            Ok((!out.is_empty()).then_some(Value::Object(out)))
        }
    }
}

/// structured-merge-diff's merge of associative lists: walk live and configuration
/// together; a live-only item stays where it is; configuration items come in their order.
fn merge_items(
    tr: &TypeRef<'_>,
    kind: &ListType,
    elem: Option<usize>,
    lhs: &[Value],
    rhs: &[Value],
) -> Result<Vec<Value>, TypedError> {
    let mut right = Vec::with_capacity(rhs.len());
    let mut right_of: BTreeMap<PathElement, &Value> = BTreeMap::new();
    for item in rhs {
        let element = item_element(tr, kind, elem, item)?;
        if right_of.insert(element.clone(), item).is_some() {
            return Err(TypedError(format!("duplicate entries for key {element}")));
        }
        right.push(element);
    }
    let mut left = Vec::with_capacity(lhs.len());
    let mut left_of: BTreeMap<PathElement, Option<&Value>> = BTreeMap::new();
    for item in lhs {
        let element = item_element(tr, kind, elem, item)?;
        // A duplicated live item merges as absent (kube keeps it unmerged).
        match left_of.get_mut(&element) {
            Some(slot) => *slot = None,
            None => {
                left_of.insert(element.clone(), Some(item));
            }
        }
        left.push((element, item));
    }
    let mut shared = right.iter().filter(|e| left_of.contains_key(e));
    let mut next_shared = shared.next();
    let mut merged: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
    let (mut li, mut ri) = (0, 0);
    let item = |element: &PathElement, live: Option<&Value>| {
        merge_into(live, right_of.get(element).copied(), tr.at(elem))
    };
    while li < left.len() || ri < right.len() {
        if li < left.len() && ri < right.len() {
            let element = &left[li].0;
            if *element == right[ri] {
                merged.insert(&right[ri]);
                out.extend(item(element, left_of.get(element).copied().flatten())?);
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if right_of.contains_key(element) && next_shared.is_some_and(|n| n != element) {
                li += 1;
                continue;
            }
        }
        if li < left.len() {
            let (element, live) = &left[li];
            if !right_of.contains_key(element) {
                out.extend(merge_into(Some(live), None, tr.at(elem))?);
                li += 1;
                continue;
            } else if merged.contains(element) {
                li += 1;
            }
        }
        if ri < right.len() {
            let element = &right[ri];
            merged.insert(element);
            out.extend(item(element, left_of.get(element).copied().flatten())?);
            ri += 1;
            if next_shared == Some(element) {
                next_shared = shared.next();
            }
        }
    }
    Ok(out)
}
