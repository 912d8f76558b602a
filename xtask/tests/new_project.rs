//! `cargo xtask new` end to end: a project written outside the repository (sharing this
//! workspace's target directory and, through `new`, its `Cargo.lock`, so that only what
//! differs compiles), its own `cargo xtask generate --check` and `cargo xtask test`, and its
//! server, which serves Kubernetes' core set only, driven with kubectl 1.32.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// The project's directory name, which names its crates (`widgets-demo-server`, ...).
const NAME: &str = "widgets-demo";
const GROUP: &str = "widgets.example.com";

/// How long a server or a watch may take to say what is awaited.
const DEADLINE: Duration = Duration::from_secs(60);

/// This workspace's target directory, which the project builds into.
fn target_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent()
        .expect("target/tmp is in the target directory")
        .to_path_buf()
}

/// How long one of the project's cargo commands may take (they compile its crates).
const CARGO_DEADLINE: Duration = Duration::from_secs(20 * 60);

/// Runs `command` to its end within `deadline`, in a process group of its own: past the
/// deadline (a build waiting on a lock forever, a server that started after all) the whole
/// group is killed and the test fails.
fn run_within(mut command: Command, what: &str, deadline: Duration) -> Output {
    use std::os::unix::process::CommandExt as _;

    let child = (command.stdout(Stdio::piped()).stderr(Stdio::piped()))
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let group = format!("-{}", child.id());
    let (done, finished) = channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let Ok(output) = finished.recv_timeout(deadline) else {
        let _ = Command::new("kill").args(["-9", "--", &group]).status();
        panic!("{what} took over {deadline:?}");
    };
    output.unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// [`run_within`] [`CARGO_DEADLINE`], asserting the command succeeds.
fn run_ok(command: Command, what: &str) -> Output {
    let output = run_within(command, what, CARGO_DEADLINE);
    assert!(
        output.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `cargo ARGS` in `dir`, building into this workspace's target directory.
fn cargo(dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    command
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir());
    run_ok(command, &format!("cargo {args:?} in {}", dir.display()))
}

/// kubectl 1.32 (`$KAPI_KUBECTL`, as `cargo xtask test` exports it), each request within
/// [`DEADLINE`].
fn kubectl(server: &str) -> Command {
    let mut command = Command::new(kapi_tasks::test::kubectl_1_32_path());
    command.arg(format!("--server={server}"));
    command.arg(format!("--request-timeout={}s", DEADLINE.as_secs()));
    command
}

/// Runs `kubectl ARGS` (with `stdin`), asserting it succeeds; its stdout.
fn kubectl_ok(server: &str, args: &[&str], stdin: &str) -> String {
    let mut child = kubectl(server)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running kubectl");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "kubectl {args:?}: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The lines a child prints, as they come.
fn lines(child: &mut Child) -> Receiver<String> {
    let stdout = child.stdout.take().expect("piped stdout");
    let (send, receive) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if send.send(line).is_err() {
                return;
            }
        }
    });
    receive
}

/// The first line of `lines` that `wanted` accepts, within [`DEADLINE`].
fn wait_for(lines: &Receiver<String>, what: &str, wanted: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if wanted(&line) => return line,
            Ok(_) => {}
            Err(e) => panic!("no line with {what} within {DEADLINE:?}: {e}"),
        }
    }
}

/// Kills the child when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_new_project_generates_tests_and_serves_its_kind_with_the_core_set_only() {
    // Removed however the test ends (after the processes below, dropped before it).
    let parent = (tempfile::Builder::new().prefix("kapi-new-"))
        .tempdir()
        .unwrap();
    let dir = parent.path().join(NAME);
    assert!(
        !dir.starts_with(xtask::project_root()),
        "outside the repository"
    );

    // `cargo xtask new`, as kapi's developers run it (it renders generated/ itself).
    let mut new = Command::new(env!("CARGO_BIN_EXE_xtask"));
    new.args([
        "new",
        dir.to_str().unwrap(),
        "--group",
        GROUP,
        "--kind",
        "Gadget",
    ])
    .env("CARGO_TARGET_DIR", target_dir());
    let new = run_ok(new, "cargo xtask new");
    let said = String::from_utf8_lossy(&new.stdout);
    assert!(
        said.contains(&format!("cargo run -p {NAME}-server")),
        "{said}"
    );
    for file in [
        "README.md",
        ".ci/run",
        "Cargo.lock",
        "generated/openapi/v2.json",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }

    // Its own tasks work there.
    let check = cargo(&dir, &["xtask", "generate", "--check"]);
    assert!(String::from_utf8_lossy(&check.stdout).contains("generated/ is fresh"));
    cargo(&dir, &["xtask", "test"]);
    cargo(&dir, &["build", "-p", &format!("{NAME}-server")]);
    let binary = target_dir().join("debug").join(format!("{NAME}-server"));

    // A flag that needs a set the server was built without is a start-up error naming it.
    for (flags, set) in [
        (&["--authorization-mode=RBAC"][..], "RBAC"),
        (
            &[
                "--proxy-client-cert-file=c.pem",
                "--proxy-client-key-file=k.pem",
            ][..],
            "AGGREGATION",
        ),
    ] {
        let mut run = Command::new(&binary);
        run.args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.join("refused"))
            .args(flags);
        let output = run_within(run, "the server with a flag of a missing set", DEADLINE);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "needs Kubernetes' {set} set, which this server was built without"
            )),
            "{stderr}"
        );
    }

    // The server, as the example's: the same flags and start-up lines.
    let server = Command::new(&binary)
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut server = Killed(server);
    let said = lines(&mut server.0);
    let listening = wait_for(&said, "listening on", |l| l.starts_with("listening on "));
    let url = listening.trim_start_matches("listening on ").to_owned();
    let hint = wait_for(&said, "try: kubectl", |l| l.starts_with("try: kubectl"));
    assert!(hint.ends_with("get gadgets -A"), "{hint}");

    // create, get, apply --server-side, explain.
    let gadget = |name: &str, message: &str| {
        format!(
            "{{\"apiVersion\": \"{GROUP}/v1\", \"kind\": \"Gadget\", \"metadata\": {{\"name\": \
             \"{name}\", \"namespace\": \"default\"}}, \"spec\": {{\"message\": \"{message}\", \
             \"replicas\": 2}}}}"
        )
    };
    kubectl_ok(&url, &["create", "-f", "-"], &gadget("first", "hello"));
    let listed = kubectl_ok(&url, &["get", "gadgets", "-n", "default"], "");
    let header: Vec<&str> = listed.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "MESSAGE", "REPLICAS", "READY", "AGE"],
        "{listed}"
    );
    assert!(
        listed.contains("first") && listed.contains("hello"),
        "{listed}"
    );
    let applied = kubectl_ok(
        &url,
        &[
            "apply",
            "--server-side",
            "--field-manager=tester",
            "-f",
            "-",
        ],
        &gadget("applied", "by apply"),
    );
    assert!(applied.contains("serverside-applied"), "{applied}");
    let object = kubectl_ok(
        &url,
        &[
            "get",
            "gadget",
            "applied",
            "-n",
            "default",
            "-o",
            "json",
            "--show-managed-fields",
        ],
        "",
    );
    let object: serde_json::Value = serde_json::from_str(&object).unwrap();
    assert_eq!(object["spec"]["message"], "by apply");
    assert_eq!(object["metadata"]["managedFields"][0]["manager"], "tester");
    assert_eq!(object["metadata"]["managedFields"][0]["operation"], "Apply");
    let explained = kubectl_ok(&url, &["explain", "gadget.spec"], "");
    assert!(
        explained.contains(&format!("GROUP:      {GROUP}")),
        "{explained}"
    );
    assert!(explained.contains("replicas\t<integer>"), "{explained}");

    // watch: the listed objects, then one created while it watches.
    let watch = kubectl(&url)
        .args(["get", "gadgets", "-n", "default", "--watch", "-o", "name"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut watch = Killed(watch);
    let seen = lines(&mut watch.0);
    wait_for(&seen, "gadget first", |l| l.ends_with("/first"));
    kubectl_ok(
        &url,
        &["create", "-f", "-"],
        &gadget("second", "while watched"),
    );
    wait_for(&seen, "gadget second", |l| {
        l == format!("gadget.{GROUP}/second")
    });

    // Kubernetes' core set only: no RBAC, CRD, webhook or APIService route, discovery or
    // schema.
    let groups = kubectl_ok(&url, &["get", "--raw", "/apis"], "");
    let groups: serde_json::Value = serde_json::from_str(&groups).unwrap();
    let names: Vec<&str> = (groups["groups"].as_array().unwrap().iter())
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["coordination.k8s.io", "events.k8s.io", GROUP]);
    let resources = kubectl_ok(&url, &["api-resources", "-o", "name"], "");
    let mut resources: Vec<&str> = resources.lines().collect();
    resources.sort_unstable();
    assert_eq!(
        resources,
        [
            "configmaps",
            "events",
            "events.events.k8s.io",
            &format!("gadgets.{GROUP}"),
            "leases.coordination.k8s.io",
            "namespaces",
        ]
    );
    for path in [
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        "/apis/apiregistration.k8s.io/v1/apiservices",
        "/apis/authorization.k8s.io/v1",
    ] {
        let output = kubectl(&url).args(["get", "--raw", path]).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{path} is served");
        assert!(stderr.contains("NotFound"), "{path}: {stderr}");
    }
    let v2 = kubectl_ok(&url, &["get", "--raw", "/openapi/v2"], "");
    let v2: serde_json::Value = serde_json::from_str(&v2).unwrap();
    let v3 = kubectl_ok(&url, &["get", "--raw", "/openapi/v3"], "");
    let v3: serde_json::Value = serde_json::from_str(&v3).unwrap();
    let schemas = v2["definitions"].as_object().unwrap().keys();
    let paths =
        (v2["paths"].as_object().unwrap().keys()).chain(v3["paths"].as_object().unwrap().keys());
    for name in schemas.chain(paths) {
        for set in [
            "rbac",
            "apiextensions",
            "admissionregistration",
            "apiregistration",
            "authorization.k8s",
            "authentication.k8s",
        ] {
            assert!(!name.contains(set), "{name} in the OpenAPI documents");
        }
    }
    assert!(
        v3["paths"].get(format!("apis/{GROUP}/v1")).is_some(),
        "{v3}"
    );

    drop(watch);
    drop(server);
}
