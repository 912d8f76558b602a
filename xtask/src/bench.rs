//! `cargo xtask bench`: the project's throughput numbers (`server/benches/throughput.rs`),
//! printed for people to read; nothing asserts them.
//!
//! Installs what the measurements need when missing (etcd, and `protoc` to build the etcd
//! backend), then runs the benchmark in the release-like bench profile: the embedded store
//! directly, raw etcd-client transactions, and the release server over HTTP on etcd and on
//! the embedded store, all at the same concurrency.

use std::path::Path;
use std::process::{Command, ExitStatus};

use anyhow::{Context, Result};

use crate::test::Prerequisite;

/// Runs the benchmark from `root`; returns cargo's status.
pub fn run(root: &Path) -> Result<ExitStatus> {
    let mut env = Vec::new();
    for prerequisite in [Prerequisite::protoc(), Prerequisite::etcd()] {
        prerequisite.ensure(root)?;
        env.extend(prerequisite.env);
    }
    let args = [
        "bench",
        "-p",
        "kapi-server",
        "--features",
        "etcd",
        "--bench",
        "throughput",
    ];
    eprintln!("xtask: cargo {}", args.join(" "));
    Command::new("cargo")
        .args(args)
        .envs(env.iter().map(|(name, value)| (name, value)))
        .current_dir(root)
        .status()
        .context("running cargo bench")
}
