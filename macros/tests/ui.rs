//! The exact messages users get for mistakes in `#[resource(...)]`: each file in `tests/ui`
//! is one mistake (or several, reported in one compile) with its expected `.stderr`.
//!
//! To update the expectations after changing a message:
//! `TRYBUILD=overwrite cargo test -p kapi-macros --test ui`, then read every changed file.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
