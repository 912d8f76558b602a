//! The file system side: the checked-in inputs read, the declarations written (through
//! `rustfmt`, so the committed files are exactly what a check renders) or checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::extract::{MODULES, Module, Reading, later_tags};
use crate::facts::{Api, Resources};

/// The tag of kube's API modules kube 1.32 ships with (k8s.io/api, apiextensions-apiserver
/// and kube-aggregator share it), whose facts are checked in.
pub const TAG: &str = "v0.32.1";

/// The checked-in inputs, relative to the workspace root.
pub const INPUTS: &str = "apigen/inputs";

/// Where k8s.io/api's round-trip fixtures of the served kinds are checked in.
pub const FIXTURES: &str = "builtin/tests/roundtrip/data";

/// The facts file of a module at `tag`.
pub fn api_facts(root: &Path, module: &Module, tag: &str) -> PathBuf {
    root.join(INPUTS)
        .join(format!("{}-{tag}.json", module.facts))
}

/// The resources file.
pub fn resources_facts(root: &Path) -> PathBuf {
    root.join(INPUTS).join("kube-1.32-resources.json")
}

/// Reads the checked-in inputs: every module's facts (the release's, then those of the
/// later tags its resources name) as one [`Api`].
pub fn inputs(root: &Path) -> Result<(Api, Resources)> {
    let resources: Resources = serde_json::from_str(&read(resources_facts(root))?)?;
    let mut api = release_facts(root, TAG)?;
    for module in MODULES {
        for tag in later_tags(module, &resources, TAG)? {
            api.merge(serde_json::from_str(&read(api_facts(root, module, &tag))?)?)?;
        }
    }
    Ok((api, resources))
}

/// The release's facts (at `tag`) of every module, merged.
fn release_facts(root: &Path, tag: &str) -> Result<Api> {
    let mut modules = MODULES.iter();
    let first = modules.next().context("no modules")?;
    let mut api: Api = serde_json::from_str(&read(api_facts(root, first, tag))?)?;
    for module in modules {
        api.merge(serde_json::from_str(&read(api_facts(root, module, tag))?)?)?;
    }
    Ok(api)
}

fn read(path: PathBuf) -> Result<String> {
    std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
}

/// Every rendered file, by path relative to the workspace root, formatted.
pub fn files(root: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let (api, resources) = inputs(root)?;
    let mut files = BTreeMap::new();
    for (path, text) in crate::render::render(&api, &resources)? {
        let formatted = kapi_tasks::generate::rustfmt(root, text.as_bytes())
            .with_context(|| format!("formatting {path}"))?;
        files.insert(path, formatted);
    }
    Ok(files)
}

/// Writes the rendered files (removing files of the owned directory it no longer renders),
/// or with `check` writes nothing; either way returns what was stale, missing or extra.
pub fn run(root: &Path, check: bool) -> Result<Vec<String>> {
    let files = files(root)?;
    let mut problems = Vec::new();
    for (path, contents) in &files {
        let full = root.join(path);
        match std::fs::read(&full) {
            Ok(existing) if existing == *contents => continue,
            Ok(_) => problems.push(format!("  stale: {path}")),
            Err(_) => problems.push(format!("missing: {path}")),
        }
        if !check {
            if let Some(parent) = full.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&full, contents)?;
        }
    }
    let rendered: BTreeSet<&str> = files.keys().map(String::as_str).collect();
    for dir in crate::render::OWNED_DIRS {
        for path in owned_files(&root.join(dir))? {
            let relative = format!("{dir}/{path}");
            if !rendered.contains(relative.as_str()) {
                problems.push(format!("  extra: {relative}"));
                if !check {
                    std::fs::remove_file(root.join(&relative))?;
                }
            }
        }
    }
    Ok(problems)
}

/// The files under `dir`, as `/`-separated paths relative to it.
fn owned_files(dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(dir) {
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    Ok(out)
}

/// `cargo xtask builtin-inputs`: reduces each module at `tag` (a git directory, as `fetch`
/// brings it; k8s.io/api's first, then those of [`MODULES`]' others given) to its facts
/// file, and the kinds whose resources name a later tag at that tag to a facts file of its
/// own (checked against the release's facts, as just written), and copies the served kinds'
/// round-trip fixtures from k8s.io/api, each at the tag its kind is read at.
pub fn extract_inputs(root: &Path, git_dirs: &[Option<&Path>], tag: &str) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(resources_facts(root))?;
    let resources: Resources = serde_json::from_str(&text)?;
    let laters = (MODULES.iter())
        .map(|module| later_tags(module, &resources, tag))
        .collect::<Result<Vec<_>>>()?;
    let mut disagreements = Vec::new();
    let write = |module: &Module, tag: &str, api: &Api| -> Result<()> {
        let mut text = serde_json::to_string_pretty(api)?;
        text.push('\n');
        std::fs::write(api_facts(root, module, tag), text)?;
        Ok(())
    };
    for (module, git_dir) in MODULES.iter().zip(git_dirs) {
        let Some(git_dir) = git_dir else {
            continue;
        };
        let api = crate::extract::extract(module, git_dir, tag, &resources, Reading::Release)?;
        write(module, tag, &api)?;
        disagreements.extend(api.disagreements);
    }
    let release = match laters.iter().any(|tags| !tags.is_empty()) {
        true => Some(release_facts(root, tag)?),
        false => None,
    };
    for ((module, git_dir), laters) in MODULES.iter().zip(git_dirs).zip(&laters) {
        let (Some(git_dir), Some(release)) = (git_dir, &release) else {
            continue;
        };
        for later in laters {
            let reading = Reading::Later { release };
            let api = crate::extract::extract(module, git_dir, later, &resources, reading)?;
            write(module, later, &api)?;
            disagreements.extend(api.disagreements);
        }
    }
    let Some(git_dir) = git_dirs.first().copied().flatten() else {
        return Ok(disagreements);
    };
    let fixtures = root.join(FIXTURES);
    std::fs::create_dir_all(&fixtures)?;
    for (name, later) in crate::render::fixture_names(&resources) {
        let at = later.as_deref().unwrap_or(tag);
        for extension in ["json", "yaml", "pb"] {
            let file = format!("{name}.{extension}");
            let bytes = crate::extract::git_bytes(
                git_dir,
                &["show", &format!("{at}:testdata/HEAD/{file}")],
            )?;
            std::fs::write(fixtures.join(&file), bytes)?;
        }
    }
    Ok(disagreements)
}
