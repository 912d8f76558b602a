//! kube's JSON patch library's behaviour as data: each operation on one document, and
//! the document it leaves or the error it words (checked against evanphx/json-patch
//! v4.12.0, which kube 1.34 applies mutating policies' patches with).

use serde_json::{Value, json};

use super::{Failed, apply};

fn doc() -> Value {
    json!({"a": [1, 2, 3], "o": {"k": "v"}, "s": "str", "n": null})
}

/// What one operation does to [`doc`]: its result, `"test failed"`, or the error.
fn run(operation: Value) -> Result<Value, String> {
    match apply(&doc(), &[operation]) {
        Ok(value) => Ok(value),
        Err(Failed::Test) => Err("test failed".into()),
        Err(Failed::Error(e)) => Err(e),
    }
}

fn op(op: &str, path: &str, value: Option<Value>, from: Option<&str>) -> Value {
    let mut operation = json!({"op": op, "path": path});
    if let Some(value) = value {
        operation["value"] = value;
    }
    if let Some(from) = from {
        operation["from"] = json!(from);
    }
    operation
}

#[test]
fn arrays_take_kubes_indices() {
    let a = |operation| run(operation).map(|d| d["a"].clone());
    let cases = [
        (
            op("add", "/a/-1", Some(json!(9)), None),
            json!([1, 2, 3, 9]),
        ),
        (
            op("add", "/a/-2", Some(json!(9)), None),
            json!([1, 2, 9, 3]),
        ),
        (
            op("add", "/a/-4", Some(json!(9)), None),
            json!([9, 1, 2, 3]),
        ),
        (op("add", "/a/3", Some(json!(9)), None), json!([1, 2, 3, 9])),
        (op("add", "/a/-", Some(json!(9)), None), json!([1, 2, 3, 9])),
        (
            op("add", "/a/01", Some(json!(9)), None),
            json!([1, 9, 2, 3]),
        ),
        (op("remove", "/a/-1", None, None), json!([1, 2])),
        (op("remove", "/a/-3", None, None), json!([2, 3])),
        (
            op("replace", "/a/-2", Some(json!(9)), None),
            json!([1, 9, 3]),
        ),
        (op("copy", "/a/-", None, Some("/a/-1")), json!([1, 2, 3, 3])),
        (op("move", "/a/0", None, Some("/a/-1")), json!([3, 1, 2])),
    ];
    for (operation, expected) in cases {
        assert_eq!(a(operation.clone()), Ok(expected), "{operation}");
    }
    let errors = [
        (
            op("add", "/a/-5", Some(json!(9)), None),
            "error in add for path: '/a/-5': Unable to access invalid index: -5: invalid index referenced",
        ),
        (
            op("add", "/a/4", Some(json!(9)), None),
            "error in add for path: '/a/4': Unable to access invalid index: 4: invalid index referenced",
        ),
        (
            op("add", "/a/x", Some(json!(9)), None),
            "error in add for path: '/a/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax",
        ),
        (
            op("remove", "/a/-4", None, None),
            "error in remove for path: '/a/-4': Unable to access invalid index: -4: invalid index referenced",
        ),
        (
            op("remove", "/a/3", None, None),
            "error in remove for path: '/a/3': Unable to access invalid index: 3: invalid index referenced",
        ),
        (
            op("remove", "/a/-", None, None),
            "error in remove for path: '/a/-': strconv.Atoi: parsing \"-\": invalid syntax",
        ),
        (
            op("replace", "/a/-4", Some(json!(9)), None),
            "replace operation does not apply: doc is missing key: /a/-4: missing value",
        ),
        (
            op("replace", "/a/-", Some(json!(9)), None),
            "replace operation does not apply: doc is missing key: /a/-: missing value",
        ),
        (
            op("test", "/a/3", Some(json!(1)), None),
            "error in test for path: '/a/3': Unable to access invalid index: 3: invalid index referenced",
        ),
        (
            op("copy", "/o/x", None, Some("/a/5")),
            "error in copy for from: '/a/5': Unable to access invalid index: 5: invalid index referenced",
        ),
        (
            op("move", "/o/x", None, Some("/a/-4")),
            "error in move for path: '-4': Unable to access invalid index: -4: invalid index referenced",
        ),
    ];
    for (operation, expected) in errors {
        assert_eq!(
            run(operation.clone()),
            Err(expected.to_owned()),
            "{operation}"
        );
    }
}

#[test]
fn objects_paths_and_the_whole_document() {
    // `replace` of a missing key adds it; `copy` of one copies null.
    assert_eq!(
        run(op("replace", "/o/new", Some(json!(1)), None)).unwrap()["o"],
        json!({"k": "v", "new": 1})
    );
    assert_eq!(
        run(op("copy", "/o/c", None, Some("/zz"))).unwrap()["o"],
        json!({"k": "v", "c": null})
    );
    // `/` is the key "", and a path's first token is skipped.
    assert_eq!(run(op("add", "/", Some(json!(1)), None)).unwrap()[""], 1);
    assert_eq!(
        run(op("add", "q/zz", Some(json!(1)), None)).unwrap()["zz"],
        1
    );
    // The whole document: replaced by an object, kept for a scalar.
    assert_eq!(
        run(op("replace", "", Some(json!({"x": 1})), None)),
        Ok(json!({"x": 1}))
    );
    assert_eq!(run(op("replace", "", Some(json!(1)), None)), Ok(doc()));
    let errors = [
        (
            op("add", "", Some(json!({})), None),
            "add operation does not apply: doc is missing path: \"\": missing value",
        ),
        (
            op("remove", "", None, None),
            "remove operation does not apply: doc is missing path: \"\": missing value",
        ),
        (
            op("add", "/x/y", Some(json!(1)), None),
            "add operation does not apply: doc is missing path: \"/x/y\": missing value",
        ),
        (
            op("add", "/s/y", Some(json!(1)), None),
            "add operation does not apply: doc is missing path: \"/s/y\": missing value",
        ),
        (
            op("remove", "/zz", None, None),
            "error in remove for path: '/zz': Unable to remove nonexistent key: zz: missing value",
        ),
        (
            op("remove", "/x/y", None, None),
            "remove operation does not apply: doc is missing path: \"/x/y\": missing value",
        ),
        (
            op("replace", "/x/y", Some(json!(1)), None),
            "replace operation does not apply: doc is missing path: /x/y: missing value",
        ),
        (
            op("move", "/o/m", None, Some("/zz")),
            "error in move for path: 'zz': Unable to remove nonexistent key: zz: missing value",
        ),
        (
            op("move", "/o/m", None, Some("/x/y")),
            "move operation does not apply: doc is missing from path: /x/y: missing value",
        ),
        (
            op("move", "/o/child", None, Some("/o")),
            "move operation does not apply: doc is missing destination path: /o/child: missing value",
        ),
        (
            op("copy", "/x/y", None, Some("/s")),
            "copy operation does not apply: doc is missing destination path: /x/y: missing value",
        ),
        (
            op("move", "/o/m", None, None),
            "move operation failed to decode from: operation, missing from field: missing value",
        ),
        (op("foo", "/s", None, None), "Unexpected kind: foo"),
    ];
    for (operation, expected) in errors {
        assert_eq!(
            run(operation.clone()),
            Err(expected.to_owned()),
            "{operation}"
        );
    }
}

#[test]
fn tests_hold_only_for_equal_values_that_are_there() {
    for (operation, holds) in [
        (op("test", "/s", Some(json!("str")), None), true),
        (op("test", "/o", Some(json!({"k": "v"})), None), true),
        (op("test", "/a/-1", Some(json!(3)), None), true),
        (op("test", "", Some(doc()), None), true),
        (op("test", "/a/0", Some(json!(1.0)), None), false),
        (op("test", "/s", Some(json!("STR")), None), false),
        (op("test", "/zz", Some(json!(null)), None), false),
        (op("test", "/n", Some(json!(null)), None), false),
        (op("test", "/zz", Some(json!(1)), None), false),
        (op("test", "", Some(json!({})), None), false),
    ] {
        let expected = match holds {
            true => Ok(doc()),
            false => Err("test failed".to_owned()),
        };
        assert_eq!(run(operation.clone()), expected, "{operation}");
    }
    assert_eq!(
        run(op("test", "/x/y", Some(json!(1)), None)),
        Err("test operation does not apply: is missing path: /x/y: missing value".to_owned())
    );
    // All or nothing: a later failure leaves nothing of the earlier operations.
    let operations = [
        op("add", "/o/new", Some(json!(1)), None),
        op("remove", "/zz", None, None),
    ];
    assert!(matches!(apply(&doc(), &operations), Err(Failed::Error(_))));
}
