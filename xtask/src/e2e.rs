//! `cargo xtask e2e`: Kubernetes' own end-to-end tests that need only an API server, run
//! against the release `kapi-server`.
//!
//! The tests are kube 1.20.2's (`test/e2e`, built from Debian bookworm's `kubernetes`
//! source package, the one kubectl 1.20 comes from, with Debian's Go). Which of them need
//! only an API server was calibrated by running them against kube-apiserver 1.20.2 alone
//! (no controller manager, no scheduler, no node: `../shared/peer/`): those that passed
//! there are listed in `server/tests/e2e/calibrated.txt`, with the few kapi leaves out and
//! why. This runs every listed test against kapi and fails when one does not pass.
//!
//! Building `e2e.test` takes about 10 minutes on 2 cores (a `go` build of most of
//! Kubernetes), and running the set about 5: more than the test suite's budget in CI, so
//! this is a command of its own. The build is kept in `target/tools/e2e-1.20/`;
//! `KAPI_E2E_DIR` names another directory holding `e2e.test` and `ginkgo`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use kapi_tasks::test::{Prerequisite, kubectl_1_20_path};

/// The calibrated list, relative to the workspace root.
pub const CALIBRATED: &str = "server/tests/e2e/calibrated.txt";

/// Where the e2e binaries are built, relative to the workspace root.
const TOOLS: &str = "target/tools/e2e-1.20";

/// One test of the list: its full name, and why kapi leaves it out (if it does).
#[derive(Debug, PartialEq, Eq)]
pub struct Listed {
    /// Its full name, as ginkgo reports it (without `[Top Level] `).
    pub name: String,
    /// Why kapi leaves it out.
    pub excluded: Option<String>,
}

/// Reads the list: a test's full name per line; `x NAME  # REASON` for one left out;
/// `#` starts a comment line.
pub fn parse(text: &str) -> Result<Vec<Listed>> {
    let mut tests = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let listed = match line.strip_prefix("x ") {
            Some(rest) => {
                let (name, reason) = rest.split_once("  # ").with_context(|| {
                    format!("line {}: an excluded test needs `  # reason`", number + 1)
                })?;
                Listed {
                    name: name.trim().to_owned(),
                    excluded: Some(reason.trim().to_owned()),
                }
            }
            None => Listed {
                name: line.to_owned(),
                excluded: None,
            },
        };
        tests.push(listed);
    }
    Ok(tests)
}

/// A ginkgo focus matching exactly `names` (ginkgo's full text has a `[Top Level] `
/// prefix and single spaces where a name may show two).
pub fn focus(names: &[&str]) -> String {
    let one = |name: &str| {
        let mut pattern = String::new();
        for word in name.split_whitespace() {
            if !pattern.is_empty() {
                pattern.push_str(r"\s+");
            }
            for c in word.chars() {
                if "\\.+*?()|[]{}^$".contains(c) {
                    pattern.push('\\');
                }
                pattern.push(c);
            }
        }
        format!("{pattern}$")
    };
    names.iter().map(|n| one(n)).collect::<Vec<_>>().join("|")
}

/// Builds kube 1.20.2's `e2e.test` and `ginkgo` into `$1` from Debian's source package.
const BUILD_E2E: &str = r#"set -eu
out="$1"
grep -q 'deb-src' /etc/apt/sources.list.d/debian.sources || sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpkg-dev golang-go rsync golang-github-modern-go-reflect2-dev >/dev/null
src="$out/src"
mkdir -p "$src"
cd "$src"
ls -d kubernetes-*/ >/dev/null 2>&1 || apt-get source kubernetes
cd kubernetes-*/
mkdir -p .go/src/k8s.io
[ -L .go/src/k8s.io/kubernetes ] || ln -s ../../.. .go/src/k8s.io/kubernetes
# The vendored reflect2 1.0.1 crashes under Go >= 1.18 (json-iterator): Debian's 1.0.2.
R=vendor/github.com/modern-go/reflect2
if ! [ -f $R/go_above_118.go ]; then
  cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.go /usr/share/gocode/src/github.com/modern-go/reflect2/*.s $R/
fi
for f in $R/*.go; do
  [ -f "/usr/share/gocode/src/github.com/modern-go/reflect2/$(basename "$f")" ] || rm -f "$f"
done
env GOPATH="$PWD/.go" CGO_ENABLED=0 HOME="$out/home" make WHAT="test/e2e/e2e.test vendor/github.com/onsi/ginkgo/ginkgo"
cp _output/bin/e2e.test _output/bin/ginkgo "$out/"
"#;

/// The directory holding `e2e.test` and `ginkgo`: `$KAPI_E2E_DIR`, else built now.
fn binaries(root: &Path) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("KAPI_E2E_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let dir = root.join(TOOLS);
    if !(dir.join("e2e.test").is_file() && dir.join("ginkgo").is_file()) {
        eprintln!(
            "xtask: building kube 1.20.2's e2e.test into {}",
            dir.display()
        );
        std::fs::create_dir_all(&dir)?;
        let status = Command::new("sh")
            .args(["-c", BUILD_E2E, "sh"])
            .arg(&dir)
            .status()
            .context("building e2e.test")?;
        if !status.success() {
            bail!("building e2e.test failed: {status}");
        }
    }
    Ok(dir)
}

/// The release server, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the release `kapi-server` on a free loopback port with an empty data
/// directory; its address once `/readyz` answers.
fn start_server(root: &Path, data: &Path) -> Result<(Server, String)> {
    let binary = root.join("target/release/kapi-server");
    let mut child = Command::new(&binary)
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    // Its first line says where it listens; the rest is drained (a closed pipe would
    // fail the server's later writes).
    let stdout = child.stdout.take().context("the server's output")?;
    let mut stdout = std::io::BufReader::new(stdout);
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first)?;
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let server = Server(child);
    let url = (first.split_whitespace())
        .find(|w| w.starts_with("http://"))
        .with_context(|| format!("the server said {first:?}, not where it listens"))?
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    let address = url.trim_start_matches("http://").to_owned();
    let ready = || {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::net::TcpStream::connect(&address) else {
            return false;
        };
        let request = format!("GET /readyz HTTP/1.0\r\nHost: {address}\r\n\r\n");
        let mut answer = String::new();
        stream.write_all(request.as_bytes()).is_ok()
            && stream.read_to_string(&mut answer).is_ok()
            && (answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200"))
    };
    while !ready() {
        if Instant::now() > deadline {
            bail!("the server at {url} was not ready within a minute");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok((server, url))
}

/// Runs the calibrated set against kapi with `nodes` parallel ginkgo nodes, and only
/// the tests whose names contain one of `only` when it is not empty. Whether every test
/// run passed (the reports name each; one ginkgo did not run counts as failed).
pub fn run(root: &Path, nodes: usize, only: &[String]) -> Result<bool> {
    let listed = parse(&std::fs::read_to_string(root.join(CALIBRATED))?)?;
    let kubectl = Prerequisite::kubectl_1_20(root);
    kubectl.ensure(root)?;
    let dir = binaries(root)?;
    let status = Command::new("cargo")
        .args(["build", "--release", "-p", "kapi-server"])
        .current_dir(root)
        .status()?;
    if !status.success() {
        return Ok(false);
    }
    let run: Vec<&str> = (listed.iter())
        .filter(|t| t.excluded.is_none())
        .filter(|t| only.is_empty() || only.iter().any(|o| t.name.contains(o.as_str())))
        .map(|t| t.name.as_str())
        .collect();
    for left in listed.iter().filter(|t| t.excluded.is_some()) {
        eprintln!(
            "xtask: left out: {} ({})",
            left.name,
            left.excluded.as_deref().unwrap_or_default()
        );
    }
    let work = tempdir(root)?;
    let (_server, url) = start_server(root, &work.join("data"))?;
    let kubeconfig = work.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- cluster: {{server: {url}}}\n  name: kapi\n\
             users:\n- name: admin\n  user: {{}}\ncontexts:\n- context: {{cluster: kapi, user: admin}}\n  name: kapi\n\
             current-context: kapi\n"
        ),
    )?;
    let reports = work.join("reports");
    eprintln!("xtask: {} tests of {CALIBRATED} against {url}", run.len());
    let status = Command::new(dir.join("ginkgo"))
        .arg(format!("-nodes={nodes}"))
        .args(["-noColor", "-succinct"])
        .arg(dir.join("e2e.test"))
        .arg("--")
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .args([
            "--provider=skeleton",
            "--num-nodes=0",
            "--e2e-verify-service-account=false",
        ])
        .arg(format!(
            "--kubectl-path={}",
            kubectl_1_20_path(root).display()
        ))
        .arg(format!("--report-dir={}", reports.display()))
        .arg(format!("--ginkgo.focus={}", focus(&run)))
        .current_dir(&work)
        .status()
        .context("running ginkgo")?;
    let passed = junit_passed(&reports)?;
    let missing: Vec<&&str> = run
        .iter()
        .filter(|n| !passed.contains(&squash(n)))
        .collect();
    eprintln!(
        "xtask: {} of {} passed",
        run.len() - missing.len(),
        run.len()
    );
    for name in &missing {
        eprintln!("xtask: did not pass: {name}");
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(status.success() && missing.is_empty())
}

/// A fresh directory under `target/`.
fn tempdir(root: &Path) -> Result<PathBuf> {
    let dir = root.join(format!("target/e2e-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// A name with its whitespace runs made single spaces.
fn squash(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The names of the tests the junit reports of `dir` say passed.
fn junit_passed(dir: &Path) -> Result<BTreeSet<String>> {
    let mut passed = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(passed);
    };
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "xml") {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        for case in text.split("<testcase ").skip(1) {
            let body_end = case.find("</testcase>").unwrap_or(case.len());
            let body = &case[..body_end];
            let Some(name) = attribute(case, "name") else {
                continue;
            };
            let failed = body.contains("<failure") || body.contains("<skipped");
            if !failed {
                passed.insert(squash(name.trim_start_matches("[Top Level] ")));
            }
        }
    }
    Ok(passed)
}

/// An XML attribute's value (unescaped for the entities ginkgo writes).
fn attribute(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    let end = start + tag[start..].find('"')?;
    let raw = &tag[start..end];
    Some(
        raw.replace("&#34;", "\"")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_parses_tests_and_exclusions() {
        let listed =
            parse("# comment\n[sig-a] A works\n\nx [sig-b] B v1beta1  # removed in 1.25\n")
                .unwrap();
        assert_eq!(
            listed,
            vec![
                Listed {
                    name: "[sig-a] A works".into(),
                    excluded: None
                },
                Listed {
                    name: "[sig-b] B v1beta1".into(),
                    excluded: Some("removed in 1.25".into())
                },
            ]
        );
        assert!(parse("x [sig-b] B without a reason\n").is_err());
    }

    #[test]
    fn the_focus_matches_names_exactly() {
        assert_eq!(
            focus(&["[k8s.io] Pods should work  [Conformance]", "a.b"]),
            r"\[k8s\.io\]\s+Pods\s+should\s+work\s+\[Conformance\]$|a\.b$"
        );
    }

    #[test]
    fn junit_reports_say_which_passed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("junit_01.xml"),
            r#"<testsuite><testcase name="[Top Level] [sig-a] A &#34;x&#34; works" classname="e2e"></testcase>
<testcase name="[Top Level] [sig-b] B" classname="e2e"><failure type="Failure">no</failure></testcase>
<testcase name="[Top Level] [sig-c] C" classname="e2e"><skipped></skipped></testcase></testsuite>"#,
        )
        .unwrap();
        let passed = junit_passed(dir.path()).unwrap();
        assert_eq!(
            passed.into_iter().collect::<Vec<_>>(),
            vec![r#"[sig-a] A "x" works"#]
        );
    }
}
