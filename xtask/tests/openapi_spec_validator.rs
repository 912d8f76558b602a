//! Every generated OpenAPI document is valid according to `openapi-spec-validator`
//! (PyPI), run as `python3 -m openapi_spec_validator`. `cargo xtask test` installs it.

use std::path::{Path, PathBuf};
use std::process::Command;

use kapi_tasks::generate::generated_dir;

/// `openapi/v2.json` and every group-version document under `openapi/v3/` (not the index,
/// which is no OpenAPI document).
fn documents(generated: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "json")
                && !path.ends_with("v3/index.json")
            {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    let v2 = generated.join("openapi/v2.json");
    if v2.is_file() {
        found.push(v2);
    }
    walk(&generated.join("openapi/v3"), &mut found);
    found.sort();
    found
}

#[test]
fn generated_openapi_documents_are_valid() {
    let present = Command::new("python3")
        .args(["-c", "import openapi_spec_validator"])
        .output();
    assert!(
        present.is_ok_and(|o| o.status.success()),
        "python3 -m openapi_spec_validator is not installed: run the test suite with `cargo xtask test`, \
         which installs it (`python3 -m pip install {}`)",
        xtask::test::OPENAPI_SPEC_VALIDATOR
    );
    let documents = documents(&generated_dir(&xtask::project_root()));
    assert!(
        !documents.is_empty(),
        "no OpenAPI document in generated/openapi/: run `cargo xtask generate`"
    );
    let output = Command::new("python3")
        .args(["-m", "openapi_spec_validator"])
        .args(&documents)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "openapi-spec-validator rejects a generated document:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
