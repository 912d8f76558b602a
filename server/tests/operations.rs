//! Operations end to end: overload protection, request deadlines, watch timeouts. With `--max-mutating-requests-inflight=2`, two creates
//! whose bodies the client holds back occupy the mutating pool; a third create is kube's
//! 429 with `Retry-After: 1`, while reads, a watch and `/readyz` still answer; once a held
//! body arrives, its create completes and writes are admitted again. A request whose body
//! does not arrive within `--request-timeout` is a 504 and stores nothing; one whose
//! headers do not arrive within `--read-header-timeout` is disconnected.

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;
use support::kubectl::{Kubectl, Version};
use support::{Server, wait_for};

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A create whose body is announced but held back: it holds a slot until [`finish`].
fn held_create(server: &Server, name: &str) -> (TcpStream, String) {
    let body =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}).to_string();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let head = format!(
        "POST {CONFIGMAPS} HTTP/1.1\r\nHost: kapi\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{}",
        body.len(),
        &body[..1]
    );
    stream.write_all(head.as_bytes()).unwrap();
    (stream, body)
}

/// Sends the rest of a held body and returns the response's status line.
fn finish((mut stream, body): (TcpStream, String)) -> String {
    stream.write_all(&body.as_bytes()[1..]).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.lines().next().unwrap_or_default().to_owned()
}

/// The `apiserver_current_inflight_requests` lines of `/metrics`.
fn inflight_lines(client: &support::http::Client) -> String {
    let metrics = client.get("/metrics").unwrap();
    (metrics.body.lines())
        .filter(|l| l.starts_with("apiserver_current_inflight_requests"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn requests_over_the_limit_are_shed_with_429() {
    let server = Server::start_with(&[
        "--max-mutating-requests-inflight",
        "2",
        "--max-requests-inflight",
        "2",
    ]);
    let client = server.client();
    let first = held_create(&server, "held-1");
    let second = held_create(&server, "held-2");

    // The held creates take their slots as soon as their headers are read: the
    // in-flight gauge shows both.
    let log = server.log();
    wait_for(
        Duration::from_secs(10),
        "two mutating requests in flight",
        || format!("{}\n{}", inflight_lines(&client), log.tail(20)),
        || {
            inflight_lines(&client)
                .contains("request_kind=\"mutating\"} 2")
                .then_some(())
        },
    );
    let shed = client
        .post(
            CONFIGMAPS,
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "third-"}}),
        )
        .unwrap();
    assert_eq!(shed.status, 429, "{shed:?}");
    assert_eq!(shed.retry_after.as_deref(), Some("1"));
    let status = shed.json();
    assert_eq!(status["reason"], "TooManyRequests");
    assert_eq!(status["code"], 429);
    assert_eq!(status["details"]["retryAfterSeconds"], 1);
    // Counted as kube counts requests it sheds.
    wait_for(
        Duration::from_secs(10),
        "the shed create to be counted",
        || client.get("/metrics").unwrap().body,
        || {
            let body = client.get("/metrics").unwrap().body;
            let dropped =
                body.contains("apiserver_dropped_requests_total{request_kind=\"mutating\"} 1");
            let terminated = body.lines().any(|l| {
                l.starts_with("apiserver_request_terminations_total{verb=\"POST\"")
                    && l.contains("resource=\"configmaps\"")
                    && l.ends_with("code=\"429\"} 1")
            });
            (dropped && terminated).then_some(())
        },
    );

    // Reads have a pool of their own; watches and health checks take no slot.
    assert_eq!(client.get(CONFIGMAPS).unwrap().status, 200);
    assert_eq!(client.get("/readyz").unwrap().status, 200);
    let watch = client
        .watch(&format!("{CONFIGMAPS}?watch=true"), "application/json")
        .unwrap();
    assert_eq!(watch.status, 200);

    // A held body arrives: its create completes, and writes are admitted again.
    assert!(finish(first).starts_with("HTTP/1.1 201"));
    let admitted = client
        .post(
            CONFIGMAPS,
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after"}}),
        )
        .unwrap();
    assert_eq!(admitted.status, 201, "{admitted:?}");
    assert!(finish(second).starts_with("HTTP/1.1 201"));
}

/// A request past `--request-timeout` (its body never arrives) is kube's 504 `Timeout`
/// Status, and nothing of it is stored.
#[test]
fn a_request_past_its_deadline_is_a_504_and_stores_nothing() {
    let server = Server::start_with(&["--request-timeout", "1s"]);
    let held = held_create(&server, "late");
    let (mut stream, _) = held;
    let mut response = String::new();
    // The server answers on its own once the deadline passes (the read waits for it).
    let _ = stream.read_to_string(&mut response);
    assert!(response.starts_with("HTTP/1.1 504"), "{response}");
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    let status: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(status["reason"], "Timeout");
    assert_eq!(
        status["message"],
        "Timeout: request did not complete within requested timeout - context deadline exceeded"
    );
    let client = server.client();
    assert_eq!(
        client.get(&format!("{CONFIGMAPS}/late")).unwrap().status,
        404
    );
    // Counted as a request terminated in self-defense.
    wait_for(
        Duration::from_secs(10),
        "the 504 to be counted",
        || client.get("/metrics").unwrap().body,
        || {
            let body = client.get("/metrics").unwrap().body;
            (body.lines())
                .any(|l| {
                    l.starts_with("apiserver_request_terminations_total{verb=\"POST\"")
                        && l.ends_with("code=\"504\"} 1")
                })
                .then_some(())
        },
    );
}

/// A client that sends its headers too slowly (slowloris) is disconnected after
/// `--read-header-timeout`; others are served meanwhile.
#[test]
fn a_client_slow_to_send_its_headers_is_disconnected() {
    let server = Server::start_with(&["--read-header-timeout", "1s"]);
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    // Far past the deadline: the read ends because the server closes, not because of it.
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
        .write_all(b"GET /readyz HTTP/1.1\r\nHost: kapi\r\n")
        .unwrap();
    let client = server.client();
    assert_eq!(client.get("/readyz").unwrap().status, 200);
    let mut answer = Vec::new();
    let closed = stream.read_to_end(&mut answer);
    assert!(closed.is_ok(), "the connection stayed open: {closed:?}");
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
}

/// A watch without `timeoutSeconds` ends between `--min-request-timeout` and twice that,
/// cleanly (the stream closes; no ERROR event).
#[test]
fn watches_without_a_timeout_end_within_twice_the_minimum() {
    let server = Server::start_with(&["--min-request-timeout", "1"]);
    let client = server.client();
    let started = std::time::Instant::now();
    let mut watch = client
        .watch(&format!("{CONFIGMAPS}?watch=true"), "application/json")
        .unwrap();
    assert_eq!(watch.status, 200);
    // The stream's end comes from the server (the read waits for it, with a deadline).
    let ended = watch.poll_line(Duration::from_secs(10));
    let elapsed = started.elapsed();
    assert_eq!(ended, Some(None), "the watch ends without an event");
    assert!(elapsed >= Duration::from_secs(1), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

/// kube's shutdown sequence: on SIGTERM `/readyz` fails (500) at once while requests are
/// still served for `--shutdown-delay-duration`; then the server exits 0 within the
/// delay and its drain.
#[test]
fn shutdown_fails_readyz_first_and_keeps_serving_for_the_delay() {
    let mut server = Server::start_with(&["--shutdown-delay-duration", "2s"]);
    let client = server.client();
    let started = std::time::Instant::now();
    server.send_sigterm();
    let log = server.log();
    let ready = wait_for(
        Duration::from_secs(5),
        "/readyz to fail (500)",
        || log.tail(20),
        || {
            let response = client.get("/readyz?verbose").ok()?;
            (response.status == 500).then_some(response)
        },
    );
    assert!(
        ready.body.contains("[-]shutdown failed: reason withheld"),
        "{}",
        ready.body
    );
    assert!(ready.body.contains("[+]etcd ok"), "{}", ready.body);
    assert!(
        ready.body.ends_with("readyz check failed\n"),
        "{}",
        ready.body
    );
    // Still serving during the delay.
    assert_eq!(client.get(CONFIGMAPS).unwrap().status, 200);
    assert_eq!(client.get("/livez").unwrap().status, 200);
    let status = server.wait_exit(Duration::from_secs(20));
    assert!(status.success(), "{status}");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "the delay was kept"
    );
}

/// The figure of `metric` whose line holds every one of `parts`, from `/metrics`.
fn metric(client: &support::http::Client, metric: &str, parts: &[&str]) -> f64 {
    let body = client.get("/metrics").map(|r| r.body).unwrap_or_default();
    (body.lines())
        .filter(|l| l.starts_with(metric) && parts.iter().all(|p| l.contains(p)))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// SIGTERM while 20 `kubectl get -w` run and a client keeps writing: `/readyz` fails (500)
/// first, every watch ends (each kubectl exits on its own), the server exits 0 within its
/// delay and drain, and every write it acknowledged is there after a restart.
#[test]
fn sigterm_under_load_ends_every_watch_and_loses_no_acknowledged_write() {
    let mut server = Server::start_with(&["--shutdown-delay-duration", "1s"]);
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let mut watches: Vec<_> = (0..20)
        .map(|_| kubectl.spawn(&["get", "configmaps", "-n", "default", "-w"]))
        .collect();
    let log = server.log();
    wait_for(
        Duration::from_secs(30),
        "20 watches of configmaps",
        || log.tail(20),
        || {
            let open = metric(
                &client,
                "apiserver_longrunning_requests",
                &["verb=\"WATCH\"", "resource=\"configmaps\""],
            );
            (open == 20.0).then_some(())
        },
    );

    // The writer: creates until the server stops answering, keeping what it acknowledged.
    let writer_client = server.client();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (acknowledged_tx, acknowledged) = std::sync::mpsc::channel::<String>();
    let writer = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            for i in 0.. {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                let name = format!("load-{i}");
                let body =
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
                match writer_client.post(CONFIGMAPS, &body) {
                    Ok(response) if response.status == 201 => {
                        let _ = acknowledged_tx.send(name);
                    }
                    Ok(_) => {}
                    // The listener closed.
                    Err(_) => break,
                }
            }
        })
    };
    // Some writes land before the signal.
    let first: Vec<String> = acknowledged.iter().take(20).collect();
    let started = std::time::Instant::now();
    server.send_sigterm();
    wait_for(
        Duration::from_secs(5),
        "/readyz to fail (500)",
        || log.tail(20),
        || (client.get("/readyz").ok()?.status == 500).then_some(()),
    );
    for watch in &mut watches {
        let status = watch.wait_exit(Duration::from_secs(30));
        assert!(status.success(), "kubectl get -w: {status}");
    }
    let status = server.wait_exit(Duration::from_secs(30));
    let took = started.elapsed();
    assert!(status.success(), "{status}");
    assert!(took < Duration::from_secs(10), "the shutdown took {took:?}");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    let written: Vec<String> = first.into_iter().chain(acknowledged.try_iter()).collect();
    assert!(written.len() >= 20, "{written:?}");

    server.restart();
    let client = server.client();
    for name in &written {
        let response = client.get(&format!("{CONFIGMAPS}/{name}")).unwrap();
        assert_eq!(
            response.status, 200,
            "acknowledged {name} is lost: {response:?}"
        );
    }
}

/// With the default settings an idle server exits promptly on SIGTERM.
#[test]
fn an_idle_server_exits_within_five_seconds_of_sigterm() {
    let mut server = Server::start();
    let started = std::time::Instant::now();
    server.send_sigterm();
    let status = server.wait_exit(Duration::from_secs(30));
    assert!(status.success(), "{status}");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// The checks kube 1.20's e2e test "health handlers should contain necessary checks"
/// (`test/e2e/apimachinery/health_handlers.go`) requires on `/healthz` and `/livez`, in
/// kube-apiserver's order, less `poststarthook/scheduling/bootstrap-system-priority-classes`
/// (PriorityClasses are not served yet), with kapi's `poststarthook/max-in-flight-filter`
/// and `poststarthook/rbac/bootstrap-roles` where kube-apiserver lists them too.
const LIVE_CHECKS: &[&str] = &[
    "ping",
    "log",
    "etcd",
    "poststarthook/start-kube-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/max-in-flight-filter",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/bootstrap-controller",
    "poststarthook/start-service-ip-repair-controllers",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/priority-and-fairness-config-producer",
    "poststarthook/start-cluster-authentication-info-controller",
    "poststarthook/start-kube-aggregator-informers",
    "poststarthook/apiservice-registration-controller",
    "poststarthook/apiservice-status-available-controller",
    "poststarthook/kube-apiserver-autoregistration",
    "autoregister-completion",
    "poststarthook/apiservice-openapi-controller",
];

/// `/healthz`, `/livez` and `/readyz` list kube-apiserver's named checks, each backed by
/// kapi's counterpart (a secure server with RBAC and a client CA runs them all); `/readyz`
/// adds `informer-sync` and `shutdown`; `?exclude=` and each check's own path work as
/// kube's. (A failing check is `[-]`, and fails its endpoint with 500: the shutdown test
/// above, and the etcd quorum test for `etcd`.)
#[test]
fn health_checks_carry_kube_apiserver_names() {
    let server = Server::start_secure(support::pki::Pki::new(), support::Backend::Embedded, &[]);
    let client = server.client();
    let log = server.log();
    // Every post-start hook done: ready.
    let ready = wait_for(
        Duration::from_secs(20),
        "/readyz?verbose to pass",
        || format!("{:?}\n{}", client.get("/readyz?verbose"), log.tail(20)),
        || {
            let response = client.get("/readyz?verbose").ok()?;
            (response.status == 200).then_some(response)
        },
    );
    let lines = |checks: &[&str], endpoint: &str| {
        let mut lines: Vec<String> = checks.iter().map(|c| format!("[+]{c} ok")).collect();
        lines.push(format!("{endpoint} check passed"));
        lines
    };
    let mut ready_checks = LIVE_CHECKS.to_vec();
    ready_checks.insert(3, "informer-sync");
    ready_checks.push("shutdown");
    assert_eq!(
        ready.body.lines().collect::<Vec<_>>(),
        lines(&ready_checks, "readyz"),
        "{}",
        ready.body
    );
    for endpoint in ["healthz", "livez"] {
        let response = client.get(&format!("/{endpoint}?verbose")).unwrap();
        assert_eq!(response.status, 200, "{response:?}");
        assert_eq!(
            response.body.lines().collect::<Vec<_>>(),
            lines(LIVE_CHECKS, endpoint),
            "{}",
            response.body
        );
        assert_eq!(client.get(&format!("/{endpoint}")).unwrap().body, "ok");
    }
    let excluded = client
        .get("/livez?verbose&exclude=etcd&exclude=no-such-check")
        .unwrap();
    assert_eq!(excluded.status, 200);
    assert!(
        excluded.body.contains("[+]etcd excluded: ok\n"),
        "{}",
        excluded.body
    );
    assert!(
        excluded.body.ends_with(
            "warn: some health checks cannot be excluded: no matches for \"no-such-check\"\n\
             livez check passed\n"
        ),
        "{}",
        excluded.body
    );
    for path in [
        "/readyz/informer-sync",
        "/livez/poststarthook/bootstrap-controller",
        "/healthz/autoregister-completion",
    ] {
        let response = client.get(path).unwrap();
        assert_eq!(
            (response.status, response.body.as_str()),
            (200, "ok"),
            "{path}"
        );
    }
    assert_eq!(client.get("/livez/informer-sync").unwrap().status, 404);
}
