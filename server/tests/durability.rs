//! Acknowledged writes survive `kill -9`: concurrent writers create objects over HTTP, the
//! server is killed with SIGKILL while they write, restarted on the same data directory,
//! and every create that was answered 2xx must be there, with the same uid. A few rounds,
//! each checking the acknowledgements of all the rounds before it too. The writers create
//! ConfigMaps and WebApps in `default` (which the server creates itself at every start) and
//! in a namespace of their own. The store runs with a 1 MiB page cache
//! (`--embedded-cache-mib 1`), so pages are evicted and read back all along.

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};
use support::http::Client;
use support::{Server, wait_for};

/// Concurrent writers: each creates one kind in one namespace, see [`collection`].
const WRITERS: usize = 8;
/// Kill/restart cycles.
const ROUNDS: usize = 3;
/// Acknowledged creates to wait for in each round before killing the server (the writers
/// keep writing until it dies).
const ACKNOWLEDGED_BEFORE_KILL: usize = 80;

/// The namespace the test creates, beside `default`.
const NAMESPACE: &str = "durable";

/// A create the server answered 2xx.
#[derive(Clone, Debug)]
struct Acknowledged {
    /// The object's URL path.
    path: String,
    uid: String,
    resource_version: u64,
}

#[test]
fn acknowledged_creates_survive_kill_9() {
    let mut server = Server::start_with(&["--embedded-cache-mib", "1"]);
    let namespace =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    let created = Client::new(server.addr()).post("/api/v1/namespaces", &namespace);
    assert!(
        created.as_ref().is_ok_and(|r| r.status == 201),
        "creating namespace {NAMESPACE}: {created:?}"
    );
    let mut acknowledged: Vec<Acknowledged> = Vec::new();

    for round in 0..ROUNDS {
        let (this_round, refused) = write_until_killed(&mut server, round);
        assert!(
            refused.is_empty(),
            "round {round}: the server refused creates before it was killed:\n{}\n\
             --- server log ---\n{}",
            refused.join("\n"),
            server.log().tail(60)
        );
        acknowledged.extend(this_round);

        server.restart();
        let client = Client::new(server.addr());
        let mut lost = Vec::new();
        for object in &acknowledged {
            match client.get(&object.path) {
                Ok(r) if r.status == 200 && r.json()["metadata"]["uid"] == object.uid.as_str() => {}
                Ok(r) => lost.push(format!("{}: {} {}", object.path, r.status, r.body)),
                Err(e) => lost.push(format!("{}: {e}", object.path)),
            }
        }
        assert!(
            lost.is_empty(),
            "round {round}: {} of {} acknowledged creates are not there after kill -9 and a \
             restart:\n{}\n--- server log ---\n{}",
            lost.len(),
            acknowledged.len(),
            lost.join("\n"),
            server.log().tail(60)
        );

        // Lists see them too, and revisions keep growing after the restart.
        for writer in 0..WRITERS.min(4) {
            let (list, _) = collection(writer, "");
            let list = list.trim_end_matches('/');
            let response = client.get(list).expect("listing after the restart");
            assert_eq!(response.status, 200, "{list}: {response:?}");
            let items = response.json()["items"].as_array().map_or(0, Vec::len);
            let prefix = format!("{list}/");
            let acknowledged_here = (acknowledged.iter())
                .filter(|o| o.path.starts_with(&prefix))
                .count();
            assert!(
                items >= acknowledged_here,
                "{list} lists {items} objects; {acknowledged_here} were acknowledged"
            );
        }
        let newest = acknowledged.iter().map(|o| o.resource_version).max();
        let (path, body) = collection(0, &format!("after-restart-{round}"));
        let response = client
            .post(&path, &body)
            .expect("creating after the restart");
        assert_eq!(
            response.status, 201,
            "create after the restart: {response:?}"
        );
        let revision = resource_version(&response.json());
        assert!(
            revision > newest.unwrap_or(0),
            "the first create after the restart got resourceVersion {revision}, not above \
             the newest acknowledged before the kill ({newest:?})"
        );
    }
}

/// Runs the writers until the server has acknowledged [`ACKNOWLEDGED_BEFORE_KILL`]
/// creates, kills it mid-flight, and returns the acknowledged creates and the answers
/// other than 2xx (none expected).
fn write_until_killed(server: &mut Server, round: usize) -> (Vec<Acknowledged>, Vec<String>) {
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let refused = Arc::new(Mutex::new(Vec::new()));
    let killed = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let client = Client::new(server.addr());
            let (acknowledged, refused, killed) =
                (acknowledged.clone(), refused.clone(), killed.clone());
            thread::spawn(move || {
                for i in 0.. {
                    let name = format!("r{round}-w{writer}-{i}");
                    let (path, body) = collection(writer, &name);
                    match client.post(&path, &body) {
                        Ok(r) if (200..300).contains(&r.status) => {
                            let object = r.json();
                            acknowledged.lock().unwrap().push(Acknowledged {
                                path: format!("{path}/{name}"),
                                uid: object["metadata"]["uid"].as_str().unwrap_or("").into(),
                                resource_version: resource_version(&object),
                            });
                        }
                        Ok(r) => refused
                            .lock()
                            .unwrap()
                            .push(format!("POST {path} ({name}): {} {}", r.status, r.body)),
                        // The server is gone (or going): stop.
                        Err(_) if killed.load(Ordering::SeqCst) => return,
                        Err(e) => {
                            refused
                                .lock()
                                .unwrap()
                                .push(format!("POST {path} ({name}): {e}"));
                            return;
                        }
                    }
                }
            })
        })
        .collect();

    let log = server.log();
    wait_for(
        Duration::from_secs(60),
        &format!("{ACKNOWLEDGED_BEFORE_KILL} acknowledged creates"),
        || {
            format!(
                "acknowledged: {}, refused: {:?}\n--- server log ---\n{}",
                acknowledged.lock().unwrap().len(),
                refused.lock().unwrap(),
                log.tail(60)
            )
        },
        || (acknowledged.lock().unwrap().len() >= ACKNOWLEDGED_BEFORE_KILL).then_some(()),
    );
    killed.store(true, Ordering::SeqCst);
    server.kill_9();
    for writer in writers {
        writer.join().expect("a writer panicked");
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    let refused = refused.lock().unwrap().clone();
    for object in &acknowledged {
        assert!(
            !object.uid.is_empty(),
            "a 2xx create answered without metadata.uid: {object:?}"
        );
    }
    (acknowledged, refused)
}

/// What `writer` creates: the collection path and the body of object `name`. Writers
/// take turns: a ConfigMap in `default`, a WebApp in `default`, a ConfigMap in
/// [`NAMESPACE`], a WebApp in [`NAMESPACE`].
fn collection(writer: usize, name: &str) -> (String, Value) {
    let (namespace, configmap) = match writer % 4 {
        0 => ("default", true),
        1 => ("default", false),
        2 => (NAMESPACE, true),
        _ => (NAMESPACE, false),
    };
    if configmap {
        let body = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name},
            "data": {"written-by": name},
        });
        (format!("/api/v1/namespaces/{namespace}/configmaps"), body)
    } else {
        let image = format!("registry.example/{name}:1");
        let body = json!({
            "apiVersion": "apps.example.dev/v1",
            "kind": "WebApp",
            "metadata": {"name": name},
            "spec": {"replicas": 1, "container": {"image": image}},
        });
        let path = format!("/apis/apps.example.dev/v1/namespaces/{namespace}/webapps");
        (path, body)
    }
}

fn resource_version(object: &Value) -> u64 {
    let version = object["metadata"]["resourceVersion"].as_str().unwrap_or("");
    version
        .parse()
        .unwrap_or_else(|_| panic!("resourceVersion {version:?} is not a revision: {object}"))
}
