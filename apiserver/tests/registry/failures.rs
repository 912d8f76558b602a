//! Storage failing under the registry: statuses for a store that is down, and creates cut off in flight settled by their uid.

use super::*;

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
    assert_eq!(
        applied.clone().into_object().unwrap()["data"]["k"],
        "applied"
    );

    *storage.cuts.lock().unwrap() = vec![Cut::Lost, Cut::Lost];
    let lost = create("lost").await.unwrap();
    assert_eq!(
        lost.clone().into_object().unwrap()["metadata"]["name"],
        "lost"
    );
    assert!(
        storage.cuts.lock().unwrap().is_empty(),
        "written on the third try"
    );

    // Written after the create read its key: its next try finds its own object in the way.
    *storage.cuts.lock().unwrap() = vec![Cut::Late];
    let late = create("late").await.unwrap();
    assert!(late.created);
    assert_eq!(late.clone().into_object().unwrap()["data"]["k"], "late");

    // Another create of the name, cut off: the object found is not its own.
    *storage.cuts.lock().unwrap() = vec![Cut::Lost];
    check_error(
        create("applied").await,
        409,
        "AlreadyExists",
        "configmaps \"applied\" already exists",
    );
}
