//! Conformance cases for writes: revisions, create-if-absent (guarded or not),
//! compare-and-swap updates and deletes, and concurrent writers.

use super::*;

/// Each write gets the next revision, across keys.
pub async fn revision_increases_by_one_per_write(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let r0 = current(s).await;
    let a = create(s, "/rev/a", "1").await;
    assert_eq!((a.create_revision, a.mod_revision), (r0 + 1, r0 + 1));
    let b = create(s, "/rev/b", "1").await;
    assert_eq!(b.mod_revision, r0 + 2);
    let a2 = update(s, "/rev/a", "2", a.mod_revision).await;
    assert_eq!((a2.create_revision, a2.mod_revision), (r0 + 1, r0 + 3));
    let deleted = ok("delete", s.delete("/rev/b", None).await);
    assert_eq!(deleted.revision, r0 + 4);
    assert_eq!(current(s).await, r0 + 4);
    let list = ok("list", s.list(ListRequest::prefix("/rev/")).await);
    assert_eq!(list.revision, r0 + 4);
}

/// Create fails on an existing key, and succeeds again after a delete.
pub async fn create_is_create_if_absent(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let first = create(s, "/create/a", "1").await;
    assert_eq!(
        s.create("/create/a", bytes("2")).await,
        Err(Error::AlreadyExists {
            key: "/create/a".into()
        })
    );
    let got = ok("get", s.get("/create/a", 0).await).expect("key exists");
    assert_eq!(got, first);
    ok("delete", s.delete("/create/a", None).await);
    let again = create(s, "/create/a", "3").await;
    assert_eq!(again.create_revision, again.mod_revision);
    assert!(again.create_revision > first.create_revision);
}

/// A guarded create happens only while the guard's key is at the expected mod revision
/// (absent for `0`); a failed guard is a conflict on the guard's key, checked before the
/// key's own existence, and writes nothing.
pub async fn create_guarded_checks_the_guard(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let guard_key = "/guarded/ns";
    let guard = |mod_revision| Guard {
        key: guard_key.into(),
        mod_revision,
    };
    // Absent guard key: expected 0.
    let a = ok(
        "create_guarded",
        s.create_guarded("/guarded/a", bytes("a"), &guard(0)).await,
    );
    assert_eq!(a.create_revision, a.mod_revision);
    let ns1 = create(s, guard_key, "1").await;
    assert_eq!(
        s.create_guarded("/guarded/b", bytes("b"), &guard(0)).await,
        Err(Error::Conflict {
            key: guard_key.into(),
            expected: 0,
            current: ns1.mod_revision,
        })
    );
    let b = ok(
        "create_guarded",
        s.create_guarded("/guarded/b", bytes("b"), &guard(ns1.mod_revision))
            .await,
    );
    assert_eq!(b.mod_revision, ns1.mod_revision + 1);
    assert_eq!(
        s.create_guarded("/guarded/b", bytes("again"), &guard(ns1.mod_revision))
            .await,
        Err(Error::AlreadyExists {
            key: "/guarded/b".into()
        })
    );
    let ns2 = update(s, guard_key, "2", ns1.mod_revision).await;
    let before = current(s).await;
    for key in ["/guarded/b", "/guarded/c"] {
        assert_eq!(
            s.create_guarded(key, bytes("c"), &guard(ns1.mod_revision))
                .await,
            Err(Error::Conflict {
                key: guard_key.into(),
                expected: ns1.mod_revision,
                current: ns2.mod_revision,
            })
        );
    }
    ok("delete", s.delete(guard_key, None).await);
    assert_eq!(
        s.create_guarded("/guarded/c", bytes("c"), &guard(ns2.mod_revision))
            .await,
        Err(Error::Conflict {
            key: guard_key.into(),
            expected: ns2.mod_revision,
            current: 0,
        })
    );
    assert_eq!(current(s).await, before + 1, "failed guards write nothing");
    assert_eq!(ok("get", s.get("/guarded/c", 0).await), None);
    assert_eq!(
        ok("get", s.get("/guarded/b", 0).await).map(|kv| kv.value),
        Some(bytes("b"))
    );
}

/// Update is a compare-and-swap on the mod revision.
pub async fn update_compares_mod_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let v1 = create(s, "/update/a", "1").await;
    let v2 = update(s, "/update/a", "2", v1.mod_revision).await;
    assert_eq!(&v2.value[..], b"2");
    assert_eq!(v2.create_revision, v1.create_revision);
    assert_eq!(
        s.update("/update/a", bytes("3"), v1.mod_revision).await,
        Err(Error::Conflict {
            key: "/update/a".into(),
            expected: v1.mod_revision,
            current: v2.mod_revision,
        })
    );
    assert_eq!(
        s.update("/update/missing", bytes("1"), v1.mod_revision)
            .await,
        Err(Error::NotFound {
            key: "/update/missing".into()
        })
    );
    let got = ok("get", s.get("/update/a", 0).await);
    assert_eq!(got, Some(v2));
}

/// Delete returns what it deleted; with a precondition it is a compare-and-swap.
pub async fn delete_with_and_without_precondition(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let a1 = create(s, "/delete/a", "1").await;
    let a2 = update(s, "/delete/a", "2", a1.mod_revision).await;
    assert_eq!(
        s.delete("/delete/a", Some(a1.mod_revision)).await,
        Err(Error::Conflict {
            key: "/delete/a".into(),
            expected: a1.mod_revision,
            current: a2.mod_revision,
        })
    );
    let deleted = ok("delete", s.delete("/delete/a", Some(a2.mod_revision)).await);
    assert_eq!(deleted.prev, a2);
    assert_eq!(deleted.revision, a2.mod_revision + 1);
    assert_eq!(
        s.delete("/delete/a", None).await,
        Err(Error::NotFound {
            key: "/delete/a".into()
        })
    );
    let b = create(s, "/delete/b", "b").await;
    let deleted = ok("delete", s.delete("/delete/b", None).await);
    assert_eq!(deleted.prev, b);
    assert_eq!(ok("get", s.get("/delete/b", 0).await), None);
}

/// Writes that fail their precondition change nothing, not even the revision.
pub async fn failed_writes_do_not_advance_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let a = create(s, "/failed/a", "1").await;
    let before = current(s).await;
    assert!(s.create("/failed/a", bytes("x")).await.is_err());
    assert!(
        s.update("/failed/a", bytes("x"), a.mod_revision + 100)
            .await
            .is_err()
    );
    assert!(
        s.update("/failed/b", bytes("x"), a.mod_revision)
            .await
            .is_err()
    );
    assert!(
        s.delete("/failed/a", Some(a.mod_revision + 100))
            .await
            .is_err()
    );
    assert!(s.delete("/failed/b", None).await.is_err());
    assert_eq!(current(s).await, before);
    let next = create(s, "/failed/c", "1").await;
    assert_eq!(next.mod_revision, before + 1);
}

/// Concurrent writers all succeed with distinct revisions, and watchers (one started
/// before, one during the writes) see every write once, in order.
pub async fn concurrent_writers(backend: impl TestBackend) {
    const TASKS: usize = 8;
    const PER_TASK: usize = 50;
    let storage = backend.storage();
    // Not 0, which would mean "from now" to a watch.
    let start = create(&*storage, "/seed", "").await.mod_revision;
    let mut before = ok("watch", storage.watch("/concurrent/", 0).await);
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let storage = Arc::clone(&storage);
        tasks.push(tokio::spawn(async move {
            let mut revisions = Vec::new();
            for i in 0..PER_TASK {
                let key = format!("/concurrent/{task}/{i}");
                let kv = ok("create", storage.create(&key, Bytes::new()).await);
                revisions.push(kv.mod_revision);
            }
            revisions
        }));
    }
    // Started while the writers run: part replay, part live.
    let mut during = ok("watch", storage.watch("/concurrent/", start).await);
    let mut revisions = BTreeSet::new();
    for task in tasks {
        let written = ok("writer task", deadline("the writers", task).await);
        assert!(written.windows(2).all(|w| w[0] < w[1]));
        revisions.extend(written);
    }
    let total = TASKS * PER_TASK;
    assert_eq!(revisions.len(), total, "revisions are distinct");
    assert_eq!(revisions.first(), Some(&(start + 1)));
    assert_eq!(revisions.last(), Some(&(start + total as Revision)));
    for watch in [&mut before, &mut during] {
        let mut seen = Vec::new();
        for _ in 0..total {
            seen.push(next_event(watch).await.revision());
        }
        assert_eq!(seen, revisions.iter().copied().collect::<Vec<_>>());
    }
    let list = ok(
        "list",
        storage.list(ListRequest::prefix("/concurrent/")).await,
    );
    assert_eq!(list.items.len(), total);
}
