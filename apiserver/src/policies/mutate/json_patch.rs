//! A mutating policy's JSON patch applied as kube applies it: with the JSON patch library
//! kube 1.34 uses (evanphx/json-patch v4.12), whose rules differ from RFC 6902's where
//! policies notice:
//!
//! - array indices may be negative (`-1` is the end for an add, the last item otherwise);
//!   an index is read as Go's `Atoi` reads it (`01` is 1), `-` appends for an add alone;
//! - `replace` of a missing object key adds it; `copy` of a missing key copies null;
//! - `replace` of the whole document (path `""`) with an object or array replaces it, with
//!   anything else leaves it; `add` and `remove` of it fail;
//! - a `test` against a missing key or null never holds, a `test` of an index out of
//!   range is an error rather than a failed test;
//! - the operations apply all or nothing, each failure worded as the library words it.
//!
//! Written here rather than taken from a crate: the `json-patch` crate follows RFC 6902,
//! and policies are written against kube's library.

use serde_json::Value;

/// Why a patch did not apply.
#[derive(Debug, PartialEq)]
pub(crate) enum Failed {
    /// A `test` did not hold: kube drops the whole patch, with no error.
    Test,
    /// The library's error, as it words it.
    Error(String),
}

/// `doc` with `operations` applied, all or nothing.
pub(crate) fn apply(doc: &Value, operations: &[Value]) -> Result<Value, Failed> {
    let mut doc = doc.clone();
    for operation in operations {
        apply_one(&mut doc, operation)?;
    }
    Ok(doc)
}

fn error(text: String) -> Failed {
    Failed::Error(text)
}

const MISSING: &str = "missing value";
const INVALID_INDEX: &str = "invalid index referenced";

fn apply_one(doc: &mut Value, operation: &Value) -> Result<(), Failed> {
    let text = |field: &str| operation.get(field).and_then(Value::as_str);
    let op = text("op").unwrap_or("unknown");
    let path = text("path").unwrap_or_default();
    // An operation without a value carries null, as the library reads it.
    let value = operation.get("value").cloned().unwrap_or(Value::Null);
    match op {
        "add" => {
            let (parent, key) = container(doc, path).ok_or_else(|| {
                error(format!(
                    "add operation does not apply: doc is missing path: {path:?}: {MISSING}"
                ))
            })?;
            add(parent, &key, value)
                .map_err(|e| error(format!("error in add for path: '{path}': {e}")))
        }
        "remove" => {
            let (parent, key) = container(doc, path).ok_or_else(|| {
                error(format!(
                    "remove operation does not apply: doc is missing path: {path:?}: {MISSING}"
                ))
            })?;
            remove(parent, &key)
                .map(drop)
                .map_err(|e| error(format!("error in remove for path: '{path}': {e}")))
        }
        "replace" if path.is_empty() => {
            if value.is_object() || value.is_array() || value.is_null() {
                *doc = value;
            }
            Ok(())
        }
        "replace" => {
            let (parent, key) = container(doc, path).ok_or_else(|| {
                error(format!(
                    "replace operation does not apply: doc is missing path: {path}: {MISSING}"
                ))
            })?;
            if let Value::Array(items) = parent
                && index(&key, items.len(), false).is_err()
            {
                return Err(error(format!(
                    "replace operation does not apply: doc is missing key: {path}: {MISSING}"
                )));
            }
            set(parent, &key, value);
            Ok(())
        }
        "move" | "copy" => {
            let Some(from) = text("from") else {
                return Err(error(format!(
                    "{op} operation failed to decode from: operation, missing from field: \
                     {MISSING}"
                )));
            };
            let (source, key) = container(doc, from).ok_or_else(|| {
                error(format!(
                    "{op} operation does not apply: doc is missing from path: {from}: {MISSING}"
                ))
            })?;
            let moved = match op {
                "move" => remove(source, &key)
                    .map_err(|e| error(format!("error in move for path: '{key}': {e}")))?,
                _ => get(source, &key)
                    .map_err(|e| error(format!("error in copy for from: '{from}': {e}")))?
                    .unwrap_or(Value::Null),
            };
            let (parent, key) = container(doc, path).ok_or_else(|| {
                error(format!(
                    "{op} operation does not apply: doc is missing destination path: {path}: \
                     {MISSING}"
                ))
            })?;
            add(parent, &key, moved)
                .map_err(|e| error(format!("error in {op} for path: '{path}': {e}")))
        }
        "test" if path.is_empty() => match *doc == value && !value.is_null() {
            true => Ok(()),
            false => Err(Failed::Test),
        },
        "test" => {
            let (parent, key) = container(doc, path).ok_or_else(|| {
                error(format!(
                    "test operation does not apply: is missing path: {path}: {MISSING}"
                ))
            })?;
            let found = get(parent, &key)
                .map_err(|e| error(format!("error in test for path: '{path}': {e}")))?;
            // A missing key, and a null, never equal the value the patch carries.
            match found {
                Some(found) if !found.is_null() && found == value => Ok(()),
                _ => Err(Failed::Test),
            }
        }
        other => Err(error(format!("Unexpected kind: {other}"))),
    }
}

/// The container `path` points into (an object or an array), and the last token: `None`
/// when the path has no token or a step is missing or not a container. The first token
/// is skipped, as the library skips it (a path is expected to start with `/`).
fn container<'d>(doc: &'d mut Value, path: &str) -> Option<(&'d mut Value, String)> {
    let mut tokens: Vec<String> = path.split('/').skip(1).map(unescape).collect();
    let last = tokens.pop()?;
    let mut node = doc;
    for token in &tokens {
        node = match node {
            Value::Object(map) => map.get_mut(token)?,
            Value::Array(items) => {
                let at = index(token, items.len(), false).ok()?;
                &mut items[at]
            }
            _ => return None,
        };
    }
    matches!(node, Value::Object(_) | Value::Array(_)).then_some((node, last))
}

/// A pointer token: `~1` is `/`, `~0` is `~`.
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Where `token` points in an array of `len` items: one past the end only for an add
/// (`adding`), negative indices counted from the end (one further for an add).
fn index(token: &str, len: usize, adding: bool) -> Result<usize, String> {
    let parsed =
        atoi(token).ok_or_else(|| format!("strconv.Atoi: parsing {token:?}: invalid syntax"))?;
    let len = len as i64;
    let end = if adding { len } else { len - 1 };
    let at = match parsed < 0 {
        true => parsed + end + 1,
        false => parsed,
    };
    match (0..=end).contains(&at) {
        true => Ok(at as usize),
        false => Err(format!(
            "Unable to access invalid index: {parsed}: {INVALID_INDEX}"
        )),
    }
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits.
fn atoi(token: &str) -> Option<i64> {
    let digits = token.strip_prefix(['+', '-']).unwrap_or(token);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

fn get(parent: &Value, key: &str) -> Result<Option<Value>, String> {
    match parent {
        Value::Object(map) => Ok(map.get(key).cloned()),
        Value::Array(items) => Ok(Some(items[index(key, items.len(), false)?].clone())),
        _ => Ok(None),
    }
}

fn set(parent: &mut Value, key: &str, value: Value) {
    match parent {
        Value::Object(map) => _ = map.insert(key.to_owned(), value),
        Value::Array(items) => {
            if let Ok(at) = index(key, items.len(), false) {
                items[at] = value;
            }
        }
        _ => {}
    }
}

fn add(parent: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match parent {
        Value::Object(map) => {
            map.insert(key.to_owned(), value);
            Ok(())
        }
        Value::Array(items) if key == "-" => {
            items.push(value);
            Ok(())
        }
        Value::Array(items) => {
            let at = index(key, items.len(), true).map_err(|e| match atoi(key) {
                None => format!("value was not a proper array index: '{key}': {e}"),
                Some(_) => e,
            })?;
            items.insert(at, value);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn remove(parent: &mut Value, key: &str) -> Result<Value, String> {
    match parent {
        Value::Object(map) => map
            .remove(key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: {MISSING}")),
        Value::Array(items) => Ok(items.remove(index(key, items.len(), false)?)),
        _ => Err(format!(
            "Unable to remove nonexistent key: {key}: {MISSING}"
        )),
    }
}

#[cfg(test)]
mod tests;
