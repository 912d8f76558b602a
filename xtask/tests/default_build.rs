//! The README's promise: `cargo run --release -p kapi-server` builds without `protoc`. Only
//! the etcd backend needs it (`etcd-client` generates its gRPC code with `tonic-build` /
//! `prost-build`, which run `protoc`), so the default build of the server must not depend on
//! any of them, and `--features etcd` must bring `etcd-client` in (else this test proves
//! nothing). Asked of `cargo tree`, which reads `Cargo.lock` and builds nothing.

use std::process::Command;

use xtask::project_root;

/// What only the etcd backend brings: the client, gRPC, and the build-time code generator
/// that runs `protoc` for it. (`prost-build` itself is in the default tree, as a build
/// dependency of the profiler, `pprof`, whose build script only runs it when its shipped
/// generated code does not match its `.proto`, which never happens to a published crate:
/// `PROTOC=/nonexistent cargo build -p kapi-server` builds it.)
const ETCD_ONLY: [&str; 3] = ["etcd-client", "tonic", "tonic-build"];

/// The names of the packages in `kapi-server`'s tree of normal and build dependencies (build
/// scripts' dependencies are where `protoc` would be run), with `features` (`""` for none).
fn server_dependencies(features: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        .args(["tree", "--offline", "-p", "kapi-server"])
        .args(["-e", "normal,build", "--prefix", "none"])
        .current_dir(project_root());
    if !features.is_empty() {
        command.args(["--features", features]);
    }
    let output = command.output().expect("running cargo tree");
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("cargo tree prints UTF-8");
    // Lines are `name vX.Y.Z (path)` or `name vX.Y.Z (*)`.
    stdout
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_default_server_build_needs_no_protoc() {
    let default = server_dependencies("");
    assert!(
        default.iter().any(|name| name == "kapi-apiserver"),
        "cargo tree listed the server's dependencies: {default:?}"
    );
    let present: Vec<&str> = (ETCD_ONLY.iter().copied())
        .filter(|etcd_only| default.iter().any(|name| name == etcd_only))
        .collect();
    assert!(
        present.is_empty(),
        "the default build of kapi-server depends on {present:?}, which only the `etcd` \
         feature may bring in (building them needs protoc)"
    );

    // Each name is one cargo tree prints: the check above can fail.
    let with_etcd = server_dependencies("etcd");
    for name in ETCD_ONLY {
        assert!(
            with_etcd.iter().any(|n| n == name),
            "`--features etcd` does not bring {name} in: {with_etcd:?}"
        );
    }
}
