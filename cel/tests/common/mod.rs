//! What the runners of kube's tables share: loading a table, the list of known failures
//! a run is checked against (both ways), and the dump that helps update it.

use std::collections::BTreeSet;

use serde_json::Value;

/// A table of `tests/data/kube/`.
pub(crate) fn load(name: &str) -> Value {
    let path = format!("{}/tests/data/kube/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("a table")).expect("JSON")
}

/// The known failures of `table`: case and rule, joined by ` :: `.
fn known(table: &str) -> BTreeSet<String> {
    let known = load("known_failures.json");
    (known[table]["cases"].as_object().into_iter().flatten())
        .map(|(k, _)| k.clone())
        .collect()
}

/// Checks the failures found against the known ones, both ways.
pub(crate) fn compare(table: &str, failures: BTreeSet<String>, total: usize) {
    let known = known(table);
    let new: Vec<_> = failures.difference(&known).collect();
    let fixed: Vec<_> = known.difference(&failures).collect();
    eprintln!(
        "{table}: {} of {total} pass, {} known failures",
        total - failures.len(),
        known.len()
    );
    assert!(
        new.is_empty() && fixed.is_empty(),
        "{table}: new failures {new:#?}\nfixed (remove from known_failures.json) {fixed:#?}"
    );
}

/// With `KAPI_CEL_DUMP` set, prints a failure and what differs, one per line (to update
/// `known_failures.json`).
pub(crate) fn dump(key: &str, detail: &str) {
    if std::env::var_os("KAPI_CEL_DUMP").is_some() {
        println!("DUMP\t{key}\t{}", detail.replace(['\t', '\n'], " "));
    }
}
