//! The built-in kinds' declarations (`builtin/src/api/`) are what the generator renders
//! from the checked-in facts: offline, no network, no k8s.io/api checkout.

#[test]
fn builtin_declarations_are_fresh() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let problems = kapi_apigen::generate::run(root, true).expect("renders");
    assert!(
        problems.is_empty(),
        "run `cargo xtask generate`:\n{}",
        problems.join("\n")
    );
}
