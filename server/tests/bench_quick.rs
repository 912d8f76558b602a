//! `cargo xtask bench --quick` inside the test suite: every measurement of the benchmark
//! runs at tiny sizes against the real server binary, so the benchmark code keeps working.
//! It checks that each figure was measured, never how fast.

#[path = "../benches/kapi/main.rs"]
#[allow(dead_code)]
mod bench;

#[test]
fn every_measurement_of_the_benchmark_runs() {
    let report = bench::run(bench::Options {
        quick: true,
        json: false,
        only: Vec::new(),
    });
    for expected in [
        "limit: raw etcd-client: create-if-absent Txn (1 KiB)",
        "kapi on etcd: ConfigMap creates (1 KiB)",
        "kapi on etcd: creates / the raw Txns around them",
        "kapi on etcd: etcd Txns per create",
        "kapi on etcd: etcd reads per GET",
        "kapi on the embedded store: apply cost / update cost",
        "kapi on the embedded store: client CPU per GET",
        "kapi on the embedded store, RBAC + token: ConfigMap GETs",
        "kapi on etcd: ConfigMap GETs as protobuf",
        "kapi on the embedded store: LIST as protobuf / as JSON, bytes",
        "HTTPRoute creates: with rules / without",
        "built-in kinds: Pod creates / WebApp creates",
        "built-in kinds: Pod LIST p50 / WebApp LIST p50",
        "built-in kinds: start-up to ready, every set served, p50",
        "ConfigMap GET p99, while 2 clients send objects whose rules cost kube's limit",
        "collection 1k: LIST (resourceVersion=0) p50",
        "collection 1k: LIST (as a Table, resourceVersion=0) p50",
        "collection 1k: paginated LIST (limit=500) page p99",
        "collection 1k: LIST (consistent, after another kind's write) p50",
        "collection 1k: RSS growth / objects' JSON size",
        "collection 1k: restart to ready",
        "collection on etcd 1k: LIST (consistent) p50",
        "collection on etcd 1k: restart to the cache loaded",
        "fan-out to 20 watchers: update to event delivered, p99",
        "fan-out to 20 watchers: update to event read, p99",
        "fan-out to 20 watchers: server CPU per event sent",
        "fan-out to 20 watchers: client CPU per event read",
    ] {
        let value = report.get(expected);
        assert!(
            value.is_some_and(f64::is_finite),
            "{expected}: {value:?} in {:?}",
            (report.rows().iter()).map(|r| &r.name).collect::<Vec<_>>()
        );
    }
}
