//! The registry against the embedded store, with the example API: kube-apiserver's
//! create/get/list/update/patch/delete rules and their exact Statuses. One test binary:
//! the helpers are here, the tests by verb beside them.

use std::sync::Arc;

use api_types::{apps, core, platform};
use bytes::Bytes;
use kapi::error::ApiError;
use kapi::meta::{DeleteOptions, Preconditions};
use kapi::registry::{
    FieldValidation, ListOptions, ObjectList, PatchType, Registry, Subresource, Target,
    WriteOptions,
};
use kapi::scheme::{KindEntry, Kinds, Scheme};
use kapi::server::controllers;
use kapi::storage::embedded::EmbeddedStorage;
use kapi::storage::{self, ListRequest, Storage};
use serde_json::{Value, json};
use tempfile::TempDir;

mod create;
mod delete;
mod failures;
mod lists;
mod namespaces;
mod patch;
mod tables;
mod update;

fn scheme() -> Scheme {
    Scheme::new()
        .add(KindEntry::new::<core::Namespace>().version::<core::Namespace, core::Namespace>("v1"))
        .add(KindEntry::new::<core::ConfigMap>().version::<core::ConfigMap, core::ConfigMap>("v1"))
        .add(
            KindEntry::new::<apps::WebApp>()
                .version::<apps::WebApp, apps::v1::WebApp>("v1")
                .version::<apps::WebApp, apps::v1beta1::WebApp>("v1beta1"),
        )
        .add(
            KindEntry::new::<platform::Tenant>()
                .version::<platform::Tenant, platform::Tenant>("v1"),
        )
}

/// A registry over a fresh embedded store.
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

    fn webapps<'a>(&'a self, version: &'a str, namespace: &'a str) -> Target<'a> {
        Target {
            kind: self.kind("apps.example.dev", "webapps"),
            version,
            namespace: Some(namespace),
        }
    }

    fn configmaps<'a>(&'a self, namespace: &'a str) -> Target<'a> {
        Target {
            kind: self.kind("", "configmaps"),
            version: "v1",
            namespace: Some(namespace),
        }
    }

    fn namespaces(&self) -> Target<'_> {
        Target {
            kind: self.kind("", "namespaces"),
            version: "v1",
            namespace: None,
        }
    }

    fn tenants(&self) -> Target<'_> {
        Target {
            kind: self.kind("platform.example.dev", "tenants"),
            version: "v1",
            namespace: None,
        }
    }

    async fn create(&self, target: Target<'_>, body: Value) -> Result<Value, ApiError> {
        let written = (self.registry)
            .create(target, body, &WriteOptions::default())
            .await?;
        assert!(written.created);
        written.into_object()
    }

    async fn get(&self, target: Target<'_>, name: &str) -> Result<Value, ApiError> {
        self.registry.get(target, name, None).await
    }

    async fn update(&self, target: Target<'_>, name: &str, body: Value) -> Result<Value, ApiError> {
        let written = (self.registry)
            .update(target, name, body, None, &WriteOptions::default())
            .await?;
        assert!(!written.created);
        written.into_object()
    }

    async fn patch(
        &self,
        target: Target<'_>,
        name: &str,
        patch_type: PatchType,
        patch: Value,
    ) -> Result<Value, ApiError> {
        let written = (self.registry)
            .patch(
                target,
                name,
                patch_type,
                patch,
                None,
                &WriteOptions::default(),
            )
            .await?;
        written.into_object()
    }

    async fn delete(&self, target: Target<'_>, name: &str) -> Result<Value, ApiError> {
        (self.registry)
            .delete(target, name, &DeleteOptions::default())
            .await
    }

    async fn list(&self, target: Target<'_>, options: ListOptions) -> Result<ObjectList, ApiError> {
        self.registry.list(target, &options).await
    }

    async fn names(&self, target: Target<'_>, options: ListOptions) -> Vec<String> {
        let list = self.list(target, options).await.unwrap();
        list.items.iter().map(item_name).collect()
    }

    /// The stored JSON of a key.
    async fn raw(&self, key: &str) -> Option<Value> {
        let kv = self.storage.get(key, 0).await.unwrap()?;
        Some(serde_json::from_slice(&kv.value).unwrap())
    }
}

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn item_name(object: &kapi::registry::SharedObject) -> String {
    name(&object.value()).to_owned()
}

fn rv(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// `object` without what the server sets anew each time (uid, timestamps,
/// resourceVersion), for comparisons.
fn stable(mut object: Value) -> Value {
    if let Some(metadata) = object["metadata"].as_object_mut() {
        for field in [
            "uid",
            "creationTimestamp",
            "resourceVersion",
            "deletionTimestamp",
        ] {
            metadata.remove(field);
        }
    }
    object
}

fn webapp(name: &str, image: &str) -> Value {
    json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp", "metadata": {"name": name},
        "spec": {"replicas": 2, "container": {"image": image}}})
}

fn configmap(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels}, "data": {"k": name}})
}

fn list_options() -> ListOptions {
    ListOptions::default()
}

/// Checks a failure against the Status kube-apiserver sends: `code`, `reason`, `message`.
#[track_caller]
fn check_error<T>(result: Result<T, ApiError>, code: u16, reason: &str, message: &str) {
    let Err(error) = result else {
        panic!("the request should fail with {code} {reason}: {message}");
    };
    let status = error.to_status();
    assert_eq!(
        (
            status.code,
            status.reason.as_deref(),
            status.message.as_deref()
        ),
        (Some(i32::from(code)), Some(reason), Some(message)),
        "{error:?}"
    );
}

#[tokio::test]
async fn webapps_round_trip_through_both_versions_stored_as_v1() {
    let env = env().await;
    let created = env
        .create(env.webapps("v1", "default"), webapp("web", "nginx:1"))
        .await
        .unwrap();
    assert_eq!(
        stable(created.clone()),
        json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
            "metadata": {"name": "web", "namespace": "default", "generation": 1},
            "spec": {"replicas": 2, "container": {"image": "nginx:1"}, "paused": false}})
    );
    assert_eq!(
        env.get(env.webapps("v1", "default"), "web").await.unwrap(),
        created
    );
    assert_eq!(
        stable(
            env.get(env.webapps("v1beta1", "default"), "web")
                .await
                .unwrap()
        ),
        json!({"apiVersion": "apps.example.dev/v1beta1", "kind": "WebApp",
            "metadata": {"name": "web", "namespace": "default", "generation": 1},
            "spec": {"replicas": 2, "image": "nginx:1", "port": 8080}})
    );

    // Written through v1beta1, stored as v1, read back in both.
    let old = json!({"apiVersion": "apps.example.dev/v1beta1", "kind": "WebApp",
        "metadata": {"name": "old"}, "spec": {"image": "httpd", "port": 81}});
    let created = env
        .create(env.webapps("v1beta1", "default"), old)
        .await
        .unwrap();
    assert_eq!(
        stable(created),
        json!({"apiVersion": "apps.example.dev/v1beta1", "kind": "WebApp",
            "metadata": {"name": "old", "namespace": "default", "generation": 1},
            "spec": {"replicas": 1, "image": "httpd", "port": 81}})
    );
    let stored = env
        .raw("/registry/apps.example.dev/webapps/default/old")
        .await
        .unwrap();
    assert_eq!(stored["apiVersion"], "apps.example.dev/v1");
    assert_eq!(stored["metadata"].get("resourceVersion"), None, "{stored}");
    assert_eq!(
        stable(env.get(env.webapps("v1", "default"), "old").await.unwrap())["spec"],
        json!({"replicas": 1, "container": {"image": "httpd", "ports": [{"containerPort": 81, "protocol": "TCP"}]}, "paused": false})
    );
}

/// The HTTP layer runs registry calls on a multi-threaded runtime: every future is `Send`.
#[tokio::test]
async fn registry_futures_are_send() {
    fn send<T: Send>(_: T) {}
    let env = env().await;
    let (registry, target) = (&env.registry, env.configmaps("default"));
    let (options, delete) = (WriteOptions::default(), DeleteOptions::default());
    send(registry.get(target, "x", None));
    send(registry.list(target, &ListOptions::default()));
    send(registry.create(target, json!({}), &options));
    send(registry.update(target, "x", json!({}), None, &options));
    send(registry.patch(target, "x", PatchType::Merge, json!({}), None, &options));
    send(registry.delete(target, "x", &delete));
    send(registry.delete_collection(target, &ListOptions::default(), &delete, None));
    send(Registry::new(
        Arc::new(scheme()),
        env.storage.clone(),
        "/registry",
    ));
}
