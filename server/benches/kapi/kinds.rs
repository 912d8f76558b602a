//! Kubernetes' built-in kinds beside the example's own, on the embedded store: Pod
//! creates, GETs and a LIST of 10,000 Pods, and the same for WebApps, as ratios (a Pod is
//! a larger object with a deeper schema, stored and served by the same generic code); and
//! the time from start to ready with every feature set served.
//!
//! - "Pod creates": a Pod of one container with a port, resources and a probe, as
//!   `kubectl run` would send one with a few flags, by [`CLIENTS`] clients on keep-alive
//!   connections; "WebApp creates" the same for the example's WebApp;
//! - "GETs": each client reads the objects it created, round robin;
//! - "LIST of 10k": the collection grown to 10,000 objects, then lists with
//!   `resourceVersion=0` (the watch cache answers), p50 and p99;
//! - "start-up to ready": from the process's start to `/readyz` answering 200, on an empty
//!   data directory, with every set (workloads, networking, storage, ...) served.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::common::{
    CLIENTS, Options, ServerProcess, agent, percentile_ms, rate, run_count, status_of, timed_gets,
};
use super::http1;
use super::report::Report;

const PODS: &str = "/api/v1/namespaces/default/pods";
const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";

/// A Pod of one container, as `kubectl run web-N --image=nginx:1.27 --port=80
/// --requests=cpu=100m,memory=64Mi` with a readiness probe sends it.
fn pod(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","labels":{{"run":"web"}}}},"spec":{{"containers":[{{"name":"web","image":"nginx:1.27","ports":[{{"containerPort":80,"protocol":"TCP"}}],"resources":{{"requests":{{"cpu":"100m","memory":"64Mi"}}}},"readinessProbe":{{"httpGet":{{"path":"/","port":80}},"periodSeconds":5}}}}],"restartPolicy":"Always","dnsPolicy":"ClusterFirst"}}}}"#
    )
}

/// An object of a kind measured, named.
type Body = fn(&str) -> String;

/// The example's WebApp.
fn webapp(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps.example.dev/v1","kind":"WebApp","metadata":{{"name":"{name}","labels":{{"run":"web"}}}},"spec":{{"replicas":2,"container":{{"image":"nginx:1.27","ports":[{{"containerPort":80,"name":"http"}}]}}}}}}"#
    )
}

/// Measures both kinds, then the start-up.
pub(crate) fn measure(options: &Options, report: &mut Report) {
    let kinds: [(&str, &str, Body); 2] = [("Pod", PODS, pod), ("WebApp", WEBAPPS, webapp)];
    let mut figures = Vec::new();
    for (kind, path, body) in kinds {
        figures.push(one_kind(options, report, kind, path, body));
    }
    let [
        (pod_creates, pod_gets, pod_list),
        (web_creates, web_gets, web_list),
    ] = [figures[0], figures[1]];
    report.share(
        "built-in kinds: Pod creates / WebApp creates",
        pod_creates,
        web_creates,
    );
    report.share("built-in kinds: Pod GETs / WebApp GETs", pod_gets, web_gets);
    report.ratio(
        "built-in kinds: Pod LIST p50 / WebApp LIST p50",
        pod_list,
        web_list,
    );

    let rounds = if options.quick { 2 } else { 10 };
    let mut samples: Vec<Duration> = (0..rounds)
        .map(|_| {
            let dir = tempfile::tempdir().expect("a data directory");
            let args = ["--data-dir".into(), dir.path().display().to_string()];
            let (server, took) = ServerProcess::start_timed(&args);
            drop(server);
            took
        })
        .collect();
    report.add(
        "built-in kinds: start-up to ready, every set served, p50",
        percentile_ms(&mut samples, 50.0),
        "ms",
    );
}

/// Creates, GETs and a LIST of one kind on a fresh server: creates/s, GETs/s, LIST p50 (ms).
fn one_kind(
    options: &Options,
    report: &mut Report,
    kind: &str,
    path: &str,
    body: Body,
) -> (f64, f64, f64) {
    let what = format!("built-in kinds: {kind}");
    let dir = tempfile::tempdir().expect("a data directory");
    let server = ServerProcess::start(&["--data-dir".into(), dir.path().display().to_string()]);
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
    ];
    // How many each client made: its GETs read those.
    let made: Vec<AtomicU64> = (0..CLIENTS).map(|_| AtomicU64::new(0)).collect();
    let creates = http1::run(
        server.addr,
        CLIENTS,
        options.window(),
        |connection, client, i| {
            let answer = connection.send(
                "POST",
                path,
                &headers,
                body(&format!("c{client}-{i}")).as_bytes(),
            );
            assert_eq!(answer.status, 201, "a {kind} create");
            made[client].fetch_add(1, Ordering::Relaxed);
        },
    );
    let created = report.add(
        format!("{what} creates"),
        rate(creates.ops, creates.elapsed),
        "ops/s",
    );
    // Each client reads the objects it made, round robin (one it makes if it made none).
    for (client, count) in made.iter().enumerate() {
        if count.load(Ordering::Relaxed) == 0 {
            let url = server.url(path);
            let response = (agent().post(&url))
                .header("Content-Type", "application/json")
                .send(body(&format!("c{client}-0")))
                .expect("POST");
            assert_eq!(status_of(response), 201, "a {kind} create");
            count.store(1, Ordering::Relaxed);
        }
    }
    let gets = http1::run(
        server.addr,
        CLIENTS,
        options.window(),
        |connection, client, i| {
            let object = format!(
                "{path}/c{client}-{}",
                i % made[client].load(Ordering::Relaxed)
            );
            let answer = connection.send("GET", &object, &[("Accept", "application/json")], b"");
            assert_eq!(answer.status, 200, "a {kind} GET");
        },
    );
    let read = report.add(
        format!("{what} GETs"),
        rate(gets.ops, gets.elapsed),
        "ops/s",
    );

    let size: u64 = if options.quick { 200 } else { 10_000 };
    let have = creates.ops;
    let url = server.url(path);
    run_count(CLIENTS, size.saturating_sub(have), |agent, n| {
        let response = (agent.post(&url))
            .header("Content-Type", "application/json")
            .send(body(&format!("fill-{n}")))
            .expect("POST");
        assert_eq!(status_of(response), 201, "a {kind} create");
    });
    let agent = agent();
    let rounds = if options.quick { 3 } else { 20 };
    let list = server.url(&format!("{path}?resourceVersion=0"));
    let (mut samples, bytes) = timed_gets(&agent, &list, "application/json", rounds);
    let label = if options.quick {
        "LIST of 200"
    } else {
        "LIST of 10k"
    };
    let p50 = report.add(
        format!("{what} {label} p50"),
        percentile_ms(&mut samples, 50.0),
        "ms",
    );
    report.add(
        format!("{what} {label} p99"),
        percentile_ms(&mut samples, 99.0),
        "ms",
    );
    report.add(
        format!("{what} {label}, bytes per object"),
        bytes as f64 / size.max(have) as f64,
        "B",
    );
    (created, read, p50)
}
