//! kube-rs on the `api-types` types themselves: `Api<v1::WebApp>` and
//! `Api<v1beta1::WebApp>` create, read, list, replace, apply and delete; a typed `watcher`
//! and `reflector`; and a user's kind, declared in this test crate with the derives alone
//! and served through a CustomResourceDefinition, used the same way. No twin type is
//! declared for kube-rs anywhere: the derives implement k8s-openapi's `Resource`,
//! `ListableResource` and `Metadata`, which kube-rs's blanket impl makes `kube::Resource`.

use crate::support;

use std::time::{Duration, Instant};

use api_types::apps::{v1, v1beta1};
use futures_util::StreamExt;
use kapi::meta::ObjectMeta;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Resource, ResourceExt};
use serde::{Deserialize, Serialize};
use serde_json::json;
use support::Server;

/// How long a watcher or store may take to see a change.
const SYNC: Duration = Duration::from_secs(30);

fn client(server: &Server) -> kube::Client {
    kube::Client::try_from(kube::Config::new(server.url().parse().unwrap())).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn v1_webapp(name: &str, replicas: i32) -> v1::WebApp {
    v1::WebApp {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: v1::WebAppSpec {
            replicas,
            container: v1::Container {
                image: "nginx:1.27".into(),
                ..v1::Container::default()
            },
            paused: false,
        },
        status: None,
    }
}

#[test]
fn typed_crud_in_both_versions() {
    let server = Server::start();
    runtime().block_on(async {
        let client = client(&server);
        let webapps: Api<v1::WebApp> = Api::namespaced(client.clone(), "default");
        assert_eq!(v1::WebApp::url_path(&(), Some("default")), "/apis/apps.example.dev/v1/namespaces/default/webapps");

        let created = webapps.create(&PostParams::default(), &v1_webapp("web", 2)).await.unwrap();
        assert_eq!(created.spec.replicas, 2);
        assert!(created.uid().is_some() && created.resource_version().is_some());
        assert!(created.creation_timestamp().is_some(), "a Time read by k8s-openapi");

        let mut read = webapps.get("web").await.unwrap();
        assert_eq!(read.metadata.uid, created.metadata.uid);
        read.spec.replicas = 4;
        let replaced = webapps.replace("web", &PostParams::default(), &read).await.unwrap();
        assert_eq!(replaced.spec.replicas, 4);
        assert_eq!(replaced.metadata.generation, Some(2));

        // A stale resourceVersion is a conflict, as kube::Error::Api with kube's code.
        let stale = webapps.replace("web", &PostParams::default(), &read).await.unwrap_err();
        assert!(matches!(&stale, kube::Error::Api(status) if status.code == 409), "{stale:?}");

        // Server-side apply of the typed object's spec, and of its status on /status.
        let applied = json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
            "metadata": {"name": "web"}, "spec": {"replicas": 6, "container": {"image": "nginx:1.28"}}});
        let params = PatchParams::apply("kube-types-test").force();
        let patched = webapps.patch("web", &params, &Patch::Apply(&applied)).await.unwrap();
        assert_eq!((patched.spec.replicas, patched.spec.container.image.as_str()), (6, "nginx:1.28"));
        let status = json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
            "metadata": {"name": "web"}, "status": {"replicas": 6, "readyReplicas": 6}});
        let with_status = webapps.patch_status("web", &params, &Patch::Apply(&status)).await.unwrap();
        assert_eq!(with_status.status.as_ref().and_then(|s| s.ready_replicas), Some(6));
        let managers: Vec<_> = with_status.managed_fields().iter().filter_map(|e| e.manager.clone()).collect();
        assert!(managers.contains(&"kube-types-test".to_owned()), "{managers:?}");

        // The same object through the deprecated version, as its own Rust type.
        let beta: Api<v1beta1::WebApp> = Api::namespaced(client.clone(), "default");
        let as_beta = beta.get("web").await.unwrap();
        assert_eq!((as_beta.spec.replicas, as_beta.spec.image.as_str()), (6, "nginx:1.28"));
        let made_in_beta = v1beta1::WebApp {
            metadata: ObjectMeta { name: Some("beta".into()), ..ObjectMeta::default() },
            spec: v1beta1::WebAppSpec { replicas: 1, image: "httpd:2".into(), port: 9090 },
            status: None,
        };
        let created_beta = beta.create(&PostParams::default(), &made_in_beta).await.unwrap();
        assert_eq!(created_beta.spec.port, 9090);
        let in_v1 = webapps.get("beta").await.unwrap();
        assert_eq!(in_v1.spec.container.image, "httpd:2");
        assert_eq!(in_v1.spec.container.ports.first().map(|p| p.container_port), Some(9090));

        let names: Vec<String> = (webapps.list(&ListParams::default()).await.unwrap().items.iter())
            .map(|w| w.name_any()).collect();
        assert_eq!(names, ["beta", "web"]);
        let names: Vec<String> = (beta.list(&ListParams::default()).await.unwrap().items.iter())
            .map(|w| w.name_any()).collect();
        assert_eq!(names, ["beta", "web"]);

        beta.delete("beta", &DeleteParams::default()).await.unwrap();
        webapps.delete("web", &DeleteParams::default()).await.unwrap();
        assert!(webapps.list(&ListParams::default()).await.unwrap().items.is_empty());
        assert!(webapps.get_opt("web").await.unwrap().is_none());
    });
}

#[test]
fn typed_watcher_and_reflector() {
    let server = Server::start();
    runtime().block_on(async {
        let client = client(&server);
        let webapps: Api<v1::WebApp> = Api::namespaced(client.clone(), "default");
        webapps
            .create(&PostParams::default(), &v1_webapp("a", 1))
            .await
            .unwrap();

        // A reflector of v1beta1 WebApps: its store follows changes made in v1.
        let beta: Api<v1beta1::WebApp> = Api::namespaced(client.clone(), "default");
        let (store, writer) = reflector::store();
        let reflecting = watcher(beta, watcher::Config::default())
            .reflect(writer)
            .applied_objects();
        let reflecting = tokio::spawn(reflecting.for_each(|_| async {}));

        // A watcher of v1 WebApps sees what follows.
        let mut events = watcher(webapps.clone(), watcher::Config::default())
            .applied_objects()
            .boxed();
        let first = tokio::time::timeout(SYNC, events.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(first.name_any(), "a");
        webapps
            .create(&PostParams::default(), &v1_webapp("b", 3))
            .await
            .unwrap();
        let second = tokio::time::timeout(SYNC, events.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!((second.name_any().as_str(), second.spec.replicas), ("b", 3));

        let deadline = Instant::now() + SYNC;
        loop {
            let mut seen: Vec<(String, i32)> = (store.state().iter())
                .map(|w| (w.name_any(), w.spec.replicas))
                .collect();
            seen.sort();
            if seen == [("a".to_owned(), 1), ("b".to_owned(), 3)] {
                break;
            }
            assert!(Instant::now() < deadline, "the store holds {seen:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        reflecting.abort();
    });
}

/// A user's kind, declared here with the derives alone.
#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema, kapi::Resource,
)]
#[resource(
    group = "toys.example.com",
    kind = "Gadget",
    plural = "gadgets",
    namespaced,
    version(name = "v1", storage)
)]
struct Gadget {
    #[serde(default)]
    metadata: ObjectMeta,
    spec: GadgetSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct GadgetSpec {
    colour: String,
}

#[test]
fn a_users_kind_is_a_kube_resource_from_the_derive() {
    assert_eq!(Gadget::api_version(&()), "toys.example.com/v1");
    assert_eq!(Gadget::kind(&()), "Gadget");
    assert_eq!(Gadget::plural(&()), "gadgets");
    assert_eq!(
        Gadget::url_path(&(), Some("ns")),
        "/apis/toys.example.com/v1/namespaces/ns/gadgets"
    );

    // Served through a CustomResourceDefinition of the same kind.
    let server = Server::start();
    let http = server.client();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.toys.example.com"},
        "spec": {"group": "toys.example.com", "scope": "Namespaced",
            "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"colour": {"type": "string"}}}}}}}]}});
    assert_eq!(
        http.post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd
        )
        .unwrap()
        .status,
        201
    );
    support::crontabs::wait_established(&http, "gadgets.toys.example.com");
    runtime().block_on(async {
        let gadgets: Api<Gadget> = Api::namespaced(client(&server), "default");
        let gadget = Gadget {
            metadata: ObjectMeta {
                name: Some("g".into()),
                ..ObjectMeta::default()
            },
            spec: GadgetSpec {
                colour: "teal".into(),
            },
        };
        let created = gadgets
            .create(&PostParams::default(), &gadget)
            .await
            .unwrap();
        assert_eq!(created.spec, gadget.spec);
        let listed = gadgets.list(&ListParams::default()).await.unwrap();
        assert_eq!(listed.items.len(), 1);
        gadgets.delete("g", &DeleteParams::default()).await.unwrap();
    });
}
