//! One collection of WebApps on the embedded store, grown through the server to each size
//! (10k, 100k, 1M; tiny with `--quick`), then one on etcd ("collection on etcd": 10k and
//! 100k, where a watch cache's list outgrows one default gRPC message). At each size:
//! creates per second over the last band of growth (on the embedded store also against the
//! store's own creates into a fresh store just after, the machine's pace of that minute,
//! so that growth from 10k to 1M reads apart from the machine's drift over the quarter of
//! an hour between), LIST p50/p99 from the watch cache
//! (`resourceVersion=0`) and consistent, the consistent LIST right after a write to
//! another kind (which the kind's cache must be caught up to) and while the kind and
//! another are written, beside the same list from storage (`resourceVersionMatch=Exact`),
//! paginated LIST (`limit=500`) p99, the list's size and what copying it costs the machine
//! (memcpy, loopback TCP, TLS), and the server's RSS growth against the objects' JSON. At
//! the end, the time from a restart (after `kill -9`) to `/readyz` and to the watch cache
//! loaded (a read it answers), and the RSS then.

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::runtime::Runtime;

use super::common::{
    CLIENTS, Options, ServerProcess, agent, get_discarding, get_discarding_accepting,
    percentile_ms, run_count, timed_gets,
};
use super::limits::{Limits, embedded_creates};
use super::report::Report;

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";

/// The `n`th WebApp: about 600 bytes of JSON once the server has added its metadata.
fn webapp(n: u64) -> String {
    format!(
        r#"{{"apiVersion":"apps.example.dev/v1","kind":"WebApp","metadata":{{"name":"w{n:07}","labels":{{"app":"bench","tier":"t{}"}}}},"spec":{{"replicas":1,"container":{{"image":"nginx:1.27","ports":[{{"containerPort":80,"name":"http"}}]}}}}}}"#,
        n % 10
    )
}

/// Measures a collection on each backend at each size.
pub(crate) fn measure(runtime: &Runtime, options: &Options, limits: &Limits, report: &mut Report) {
    let (embedded, etcd): (&[u64], &[u64]) = if options.quick {
        (&[300, 1_000], &[300, 1_000])
    } else {
        (&[10_000, 100_000, 1_000_000], &[10_000, 100_000])
    };
    let dir = tempfile::tempdir().expect("a data directory");
    let args = ["--data-dir".into(), dir.path().display().to_string()];
    let pace = Some(runtime);
    measure_on(options, limits, report, "collection", &args, embedded, pace);
    let args = [
        "--storage",
        "etcd",
        "--etcd-servers",
        &limits.etcd.servers_flag(),
    ];
    let args = args.map(String::from);
    measure_on(
        options,
        limits,
        report,
        "collection on etcd",
        &args,
        etcd,
        None,
    );
}

/// Measures one collection, of a server started with `args`, at each of `sizes`; the rows
/// are named `{what} {size}: ...`. With `pace` (a runtime), each band's creates are also
/// compared with the embedded store's own just after.
fn measure_on(
    options: &Options,
    limits: &Limits,
    report: &mut Report,
    what: &str,
    args: &[String],
    sizes: &[u64],
    pace: Option<&Runtime>,
) {
    let band = if options.quick { 100 } else { 10_000 };
    let mut server = ServerProcess::start(args);
    let agent = agent();
    let idle_rss = server.settled_rss_mib();
    let mut have = 0;
    let mut first_band = None;
    let mut last_band = 0.0;
    // Each band's creates against the store's own of the same minute.
    let mut first_paced = None;
    let mut last_paced = 0.0;
    for &size in sizes {
        let label = count(size);
        fill(&server, have, size - band);
        let took = fill(&server, size - band, size);
        have = size;
        last_band = band as f64 / took.as_secs_f64();
        first_band.get_or_insert(last_band);
        report.add(
            format!(
                "{what} {label}: creates/s over the last {} objects",
                count(band)
            ),
            last_band,
            "ops/s",
        );
        if let Some(runtime) = pace {
            let own = runtime.block_on(embedded_creates(CLIENTS, options.window()));
            report.add(
                format!("{what} {label}: the store's own creates (1 KiB) just after"),
                own,
                "ops/s",
            );
            last_paced = report.share(
                format!("{what} {label}: creates / the store's own just after"),
                last_band,
                own,
            );
            first_paced.get_or_insert(last_paced);
        }

        // The cache has every object once a list not older than the last create is served.
        let last = get_json(&agent, &server.url(&format!("{WEBAPPS}/w{:07}", size - 1)));
        let revision = last["metadata"]["resourceVersion"].as_str().unwrap_or("0");
        let (status, _) = get_discarding(
            &agent,
            &server.url(&format!("{WEBAPPS}?resourceVersion={revision}")),
        );
        assert_eq!(status, 200, "a list not older than the last create");

        let rounds = match (options.quick, size) {
            (true, _) => 3,
            (false, s) if s <= 10_000 => 30,
            (false, s) if s <= 100_000 => 8,
            _ => 3,
        };
        let mut bytes = 0;
        for (list, query, accept) in [
            ("resourceVersion=0", "?resourceVersion=0", JSON),
            ("consistent", "", JSON),
            ("as a Table, resourceVersion=0", "?resourceVersion=0", TABLE),
        ] {
            let url = server.url(&format!("{WEBAPPS}{query}"));
            if accept == TABLE {
                // The first Table list makes each object's cells, which later ones reuse.
                get_discarding_accepting(&agent, &url, accept);
            }
            let (mut samples, size) = timed_gets(&agent, &url, accept, rounds);
            if accept == JSON {
                bytes = size;
            }
            report.add(
                format!("{what} {label}: LIST ({list}) p50"),
                percentile_ms(&mut samples, 50.0),
                "ms",
            );
            report.add(
                format!("{what} {label}: LIST ({list}) p99"),
                percentile_ms(&mut samples, 99.0),
                "ms",
            );
        }
        let mut samples = quiet_lists(&agent, &server, &label, rounds);
        for p in [50.0, 99.0] {
            report.add(
                format!("{what} {label}: LIST (consistent, after another kind's write) p{p}"),
                percentile_ms(&mut samples, p),
                "ms",
            );
        }
        // What storage answers such a list with, when the cache cannot: the same list read
        // at an exact revision, which only storage serves.
        let exact = format!("{WEBAPPS}?resourceVersionMatch=Exact&resourceVersion={revision}");
        let (mut samples, _) = timed_gets(&agent, &server.url(&exact), JSON, rounds);
        report.add(
            format!("{what} {label}: LIST from storage (resourceVersionMatch=Exact) p50"),
            percentile_ms(&mut samples, 50.0),
            "ms",
        );
        let mib = bytes as f64 / f64::from(1 << 20);
        report.add(format!("{what} {label}: LIST size"), mib, "MiB");
        report.add(
            format!("{what} {label}: the same bytes by memcpy / loopback TCP"),
            1000.0 * bytes as f64 / limits.memcpy + 1000.0 * bytes as f64 / limits.loopback,
            "ms",
        );
        report.add(
            format!("{what} {label}: the same bytes by memcpy / TLS on loopback"),
            1000.0 * bytes as f64 / limits.memcpy + 1000.0 * bytes as f64 / limits.tls,
            "ms",
        );
        let pages = if options.quick { 3 } else { 200 };
        let mut samples = paginated(&agent, &server, pages);
        report.add(
            format!("{what} {label}: paginated LIST (limit=500) page p99"),
            percentile_ms(&mut samples, 99.0),
            "ms",
        );
        // What the objects hold, not what the last requests had in flight.
        let rss = server.settled_rss_mib();
        report.add(format!("{what} {label}: server RSS (settled)"), rss, "MiB");
        report.ratio(
            format!("{what} {label}: RSS growth / objects' JSON size"),
            rss - idle_rss,
            mib,
        );
        // After the memory figures: its writes (a ConfigMap each) are not the collection's.
        let mut samples = busy_lists(&agent, &server, rounds);
        for p in [50.0, 99.0] {
            report.add(
                format!("{what} {label}: LIST (consistent, the kind and another written) p{p}"),
                percentile_ms(&mut samples, p),
                "ms",
            );
        }
    }
    if let Some(first) = first_band {
        report.share(
            format!(
                "{what}: creates/s at {} / at {}",
                count(have),
                count(sizes[0])
            ),
            last_band,
            first,
        );
    }
    if let Some(first) = first_paced {
        report.share(
            format!(
                "{what}: creates/s at {} / at {}, each against the store's own",
                count(have),
                count(sizes[0])
            ),
            last_paced,
            first,
        );
    }
    let restarted = Instant::now();
    let took = server.restart();
    report.add(
        format!("{what} {}: restart to ready", count(have)),
        took.as_secs_f64() * 1000.0,
        "ms",
    );
    // `/readyz` does not wait for the watch caches (kube's does not either); a read with
    // `resourceVersion=0` is answered from the cache once it has loaded.
    let last = server.url(&format!("{WEBAPPS}/w{:07}?resourceVersion=0", have - 1));
    let deadline = Instant::now() + Duration::from_secs(600);
    while get_discarding(&agent, &last).0 != 200 {
        assert!(Instant::now() < deadline, "the cache never loaded");
        std::thread::sleep(Duration::from_millis(5));
    }
    report.add(
        format!("{what} {}: restart to the cache loaded", count(have)),
        restarted.elapsed().as_secs_f64() * 1000.0,
        "ms",
    );
    report.add(
        format!("{what} {}: server RSS after the restart", count(have)),
        server.rss_mib(),
        "MiB",
    );
}

/// `10k`, `1M`.
fn count(n: u64) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

/// Creates WebApps `from..to` by [`CLIENTS`] clients; how long it took.
fn fill(server: &ServerProcess, from: u64, to: u64) -> Duration {
    let url = server.url(WEBAPPS);
    run_count(CLIENTS, to.saturating_sub(from), |agent, n| {
        let response = (agent.post(&url))
            .header("Content-Type", "application/json")
            .send(webapp(from + n))
            .expect("POST");
        assert_eq!(super::common::status_of(response), 201, "a create");
    })
}

/// What kubectl asks for: a Table of rows with each object's metadata.
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
const JSON: &str = "application/json";

fn get_json(agent: &ureq::Agent, url: &str) -> Value {
    let mut response = agent.get(url).call().expect("GET");
    assert_eq!(response.status().as_u16(), 200, "GET {url}");
    (response
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_json())
    .expect("a JSON body")
}

/// The latencies of `rounds` consistent lists of the WebApps, each right after a
/// ConfigMap's create: the kind's cache must be brought up to a revision it has no change
/// at (a progress request), or storage answers.
fn quiet_lists(
    agent: &ureq::Agent,
    server: &ServerProcess,
    label: &str,
    rounds: usize,
) -> Vec<Duration> {
    let configmaps = server.url("/api/v1/namespaces/default/configmaps");
    let url = server.url(WEBAPPS);
    (0..rounds)
        .map(|round| {
            let body = format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"quiet-{}-{round}"}}}}"#,
                label.to_lowercase()
            );
            let created = (agent.post(&configmaps))
                .header("Content-Type", "application/json")
                .send(body)
                .expect("POST");
            assert_eq!(super::common::status_of(created), 201, "a ConfigMap");
            let started = Instant::now();
            let (status, _) = get_discarding(agent, &url);
            assert_eq!(status, 200, "a consistent list");
            started.elapsed()
        })
        .collect()
}

/// The latencies of `rounds` consistent lists while another client keeps writing, one
/// after another, to the listed kind (a merge patch of its first object) and to another
/// (a ConfigMap created), as controllers and Leases keep a cluster's kinds written.
fn busy_lists(agent: &ureq::Agent, server: &ServerProcess, rounds: usize) -> Vec<Duration> {
    /// Stops the writer however the lists end (a failed one included), which the scope
    /// waits for.
    struct Stop<'a>(&'a std::sync::atomic::AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let stop = std::sync::atomic::AtomicBool::new(false);
    let url = server.url(WEBAPPS);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let writer = super::common::agent();
            let patched = server.url(&format!("{WEBAPPS}/w0000000"));
            let configmaps = server.url("/api/v1/namespaces/default/configmaps");
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let response = (writer.patch(&patched))
                    .header("Content-Type", "application/merge-patch+json")
                    .send(format!(r#"{{"metadata":{{"annotations":{{"busy":"{i}"}}}}}}"#))
                    .expect("PATCH");
                assert_eq!(super::common::status_of(response), 200, "a patch");
                let response = (writer.post(&configmaps))
                    .header("Content-Type", "application/json")
                    .send(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"busy-"}}"#)
                    .expect("POST");
                assert_eq!(super::common::status_of(response), 201, "a ConfigMap");
                i += 1;
            }
        });
        let _stop = Stop(&stop);
        (0..rounds)
            .map(|_| {
                let started = Instant::now();
                let (status, _) = get_discarding(agent, &url);
                assert_eq!(status, 200, "a consistent list");
                started.elapsed()
            })
            .collect()
    })
}

/// The latencies of the first `pages` pages of a consistent list by 500.
fn paginated(agent: &ureq::Agent, server: &ServerProcess, pages: usize) -> Vec<Duration> {
    let mut samples = Vec::new();
    let mut token = String::new();
    for _ in 0..pages {
        let mut url = server.url(&format!("{WEBAPPS}?limit=500"));
        if !token.is_empty() {
            url.push_str(&format!("&continue={token}"));
        }
        let started = Instant::now();
        let page = get_json(agent, &url);
        samples.push(started.elapsed());
        match page["metadata"]["continue"].as_str() {
            Some(next) if !next.is_empty() => token = next.to_owned(),
            _ => break,
        }
    }
    samples
}
