//! Lists and watches controllers rely on, against the real `kapi-server`: `kubectl wait`,
//! chunked and filtered `kubectl get` (1.32 and 1.20), resourceVersion semantics of get and
//! list, a watch resumed from before the watch cache's history (410, then a relist
//! recovers), consistent pages under concurrent writes, 200 concurrent watchers with a
//! stalled one, and open watches ending promptly on SIGTERM. The kubectl scenarios, the
//! expired watch and the expired continue token run on the embedded store and (with the
//! `etcd` feature, as `etcd::*`) on an etcd of its own.
//!
//! Nothing waits for a fixed time: each event or line is awaited with a deadline.

use crate::support;

/// Lists' bytes against the slow path.
#[path = "lists/encoding.rs"]
mod encoding;

use std::collections::BTreeSet;
use std::io::Write as _;
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::http::{Client, Watch};
use support::{Backend, Kubectl, Server, Version, on_both_backends, wait_for};

/// How long one event, line or condition may take.
const EVENT: Duration = Duration::from_secs(20);

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";

on_both_backends! {
    kubectl_1_32_wait_for_condition => kubectl_wait_for_condition(Version::V1_32);
    kubectl_1_20_wait_for_condition => kubectl_wait_for_condition(Version::V1_20);
    kubectl_1_32_get_in_chunks => kubectl_get_in_chunks(Version::V1_32);
    kubectl_1_20_get_in_chunks => kubectl_get_in_chunks(Version::V1_20);
    kubectl_1_32_get_with_selectors => kubectl_get_with_selectors(Version::V1_32);
    kubectl_1_20_get_with_selectors => kubectl_get_with_selectors(Version::V1_20);
    a_watch_from_an_expired_revision_gets_410_and_a_relist_recovers => expired_watch_relists();
    periodic_compaction_expires_old_continue_tokens => compaction_expires_continue_tokens();
}

fn webapp(name: &str, labels: Value, image: &str) -> Value {
    json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
        "metadata": {"name": name, "labels": labels},
        "spec": {"replicas": 1, "container": {"image": image}}})
}

#[track_caller]
fn create(client: &Client, name: &str, labels: Value) -> Value {
    let response = client
        .post(WEBAPPS, &webapp(name, labels, "nginx:1.27"))
        .unwrap();
    assert_eq!(response.status, 201, "{response:?}");
    response.json()
}

#[track_caller]
fn get(client: &Client, path: &str) -> Value {
    let response = client.get(path).unwrap();
    assert_eq!(response.status, 200, "{path}: {response:?}");
    response.json()
}

fn rv(object: &Value) -> String {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn names(list: &Value) -> Vec<String> {
    (list["items"].as_array().unwrap().iter())
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `kubectl wait --for=condition=Ready wa/web` returns once another client's status
/// update sets the condition.
fn kubectl_wait_for_condition(version: Version, backend: Backend) {
    let server = Server::start_on(backend);
    let client = Client::new(server.addr());
    let kubectl = Kubectl::new(version, &server);
    create(&client, "web", json!({}));

    let mut wait = kubectl.spawn(&[
        "wait",
        "--for=condition=Ready",
        "wa/web",
        "-n",
        "default",
        "--timeout=60s",
    ]);
    server.wait_for_watch(EVENT, "metadata.name");
    let mut web = get(&client, &format!("{WEBAPPS}/web"));
    web["status"] = json!({"conditions": [{"type": "Ready", "status": "True",
        "reason": "Serving", "message": "all replicas ready",
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    let response = client.put(&format!("{WEBAPPS}/web/status"), &web).unwrap();
    assert_eq!(response.status, 200, "{response:?}");
    let line = wait.wait_line(EVENT, "condition met", |l| l.contains("condition met"));
    assert_eq!(line, "webapp.apps.example.dev/web condition met");
}

/// `kubectl get wa --chunk-size=2` over 7 objects lists all 7, in 4 requests of 2.
fn kubectl_get_in_chunks(version: Version, backend: Backend) {
    let server = Server::start_on(backend);
    let client = Client::new(server.addr());
    let kubectl = Kubectl::new(version, &server);
    let expected: Vec<String> = (1..=7).map(|i| format!("web-{i}")).collect();
    for name in &expected {
        create(&client, name, json!({}));
    }
    let run = kubectl.ok(&["get", "wa", "-n", "default", "--chunk-size=2", "-v=6"]);
    let listed: Vec<String> = run
        .table()
        .column("NAME")
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    assert_eq!(listed, expected, "{}", run.stdout);
    let requests: Vec<&str> = (run.stderr.lines())
        .filter(|l| l.contains("/webapps?") && l.contains("limit=2"))
        .collect();
    assert_eq!(requests.len(), 4, "one request per page:\n{}", run.stderr);
    let continued = requests.iter().filter(|l| l.contains("continue=")).count();
    assert_eq!(
        continued, 3,
        "pages after the first continue:\n{}",
        run.stderr
    );
}

/// `kubectl get wa -l 'tier in (web,api),!canary'` and `--field-selector
/// metadata.name=web` (and the kind's selectable `spec.container.image`); `kubectl get wa
/// -A --field-selector metadata.namespace=other` lists only that namespace's objects.
fn kubectl_get_with_selectors(version: Version, backend: Backend) {
    let server = Server::start_on(backend);
    let client = Client::new(server.addr());
    let kubectl = Kubectl::new(version, &server);
    create(&client, "web", json!({"tier": "web"}));
    create(&client, "api", json!({"tier": "api"}));
    create(
        &client,
        "web-canary",
        json!({"tier": "web", "canary": "true"}),
    );
    create(&client, "db", json!({"tier": "db"}));
    let response = client
        .post(WEBAPPS, &webapp("old", json!({}), "nginx:1.0"))
        .unwrap();
    assert_eq!(response.status, 201, "{response:?}");

    let column = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["get", "wa", "-n", "default"];
        all.extend_from_slice(args);
        let run = kubectl.ok(&all);
        (run.table().column("NAME").iter())
            .map(|s| (*s).to_owned())
            .collect()
    };
    assert_eq!(column(&["-l", "tier in (web,api),!canary"]), ["api", "web"]);
    assert_eq!(column(&["--field-selector", "metadata.name=web"]), ["web"]);
    assert_eq!(
        column(&["--field-selector", "spec.container.image=nginx:1.0"]),
        ["old"]
    );
    assert_eq!(
        column(&["-l", "tier=web", "--field-selector", "metadata.name!=web"]),
        ["web-canary"]
    );
    let run = kubectl.fails(&[
        "get",
        "wa",
        "-n",
        "default",
        "--field-selector",
        "spec.replicas=1",
    ]);
    run.stderr_has("field label not supported: spec.replicas");

    // Across namespaces, `metadata.namespace` picks one.
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}});
    let response = client.post("/api/v1/namespaces", &namespace).unwrap();
    assert_eq!(response.status, 201, "{response:?}");
    for name in ["x", "y"] {
        let response = (client.post(
            "/apis/apps.example.dev/v1/namespaces/other/webapps",
            &webapp(name, json!({}), "nginx:1.27"),
        ))
        .unwrap();
        assert_eq!(response.status, 201, "{response:?}");
    }
    let in_namespace = |namespace: &str| {
        let selector = format!("metadata.namespace={namespace}");
        kubectl.ok(&["get", "wa", "-A", "--field-selector", &selector])
    };
    let run = in_namespace("other");
    let table = run.table();
    assert_eq!(
        table.column("NAMESPACE"),
        ["other", "other"],
        "{}",
        run.stdout
    );
    assert_eq!(table.column("NAME"), ["x", "y"], "{}", run.stdout);
    let run = in_namespace("default");
    assert_eq!(run.table().column("NAME").len(), 5, "{}", run.stdout);
}

/// resourceVersion on get and list: unset (latest), `0` (the watch cache), `N` not older
/// than `N`, `Exact`, and kube's errors for combinations it rejects.
#[test]
fn resource_version_semantics_of_get_and_list() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let a = create(&client, "a", json!({}));
    let b = create(&client, "b", json!({}));
    let web_a = format!("{WEBAPPS}/a");

    // Unset: the latest; `0`: any (the cache, which has caught up); `N`: not older.
    for query in [
        "",
        "?resourceVersion=0",
        &format!("?resourceVersion={}", rv(&a)),
    ] {
        assert_eq!(
            rv(&get(&client, &format!("{web_a}{query}"))),
            rv(&a),
            "{query}"
        );
    }
    let list = get(&client, WEBAPPS);
    assert_eq!(names(&list), ["a", "b"]);
    // At least b's: the server's own writes (its lease, its endpoints) may come after.
    let revision = |object: &Value| rv(object).parse::<u64>().expect("a number");
    assert!(revision(&list) >= revision(&b), "{list}");
    let cached = wait_for(EVENT, "the cache to list both objects", String::new, || {
        let list = get(&client, &format!("{WEBAPPS}?resourceVersion=0"));
        (names(&list) == ["a", "b"]).then_some(list)
    });
    assert!(rv(&cached).parse::<u64>().unwrap() >= rv(&b).parse::<u64>().unwrap());
    let not_older = get(
        &client,
        &format!(
            "{WEBAPPS}?resourceVersion={}&resourceVersionMatch=NotOlderThan",
            rv(&b)
        ),
    );
    assert_eq!(names(&not_older), ["a", "b"]);

    // Exact: the list as it was at that revision.
    let exact = get(
        &client,
        &format!(
            "{WEBAPPS}?resourceVersion={}&resourceVersionMatch=Exact",
            rv(&a)
        ),
    );
    assert_eq!(names(&exact), ["a"]);
    assert_eq!(rv(&exact), rv(&a));
    // kube's legacy rule: a paginated list at `N` without a match is Exact too.
    let paginated = get(
        &client,
        &format!("{WEBAPPS}?resourceVersion={}&limit=10", rv(&a)),
    );
    assert_eq!(
        (names(&paginated), rv(&paginated)),
        (vec!["a".into()], rv(&a))
    );
    // A paginated consistent list the collection fits in: the latest, whole, one page.
    let whole = get(&client, &format!("{WEBAPPS}?limit=2"));
    assert_eq!(
        (names(&whole), rv(&whole)),
        (vec!["a".into(), "b".into()], rv(&b))
    );
    assert_eq!(whole["metadata"].get("continue"), None, "{whole}");
    assert_eq!(whole["metadata"].get("remainingItemCount"), None, "{whole}");

    // Too large: 504 Timeout with Retry-After and the ResourceVersionTooLarge cause.
    let future = rv(&b).parse::<u64>().unwrap() + 1000;
    for path in [
        format!("{WEBAPPS}?resourceVersion={future}"),
        format!("{web_a}?resourceVersion={future}"),
        format!("{WEBAPPS}?resourceVersion={future}&resourceVersionMatch=NotOlderThan"),
        format!("{WEBAPPS}?resourceVersion={future}&limit=1"),
    ] {
        let response = client.get(&path).unwrap();
        assert_eq!(response.status, 504, "{path}: {response:?}");
        let status = response.json();
        assert_eq!(status["reason"], "Timeout");
        assert!(
            (status["message"].as_str().unwrap()).starts_with(&format!(
                "Timeout: Too large resource version: {future}, current: "
            )),
            "{status}"
        );
        assert_eq!(status["details"]["retryAfterSeconds"], 1);
        assert_eq!(
            status["details"]["causes"],
            json!([{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}])
        );
        assert_eq!(response.retry_after.as_deref(), Some("1"), "{path}");
    }

    // Combinations kube rejects (422 on meta.k8s.io ListOptions), and a bad version.
    let invalid = |query: &str, message: &str| {
        let response = client.get(&format!("{WEBAPPS}?{query}")).unwrap();
        assert_eq!(response.status, 422, "{query}: {response:?}");
        let status = response.json();
        assert_eq!(status["reason"], "Invalid");
        assert_eq!(status["details"]["kind"], "ListOptions");
        assert!(
            status["message"].as_str().unwrap().contains(message),
            "{query}: {status}"
        );
    };
    invalid(
        "resourceVersionMatch=NotOlderThan",
        "resourceVersionMatch is forbidden unless resourceVersion is provided",
    );
    invalid(
        "resourceVersion=0&resourceVersionMatch=Exact",
        "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
    );
    invalid(
        "resourceVersion=1&resourceVersionMatch=Newest",
        "supported values: \"Exact\", \"NotOlderThan\"",
    );
    let first_page = get(&client, &format!("{WEBAPPS}?limit=1"));
    let token = first_page["metadata"]["continue"]
        .as_str()
        .unwrap()
        .to_owned();
    invalid(
        &format!("continue={token}&resourceVersion=1&resourceVersionMatch=NotOlderThan"),
        "resourceVersionMatch is forbidden when continue is provided",
    );
    let response = client
        .get(&format!("{WEBAPPS}?continue={token}&resourceVersion=3"))
        .unwrap();
    assert_eq!(response.status, 400, "{response:?}");
    let response = client.get(&format!("{web_a}?resourceVersion=abc")).unwrap();
    assert_eq!(response.status, 400, "{response:?}");
}

/// A watch resumed from before the cache's history gets one 410 `ERROR`; a relist and a
/// watch from its resourceVersion recover, seeing every later change. The store's history
/// is compacted meanwhile (on etcd too): the relist and the new watch do not depend on it.
fn expired_watch_relists(backend: Backend) {
    let server = Server::start_on_with(
        backend,
        &["--watch-cache-history=3", "--compaction-interval=1s"],
    );
    let client = Client::new(server.addr());
    let first = create(&client, "web", json!({}));
    for i in 0..6 {
        create(&client, &format!("more-{i}"), json!({}));
    }
    // Until the cache has taken in the last creates, the first is still in its history and
    // a watch from it replays what followed: watch again until the cache has moved on.
    let (mut expired, event) = wait_for(
        EVENT,
        "a watch from the first revision to expire",
        String::new,
        || {
            let mut expired = watch(&client, &format!("resourceVersion={}", rv(&first)));
            let event = expired.next_event(EVENT);
            (event["type"] == "ERROR").then_some((expired, event))
        },
    );
    assert_eq!(event["object"]["code"], 410);
    assert_eq!(event["object"]["reason"], "Expired");
    assert!(
        (event["object"]["message"].as_str().unwrap())
            .starts_with(&format!("too old resource version: {} (", rv(&first))),
        "{event}"
    );
    assert_eq!(expired.next_line(EVENT), None, "the watch ends after ERROR");

    // What a reflector does next: list, then watch from the list.
    let list = get(&client, WEBAPPS);
    assert_eq!(names(&list).len(), 7);
    let mut resumed = watch(&client, &format!("resourceVersion={}", rv(&list)));
    let late = create(&client, "late", json!({}));
    let event = resumed.next_event(EVENT);
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "late");
    assert_eq!(rv(&event["object"]), rv(&late));
}

/// Pages read while another client writes form the list at the first page's revision:
/// no duplicate, nothing missing, and every object as it was then (the `Exact` list at
/// that revision, from storage; no resourceVersion after it), though the cache holds newer
/// states of objects on the later pages, updated after the first.
#[test]
fn a_paginated_list_under_concurrent_writes_is_one_snapshot() {
    let server = Server::start();
    let client = Client::new(server.addr());
    for i in 0..20 {
        create(&client, &format!("seed-{i:02}"), json!({}));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (stop, writes) = (Arc::clone(&stop), Arc::clone(&writes));
        let addr = server.addr();
        std::thread::spawn(move || {
            let client = Client::new(addr);
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                create(&client, &format!("new-{i:04}"), json!({}));
                let seed = format!("{WEBAPPS}/seed-{:02}", i % 20);
                match i % 3 {
                    0 => drop(client.delete(&seed)),
                    1 => {
                        let patch = json!({"metadata": {"annotations": {"write": i.to_string()}}});
                        let _ = client.merge_patch(&seed, &patch);
                    }
                    _ => {}
                }
                i += 1;
                writes.store(i, Ordering::Relaxed);
            }
            i
        })
    };
    let mut pages = 0;
    let mut seen = Vec::new();
    let mut token = String::new();
    let mut first: Option<String> = None;
    loop {
        let path = if token.is_empty() {
            format!("{WEBAPPS}?limit=3")
        } else {
            format!("{WEBAPPS}?limit=3&continue={token}")
        };
        let page = get(&client, &path);
        let revision = rv(&page);
        let first = first.get_or_insert_with(|| revision.clone());
        assert_eq!(
            &revision, first,
            "every page is at the first page's revision"
        );
        seen.extend(versions(&page));
        pages += 1;
        if pages == 1 {
            // Objects of the later pages get newer states, which the cache holds by the
            // time those pages are read.
            let updated = (10..20)
                .filter(|i| {
                    let patch = json!({"metadata": {"annotations": {"after": "first"}}});
                    let path = format!("{WEBAPPS}/seed-{i:02}");
                    client.merge_patch(&path, &patch).unwrap().status == 200
                })
                .count();
            assert!(updated > 0, "no seed left to update");
        }
        token = (page["metadata"]["continue"].as_str())
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            break;
        }
        // The writer changes the collection between every two pages.
        let before = writes.load(Ordering::Relaxed);
        wait_for(EVENT, "a concurrent write", String::new, || {
            (writes.load(Ordering::Relaxed) > before).then_some(())
        });
    }
    let first = first.unwrap();
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    assert!(pages > 2, "several pages");
    let first_revision: u64 = first.parse().unwrap();
    for (name, revision) in &seen {
        assert!(
            revision.parse::<u64>().unwrap() <= first_revision,
            "{name} at {revision}, in a snapshot at {first}"
        );
    }
    let unique: BTreeSet<&String> = seen.iter().map(|(name, _)| name).collect();
    assert_eq!(unique.len(), seen.len(), "no duplicates: {seen:?}");
    let exact = get(
        &client,
        &format!("{WEBAPPS}?resourceVersion={first}&resourceVersionMatch=Exact"),
    );
    assert_eq!(
        seen,
        versions(&exact),
        "the snapshot at {first} ({written} writes ran)"
    );
}

/// The names and resourceVersions of a list's items.
fn versions(list: &Value) -> Vec<(String, String)> {
    (list["items"].as_array().unwrap().iter())
        .map(|item| {
            (
                item["metadata"]["name"].as_str().unwrap().to_owned(),
                rv(item),
            )
        })
        .collect()
}

/// `(type, name, resourceVersion)` of a watch event.
fn summary(event: &Value) -> (String, String, String) {
    let object = &event["object"];
    (
        event["type"].as_str().unwrap_or_default().to_owned(),
        (object["metadata"]["name"].as_str())
            .unwrap_or_default()
            .to_owned(),
        rv(object),
    )
}

#[track_caller]
fn watch(client: &Client, query: &str) -> Watch {
    let watch = client
        .watch(&format!("{WEBAPPS}?watch=true&{query}"), "application/json")
        .unwrap();
    assert_eq!(watch.status, 200);
    watch
}

/// Opens a watch of `path` and never reads it.
fn stalled_watch(server: &Server, path: &str) -> TcpStream {
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n\r\n",
        server.addr()
    )
    .unwrap();
    stream
}

/// 200 watchers over HTTP see every change, in order, once, while another watcher of the
/// same kind never reads its socket: it has more to send than the socket buffers hold (the
/// server's write to it is blocked) and then more changes than its buffer in the watch
/// cache holds. The cache drops it rather than wait, the others complete while it is
/// still stalled, and read at last it has its events then an `ERROR` saying to watch
/// again.
#[test]
fn two_hundred_watchers_see_every_event_while_one_stalls() {
    const WATCHERS: usize = 200;
    const CHANGES: usize = 40;
    const BIG: usize = 12;
    const SMALL: usize = 1100;
    let server = Server::start();
    let client = Client::new(server.addr());
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "stall"}});
    assert_eq!(
        client
            .post("/api/v1/namespaces", &namespace)
            .unwrap()
            .status,
        201
    );
    let stall = "/apis/apps.example.dev/v1/namespaces/stall/webapps";
    let start = rv(&get(&client, stall));
    let mut stalled = stalled_watch(
        &server,
        &format!("{stall}?watch=true&resourceVersion={start}"),
    );
    // 12 MiB for the stalled watcher: far more than loopback socket buffers hold unread.
    let padding = "x".repeat(1 << 20);
    let mut last_big = String::new();
    for i in 0..BIG {
        let mut body = webapp(&format!("big-{i}"), json!({}), "nginx:1.27");
        body["spec"]["container"]["env"] = json!([{"name": "PADDING", "value": padding}]);
        let response = client.post(stall, &body).unwrap();
        assert_eq!(
            response.status,
            201,
            "{}",
            &response.body[..500.min(response.body.len())]
        );
        last_big = rv(&response.json());
    }
    // More changes than a watcher's buffer in the cache (1024): were the cache to wait for
    // the stalled watcher, it would stop here and the watchers below would see nothing.
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let addr = server.addr();
            std::thread::spawn(move || {
                let client = Client::new(addr);
                for i in 0..SMALL / 4 {
                    let body = webapp(&format!("small-{w}-{i}"), json!({}), "nginx:1.27");
                    let response = client.post(stall, &body).unwrap();
                    assert_eq!(response.status, 201, "{response:?}");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }

    let start = rv(&get(&client, WEBAPPS));
    let mut watchers: Vec<Watch> = (0..WATCHERS)
        .map(|_| watch(&client, &format!("resourceVersion={start}")))
        .collect();
    let mut expected = Vec::new();
    for i in 0..CHANGES {
        let name = format!("web-{i:03}");
        let object = create(&client, &name, json!({}));
        expected.push(("ADDED".to_owned(), name.clone(), rv(&object)));
        let mut body = object.clone();
        body["spec"]["replicas"] = json!(2);
        let response = client.put(&format!("{WEBAPPS}/{name}"), &body).unwrap();
        assert_eq!(response.status, 200, "{response:?}");
        expected.push(("MODIFIED".to_owned(), name, rv(&response.json())));
    }
    let threads: Vec<_> = (watchers.drain(..))
        .map(|mut watch| {
            let count = expected.len();
            std::thread::spawn(move || {
                let events = (0..count)
                    .map(|_| summary(&watch.next_event(EVENT)))
                    .collect::<Vec<_>>();
                (events, watch)
            })
        })
        .collect();
    for thread in threads {
        let (events, watch) = thread.join().unwrap();
        assert_eq!(events, expected);
        watchers.push(watch);
    }
    // One more change: each watcher's next event is exactly it, so a duplicate or an
    // extra event above would show here.
    let response = client.delete(&format!("{WEBAPPS}/web-000")).unwrap();
    assert_eq!(response.status, 200, "{response:?}");
    let after = rv(&get(&client, WEBAPPS));
    for watch in &mut watchers {
        assert_eq!(
            summary(&watch.next_event(EVENT)),
            ("DELETED".to_owned(), "web-000".to_owned(), after.clone())
        );
    }

    // Everyone finished while the stalled watcher had read nothing. Read at last, it has
    // its big events, then what its buffer held, then the ERROR that closed it.
    stalled.set_read_timeout(Some(EVENT)).unwrap();
    let mut received = Vec::new();
    let mut buffer = vec![0; 1 << 20];
    let big_end = format!("\"resourceVersion\":\"{last_big}\"");
    let mut big_at = None;
    let error = loop {
        let tail = &received[received.len().saturating_sub(2 << 20)..];
        let text = String::from_utf8_lossy(tail);
        if big_at.is_none() && text.contains(&big_end) {
            big_at = Some(received.len());
        }
        if let Some(at) = text.find("{\"type\":\"ERROR\"") {
            let line = text[at..].lines().next().unwrap_or_default().to_owned();
            if line.ends_with('}') {
                break line;
            }
        }
        let read =
            std::io::Read::read(&mut stalled, &mut buffer).expect("reading the stalled watch");
        assert!(read > 0, "the stalled watch closed without an error");
        received.extend_from_slice(&buffer[..read]);
    };
    let big_at = big_at.expect("the big events arrived before the error");
    // The last big event's resourceVersion comes before its padding.
    assert!(
        big_at > (BIG - 1) << 20,
        "more than socket buffers hold: {big_at} bytes"
    );
    let error: Value = serde_json::from_str(&error).unwrap();
    assert_eq!(error["object"]["code"], 500, "{error}");
    let message = error["object"]["message"].as_str().unwrap();
    assert!(
        message.contains("fell more than 1024 changes behind") && message.contains("watch again"),
        "{message}"
    );
}

/// SIGTERM with open watches: they end cleanly and the server exits well before its 30 s
/// drain deadline.
#[test]
fn sigterm_ends_open_watches_promptly() {
    let mut server = Server::start();
    let client = Client::new(server.addr());
    let mut open = watch(&client, "");
    let mut bookmarks = watch(&client, "allowWatchBookmarks=true&resourceVersion=0");
    server.wait_for_watch(EVENT, "allowWatchBookmarks");
    let status = server.terminate(Duration::from_secs(15));
    assert!(status.success(), "{status}");
    assert_eq!(open.next_line(EVENT), None, "the watch ended");
    assert_eq!(bookmarks.next_line(EVENT), None, "the watch ended");
}

/// With `--compaction-interval`, the store's history is compacted periodically: a continue
/// token from before a compaction gets kube's 410, and a new list works.
fn compaction_expires_continue_tokens(backend: Backend) {
    let server = Server::start_on_with(backend, &["--compaction-interval=1s"]);
    let client = Client::new(server.addr());
    for name in ["a", "b", "c"] {
        create(&client, name, json!({}));
    }
    let page = get(&client, &format!("{WEBAPPS}?limit=1"));
    let token = page["metadata"]["continue"].as_str().unwrap().to_owned();
    // A later write, so that a compaction lands after the token's revision.
    create(&client, "d", json!({}));
    let status = wait_for(
        EVENT,
        "a compaction to expire the continue token",
        || server.log().tail(40),
        || {
            let response = client
                .get(&format!("{WEBAPPS}?limit=1&continue={token}"))
                .unwrap();
            (response.status == 410).then(|| response.json())
        },
    );
    assert_eq!(status["reason"], "Expired");
    assert!(
        (status["message"].as_str().unwrap()).starts_with(
            "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response"
        ),
        "{status}"
    );
    // kube's hint: a token going on after the same key at the latest revision.
    let fresh = status["metadata"]["continue"].as_str().unwrap();
    let rest = get(&client, &format!("{WEBAPPS}?continue={fresh}"));
    assert_eq!(names(&rest), ["b", "c", "d"]);
    assert_eq!(names(&get(&client, WEBAPPS)), ["a", "b", "c", "d"]);
}
