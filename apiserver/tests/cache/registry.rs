//! The registry over the cache: consistent reads from a cache caught up (or shown to hold
//! storage's keys), from storage otherwise, and the namespace guard of creates.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use kapi::storage::cache::CacheOptions;

use super::flaky::{DEADLINE, Env, env};

/// A registry of core Namespaces and ConfigMaps on the test's store, with their kinds.
struct Core {
    registry: kapi::registry::Registry,
    namespaces: Arc<kapi::scheme::KindEntry>,
    configmaps: Arc<kapi::scheme::KindEntry>,
}

impl Core {
    async fn new(env: &Env) -> Core {
        use api_types::core;
        use kapi::scheme::{KindEntry, Scheme};
        let scheme = Scheme::new()
            .add(
                KindEntry::new::<core::Namespace>()
                    .version::<core::Namespace, core::Namespace>("v1"),
            )
            .add(
                KindEntry::new::<core::ConfigMap>()
                    .version::<core::ConfigMap, core::ConfigMap>("v1"),
            );
        let registry =
            kapi::registry::Registry::new(Arc::new(scheme), env.storage.clone(), "/registry")
                .await
                .unwrap();
        let kind = |plural| registry.scheme().by_resource("", plural).unwrap();
        let (namespaces, configmaps) = (kind("namespaces"), kind("configmaps"));
        Core {
            registry,
            namespaces,
            configmaps,
        }
    }

    /// Creates the Namespace `name`; its resourceVersion.
    async fn namespace(&self, name: &str) -> String {
        let body = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        let options = kapi::registry::WriteOptions::default();
        let created = self
            .registry
            .create(self.namespaces(), body, &options)
            .await;
        let created = created.unwrap();
        created.clone().into_object().unwrap()["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    fn namespaces(&self) -> kapi::registry::Target<'_> {
        kapi::registry::Target {
            kind: &self.namespaces,
            version: "v1",
            namespace: None,
        }
    }

    fn configmaps<'a>(&'a self, namespace: &'a str) -> kapi::registry::Target<'a> {
        kapi::registry::Target {
            kind: &self.configmaps,
            version: "v1",
            namespace: Some(namespace),
        }
    }
}

/// Consistent reads (no resourceVersion) come from the cache once it has reached storage's
/// current revision. When the last write was to another kind, which the kind's cache never
/// hears of, they come from the cache caught up when storage's watches report progress on
/// request, else from storage. The same answer either way.
#[tokio::test]
async fn consistent_reads_use_the_cache_once_it_has_caught_up() {
    use kapi::registry::{ListOptions, WriteOptions};

    let env = env(CacheOptions::default()).await;
    let core = Core::new(&env).await;
    let registry = &core.registry;
    let configmaps = core.configmaps("default");
    let body =
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    let created = (registry
        .create(configmaps, body, &WriteOptions::default())
        .await)
        .unwrap();
    let revision = created.clone().into_object().unwrap()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let names = |list: &kapi::registry::ObjectList| -> Vec<String> {
        (list.items.iter())
            .map(|o| o.value()["metadata"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // Once the cache has the write, a consistent list does not touch storage's lists.
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let at_least = ListOptions {
            resource_version: Some("0".into()),
            ..ListOptions::default()
        };
        let list = registry.list(configmaps, &at_least).await.unwrap();
        if list.resource_version == revision {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cache never caught up"
        );
        tokio::task::yield_now().await;
    }
    let lists = env.flaky.lists.load(Ordering::SeqCst);
    let list = registry
        .list(configmaps, &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (names(&list), list.resource_version.as_str()),
        (vec!["a".to_owned()], revision.as_str())
    );
    assert_eq!(
        env.flaky.lists.load(Ordering::SeqCst),
        lists,
        "served from the cache"
    );

    // A store whose watches report progress on request: the cache catches up with a write
    // to another kind without a change of its own, and answers at the new revision.
    env.flaky.progress.store(true, Ordering::SeqCst);
    let other = core.namespace("other").await;
    let lists = env.flaky.lists.load(Ordering::SeqCst);
    let list = registry
        .list(configmaps, &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (names(&list), list.resource_version.as_str()),
        (vec!["a".to_owned()], other.as_str())
    );
    let not_older = ListOptions {
        resource_version: Some(other.clone()),
        ..ListOptions::default()
    };
    let list = registry.list(configmaps, &not_older).await.unwrap();
    assert_eq!(list.resource_version, other);
    assert_eq!(
        env.flaky.lists.load(Ordering::SeqCst),
        lists,
        "served from the cache"
    );

    // Without progress, a write to another kind leaves the configmaps' cache unable to
    // know it is current. A keys-only list of storage shows it holds storage's keys at
    // their revisions: the cache answers, at the new revision.
    env.flaky.progress.store(false, Ordering::SeqCst);
    let third = core.namespace("third").await;
    let counts = || {
        let flaky = &env.flaky;
        [&flaky.lists, &flaky.keys_only_lists].map(|n| n.load(Ordering::SeqCst))
    };
    let before = counts();
    let list = registry
        .list(configmaps, &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(names(&list), ["a"]);
    assert_eq!(list.resource_version, third);
    assert_eq!(
        counts(),
        [before[0], before[1] + 1],
        "served from the cache"
    );

    // The kind's own write still on its way to the cache when the keys are read (as when
    // it is written beside other kinds): the list waits for it, and the cache answers at
    // the keys-only read's revision.
    let configmap = |name: &str| serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    env.flaky.held.send_replace(true);
    (registry
        .create(configmaps, configmap("b"), &WriteOptions::default())
        .await)
        .unwrap();
    let fourth = core.namespace("fourth").await;
    let before = counts();
    // Released once the list has the keys (and has found the cache without the write).
    let answered = env.flaky.keys_only_answered.load(Ordering::SeqCst);
    let release = async {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        while env.flaky.keys_only_answered.load(Ordering::SeqCst) == answered {
            assert!(tokio::time::Instant::now() < deadline, "no keys-only read");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        env.flaky.held.send_replace(false);
    };
    let options = ListOptions::default();
    let (list, ()) = tokio::join!(registry.list(configmaps, &options), release);
    let list = list.unwrap();
    assert_eq!(names(&list), ["a", "b"]);
    assert_eq!(list.resource_version, fourth);
    assert_eq!(
        counts(),
        [before[0], before[1] + 1],
        "served from the cache"
    );

    // A write the cache never hears of: the keys differ, and storage answers.
    env.flaky.dropping.store(true, Ordering::SeqCst);
    let created = (registry
        .create(configmaps, configmap("c"), &WriteOptions::default())
        .await)
        .unwrap();
    let before = counts();
    let list = registry
        .list(configmaps, &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(names(&list), ["a", "b", "c"]);
    assert_eq!(
        list.resource_version,
        created.clone().into_object().unwrap()["metadata"]["resourceVersion"]
    );
    assert_eq!(
        counts(),
        [before[0] + 1, before[1] + 1],
        "served from storage"
    );
}

/// On a store that reports no progress (etcd before v3.4.31), a consistent GET reads the
/// object from storage, and when the cache holds that very state (the same mod revision)
/// answers with the cache's shared encoding: the one lists and watches send, with no
/// decoding or conversion. Its answer is storage's latest either way.
#[tokio::test]
async fn consistent_gets_without_progress_read_storage_and_share_the_cached_encoding() {
    use kapi::registry::{GetOptions, ListOptions, WriteOptions};
    use kapi::storage::cache::SharedObject;

    let env = env(CacheOptions::default()).await;
    let core = Core::new(&env).await;
    let registry = &core.registry;
    let configmaps = core.configmaps("default");
    let body = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "1"}});
    let created = (registry
        .create(configmaps, body, &WriteOptions::default())
        .await)
        .unwrap();
    let revision = created.clone().into_object().unwrap()["metadata"]["resourceVersion"].clone();
    // A write to another kind: the configmaps' cache is behind storage's revision.
    core.namespace("other").await;
    let any = ListOptions {
        resource_version: Some("0".into()),
        ..ListOptions::default()
    };
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let cached = loop {
        let list = registry.list(configmaps, &any).await.unwrap();
        if let Some(item) = list.items.first() {
            break item.clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "never cached");
        tokio::task::yield_now().await;
    };
    assert_eq!(cached.value()["metadata"]["resourceVersion"], revision);

    let latest = GetOptions::default();
    let gets = env.flaky.gets.load(Ordering::SeqCst);
    let got = registry.get_with(configmaps, "a", None, &latest);
    let got = got.await.unwrap();
    assert_eq!(
        env.flaky.gets.load(Ordering::SeqCst),
        gets + 1,
        "read from storage"
    );
    assert!(
        SharedObject::ptr_eq(&got, &cached),
        "served with the cached encoding"
    );

    // Changed behind the registry's back: storage's state is the answer, whether or not
    // the cache has heard of it yet.
    let key = "/registry/configmaps/default/a";
    let stored = env.storage.get(key, 0).await.unwrap().unwrap();
    let mut changed: serde_json::Value = serde_json::from_slice(&stored.value).unwrap();
    changed["data"]["k"] = "2".into();
    let changed = Bytes::from(serde_json::to_vec(&changed).unwrap());
    let updated = env.storage.update(key, changed, stored.mod_revision).await;
    let updated = updated.unwrap();
    let got = registry.get_with(configmaps, "a", None, &latest);
    let got = got.await.unwrap().value();
    assert_eq!(got["data"]["k"], "2");
    assert_eq!(
        got["metadata"]["resourceVersion"],
        updated.mod_revision.to_string()
    );
}

/// A cache whose feed does not answer progress requests is asked twice, then left alone
/// for a while: the reads meanwhile ask storage at once (here a keys-only list, which
/// shows the cache holds storage's keys), not each after a wait in vain.
#[tokio::test]
async fn a_cache_that_cannot_catch_up_leaves_consistent_reads_to_storage() {
    use kapi::registry::ListOptions;

    let env = env(CacheOptions::default()).await;
    let core = Core::new(&env).await;
    let registry = &core.registry;
    let configmaps = core.configmaps("default");
    core.namespace("other").await;
    env.flaky.progress.store(true, Ordering::SeqCst);
    env.flaky.deaf.store(true, Ordering::SeqCst);
    let lists = env.flaky.keys_only_lists.load(Ordering::SeqCst);
    for read in 1..=3 {
        let list = registry.list(configmaps, &ListOptions::default()).await;
        assert!(list.unwrap().items.is_empty());
        assert_eq!(
            env.flaky.keys_only_lists.load(Ordering::SeqCst),
            lists + read,
            "storage asked"
        );
        assert_eq!(
            env.flaky.progress_requests.load(Ordering::SeqCst),
            2,
            "read {read}: only the first asks, twice"
        );
    }
}

/// kube's NamespaceLifecycle check and the create it allows are one: the create is made
/// under a guard on the namespace's revision as checked, so a namespace marked terminating
/// between the check and the write (here by a writer racing the check) lets nothing in:
/// the store refuses, the check runs again, and the answer is kube's 403.
#[tokio::test]
async fn a_namespace_terminated_after_the_check_refuses_the_create() {
    use kapi::error::ApiError;
    use kapi::registry::WriteOptions;

    let env = env(CacheOptions::default()).await;
    let core = Core::new(&env).await;
    let registry = &core.registry;
    let configmaps = core.configmaps("team");
    core.namespace("team").await;
    let configmap = |name: &str| serde_json::json!({"metadata": {"name": name}});
    (registry
        .create(configmaps, configmap("a"), &WriteOptions::default())
        .await)
        .unwrap();

    fn terminate(value: &[u8]) -> Bytes {
        let mut namespace: serde_json::Value = serde_json::from_slice(value).unwrap();
        namespace["status"]["phase"] = "Terminating".into();
        namespace["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z".into();
        Bytes::from(serde_json::to_vec(&namespace).unwrap())
    }
    *env.flaky.change_before_create.lock().unwrap() =
        Some(("/registry/namespaces/team".into(), terminate));
    let refused = registry
        .create(configmaps, configmap("b"), &WriteOptions::default())
        .await;
    assert!(
        env.flaky.change_before_create.lock().unwrap().is_none(),
        "the namespace changed between the check and the write"
    );
    match refused {
        Err(error @ ApiError::Forbidden { .. }) => assert_eq!(
            error.to_string(),
            "configmaps \"b\" is forbidden: unable to create new content in namespace team because it is being terminated"
        ),
        other => panic!("expected kube's 403, got {other:?}"),
    }
    let stored = (env.storage.get("/registry/configmaps/team/b", 0).await).unwrap();
    assert_eq!(stored, None, "nothing was written");
}
