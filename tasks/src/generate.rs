//! `cargo xtask generate`: writes everything `kapi-codegen` renders into `generated/`, and
//! `--check`, which writes nothing and fails while `generated/` is stale.
//!
//! Codegen is pure; this module owns the file system and `rustfmt`. Generated Rust goes
//! through `rustfmt --edition 2024` (stdin to stdout), so the committed files are exactly
//! what a check renders. The generator owns `generated/README.md` and everything under
//! [`OWNED_DIRS`]: files there it no longer produces are deleted (and reported by the
//! check). `generated/Cargo.toml` is written by hand, and so may be tests in `tests/`.

use std::collections::BTreeSet;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use kapi_codegen::{ApiModel, FileKind};
use kapi_core::api::KindInfo;

/// What to run when `generated/` is stale.
pub const COMMAND: &str = "cargo xtask generate";

/// Directories of `generated/` whose every file the generator produces.
pub const OWNED_DIRS: &[&str] = &["src", "openapi", "discovery", "docs"];

/// `generated/` in the workspace at `root`.
pub fn generated_dir(root: &Path) -> PathBuf {
    root.join("generated")
}

/// A file of `generated/`, exactly as it is committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Path relative to `generated/`, `/`-separated.
    pub path: String,
    /// Contents (Rust already formatted).
    pub contents: Vec<u8>,
}

/// Renders the files of `generated/` for the API made of `kinds`, its Rust formatted with
/// the `rustfmt.toml` of the workspace at `root`.
pub fn render(root: &Path, kinds: &[&'static KindInfo]) -> Result<Vec<File>> {
    let model = ApiModel::build(kinds).context("the kinds do not make a consistent API")?;
    let files = kapi_codegen::render(&model).context("rendering generated/")?;
    files
        .into_iter()
        .map(|file| {
            let contents = match file.kind {
                FileKind::Rust => rustfmt(root, &file.contents)
                    .with_context(|| format!("formatting generated/{}", file.path))?,
                FileKind::Json | FileKind::Binary | FileKind::Markdown => file.contents,
            };
            Ok(File {
                path: file.path,
                contents,
            })
        })
        .collect()
}

/// `rustfmt --edition 2024`, stdin to stdout, run from the workspace root `root` so it
/// reads the workspace's `rustfmt.toml`.
pub fn rustfmt(root: &Path, source: &[u8]) -> Result<Vec<u8>> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running rustfmt (install it with `rustup component add rustfmt`)")?;
    let mut stdin = child.stdin.take().context("rustfmt's stdin")?;
    let input = source.to_vec();
    // Write from another thread: rustfmt may fill its stdout pipe before reading all input.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().context("waiting for rustfmt")?;
    writer
        .join()
        .map_err(|_| anyhow::anyhow!("writing to rustfmt panicked"))?
        .context("writing to rustfmt")?;
    if !output.status.success() {
        bail!(
            "rustfmt failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(output.stdout)
}

/// How a file of `generated/` differs from what the generator renders.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Problem {
    /// The file's contents differ.
    Stale(String),
    /// The generator renders the file; it is not there.
    Missing(String),
    /// The file is in a directory the generator owns, and the generator no longer renders it.
    Extra(String),
}

impl Problem {
    /// The file's path relative to `generated/`.
    pub fn path(&self) -> &str {
        match self {
            Problem::Stale(path) | Problem::Missing(path) | Problem::Extra(path) => path,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            Problem::Stale(_) => "stale",
            Problem::Missing(_) => "missing",
            Problem::Extra(_) => "extra",
        };
        write!(f, "{what:>7}: generated/{}", self.path())
    }
}

/// Compares `dir` with `files`; writes nothing. Problems are sorted by path.
pub fn check(dir: &Path, files: &[File]) -> Result<Vec<Problem>> {
    let mut problems = Vec::new();
    for file in files {
        let path = dir.join(&file.path);
        match std::fs::read(&path) {
            Ok(contents) if contents == file.contents => {}
            Ok(_) => problems.push(Problem::Stale(file.path.clone())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                problems.push(Problem::Missing(file.path.clone()))
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }
    let rendered: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for path in owned_files(dir)? {
        if !rendered.contains(path.as_str()) {
            problems.push(Problem::Extra(path));
        }
    }
    problems.sort_by(|a, b| a.path().cmp(b.path()).then(a.cmp(b)));
    Ok(problems)
}

/// Makes `dir` hold exactly `files`: writes the files that differ, deletes the ones the
/// generator no longer renders. Returns what it changed, in [`check`]'s terms.
pub fn write(dir: &Path, files: &[File]) -> Result<Vec<Problem>> {
    let problems = check(dir, files)?;
    for problem in &problems {
        let path = dir.join(problem.path());
        match problem {
            Problem::Stale(name) | Problem::Missing(name) => {
                let file = files
                    .iter()
                    .find(|f| &f.path == name)
                    .context("rendered file")?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("creating {}", parent.display()))?;
                }
                std::fs::write(&path, &file.contents)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            Problem::Extra(_) => {
                std::fs::remove_file(&path)
                    .with_context(|| format!("deleting {}", path.display()))?;
                remove_empty_parents(dir, &path)?;
            }
        }
    }
    Ok(problems)
}

/// What a failed check prints: the command to run, then each problem.
pub fn stale_message(problems: &[Problem]) -> String {
    let mut message = format!("generated/ is stale: run `{COMMAND}`\n");
    for problem in problems {
        message.push_str(&format!("  {problem}\n"));
    }
    message
}

/// Whether `generated/` of the workspace at `root` is what `kinds` render: the freshness
/// test of a project (an error lists each stale, missing or extra file, and the command).
pub fn fresh(root: &Path, kinds: &[&'static KindInfo]) -> Result<()> {
    let files = render(root, kinds)?;
    let problems = check(&generated_dir(root), &files)?;
    if !problems.is_empty() {
        bail!("{}", stale_message(&problems));
    }
    Ok(())
}

/// `cargo xtask generate [--check]` for the API made of `kinds`, on `generated/` of the
/// workspace at `root`: prints what it did, and returns the problems found (check) or fixed
/// (write).
pub fn run(root: &Path, kinds: &[&'static KindInfo], check_only: bool) -> Result<Vec<Problem>> {
    let dir = generated_dir(root);
    let dir = dir.as_path();
    let files = render(root, kinds)?;
    if check_only {
        let problems = check(dir, &files)?;
        if problems.is_empty() {
            println!("generated/ is fresh ({} files)", files.len());
        } else {
            eprint!("{}", stale_message(&problems));
        }
        Ok(problems)
    } else {
        let changed = write(dir, &files)?;
        for problem in &changed {
            let action = match problem {
                Problem::Stale(_) => "updated",
                Problem::Missing(_) => "created",
                Problem::Extra(_) => "deleted",
            };
            println!("{action} generated/{}", problem.path());
        }
        println!(
            "generated/: {} files, {} changed",
            files.len(),
            changed.len()
        );
        Ok(changed)
    }
}

/// Files under the [`OWNED_DIRS`] of `dir`, and `README.md`, relative and `/`-separated.
fn owned_files(dir: &Path) -> Result<Vec<String>> {
    let mut files = Vec::new();
    if dir.join("README.md").is_file() {
        files.push("README.md".to_owned());
    }
    for owned in OWNED_DIRS {
        walk(&dir.join(owned), owned, &mut files)?;
    }
    Ok(files)
}

fn walk(dir: &Path, relative: &str, files: &mut Vec<String>) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("listing {}", dir.display())),
    };
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{relative}/{name}");
        if entry.file_type()?.is_dir() {
            walk(&entry.path(), &path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}

/// Removes the directories between `file` and `root` that deleting `file` left empty.
fn remove_empty_parents(root: &Path, file: &Path) -> Result<()> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) {
            break;
        }
        let empty = std::fs::read_dir(d)?.next().is_none();
        if !empty {
            break;
        }
        std::fs::remove_dir(d).with_context(|| format!("deleting {}", d.display()))?;
        dir = d.parent();
    }
    Ok(())
}
