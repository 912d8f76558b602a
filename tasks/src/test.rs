//! `cargo xtask test`: a project's whole suite, the command its CI and README give.
//!
//! A thin orchestrator: first make sure every [`Prerequisite`] the tests use is present
//! (checked first, installed only when missing), then run the workspace's tests with
//! `cargo nextest` when it is installed (plus doctests, which nextest does not run), with
//! `cargo test` otherwise, with the [`Suite`]'s features.
//!
//! A prerequisite may hand the test run an environment variable naming where it is
//! (`KAPI_KUBECTL`, `KAPI_KUBECTL_1_20`, `KAPI_ETCD`), so that tests never guess.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use anyhow::{Context, Result, bail};

/// What a project's suite needs: the cargo features it enables (`package/feature`), and
/// what it needs besides Rust.
#[derive(Debug, Default)]
pub struct Suite {
    /// Enabled for the whole run (`--features`), so that tests behind them run.
    pub features: Vec<String>,
    /// Made present before the tests run.
    pub prerequisites: Vec<Prerequisite>,
}

/// Something the tests need besides Rust.
#[derive(Clone, Debug)]
pub struct Prerequisite {
    /// What it is, for messages.
    pub name: &'static str,
    /// A command that succeeds when it is present.
    pub check: Vec<String>,
    /// Text the check must print on stdout (a version), when set: present but another
    /// version counts as missing.
    pub expect: Option<&'static str>,
    /// Commands that install it, run in order.
    pub install: Vec<Vec<String>>,
    /// An environment variable (name, value) given to the test run: where it is.
    pub env: Option<(&'static str, String)>,
}

impl Prerequisite {
    /// A Python module, installed with pip from `requirement` (`package==version`): present
    /// when `module` imports and the installed `package` is that version.
    pub fn python_module(module: &'static str, requirement: &'static str) -> Prerequisite {
        let (package, version) = requirement.split_once("==").unwrap_or((requirement, ""));
        let check = format!(
            "import sys, importlib.metadata, {module}\n\
             sys.exit(importlib.metadata.version({package:?}) != {version:?})"
        );
        Prerequisite {
            name: requirement,
            check: command(&["python3", "-c", &check]),
            expect: None,
            install: vec![command(&[
                "python3",
                "-m",
                "pip",
                "install",
                "--quiet",
                requirement,
            ])],
            env: None,
        }
    }

    /// kubectl 1.32, the current client the kubectl tests drive, exported as
    /// `KAPI_KUBECTL`. Installed with `apt-get install kubectl` when missing (the package
    /// comes from Google's cloud-sdk apt repository; Debian has no kubectl 1.32).
    pub fn kubectl_1_32() -> Prerequisite {
        let kubectl = kubectl_1_32_path().display().to_string();
        Prerequisite {
            name: "kubectl 1.32 (apt package `kubectl` of Google's cloud-sdk repository)",
            check: vec![kubectl.clone(), "version".into(), "--client".into()],
            expect: Some("v1.32."),
            install: vec![command(&["apt-get", "install", "--yes", "kubectl"])],
            env: Some(("KAPI_KUBECTL", kubectl)),
        }
    }

    /// kubectl 1.20, the oldest client the kubectl tests drive, exported as
    /// `KAPI_KUBECTL_1_20`: Debian bookworm's `kubernetes-client` package, downloaded with
    /// `apt-get download` and unpacked (`dpkg -x`) into `target/tools/kubectl-1.20/`
    /// without installing it, because it conflicts with the `kubectl` package.
    pub fn kubectl_1_20(root: &Path) -> Prerequisite {
        let kubectl = kubectl_1_20_path(root).display().to_string();
        let unpack_into = root.join(KUBECTL_1_20_DIR).display().to_string();
        Prerequisite {
            name: "kubectl 1.20 (Debian's `kubernetes-client`, unpacked into target/tools)",
            check: vec![kubectl.clone(), "version".into(), "--client".into()],
            expect: Some("v1.20."),
            install: vec![command(&[
                "sh",
                "-c",
                UNPACK_KUBERNETES_CLIENT,
                "sh",
                &unpack_into,
            ])],
            env: Some(("KAPI_KUBECTL_1_20", kubectl)),
        }
    }

    /// A Debian package providing `binary` (checked with `binary --version`), installed
    /// with apt-get (after `apt-get update` when apt does not know the package yet).
    pub fn debian(name: &'static str, package: &'static str, binary: &'static str) -> Prerequisite {
        Prerequisite {
            name,
            check: command(&[binary, "--version"]),
            expect: None,
            install: vec![command(&["sh", "-c", APT_INSTALL, "sh", package])],
            env: None,
        }
    }

    /// etcd (Debian's `etcd-server`), exported as `KAPI_ETCD` for the etcd tests.
    pub fn etcd() -> Prerequisite {
        Prerequisite {
            env: Some(("KAPI_ETCD", "/usr/bin/etcd".into())),
            ..Prerequisite::debian(
                "etcd (Debian's `etcd-server`)",
                "etcd-server",
                "/usr/bin/etcd",
            )
        }
    }

    /// Present, or installed now.
    pub fn ensure(&self, root: &Path) -> Result<()> {
        if self.is_present(root) {
            return Ok(());
        }
        eprintln!("xtask: installing {}", self.name);
        for command in &self.install {
            let status = run(command, root, &[])?;
            if !status.success() {
                bail!(
                    "installing {} failed: `{}` exited with {status}",
                    self.name,
                    command.join(" ")
                );
            }
        }
        if !self.is_present(root) {
            bail!("{} is still missing after installing it", self.name);
        }
        Ok(())
    }

    fn is_present(&self, root: &Path) -> bool {
        let Some((program, args)) = self.check.split_first() else {
            return false;
        };
        let output = Command::new(program).args(args).current_dir(root).output();
        output.is_ok_and(|o| {
            let stdout = String::from_utf8_lossy(&o.stdout);
            o.status.success() && self.expect.is_none_or(|text| stdout.contains(text))
        })
    }
}

/// Installs the Debian package `$1`, running `apt-get update` first only when apt does not
/// know it yet.
const APT_INSTALL: &str = r#"set -eu
known() { apt-cache policy "$1" | grep -q 'Candidate: [0-9]'; }
known "$1" || apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y "$1"
"#;

/// Where kubectl 1.20 is unpacked, relative to the workspace root.
const KUBECTL_1_20_DIR: &str = "target/tools/kubectl-1.20";

/// Downloads Debian's `kubernetes-client` (kubectl 1.20) and unpacks it into `$1`.
/// `apt-get update` runs only when apt does not know a 1.20 candidate yet.
const UNPACK_KUBERNETES_CLIENT: &str = r#"set -eu
candidate() { apt-cache policy kubernetes-client | grep -q 'Candidate: 1\.20\.'; }
candidate || apt-get update
if ! candidate; then
    echo "apt offers no kubernetes-client 1.20.x:" >&2
    apt-cache policy kubernetes-client >&2
    exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
apt-get download kubernetes-client
rm -rf "$1"
mkdir -p "$1"
dpkg -x kubernetes-client_*.deb "$1"
"#;

/// kubectl 1.20: `$KAPI_KUBECTL_1_20`, else where `cargo xtask test` unpacks it.
pub fn kubectl_1_20_path(root: &Path) -> PathBuf {
    match std::env::var_os("KAPI_KUBECTL_1_20") {
        Some(path) => PathBuf::from(path),
        None => root.join(KUBECTL_1_20_DIR).join("usr/bin/kubectl"),
    }
}

/// kubectl 1.32: `$KAPI_KUBECTL`, else `/usr/bin/kubectl`. When that is the Google Cloud
/// SDK's dispatcher (which runs the `kubectl.1.NN` beside it that matches the server's
/// version), its `kubectl.1.32` sibling, so that the version under test never depends on
/// what the server reports.
pub fn kubectl_1_32_path() -> PathBuf {
    if let Some(path) = std::env::var_os("KAPI_KUBECTL") {
        return PathBuf::from(path);
    }
    let kubectl = PathBuf::from("/usr/bin/kubectl");
    let pinned = (kubectl.canonicalize().ok())
        .and_then(|real| Some(real.parent()?.join("kubectl.1.32")))
        .filter(|sibling| sibling.is_file());
    pinned.unwrap_or(kubectl)
}

/// Runs the whole `suite` of the workspace at `root`; `args` go to the test runner (a
/// filter, `--nocapture` after `--`, ...). Returns the runner's status.
pub fn run_suite(root: &Path, suite: &Suite, args: &[String]) -> Result<ExitStatus> {
    let mut env = Vec::new();
    for prerequisite in &suite.prerequisites {
        prerequisite.ensure(root)?;
        env.extend(prerequisite.env.clone());
    }
    let features = suite.features.join(",");
    for (name, value) in &env {
        eprintln!("xtask: {name}={value}");
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if quiet_success(&["cargo", "nextest", "--version"], root) {
        let mut nextest = vec!["cargo", "nextest", "run", "--workspace"];
        nextest.extend(features_args(&features));
        nextest.push("--no-fail-fast");
        nextest.extend(&args);
        let status = run(&nextest, root, &env)?;
        // nextest does not run doctests.
        let mut doc = vec!["cargo", "test", "--workspace", "--doc"];
        doc.extend(features_args(&features));
        let doc = run(&doc, root, &env)?;
        Ok(if status.success() { doc } else { status })
    } else {
        let mut test = vec!["cargo", "test", "--workspace"];
        test.extend(features_args(&features));
        test.push("--no-fail-fast");
        test.extend(&args);
        run(&test, root, &env)
    }
}

/// `--features LIST`, when there are any.
fn features_args(features: &str) -> Vec<&str> {
    match features.is_empty() {
        true => Vec::new(),
        false => vec!["--features", features],
    }
}

/// Runs `command` from `root` with `env` added, saying what it runs.
pub fn run<S: AsRef<str>>(
    command: &[S],
    root: &Path,
    env: &[(&str, String)],
) -> Result<ExitStatus> {
    let command: Vec<&str> = command.iter().map(AsRef::as_ref).collect();
    eprintln!("xtask: {}", command.join(" "));
    let (program, args) = command.split_first().context("empty command")?;
    Command::new(program)
        .args(args)
        .envs(env.iter().map(|(name, value)| (name, value)))
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
            expect: None,
            install: vec![command(install)],
            env: None,
        }
    }

    #[test]
    fn a_present_prerequisite_is_not_installed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
        // Installing would fail.
        prerequisite(&["true"], &["false"]).ensure(&root).unwrap();
    }

    #[test]
    fn a_missing_prerequisite_is_installed_then_checked_again() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
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

    #[test]
    fn a_python_module_is_present_in_its_pinned_version_only() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
        // pip is there (it installs the others): in the version it reports, not another.
        let output = Command::new("python3")
            .args(["-m", "pip", "--version"])
            .output();
        let output = String::from_utf8(output.unwrap().stdout).unwrap();
        let version = output
            .split_whitespace()
            .nth(1)
            .expect("pip VERSION from ...");
        let pinned: &'static str = format!("pip=={version}").leak();
        assert!(Prerequisite::python_module("pip", pinned).is_present(&root));
        assert!(!Prerequisite::python_module("pip", "pip==0.0.1").is_present(&root));
        assert!(
            !Prerequisite::python_module("no_such_module", "no-such-module==1").is_present(&root)
        );
    }

    #[test]
    fn another_version_counts_as_missing() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
        let mut wanted = prerequisite(&["echo", "Client Version: v1.20.2"], &["false"]);
        wanted.expect = Some("v1.20.");
        wanted.ensure(&root).unwrap();

        let mut other = prerequisite(&["echo", "Client Version: v1.33.1"], &["true"]);
        other.expect = Some("v1.20.");
        let error = other.ensure(&root).unwrap_err();
        assert_eq!(
            error.to_string(),
            "thing is still missing after installing it"
        );
    }
}
