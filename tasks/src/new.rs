//! `cargo xtask new DIR`: a new project outside kapi's repository, laid out as kapi's
//! example (`api-types`, `generated`, `server`, `xtask`, a README with its two commands, a
//! `.ci/run`), depending on kapi's crates by path or git URL, with one namespaced kind of
//! version `v1` with a spec and a status, its `generated/` rendered, and the freshness test.
//!
//! The files come from `templates/new/` (handlebars); `generated/` is then rendered by the
//! new project's own `cargo xtask generate`, the command its developers run.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use handlebars::Handlebars;
use heck::{ToKebabCase, ToSnakeCase};

/// Where the new project takes kapi from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A checkout of kapi's repository (its root).
    Path(PathBuf),
    /// kapi's repository, by git URL.
    Git(String),
}

/// What `cargo xtask new` is asked for.
#[derive(Clone, Debug)]
pub struct Options {
    /// The project's directory: absent or empty. Its name names the crates
    /// (`NAME-api`, `NAME-generated`, `NAME-server`, `NAME-xtask`).
    pub dir: PathBuf,
    /// The API group of the example kind (a DNS subdomain with a dot, as `example.com`).
    pub group: String,
    /// The example kind (`UpperCamelCase`).
    pub kind: String,
    /// Where kapi comes from.
    pub kapi: Source,
}

/// The templates: each file's path in the project, and its template.
const TEMPLATES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("../templates/new/Cargo.toml.hbs"),
    ),
    (
        ".cargo/config.toml",
        include_str!("../templates/new/.cargo/config.toml.hbs"),
    ),
    (".ci/run", include_str!("../templates/new/.ci/run.hbs")),
    (".gitignore", include_str!("../templates/new/gitignore.hbs")),
    ("README.md", include_str!("../templates/new/README.md.hbs")),
    (
        "rustfmt.toml",
        include_str!("../templates/new/rustfmt.toml.hbs"),
    ),
    (
        "api-types/Cargo.toml",
        include_str!("../templates/new/api-types/Cargo.toml.hbs"),
    ),
    (
        "api-types/src/lib.rs",
        include_str!("../templates/new/api-types/src/lib.rs.hbs"),
    ),
    (
        "api-types/src/v1.rs",
        include_str!("../templates/new/api-types/src/v1.rs.hbs"),
    ),
    (
        "generated/Cargo.toml",
        include_str!("../templates/new/generated/Cargo.toml.hbs"),
    ),
    (
        "generated/src/lib.rs",
        include_str!("../templates/new/generated/src/lib.rs.hbs"),
    ),
    (
        "server/Cargo.toml",
        include_str!("../templates/new/server/Cargo.toml.hbs"),
    ),
    (
        "server/src/main.rs",
        include_str!("../templates/new/server/src/main.rs.hbs"),
    ),
    (
        "xtask/Cargo.toml",
        include_str!("../templates/new/xtask/Cargo.toml.hbs"),
    ),
    (
        "xtask/src/main.rs",
        include_str!("../templates/new/xtask/src/main.rs.hbs"),
    ),
    (
        "xtask/tests/generated.rs",
        include_str!("../templates/new/xtask/tests/generated.rs.hbs"),
    ),
];

/// The project's name: its directory's, in kebab case (a cargo package name's prefix).
pub fn project_name(dir: &Path) -> Result<String> {
    let base = (dir.file_name())
        .and_then(|name| name.to_str())
        .with_context(|| format!("{}: the directory needs a UTF-8 name", dir.display()))?;
    let name = base.to_kebab_case();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        bail!("{base:?}: a project's name must start with a letter (it names its crates)");
    }
    Ok(name)
}

/// The start-up checks of `options`: nothing is written when they fail.
fn check(options: &Options) -> Result<()> {
    let Options { group, kind, .. } = options;
    let subdomain = kapi_core::validation::dns1123_subdomain(group).is_empty();
    if !group.contains('.') || !subdomain {
        bail!(
            "--group {group:?}: an API group is a DNS subdomain with at least one dot, \
             lower case (as `example.com`)"
        );
    }
    let camel = kind.starts_with(|c: char| c.is_ascii_uppercase())
        && kind.chars().all(|c| c.is_ascii_alphanumeric());
    if !camel || kind.len() > 63 {
        bail!("--kind {kind:?}: a kind is UpperCamelCase letters and digits (as `Widget`)");
    }
    // The names the kind's module imports or Rust reserves.
    const TAKEN: &[&str] = &[
        "Deserialize",
        "JsonSchema",
        "ObjectMeta",
        "Resource",
        "Self",
        "Serialize",
        "Strategy",
    ];
    if TAKEN.contains(&kind.as_str()) {
        bail!("--kind {kind:?}: the name is taken in the kind's module; choose another");
    }
    let dir = &options.dir;
    let empty = match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    if !empty {
        bail!(
            "{}: not empty; a new project needs a directory of its own",
            dir.display()
        );
    }
    Ok(())
}

/// A dependency on the kapi crate in the repository's directory `dir`.
/// (By git URL cargo finds the crate by its name in the repository.)
fn dependency(source: &Source, dir: &str) -> String {
    // A JSON string is a TOML basic string (the same escapes).
    let quoted = |text: &str| serde_json::Value::from(text).to_string();
    match source {
        Source::Path(root) => {
            let path = root.join(dir).display().to_string();
            format!("{{ path = {} }}", quoted(&path))
        }
        Source::Git(url) => format!("{{ git = {} }}", quoted(url)),
    }
}

/// Writes the project's files (not yet `generated/`); returns their paths, relative.
pub fn write(options: &Options) -> Result<Vec<&'static str>> {
    check(options)?;
    let name = project_name(&options.dir)?;
    let data = serde_json::json!({
        "name": name,
        "crate": name.to_snake_case(),
        "group": options.group,
        "kind": options.kind,
        "kapi": dependency(&options.kapi, "kapi"),
        "kapi_tasks": dependency(&options.kapi, "tasks"),
    });
    let mut handlebars = Handlebars::new();
    handlebars.set_strict_mode(true);
    handlebars.register_escape_fn(handlebars::no_escape);
    for (path, template) in TEMPLATES {
        let contents = (handlebars.render_template(template, &data))
            .with_context(|| format!("rendering {path}"))?;
        let file = options.dir.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&file, contents).with_context(|| format!("writing {}", file.display()))?;
    }
    make_executable(&options.dir.join(".ci/run"))?;
    let mut written: Vec<&str> = TEMPLATES.iter().map(|(path, _)| *path).collect();
    // From a checkout, the project starts from the versions of its dependencies kapi's own
    // suite ran with (cargo drops what the project does not use).
    if let Source::Path(root) = &options.kapi
        && root.join("Cargo.lock").is_file()
    {
        std::fs::copy(root.join("Cargo.lock"), options.dir.join("Cargo.lock"))
            .context("copying kapi's Cargo.lock")?;
        written.push("Cargo.lock");
    }
    Ok(written)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;

    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("making {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> Result<()> {
    Ok(())
}

/// `cargo xtask new`: writes the project, then renders its `generated/` with its own
/// `cargo xtask generate`.
pub fn create(options: &Options) -> Result<()> {
    let files = write(options)?;
    let dir = &options.dir;
    println!("created {} ({} files)", dir.display(), files.len());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args(["xtask", "generate"])
        .current_dir(dir)
        .status()
        .context("running `cargo xtask generate` in the new project")?;
    if !status.success() {
        bail!(
            "`cargo xtask generate` in {} failed ({status}): the project is written; run it \
             there again once fixed",
            dir.display()
        );
    }
    println!(
        "next: cd {} && cargo run -p {}-server",
        dir.display(),
        project_name(dir)?
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(dir: &Path) -> Options {
        Options {
            dir: dir.to_path_buf(),
            group: "demo.example.com".into(),
            kind: "Widget".into(),
            kapi: Source::Path("/opt/kapi".into()),
        }
    }

    #[test]
    fn a_project_names_its_crates_after_its_directory() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("My_Project");
        let files = write(&options(&dir)).unwrap();
        assert!(files.contains(&"api-types/src/v1.rs"));
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("my-project-api = { path = \"api-types\" }"),
            "{manifest}"
        );
        assert!(
            manifest.contains("kapi = { path = \"/opt/kapi/kapi\" }"),
            "{manifest}"
        );
        assert!(
            manifest.contains("kapi-tasks = { path = \"/opt/kapi/tasks\" }"),
            "{manifest}"
        );
        let server = std::fs::read_to_string(dir.join("server/src/main.rs")).unwrap();
        assert!(server.contains("my_project_generated::scheme"), "{server}");
        let kind = std::fs::read_to_string(dir.join("api-types/src/v1.rs")).unwrap();
        assert!(kind.contains("group = \"demo.example.com\""), "{kind}");
        assert!(kind.contains("pub struct WidgetSpec {"), "{kind}");
    }

    #[test]
    fn a_git_source_names_each_package() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("demo");
        let mut options = options(&dir);
        options.kapi = Source::Git("https://example.com/kapi.git".into());
        write(&options).unwrap();
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("kapi-tasks = { git = \"https://example.com/kapi.git\" }"),
            "{manifest}"
        );
    }

    #[test]
    fn bad_names_and_a_used_directory_are_refused_before_anything_is_written() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("demo");
        for (group, kind, expected) in [
            (
                "example",
                "Widget",
                "--group \"example\": an API group is a DNS subdomain",
            ),
            ("Demo.example.com", "Widget", "--group \"Demo.example.com\""),
            (
                "demo.example.com",
                "widget",
                "--kind \"widget\": a kind is UpperCamelCase",
            ),
            ("demo.example.com", "Wid-get", "--kind \"Wid-get\""),
            (
                "demo.example.com",
                "Resource",
                "--kind \"Resource\": the name is taken",
            ),
        ] {
            let options = Options {
                group: group.into(),
                kind: kind.into(),
                ..options(&dir)
            };
            let error = write(&options).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{error}");
            assert!(!dir.exists());
        }
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("keep"), "mine").unwrap();
        let error = write(&options(&dir)).unwrap_err().to_string();
        assert!(error.ends_with("not empty; a new project needs a directory of its own"));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let error = project_name(Path::new("/tmp/1st")).unwrap_err().to_string();
        assert!(error.contains("must start with a letter"), "{error}");
    }
}
