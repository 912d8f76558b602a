//! The differential table of kubectl's commands (`commands.yaml`): each row runs kubectl
//! commands (`create deployment`, `run`, `expose`, `set image`, ...) in a fresh namespace,
//! then reads the object they made; that object must be, field by field, what the same
//! commands, run by the same kubectl, left in the peer kube-apiserver (recorded by
//! [`record_commands`] with each kubectl version), or what a newer kube stores where the row
//! says so (`newer:`, `differs:`, `pending:` with `fields:`, as in the other tables).
//!
//! Compared: the whole object as read back, but for what differs between any two runs (its
//! uid, resourceVersion and creation time, the times of `managedFields`, whose entries
//! are sorted by manager) and the `creationTimestamp: null` kube writes in embedded
//! templates. Uids elsewhere (owner references) are masked, the run's namespace is `$NS`.

use super::{named_rows, overrides, run_namespace, set_pointer, table_dir};
use crate::support;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use support::http::Client;
use support::{Kubectl, Server, Version};

/// The rows and their recording.
const ROWS: &str = "commands.yaml";
const RECORDED: &str = "commands.recorded.json";

/// One row: kubectl commands, and the object they leave.
#[derive(Debug)]
struct Script {
    name: String,
    /// The kubectl versions that run it against kapi.
    versions: Vec<Version>,
    /// The kubectl that records it from the peer, for each version, when another than the
    /// same (kubectl 1.32 writes a CronJob as batch/v1, which kube 1.20 does not serve).
    recorded_with: Option<Version>,
    /// Each command's arguments (`-n $NS` is added).
    commands: Vec<Vec<String>>,
    /// The path of the object read back; `None` for a row that compares the last
    /// command's output instead.
    get: Option<String>,
    /// The path the peer is read at, when another (a version kapi no longer serves).
    peer_get: Option<String>,
    overrides: Map<String, Value>,
}

fn version(text: &str) -> Version {
    match text {
        "1.32" => Version::V1_32,
        "1.20" => Version::V1_20,
        other => panic!("kubectl {other}? (1.32 or 1.20)"),
    }
}

fn key(version: Version) -> &'static str {
    match version {
        Version::V1_32 => "1.32",
        Version::V1_20 => "1.20",
    }
}

fn scripts() -> Vec<Script> {
    (named_rows(ROWS).into_iter())
        .map(|(name, row)| {
            let row = &row;
            let text = |key: &str| row.get(key).and_then(Value::as_str).map(str::to_owned);
            let commands = (row["kubectl"].as_array())
                .unwrap_or_else(|| panic!("row {name:?}: `kubectl:` lists commands"))
                .iter()
                .map(|command| {
                    (command
                        .as_array()
                        .expect("a command is a list of arguments")
                        .iter())
                    .map(|arg| arg.as_str().expect("an argument is text").to_owned())
                    .collect()
                })
                .collect();
            Script {
                versions: match row.get("versions").and_then(Value::as_array) {
                    Some(list) => (list.iter())
                        .map(|v| version(v.as_str().expect("a version is text")))
                        .collect(),
                    None => vec![Version::V1_32, Version::V1_20],
                },
                recorded_with: text("recordedWith").as_deref().map(version),
                commands,
                get: text("get"),
                peer_get: text("peerGet"),
                overrides: overrides(row),
                name,
            }
        })
        .collect()
}

/// `$NS`, `$TLS` (the test certificates' directory) and `$MANIFESTS` (the tests'
/// manifests) in `text` replaced.
fn expand(text: &str, namespace: &str) -> String {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    (text.replace("$NS", namespace))
        .replace("$TLS", &tests.join("tls").display().to_string())
        .replace("$MANIFESTS", &tests.join("manifests").display().to_string())
}

/// Runs `script`'s commands with `kubectl` in `namespace`; then reads back the object at
/// `get`, or (with no `get`) takes the last command's exit code and output, as compared.
fn run(
    kubectl: &Kubectl,
    client: &Client,
    script: &Script,
    get: Option<&str>,
    namespace: &str,
) -> Value {
    let mut last = None;
    for (i, command) in script.commands.iter().enumerate() {
        // First: after `--`, arguments are the container's.
        let mut args = vec!["-n".to_owned(), namespace.to_owned()];
        args.extend(command.iter().map(|a| expand(a, namespace)));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if get.is_none() && i + 1 == script.commands.len() {
            last = Some(kubectl.run(&args));
        } else {
            kubectl.ok(&args);
        }
    }
    let Some(get) = get else {
        let run = last.expect("a row has commands");
        let code = run.status.and_then(|s| s.code());
        return output(code, &run.stdout, namespace);
    };
    let path = expand(get, namespace);
    let response = (client.request("GET", &path, "", None))
        .unwrap_or_else(|e| panic!("row {}: GET {path}: {e}", script.name));
    assert_eq!(
        response.status, 200,
        "row {}: GET {path}: {}",
        script.name, response.body
    );
    compared(
        serde_json::from_str(&response.body).expect("an object"),
        namespace,
    )
}

/// A command's exit code and output as compared: `kubectl diff`'s file names and times,
/// where its hunks start, and every time, resourceVersion and uid in it, masked; the
/// namespace as `$NS`.
fn output(code: Option<i32>, stdout: &str, namespace: &str) -> Value {
    let lines: Vec<String> = (stdout.lines())
        .map(|line| {
            if line.starts_with("diff -u") {
                return "diff -u -N $LIVE $MERGED".to_owned();
            } else if line.starts_with("--- /") {
                return "--- $LIVE".to_owned();
            } else if line.starts_with("+++ /") {
                return "+++ $MERGED".to_owned();
            } else if let Some(ranges) = line.strip_prefix("@@ ") {
                // A hunk's lengths, not where it starts: kube writes an embedded object's
                // unset creation time (`creationTimestamp: null`), kapi leaves it out (as
                // the other tables say), which moves every line after a template's.
                let lengths: Vec<&str> = (ranges.split(' ').take(2))
                    .map(|range| range.split_once(',').map_or("1", |(_, n)| n))
                    .collect();
                return format!("@@ {} @@", lengths.join(" "));
            }
            let line = line.replace(namespace, "$NS");
            let masked = super::mask_run_values(&line);
            match masked.split_once("resourceVersion: ") {
                Some((before, _)) => format!("{before}resourceVersion: $RV"),
                None => mask_times(&masked),
            }
        })
        .collect();
    json!({"exit": code, "stdout": lines})
}

/// `text` with RFC 3339 times (`2026-12-03T11:50:51Z`) as `$TIME`.
fn mask_times(text: &str) -> String {
    let bytes = text.as_bytes();
    let is_time = |at: usize| {
        let shape = b"dddd-dd-ddTdd:dd:ddZ";
        at + shape.len() <= bytes.len()
            && (shape.iter().zip(&bytes[at..])).all(|(s, b)| match s {
                b'd' => b.is_ascii_digit(),
                s => s == b,
            })
    };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        if is_time(at) {
            out.push_str("$TIME");
            at += 20;
        } else {
            let c = text[at..].chars().next().expect("not at the end");
            out.push(c);
            at += c.len_utf8();
        }
    }
    out
}

/// `object` without what differs between runs; uids masked, the namespace as `$NS`.
fn compared(mut object: Value, namespace: &str) -> Value {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for volatile in ["uid", "resourceVersion", "creationTimestamp", "selfLink"] {
            metadata.remove(volatile);
        }
        if let Some(Value::Array(entries)) = metadata.get_mut("managedFields") {
            for entry in entries.iter_mut() {
                if let Some(entry) = entry.as_object_mut() {
                    entry.remove("time");
                    // kube names a manager the client does not name after the client's
                    // program (its user agent's first word): this machine's kubectl 1.32
                    // is `kubectl.1.32`, elsewhere `kubectl`.
                    if (entry.get("manager").and_then(Value::as_str))
                        .is_some_and(|m| m.starts_with("kubectl."))
                    {
                        entry.insert("manager".into(), json!("kubectl"));
                    }
                }
            }
        }
    }
    sort_managed_fields(&mut object);
    // An allocated cluster IP (not `None`) is the allocator's pick.
    super::mask_cluster_ips(&mut object);
    super::drop_null_creation_timestamps(&mut object);
    let text = super::mask_run_values(&object.to_string().replace(namespace, "$NS"));
    serde_json::from_str(&text).expect("still JSON")
}

/// `object`'s `managedFields` in the order of who they are.
fn sort_managed_fields(object: &mut Value) {
    if let Some(Value::Array(entries)) = object.pointer_mut("/metadata/managedFields") {
        super::sort_by_manager(entries);
    }
}

/// Where `expected` and `actual` differ, as JSON pointers with both values.
fn differences(expected: &Value, actual: &Value, at: &str, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let keys: std::collections::BTreeSet<&String> = e.keys().chain(a.keys()).collect();
            for key in keys {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match (e.get(key), a.get(key)) {
                    (Some(e), Some(a)) => differences(e, a, &here, out),
                    (Some(e), None) => out.push(format!("{here}: expected {e}, missing")),
                    (None, Some(a)) => out.push(format!("{here}: not expected, got {a}")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                differences(e, a, &format!("{at}/{i}"), out);
            }
        }
        (Value::Array(e), Value::Array(a)) if e.iter().chain(a).all(Value::is_string) => {
            // Lines of output: both, whole, to read side by side.
            let text = |lines: &Vec<Value>| {
                let lines = lines.iter().filter_map(Value::as_str);
                lines.collect::<Vec<_>>().join("\n    ")
            };
            out.push(format!(
                "{at}: expected\n    {}\n  got\n    {}",
                text(e),
                text(a)
            ));
        }
        (e, a) if e != a => out.push(format!("{at}: expected {e}, got {a}")),
        _ => {}
    }
}

/// The recorded objects, by row name and kubectl version.
fn recorded() -> BTreeMap<String, Value> {
    let path = table_dir().join(RECORDED);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (record it: see {ROWS})", path.display()));
    let recorded: Value = serde_json::from_str(&text).expect("the recording is JSON");
    (recorded["answers"]
        .as_object()
        .expect("`answers` is an object")
        .iter())
    .map(|(k, v)| (k.clone(), v.clone()))
    .collect()
}

/// What `script` run by `version` must leave: the recording, with the row's `fields`.
fn expected(script: &Script, version: Version, recorded: &BTreeMap<String, Value>) -> Value {
    let mut object = (recorded.get(&script.name))
        .and_then(|answers| answers.get(key(version)))
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "row {:?} has no recording for kubectl {}: record it (see {ROWS})",
                script.name,
                key(version)
            )
        });
    if let Some(fields) = script.overrides.get("fields").and_then(Value::as_object) {
        for (pointer, value) in fields {
            set_pointer(&mut object, pointer, value.clone());
        }
    }
    // An added entry takes its place.
    sort_managed_fields(&mut object);
    object
}

/// Runs every row that `version` runs against a fresh kapi and compares what they left.
fn check(version: Version) {
    let scripts: Vec<Script> = (scripts().into_iter())
        .filter(|s| s.versions.contains(&version))
        .collect();
    let recorded = recorded();
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    let client = Client::new(server.addr());
    let mut failures = Vec::new();
    for script in &scripts {
        let namespace = run_namespace();
        kubectl.ok(&["create", "namespace", &namespace]);
        let actual = run(&kubectl, &client, script, script.get.as_deref(), &namespace);
        let mut found = Vec::new();
        differences(
            &expected(script, version, &recorded),
            &actual,
            "",
            &mut found,
        );
        if !found.is_empty() {
            failures.push(format!("row {}:\n  {}", script.name, found.join("\n  ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows of {ROWS} ({}) differ from kube-apiserver:\n\n{}",
        failures.len(),
        scripts.len(),
        version.label(),
        failures.join("\n\n")
    );
}

support::for_both_versions! {
    kubectl_commands_leave_what_kube_apiserver_leaves =>
        kubectl_1_32_commands_leave_what_kube_apiserver_leaves,
        kubectl_1_20_commands_leave_what_kube_apiserver_leaves;
}

fn kubectl_commands_leave_what_kube_apiserver_leaves(version: Version) {
    check(version);
}

/// Every row has a recording for each version that runs it, and every recording a row.
#[test]
fn every_command_row_is_recorded() {
    let recorded = recorded();
    let scripts = scripts();
    for script in &scripts {
        for version in &script.versions {
            let answer = recorded
                .get(&script.name)
                .and_then(|a| a.get(key(*version)));
            assert!(
                answer.is_some(),
                "row {} has no recording for kubectl {}: record again",
                script.name,
                key(*version)
            );
        }
    }
    let names: std::collections::BTreeSet<&String> = scripts.iter().map(|s| &s.name).collect();
    let stale: Vec<&String> = recorded.keys().filter(|k| !names.contains(k)).collect();
    assert!(stale.is_empty(), "recordings without a row: {stale:?}");
}

/// Records the peer's objects for every row and version into `commands.recorded.json`
/// (see `commands.yaml`). Needs a running peer: `KAPI_PEER_DIR` names its directory.
#[test]
#[ignore = "needs the kube-apiserver of shared/peer/ running"]
fn record_commands() {
    let peer = support::Peer::from_env();
    let client = peer.client();
    let credentials = vec![
        format!("--certificate-authority={}", peer.ca.display()),
        format!("--token={}", peer.token),
    ];
    let version = client
        .request("GET", "/version", "", None)
        .expect("the peer answers");
    let version: Value = serde_json::from_str(&version.body).expect("/version is JSON");
    let mut answers = Map::new();
    for script in scripts() {
        let mut by_version = Map::new();
        for wanted in &script.versions {
            let with = script.recorded_with.unwrap_or(*wanted);
            let kubectl = Kubectl::at(with, peer.url, credentials.clone());
            let namespace = run_namespace();
            kubectl.ok(&["create", "namespace", &namespace]);
            let get = script.peer_get.as_deref().or(script.get.as_deref());
            let object = run(&kubectl, &client, &script, get, &namespace);
            // What the next version's run would collide with (a node port, a cluster-scoped
            // name): the peer has no namespace controller to clean up.
            if let Some(get) = get {
                let _ = client.request("DELETE", &expand(get, &namespace), "", None);
            }
            by_version.insert(key(*wanted).to_owned(), object);
        }
        answers.insert(script.name.clone(), Value::Object(by_version));
    }
    let recorded = json!({
        "recordedFrom": format!("kube-apiserver {} (shared/peer/)", version["gitVersion"].as_str().unwrap_or("?")),
        "answers": answers,
    });
    let mut text = serde_json::to_string_pretty(&recorded).expect("JSON");
    text.push('\n');
    std::fs::write(table_dir().join(RECORDED), text).expect("writing the recording");
}
