//! `/metrics` end to end, on a secure server with RBAC: a scraper in `system:monitoring`
//! reads it and a user without that grant gets 403. After a known mix of requests it holds
//! their exact counts under kube's names and labels, a latency histogram whose count
//! matches, the objects stored per resource, a registered watcher while `kubectl get -w`
//! runs; and the official Python parsers (`prometheus_client`) read both the text format
//! and OpenMetrics. A CPU profile (`--profiling`) is the administrator's, in pprof's
//! gzipped protobuf. (That the Grafana dashboard in `deploy/` queries only exported metrics
//! is checked by `kapi-metrics`' tests.)

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::Client;
use support::kubectl::{Kubectl, Version};
use support::pki::{ALICE_TOKEN, MONITORING_TOKEN, Pki};
use support::python::Script;
use support::{Backend, Server, wait_for};

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";
const WAIT: Duration = Duration::from_secs(20);

/// One sample: its name, labels and value.
#[derive(Debug, Clone)]
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

/// The samples of a text-format scrape (the exposition is line-oriented: `name{labels}
/// value`), read here to poll for a condition; the official parser reads it in
/// [`python_parsers_read_both_formats`].
fn scrape(client: &Client) -> Vec<Sample> {
    let response = client.get("/metrics").unwrap();
    assert_eq!(response.status, 200, "{response:?}");
    (response.body.lines())
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("a sample line");
            let (name, labels) = match series.split_once('{') {
                Some((name, labels)) => (name, labels.trim_end_matches('}')),
                None => (series, ""),
            };
            let labels = (labels.split("\",").filter(|l| !l.is_empty()))
                .map(|pair| {
                    let (key, value) = pair.split_once("=\"").expect("label=\"value\"");
                    (key.to_owned(), value.trim_end_matches('"').to_owned())
                })
                .collect();
            Sample {
                name: name.to_owned(),
                labels,
                value: value.parse().expect("a number"),
            }
        })
        .collect()
}

/// The value of the sample `name` whose labels include `labels` (0 when there is none:
/// a series appears with its first observation).
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    (samples.iter())
        .filter(|s| s.name == name)
        .find(|s| (labels.iter()).all(|(k, v)| s.labels.iter().any(|(lk, lv)| lk == k && lv == v)))
        .map_or(0.0, |s| s.value)
}

fn webapp(name: &str) -> Value {
    json!({
        "apiVersion": "apps.example.dev/v1",
        "kind": "WebApp",
        "metadata": {"name": name},
        "spec": {"replicas": 1, "container": {"image": "nginx:1.25"}},
    })
}

/// The labels of a GET of one webapp.
const GET_WEBAPP: [(&str, &str); 7] = [
    ("verb", "GET"),
    ("group", "apps.example.dev"),
    ("version", "v1"),
    ("resource", "webapps"),
    ("subresource", ""),
    ("scope", "resource"),
    ("component", "apiserver"),
];

#[test]
fn requests_objects_and_watchers_are_counted() {
    let server = Server::start_secure(Pki::new(), Backend::Embedded, &[]);
    let admin = server.client();
    let scraper = Client::with_tls(&server.url(), &server.pki().ca_pem(), MONITORING_TOKEN);
    let alice = Client::with_tls(&server.url(), &server.pki().ca_pem(), ALICE_TOKEN);

    // `/metrics` is a non-resource URL under RBAC: `system:monitoring`'s, not alice's.
    let denied = alice.get("/metrics").unwrap();
    assert_eq!(denied.status, 403, "{denied:?}");
    assert_eq!(
        denied.json()["message"],
        "forbidden: User \"alice\" cannot get path \"/metrics\""
    );

    // The mix: three GETs of missing webapps, two creates, one dry-run create, a list, and
    // a path nothing serves (never a label).
    for i in 0..3 {
        assert_eq!(
            admin.get(&format!("{WEBAPPS}/missing-{i}")).unwrap().status,
            404
        );
    }
    for name in ["one", "two"] {
        assert_eq!(admin.post(WEBAPPS, &webapp(name)).unwrap().status, 201);
    }
    let dry = admin
        .post(&format!("{WEBAPPS}?dryRun=All"), &webapp("three"))
        .unwrap();
    assert_eq!(dry.status, 201, "{dry:?}");
    assert_eq!(admin.get(WEBAPPS).unwrap().status, 200);
    assert_eq!(
        admin
            .get("/apis/apps.example.dev/v1/gadgets")
            .unwrap()
            .status,
        404
    );

    let samples = wait_for(
        WAIT,
        "the requests to be counted",
        || format!("{:#?}", scrape(&scraper)),
        || {
            let samples = scrape(&scraper);
            let created = value(
                &samples,
                "apiserver_request_total",
                &[
                    ("verb", "POST"),
                    ("resource", "webapps"),
                    ("dry_run", ""),
                    ("code", "201"),
                ],
            );
            (created == 2.0).then_some(samples)
        },
    );
    let not_found = [GET_WEBAPP.as_slice(), &[("dry_run", ""), ("code", "404")]].concat();
    assert_eq!(value(&samples, "apiserver_request_total", &not_found), 3.0);
    let dry_run = [("verb", "POST"), ("dry_run", "All"), ("code", "201")];
    assert_eq!(value(&samples, "apiserver_request_total", &dry_run), 1.0);
    let list = [
        ("verb", "LIST"),
        ("resource", "webapps"),
        ("scope", "namespace"),
    ];
    assert_eq!(value(&samples, "apiserver_request_total", &list), 1.0);
    assert_eq!(
        value(
            &samples,
            "apiserver_request_duration_seconds_count",
            &GET_WEBAPP
        ),
        3.0
    );
    let le = [GET_WEBAPP.as_slice(), &[("le", "+Inf")]].concat();
    assert_eq!(
        value(&samples, "apiserver_request_duration_seconds_bucket", &le),
        3.0
    );
    assert_eq!(
        value(&samples, "apiserver_response_sizes_count", &GET_WEBAPP),
        3.0
    );
    assert!(
        !(samples.iter()).any(|s| s.labels.iter().any(|(_, v)| v == "gadgets")),
        "an unserved path became a label"
    );
    // Objects per resource: the two created (the dry run stored nothing).
    let webapps = [("resource", "webapps.apps.example.dev")];
    assert_eq!(value(&samples, "apiserver_storage_objects", &webapps), 2.0);
    let creates = [
        ("operation", "create"),
        ("type", "webapps.apps.example.dev"),
    ];
    assert_eq!(value(&samples, "etcd_requests_total", &creates), 2.0);
    assert!(value(&samples, "apiserver_storage_size_bytes", &[]) > 0.0);
    assert!(value(&samples, "process_resident_memory_bytes", &[]) > 0.0);

    // A watcher, while `kubectl get -w` runs; none once it is gone.
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let mut watch = kubectl.spawn(&["get", "wa", "-n", "default", "-w"]);
    watch.wait_line(WAIT, "the row of one", |l| l.starts_with("one "));
    let watchers = |samples: &[Sample]| {
        let registered = [("group", "apps.example.dev"), ("kind", "WebApp")];
        let longrunning = [("verb", "WATCH"), ("resource", "webapps")];
        (
            value(samples, "apiserver_registered_watchers", &registered),
            value(samples, "apiserver_longrunning_requests", &longrunning),
        )
    };
    wait_for(WAIT, "a registered watcher", String::new, || {
        (watchers(&scrape(&scraper)) == (1.0, 1.0)).then_some(())
    });
    assert_eq!(admin.post(WEBAPPS, &webapp("four")).unwrap().status, 201);
    watch.wait_line(WAIT, "the row of four", |l| l.starts_with("four "));
    let events = [("group", "apps.example.dev"), ("kind", "WebApp")];
    assert!(value(&scrape(&scraper), "apiserver_watch_events_total", &events) >= 1.0);
    drop(watch);
    wait_for(WAIT, "the watcher to go", String::new, || {
        (watchers(&scrape(&scraper)) == (0.0, 0.0)).then_some(())
    });
}

#[test]
fn python_parsers_read_both_formats() {
    let server = Server::start_secure(Pki::new(), Backend::Embedded, &[]);
    let admin = server.client();
    assert_eq!(
        admin.get(&format!("{WEBAPPS}/missing")).unwrap().status,
        404
    );
    let scraper = Client::with_tls(&server.url(), &server.pki().ca_pem(), MONITORING_TOKEN);
    wait_for(WAIT, "the GET to be counted", String::new, || {
        (value(&scrape(&scraper), "apiserver_request_total", &GET_WEBAPP) == 1.0).then_some(())
    });
    let results = Script::start("metrics.py", &server, &[MONITORING_TOKEN]).finish();
    assert_eq!(results.len(), 2, "{results:?}");
    for result in &results {
        let samples = result["samples"].as_array().unwrap();
        let get = samples.iter().find(|s| {
            s[0] == "apiserver_request_total"
                && s[1]["resource"] == "webapps"
                && s[1]["code"] == "404"
        });
        let get = get.unwrap_or_else(|| panic!("no 404 GET of webapps in {result}"));
        assert_eq!(get[2], 1.0, "{}", result["format"]);
        assert!(
            samples.iter().any(|s| s[0] == "process_cpu_seconds_total"),
            "{}",
            result["format"]
        );
    }
    assert_eq!(results[1]["format"], "openmetrics");
}

#[test]
fn a_cpu_profile_is_gzipped_pprof_for_administrators_only() {
    use std::io::Read;
    let server = Server::start_secure(Pki::new(), Backend::Embedded, &[]);
    let scraper = Client::with_tls(&server.url(), &server.pki().ca_pem(), MONITORING_TOKEN);
    let denied = scraper.get("/debug/pprof/profile?seconds=1").unwrap();
    assert_eq!(denied.status, 403, "{denied:?}");
    let bad = server
        .client()
        .get("/debug/pprof/profile?seconds=0")
        .unwrap();
    assert_eq!(bad.status, 400, "{bad:?}");

    let response = server
        .client()
        .get_bytes("/debug/pprof/profile?seconds=1")
        .unwrap();
    assert_eq!(response.0, 200);
    let gzipped = response.1;
    assert_eq!(&gzipped[..2], &[0x1f, 0x8b], "gzip's magic number");
    let mut profile = Vec::new();
    flate2::read::GzDecoder::new(&gzipped[..])
        .read_to_end(&mut profile)
        .unwrap();
    // A `perftools.profiles.Profile`: field 1 (`sample_type`, length-delimited) first, and
    // the string table names what was sampled.
    assert_eq!(
        profile[0],
        0x0a,
        "{:02x?}",
        &profile[..16.min(profile.len())]
    );
    let strings = String::from_utf8_lossy(&profile);
    assert!(
        strings.contains("cpu") && strings.contains("nanoseconds"),
        "{strings}"
    );
}

/// A consistent read of a kind whose last change is older than another kind's is served by
/// its watch cache, caught up by a progress request, on the embedded store: `kubectl get`
/// and a GET make no storage read of the kind (`etcd_requests_total`), its lists count as
/// consistent reads from the cache (`apiserver_watch_cache_consistent_read_total`), and
/// they answer at the store's revision.
#[test]
fn consistent_reads_of_a_quiet_kind_come_from_its_cache() {
    let server = Server::start_on(Backend::Embedded);
    let (served, revision) = consistent_reads_after_another_kinds_write(&server);
    assert_eq!(
        served,
        [0.0, 0.0, 2.0, 0.0],
        "storage reads of webapps (list, get); consistent lists from the cache, from storage"
    );
    assert!(
        revision.is_some(),
        "the list answered at the store's revision"
    );
}

/// On etcd the cache is caught up the same way only when every member orders progress
/// answers with events (v3.4.31+, v3.5.13+, as kube-apiserver checks). On an older etcd
/// each read asks etcd once, with the same answers: a GET reads the object; a list reads
/// only keys and revisions, which show the cache holds etcd's state, so the cache answers.
#[cfg(feature = "etcd")]
#[test]
fn consistent_reads_of_a_quiet_kind_on_etcd() {
    let (version, ordered) = etcd_version();
    let server = Server::start_on(Backend::Etcd);
    if ordered {
        // The server checks the member's version in the background just after it starts.
        let log = || server.log().tail(40);
        wait_for(WAIT, "reads served from the cache", log, || {
            let (served, _) = consistent_reads_after_another_kinds_write(&server);
            (served == [0.0, 0.0, 2.0, 0.0]).then_some(())
        });
    } else {
        let (served, revision) = consistent_reads_after_another_kinds_write(&server);
        assert_eq!(
            served,
            [2.0, 1.0, 2.0, 0.0],
            "etcd {version}: storage reads of webapps (keys-only lists, get); consistent lists from the cache, from storage"
        );
        assert!(
            revision.is_some(),
            "the list answered at the store's revision"
        );
    }
}

/// The version of the etcd the tests run, and whether it answers progress requests in
/// order with events (v3.4.31+, v3.5.13+), as the server checks before it asks.
#[cfg(feature = "etcd")]
fn etcd_version() -> (String, bool) {
    let version = std::process::Command::new(support::etcd::binary())
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let version = (version.lines())
        .find_map(|line| line.strip_prefix("etcd Version: "))
        .unwrap_or_else(|| panic!("no version in {version:?}"))
        .to_owned();
    let numbers: Vec<u64> = version.split('.').map(|n| n.parse().unwrap()).collect();
    let ordered = match numbers[..] {
        [3, 4, patch] => patch >= 31,
        [3, 5, patch] => patch >= 13,
        [major, minor, _] => (major, minor) >= (3, 6),
        _ => panic!("etcd version {version}"),
    };
    (version, ordered)
}

/// On etcd, creates that arrive together commit in one transaction, each at a revision of
/// its own within etcd's; a keys-only list cannot tell those (the slot is in the value),
/// yet it names each key's write. A consistent list of such creates, after another kind's
/// write left their cache behind, is still answered by the cache (`fallback="false"`),
/// with every object: on an etcd that cannot report progress in order, after one
/// keys-only list of storage (on a newer one, progress catches the cache up instead).
#[cfg(feature = "etcd")]
#[test]
fn consistent_lists_of_creates_committed_together_come_from_the_cache_on_etcd() {
    let server = Server::start_on(Backend::Etcd);
    let client = server.client();
    let slot_bits = kapi::storage::etcd::SLOT_BITS;
    let within_a_transaction = |rv: u64| !(rv + 1).is_multiple_of(1 << slot_bits);
    let mut names = Vec::new();
    // Rounds of concurrent creates until one got a revision within a shared transaction
    // (the first round almost always has one).
    for round in 0.. {
        assert!(round < 20, "no two creates ever shared a transaction");
        let creates: Vec<_> = (0..16)
            .map(|i| {
                let client = server.client();
                let name = format!("together-{round}-{i}");
                std::thread::spawn(move || {
                    let created = client.post(WEBAPPS, &webapp(&name)).unwrap();
                    assert_eq!(created.status, 201, "{created:?}");
                    let rv = created.json()["metadata"]["resourceVersion"].clone();
                    (name, rv.as_str().unwrap().parse::<u64>().unwrap())
                })
            })
            .collect();
        let created: Vec<_> = creates.into_iter().map(|t| t.join().unwrap()).collect();
        let shared = created.iter().any(|(_, rv)| within_a_transaction(*rv));
        names.extend(created.into_iter().map(|(name, _)| name));
        if shared {
            break;
        }
    }
    let listed = |list: &Value| -> Vec<String> {
        let items = list["items"].as_array().cloned().unwrap_or_default();
        let mut names: Vec<String> = (items.iter())
            .filter_map(|item| Some(item["metadata"]["name"].as_str()?.to_owned()))
            .collect();
        names.sort();
        names
    };
    names.sort();
    wait_until_cached(&server, &names);
    let configmap =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after-together"}});
    let created = client
        .post("/api/v1/namespaces/default/configmaps", &configmap)
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");

    let before = scrape(&client);
    let list = client.get(WEBAPPS).unwrap();
    assert_eq!(list.status, 200, "{list:?}");
    let after = scrape(&client);
    assert_eq!(listed(&list.json()), names);
    let counted = |fallback| webapp_lists(&after, fallback) - webapp_lists(&before, fallback);
    let storage_lists = |samples: &[Sample]| {
        let labels = [("operation", "list"), ("type", "webapps.apps.example.dev")];
        value(samples, "etcd_requests_total", &labels)
    };
    let (version, ordered) = etcd_version();
    assert_eq!(
        (
            counted("false"),
            counted("true"),
            storage_lists(&after) - storage_lists(&before)
        ),
        (1.0, 0.0, if ordered { 0.0 } else { 1.0 }),
        "etcd {version}: the consistent list from the cache, from storage; storage's lists"
    );
}

/// Consistent lists of a kind that is being written, beside writes of another kind, on
/// etcd: the other kind's writes leave the kind's cache behind storage, and the kind's own
/// writes are often still on their way to the cache when a list reads storage's keys.
/// Every list must hold every write acknowledged before it was sent (each one read at or
/// after them, resourceVersions never going back), and the cache must answer most of the
/// lists (`fallback="false"`) rather than leave them to storage.
#[cfg(feature = "etcd")]
#[test]
fn consistent_lists_of_a_kind_being_written_on_etcd() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    const WRITERS: usize = 3;
    let server = Server::start_on(Backend::Etcd);
    let client = server.client();
    // Each writer's WebApp, and the last `seq` annotation each has had acknowledged.
    let acknowledged: Arc<Vec<AtomicU64>> =
        Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let name = format!("busy-{writer}");
            assert_eq!(client.post(WEBAPPS, &webapp(&name)).unwrap().status, 201);
            let (client, acknowledged, stop) = (
                server.client(),
                Arc::clone(&acknowledged),
                Arc::clone(&stop),
            );
            std::thread::spawn(move || {
                let mut seq = 0;
                while !stop.load(Ordering::Acquire) {
                    seq += 1;
                    let patch = json!({"metadata": {"annotations": {"seq": seq.to_string()}}});
                    let patched = (client.merge_patch(&format!("{WEBAPPS}/{name}"), &patch))
                        .unwrap();
                    assert_eq!(patched.status, 200, "{patched:?}");
                    acknowledged[writer].store(seq, Ordering::Release);
                    let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("{name}-{seq}")}});
                    let other = (client.post("/api/v1/namespaces/default/configmaps", &configmap))
                        .unwrap();
                    assert_eq!(other.status, 201, "{other:?}");
                }
            })
        })
        .collect();
    wait_for(
        WAIT,
        "every writer's first patch",
        || server.log().tail(40),
        || {
            (acknowledged
                .iter()
                .all(|seq| seq.load(Ordering::Acquire) > 0))
            .then_some(())
        },
    );
    let before = scrape(&client);
    let rounds = 60;
    let mut last_revision = 0;
    for round in 0..rounds {
        let sent: Vec<u64> = (acknowledged.iter())
            .map(|seq| seq.load(Ordering::Acquire))
            .collect();
        let list = client.get(WEBAPPS).unwrap();
        assert_eq!(list.status, 200, "{list:?}");
        let list = list.json();
        let items = list["items"].as_array().unwrap();
        for (writer, seq) in sent.iter().enumerate() {
            let name = format!("busy-{writer}");
            let busy = (items.iter())
                .find(|item| item["metadata"]["name"] == name.as_str())
                .unwrap_or_else(|| panic!("list {round} lacks {name}"));
            let listed: u64 = (busy["metadata"]["annotations"]["seq"].as_str())
                .and_then(|s| s.parse().ok())
                .expect("a seq annotation");
            assert!(
                listed >= *seq,
                "list {round} holds {name} at seq {listed}, but seq {seq} was acknowledged before it was sent"
            );
        }
        let revision: u64 = (list["metadata"]["resourceVersion"].as_str())
            .and_then(|rv| rv.parse().ok())
            .expect("a list resourceVersion");
        assert!(
            revision >= last_revision,
            "list {round} at revision {revision}, after a list at {last_revision}"
        );
        last_revision = revision;
    }
    stop.store(true, Ordering::Release);
    for writer in writers {
        writer.join().expect("a writer");
    }
    let after = scrape(&client);
    let from_cache = webapp_lists(&after, "false") - webapp_lists(&before, "false");
    let from_storage = webapp_lists(&after, "true") - webapp_lists(&before, "true");
    assert_eq!(
        from_cache + from_storage,
        f64::from(rounds),
        "every list counted"
    );
    // A list falls back only when the cache has not caught up within its waits (100 ms
    // each): rare, even on a loaded machine. (From outside, the cache is seldom seen behind
    // a write this server acknowledged: its watch event usually arrives before the
    // writer's answer reaches the reader, so this test does not show the wait itself;
    // `kapi-apiserver`'s cache tests do, with a store that holds changes back.)
    assert!(
        from_cache >= f64::from(rounds) / 2.0,
        "only {from_cache} of {rounds} lists of the busy kind came from its cache"
    );
}

/// The consistent lists of webapps counted in `samples`: those the cache answered
/// (`fallback` "false"), or storage ("true").
fn webapp_lists(samples: &[Sample], fallback: &str) -> f64 {
    let labels = [
        ("resource", "webapps.apps.example.dev"),
        ("success", "true"),
        ("fallback", fallback),
    ];
    value(
        samples,
        "apiserver_watch_cache_consistent_read_total",
        &labels,
    )
}

/// Waits until the webapps' cache holds every one of `names` (a list with
/// `resourceVersion=0` reads the cache alone).
fn wait_until_cached(server: &Server, names: &[String]) {
    let client = server.client();
    wait_for(
        WAIT,
        "the webapps' cache",
        || server.log().tail(40),
        || {
            let cached = client.get(&format!("{WEBAPPS}?resourceVersion=0")).unwrap();
            let items = cached.json()["items"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            (items.iter())
                .filter(|item| names.iter().any(|n| item["metadata"]["name"] == **n))
                .count()
                .eq(&names.len())
                .then_some(())
        },
    );
}

/// Creates two webapps, waits for their cache to hold them, then writes a ConfigMap and
/// reads the webapps consistently: with `kubectl get`, a raw list and a raw GET. Returns
/// what those reads counted (storage lists and gets of webapps; consistent lists the cache
/// answered, and those storage answered), and the list's resourceVersion if it is the
/// ConfigMap's (the store's revision).
fn consistent_reads_after_another_kinds_write(server: &Server) -> ([f64; 4], Option<String>) {
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, server);
    let suffix = support::now_micro()
        .replace([':', '.', '-'], "")
        .to_lowercase();
    let names = [format!("a-{suffix}"), format!("b-{suffix}")];
    for name in &names {
        assert_eq!(client.post(WEBAPPS, &webapp(name)).unwrap().status, 201);
    }
    wait_until_cached(server, &names);
    let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c-{suffix}")}});
    let created = client
        .post("/api/v1/namespaces/default/configmaps", &configmap)
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let store_revision = created.json()["metadata"]["resourceVersion"].clone();

    let reads = |samples: &[Sample]| {
        let storage = ["list", "get"].map(|operation| {
            let labels = [
                ("operation", operation),
                ("type", "webapps.apps.example.dev"),
            ];
            value(samples, "etcd_requests_total", &labels)
        });
        let lists = ["false", "true"].map(|fallback| webapp_lists(samples, fallback));
        [storage[0], storage[1], lists[0], lists[1]]
    };
    let before = reads(&scrape(&client));
    let run = kubectl.ok(&["get", "webapps", "-n", "default", "-o", "name"]);
    for name in &names {
        assert!(
            run.stdout
                .contains(&format!("webapp.apps.example.dev/{name}")),
            "{}",
            run.stdout
        );
    }
    let list = client.get(WEBAPPS).unwrap().json();
    let one = client.get(&format!("{WEBAPPS}/{}", names[0])).unwrap();
    assert_eq!(one.status, 200, "{one:?}");
    assert_eq!(one.json()["metadata"]["name"], names[0].as_str());
    let after = reads(&scrape(&client));
    let served = [0, 1, 2, 3].map(|i| after[i] - before[i]);
    let at_store = (list["metadata"]["resourceVersion"] == store_revision)
        .then(|| store_revision.as_str().unwrap_or_default().to_owned());
    (served, at_store)
}
