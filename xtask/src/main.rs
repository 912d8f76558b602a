//! `cargo xtask`: project automation. See `xtask/src/lib.rs`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use kapi_tasks::new::{Options, Source};

/// Project automation for kapi.
#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Task(kapi_tasks::Task),
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
    /// Run Kubernetes 1.20's API-only end-to-end tests (`server/tests/e2e/calibrated.txt`)
    /// against the release server; builds kube's `e2e.test` first (about 10 minutes).
    E2e {
        /// Parallel ginkgo nodes.
        #[arg(long, default_value_t = 8)]
        nodes: usize,
        /// Run only the tests whose names contain one of these.
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
    },
    /// Reduce k8s.io/api (a git directory, as `fetch` brings github.com/kubernetes/api) at
    /// TAG to the facts `apigen/inputs/` keeps (the kinds whose resources name a later tag
    /// at that tag, into a facts file of its own), and copy the served kinds' round-trip
    /// fixtures; `cargo xtask generate` then renders the built-in kinds from them. The
    /// CustomResourceDefinition's and the APIService's modules are read when given.
    BuiltinInputs {
        /// The git directory of github.com/kubernetes/api.
        #[arg(long)]
        from: PathBuf,
        /// The git directory of github.com/kubernetes/apiextensions-apiserver.
        #[arg(long)]
        apiextensions: Option<PathBuf>,
        /// The git directory of github.com/kubernetes/kube-aggregator.
        #[arg(long)]
        aggregator: Option<PathBuf>,
        /// The tag kube's release ships with.
        #[arg(long, default_value = kapi_apigen::generate::TAG)]
        tag: String,
    },
    /// Start a new API server project in DIR (outside this repository), depending on this
    /// checkout of kapi (or on --git URL), with one example kind and its generated/.
    New {
        /// The project's directory (absent or empty); its name names the crates.
        dir: PathBuf,
        /// The example kind's API group.
        #[arg(long, default_value = "demo.example.com")]
        group: String,
        /// The example kind.
        #[arg(long, default_value = "Widget")]
        kind: String,
        /// Depend on kapi by this git URL instead of this checkout's path.
        #[arg(long, value_name = "URL")]
        git: Option<String>,
    },
}

fn main() -> Result<ExitCode> {
    match Cli::parse().command {
        Command::Task(task) => {
            // kapi's own generated files first: the built-in kinds, from apigen's inputs.
            if let kapi_tasks::Task::Generate { check } = &task {
                let problems = kapi_apigen::generate::run(&xtask::project_root(), *check)?;
                for problem in &problems {
                    eprintln!("{problem}");
                }
                if *check && !problems.is_empty() {
                    eprintln!("the built-in kinds are stale: run `cargo xtask generate`");
                    return Ok(ExitCode::FAILURE);
                }
            }
            task.run(&xtask::project())
        }
        Command::BuiltinInputs {
            from,
            apiextensions,
            aggregator,
            tag,
        } => {
            let root = xtask::project_root();
            let dirs = [
                Some(from.as_path()),
                apiextensions.as_deref(),
                aggregator.as_deref(),
            ];
            let disagreements = kapi_apigen::generate::extract_inputs(&root, &dirs, &tag)?;
            for disagreement in disagreements {
                eprintln!("types.go and generated.proto disagree: {disagreement}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::E2e { nodes, only } => {
            let passed = xtask::e2e::run(&xtask::project_root(), nodes, &only)?;
            Ok(match passed {
                true => ExitCode::SUCCESS,
                false => ExitCode::FAILURE,
            })
        }
        Command::Bench { quick, json, only } => {
            let status = xtask::bench::run(&xtask::project_root(), quick, json, &only)?;
            Ok(match status.success() {
                true => ExitCode::SUCCESS,
                false => ExitCode::FAILURE,
            })
        }
        Command::New {
            dir,
            group,
            kind,
            git,
        } => {
            let kapi = match git {
                Some(url) => Source::Git(url),
                None => Source::Path(xtask::project_root()),
            };
            let dir = std::path::absolute(&dir)?;
            kapi_tasks::new::create(&Options {
                dir,
                group,
                kind,
                kapi,
            })?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
