//! `cargo xtask bench`: kapi's performance figures in one table, beside the limits of the
//! same machine measured in the same run, as ratios. Printed (or `--json`), never
//! asserted: targets are read from the table, not enforced by timing tests.
//!
//! - `limits`: the embedded store's own creates, raw etcd-client `Txn`s and ranges, a
//!   memcpy and a loopback TCP transfer of a large list's bytes;
//! - `requests`: creates, GETs, updates and server-side applies through the release
//!   server on etcd and on the embedded store, and what RBAC costs a GET;
//! - `fanout`: one update seen by 1,000 watchers (one connection each), p50/p99 from the
//!   write being sent to each watcher reading it, with the server's and the client's CPU
//!   per event;
//! - `collections`: one collection of WebApps on the embedded store grown to 10k, 100k and
//!   1M objects: creates per band of growth, LIST p50/p99 (`resourceVersion=0` and
//!   consistent), paginated LIST (`limit=500`) p99, the server's RSS growth against the
//!   objects' JSON size, and the time to ready after a restart;
//! - `rules`: HTTPRoute creates with Gateway API's validation rules and without them;
//! - `policies`: ConfigMap creates with a ValidatingAdmissionPolicy bound to them and
//!   without;
//! - `kinds`: Kubernetes' built-in kinds beside the example's: Pod creates, GETs and a
//!   LIST of 10k Pods against the same for WebApps, and the start-up to ready with every
//!   set served;
//! - `peer`: kapi beside a running kube-apiserver of `shared/peer/` (`KAPI_PEER_DIR`), both
//!   on HTTPS with tokens, RBAC and audit: creates, GETs, LISTs, RSS growth.
//!
//! `--quick` runs every measurement at tiny sizes (the test suite does, so this code keeps
//! working); `--json` prints the rows as JSON for tracking; `--only=requests,fanout` runs
//! only those parts (beside the limits). Needs the `etcd` feature and an
//! etcd binary (`$KAPI_ETCD`, else `etcd` on the `PATH`).

#[path = "../../tests/support/etcd.rs"]
#[allow(dead_code)]
mod etcd;

#[path = "../../tests/support/pki.rs"]
#[allow(dead_code)]
mod pki;

#[path = "../../tests/support/webapp_crd.rs"]
mod webapp_crd;

mod collections;
mod common;
mod fanout;
mod http1;
mod kinds;
mod limits;
mod peer;
mod policies;
mod report;
mod requests;
mod rules;

pub(crate) use common::Options;
pub(crate) use report::Report;

/// Runs every measurement.
pub(crate) fn run(options: Options) -> Report {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut report = Report::new(options.json);
    let limits = limits::measure(&runtime, &options, &mut report);
    if options.runs("requests") {
        requests::measure(&runtime, &options, &limits, &mut report);
    }
    // The fan-out right after the requests, before the collections' quarter of an hour:
    // the figures that move most with this shared machine's pace (GETs on etcd, the
    // fan-out) are then taken minutes apart, at one pace, rather than across the run.
    if options.runs("fanout") {
        fanout::measure(&options, &mut report);
    }
    if options.runs("rules") {
        rules::measure(&options, &mut report);
    }
    if options.runs("policies") {
        policies::measure(&options, &mut report);
    }
    if options.runs("kinds") {
        kinds::measure(&options, &mut report);
    }
    if options.runs("collections") {
        collections::measure(&runtime, &options, &limits, &mut report);
    }
    if options.runs("peer") {
        peer::measure(&options, &mut report);
    }
    report
}

#[allow(dead_code)]
fn main() {
    // `cargo bench` passes `--bench`; ours are `--quick`, `--json` and `--only=a,b`.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = Options {
        quick: args.iter().any(|a| a == "--quick"),
        json: args.iter().any(|a| a == "--json"),
        only: (args.iter())
            .filter_map(|a| a.strip_prefix("--only="))
            .flat_map(|parts| parts.split(','))
            .map(str::to_owned)
            .collect(),
    };
    let report = run(options);
    report.finish();
}
