//! Records what `/version` reports about the build: the compiler's version, and the git
//! commit and its date when building from a checkout (empty otherwise).

use std::path::Path;
use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc_version = output(Command::new(rustc).arg("--version"))
        .and_then(|v| v.split_whitespace().nth(1).map(|v| format!("rustc{v}")))
        .unwrap_or_default();
    println!("cargo:rustc-env=KAPI_RUSTC_VERSION={rustc_version}");

    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let root = Path::new(&manifest_dir).join("..");
    let git = root.join(".git");
    // Rerun when the checked-out commit moves, not on every edit.
    for path in ["HEAD", "refs/heads", "packed-refs"] {
        if git.join(path).exists() {
            println!("cargo:rerun-if-changed={}", git.join(path).display());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    let git_output = |args: &[&str]| output(Command::new("git").arg("-C").arg(&root).args(args));
    let commit = git_output(&["rev-parse", "HEAD"]).unwrap_or_default();
    let date = git_output(&[
        "log",
        "-1",
        "--format=%cd",
        "--date=format-local:%Y-%m-%dT%H:%M:%SZ",
    ])
    .unwrap_or_default();
    println!("cargo:rustc-env=KAPI_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=KAPI_GIT_COMMIT_DATE={date}");
}

fn output(command: &mut Command) -> Option<String> {
    let output = command.env("TZ", "UTC").output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .filter(|s| !s.is_empty())
}
