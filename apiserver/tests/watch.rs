//! Registry watches against the embedded store: what the HTTP tests cannot reach (a
//! compacted revision, a short bookmark interval) and the event rules at the source.

use std::sync::Arc;
use std::time::Duration;

use api_types::{apps, core};
use futures_util::StreamExt;
use kapi::registry::{
    EventStream, INITIAL_EVENTS_END, Registry, SharedObject, Target, WatchEvent, WatchEventType,
    WatchOptions, WriteOptions,
};
use kapi::scheme::{KindEntry, Kinds, Scheme};
use kapi::storage::Storage;
use kapi::storage::cache::CacheOptions;
use kapi::storage::embedded::EmbeddedStorage;
use serde_json::{Value, json};
use tempfile::TempDir;

/// How long any one event may take to arrive.
const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

fn scheme() -> Scheme {
    Scheme::new()
        .add(KindEntry::new::<core::Namespace>().version::<core::Namespace, core::Namespace>("v1"))
        .add(KindEntry::new::<core::ConfigMap>().version::<core::ConfigMap, core::ConfigMap>("v1"))
        .add(
            KindEntry::new::<apps::WebApp>()
                .version::<apps::WebApp, apps::v1::WebApp>("v1")
                .version::<apps::WebApp, apps::v1beta1::WebApp>("v1beta1"),
        )
}

struct Env {
    registry: Registry,
    storage: Arc<dyn Storage>,
    /// The scheme's kinds, which targets borrow.
    kinds: Kinds,
    _dir: TempDir,
}

async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let storage: Arc<dyn Storage> = Arc::new(EmbeddedStorage::open(dir.path()).unwrap());
    let registry = Registry::new(Arc::new(scheme()), storage.clone(), "/registry")
        .await
        .unwrap();
    Env {
        kinds: registry.scheme().kinds(),
        registry,
        storage,
        _dir: dir,
    }
}

impl Env {
    fn kind(&self, group: &str, plural: &str) -> &KindEntry {
        (self.kinds.iter())
            .find(|k| k.info.group == group && k.info.plural == plural)
            .unwrap()
    }

    fn configmaps(&self) -> Target<'_> {
        Target {
            kind: self.kind("", "configmaps"),
            version: "v1",
            namespace: Some("default"),
        }
    }

    fn webapps<'a>(&'a self, version: &'a str) -> Target<'a> {
        Target {
            kind: self.kind("apps.example.dev", "webapps"),
            version,
            namespace: Some("default"),
        }
    }

    async fn create(&self, target: Target<'_>, body: Value) -> Value {
        let options = WriteOptions::default();
        (self.registry.create(target, body, &options).await)
            .unwrap()
            .into_object()
            .unwrap()
    }

    async fn update(&self, target: Target<'_>, name: &str, body: Value) -> Value {
        let options = WriteOptions::default();
        (self.registry)
            .update(target, name, body, None, &options)
            .await
            .unwrap()
            .into_object()
            .unwrap()
    }

    async fn delete(&self, target: Target<'_>, name: &str) -> Value {
        (self.registry)
            .delete(target, name, &Default::default())
            .await
            .unwrap()
    }

    async fn watch(&self, target: Target<'_>, options: WatchOptions) -> EventStream {
        self.registry.watch(target, &options).await.unwrap()
    }
}

fn configmap(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels}, "data": {"k": name}})
}

fn rv(object: &Value) -> String {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn next(events: &mut EventStream) -> WatchEvent {
    tokio::time::timeout(EVENT_TIMEOUT, events.next())
        .await
        .expect("no watch event within the deadline")
        .expect("the watch ended")
}

/// `(type, name, resourceVersion)` of an event.
fn summary(event: &WatchEvent) -> (WatchEventType, String, String) {
    let object = event.object.value();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    (event.type_, name.to_owned(), rv(&event.object.value()))
}

fn from(rv: &str) -> WatchOptions {
    WatchOptions {
        resource_version: Some(rv.to_owned()),
        ..WatchOptions::default()
    }
}

/// A watch from before the cache's history is one 410 `ERROR`; one inside it replays.
#[tokio::test]
async fn a_revision_older_than_the_cache_history_is_one_410_error_event() {
    let env = env().await;
    let registry = Registry::new(Arc::new(scheme()), env.storage.clone(), "/registry")
        .await
        .unwrap()
        .with_watch_cache(CacheOptions {
            history: 2,
            ..CacheOptions::default()
        });
    let env = Env { registry, ..env };
    let cms = env.configmaps();
    let a = env.create(cms, configmap("a", json!({}))).await;
    let b = env.create(cms, configmap("b", json!({}))).await;
    let c = env.create(cms, configmap("c", json!({}))).await;
    let d = env.create(cms, configmap("d", json!({}))).await;
    // The history holds c and d: watches may start at b or later.
    let mut events = env.watch(cms, from(&rv(&b))).await;
    assert_eq!(
        summary(&next(&mut events).await),
        (WatchEventType::Added, "c".into(), rv(&c))
    );
    assert_eq!(
        summary(&next(&mut events).await),
        (WatchEventType::Added, "d".into(), rv(&d))
    );

    let mut events = env.watch(cms, from(&rv(&a))).await;
    let event = next(&mut events).await;
    assert_eq!(event.type_, WatchEventType::Error);
    assert_eq!(event.object.value()["kind"], "Status");
    assert_eq!(event.object.value()["code"], 410);
    assert_eq!(event.object.value()["reason"], "Expired");
    assert_eq!(
        event.object.value()["message"],
        format!("too old resource version: {} ({})", rv(&a), rv(&b))
    );
    assert!(events.next().await.is_none(), "the watch ends after ERROR");
}

/// Compacting the store does not shorten the cache's history (kube's cacher serves
/// watches from its own ring), and the cache keeps following the store.
#[tokio::test]
async fn storage_compaction_leaves_cached_history_alone() {
    let env = env().await;
    let cms = env.configmaps();
    let first = env.create(cms, configmap("a", json!({}))).await;
    let b = env.create(cms, configmap("b", json!({}))).await;
    let current = env.storage.current_revision().await.unwrap();
    env.storage.compact(current).await.unwrap();
    let mut events = env.watch(cms, from(&rv(&first))).await;
    assert_eq!(
        summary(&next(&mut events).await),
        (WatchEventType::Added, "b".into(), rv(&b))
    );
    let c = env.create(cms, configmap("c", json!({}))).await;
    assert_eq!(
        summary(&next(&mut events).await),
        (WatchEventType::Added, "c".into(), rv(&c))
    );
}

#[tokio::test]
async fn changes_arrive_in_order_once_in_the_watched_version() {
    let env = env().await;
    let v1 = env.webapps("v1");
    let web = json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
        "metadata": {"name": "web"}, "spec": {"replicas": 1, "container": {"image": "a"}}});
    let start = env
        .create(env.configmaps(), configmap("x", json!({})))
        .await;
    let mut events = env.watch(env.webapps("v1beta1"), from(&rv(&start))).await;

    let created = env.create(v1, web.clone()).await;
    let mut changed = created.clone();
    changed["spec"]["replicas"] = json!(3);
    let updated = env.update(v1, "web", changed).await;
    env.delete(v1, "web").await;
    let delete_revision = env.storage.current_revision().await.unwrap();

    let added = next(&mut events).await;
    assert_eq!(
        added.object.value()["apiVersion"],
        "apps.example.dev/v1beta1"
    );
    assert_eq!(
        summary(&added),
        (WatchEventType::Added, "web".into(), rv(&created))
    );
    let modified = next(&mut events).await;
    assert_eq!(
        summary(&modified),
        (WatchEventType::Modified, "web".into(), rv(&updated))
    );
    let gone = next(&mut events).await;
    assert_eq!(
        summary(&gone),
        (
            WatchEventType::Deleted,
            "web".into(),
            delete_revision.to_string()
        )
    );
    assert_eq!(
        gone.object.value()["apiVersion"],
        "apps.example.dev/v1beta1"
    );
}

#[tokio::test]
async fn resource_version_0_starts_with_the_current_objects() {
    let env = env().await;
    let a = env
        .create(env.configmaps(), configmap("a", json!({})))
        .await;
    let b = env
        .create(env.configmaps(), configmap("b", json!({})))
        .await;
    for options in [from("0"), WatchOptions::default()] {
        let mut events = env.watch(env.configmaps(), options).await;
        assert_eq!(
            summary(&next(&mut events).await),
            (WatchEventType::Added, "a".into(), rv(&a))
        );
        assert_eq!(
            summary(&next(&mut events).await),
            (WatchEventType::Added, "b".into(), rv(&b))
        );
        let c = env
            .create(env.configmaps(), configmap("c", json!({})))
            .await;
        assert_eq!(
            summary(&next(&mut events).await),
            (WatchEventType::Added, "c".into(), rv(&c))
        );
        env.delete(env.configmaps(), "c").await;
        assert_eq!(next(&mut events).await.type_, WatchEventType::Deleted);
    }
}

#[tokio::test]
async fn label_selectors_turn_transitions_into_added_and_deleted() {
    let env = env().await;
    let cms = env.configmaps();
    let start = env.create(cms, configmap("other", json!({}))).await;
    let options = WatchOptions {
        label_selector: Some("tier=web".into()),
        ..from(&rv(&start))
    };
    let mut events = env.watch(cms, options).await;

    env.create(cms, configmap("a", json!({"tier": "db"}))).await;
    let mut a = env
        .update(cms, "a", configmap("a", json!({"tier": "web"})))
        .await;
    a["data"]["k"] = json!("changed");
    let changed = env.update(cms, "a", a).await;
    let mut moved = changed.clone();
    moved["metadata"]["labels"]["tier"] = json!("db");
    let moved = env.update(cms, "a", moved).await;
    env.delete(cms, "a").await;
    let b = env
        .create(cms, configmap("b", json!({"tier": "web"})))
        .await;

    let added = next(&mut events).await;
    assert_eq!(added.type_, WatchEventType::Added);
    assert_eq!(added.object.value()["metadata"]["labels"]["tier"], "web");
    assert_eq!(
        summary(&next(&mut events).await),
        (WatchEventType::Modified, "a".into(), rv(&changed))
    );
    let left = next(&mut events).await;
    assert_eq!(
        summary(&left),
        (WatchEventType::Deleted, "a".into(), rv(&moved))
    );
    assert_eq!(
        left.object.value()["metadata"]["labels"]["tier"],
        "web",
        "the last state that matched"
    );
    // The delete of `a` (no longer matching) is not seen.
    assert_eq!(
        summary(&next(&mut events).await),
        (WatchEventType::Added, "b".into(), rv(&b))
    );
}

#[tokio::test]
async fn bookmarks_carry_the_revision_reached() {
    let env = env().await;
    let cms = env.configmaps();
    let start = env.create(cms, configmap("a", json!({"x": "1"}))).await;
    let options = WatchOptions {
        allow_watch_bookmarks: true,
        bookmark_interval: Some(Duration::from_millis(50)),
        label_selector: Some("x=2".into()),
        ..from(&rv(&start))
    };
    let mut events = env.watch(cms, options).await;
    let bookmark = next(&mut events).await;
    assert_eq!(bookmark.type_, WatchEventType::Bookmark);
    assert_eq!(
        bookmark.object,
        json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": rv(&start)}})
    );
    // A change the selector filters out still moves the bookmarks on.
    let b = env.create(cms, configmap("b", json!({"x": "1"}))).await;
    let reached = loop {
        let event = next(&mut events).await;
        assert_eq!(event.type_, WatchEventType::Bookmark);
        if rv(&event.object.value()) == rv(&b) {
            break event;
        }
    };
    assert_eq!(reached.object.value()["kind"], "ConfigMap");
}

#[tokio::test]
async fn send_initial_events_ends_with_an_annotated_bookmark() {
    let env = env().await;
    let cms = env.configmaps();
    let a = env.create(cms, configmap("a", json!({}))).await;
    let options = WatchOptions {
        send_initial_events: Some(true),
        allow_watch_bookmarks: true,
        resource_version_match: Some("NotOlderThan".into()),
        ..WatchOptions::default()
    };
    let mut events = env.watch(cms, options).await;
    assert_eq!(
        summary(&next(&mut events).await),
        (WatchEventType::Added, "a".into(), rv(&a))
    );
    let end = next(&mut events).await;
    assert_eq!(end.type_, WatchEventType::Bookmark);
    assert_eq!(
        end.object.value()["metadata"]["annotations"][INITIAL_EVENTS_END],
        "true"
    );
    assert_eq!(rv(&end.object.value()), rv(&a));
    let b = env.create(cms, configmap("b", json!({}))).await;
    assert_eq!(
        summary(&next(&mut events).await),
        (WatchEventType::Added, "b".into(), rv(&b))
    );

    // kube's validation of the combination.
    let bad = WatchOptions {
        send_initial_events: Some(true),
        ..WatchOptions::default()
    };
    let error = env.registry.watch(cms, &bad).await.err().unwrap();
    assert_eq!(error.code(), 422);
    assert!(
        error
            .to_string()
            .contains("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
        "{error}"
    );
}

#[tokio::test]
async fn the_watch_ends_at_its_timeout() {
    let env = env().await;
    let options = WatchOptions {
        timeout: Some(Duration::from_millis(100)),
        ..from("1")
    };
    let mut events = env.watch(env.configmaps(), options).await;
    let end = tokio::time::timeout(EVENT_TIMEOUT, events.next()).await;
    assert!(matches!(end, Ok(None)), "the stream ends cleanly");
}

/// A watcher nobody reads does not hold up writes nor the other watchers: the cache drops
/// it once its buffer is full. Read at last, it delivers what it held, in order, then one
/// `ERROR` (500) saying to watch again, and the end.
#[tokio::test]
async fn a_slow_watcher_is_dropped_with_an_error_after_what_it_held() {
    let dir = tempfile::tempdir().unwrap();
    let storage: Arc<dyn Storage> = Arc::new(EmbeddedStorage::open(dir.path()).unwrap());
    let registry = Registry::new(Arc::new(scheme()), storage.clone(), "/registry")
        .await
        .unwrap()
        .with_watch_cache(CacheOptions {
            watcher_buffer: 2,
            ..CacheOptions::default()
        });
    let env = Env {
        kinds: registry.scheme().kinds(),
        registry,
        storage,
        _dir: dir,
    };
    // Counted in `apiserver_terminated_watchers_total` (process-wide: other tests of this
    // binary may drop watchers too, so it grows by at least this one).
    let dropped = || {
        let labels = kapi::metrics::ResourceLabels {
            resource: "configmaps".into(),
        };
        (kapi::metrics::global().terminated_watchers)
            .with(&labels, |c| c.total())
            .unwrap_or(0)
    };
    let dropped_before = dropped();
    let mut slow = env.watch(env.configmaps(), WatchOptions::default()).await;
    let mut fast = env.watch(env.configmaps(), WatchOptions::default()).await;
    let mut names = Vec::new();
    for i in 0..8 {
        let name = format!("b{i}");
        env.create(env.configmaps(), configmap(&name, json!({})))
            .await;
        // The other watcher keeps up, and sees every change.
        let event = next(&mut fast).await;
        assert_eq!(event.object.value()["metadata"]["name"], name.as_str());
        names.push(name);
    }
    for name in &names[..2] {
        let event = next(&mut slow).await;
        assert_eq!(
            (
                event.type_,
                event.object.value()["metadata"]["name"].as_str()
            ),
            (WatchEventType::Added, Some(name.as_str()))
        );
    }
    let error = next(&mut slow).await;
    assert_eq!(error.type_, WatchEventType::Error);
    assert_eq!(error.object.value()["code"], 500, "{}", error.object);
    let status = error.object.value();
    let message = status["message"].as_str().unwrap();
    assert!(
        message.contains("more than 2 changes behind") && message.contains("watch again"),
        "{message}"
    );
    assert!(slow.next().await.is_none(), "the watch ends after ERROR");
    assert!(dropped() > dropped_before, "the dropped watcher is counted");
}

/// Every watcher of one version gets the same encoded object for a change: it is
/// converted and encoded once, not once per watcher.
#[tokio::test]
async fn watchers_of_one_version_share_each_event_encoding() {
    let env = env().await;
    let start = env
        .create(env.configmaps(), configmap("start", json!({})))
        .await;
    let mut v1 = Vec::new();
    for _ in 0..3 {
        v1.push(env.watch(env.webapps("v1"), from(&rv(&start))).await);
    }
    let mut beta = env.watch(env.webapps("v1beta1"), from(&rv(&start))).await;
    let web = json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
        "metadata": {"name": "web"}, "spec": {"replicas": 1, "container": {"image": "a"}}});
    env.create(env.webapps("v1"), web).await;
    let mut events = Vec::new();
    for watch in &mut v1 {
        events.push(next(watch).await);
    }
    let other = next(&mut beta).await;
    assert!(
        events
            .windows(2)
            .all(|w| SharedObject::ptr_eq(&w[0].object, &w[1].object))
    );
    assert_eq!(events[0].object.json(), events[1].object.json());
    assert!(!SharedObject::ptr_eq(&events[0].object, &other.object));
    assert_eq!(
        other.object.value()["apiVersion"],
        "apps.example.dev/v1beta1"
    );
}

/// Table watches (`kubectl get -w`) of one Table version and `includeObject` share each
/// change's row-only Table, built and encoded once: the endpoint memoizes it on the change's
/// shared object (which every watcher of the version holds) and only frames it per watcher.
/// A watch's first row carries the column definitions and is its own; another
/// `includeObject` is another encoding.
#[tokio::test]
async fn table_watchers_share_each_row_encoding() {
    use axum::body::{Body, Bytes};
    use axum::http::Request;
    use http_body_util::BodyExt;
    use kapi::server::endpoints::{self, Config, ServerVersion};
    use tower::ServiceExt;

    /// The endpoint's memo keys: Table `apiVersion` and `includeObject`.
    const METADATA_ROWS: &str = "meta.k8s.io/v1:Metadata";
    const OBJECT_ROWS: &str = "meta.k8s.io/v1:Object";
    const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

    let dir = tempfile::tempdir().unwrap();
    let storage: Arc<dyn Storage> = Arc::new(EmbeddedStorage::open(dir.path()).unwrap());
    let scheme = Arc::new(kapi_generated::scheme());
    let registry = Registry::new(scheme, Arc::clone(&storage), "/registry")
        .await
        .unwrap();
    let registry = Arc::new(registry);
    let router = endpoints::router(Config {
        routes: kapi_generated::ROUTES,
        registry: Arc::clone(&registry),
        storage,
        documents: kapi_generated::documents::DOCUMENTS,
        renderer: None,
        version: ServerVersion::default(),
        filters: Default::default(),
        min_request_timeout: endpoints::DEFAULT_MIN_REQUEST_TIMEOUT,
        lifecycle: Default::default(),
        health: Default::default(),
        profiling: false,
        extra: Default::default(),
        aggregator: None,
        render_documents: false,
    });
    let webapps = Target {
        kind: &(registry.scheme())
            .by_resource("apps.example.dev", "webapps")
            .unwrap(),
        version: "v1",
        namespace: Some("default"),
    };
    let webapp = |name: &str| {
        json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
            "metadata": {"name": name}, "spec": {"replicas": 1, "container": {"image": "a"}}})
    };
    let a = (registry
        .create(webapps, webapp("a"), &WriteOptions::default())
        .await)
        .unwrap()
        .into_object()
        .unwrap();

    // Three Table watchers with the default `includeObject`, one with `Object`; each begins
    // with `a`, its first row.
    let mut tables = Vec::new();
    for include in ["", "", "", "&includeObject=Object"] {
        let request = Request::get(format!(
            "/apis/apps.example.dev/v1/namespaces/default/webapps?watch=true&resourceVersion=0{include}"
        ))
        .header("accept", TABLE)
        .body(Body::empty())
        .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), 200);
        tables.push(response.into_body());
    }
    async fn next_line(body: &mut Body) -> Bytes {
        let frame = tokio::time::timeout(EVENT_TIMEOUT, body.frame())
            .await
            .expect("no watch line within the deadline")
            .expect("the watch ended")
            .unwrap();
        frame.into_data().unwrap()
    }
    for body in &mut tables {
        let first: Value = serde_json::from_slice(&next_line(body).await).unwrap();
        assert_eq!(first["object"]["rows"][0]["cells"][0], "a");
        assert!(
            !first["object"]["columnDefinitions"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }
    // A JSON watcher of the version, for the change's shared object.
    let mut json_watch = (registry.watch(webapps, &from(&rv(&a))).await).unwrap();

    registry
        .create(webapps, webapp("b"), &WriteOptions::default())
        .await
        .unwrap();
    let change = next(&mut json_watch).await;
    assert_eq!(summary(&change).1, "b");
    let mut lines = Vec::new();
    for body in &mut tables {
        lines.push(next_line(body).await);
    }

    let shared = (change.object)
        .encoded_as(METADATA_ROWS, || None)
        .expect("the row-only Table is memoized on the change's shared object");
    let again = (change.object).encoded_as(METADATA_ROWS, || panic!("encoded twice"));
    assert_eq!(
        again.map(|b| b.as_ptr()),
        Some(shared.as_ptr()),
        "one encoding"
    );
    let framed = [&b"{\"type\":\"ADDED\",\"object\":"[..], &shared, b"}\n"].concat();
    for line in &lines[..3] {
        assert_eq!(line[..], framed[..], "the shared row, framed");
    }
    let row: Value = serde_json::from_slice(&shared).unwrap();
    assert_eq!(row["columnDefinitions"], json!([]));
    assert_eq!(row["rows"][0]["cells"][0], "b");
    assert_eq!(row["rows"][0]["object"]["kind"], "PartialObjectMetadata");

    // `includeObject=Object` shares its own encoding, with the whole object.
    let object_rows = (change.object)
        .encoded_as(OBJECT_ROWS, || None)
        .expect("memoized per includeObject");
    assert_ne!(object_rows, shared);
    let object_line = [
        &b"{\"type\":\"ADDED\",\"object\":"[..],
        &object_rows,
        b"}\n",
    ]
    .concat();
    assert_eq!(lines[3][..], object_line[..]);
    let row: Value = serde_json::from_slice(&object_rows).unwrap();
    assert_eq!(row["rows"][0]["object"]["kind"], "WebApp");
}

/// A watch dropped by its client leaves the cache; `stop_watches` (shutdown) ends the
/// open ones cleanly and refuses new ones with 503.
#[tokio::test]
async fn watches_leave_the_cache_and_end_at_shutdown() {
    let env = env().await;
    let cms = env.configmaps();
    let first = env.watch(cms, WatchOptions::default()).await;
    let mut second = env.watch(cms, WatchOptions::default()).await;
    assert_eq!(env.registry.watchers(), 2);
    drop(first);
    assert_eq!(env.registry.watchers(), 1);

    env.registry.stop_watches();
    let end = tokio::time::timeout(EVENT_TIMEOUT, second.next()).await;
    assert!(matches!(end, Ok(None)), "the watch ends cleanly");
    let refused = env.registry.watch(cms, &WatchOptions::default()).await;
    assert_eq!(refused.err().map(|e| e.code()), Some(503));
}
