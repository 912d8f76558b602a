//! `cargo xtask`: project automation. See `xtask/src/lib.rs`.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// Project automation for kapi.
#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Render generated/ (OpenAPI, discovery, scheme and route glue) from api-types.
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
    /// Print kapi's performance figures beside the machine's limits (see
    /// `server/benches/kapi/main.rs`).
    Bench {
        /// Tiny sizes: checks that every measurement runs, measures nothing.
        #[arg(long)]
        quick: bool,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
        /// Run only these parts (`requests`, `collections`, `fanout`), beside the limits.
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
    },
}

fn main() -> Result<ExitCode> {
    match Cli::parse().command {
        Task::Generate { check } => {
            let dir = xtask::generate::generated_dir();
            let problems = xtask::generate::run(api_types::KINDS, &dir, check)?;
            let stale = check && !problems.is_empty();
            Ok(if stale {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Task::Bench { quick, json, only } => {
            let status = xtask::bench::run(&xtask::project_root(), quick, json, &only)?;
            Ok(if status.success() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Task::Test { args } => {
            let status = xtask::test::run_suite(&xtask::project_root(), &args)?;
            let code = status
                .code()
                .and_then(|c| u8::try_from(c).ok())
                .unwrap_or(1);
            Ok(ExitCode::from(code))
        }
    }
}
