//! The registry against the embedded store, with the example API: kube-apiserver's
//! create/get/list/update/patch/delete rules and their exact Statuses.
#![cfg(feature = "server")]

use std::sync::Arc;

use api_types::{apps, core, platform};
use bytes::Bytes;
use kapi_runtime::controllers;
use kapi_runtime::error::ApiError;
use kapi_runtime::meta::{DeleteOptions, Preconditions};
use kapi_runtime::registry::{
    FieldValidation, ListOptions, ObjectList, PatchType, Registry, Subresource, Target,
    WriteOptions,
};
use kapi_runtime::scheme::{KindEntry, Kinds, Scheme};
use kapi_runtime::storage::embedded::EmbeddedStorage;
use kapi_runtime::storage::{self, ListRequest, Storage};
use serde_json::{Value, json};
use tempfile::TempDir;

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
        Ok(written.object)
    }

    async fn get(&self, target: Target<'_>, name: &str) -> Result<Value, ApiError> {
        self.registry.get(target, name, None).await
    }

    async fn update(&self, target: Target<'_>, name: &str, body: Value) -> Result<Value, ApiError> {
        let written = (self.registry)
            .update(target, name, body, None, &WriteOptions::default())
            .await?;
        assert!(!written.created);
        Ok(written.object)
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
        Ok(written.object)
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

fn item_name(object: &kapi_runtime::registry::SharedObject) -> String {
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

#[tokio::test]
async fn create_sets_server_metadata_and_resource_version_from_storage() {
    let env = env().await;
    let created = env
        .create(env.webapps("v1", "default"), webapp("web", "nginx"))
        .await
        .unwrap();
    let metadata = &created["metadata"];
    assert_eq!(metadata["uid"].as_str().unwrap().len(), 36);
    let timestamp = metadata["creationTimestamp"].as_str().unwrap();
    assert!(
        timestamp.len() == 20 && timestamp.ends_with('Z'),
        "{timestamp}"
    );
    assert_eq!(metadata["generation"], 1);
    assert_eq!(rv(&created), env.storage.current_revision().await.unwrap());
    // Cluster-scoped kinds have no namespace, in the object or in the key.
    let tenant = json!({"metadata": {"name": "acme", "namespace": "default"}, "spec": {"displayName": "Acme"}});
    let created = env.create(env.tenants(), tenant).await.unwrap();
    assert_eq!(created["metadata"].get("namespace"), None);
    assert_eq!(created["spec"]["quota"]["maxWebApps"], 10);
    assert!(
        env.raw("/registry/platform.example.dev/tenants/acme")
            .await
            .is_some()
    );
    assert!(
        env.raw("/registry/configmaps/default/nothing")
            .await
            .is_none()
    );
}

#[tokio::test]
async fn create_errors_are_kubes() {
    let env = env().await;
    env.create(env.webapps("v1", "default"), webapp("web", "nginx"))
        .await
        .unwrap();
    let target = env.webapps("v1", "default");
    let cases: Vec<(Value, u16, &str, &str)> = vec![
        (
            json!({"spec": {"container": {"image": "x"}}}),
            422,
            "Invalid",
            "WebApp.apps.example.dev \"\" is invalid: metadata.name: Required value: name or generateName is required",
        ),
        (
            webapp("Web_1", "x"),
            422,
            "Invalid",
            "WebApp.apps.example.dev \"Web_1\" is invalid: metadata.name: Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
        (
            json!({"metadata": {"name": "w", "labels": {"a": "-x"}}, "spec": {"container": {"image": "x"}}}),
            422,
            "Invalid",
            "WebApp.apps.example.dev \"w\" is invalid: metadata.labels: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        (
            json!({"metadata": {"name": "w"}, "spec": {"replicas": -1, "container": {"image": "x"}}}),
            422,
            "Invalid",
            "WebApp.apps.example.dev \"w\" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer",
        ),
        (
            json!({"apiVersion": "apps.example.dev/v1beta1", "metadata": {"name": "w"}}),
            400,
            "BadRequest",
            "the API version in the data (apps.example.dev/v1beta1) does not match the expected API version (apps.example.dev/v1)",
        ),
        (
            json!({"kind": "Tenant", "metadata": {"name": "w"}}),
            400,
            "BadRequest",
            "Tenant in version \"v1\" cannot be handled as a WebApp: no kind \"Tenant\" is registered for version \"apps.example.dev/v1\"",
        ),
        (
            json!({"metadata": {"name": "w"}, "spec": {"replicas": "two", "container": {"image": "x"}}}),
            400,
            "BadRequest",
            "WebApp in version \"v1\" cannot be handled as a WebApp: invalid type: string \"two\", expected i32",
        ),
        (
            json!({"metadata": {"name": "w", "namespace": "other"}, "spec": {"container": {"image": "x"}}}),
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
        ),
        (
            webapp("web", "nginx"),
            409,
            "AlreadyExists",
            "webapps.apps.example.dev \"web\" already exists",
        ),
        (
            json!({"metadata": {"name": "w", "resourceVersion": "3"}, "spec": {"container": {"image": "x"}}}),
            500,
            "InternalError",
            "Internal error occurred: resourceVersion should not be set on objects to be created",
        ),
    ];
    for (body, code, reason, message) in cases {
        check_error(env.create(target, body).await, code, reason, message);
    }
    check_error(
        env.create(env.webapps("v1", "missing"), webapp("w", "x"))
            .await,
        404,
        "NotFound",
        "namespaces \"missing\" not found",
    );
    check_error(
        env.create(env.namespaces(), json!({"metadata": {"name": "my.ns"}}))
            .await,
        422,
        "Invalid",
        "Namespace \"my.ns\" is invalid: metadata.name: Invalid value: \"my.ns\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
    // Nothing of the failures was stored.
    assert_eq!(env.names(target, list_options()).await, ["web"]);
}

#[tokio::test]
async fn unknown_fields_warn_or_fail_per_field_validation() {
    let env = env().await;
    let body = json!({"metadata": {"name": "w"}, "spec": {"container": {"image": "x", "imag": "y"}, "extra": 1}});
    let written = (env.registry)
        .create(
            env.webapps("v1", "default"),
            body.clone(),
            &WriteOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        written.warnings,
        [
            "unknown field \"spec.container.imag\"",
            "unknown field \"spec.extra\""
        ]
    );
    assert_eq!(written.object["spec"].get("extra"), None);
    let strict = WriteOptions {
        field_validation: FieldValidation::Strict,
        ..WriteOptions::default()
    };
    check_error(
        env.registry
            .create(env.webapps("v1", "default"), body, &strict)
            .await,
        400,
        "BadRequest",
        "WebApp in version \"v1\" cannot be handled as a WebApp: strict decoding error: unknown field \"spec.container.imag\", unknown field \"spec.extra\"",
    );
}

#[tokio::test]
async fn generate_name_draws_kubes_suffix_and_dry_run_stores_nothing() {
    let env = env().await;
    let target = env.configmaps("default");
    let body = json!({"metadata": {"generateName": "cfg-"}, "data": {"a": "b"}});
    let first = env.create(target, body.clone()).await.unwrap();
    let second = env.create(target, body.clone()).await.unwrap();
    for object in [&first, &second] {
        let name = name(object);
        assert!(name.starts_with("cfg-") && name.len() == 9, "{name}");
        assert_eq!(object["metadata"]["generateName"], "cfg-");
    }
    assert_ne!(name(&first), name(&second));

    let revision = env.storage.current_revision().await.unwrap();
    let dry = WriteOptions {
        dry_run: true,
        ..WriteOptions::default()
    };
    let written = env
        .registry
        .create(target, configmap("dry", json!({})), &dry)
        .await
        .unwrap();
    assert_eq!(name(&written.object), "dry");
    assert_eq!(written.object["metadata"].get("resourceVersion"), None);
    assert_eq!(env.storage.current_revision().await.unwrap(), revision);
    check_error(
        env.get(target, "dry").await,
        404,
        "NotFound",
        "configmaps \"dry\" not found",
    );
}

#[tokio::test]
async fn updates_check_resource_versions_and_bump_generation_on_spec_changes() {
    let env = env().await;
    let target = env.webapps("v1", "default");
    let created = env.create(target, webapp("web", "nginx:1")).await.unwrap();

    // A label change: no new generation.
    let mut body = created.clone();
    body["metadata"]["labels"] = json!({"tier": "front"});
    let labelled = env.update(target, "web", body).await.unwrap();
    assert_eq!(labelled["metadata"]["generation"], 1);
    assert!(rv(&labelled) > rv(&created));
    assert_eq!(labelled["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(
        labelled["metadata"]["creationTimestamp"],
        created["metadata"]["creationTimestamp"]
    );

    // The stale resourceVersion of `created`: kube's Conflict.
    let mut stale = created.clone();
    stale["spec"]["replicas"] = json!(5);
    check_error(
        env.update(target, "web", stale.clone()).await,
        409,
        "Conflict",
        "Operation cannot be fulfilled on webapps.apps.example.dev \"web\": the object has been modified; please apply your changes to the latest version and try again",
    );

    // Without a resourceVersion: refused for a kind outside the core group, as kube
    // refuses it for custom resources (core kinds update unconditionally).
    stale["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    check_error(
        env.update(target, "web", stale.clone()).await,
        422,
        "Invalid",
        "webapps.apps.example.dev \"web\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
    );
    // With the current one: a spec change bumps the generation.
    let current = env.get(target, "web").await.unwrap()["metadata"]["resourceVersion"].clone();
    stale["metadata"]["resourceVersion"] = current;
    let scaled = env.update(target, "web", stale.clone()).await.unwrap();
    assert_eq!(scaled["metadata"]["generation"], 2);
    assert_eq!(scaled["spec"]["replicas"], 5);
    // ... and took the labels away, as a PUT replaces.
    assert_eq!(scaled["metadata"].get("labels"), None);

    // Nothing changes: nothing is written, the resourceVersion stays.
    let revision = env.storage.current_revision().await.unwrap();
    let same = env.update(target, "web", scaled.clone()).await.unwrap();
    assert_eq!(same, scaled);
    assert_eq!(env.storage.current_revision().await.unwrap(), revision);

    // Through v1beta1: the spec change shows in v1 too.
    let mut beta = env
        .get(env.webapps("v1beta1", "default"), "web")
        .await
        .unwrap();
    beta["spec"]["image"] = json!("nginx:2");
    let updated = env
        .update(env.webapps("v1beta1", "default"), "web", beta)
        .await
        .unwrap();
    assert_eq!(updated["metadata"]["generation"], 3);
    assert_eq!(
        env.get(target, "web").await.unwrap()["spec"]["container"]["image"],
        "nginx:2"
    );
}

#[tokio::test]
async fn update_errors_are_kubes() {
    let env = env().await;
    let target = env.webapps("v1", "default");
    let created = env.create(target, webapp("web", "nginx")).await.unwrap();
    let mut other_uid = created.clone();
    other_uid["metadata"]["uid"] = json!("00000000-0000-0000-0000-000000000000");
    other_uid["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let cases: Vec<(&str, Value, u16, &str, String)> = vec![
        ("web", webapp("other", "x"), 400, "BadRequest",
            "the name of the object (other) does not match the name on the URL (web)".into()),
        ("web", json!({"spec": {"container": {"image": "x"}}}), 400, "BadRequest",
            "the name of the object (web based on URL) was undeterminable: name must be provided".into()),
        ("web", json!({"metadata": {"name": "web", "namespace": "kube-system"}, "spec": {"container": {"image": "x"}}}), 400, "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request".into()),
        ("missing", webapp("missing", "x"), 404, "NotFound",
            "webapps.apps.example.dev \"missing\" not found".into()),
        ("web", other_uid, 409, "Conflict", format!(
            "Operation cannot be fulfilled on webapps.apps.example.dev \"web\": StorageError: invalid object, Code: 4, Key: /registry/apps.example.dev/webapps/default/web, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: {}",
            created["metadata"]["uid"].as_str().unwrap())),
        ("web", json!({"metadata": {"name": "web", "resourceVersion": "x"}, "spec": {"container": {"image": "x"}}}), 400, "BadRequest",
            "invalid resource version: resourceVersion: Invalid value: \"x\": strconv.ParseUint: parsing \"x\": invalid syntax".into()),
        ("web", json!({"metadata": {"name": "web"}, "spec": {"replicas": -3, "container": {"image": "x"}}}), 422, "Invalid",
            "webapps.apps.example.dev \"web\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update".into()),
    ];
    for (name, body, code, reason, message) in cases {
        check_error(env.update(target, name, body).await, code, reason, &message);
    }
    // ConfigMap's own rule: `immutable` data stays.
    let target = env.configmaps("default");
    let mut frozen = env
        .create(target, configmap("frozen", json!({})))
        .await
        .unwrap();
    frozen["immutable"] = json!(true);
    let frozen = env.update(target, "frozen", frozen).await.unwrap();
    let mut changed = frozen.clone();
    changed["data"] = json!({"k": "other"});
    check_error(
        env.update(target, "frozen", changed).await,
        422,
        "Invalid",
        "ConfigMap \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set",
    );
}

#[tokio::test]
async fn status_is_only_written_through_its_subresource() {
    let env = env().await;
    let target = env.webapps("v1", "default");
    let mut body = webapp("web", "nginx");
    body["status"] = json!({"replicas": 9});
    let created = env.create(target, body).await.unwrap();
    assert_eq!(created.get("status"), None, "create drops the status");

    // `/status` takes the status and nothing else, without a new generation.
    let mut body = created.clone();
    body["status"] = json!({"replicas": 2, "readyReplicas": 1});
    body["spec"]["replicas"] = json!(7);
    body["metadata"]["labels"] = json!({"ignored": "yes"});
    let written = (env.registry)
        .update(
            target,
            "web",
            body,
            Some(Subresource::Status),
            &WriteOptions::default(),
        )
        .await
        .unwrap();
    let object = written.object;
    assert_eq!(object["status"], json!({"replicas": 2, "readyReplicas": 1}));
    assert_eq!(object["spec"]["replicas"], 2);
    assert_eq!(object["metadata"].get("labels"), None);
    assert_eq!(object["metadata"]["generation"], 1);
    // `GET .../status` is the whole object.
    assert_eq!(
        env.registry
            .get(target, "web", Some(Subresource::Status))
            .await
            .unwrap(),
        object
    );

    // The main resource keeps the status whatever the body says.
    let mut body = object.clone();
    body["status"] = json!({"replicas": 100});
    body["spec"]["paused"] = json!(true);
    let updated = env.update(target, "web", body).await.unwrap();
    assert_eq!(
        updated["status"],
        json!({"replicas": 2, "readyReplicas": 1})
    );
    assert_eq!(updated["spec"]["paused"], true);
    assert_eq!(updated["metadata"]["generation"], 2);

    // A status patch.
    let written = (env.registry)
        .patch(
            target,
            "web",
            PatchType::Merge,
            json!({"status": {"readyReplicas": 2}}),
            Some(Subresource::Status),
            &WriteOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        written.object["status"],
        json!({"replicas": 2, "readyReplicas": 2})
    );
    assert_eq!(written.object["metadata"]["generation"], 2);

    // ConfigMaps have no status subresource.
    check_error(
        env.registry
            .get(env.configmaps("default"), "x", Some(Subresource::Status))
            .await,
        404,
        "NotFound",
        "the server could not find the requested resource",
    );
}

#[tokio::test]
async fn scale_reads_and_writes_the_replica_paths() {
    let env = env().await;
    let target = env.webapps("v1", "default");
    let created = env.create(target, webapp("web", "nginx")).await.unwrap();
    let scale = env
        .registry
        .get(target, "web", Some(Subresource::Scale))
        .await
        .unwrap();
    assert_eq!(
        scale,
        json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": "web", "namespace": "default", "uid": created["metadata"]["uid"],
                "resourceVersion": created["metadata"]["resourceVersion"],
                "creationTimestamp": created["metadata"]["creationTimestamp"]},
            "spec": {"replicas": 2}, "status": {"replicas": 0}})
    );

    let mut body = scale.clone();
    body["spec"]["replicas"] = json!(4);
    let written = (env.registry)
        .update(
            target,
            "web",
            body.clone(),
            Some(Subresource::Scale),
            &WriteOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(written.object["spec"], json!({"replicas": 4}));
    assert_eq!(written.object["kind"], "Scale");
    let object = env.get(target, "web").await.unwrap();
    assert_eq!(object["spec"]["replicas"], 4);
    assert_eq!(object["metadata"]["generation"], 2);
    assert_eq!(
        object["metadata"]["resourceVersion"],
        written.object["metadata"]["resourceVersion"]
    );

    // The old Scale's resourceVersion is stale now.
    check_error(
        env.registry
            .update(
                target,
                "web",
                body,
                Some(Subresource::Scale),
                &WriteOptions::default(),
            )
            .await,
        409,
        "Conflict",
        "Operation cannot be fulfilled on webapps.apps.example.dev \"web\": the object has been modified; please apply your changes to the latest version and try again",
    );
    let written = (env.registry)
        .patch(
            target,
            "web",
            PatchType::Merge,
            json!({"spec": {"replicas": 0}}),
            Some(Subresource::Scale),
            &WriteOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(written.object["spec"], json!({}));
    check_error(
        env.registry
            .patch(
                target,
                "web",
                PatchType::Merge,
                json!({"spec": {"replicas": -1}}),
                Some(Subresource::Scale),
                &WriteOptions::default(),
            )
            .await,
        422,
        "Invalid",
        "WebApp.apps.example.dev \"web\" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer",
    );
    check_error(
        env.registry
            .update(
                target,
                "web",
                json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp"}),
                Some(Subresource::Scale),
                &WriteOptions::default(),
            )
            .await,
        400,
        "BadRequest",
        "the API version in the data (apps.example.dev/v1) does not match the expected API version (autoscaling/v1)",
    );
}

#[tokio::test]
async fn patches_apply_as_kubes() {
    let env = env().await;
    let target = env.webapps("v1", "default");
    env.create(target, webapp("web", "nginx")).await.unwrap();

    let merged = env
        .patch(
            target,
            "web",
            PatchType::Merge,
            json!({"metadata": {"labels": {"a": "b"}}, "spec": {"paused": true}}),
        )
        .await
        .unwrap();
    assert_eq!(merged["metadata"]["labels"], json!({"a": "b"}));
    assert_eq!(merged["spec"]["paused"], true);
    assert_eq!(merged["metadata"]["generation"], 2);

    let patched = env
        .patch(
            target,
            "web",
            PatchType::Json,
            json!([
            {"op": "test", "path": "/spec/replicas", "value": 2},
            {"op": "replace", "path": "/spec/replicas", "value": 3},
            {"op": "remove", "path": "/metadata/labels"}]),
        )
        .await
        .unwrap();
    assert_eq!(patched["spec"]["replicas"], 3);
    assert_eq!(patched["metadata"].get("labels"), None);

    // Through v1beta1: the patch applies to the v1beta1 view.
    let beta = env
        .patch(
            env.webapps("v1beta1", "default"),
            "web",
            PatchType::Merge,
            json!({"spec": {"image": "httpd"}}),
        )
        .await
        .unwrap();
    assert_eq!(beta["spec"]["image"], "httpd");

    let stale = rv(&merged).to_string();
    let cases: Vec<(&str, PatchType, Value, u16, &str, &str)> = vec![
        (
            "web",
            PatchType::Json,
            json!([{"op": "test", "path": "/spec/replicas", "value": 9}]),
            422,
            "Invalid",
            "",
        ),
        (
            "web",
            PatchType::Json,
            json!({"op": "add"}),
            400,
            "BadRequest",
            "",
        ),
        (
            "web",
            PatchType::Merge,
            json!([1]),
            400,
            "BadRequest",
            "Invalid JSON Patch",
        ),
        (
            "web",
            PatchType::Merge,
            json!({"metadata": {"resourceVersion": stale}}),
            409,
            "Conflict",
            "Operation cannot be fulfilled on webapps.apps.example.dev \"web\": the object has been modified; please apply your changes to the latest version and try again",
        ),
        (
            "web",
            PatchType::Merge,
            json!({"metadata": {"name": "other"}}),
            400,
            "BadRequest",
            "the name of the object (other) does not match the name on the URL (web)",
        ),
        (
            "web",
            PatchType::Merge,
            json!({"spec": {"replicas": "many"}}),
            422,
            "Invalid",
            "WebApp.apps.example.dev \"web\" is invalid: patch: Invalid value: invalid type: string \"many\", expected i32",
        ),
        (
            "missing",
            PatchType::Merge,
            json!({}),
            404,
            "NotFound",
            "webapps.apps.example.dev \"missing\" not found",
        ),
        (
            "web",
            PatchType::StrategicMerge,
            json!({"spec": {"$patch": "merge"}}),
            400,
            "BadRequest",
            "unknown patch type: merge in map: map[$patch:merge]",
        ),
        // An apply configuration of another type (kube's `versionCheckManager`).
        (
            "web",
            PatchType::Apply,
            json!({}),
            400,
            "BadRequest",
            "invalid object type: /, Kind=",
        ),
    ];
    for (name, patch_type, patch, code, reason, message) in cases {
        let result = env.patch(target, name, patch_type, patch).await;
        if message.is_empty() {
            let error = result.unwrap_err();
            assert_eq!((error.code(), error.reason()), (code, reason), "{error:?}");
        } else {
            check_error(result, code, reason, message);
        }
    }

    // Strategic merge patches on core kinds, as kubectl sends them.
    let cm = env.configmaps("default");
    env.create(
        cm,
        json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}),
    )
    .await
    .unwrap();
    let patched = env
        .patch(
            cm,
            "c",
            PatchType::StrategicMerge,
            json!({"data": {"a": null, "c": "3"}, "metadata": {"labels": {"x": "y"}}}),
        )
        .await
        .unwrap();
    assert_eq!(patched["data"], json!({"b": "2", "c": "3"}));
    assert_eq!(patched["metadata"]["labels"], json!({"x": "y"}));
    let replaced = env
        .patch(
            cm,
            "c",
            PatchType::StrategicMerge,
            json!({"data": {"$patch": "replace", "z": "0"}}),
        )
        .await
        .unwrap();
    assert_eq!(replaced["data"], json!({"z": "0"}));
    check_error(
        env.patch(
            cm,
            "c",
            PatchType::StrategicMerge,
            json!({"$setElementOrder/data": "a"}),
        )
        .await,
        400,
        "BadRequest",
        "invalid patch format of setElementOrder list",
    );
}

#[tokio::test]
async fn concurrent_unconditional_patches_all_land() {
    let env = Arc::new(env().await);
    let target = env.configmaps("default");
    env.create(target, configmap("shared", json!({})))
        .await
        .unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let env = env.clone();
            tokio::spawn(async move {
                let target = env.configmaps("default");
                env.patch(
                    target,
                    "shared",
                    PatchType::Merge,
                    json!({"data": {format!("k{i}"): "v"}}),
                )
                .await
                .unwrap();
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let object = env.get(target, "shared").await.unwrap();
    assert_eq!(object["data"].as_object().unwrap().len(), 17, "{object}");
}

#[tokio::test]
async fn deletes_check_preconditions_and_return_the_object() {
    let env = env().await;
    let target = env.webapps("v1", "default");
    let created = env.create(target, webapp("web", "nginx")).await.unwrap();
    let uid = created["metadata"]["uid"].as_str().unwrap().to_owned();
    let with = |preconditions| DeleteOptions {
        preconditions: Some(preconditions),
        ..DeleteOptions::default()
    };
    check_error(
        env.registry
            .delete(
                target,
                "web",
                &with(Preconditions {
                    uid: Some("other".into()),
                    resource_version: None,
                }),
            )
            .await,
        409,
        "Conflict",
        // kube's `rest.BeforeDelete` wording, which names the kind.
        &format!(
            "Operation cannot be fulfilled on WebApp.apps.example.dev \"web\": the UID in the precondition (other) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
        ),
    );
    check_error(
        env.registry
            .delete(
                target,
                "web",
                &with(Preconditions {
                    uid: None,
                    resource_version: Some("1".into()),
                }),
            )
            .await,
        409,
        "Conflict",
        &format!(
            "Operation cannot be fulfilled on WebApp.apps.example.dev \"web\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({}). The object might have been modified",
            rv(&created)
        ),
    );
    let dry = DeleteOptions {
        dry_run: Some(vec!["All".into()]),
        ..DeleteOptions::default()
    };
    assert_eq!(
        env.registry.delete(target, "web", &dry).await.unwrap(),
        created
    );
    assert!(env.get(target, "web").await.is_ok());

    let deleted = (env.registry)
        .delete(
            target,
            "web",
            &with(Preconditions {
                uid: Some(uid),
                resource_version: Some(rv(&created).to_string()),
            }),
        )
        .await
        .unwrap();
    assert_eq!(stable(deleted.clone()), stable(created));
    assert_eq!(rv(&deleted), env.storage.current_revision().await.unwrap());
    check_error(
        env.get(target, "web").await,
        404,
        "NotFound",
        "webapps.apps.example.dev \"web\" not found",
    );
    check_error(
        env.delete(target, "web").await,
        404,
        "NotFound",
        "webapps.apps.example.dev \"web\" not found",
    );
    check_error(
        env.get(target, "a/b").await,
        400,
        "BadRequest",
        "Name parameter invalid: \"a/b\": may not contain '/'",
    );
}

/// kube's generic store answers a delete of a built-in kind (ConfigMap) with a `Success`
/// Status naming the object (what code written against kube reads), a dry run too; custom
/// kinds answer with the object (above), and a delete collection with the objects, for
/// every kind.
#[tokio::test]
async fn a_deleted_configmap_answers_with_a_success_status() {
    let env = env().await;
    let target = env.configmaps("default");
    let created = env.create(target, configmap("c", json!({}))).await.unwrap();
    let success = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "c", "kind": "configmaps", "uid": created["metadata"]["uid"]},
    });
    let dry = DeleteOptions {
        dry_run: Some(vec!["All".into()]),
        ..DeleteOptions::default()
    };
    assert_eq!(
        env.registry.delete(target, "c", &dry).await.unwrap(),
        success
    );
    assert!(env.get(target, "c").await.is_ok());
    assert_eq!(env.delete(target, "c").await.unwrap(), success);
    check_error(
        env.get(target, "c").await,
        404,
        "NotFound",
        "configmaps \"c\" not found",
    );

    env.create(target, configmap("d", json!({}))).await.unwrap();
    let deleted = (env.registry)
        .delete_collection(target, &list_options(), &DeleteOptions::default(), None)
        .await
        .unwrap();
    assert_eq!(deleted.items.len(), 1);
    assert_eq!(deleted.items[0].value()["kind"], "ConfigMap");
    assert_eq!(deleted.items[0].value()["data"], json!({"k": "d"}));
}

#[tokio::test]
async fn namespaces_start_with_default_and_take_their_content_with_them() {
    let env = env().await;
    let default = env.get(env.namespaces(), "default").await.unwrap();
    assert_eq!(default["status"], json!({"phase": "Active"}));
    assert_eq!(default["spec"], json!({"finalizers": ["kubernetes"]}));
    check_error(
        env.delete(env.namespaces(), "default").await,
        403,
        "Forbidden",
        "namespaces \"default\" is forbidden: this namespace may not be deleted",
    );

    env.create(env.namespaces(), json!({"metadata": {"name": "team"}}))
        .await
        .unwrap();
    env.create(env.webapps("v1", "team"), webapp("web", "nginx"))
        .await
        .unwrap();
    env.create(env.configmaps("team"), configmap("c", json!({})))
        .await
        .unwrap();
    let mut held = configmap("held", json!({}));
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    env.create(env.configmaps("team"), held).await.unwrap();
    env.create(env.configmaps("default"), configmap("kept", json!({})))
        .await
        .unwrap();

    // A delete marks it terminating; nothing can be created in it from then on.
    let deleted = env.delete(env.namespaces(), "team").await.unwrap();
    assert_eq!(deleted["status"]["phase"], "Terminating");
    assert!(deleted["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(env.get(env.namespaces(), "team").await.unwrap(), deleted);
    check_error(
        env.create(env.configmaps("team"), configmap("late", json!({})))
            .await,
        403,
        "Forbidden",
        "configmaps \"late\" is forbidden: unable to create new content in namespace team because it is being terminated",
    );

    // The namespace controller deletes the content; the finalizer holds one object, and
    // with it the namespace, whose conditions say so.
    assert!(
        !controllers::namespace::sync(&env.registry, "team")
            .await
            .unwrap()
    );
    assert_eq!(
        env.names(env.configmaps("team"), list_options()).await,
        ["held"]
    );
    assert!(
        env.names(env.webapps("v1", "team"), list_options())
            .await
            .is_empty()
    );
    let waiting = env.get(env.namespaces(), "team").await.unwrap();
    let condition = |kind: &str| {
        (waiting["status"]["conditions"].as_array().unwrap().iter())
            .find(|c| c["type"] == kind)
            .cloned()
            .unwrap()
    };
    assert_eq!(condition("NamespaceContentRemaining")["status"], "True");
    assert_eq!(
        condition("NamespaceContentRemaining")["message"],
        "Some resources are remaining: configmaps. has 1 resource instances"
    );
    assert_eq!(
        condition("NamespaceFinalizersRemaining")["message"],
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );
    assert_eq!(
        condition("NamespaceDeletionContentFailure")["status"],
        "False"
    );

    // Its finalizer gone, the object goes; the next pass lets the namespace go.
    env.patch(
        env.configmaps("team"),
        "held",
        PatchType::Merge,
        json!({"metadata": {"finalizers": null}}),
    )
    .await
    .unwrap();
    assert!(
        controllers::namespace::sync(&env.registry, "team")
            .await
            .unwrap()
    );
    check_error(
        env.get(env.namespaces(), "team").await,
        404,
        "NotFound",
        "namespaces \"team\" not found",
    );

    // Re-created, it is empty and active.
    let again = env
        .create(env.namespaces(), json!({"metadata": {"name": "team"}}))
        .await
        .unwrap();
    assert_eq!(again["status"], json!({"phase": "Active"}));
    assert!(
        env.names(env.configmaps("team"), list_options())
            .await
            .is_empty()
    );
    assert_eq!(
        env.names(env.configmaps("default"), list_options()).await,
        ["kept"]
    );

    // Creating an existing namespace, or starting again, leaves its content alone.
    check_error(
        env.create(env.namespaces(), json!({"metadata": {"name": "default"}}))
            .await,
        409,
        "AlreadyExists",
        "namespaces \"default\" already exists",
    );
    Registry::new(Arc::new(scheme()), env.storage.clone(), "/registry")
        .await
        .unwrap();
    assert_eq!(
        env.names(env.configmaps("default"), list_options()).await,
        ["kept"]
    );

    // Content left under a missing namespace (a create that raced a deletion) does not
    // reappear in a namespace created later.
    let orphan = serde_json::to_vec(&configmap("orphan", json!({}))).unwrap();
    (env.storage)
        .create("/registry/configmaps/ghost/orphan", Bytes::from(orphan))
        .await
        .unwrap();
    env.create(env.namespaces(), json!({"metadata": {"name": "ghost"}}))
        .await
        .unwrap();
    assert!(
        env.names(env.configmaps("ghost"), list_options())
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn a_namespace_left_terminating_is_finished_by_a_new_registrys_controller() {
    let env = env().await;
    env.create(env.namespaces(), json!({"metadata": {"name": "gone"}}))
        .await
        .unwrap();
    env.create(env.configmaps("gone"), configmap("c", json!({})))
        .await
        .unwrap();
    env.delete(env.namespaces(), "gone").await.unwrap();
    check_error(
        env.create(env.configmaps("gone"), configmap("new", json!({})))
            .await,
        403,
        "Forbidden",
        "configmaps \"new\" is forbidden: unable to create new content in namespace gone because it is being terminated",
    );

    // A restart: the controller of the new registry finds the work in storage.
    let registry = Registry::new(Arc::new(scheme()), env.storage.clone(), "/registry")
        .await
        .unwrap();
    assert!(
        controllers::namespace::sync(&registry, "gone")
            .await
            .unwrap()
    );
    let namespaces = Target {
        kind: &registry.scheme().by_resource("", "namespaces").unwrap(),
        version: "v1",
        namespace: None,
    };
    assert!(registry.get(namespaces, "gone", None).await.is_err());
    assert!(env.raw("/registry/configmaps/gone/c").await.is_none());
}

#[tokio::test]
async fn lists_page_through_one_snapshot_under_concurrent_writes() {
    let env = env().await;
    let target = env.configmaps("default");
    for name in ["a", "b", "c", "d", "e"] {
        env.create(target, configmap(name, json!({})))
            .await
            .unwrap();
    }
    env.create(env.namespaces(), json!({"metadata": {"name": "other"}}))
        .await
        .unwrap();
    env.create(env.configmaps("other"), configmap("z", json!({})))
        .await
        .unwrap();

    let first = env
        .list(
            target,
            ListOptions {
                limit: 2,
                ..list_options()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        first.items.iter().map(item_name).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(first.remaining_item_count, Some(3));
    let snapshot = first.resource_version.clone();

    // Writes between pages do not show in the later pages.
    env.delete(target, "c").await.unwrap();
    env.create(target, configmap("bb", json!({})))
        .await
        .unwrap();
    let mut d = env.get(target, "d").await.unwrap();
    d["data"] = json!({"changed": "yes"});
    env.update(target, "d", d).await.unwrap();

    let second = env
        .list(
            target,
            ListOptions {
                limit: 2,
                continue_token: first.continue_token.clone(),
                ..list_options()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        second.items.iter().map(item_name).collect::<Vec<_>>(),
        ["c", "d"]
    );
    assert_eq!(second.items[1].value()["data"], json!({"k": "d"}));
    assert_eq!(second.resource_version, snapshot);
    let third = env
        .list(
            target,
            ListOptions {
                limit: 2,
                continue_token: second.continue_token.clone(),
                ..list_options()
            },
        )
        .await
        .unwrap();
    assert_eq!(third.items.iter().map(item_name).collect::<Vec<_>>(), ["e"]);
    assert_eq!(third.continue_token, None);

    // A fresh list sees the writes; all namespaces list every namespace.
    assert_eq!(
        env.names(target, list_options()).await,
        ["a", "b", "bb", "d", "e"]
    );
    let all = Target {
        namespace: None,
        ..target
    };
    assert_eq!(
        env.names(all, list_options()).await,
        ["a", "b", "bb", "d", "e", "z"]
    );

    // An exact resourceVersion reads the past.
    let past = ListOptions {
        resource_version: Some(snapshot.clone()),
        resource_version_match: Some("Exact".into()),
        ..list_options()
    };
    assert_eq!(
        env.names(target, past.clone()).await,
        ["a", "b", "c", "d", "e"]
    );

    // Once compacted, the token and the revision are gone.
    let current = env.storage.current_revision().await.unwrap();
    env.storage.compact(current).await.unwrap();
    check_error(
        env.list(
            target,
            ListOptions {
                limit: 2,
                continue_token: first.continue_token.clone(),
                ..list_options()
            },
        )
        .await,
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    );
    // The Status carries kube's token to go on at the latest revision.
    let expired = env
        .list(
            target,
            ListOptions {
                limit: 2,
                continue_token: first.continue_token.clone(),
                ..list_options()
            },
        )
        .await
        .unwrap_err()
        .to_status();
    let fresh = expired.metadata.continue_.expect("a fresh continue token");
    assert_eq!(
        env.names(
            target,
            ListOptions {
                continue_token: Some(fresh),
                ..list_options()
            }
        )
        .await,
        ["bb", "d", "e"],
        "the rest after the token's key, as it is now"
    );
    check_error(
        env.list(target, past).await,
        410,
        "Expired",
        "The resourceVersion for the provided list is too old.",
    );
    check_error(
        env.list(
            target,
            ListOptions {
                continue_token: Some("x".into()),
                resource_version: Some("5".into()),
                ..list_options()
            },
        )
        .await,
        400,
        "BadRequest",
        "specifying resource version is not allowed when using continue",
    );
    check_error(
        env.list(
            target,
            ListOptions {
                resource_version_match: Some("Exact".into()),
                ..list_options()
            },
        )
        .await,
        422,
        "Invalid",
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
    );
}

#[tokio::test]
async fn selectors_filter_lists_and_delete_collections() {
    let env = env().await;
    let target = env.configmaps("default");
    for (name, labels) in [
        ("a", json!({"app": "web", "tier": "front"})),
        ("b", json!({"app": "web", "tier": "back"})),
        ("c", json!({"app": "db"})),
        ("d", json!({})),
    ] {
        env.create(target, configmap(name, labels)).await.unwrap();
    }
    let labels = |selector: &str| ListOptions {
        label_selector: Some(selector.into()),
        ..list_options()
    };
    let fields = |selector: &str| ListOptions {
        field_selector: Some(selector.into()),
        ..list_options()
    };
    let cases: Vec<(ListOptions, Vec<&str>)> = vec![
        (labels("app=web"), vec!["a", "b"]),
        (labels("app!=web"), vec!["c", "d"]),
        (labels("app in (web,db),tier notin (back)"), vec!["a", "c"]),
        (labels("!app"), vec!["d"]),
        (labels("tier"), vec!["a", "b"]),
        (fields("metadata.name=c"), vec!["c"]),
        (
            fields("metadata.name!=c,metadata.namespace=default"),
            vec!["a", "b", "d"],
        ),
        (
            ListOptions {
                label_selector: Some("app".into()),
                limit: 1,
                ..list_options()
            },
            vec!["a"],
        ),
    ];
    for (options, expected) in cases {
        assert_eq!(
            env.names(target, options.clone()).await,
            expected,
            "{options:?}"
        );
    }
    // Pages with selectors are filled from further down the collection.
    let page = env
        .list(
            target,
            ListOptions {
                label_selector: Some("!tier".into()),
                limit: 1,
                ..list_options()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.items.iter().map(item_name).collect::<Vec<_>>(), ["c"]);
    assert_eq!(page.remaining_item_count, None);
    let page = env
        .list(
            target,
            ListOptions {
                label_selector: Some("!tier".into()),
                limit: 1,
                continue_token: page.continue_token,
                ..list_options()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.items.iter().map(item_name).collect::<Vec<_>>(), ["d"]);

    check_error(
        env.list(target, labels("app web")).await,
        400,
        "BadRequest",
        "unable to parse requirement: found 'web', expected: in, notin, =, ==, !=, gt, lt",
    );
    check_error(
        env.list(target, fields("spec.foo=1")).await,
        400,
        "BadRequest",
        "field label not supported: spec.foo",
    );
    check_error(
        env.list(target, fields("metadata.name")).await,
        400,
        "BadRequest",
        "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
    );

    // WebApps select on their selectable field, read on the hub.
    let webapps = env.webapps("v1beta1", "default");
    env.create(env.webapps("v1", "default"), webapp("w1", "nginx"))
        .await
        .unwrap();
    env.create(env.webapps("v1", "default"), webapp("w2", "httpd"))
        .await
        .unwrap();
    assert_eq!(
        env.names(webapps, fields("spec.container.image=httpd"))
            .await,
        ["w2"]
    );

    let deleted = (env.registry)
        .delete_collection(target, &labels("app=web"), &DeleteOptions::default(), None)
        .await
        .unwrap();
    assert_eq!(
        deleted.items.iter().map(item_name).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(env.names(target, list_options()).await, ["c", "d"]);
}

#[tokio::test]
async fn tables_show_printer_columns_computed_on_the_hub() {
    let env = env().await;
    let target = env.webapps("v1beta1", "default");
    let mut body = webapp("web", "nginx:1");
    body["metadata"]["labels"] = json!({"a": "b"});
    env.create(env.webapps("v1", "default"), body)
        .await
        .unwrap();
    let list = env
        .list(
            target,
            ListOptions {
                limit: 10,
                ..list_options()
            },
        )
        .await
        .unwrap();
    let table = env
        .registry
        .table(
            target,
            &list.items.iter().map(|o| o.value()).collect::<Vec<_>>(),
            Some(&list),
            "",
        )
        .unwrap();
    let table = serde_json::to_value(table).unwrap();
    let columns: Vec<_> = (table["columnDefinitions"].as_array().unwrap().iter())
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["type"].as_str().unwrap(),
                c["priority"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        columns,
        [
            ("Name", "string", 0),
            ("Image", "string", 0),
            ("Replicas", "integer", 0),
            ("Ready", "integer", 0),
            ("Paused", "boolean", 1),
            ("Age", "date", 0)
        ]
    );
    assert_eq!(table["columnDefinitions"][0]["format"], "name");
    assert_eq!(
        table["columnDefinitions"][1]["description"],
        "Custom resource definition column (in JSONPath format): .spec.container.image"
    );
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        table["metadata"]["resourceVersion"],
        list.resource_version.as_str()
    );
    let cells = table["rows"][0]["cells"].as_array().unwrap();
    assert_eq!(
        cells[..5],
        [
            json!("web"),
            json!("nginx:1"),
            json!(2),
            Value::Null,
            json!(false)
        ]
    );
    let age = cells[5].as_str().unwrap();
    assert!(
        age.ends_with('s') && age[..age.len() - 1].parse::<u32>().is_ok(),
        "{age}"
    );
    assert_eq!(
        table["rows"][0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": list.items[0].value()["metadata"]})
    );

    let single = env.get(target, "web").await.unwrap();
    let table = env
        .registry
        .table(target, std::slice::from_ref(&single), None, "Object")
        .unwrap();
    assert_eq!(table.rows[0].object.as_ref(), Some(&single));
    assert_eq!(
        table.metadata.resource_version,
        Some(rv(&single).to_string())
    );
    let table = env
        .registry
        .table(target, std::slice::from_ref(&single), None, "None")
        .unwrap();
    assert_eq!(table.rows[0].object, None);
    check_error(
        env.registry.table(target, &[single], None, "Everything"),
        422,
        "Invalid",
        "TableOptions.meta.k8s.io \"\" is invalid: includeObject: Invalid value: \"Everything\": must be 'Metadata', 'Object', 'None', or empty",
    );

    // ConfigMap's Data column counts the entries.
    let cm = env.configmaps("default");
    let created = env
        .create(
            cm,
            json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2", "c": "3"}}),
        )
        .await
        .unwrap();
    let table = env.registry.table(cm, &[created], None, "").unwrap();
    assert_eq!(table.rows[0].cells[..2], [json!("c"), json!(3)]);
    assert_eq!(
        table.column_definitions[1].description,
        "Number of data entries"
    );
}

/// A store that is down.
struct Down;

#[async_trait::async_trait]
impl Storage for Down {
    async fn get(
        &self,
        _: &str,
        _: storage::Revision,
    ) -> storage::Result<Option<storage::KeyValue>> {
        Err(storage::Error::Unavailable("connection refused".into()))
    }
    async fn list(&self, _: ListRequest) -> storage::Result<storage::ListResponse> {
        Err(storage::Error::Timeout("deadline exceeded".into()))
    }
    async fn count(&self, _: &str) -> storage::Result<u64> {
        Err(storage::Error::Unavailable("connection refused".into()))
    }
    async fn create(&self, _: &str, _: Bytes) -> storage::Result<storage::KeyValue> {
        Err(storage::Error::TooLarge { size: 2, limit: 1 })
    }
    async fn create_guarded(
        &self,
        _: &str,
        _: Bytes,
        _: &storage::Guard,
    ) -> storage::Result<storage::KeyValue> {
        Err(storage::Error::TooLarge { size: 2, limit: 1 })
    }
    async fn update(
        &self,
        _: &str,
        _: Bytes,
        _: storage::Revision,
    ) -> storage::Result<storage::KeyValue> {
        Err(storage::Error::Internal("disk on fire".into()))
    }
    async fn delete(
        &self,
        _: &str,
        _: Option<storage::Revision>,
    ) -> storage::Result<storage::Deleted> {
        Err(storage::Error::Unavailable("connection refused".into()))
    }
    async fn watch(&self, _: &str, _: storage::Revision) -> storage::Result<storage::WatchStream> {
        Err(storage::Error::Unavailable("connection refused".into()))
    }
    async fn compact(&self, _: storage::Revision) -> storage::Result<()> {
        Ok(())
    }
    async fn current_revision(&self) -> storage::Result<storage::Revision> {
        Err(storage::Error::Unavailable("connection refused".into()))
    }
    async fn health(&self) -> storage::Result<()> {
        Err(storage::Error::Unavailable("connection refused".into()))
    }
    async fn size(&self) -> storage::Result<u64> {
        Err(storage::Error::Unavailable("connection refused".into()))
    }
}

#[tokio::test]
async fn storage_failures_become_statuses() {
    let down: Arc<dyn Storage> = Arc::new(Down);
    check_error(
        Registry::new(Arc::new(scheme()), down.clone(), "/registry").await,
        503,
        "ServiceUnavailable",
        "storage unavailable: connection refused",
    );
    // Without namespaces, nothing is read at start.
    let scheme = Scheme::new().add(
        KindEntry::new::<platform::Tenant>().version::<platform::Tenant, platform::Tenant>("v1"),
    );
    let registry = Registry::new(Arc::new(scheme), down, "/registry")
        .await
        .unwrap();
    let target = Target {
        kind: &registry
            .scheme()
            .by_resource("platform.example.dev", "tenants")
            .unwrap(),
        version: "v1",
        namespace: None,
    };
    check_error(
        registry.get(target, "t", None).await,
        503,
        "ServiceUnavailable",
        "storage unavailable: connection refused",
    );
    check_error(
        registry
            .create(
                target,
                json!({"metadata": {"name": "t"}, "spec": {}}),
                &WriteOptions::default(),
            )
            .await,
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 1",
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_read_under_a_concurrent_writer_form_one_snapshot() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let env = Arc::new(env().await);
    let target = env.configmaps("default");
    for i in 0..20 {
        env.create(target, configmap(&format!("c{i:02}"), json!({})))
            .await
            .unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (env, stop) = (env.clone(), stop.clone());
        tokio::spawn(async move {
            let target = env.configmaps("default");
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                // Deletes an early object, adds a late one, changes one in the middle.
                let _ = env.delete(target, &format!("c{:02}", i % 20)).await;
                env.create(target, configmap(&format!("w{i:04}"), json!({})))
                    .await
                    .unwrap();
                let _ = env
                    .patch(
                        target,
                        "c10",
                        PatchType::Merge,
                        json!({"data": {"i": i.to_string()}}),
                    )
                    .await;
                i += 1;
            }
            i
        })
    };
    let mut seen = Vec::new();
    let mut options = ListOptions {
        limit: 3,
        ..list_options()
    };
    let mut revision = None;
    loop {
        let page = env.list(target, options.clone()).await.unwrap();
        assert_eq!(
            revision.get_or_insert(page.resource_version.clone()),
            &page.resource_version
        );
        seen.extend(page.items);
        match page.continue_token {
            Some(token) => options.continue_token = Some(token),
            None => break,
        }
    }
    stop.store(true, Ordering::Relaxed);
    writer.await.unwrap();
    let snapshot = ListOptions {
        resource_version: revision,
        resource_version_match: Some("Exact".into()),
        ..list_options()
    };
    let expected = env.list(target, snapshot).await.unwrap().items;
    assert_eq!(seen, expected);
}

/// What [`CutOff`] does with the next guarded create.
#[derive(Clone, Copy)]
enum Cut {
    /// Written, then answered with a timeout (cut off after etcd accepted it).
    Applied,
    /// Not written, answered with a timeout (cut off before).
    Lost,
    /// Answered with a timeout, and written just before the next create (a proposal that
    /// lands after the create read its key).
    Late,
}

/// The embedded store, whose guarded creates time out as `cuts` says, one per create.
struct CutOff {
    inner: EmbeddedStorage,
    cuts: std::sync::Mutex<Vec<Cut>>,
    /// A [`Cut::Late`] create, written before the next one.
    late: std::sync::Mutex<Option<(String, Bytes, storage::Guard)>>,
}

#[async_trait::async_trait]
impl Storage for CutOff {
    async fn get(
        &self,
        key: &str,
        at: storage::Revision,
    ) -> storage::Result<Option<storage::KeyValue>> {
        self.inner.get(key, at).await
    }
    async fn list(&self, request: ListRequest) -> storage::Result<storage::ListResponse> {
        self.inner.list(request).await
    }
    async fn count(&self, prefix: &str) -> storage::Result<u64> {
        self.inner.count(prefix).await
    }
    async fn create(&self, key: &str, value: Bytes) -> storage::Result<storage::KeyValue> {
        self.inner.create(key, value).await
    }
    async fn create_guarded(
        &self,
        key: &str,
        value: Bytes,
        guard: &storage::Guard,
    ) -> storage::Result<storage::KeyValue> {
        let late = self.late.lock().unwrap().take();
        if let Some((key, value, guard)) = late {
            self.inner.create_guarded(&key, value, &guard).await?;
        }
        let cut = self.cuts.lock().unwrap().pop();
        match cut {
            None => self.inner.create_guarded(key, value, guard).await,
            Some(Cut::Applied) => {
                self.inner.create_guarded(key, value, guard).await?;
                Err(storage::Error::Timeout("cut off after the write".into()))
            }
            Some(Cut::Lost) => Err(storage::Error::Timeout("cut off before the write".into())),
            Some(Cut::Late) => {
                *self.late.lock().unwrap() = Some((key.to_owned(), value, guard.clone()));
                Err(storage::Error::Timeout(
                    "cut off, the write under way".into(),
                ))
            }
        }
    }
    async fn update(
        &self,
        key: &str,
        value: Bytes,
        at: storage::Revision,
    ) -> storage::Result<storage::KeyValue> {
        self.inner.update(key, value, at).await
    }
    async fn delete(
        &self,
        key: &str,
        at: Option<storage::Revision>,
    ) -> storage::Result<storage::Deleted> {
        self.inner.delete(key, at).await
    }
    async fn watch(
        &self,
        prefix: &str,
        from: storage::Revision,
    ) -> storage::Result<storage::WatchStream> {
        self.inner.watch(prefix, from).await
    }
    async fn compact(&self, at: storage::Revision) -> storage::Result<()> {
        self.inner.compact(at).await
    }
    async fn current_revision(&self) -> storage::Result<storage::Revision> {
        self.inner.current_revision().await
    }
    async fn health(&self) -> storage::Result<()> {
        self.inner.health().await
    }
    async fn size(&self) -> storage::Result<u64> {
        self.inner.size().await
    }
}

/// A create cut off in flight (an etcd election) is settled by reading its key: written
/// with this create's uid, it succeeded (201, once); not written, it is written again (and
/// when the first write lands after all, that is its success); written by another create
/// of the same name, it already exists (409).
#[tokio::test]
async fn a_create_cut_off_in_flight_is_settled_by_its_uid() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(CutOff {
        inner: EmbeddedStorage::open(dir.path()).unwrap(),
        cuts: std::sync::Mutex::new(Vec::new()),
        late: std::sync::Mutex::new(None),
    });
    let registry = Registry::new(Arc::new(scheme()), storage.clone(), "/registry")
        .await
        .unwrap();
    let kinds = registry.scheme().kinds();
    let kind = (kinds.iter())
        .find(|k| k.info.plural == "configmaps")
        .unwrap();
    let target = Target {
        kind,
        version: "v1",
        namespace: Some("default"),
    };
    let create = |name: &'static str| {
        let registry = &registry;
        async move {
            let body = json!({"metadata": {"name": name}, "data": {"k": name}});
            registry
                .create(target, body, &WriteOptions::default())
                .await
        }
    };

    *storage.cuts.lock().unwrap() = vec![Cut::Applied];
    let applied = create("applied").await.unwrap();
    assert!(applied.created);
    assert_eq!(applied.object["data"]["k"], "applied");

    *storage.cuts.lock().unwrap() = vec![Cut::Lost, Cut::Lost];
    let lost = create("lost").await.unwrap();
    assert_eq!(lost.object["metadata"]["name"], "lost");
    assert!(
        storage.cuts.lock().unwrap().is_empty(),
        "written on the third try"
    );

    // Written after the create read its key: its next try finds its own object in the way.
    *storage.cuts.lock().unwrap() = vec![Cut::Late];
    let late = create("late").await.unwrap();
    assert!(late.created);
    assert_eq!(late.object["data"]["k"], "late");

    // Another create of the name, cut off: the object found is not its own.
    *storage.cuts.lock().unwrap() = vec![Cut::Lost];
    check_error(
        create("applied").await,
        409,
        "AlreadyExists",
        "configmaps \"applied\" already exists",
    );
}
