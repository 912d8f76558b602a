//! `cargo xtask bench`: the project's performance figures (`server/benches/kapi/`), printed
//! for people to read (or as JSON with `--json`); nothing asserts them.
//!
//! Installs what the measurements need when missing (etcd), then runs the benchmark in the release-like bench profile.

use std::path::Path;
use std::process::{Command, ExitStatus};

use anyhow::{Context, Result};

use kapi_tasks::test::Prerequisite;

/// Runs the benchmark from `root` (at tiny sizes when `quick`, printing JSON when
/// `json`, only the parts in `only` when it is not empty); returns cargo's status.
pub fn run(root: &Path, quick: bool, json: bool, only: &[String]) -> Result<ExitStatus> {
    let mut env = Vec::new();
    let etcd = Prerequisite::etcd();
    etcd.ensure(root)?;
    env.extend(etcd.env);
    let mut args = vec![
        "bench",
        "-p",
        "kapi-server",
        "--features",
        "etcd",
        "--bench",
        "kapi",
        "--",
    ];
    args.extend(quick.then_some("--quick"));
    args.extend(json.then_some("--json"));
    let only = format!("--only={}", only.join(","));
    args.extend((!only.ends_with('=')).then_some(only.as_str()));
    eprintln!("xtask: cargo {}", args.join(" "));
    Command::new("cargo")
        .args(args)
        .envs(env.iter().map(|(name, value)| (name, value)))
        .current_dir(root)
        .status()
        .context("running cargo bench")
}
