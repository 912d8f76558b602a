//! What validation rules (CEL) cost a create: Gateway API's HTTPRoute (v1.3.0, its
//! definition from `tests/manifests/gateway-api`), whose schema carries dozens of rules,
//! installed twice on one release server: as published, and with every rule removed (under
//! another group). The same object is created through each, by the same clients, and
//! "creates with its rules / without" is the cost of the rules: the target is at
//! most 1.5x, a share of at least 67%.

use std::time::Duration;

use serde_json::{Value, json};

use super::common::{
    CLIENTS, Options, ServerProcess, agent, percentile_ms, rate, run_threads_on, status_of,
    timed_gets,
};
use super::report::Report;

/// The group the rule-less copy is served in.
const BARE_GROUP: &str = "bench.gateway.example";

/// Measures HTTPRoute creates with and without the definition's rules.
pub(crate) fn measure(options: &Options, report: &mut Report) {
    let dir = tempfile::tempdir().expect("a data directory");
    let server = ServerProcess::start(&["--data-dir".into(), dir.path().display().to_string()]);
    let definition = httproute_definition();
    let rules = count_rules(&definition);
    let mut bare = definition.clone();
    strip_rules(&mut bare);
    bare["spec"]["group"] = json!(BARE_GROUP);
    bare["metadata"] = json!({"name": format!("httproutes.{BARE_GROUP}")});
    let agent = agent();
    for crd in [&definition, &bare] {
        install(&agent, &server, crd);
    }
    let with = creates(options, &server, "gateway.networking.k8s.io");
    let without = creates(options, &server, BARE_GROUP);
    let with = report.add(
        format!("HTTPRoute creates with its {rules} validation rules"),
        with,
        "ops/s",
    );
    let without = report.add(
        "HTTPRoute creates, the same rules removed",
        without,
        "ops/s",
    );
    report.share("HTTPRoute creates: with rules / without", with, without);
    latency_beside_costly_rules(options, &server, report);
}

/// A rule that costs about kube's whole per-rule limit on a list of 800 strings.
fn costly_definition() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "tagsets.bench.rules.example"},
        "spec": {
            "group": "bench.rules.example",
            "scope": "Namespaced",
            "names": {"plural": "tagsets", "kind": "TagSet"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": {"tags": {
                    "type": "array", "maxItems": 800,
                    "items": {"type": "string", "maxLength": 8},
                    "x-kubernetes-validations": [{"rule": "self.all(a, self.all(b, a != b || a == b))"}]
                }}}}
            }}}]
        }
    })
}

/// GET p99 of a small object alone, and again while other clients send objects whose
/// rules run up to kube's per-rule limit (each refused): what an expensive rule costs
/// other requests.
fn latency_beside_costly_rules(options: &Options, server: &ServerProcess, report: &mut Report) {
    let agent = agent();
    let crd = costly_definition();
    let url = server.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    assert_eq!(
        status_of(agent.post(&url).send_json(&crd).expect("a create")),
        201
    );
    let collection = server.url("/apis/bench.rules.example/v1/namespaces/default/tagsets");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while status_of(agent.get(&collection).call().expect("a list")) != 200 {
        assert!(std::time::Instant::now() < deadline, "tagsets never served");
        std::thread::sleep(Duration::from_millis(20));
    }
    let probe = server.url("/api/v1/namespaces/default/configmaps/probe");
    let configmaps = server.url("/api/v1/namespaces/default/configmaps");
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe"}});
    assert_eq!(
        status_of(agent.post(&configmaps).send_json(&body).expect("a create")),
        201
    );
    let rounds = if options.quick { 20 } else { 2000 };
    let (mut alone, _) = timed_gets(&agent, &probe, "application/json", rounds);
    let tags: Vec<String> = (0..800).map(|i| format!("t{i}")).collect();
    let costly = json!({"apiVersion": "bench.rules.example/v1", "kind": "TagSet", "metadata": {"name": "x"}, "spec": {"tags": tags}});
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (mut beside, refused) = std::thread::scope(|scope| {
        let senders: Vec<_> = (0..2)
            .map(|_| {
                let (stop, costly, collection) = (&stop, &costly, &collection);
                scope.spawn(move || {
                    let agent = super::common::agent();
                    let mut refused = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let status =
                            status_of(agent.post(collection).send_json(costly).expect("a create"));
                        assert_eq!(status, 422, "a costly object is refused");
                        refused += 1;
                    }
                    refused
                })
            })
            .collect();
        let (samples, _) = timed_gets(&agent, &probe, "application/json", rounds);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let refused: u64 = senders
            .into_iter()
            .map(|s| s.join().expect("a sender"))
            .sum();
        (samples, refused)
    });
    report.add(
        "ConfigMap GET p99, alone",
        percentile_ms(&mut alone, 99.0),
        "ms",
    );
    report.add(
        "ConfigMap GET p99, while 2 clients send objects whose rules cost kube's limit",
        percentile_ms(&mut beside, 99.0),
        "ms",
    );
    report.add(
        "objects refused for their rules' cost meanwhile",
        refused as f64,
        "objects",
    );
}

/// The HTTPRoute CustomResourceDefinition of Gateway API v1.3.0, standard channel.
fn httproute_definition() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/manifests/gateway-api/crds.yaml"
    );
    let text = std::fs::read_to_string(path).expect("the Gateway API definitions");
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| serde::Deserialize::deserialize(doc).expect("a YAML document"))
        .find(|doc: &Value| doc["spec"]["names"]["kind"] == "HTTPRoute")
        .expect("the HTTPRoute definition")
}

/// How many rules the served version's schema has.
fn count_rules(definition: &Value) -> usize {
    fn count(v: &Value) -> usize {
        match v {
            Value::Object(fields) => fields
                .iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("x-kubernetes-validations", Value::Array(rules)) => rules.len(),
                    _ => count(v),
                })
                .sum(),
            Value::Array(items) => items.iter().map(count).sum(),
            _ => 0,
        }
    }
    let versions = definition["spec"]["versions"].as_array().expect("versions");
    let served = (versions.iter())
        .find(|v| v["storage"] == true)
        .expect("a storage version");
    count(&served["schema"])
}

/// `v` without any `x-kubernetes-validations`.
fn strip_rules(v: &mut Value) {
    match v {
        Value::Object(fields) => {
            fields.remove("x-kubernetes-validations");
            fields.values_mut().for_each(strip_rules);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_rules),
        _ => {}
    }
}

/// Creates `crd` and waits until it is served.
fn install(agent: &ureq::Agent, server: &ServerProcess, crd: &Value) {
    let url = server.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    let status = status_of(agent.post(&url).send_json(crd).expect("a create"));
    assert_eq!(status, 201, "creating {}", crd["metadata"]["name"]);
    let group = crd["spec"]["group"].as_str().expect("a group");
    let list = server.url(&format!("/apis/{group}/v1/namespaces/default/httproutes"));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while status_of(agent.get(&list).call().expect("a list")) != 200 {
        assert!(std::time::Instant::now() < deadline, "{group} never served");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An HTTPRoute of `group` named `name`: parents, hostnames, and rules with path and
/// header matches, header filters and weighted backends, as Gateway API's examples have
/// them.
fn route(group: &str, name: &str) -> Value {
    json!({
        "apiVersion": format!("{group}/v1"),
        "kind": "HTTPRoute",
        "metadata": {"name": name},
        "spec": {
            "parentRefs": [{"name": "example-gateway", "sectionName": "https"}],
            "hostnames": ["shop.example.com", "www.shop.example.com"],
            "rules": [
                {
                    "matches": [
                        {"path": {"type": "PathPrefix", "value": "/cart"},
                         "headers": [{"name": "x-variant", "value": "beta"}]},
                        {"path": {"type": "Exact", "value": "/checkout"}, "method": "POST"}
                    ],
                    "filters": [{
                        "type": "RequestHeaderModifier",
                        "requestHeaderModifier": {"add": [{"name": "x-route", "value": "cart"}]}
                    }],
                    "backendRefs": [
                        {"name": "cart-v1", "port": 8080, "weight": 90},
                        {"name": "cart-v2", "port": 8080, "weight": 10}
                    ]
                },
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": [{"name": "storefront", "port": 80}]
                }
            ]
        }
    })
}

/// Creates of HTTPRoutes of `group` per second, by [`CLIENTS`] clients.
fn creates(options: &Options, server: &ServerProcess, group: &str) -> f64 {
    let url = server.url(&format!("/apis/{group}/v1/namespaces/default/httproutes"));
    let (ops, elapsed) = run_threads_on(agent, CLIENTS, options.window(), |agent, client, i| {
        let body = route(group, &format!("route-{client}-{i}"));
        let status = status_of(agent.post(&url).send_json(&body).expect("a create"));
        assert_eq!(status, 201, "an HTTPRoute create");
    });
    rate(ops, elapsed)
}
