//! Watches against the real `kapi-server`: raw HTTP watches (order, initial events,
//! selectors, Tables, timeouts, errors) and `kubectl get -w` with kubectl 1.32 and 1.20.
//!
//! Nothing waits for a fixed time: each event is awaited with a deadline, and "nothing
//! else was sent" is shown by a later marker event arriving next.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::{Client, Watch};
use support::{Kubectl, Server, Version};

/// How long one event may take.
const EVENT: Duration = Duration::from_secs(10);

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";
const TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

fn webapp(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
        "metadata": {"name": name, "labels": labels},
        "spec": {"replicas": 2, "container": {"image": "nginx:1.25"}}})
}

fn rv(object: &Value) -> &str {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
}

/// Creates a WebApp; returns it as stored.
#[track_caller]
fn create(client: &Client, name: &str, labels: Value) -> Value {
    let response = client.post(WEBAPPS, &webapp(name, labels)).unwrap();
    assert_eq!(response.status, 201, "{response:?}");
    response.json()
}

/// Replaces a WebApp after `change`; returns it as stored.
#[track_caller]
fn update(client: &Client, name: &str, change: impl FnOnce(&mut Value)) -> Value {
    let path = format!("{WEBAPPS}/{name}");
    let mut object = client.get(&path).unwrap().json();
    change(&mut object);
    let response = client.put(&path, &object).unwrap();
    assert_eq!(response.status, 200, "{response:?}");
    response.json()
}

#[track_caller]
fn delete(client: &Client, name: &str) {
    let response = client.delete(&format!("{WEBAPPS}/{name}")).unwrap();
    assert_eq!(response.status, 200, "{response:?}");
}

#[track_caller]
fn list_rv(client: &Client) -> String {
    let list = client.get(WEBAPPS).unwrap().json();
    list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[track_caller]
fn watch(client: &Client, query: &str) -> Watch {
    let watch = client
        .watch(&format!("{WEBAPPS}?watch=true&{query}"), "application/json")
        .unwrap();
    assert_eq!(watch.status, 200);
    assert_eq!(watch.content_type, "application/json");
    watch
}

/// The next event as `(type, name, resourceVersion)`.
#[track_caller]
fn next(watch: &mut Watch) -> (String, String, String) {
    let event = watch.next_event(EVENT);
    let object = &event["object"];
    (
        event["type"].as_str().unwrap_or_default().to_owned(),
        object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        rv(object).to_owned(),
    )
}

fn event(type_: &str, name: &str, rv: &str) -> (String, String, String) {
    (type_.to_owned(), name.to_owned(), rv.to_owned())
}

#[test]
fn a_watch_from_a_list_sees_every_change_in_order_once() {
    let server = Server::start();
    let client = Client::new(server.addr());
    create(&client, "before", json!({}));
    let from = list_rv(&client);
    let mut watch = watch(&client, &format!("resourceVersion={from}"));

    let created = create(&client, "web", json!({}));
    let updated = update(&client, "web", |o| o["spec"]["replicas"] = json!(3));
    delete(&client, "web");
    let marker = create(&client, "marker", json!({}));

    assert_eq!(next(&mut watch), event("ADDED", "web", rv(&created)));
    let modified = watch.next_event(EVENT);
    assert_eq!(modified["type"], "MODIFIED");
    assert_eq!(modified["object"]["spec"]["replicas"], 3);
    assert_eq!(rv(&modified["object"]), rv(&updated));
    let deleted = next(&mut watch);
    assert_eq!((&*deleted.0, &*deleted.1), ("DELETED", "web"));
    let delete_rv: u64 = deleted.2.parse().unwrap();
    assert!(delete_rv > rv(&updated).parse::<u64>().unwrap());
    // Nothing in between, nothing twice.
    assert_eq!(next(&mut watch), event("ADDED", "marker", rv(&marker)));
}

#[test]
fn resource_version_0_starts_with_added_events_for_existing_objects() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let a = create(&client, "a", json!({}));
    let b = create(&client, "b", json!({}));
    for query in ["resourceVersion=0", "allowWatchBookmarks=true"] {
        let mut watch = watch(&client, query);
        assert_eq!(next(&mut watch), event("ADDED", "a", rv(&a)));
        assert_eq!(next(&mut watch), event("ADDED", "b", rv(&b)));
    }
    let mut watch = watch(&client, "resourceVersion=0");
    assert_eq!(next(&mut watch), event("ADDED", "a", rv(&a)));
    assert_eq!(next(&mut watch), event("ADDED", "b", rv(&b)));
    let c = create(&client, "c", json!({}));
    assert_eq!(next(&mut watch), event("ADDED", "c", rv(&c)));
}

#[test]
fn a_name_field_selector_watches_one_object() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let from = list_rv(&client);
    let mut by_selector = watch(
        &client,
        &format!("fieldSelector=metadata.name%3Dweb&resourceVersion={from}"),
    );
    let mut legacy = client
        .watch(
            &format!(
                "/apis/apps.example.dev/v1/watch/namespaces/default/webapps/web?resourceVersion={from}"
            ),
            "application/json",
        )
        .unwrap();
    assert_eq!(legacy.status, 200);

    create(&client, "other", json!({}));
    let web = create(&client, "web", json!({}));
    update(&client, "other", |o| o["spec"]["replicas"] = json!(4));
    let web2 = update(&client, "web", |o| o["spec"]["replicas"] = json!(5));

    for watch in [&mut by_selector, &mut legacy] {
        assert_eq!(next(watch), event("ADDED", "web", rv(&web)));
        assert_eq!(next(watch), event("MODIFIED", "web", rv(&web2)));
    }

    // kubectl's single-object watch: RV 0 starts with the object itself.
    let mut watch = watch(
        &client,
        "fieldSelector=metadata.name%3Dweb&resourceVersion=0",
    );
    assert_eq!(next(&mut watch), event("ADDED", "web", rv(&web2)));
}

#[test]
fn label_selector_watches_see_objects_enter_and_leave() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let from = list_rv(&client);
    let mut watch = watch(
        &client,
        &format!("labelSelector=tier%3Dweb&resourceVersion={from}"),
    );

    create(&client, "a", json!({"tier": "db"}));
    let entered = update(&client, "a", |o| {
        o["metadata"]["labels"]["tier"] = json!("web")
    });
    let left = update(&client, "a", |o| {
        o["metadata"]["labels"]["tier"] = json!("db")
    });
    delete(&client, "a");
    let marker = create(&client, "marker", json!({"tier": "web"}));

    let added = watch.next_event(EVENT);
    assert_eq!(added["type"], "ADDED");
    assert_eq!(rv(&added["object"]), rv(&entered));
    let deleted = watch.next_event(EVENT);
    assert_eq!(deleted["type"], "DELETED");
    assert_eq!(rv(&deleted["object"]), rv(&left));
    assert_eq!(deleted["object"]["metadata"]["labels"]["tier"], "web");
    assert_eq!(next(&mut watch), event("ADDED", "marker", rv(&marker)));
}

#[test]
fn timeout_seconds_ends_the_stream() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let mut watch = watch(&client, "timeoutSeconds=1&resourceVersion=1");
    assert_eq!(
        watch.next_line(EVENT),
        None,
        "the stream ends, with no event"
    );
}

#[test]
fn table_watches_send_column_definitions_once() {
    let server = Server::start();
    let client = Client::new(server.addr());
    create(&client, "a", json!({}));
    let mut watch = client
        .watch(
            &format!("{WEBAPPS}?watch=true&resourceVersion=0"),
            TABLE_ACCEPT,
        )
        .unwrap();
    assert_eq!(watch.status, 200);
    create(&client, "b", json!({}));
    let first = watch.next_event(EVENT);
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "Table");
    assert_eq!(first["object"]["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(first["object"]["columnDefinitions"][0]["name"], "Name");
    assert_eq!(first["object"]["rows"][0]["cells"][0], "a");
    let second = watch.next_event(EVENT);
    assert_eq!(second["object"]["columnDefinitions"], json!([]));
    assert_eq!(second["object"]["rows"][0]["cells"][0], "b");
    assert_eq!(
        second["object"]["rows"].as_array().map(Vec::len),
        Some(1),
        "one row per event"
    );
}

#[test]
fn bad_options_are_status_responses_before_the_stream() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let response = client
        .get(&format!("{WEBAPPS}?watch=true&resourceVersion=abc"))
        .unwrap();
    assert_eq!(response.status, 400, "{response:?}");
    assert_eq!(response.json()["kind"], "Status");
    let response = client
        .get(&format!("{WEBAPPS}?watch=true&labelSelector=a%20in"))
        .unwrap();
    assert_eq!(response.status, 400, "{response:?}");
    let response = client
        .get(&format!("{WEBAPPS}?watch=true&sendInitialEvents=true"))
        .unwrap();
    assert_eq!(response.status, 422, "{response:?}");
}

/// `kubectl get wa -w` prints a row for an object another client creates, and
/// `kubectl get wa web -w` a row for a change of `web`.
fn kubectl_get_watch(version: Version) {
    let server = Server::start();
    let client = Client::new(server.addr());
    let kubectl = Kubectl::new(version, &server);
    create(&client, "first", json!({}));

    let mut list = kubectl.spawn(&["get", "wa", "-n", "default", "-w"]);
    list.wait_line(EVENT, "the row of first", |l| l.starts_with("first "));
    create(&client, "web", json!({}));
    let row = list.wait_line(EVENT, "a row for web", |l| l.starts_with("web "));
    assert!(row.contains("nginx:1.25"), "{row}");
    drop(list);

    let mut one = kubectl.spawn(&["get", "wa", "web", "-n", "default", "-w"]);
    one.wait_line(EVENT, "the row of web", |l| l.starts_with("web "));
    server.wait_for_watch(EVENT, "metadata.name");
    update(&client, "web", |o| o["spec"]["replicas"] = json!(7));
    let row = one.wait_line(EVENT, "a row for web with 7 replicas", |l| {
        l.starts_with("web ") && l.split_whitespace().any(|c| c == "7")
    });
    assert!(row.contains("nginx:1.25"), "{row}");
}

#[test]
fn kubectl_1_32_get_watch() {
    kubectl_get_watch(Version::V1_32);
}

#[test]
fn kubectl_1_20_get_watch() {
    kubectl_get_watch(Version::V1_20);
}

#[test]
fn watches_speak_every_served_version() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let from = list_rv(&client);
    let mut watch = client
        .watch(
            &format!(
                "/apis/apps.example.dev/v1beta1/namespaces/default/webapps?watch=true&resourceVersion={from}"
            ),
            "application/json",
        )
        .unwrap();
    assert_eq!(watch.status, 200);
    let web = create(&client, "web", json!({}));
    let event = watch.next_event(EVENT);
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["apiVersion"], "apps.example.dev/v1beta1");
    assert_eq!(rv(&event["object"]), rv(&web));
}
