//! A kube-rs `reflector` (the `kube` crate's `watcher` feeding a `Store`) against the real
//! `kapi-server`: its store stays exactly the server's collection (names and
//! resourceVersions) through creates, updates, deletes and a server restart in the middle,
//! after which it resumes its watch (or relists) by itself; the same for a kind a
//! CustomResourceDefinition installs, found through kube-rs's discovery and written with
//! server-side apply; and a kube-rs client authenticating with a bearer token against RBAC.

use crate::support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use kube::api::{Api, ListParams};
use kube::core::{DynamicObject, GroupVersionKind};
use kube::discovery::ApiResource;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::{Value, json};
use support::Server;
use support::http::Client;

/// How long the store may take to catch up with a change (a restart included).
const SYNC: Duration = Duration::from_secs(30);

const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";

fn webapp(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "container": {"image": "nginx:1.27"}}})
}

#[track_caller]
fn create(client: &Client, name: &str) {
    let response = client.post(WEBAPPS, &webapp(name, 1)).unwrap();
    assert_eq!(response.status, 201, "{response:?}");
}

#[track_caller]
fn scale(client: &Client, name: &str, replicas: i64) {
    let path = format!("{WEBAPPS}/{name}");
    let mut object = client.get(&path).unwrap().json();
    object["spec"]["replicas"] = json!(replicas);
    let response = client.put(&path, &object).unwrap();
    assert_eq!(response.status, 200, "{response:?}");
}

#[track_caller]
fn delete(client: &Client, name: &str) {
    let response = client.delete(&format!("{WEBAPPS}/{name}")).unwrap();
    assert_eq!(response.status, 200, "{response:?}");
}

/// name -> resourceVersion.
type State = BTreeMap<String, String>;

fn store_state(store: &Store<DynamicObject>) -> State {
    (store.state().iter())
        .map(|o| {
            let name = o.metadata.name.clone().unwrap_or_default();
            (
                name,
                o.metadata.resource_version.clone().unwrap_or_default(),
            )
        })
        .collect()
}

async fn server_state(api: &Api<DynamicObject>) -> Option<State> {
    let list = api.list(&ListParams::default()).await.ok()?;
    Some(
        (list.items.iter())
            .map(|o| {
                let name = o.metadata.name.clone().unwrap_or_default();
                (
                    name,
                    o.metadata.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect(),
    )
}

/// Waits until the store holds exactly what the server lists, and `expect` holds of it.
async fn in_sync(
    store: &Store<DynamicObject>,
    api: &Api<DynamicObject>,
    what: &str,
    expect: impl Fn(&State) -> bool,
) -> State {
    let deadline = Instant::now() + SYNC;
    loop {
        let server = server_state(api).await;
        let local = store_state(store);
        if server.as_ref() == Some(&local) && expect(&local) {
            return local;
        }
        assert!(
            Instant::now() < deadline,
            "after {SYNC:?} ({what}) the reflector's store {local:?} is not the server's {server:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn api(server: &Server) -> Api<DynamicObject> {
    let config = kube::Config::new(server.url().parse().unwrap());
    let client = kube::Client::try_from(config).unwrap();
    let gvk = GroupVersionKind::gvk("apps.example.dev", "v1", "WebApp");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "webapps");
    Api::namespaced_with(client, "default", &resource)
}

#[test]
fn a_reflector_stays_in_sync_through_writes_and_a_restart() {
    let mut server = Server::start();
    let client = Client::new(server.addr());
    for name in ["a", "b", "c"] {
        create(&client, name);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let api = runtime.block_on(async { api(&server) });
    // Two reflectors: one lists then watches, one streams its list (`sendInitialEvents`).
    let webapps = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.example.dev", "v1", "WebApp"),
        "webapps",
    );
    let (store, task) = start_reflector(&runtime, &api, &webapps, watcher::Config::default());
    let (streamed, streamed_task) = start_reflector(
        &runtime,
        &api,
        &webapps,
        watcher::Config::default().streaming_lists(),
    );
    let sync = |what: &str, names: &'static [&'static str]| {
        let has = |state: &State| state.keys().map(String::as_str).eq(names.iter().copied());
        let state = runtime.block_on(in_sync(&store, &api, what, has));
        let other = runtime.block_on(in_sync(&streamed, &api, what, has));
        assert_eq!(state, other, "{what}: both reflectors agree");
        state
    };
    sync("the initial list", &["a", "b", "c"]);

    create(&client, "d");
    scale(&client, "a", 3);
    delete(&client, "b");
    let before = sync("writes", &["a", "c", "d"]);

    // A restart on the same address: the watches break, the reflectors come back by
    // themselves.
    server.restart_on_same_port();
    let client = Client::new(server.addr());
    scale(&client, "c", 5);
    create(&client, "e");
    delete(&client, "d");
    let after = sync("writes after a restart", &["a", "c", "e"]);
    assert_eq!(after["a"], before["a"], "a did not change");
    assert_ne!(after["c"], before["c"], "c changed after the restart");

    for i in 0..20 {
        scale(&client, "a", i);
    }
    create(&client, "f");
    sync("a burst of writes", &["a", "c", "e", "f"]);
    task.abort();
    streamed_task.abort();
}

/// A reflector of `api`'s collection (of `resource`) running on `runtime`, with kube's
/// default backoff.
fn start_reflector(
    runtime: &tokio::runtime::Runtime,
    api: &Api<DynamicObject>,
    resource: &ApiResource,
    config: watcher::Config,
) -> (Store<DynamicObject>, tokio::task::JoinHandle<()>) {
    let writer = reflector::store::Writer::new(resource.clone());
    let store = writer.as_reader();
    let stream = reflector::reflector(writer, watcher(api.clone(), config)).default_backoff();
    let _guard = runtime.enter();
    (store, runtime.spawn(stream.for_each(|_| async {})))
}

/// kube-rs with a bearer token (from a kubeconfig, as users configure it) against a server
/// with token authentication and RBAC on loopback: the administrator lists WebApps; a user
/// without bindings gets kube's 403 as a `kube::Error::Api`; a wrong token 401.
#[test]
fn kube_rs_authenticates_with_a_token() {
    use support::pki::{ADMIN_TOKEN, ALICE_TOKEN, Pki};

    let pki = Pki::new();
    let tokens = pki.tokens.display().to_string();
    let server =
        Server::start_with(&["--token-auth-file", &tokens, "--authorization-mode", "RBAC"]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let api_as = |token: &str| {
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: kapi, cluster: {{server: \"{}\"}}}}]\n\
             users: [{{name: u, user: {{token: \"{token}\"}}}}]\n\
             contexts: [{{name: c, context: {{cluster: kapi, user: u}}}}]\ncurrent-context: c\n",
            server.url()
        );
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&kubeconfig).unwrap();
        let options = kube::config::KubeConfigOptions::default();
        let config = runtime
            .block_on(kube::Config::from_custom_kubeconfig(kubeconfig, &options))
            .unwrap();
        let client = runtime.block_on(async { kube::Client::try_from(config).unwrap() });
        let gvk = GroupVersionKind::gvk("apps.example.dev", "v1", "WebApp");
        let resource = ApiResource::from_gvk_with_plural(&gvk, "webapps");
        Api::<DynamicObject>::namespaced_with(client, "default", &resource)
    };

    let admin = api_as(ADMIN_TOKEN);
    let listed = runtime
        .block_on(admin.list(&ListParams::default()))
        .unwrap();
    assert!(listed.items.is_empty());

    let alice = api_as(ALICE_TOKEN);
    match runtime.block_on(alice.list(&ListParams::default())) {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 403);
            assert_eq!(status.reason, "Forbidden");
            assert_eq!(
                status.message,
                "webapps.apps.example.dev is forbidden: User \"alice\" cannot list resource \
                 \"webapps\" in API group \"apps.example.dev\" in the namespace \"default\""
            );
        }
        other => panic!("alice should be forbidden: {other:?}"),
    }
    let stranger = api_as("not-a-token");
    match runtime.block_on(stranger.list(&ListParams::default())) {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 401),
        other => panic!("a wrong token should be refused: {other:?}"),
    }
}

/// A kind a CustomResourceDefinition installs, as a kube-rs controller meets it: found by
/// kube-rs's discovery (with its verbs), written with server-side apply, and followed by a
/// reflector whose store stays the server's collection.
#[test]
fn a_reflector_follows_a_kind_a_definition_installs() {
    use kube::api::{Patch, PatchParams};

    let server = Server::start();
    let client = Client::new(server.addr());
    let definition = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "cronSpec": {"type": "string"},
                        "replicas": {"type": "integer", "default": 1}
                    }}
                }}}
            }]
        }
    });
    let created = client
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &definition,
        )
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let gvk = GroupVersionKind::gvk("stable.example.com", "v1", "CronTab");
    let (api, resource) = runtime.block_on(async {
        let kube_client =
            kube::Client::try_from(kube::Config::new(server.url().parse().unwrap())).unwrap();
        let deadline = Instant::now() + SYNC;
        loop {
            let discovery = kube::Discovery::new(kube_client.clone())
                .filter(&["stable.example.com"])
                .run()
                .await;
            if let Some((resource, capabilities)) = discovery.ok().and_then(|d| d.resolve_gvk(&gvk))
            {
                assert_eq!(resource.plural, "crontabs");
                assert!(capabilities.supports_operation("watch"), "{capabilities:?}");
                let api = Api::namespaced_with(kube_client, "default", &resource);
                break (api, resource);
            }
            assert!(
                Instant::now() < deadline,
                "kube-rs never discovered CronTab"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let (store, task) = start_reflector(&runtime, &api, &resource, watcher::Config::default());
    let apply = |name: &str, cron: &str| {
        let object = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": name}, "spec": {"cronSpec": cron}});
        let params = PatchParams::apply("reflector-test");
        runtime
            .block_on(api.patch(name, &params, &Patch::Apply(object)))
            .unwrap()
    };
    let nightly = apply("nightly", "0 0 * * *");
    assert_eq!(nightly.data["spec"]["replicas"], 1, "the schema's default");
    apply("hourly", "0 * * * *");
    apply("nightly", "0 1 * * *");
    let path = "/apis/stable.example.com/v1/namespaces/default/crontabs/hourly";
    assert_eq!(client.delete(path).unwrap().status, 200);
    let names = |state: &State| state.keys().map(String::as_str).eq(["nightly"]);
    runtime.block_on(in_sync(&store, &api, "applies and a delete", names));
    let object = runtime.block_on(api.get("nightly")).unwrap();
    assert_eq!(object.data["spec"]["cronSpec"], "0 1 * * *");
    task.abort();
}
