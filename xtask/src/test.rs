//! `cargo xtask test`: the project's whole suite, the command CI and the README give.
//!
//! A thin orchestrator: first make sure every [`Prerequisite`] the tests use is present
//! (checked first, installed only when missing), then run the workspace's tests with
//! `cargo nextest` when it is installed (plus doctests, which nextest does not run), with
//! `cargo test` otherwise. New needs (etcd, kubectl 1.20 from apt) are new entries in
//! [`prerequisites`].

use std::path::Path;
use std::process::{Command, ExitStatus};

use anyhow::{Context, Result, bail};

/// `openapi-spec-validator` on PyPI: validates the generated OpenAPI documents.
pub const OPENAPI_SPEC_VALIDATOR: &str = "openapi-spec-validator==0.9.0";

/// Something the tests need besides Rust.
#[derive(Debug)]
pub struct Prerequisite {
    /// What it is, for messages.
    pub name: &'static str,
    /// A command that succeeds when it is present.
    pub check: Vec<String>,
    /// Commands that install it, run in order.
    pub install: Vec<Vec<String>>,
}

impl Prerequisite {
    /// A Python module, installed with pip from `requirement` (`package==version`).
    pub fn python_module(module: &'static str, requirement: &'static str) -> Prerequisite {
        Prerequisite {
            name: requirement,
            check: command(&["python3", "-c", &format!("import {module}")]),
            install: vec![command(&[
                "python3",
                "-m",
                "pip",
                "install",
                "--quiet",
                requirement,
            ])],
        }
    }

    /// Present, or installed now.
    pub fn ensure(&self, root: &Path) -> Result<()> {
        if quiet_success(&self.check, root) {
            return Ok(());
        }
        eprintln!("xtask: installing {}", self.name);
        for command in &self.install {
            let status = run(command, root)?;
            if !status.success() {
                bail!(
                    "installing {} failed: `{}` exited with {status}",
                    self.name,
                    command.join(" ")
                );
            }
        }
        if !quiet_success(&self.check, root) {
            bail!("{} is still missing after installing it", self.name);
        }
        Ok(())
    }
}

/// Everything the suite needs besides Rust.
pub fn prerequisites() -> Vec<Prerequisite> {
    vec![Prerequisite::python_module(
        "openapi_spec_validator",
        OPENAPI_SPEC_VALIDATOR,
    )]
}

/// Runs the whole suite from `root`; `args` go to the test runner (a filter, `--nocapture`
/// after `--`, ...). Returns the runner's status.
pub fn run_suite(root: &Path, args: &[String]) -> Result<ExitStatus> {
    for prerequisite in prerequisites() {
        prerequisite.ensure(root)?;
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if quiet_success(&["cargo", "nextest", "--version"], root) {
        let mut nextest = vec!["cargo", "nextest", "run", "--workspace", "--no-fail-fast"];
        nextest.extend(&args);
        let status = run(&nextest, root)?;
        // nextest does not run doctests.
        let doc = run(&["cargo", "test", "--workspace", "--doc"], root)?;
        Ok(if status.success() { doc } else { status })
    } else {
        let mut test = vec!["cargo", "test", "--workspace", "--no-fail-fast"];
        test.extend(&args);
        run(&test, root)
    }
}

fn run<S: AsRef<str>>(command: &[S], root: &Path) -> Result<ExitStatus> {
    let command: Vec<&str> = command.iter().map(AsRef::as_ref).collect();
    eprintln!("xtask: {}", command.join(" "));
    let (program, args) = command.split_first().context("empty command")?;
    Command::new(program)
        .args(args)
        .current_dir(root)
        .status()
        .with_context(|| format!("running `{}`", command.join(" ")))
}

fn quiet_success<S: AsRef<str>>(command: &[S], root: &Path) -> bool {
    let command: Vec<&str> = command.iter().map(AsRef::as_ref).collect();
    let Some((program, args)) = command.split_first() else {
        return false;
    };
    let output = Command::new(program).args(args).current_dir(root).output();
    output.is_ok_and(|o| o.status.success())
}

fn command(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prerequisite(check: &[&str], install: &[&str]) -> Prerequisite {
        Prerequisite {
            name: "thing",
            check: command(check),
            install: vec![command(install)],
        }
    }

    #[test]
    fn a_present_prerequisite_is_not_installed() {
        let root = crate::project_root();
        // Installing would fail.
        prerequisite(&["true"], &["false"]).ensure(&root).unwrap();
    }

    #[test]
    fn a_missing_prerequisite_is_installed_then_checked_again() {
        let root = crate::project_root();
        let marker =
            std::env::temp_dir().join(format!("xtask-prerequisite-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let marker = marker.to_str().unwrap();
        prerequisite(&["test", "-e", marker], &["touch", marker])
            .ensure(&root)
            .unwrap();
        assert!(Path::new(marker).exists());
        std::fs::remove_file(marker).unwrap();

        let error = prerequisite(&["false"], &["true"])
            .ensure(&root)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "thing is still missing after installing it"
        );
        let error = prerequisite(&["false"], &["false"])
            .ensure(&root)
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("installing thing failed: `false` exited with"),
            "{error}"
        );
    }
}
