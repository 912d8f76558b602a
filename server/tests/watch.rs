//! Watches against the real `kapi-server`: raw HTTP watches (order, initial events and
//! `sendInitialEvents`, label and field selectors, periodic bookmarks, Tables, timeouts,
//! errors), `kubectl get -w` with kubectl 1.32 and 1.20, and what watchers see of
//! deletions by selector (`kubectl delete -l`, a deletecollection with a field selector).
//!
//! Nothing waits for a fixed time: each event is awaited with a deadline, and "nothing
//! else was sent" is shown by a later marker event arriving next. The kubectl scenarios
//! also run (with the `etcd` feature, as `etcd::*`) on an etcd of their own. Every
//! scenario but the one about WebApp's second version runs on the compiled WebApp and on
//! the same kind defined by a CustomResourceDefinition (`*_compiled`, `*_defined`).

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::{Client, Watch};
use support::webapps::{WebApps, on_both_kinds};
use support::{Backend, Kubectl, Server, Version, for_both_versions, on_both_backends};

/// How long one event may take.
const EVENT: Duration = Duration::from_secs(10);

/// A client of one server's WebApps (compiled or defined): what the helpers below write to.
struct Apps {
    client: Client,
    kind: WebApps,
}

impl Apps {
    fn new(server: &Server, kind: WebApps) -> Apps {
        Apps {
            client: Client::new(server.addr()),
            kind,
        }
    }
}

impl std::ops::Deref for Apps {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}
const TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

fn webapp(kind: WebApps, name: &str, labels: Value) -> Value {
    json!({"apiVersion": kind.api_version(), "kind": "WebApp",
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
fn create(client: &Apps, name: &str, labels: Value) -> Value {
    let response = (client.post(
        &client.kind.collection(),
        &webapp(client.kind, name, labels),
    ))
    .unwrap();
    assert_eq!(response.status, 201, "{response:?}");
    response.json()
}

/// Replaces a WebApp after `change`; returns it as stored.
#[track_caller]
fn update(client: &Apps, name: &str, change: impl FnOnce(&mut Value)) -> Value {
    let path = format!("{}/{name}", client.kind.collection());
    let mut object = client.get(&path).unwrap().json();
    change(&mut object);
    let response = client.put(&path, &object).unwrap();
    assert_eq!(response.status, 200, "{response:?}");
    response.json()
}

#[track_caller]
fn delete(client: &Apps, name: &str) {
    let response = (client.delete(&format!("{}/{name}", client.kind.collection()))).unwrap();
    assert_eq!(response.status, 200, "{response:?}");
}

#[track_caller]
fn list_rv(client: &Apps) -> String {
    let list = client.get(&client.kind.collection()).unwrap().json();
    list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[track_caller]
fn watch(client: &Apps, query: &str) -> Watch {
    let path = format!("{}?watch=true&{query}", client.kind.collection());
    let watch = client.watch(&path, "application/json").unwrap();
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

fn a_watch_from_a_list_sees_every_change_in_order_once(kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
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

fn resource_version_0_starts_with_added_events_for_existing_objects(kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
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

fn a_name_field_selector_watches_one_object(kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
    let from = list_rv(&client);
    let mut by_selector = watch(
        &client,
        &format!("fieldSelector=metadata.name%3Dweb&resourceVersion={from}"),
    );
    let mut legacy = client
        .watch(
            &format!(
                "/apis/{}/v1/watch/namespaces/default/webapps/web?resourceVersion={from}",
                kind.group()
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

fn label_selector_watches_see_objects_enter_and_leave(kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
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

/// (From the list's revision: a defined kind's watch cache starts when it is installed,
/// and a revision before that is too old for it, as for kube's cacher.)
fn timeout_seconds_ends_the_stream(kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
    let from = list_rv(&client);
    let mut watch = watch(&client, &format!("timeoutSeconds=1&resourceVersion={from}"));
    assert_eq!(
        watch.next_line(EVENT),
        None,
        "the stream ends, with no event"
    );
}

/// A watch that allows bookmarks gets one 2 s before its `timeoutSeconds` (kube's cacher
/// does, so an informer resumes from a fresh revision), long before the one-minute
/// periodic bookmark; then the stream ends. Without `allowWatchBookmarks`, none.
fn a_bookmark_comes_just_before_the_timeout(kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
    let webapps = kind.collection();
    let from = list_rv(&client);
    let created = client
        .post(&webapps, &webapp(kind, "web", json!({})))
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let revision = created.json()["metadata"]["resourceVersion"].clone();
    let mut bookmarked = watch(
        &client,
        &format!("timeoutSeconds=3&allowWatchBookmarks=true&resourceVersion={from}"),
    );
    assert_eq!(bookmarked.next_event(EVENT)["type"], "ADDED");
    let bookmark = bookmarked.next_event(EVENT);
    assert_eq!(bookmark["type"], "BOOKMARK", "{bookmark}");
    // The revision the watch has reached: its change's, or later when the cache learnt of
    // writes to other kinds since (progress, as kube's bookmarks carry it).
    let reached = |object: &Value| -> u64 {
        object["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        reached(&bookmark["object"]) >= revision.as_str().unwrap().parse::<u64>().unwrap(),
        "{bookmark} is older than {revision}"
    );
    assert_eq!(bookmarked.next_line(EVENT), None, "then the stream ends");

    let mut plain = watch(&client, &format!("timeoutSeconds=3&resourceVersion={from}"));
    assert_eq!(plain.next_event(EVENT)["type"], "ADDED");
    assert_eq!(
        plain.next_line(EVENT),
        None,
        "no bookmark without allowWatchBookmarks"
    );
}

fn table_watches_send_column_definitions_once(kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
    let webapps = kind.collection();
    create(&client, "a", json!({}));
    let mut watch = client
        .watch(
            &format!("{webapps}?watch=true&resourceVersion=0"),
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

fn bad_options_are_status_responses_before_the_stream(kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
    let webapps = kind.collection();
    let response = client
        .get(&format!("{webapps}?watch=true&resourceVersion=abc"))
        .unwrap();
    assert_eq!(response.status, 400, "{response:?}");
    assert_eq!(response.json()["kind"], "Status");
    let response = client
        .get(&format!("{webapps}?watch=true&labelSelector=a%20in"))
        .unwrap();
    assert_eq!(response.status, 400, "{response:?}");
    let response = client
        .get(&format!("{webapps}?watch=true&sendInitialEvents=true"))
        .unwrap();
    assert_eq!(response.status, 422, "{response:?}");
    // A field the kind cannot select on: kube's 400, not an ERROR event in a stream.
    let response = client
        .get(&format!(
            "{webapps}?watch=true&fieldSelector=spec.replicas%3D2"
        ))
        .unwrap();
    assert_eq!(response.status, 400, "{response:?}");
    let status = response.json();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(
        status["message"], "field label not supported: spec.replicas",
        "{status}"
    );
}

/// `kubectl get wa -w` prints a row for an object another client creates, and
/// `kubectl get wa web -w` a row for a change of `web`.
fn kubectl_get_watch(version: Version, kind: WebApps, backend: Backend) {
    let server = kind.serve(Server::start_on(backend));
    let client = Apps::new(&server, kind);
    let resource = kind.resource();
    let kubectl = Kubectl::new(version, &server);
    create(&client, "first", json!({}));

    let mut list = kubectl.spawn(&["get", &resource, "-n", "default", "-w"]);
    list.wait_line(EVENT, "the row of first", |l| l.starts_with("first "));
    create(&client, "web", json!({}));
    let row = list.wait_line(EVENT, "a row for web", |l| l.starts_with("web "));
    assert!(row.contains("nginx:1.25"), "{row}");
    drop(list);

    let mut one = kubectl.spawn(&["get", &resource, "web", "-n", "default", "-w"]);
    one.wait_line(EVENT, "the row of web", |l| l.starts_with("web "));
    server.wait_for_watch(EVENT, "metadata.name");
    update(&client, "web", |o| o["spec"]["replicas"] = json!(7));
    let row = one.wait_line(EVENT, "a row for web with 7 replicas", |l| {
        l.starts_with("web ") && l.split_whitespace().any(|c| c == "7")
    });
    assert!(row.contains("nginx:1.25"), "{row}");
}

on_both_backends! {
    kubectl_1_32_get_watch => kubectl_get_watch(Version::V1_32, WebApps::Compiled);
    kubectl_1_20_get_watch => kubectl_get_watch(Version::V1_20, WebApps::Compiled);
    kubectl_1_32_get_watch_defined => kubectl_get_watch(Version::V1_32, WebApps::Defined);
    kubectl_1_20_get_watch_defined => kubectl_get_watch(Version::V1_20, WebApps::Defined);
}

#[test]
fn watches_speak_every_served_version() {
    let server = Server::start();
    let client = Apps::new(&server, WebApps::Compiled);
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

/// A field selector on the kind's selectable `spec.container.image`: an object whose image
/// changes into the selected one is `ADDED`, changes while selected are `MODIFIED`, and an
/// image changing away is `DELETED` carrying the last state that matched with the change's
/// resourceVersion (kube's `cacheWatcher.convertToWatchEvent` sends the previous object,
/// versioned at the event).
fn field_selector_watches_see_objects_enter_and_leave(kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
    let webapps = kind.collection();
    let from = list_rv(&client);
    let mut watch = watch(
        &client,
        &format!("fieldSelector=spec.container.image%3Dnginx%3A2&resourceVersion={from}"),
    );

    create(&client, "a", json!({}));
    let entered = update(&client, "a", |o| {
        o["spec"]["container"]["image"] = json!("nginx:2")
    });
    let modified = update(&client, "a", |o| o["spec"]["replicas"] = json!(5));
    let left = update(&client, "a", |o| {
        o["spec"]["container"]["image"] = json!("nginx:3")
    });
    delete(&client, "a");
    let mut body = webapp(kind, "marker", json!({}));
    body["spec"]["container"]["image"] = json!("nginx:2");
    let response = client.post(&webapps, &body).unwrap();
    assert_eq!(response.status, 201, "{response:?}");
    let marker = response.json();

    let added = watch.next_event(EVENT);
    assert_eq!(added["type"], "ADDED", "{added}");
    assert_eq!(added["object"]["spec"]["container"]["image"], "nginx:2");
    assert_eq!(rv(&added["object"]), rv(&entered));
    let changed = watch.next_event(EVENT);
    assert_eq!(changed["type"], "MODIFIED", "{changed}");
    assert_eq!(changed["object"]["spec"]["replicas"], 5);
    assert_eq!(rv(&changed["object"]), rv(&modified));
    let deleted = watch.next_event(EVENT);
    assert_eq!(deleted["type"], "DELETED", "{deleted}");
    assert_eq!(
        deleted["object"]["spec"]["container"]["image"], "nginx:2",
        "the last state that matched"
    );
    assert_eq!(deleted["object"]["spec"]["replicas"], 5);
    assert_eq!(rv(&deleted["object"]), rv(&left), "the change's revision");
    // The delete of an object no longer selected sends nothing.
    assert_eq!(next(&mut watch), event("ADDED", "marker", rv(&marker)));
}

/// `sendInitialEvents=true` without a resourceVersion (a client-go watch list): an `ADDED`
/// event per existing object the selectors match, then a `BOOKMARK` annotated
/// `k8s.io/initial-events-end` at a revision not older than a list made before, then the
/// changes after it.
fn send_initial_events_then_an_annotated_bookmark_then_changes(kind: WebApps) {
    const WATCH_LIST: &str =
        "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
    let server = kind.start();
    let client = Apps::new(&server, kind);
    let a = create(&client, "a", json!({"tier": "web"}));
    let b = create(&client, "b", json!({"tier": "db"}));
    let c = create(&client, "c", json!({"tier": "web"}));
    let listed: u64 = list_rv(&client).parse().unwrap();
    let mut all = watch(&client, WATCH_LIST);
    let mut web = watch(&client, &format!("{WATCH_LIST}&labelSelector=tier%3Dweb"));

    let initial_end = |watch: &mut Watch| -> u64 {
        let event = watch.next_event(EVENT);
        assert_eq!(event["type"], "BOOKMARK", "{event}");
        let object = &event["object"];
        assert_eq!(object["kind"], "WebApp", "{event}");
        assert_eq!(object["apiVersion"], kind.api_version(), "{event}");
        assert_eq!(
            object["metadata"]["annotations"],
            json!({"k8s.io/initial-events-end": "true"}),
            "{event}"
        );
        let at: u64 = rv(object).parse().unwrap();
        assert!(
            at >= listed,
            "the bookmark at {at} is older than the list at {listed}"
        );
        at
    };
    assert_eq!(next(&mut all), event("ADDED", "a", rv(&a)));
    assert_eq!(next(&mut all), event("ADDED", "b", rv(&b)));
    assert_eq!(next(&mut all), event("ADDED", "c", rv(&c)));
    let all_end = initial_end(&mut all);
    assert_eq!(next(&mut web), event("ADDED", "a", rv(&a)));
    assert_eq!(next(&mut web), event("ADDED", "c", rv(&c)));
    let web_end = initial_end(&mut web);

    let e = create(&client, "e", json!({"tier": "db"}));
    let d = create(&client, "d", json!({"tier": "web"}));
    assert!(rv(&e).parse::<u64>().unwrap() > all_end.max(web_end));
    assert_eq!(next(&mut all), event("ADDED", "e", rv(&e)));
    assert_eq!(next(&mut all), event("ADDED", "d", rv(&d)));
    assert_eq!(next(&mut web), event("ADDED", "d", rv(&d)));
}

/// `--watch-bookmark-interval`: a watch allowing bookmarks gets one every interval, as kube
/// sends them (the kind's `kind` and `apiVersion`, and only `metadata.resourceVersion`), at
/// the revision the watch has reached, including writes its selector filters out; a watch
/// that does not allow them gets none.
fn bookmarks_arrive_every_interval_at_the_revision_reached(kind: WebApps) {
    let server = kind.serve(Server::start_with(&["--watch-bookmark-interval=200ms"]));
    let client = Apps::new(&server, kind);
    let from = list_rv(&client);
    let selected = format!("labelSelector=tier%3Dweb&resourceVersion={from}");
    let mut bookmarks = watch(&client, &format!("allowWatchBookmarks=true&{selected}"));
    let mut plain = watch(&client, &selected);

    // Two periodic bookmarks at the watch's start (nothing changed since).
    for _ in 0..2 {
        let event = bookmarks.next_event(EVENT);
        assert_eq!(event["type"], "BOOKMARK", "{event}");
        assert_eq!(
            event["object"],
            json!({"kind": "WebApp", "apiVersion": kind.api_version(),
                "metadata": {"resourceVersion": from}}),
            "only the revision, with the kind"
        );
    }

    // A write the selector filters out still moves the bookmarks' revision.
    let filtered = create(&client, "db", json!({"tier": "db"}));
    let filtered_rv: u64 = rv(&filtered).parse().unwrap();
    let deadline = std::time::Instant::now() + EVENT;
    loop {
        let event = bookmarks.next_event(EVENT);
        assert_eq!(event["type"], "BOOKMARK", "only bookmarks: {event}");
        let at: u64 = rv(&event["object"]).parse().unwrap();
        if at >= filtered_rv {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no bookmark at {filtered_rv} or later within {EVENT:?} (last at {at})"
        );
    }

    // By now several intervals have passed for the other watch too: its next event is
    // the marker, with no bookmark before it.
    let marker = create(&client, "marker", json!({"tier": "web"}));
    assert_eq!(next(&mut plain), event("ADDED", "marker", rv(&marker)));
    let next_change = loop {
        let event = bookmarks.next_event(EVENT);
        if event["type"] != "BOOKMARK" {
            break event;
        }
    };
    assert_eq!(next_change["type"], "ADDED", "{next_change}");
    assert_eq!(rv(&next_change["object"]), rv(&marker));
}

for_both_versions! {
    kubectl_delete_compiled_by_label => kubectl_1_32_delete_by_label, kubectl_1_20_delete_by_label;
    kubectl_delete_defined_by_label =>
        kubectl_1_32_delete_defined_by_label, kubectl_1_20_delete_defined_by_label;
}

fn kubectl_delete_compiled_by_label(version: Version) {
    kubectl_delete_by_label(version, WebApps::Compiled);
}

fn kubectl_delete_defined_by_label(version: Version) {
    kubectl_delete_by_label(version, WebApps::Defined);
}

#[track_caller]
fn create_namespace(client: &Client, name: &str) {
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    let response = client.post("/api/v1/namespaces", &namespace).unwrap();
    assert_eq!(response.status, 201, "{response:?}");
}

/// Creates a WebApp with `image` in `namespace`.
#[track_caller]
fn create_in(client: &Apps, namespace: &str, name: &str, image: &str) {
    let mut body = webapp(client.kind, name, json!({}));
    body["spec"]["container"]["image"] = json!(image);
    let path = client.kind.collection_in(namespace);
    let response = client.post(&path, &body).unwrap();
    assert_eq!(response.status, 201, "{response:?}");
}

/// The next events of `watch` are `DELETED` for exactly `names`, in order, then `ADDED` for
/// a marker object created now: nothing else came in between.
#[track_caller]
fn expect_deleted_then_marker(client: &Apps, watch: &mut Watch, names: &[&str]) {
    let marker = create(client, "marker", json!({}));
    let seen: Vec<_> = (0..=names.len()).map(|_| next(watch)).collect();
    let (types, seen_names): (Vec<_>, Vec<_>) = (seen.iter())
        .map(|(type_, name, _)| (type_.as_str(), name.as_str()))
        .unzip();
    let mut expected_types = vec!["DELETED"; names.len()];
    expected_types.push("ADDED");
    let mut expected_names = names.to_vec();
    expected_names.push("marker");
    assert_eq!((types, seen_names), (expected_types, expected_names));
    assert_eq!(seen.last().map(|e| e.2.as_str()), Some(rv(&marker)));
}

/// The names in a list, in order.
fn names(list: &Value) -> Vec<&str> {
    (list["items"].as_array().unwrap().iter())
        .map(|o| o["metadata"]["name"].as_str().unwrap())
        .collect()
}

/// `kubectl delete wa -l tier=web` deletes exactly the matching objects (kubectl lists with
/// the selector, then deletes each), and a watcher opened before sees exactly those go.
fn kubectl_delete_by_label(version: Version, kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
    let kubectl = Kubectl::new(version, &server);
    create(&client, "web-1", json!({"tier": "web"}));
    create(&client, "api", json!({"tier": "api"}));
    create(&client, "web-2", json!({"tier": "web", "canary": "true"}));
    create(&client, "plain", json!({}));
    let mut watch = watch(&client, &format!("resourceVersion={}", list_rv(&client)));

    let run = kubectl.ok(&[
        "delete",
        &kind.resource(),
        "-n",
        "default",
        "-l",
        "tier=web",
    ]);
    let mut printed: Vec<&str> = run.stdout.lines().collect();
    printed.sort_unstable();
    assert_eq!(
        printed,
        [
            format!("webapp.{} \"web-1\" deleted", kind.group()),
            format!("webapp.{} \"web-2\" deleted", kind.group()),
        ],
        "{}",
        run.stdout
    );
    assert_eq!(
        names(&client.get(&kind.collection()).unwrap().json()),
        ["api", "plain"]
    );
    expect_deleted_then_marker(&client, &mut watch, &["web-1", "web-2"]);
}

/// A raw deletecollection (`DELETE` on the collection) with a field selector on the kind's
/// selectable `spec.container.image` deletes exactly the matching objects of that
/// namespace and answers them as a list; a watcher opened before sees exactly those go.
fn delete_collection_with_a_field_selector(kind: WebApps) {
    let server = kind.start();
    let client = Apps::new(&server, kind);
    let webapps = kind.collection();
    create_namespace(&client, "other");
    create_in(&client, "default", "old-1", "nginx:1.0");
    create_in(&client, "default", "new", "nginx:1.27");
    create_in(&client, "default", "old-2", "nginx:1.0");
    create_in(&client, "other", "old-3", "nginx:1.0");
    let mut watch = watch(&client, &format!("resourceVersion={}", list_rv(&client)));

    let response = client
        .delete(&format!(
            "{webapps}?fieldSelector=spec.container.image%3Dnginx%3A1.0"
        ))
        .unwrap();
    assert_eq!(response.status, 200, "{response:?}");
    let deleted = response.json();
    assert_eq!(deleted["kind"], "WebAppList", "{deleted}");
    assert_eq!(names(&deleted), ["old-1", "old-2"]);

    assert_eq!(names(&client.get(&webapps).unwrap().json()), ["new"]);
    let other = client.get(&kind.collection_in("other")).unwrap().json();
    assert_eq!(names(&other), ["old-3"], "another namespace is untouched");
    expect_deleted_then_marker(&client, &mut watch, &["old-1", "old-2"]);
}

on_both_kinds! {
    a_watch_from_a_list_sees_every_change_in_order_once =>
        a_watch_from_a_list_sees_every_change_in_order_once_compiled,
        a_watch_from_a_list_sees_every_change_in_order_once_defined;
    resource_version_0_starts_with_added_events_for_existing_objects =>
        resource_version_0_starts_with_added_events_for_existing_objects_compiled,
        resource_version_0_starts_with_added_events_for_existing_objects_defined;
    a_name_field_selector_watches_one_object =>
        a_name_field_selector_watches_one_object_compiled,
        a_name_field_selector_watches_one_object_defined;
    label_selector_watches_see_objects_enter_and_leave =>
        label_selector_watches_see_objects_enter_and_leave_compiled,
        label_selector_watches_see_objects_enter_and_leave_defined;
    timeout_seconds_ends_the_stream =>
        timeout_seconds_ends_the_stream_compiled,
        timeout_seconds_ends_the_stream_defined;
    a_bookmark_comes_just_before_the_timeout =>
        a_bookmark_comes_just_before_the_timeout_compiled,
        a_bookmark_comes_just_before_the_timeout_defined;
    table_watches_send_column_definitions_once =>
        table_watches_send_column_definitions_once_compiled,
        table_watches_send_column_definitions_once_defined;
    bad_options_are_status_responses_before_the_stream =>
        bad_options_are_status_responses_before_the_stream_compiled,
        bad_options_are_status_responses_before_the_stream_defined;
    field_selector_watches_see_objects_enter_and_leave =>
        field_selector_watches_see_objects_enter_and_leave_compiled,
        field_selector_watches_see_objects_enter_and_leave_defined;
    send_initial_events_then_an_annotated_bookmark_then_changes =>
        send_initial_events_then_an_annotated_bookmark_then_changes_compiled,
        send_initial_events_then_an_annotated_bookmark_then_changes_defined;
    bookmarks_arrive_every_interval_at_the_revision_reached =>
        bookmarks_arrive_every_interval_at_the_revision_reached_compiled,
        bookmarks_arrive_every_interval_at_the_revision_reached_defined;
    delete_collection_with_a_field_selector =>
        delete_collection_with_a_field_selector_compiled,
        delete_collection_with_a_field_selector_defined;
}
