//! The tasks of a kapi project's `cargo xtask`, as library functions its `xtask` calls
//! rather than code it copies:
//!
//! - [`generate`]: `cargo xtask generate [--check]` renders `generated/` from the API's
//!   kinds (with `kapi-codegen`), or checks it is fresh; [`generate::fresh`] is the
//!   freshness test.
//! - [`test`](mod@test): `cargo xtask test`, the whole suite, after installing what it needs
//!   ([`test::Prerequisite`]s: kubectl, etcd, Python modules, Debian packages).
//! - [`new`]: `cargo xtask new DIR`, a new project laid out as kapi's example.
//!
//! A project's whole `xtask` is [`main`] with its [`Project`]:
//!
//! ```no_run
//! # mod my_api { pub const KINDS: &[&kapi_core::api::KindInfo] = &[]; }
//! fn main() -> std::process::ExitCode {
//!     kapi_tasks::main(kapi_tasks::Project {
//!         root: kapi_tasks::workspace_root(env!("CARGO_MANIFEST_DIR")),
//!         kinds: my_api::KINDS,
//!         suite: kapi_tasks::test::Suite::default(),
//!     })
//! }
//! ```
//!
//! and one with tasks of its own puts [`Task`] beside them in its `clap` parser.

pub mod generate;
pub mod new;
pub mod test;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use kapi_core::api::KindInfo;

/// What a project's tasks work on.
pub struct Project {
    /// The workspace root.
    pub root: PathBuf,
    /// The API's kinds (its `api-types` crate's `KINDS`), which `generated/` renders.
    pub kinds: &'static [&'static KindInfo],
    /// What its test suite needs.
    pub suite: test::Suite,
}

/// The tasks every project has.
#[derive(Debug, Subcommand)]
pub enum Task {
    /// Render generated/ (OpenAPI, discovery, scheme and route glue) from the API's kinds.
    Generate {
        /// Write nothing; fail, listing each stale, missing or extra file, when generated/
        /// is not what the generator renders.
        #[arg(long)]
        check: bool,
    },
    /// Run the whole test suite, installing what it needs first.
    Test {
        /// Passed to the test runner (`cargo nextest run` or `cargo test`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

impl Task {
    /// Runs the task on `project`; the exit code says whether it succeeded.
    pub fn run(self, project: &Project) -> Result<ExitCode> {
        match self {
            Task::Generate { check } => {
                let problems = generate::run(&project.root, project.kinds, check)?;
                Ok(match check && !problems.is_empty() {
                    true => ExitCode::FAILURE,
                    false => ExitCode::SUCCESS,
                })
            }
            Task::Test { args } => {
                let status = test::run_suite(&project.root, &project.suite, &args)?;
                let code = (status.code()).and_then(|c| u8::try_from(c).ok());
                Ok(ExitCode::from(code.unwrap_or(1)))
            }
        }
    }
}

/// `cargo xtask` with the tasks every project has.
#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

/// A project's whole `cargo xtask`: the [`Task`] its command line names, run on `project`.
pub fn main(project: Project) -> ExitCode {
    let task = Cli::parse().task;
    match task.run(&project) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root of a project whose `xtask` crate is at `manifest_dir` (its
/// `CARGO_MANIFEST_DIR`): the directory above it.
pub fn workspace_root(manifest_dir: &str) -> PathBuf {
    let xtask = Path::new(manifest_dir);
    xtask.parent().unwrap_or(xtask).to_path_buf()
}
