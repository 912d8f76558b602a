//! The example controller (`webapp-controller`, package `kapi-example-controller`, written
//! with kube-rs on the `api-types` types) against the real server: a WebApp created with
//! kubectl becomes Ready with the status the controller applies on `/status` (owned by
//! `webapp-controller` in `managedFields`), a paused one reports `Paused`, a spec change
//! moves `observedGeneration`; and leader election on a Lease between two controllers:
//! one reconciles, a SIGTERM hands the Lease over at once, a `kill -9` only once the
//! Lease has gone unrenewed for the lease duration.
//!
//! The controller binary is the workspace's, beside `kapi-server` (`cargo xtask test`
//! builds it: the package's own tests need it).

use crate::support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::http::Client;
use support::{Kubectl, Server, Version, wait_for};

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";
const LEASE: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases/webapp-controller";
/// How long a reconciliation may take to show.
const RECONCILE: Duration = Duration::from_secs(30);

/// `webapp-controller`, beside `kapi-server`.
fn binary() -> PathBuf {
    let path =
        std::path::Path::new(env!("CARGO_BIN_EXE_kapi-server")).with_file_name("webapp-controller");
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p kapi-example-controller` (cargo xtask test does)",
        path.display()
    );
    path
}

/// A kubeconfig naming the plain test server (no credentials).
fn kubeconfig(server: &Server) -> PathBuf {
    let dir = tempfile::Builder::new()
        .prefix("kapi-controller-")
        .tempdir()
        .unwrap()
        .keep();
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: kapi\n\
         clusters: [{{name: kapi, cluster: {{server: \"{}\"}}}}]\n\
         users: [{{name: kapi, user: {{}}}}]\n\
         contexts: [{{name: kapi, context: {{cluster: kapi, user: kapi}}}}]\n",
        server.url()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// A running controller, its log in a file; killed when dropped.
struct Controller {
    child: Child,
    identity: String,
    log: PathBuf,
}

impl Controller {
    fn start(server: &Server, identity: &str, extra: &[&str]) -> Controller {
        let log = std::env::temp_dir().join(format!(
            "kapi-controller-{}-{identity}.log",
            std::process::id()
        ));
        let child = Command::new(binary())
            .arg(format!("--kubeconfig={}", kubeconfig(server).display()))
            .arg(format!("--identity={identity}"))
            .args(extra)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("starting webapp-controller");
        Controller {
            child,
            identity: identity.to_owned(),
            log,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// How many statuses it applied.
    fn applied(&self) -> usize {
        self.log().matches("applied the status").count()
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn webapp(client: &Client, name: &str) -> Value {
    client.get(&format!("{WEBAPPS}/{name}")).unwrap().json()
}

/// The WebApp once its Ready condition has `reason` for its current generation.
#[track_caller]
fn wait_reason(client: &Client, name: &str, reason: &str, controllers: &[&Controller]) -> Value {
    wait_for(
        RECONCILE,
        &format!("WebApp {name} to be reconciled to {reason}"),
        || {
            let logs: Vec<String> = controllers
                .iter()
                .map(|c| format!("--- {}:\n{}", c.identity, c.log()))
                .collect();
            format!("{:#}\n{}", webapp(client, name), logs.join("\n"))
        },
        || {
            let object = webapp(client, name);
            let ready = ready_condition(&object)?;
            let current =
                object["metadata"]["generation"] == object["status"]["observedGeneration"];
            (current && ready["reason"] == reason).then_some(object)
        },
    )
}

/// Creates a WebApp `name` with `replicas`.
#[track_caller]
fn create(client: &Client, name: &str, replicas: i64) {
    let webapp = json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
        "metadata": {"name": name}, "spec": {"replicas": replicas, "container": {"image": "nginx"}}});
    let response = client.post(WEBAPPS, &webapp).unwrap();
    assert_eq!(response.status, 201, "{response:?}");
}

fn ready_condition(object: &Value) -> Option<Value> {
    let conditions = object["status"]["conditions"].as_array()?;
    conditions.iter().find(|c| c["type"] == "Ready").cloned()
}

/// A Lease's `MicroTime`.
#[track_caller]
fn micro_time(value: &Value) -> std::time::SystemTime {
    humantime::parse_rfc3339(value.as_str().expect("a timestamp")).expect("an RFC 3339 time")
}

fn holder(client: &Client) -> Option<String> {
    let lease = client.get(LEASE).ok()?;
    (lease.status == 200).then(|| {
        lease.json()["spec"]["holderIdentity"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    })
}

#[test]
fn a_webapp_becomes_ready_paused_and_observed() {
    let server = Server::start();
    let client = server.client();
    let controller = Controller::start(&server, "solo", &[]);
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let manifest = kubectl.write_file(
        "web.yaml",
        "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata:\n  name: web\nspec:\n  replicas: 3\n  container:\n    image: nginx:1.27\n",
    );
    kubectl.ok(&["create", "-f", &manifest]);

    let ready = wait_reason(&client, "web", "Available", &[&controller]);
    let status = &ready["status"];
    assert_eq!(status["replicas"], 3, "{ready:#}");
    assert_eq!(status["readyReplicas"], 3, "{ready:#}");
    assert_eq!(status["observedGeneration"], 1, "{ready:#}");
    let condition = ready_condition(&ready).unwrap();
    assert_eq!(condition["status"], "True", "{ready:#}");
    assert_eq!(condition["observedGeneration"], 1, "{ready:#}");
    assert!(condition["lastTransitionTime"].is_string(), "{ready:#}");
    let entries = ready["metadata"]["managedFields"].as_array().unwrap();
    let owner = entries
        .iter()
        .find(|e| e["manager"] == "webapp-controller")
        .unwrap_or_else(|| panic!("{ready:#}"));
    assert_eq!(owner["operation"], "Apply", "{ready:#}");
    assert_eq!(owner["subresource"], "status", "{ready:#}");
    let owned = &owner["fieldsV1"]["f:status"];
    for field in [
        "f:replicas",
        "f:readyReplicas",
        "f:observedGeneration",
        "f:conditions",
    ] {
        assert!(owned.get(field).is_some(), "{field} owned: {ready:#}");
    }
    assert!(
        owner["fieldsV1"].get("f:spec").is_none(),
        "no spec owned: {ready:#}"
    );

    let patch_spec = |patch: &str| {
        kubectl.ok(&["patch", "webapp", "web", "--type=merge", "-p", patch]);
    };

    // Paused: not ready, for the new generation.
    patch_spec(r#"{"spec":{"paused":true}}"#);
    let paused = wait_reason(&client, "web", "Paused", &[&controller]);
    assert_eq!(paused["status"]["observedGeneration"], 2, "{paused:#}");
    assert_eq!(paused["status"]["readyReplicas"], 0, "{paused:#}");
    assert_eq!(
        ready_condition(&paused).unwrap()["status"],
        "False",
        "{paused:#}"
    );

    // Resumed and scaled: Available again, at the generation after.
    patch_spec(r#"{"spec":{"paused":false,"replicas":5}}"#);
    let scaled = wait_reason(&client, "web", "Available", &[&controller]);
    assert_eq!(scaled["status"]["observedGeneration"], 3, "{scaled:#}");
    assert_eq!(scaled["status"]["readyReplicas"], 5, "{scaled:#}");

    // Each change it made is an Event on the WebApp, reported by the controller.
    let events = client
        .get("/apis/events.k8s.io/v1/namespaces/default/events")
        .unwrap()
        .json();
    let reasons: Vec<&str> = (events["items"].as_array().unwrap().iter())
        .filter(|e| {
            e["regarding"]["name"] == "web" && e["reportingController"] == "webapp-controller"
        })
        .filter_map(|e| e["reason"].as_str())
        .collect();
    assert!(
        reasons.contains(&"Available") && reasons.contains(&"Paused"),
        "{events:#}"
    );
    let described = kubectl.ok(&["get", "events", "--field-selector=involvedObject.name=web"]);
    assert!(described.stdout.contains("Paused"), "{}", described.stdout);
}

#[test]
fn one_leader_reconciles_and_hands_over() {
    let server = Server::start();
    let client = server.client();
    let flags = [
        "--leader-elect",
        "--leader-elect-lease-duration=4s",
        "--leader-elect-renew-deadline=3s",
        "--leader-elect-retry-period=500ms",
    ];
    let a = Controller::start(&server, "a", &flags);
    let b = Controller::start(&server, "b", &flags);
    let first = wait_for(RECONCILE, "a leader", String::new, || {
        holder(&client).filter(|h| !h.is_empty())
    });
    let (leader, other) = if first == "a" { (a, b) } else { (b, a) };

    create(&client, "one", 1);
    wait_reason(&client, "one", "Available", &[&leader, &other]);
    // Its log line follows the write the test saw.
    wait_for(
        RECONCILE,
        "the leader to log its write",
        || leader.log(),
        || (leader.applied() >= 1).then_some(()),
    );
    assert_eq!(other.applied(), 0, "the other did not:\n{}", other.log());
    let transitions = client.get(LEASE).unwrap().json()["spec"]["leaseTransitions"]
        .as_i64()
        .unwrap();

    // SIGTERM: the leader releases the Lease; the other takes it at its next try.
    let mut leader = leader;
    leader.signal("-TERM");
    let terminated = Instant::now();
    assert!(
        support::wait_exit(&mut leader.child, Duration::from_secs(10)).is_some_and(|s| s.success()),
        "{}",
        leader.log()
    );
    let took = wait_for(
        Duration::from_secs(10),
        "the other to hold the Lease",
        || other.log(),
        || {
            (holder(&client).as_deref() == Some(other.identity.as_str()))
                .then(|| terminated.elapsed())
        },
    );
    assert!(took < Duration::from_secs(3), "took over after {took:?}");
    let lease = client.get(LEASE).unwrap().json();
    assert_eq!(
        lease["spec"]["leaseTransitions"].as_i64().unwrap(),
        transitions + 1,
        "{lease:#}"
    );
    create(&client, "two", 2);
    wait_reason(&client, "two", "Available", &[&other]);

    // kill -9: no release; a new candidate takes the Lease once it has stayed unrenewed
    // for the lease duration.
    let c = Controller::start(&server, "c", &flags);
    wait_for(
        RECONCILE,
        "c to try",
        || c.log(),
        || c.log().contains("attempting to acquire").then_some(()),
    );
    other.signal("-KILL");
    // Its last renewal, read once it can renew no more (the times are this machine's).
    let killed = client.get(LEASE).unwrap().json();
    let renewed = micro_time(&killed["spec"]["renewTime"]);
    let taken = wait_for(
        Duration::from_secs(30),
        "c to hold the Lease",
        || c.log(),
        || {
            let lease = client.get(LEASE).unwrap().json();
            (lease["spec"]["holderIdentity"] == "c").then_some(lease)
        },
    );
    let acquired = micro_time(&taken["spec"]["acquireTime"]);
    let waited = acquired.duration_since(renewed).unwrap_or_default();
    assert!(
        waited >= Duration::from_secs(4),
        "c took the Lease {waited:?} after its last renewal, within the 4s lease: {taken:#}"
    );
    create(&client, "three", 1);
    wait_reason(&client, "three", "Available", &[&c]);
    drop(leader);
}
