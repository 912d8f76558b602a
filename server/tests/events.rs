//! Events against the real `kapi-server`: one Event recorded through core `v1` (as
//! client-go's legacy recorder and kubectl's tools write them) and one through
//! `events.k8s.io/v1` (as newer recorders do) are the same kind of object in one storage:
//! each reads and watches through both groups; `kubectl describe wa web` (1.32 and 1.20)
//! shows both under the WebApp's events, found by kubectl's field selector; `kubectl events
//! --for webapp/web` (1.32) lists them; and Events older than `--event-ttl` are removed.
//! kube's answers to invalid Events are rows of the differential table.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::Client;
use support::{Backend, Kubectl, Server, Version, for_both_versions, on_both_backends, wait_for};

const DEADLINE: Duration = Duration::from_secs(30);

/// Creates WebApp `web` in `default`; returns its uid.
fn webapp(kubectl: &Kubectl) -> String {
    let file = kubectl.write_file(
        "web.yaml",
        "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata: {name: web}\n\
         spec: {container: {image: nginx:1.27}}\n",
    );
    kubectl.ok(&["create", "-f", &file]);
    let object = kubectl.ok(&["get", "wa", "web", "-o", "json"]).json();
    object["metadata"]["uid"].as_str().unwrap().to_owned()
}

/// A reference to WebApp `web` (`uid`) in `default`.
fn web(uid: &str) -> Value {
    json!({
        "apiVersion": "apps.example.dev/v1", "kind": "WebApp",
        "namespace": "default", "name": "web", "uid": uid
    })
}

/// An Event about WebApp `web` (`uid`) as client-go's legacy recorder writes it.
fn core_event(uid: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.scaled", "namespace": "default"},
        "involvedObject": web(uid),
        "reason": "ScaledUp",
        "message": "Scaled up to 3 replicas",
        "type": "Normal",
        "source": {"component": "webapp-controller"},
        "firstTimestamp": support::now(),
        "lastTimestamp": support::now(),
        "count": 1
    })
}

/// An Event about WebApp `web` (`uid`) as an `events.k8s.io/v1` recorder writes it.
fn new_event(uid: &str) -> Value {
    json!({
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "web.pulled", "namespace": "default"},
        "eventTime": support::now_micro(),
        "regarding": web(uid),
        "reason": "ImagePulled",
        "note": "Pulled image nginx:1.27",
        "type": "Warning",
        "action": "Pull",
        "reportingController": "example.dev/puller",
        "reportingInstance": "puller-1"
    })
}

fn names(list: &Value) -> Vec<&str> {
    let items = list["items"].as_array().expect("a list");
    let mut names: Vec<&str> = (items.iter())
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    names.sort();
    names
}

/// Both groups see both Events, a watch of one sees the other's writes, and field
/// selectors work in each group's own field names.
#[test]
fn both_groups_serve_the_same_events() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let uid = webapp(&kubectl);
    let client = Client::new(server.addr());
    let core = "/api/v1/namespaces/default/events";
    let group = "/apis/events.k8s.io/v1/namespaces/default/events";

    let mut watch = client
        .watch(&format!("{group}?watch=true"), "application/json")
        .expect("a watch of events.k8s.io");
    let created = client.post(core, &core_event(&uid)).unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let event = watch.next_event(DEADLINE);
    assert_eq!(event["type"], "ADDED", "{event}");
    assert_eq!(event["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(event["object"]["note"], "Scaled up to 3 replicas");
    assert_eq!(event["object"]["deprecatedCount"], 1);
    assert_eq!(event["object"]["regarding"]["uid"], uid.as_str());

    let created = client.post(group, &new_event(&uid)).unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let read = client.get(&format!("{core}/web.pulled")).unwrap().json();
    assert_eq!(read["apiVersion"], "v1");
    assert_eq!(read["message"], "Pulled image nginx:1.27");
    assert_eq!(read["reportingComponent"], "example.dev/puller");
    assert_eq!(read["involvedObject"]["name"], "web");
    // kube's core kinds carry no generation.
    assert!(read["metadata"].get("generation").is_none(), "{read}");

    for (path, selector) in [
        (
            core,
            format!("involvedObject.uid={uid},involvedObject.kind=WebApp"),
        ),
        (group, format!("regarding.uid={uid},regarding.name=web")),
    ] {
        let list = client
            .get(&format!("{path}?fieldSelector={selector}"))
            .unwrap();
        assert_eq!(list.status, 200, "{}", list.body);
        assert_eq!(
            names(&list.json()),
            ["web.pulled", "web.scaled"],
            "{selector}"
        );
    }
    let warnings = client
        .get(&format!(
            "{group}?fieldSelector=type=Warning,reportingController=example.dev/puller"
        ))
        .unwrap()
        .json();
    assert_eq!(names(&warnings), ["web.pulled"]);
    // kube's `source` label is the core Event's `source.component`.
    let by_source = client
        .get(&format!("{core}?fieldSelector=source=webapp-controller"))
        .unwrap()
        .json();
    assert_eq!(names(&by_source), ["web.scaled"]);
    // Each group accepts its own labels only, with kube's 400.
    let wrong = client
        .get(&format!("{group}?fieldSelector=involvedObject.name=web"))
        .unwrap();
    assert_eq!(wrong.status, 400, "{}", wrong.body);

    // A PUT of a missing Event records it (kube's Event strategy allows create on update).
    let mut put = core_event(&uid);
    put["metadata"]["name"] = "web.put".into();
    let created = client.put(&format!("{core}/web.put"), &put).unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(watch.next_event(DEADLINE)["type"], "ADDED");
    // Not for other kinds: kube's 404 for a ConfigMap.
    let missing = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nope"}});
    let refused = client
        .put("/api/v1/namespaces/default/configmaps/nope", &missing)
        .unwrap();
    assert_eq!(refused.status, 404, "{}", refused.body);

    // Deleting through one group removes it from both, and the watch of the other sees it.
    let deleted = client.delete(&format!("{core}/web.scaled")).unwrap();
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    wait_for(
        DEADLINE,
        "the DELETED of web.scaled on the events.k8s.io watch",
        String::new,
        || {
            let event = watch.next_event(DEADLINE);
            (event["type"] == "DELETED").then(|| event["object"]["metadata"]["name"].clone())
        },
    );
    let gone = client.get(&format!("{group}/web.scaled")).unwrap();
    assert_eq!(gone.status, 404, "{}", gone.body);
}

/// `kubectl describe wa web` lists the WebApp's Events (kubectl's field selector on
/// `involvedObject`), whichever group recorded them.
fn describe_shows_the_events(version: Version) {
    version.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    let uid = webapp(&kubectl);
    let client = Client::new(server.addr());
    let created = client
        .post("/api/v1/namespaces/default/events", &core_event(&uid))
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let created = client
        .post(
            "/apis/events.k8s.io/v1/namespaces/default/events",
            &new_event(&uid),
        )
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);

    let described = kubectl.ok(&["describe", "wa", "web"]);
    described
        .stdout_has("Events:")
        .stdout_has("ScaledUp")
        .stdout_has("Scaled up to 3 replicas")
        .stdout_has("webapp-controller")
        .stdout_has("ImagePulled")
        .stdout_has("Pulled image nginx:1.27")
        .stdout_has("Warning");

    // `kubectl get events` prints the server's Table.
    kubectl
        .ok(&["get", "events"])
        .stdout_has("ScaledUp")
        .stdout_has("ImagePulled");
}

for_both_versions! {
    describe_shows_the_events => describe_shows_events_1_32, describe_shows_events_1_20;
}

/// `kubectl events --for webapp/web` (kubectl 1.26 and later) lists the WebApp's Events.
#[test]
fn kubectl_events_lists_them() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let uid = webapp(&kubectl);
    let client = Client::new(server.addr());
    for (path, event) in [
        ("/api/v1/namespaces/default/events", core_event(&uid)),
        (
            "/apis/events.k8s.io/v1/namespaces/default/events",
            new_event(&uid),
        ),
    ] {
        let created = client.post(path, &event).unwrap();
        assert_eq!(created.status, 201, "{}", created.body);
    }
    // Another object's event is not listed.
    let mut other = core_event("not-web");
    other["metadata"]["name"] = "other.scaled".into();
    other["involvedObject"]["name"] = "other".into();
    other["reason"] = "OtherReason".into();
    assert_eq!(
        client
            .post("/api/v1/namespaces/default/events", &other)
            .unwrap()
            .status,
        201
    );

    let listed = kubectl.ok(&["events", "--for", "webapp/web"]);
    listed
        .stdout_has("ScaledUp")
        .stdout_has("ImagePulled")
        .stdout_has("WebApp/web")
        .check(
            !listed.stdout.contains("OtherReason"),
            "another object's event is not listed",
        );
}

/// With `--event-ttl 2s`, an Event goes about two seconds after its last write; other
/// kinds stay. (A bad `--event-ttl` is refused at start: `smoke.rs`.)
#[test]
fn events_expire_after_the_ttl() {
    let server = Server::start_with(&["--event-ttl", "2s"]);
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let uid = webapp(&kubectl);
    let client = Client::new(server.addr());
    let created = client
        .post("/api/v1/namespaces/default/events", &core_event(&uid))
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    wait_for(
        DEADLINE,
        "the event to expire",
        || {
            client
                .get("/api/v1/namespaces/default/events/web.scaled")
                .unwrap()
                .body
        },
        || {
            let read = client
                .get("/api/v1/namespaces/default/events/web.scaled")
                .unwrap();
            (read.status == 404).then_some(())
        },
    );
    kubectl.ok(&["get", "wa", "web"]);
}

on_both_backends! {
    kubectl_1_32_events_api_lifecycle => events_api_lifecycle(Version::V1_32);
    kubectl_1_20_events_api_lifecycle => events_api_lifecycle(Version::V1_20);
}

/// kube 1.20's e2e test "Events API should ensure that an event can be fetched, patched,
/// deleted, and listed" (`test/e2e/instrumentation/events.go`), with kubectl where it has a
/// verb and raw HTTP where it has none: an `events.k8s.io/v1` Event with a label, in a
/// namespace of its own, is listed by that label in the namespace and across namespaces;
/// found by the core group's `source` field (its reporting controller, when it has no
/// `source.component`) and by the new group's `reportingController`; patched (strategic),
/// updated with a series, read back unchanged otherwise, deleted, and listed no more.
fn events_api_lifecycle(version: Version, backend: Backend) {
    let server = Server::start_on(backend);
    let kubectl = Kubectl::new(version, &server);
    let client = server.client();
    let namespace = "events-e2e";
    kubectl.ok(&["create", "namespace", namespace]);
    // The e2e test's event: a reference to the namespace alone, a time long past.
    let manifest = kubectl.write_file(
        "event.yaml",
        &format!(
            "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata:\n  name: event-test\n  \
             labels: {{testevent-constant: \"true\"}}\nregarding: {{namespace: {namespace}}}\n\
             eventTime: \"2017-09-19T13:49:16.000000Z\"\nnote: This is event-test\n\
             action: Do\nreason: Test\ntype: Normal\nreportingController: test-controller\n\
             reportingInstance: test-node\n"
        ),
    );
    kubectl.ok(&["create", "-f", &manifest, "-n", namespace]);
    let listed = |scope: &[&str]| {
        let mut args = vec![
            "get",
            "events.events.k8s.io",
            "-l",
            "testevent-constant=true",
            "-o",
            "json",
        ];
        args.extend(scope);
        let list = kubectl.ok(&args).json();
        (list["items"].as_array().unwrap().iter())
            .map(|i| {
                let meta = &i["metadata"];
                format!(
                    "{}/{}",
                    meta["namespace"].as_str().unwrap(),
                    meta["name"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    let found = vec![format!("{namespace}/event-test")];
    assert_eq!(listed(&["-A"]), found, "across namespaces");
    assert_eq!(listed(&["-n", namespace]), found, "in the namespace");
    for path in [
        format!("/api/v1/namespaces/{namespace}/events?fieldSelector=source%3Dtest-controller"),
        format!(
            "/apis/events.k8s.io/v1/namespaces/{namespace}/events\
             ?fieldSelector=reportingController%3Dtest-controller"
        ),
        "/apis/events.k8s.io/v1/events?labelSelector=testevent-constant%3Dtrue".to_owned(),
    ] {
        let list = client.get(&path).unwrap();
        assert_eq!(list.status, 200, "{path}: {}", list.body);
        assert_eq!(names(&list.json()), ["event-test"], "{path}");
    }

    let path = format!("/apis/events.k8s.io/v1/namespaces/{namespace}/events/event-test");
    let before = client.get(&path).unwrap().json();
    kubectl.ok(&[
        "patch",
        "events.events.k8s.io",
        "event-test",
        "-n",
        namespace,
        "-p",
        r#"{"note":"This is a test event - patched"}"#,
    ]);
    let comparable = |event: &Value| {
        let mut event = event.clone();
        let meta = event["metadata"].as_object_mut().unwrap();
        meta.remove("resourceVersion");
        meta.remove("managedFields");
        event
    };
    let mut expected = comparable(&before);
    expected["note"] = json!("This is a test event - patched");
    let patched = client.get(&path).unwrap().json();
    assert_eq!(comparable(&patched), expected);

    let mut updated = patched.clone();
    updated["series"] = json!({"count": 100, "lastObservedTime": "2017-09-19T13:49:16.000000Z"});
    let answer = client.put(&path, &updated).unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    expected["series"] = updated["series"].clone();
    assert_eq!(comparable(&client.get(&path).unwrap().json()), expected);

    kubectl.ok(&[
        "delete",
        "events.events.k8s.io",
        "event-test",
        "-n",
        namespace,
    ]);
    assert!(listed(&["-A"]).is_empty());
    assert!(listed(&["-n", namespace]).is_empty());
}
