//! The server's log with `--logging-format json`: every line is one JSON object, and the
//! request line of a request (from `-v=3`, as kube's httplog) names its verb, status,
//! user and the audit id its response carried as `Audit-Id`; below `-v=3` requests are
//! not logged.

use crate::support;

use std::time::Duration;

use serde_json::Value;
use support::{Server, wait_for};

#[test]
fn json_log_lines_carry_the_request_and_its_audit_id() {
    let server = Server::start_with(&["--logging-format", "json", "-v", "3"]);
    let response = server.client().get("/api/v1/namespaces").unwrap();
    assert_eq!(response.status, 200);
    let audit_id = response
        .audit_id
        .clone()
        .expect("every response has an Audit-Id");

    let log = server.log();
    let lines = wait_for(
        Duration::from_secs(10),
        "the request's log line",
        || log.tail(20),
        || {
            let lines: Vec<Value> = (log.tail(500).lines())
                .filter_map(|line| line.strip_prefix("[stderr] "))
                .map(|line| {
                    serde_json::from_str(line)
                        .unwrap_or_else(|e| panic!("a log line is not JSON ({e}): {line}"))
                })
                .collect();
            lines
                .iter()
                .any(|l| l["audit_id"] == audit_id.as_str())
                .then_some(lines)
        },
    );
    let line = lines
        .iter()
        .find(|l| l["audit_id"] == audit_id.as_str())
        .unwrap();
    assert_eq!(line["target"], "kapi::http");
    assert_eq!(line["verb"], "list");
    assert_eq!(line["status"], 200);
    assert_eq!(line["user"], "system:anonymous");
    assert_eq!(line["path"], "/api/v1/namespaces");
}

#[test]
fn requests_are_not_logged_below_verbosity_3() {
    let mut server = Server::start_with(&["--logging-format", "json", "-v", "2"]);
    let response = server.client().get("/api/v1/namespaces").unwrap();
    assert_eq!(response.status, 200);
    assert!(response.audit_id.is_some(), "the Audit-Id is still sent");
    assert!(server.terminate(Duration::from_secs(30)).success());
    // The last line the server writes, so every earlier one has been read.
    let log = server.log();
    let lines = wait_for(
        Duration::from_secs(10),
        "the server's last log line",
        || log.tail(20),
        || {
            let tail = log.tail(500);
            tail.contains(r#""message":"stopped""#).then_some(tail)
        },
    );
    assert!(
        lines.contains(r#""message":"serving""#),
        "the other info lines are there: {lines}"
    );
    assert!(
        !lines.contains(r#""target":"kapi::http""#),
        "no request line: {lines}"
    );
}
