//! Conformance cases for history: watches (replay, follow, prefixes, future revisions,
//! slow watchers) and compaction.

use super::*;

/// A watch from a past revision replays what followed it, then follows new writes: every
/// change once, in order, with previous values.
pub async fn watch_replays_then_follows(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let a1 = create(s, "/watch/a", "a1").await;
    let r = a1.mod_revision;
    update(s, "/watch/a", "a2", r).await;
    create(s, "/watch/b", "b1").await;
    ok("delete", s.delete("/watch/a", None).await);
    let mut watch = ok("watch", s.watch("/watch/", r).await);
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(summary(&next_event(&mut watch).await));
    }
    assert_eq!(
        seen,
        [
            put(r + 1, "/watch/a", "a2", Some("a1")),
            put(r + 2, "/watch/b", "b1", None),
            delete(r + 3, "/watch/a", "a2"),
        ]
    );
    // Live: the delete event's previous value carries its revisions.
    let b = ok("get", s.get("/watch/b", 0).await).expect("b exists");
    update(s, "/watch/b", "b2", b.mod_revision).await;
    create(s, "/watch/a", "a3").await;
    ok("delete", s.delete("/watch/b", Some(r + 4)).await);
    let mut live = Vec::new();
    for _ in 0..3 {
        live.push(next_event(&mut watch).await);
    }
    assert_eq!(
        live.iter().map(summary).collect::<Vec<_>>(),
        [
            put(r + 4, "/watch/b", "b2", Some("b1")),
            put(r + 5, "/watch/a", "a3", None),
            delete(r + 6, "/watch/b", "b2"),
        ]
    );
    match &live[1] {
        WatchEvent::Put { kv, .. } => assert_eq!(kv.create_revision, r + 5),
        other => panic!("expected a put, got {other:?}"),
    }
    match &live[2] {
        WatchEvent::Delete { prev, .. } => {
            assert_eq!((prev.create_revision, prev.mod_revision), (r + 2, r + 4));
        }
        other => panic!("expected a delete, got {other:?}"),
    }
    // Nothing twice: the next event is the next write.
    let c = create(s, "/watch/c", "c").await;
    assert_eq!(summary(&next_event(&mut watch).await).0, c.mod_revision);
}

/// A watch from `0`, or from the current revision, sees only later writes.
pub async fn watch_from_now(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    create(s, "/now/old", "old").await;
    let mut from_zero = ok("watch", s.watch("/now/", 0).await);
    let mut from_current = ok("watch", s.watch("/now/", current(s).await).await);
    let new = create(s, "/now/new", "new").await;
    for watch in [&mut from_zero, &mut from_current] {
        let event = next_event(watch).await;
        assert_eq!(
            summary(&event),
            put(new.mod_revision, "/now/new", "new", None)
        );
    }
}

/// A watch on a prefix sees nothing of other prefixes, sibling ones included.
pub async fn watch_ignores_other_prefixes(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    // Replayed: a watch from the seed's revision reads history.
    let start = create(s, "/w/seed", "x").await.mod_revision;
    create(s, "/w/bc/replayed", "x").await;
    let mut watch = ok("watch", s.watch("/w/b/", start).await);
    create(s, "/w/a/1", "x").await;
    create(s, "/w/bc/1", "x").await;
    create(s, "/w/b", "x").await;
    let mine = create(s, "/w/b/1", "x").await;
    create(s, "/w/c/1", "x").await;
    let last = create(s, "/w/b/2", "x").await;
    assert_eq!(summary(&next_event(&mut watch).await).0, mine.mod_revision);
    assert_eq!(summary(&next_event(&mut watch).await).0, last.mod_revision);
}

/// A watch from a revision not reached yet delivers the changes after it, when they happen.
pub async fn watch_future_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let now = current(s).await;
    let mut watch = ok("watch", s.watch("/wf/", now + 2).await);
    create(s, "/wf/1", "1").await;
    create(s, "/wf/2", "2").await;
    let third = create(s, "/wf/3", "3").await;
    assert_eq!(third.mod_revision, now + 3);
    assert_eq!(summary(&next_event(&mut watch).await).0, now + 3);
}

/// A backend that [reports progress](Storage::reports_progress) answers a request on every
/// watch that follows live changes: after a write to another prefix, a watch gets a
/// `Progress` at the store's revision, after the changes of its own prefix, and later
/// changes after it. (A backend that cannot has nothing to keep here.)
pub async fn progress_on_request(backend: impl TestBackend) {
    let storage = backend.storage();
    if !storage.reports_progress() {
        return;
    }
    let watch = ok("watch", storage.watch("/p/", 0).await);
    let mine = ok("create", storage.create("/p/a", bytes("a")).await);
    let other = ok("create", storage.create("/q/b", bytes("b")).await);
    // The watch is read on its own, as a cache's feed reads it: a request reaches only a
    // watch that follows live changes, hence asking again until the answer comes.
    let (sender, mut items) = tokio::sync::mpsc::unbounded_channel();
    let forward = tokio::spawn(async move {
        let mut watch = watch;
        while let Some(item) = watch.next().await {
            if sender.send(item).is_err() {
                break;
            }
        }
    });
    let mut before = Vec::new();
    let reached = deadline("progress at the store's revision", async {
        loop {
            storage.request_progress().await;
            let item = tokio::time::timeout(Duration::from_millis(50), items.recv()).await;
            match item {
                Ok(Some(Ok(WatchEvent::Progress { revision })))
                    if revision >= other.mod_revision =>
                {
                    return revision;
                }
                Ok(Some(Ok(WatchEvent::Progress { .. }))) | Err(_) => {}
                Ok(Some(Ok(event))) => before.push(summary(&event)),
                Ok(Some(Err(error))) => panic!("watch failed: {error:?}"),
                Ok(None) => panic!("watch ended"),
            }
        }
    })
    .await;
    assert_eq!(reached, other.mod_revision, "nothing was written since");
    assert_eq!(
        before,
        [put(mine.mod_revision, "/p/a", "a", None)],
        "the prefix's change comes before the progress"
    );
    let later = ok("create", storage.create("/p/c", bytes("c")).await);
    let next = loop {
        match deadline("the next change", items.recv()).await {
            Some(Ok(WatchEvent::Progress { .. })) => continue,
            Some(Ok(event)) => break summary(&event),
            other => panic!("expected a change, got {other:?}"),
        }
    };
    assert_eq!(next, put(later.mod_revision, "/p/c", "c", None));
    forward.abort();
}

/// After compaction at C, reads at and watches from revisions below C fail; at and after C
/// everything still works, previous values included.
pub async fn compaction(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let a1 = create(s, "/compact/a", "a1").await;
    let r = a1.mod_revision;
    update(s, "/compact/a", "a2", r).await; // r + 1
    create(s, "/compact/b", "b1").await; // r + 2
    ok("delete", s.delete("/compact/b", None).await); // r + 3
    update(s, "/compact/a", "a3", r + 1).await; // r + 4
    let c = r + 2;
    ok("compact", s.compact(c).await);

    assert_compacted(s.get("/compact/a", r + 1).await, r + 1, c);
    assert_compacted(s.list(ListRequest::prefix("/compact/").at(r)).await, r, c);
    let got = ok("get", s.get("/compact/a", c).await).expect("a exists at c");
    assert_eq!((&got.value[..], got.mod_revision), (&b"a2"[..], r + 1));
    let at_c = ok("list", s.list(ListRequest::prefix("/compact/").at(c)).await);
    assert_eq!(keys(&at_c.items), ["/compact/a", "/compact/b"]);
    let at_c1 = ok(
        "list",
        s.list(ListRequest::prefix("/compact/").at(c + 1)).await,
    );
    assert_eq!(keys(&at_c1.items), ["/compact/a"]);

    let mut old = ok("watch", s.watch("/compact/", c - 1).await);
    match next_item(&mut old).await {
        Some(result) => assert_compacted(result, c - 1, c),
        None => panic!("a watch from a compacted revision ended without an error"),
    }
    assert!(
        deadline("the end of a failed watch", old.next())
            .await
            .is_none()
    );
    let mut from_c = ok("watch", s.watch("/compact/", c).await);
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(summary(&next_event(&mut from_c).await));
    }
    assert_eq!(
        seen,
        [
            delete(r + 3, "/compact/b", "b1"),
            put(r + 4, "/compact/a", "a3", Some("a2")),
        ]
    );

    assert_compacted(s.compact(c).await, c, c);
    assert_compacted(s.compact(c - 1).await, c - 1, c);
    let now = current(s).await;
    assert_future(s.compact(now + 1).await, now + 1, now);

    // Compacting again keeps what is visible at the new point, and events after it.
    ok("compact", s.compact(r + 3).await);
    let got = ok("get", s.get("/compact/a", r + 3).await).expect("a exists at r + 3");
    assert_eq!(&got.value[..], b"a2");
    assert_eq!(ok("get", s.get("/compact/b", r + 3).await), None);
    let mut watch = ok("watch", s.watch("/compact/", r + 3).await);
    let event = next_event(&mut watch).await;
    assert_eq!(summary(&event), put(r + 4, "/compact/a", "a3", Some("a2")));
    let d = create(s, "/compact/d", "d").await;
    assert_eq!(summary(&next_event(&mut watch).await).0, d.mod_revision);
    let now = ok("list", s.list(ListRequest::prefix("/compact/")).await);
    assert_eq!(keys(&now.items), ["/compact/a", "/compact/d"]);
}

/// A watcher that nobody reads does not hold up writes. When read at last it delivers the
/// writes in order, or ends with [`Error::Lagged`] after an in-order part of them.
pub async fn slow_watcher_does_not_block_writers(backend: impl TestBackend) {
    const TASKS: usize = 8;
    const PER_TASK: usize = 250;
    let storage = backend.storage();
    let start = current(&*storage).await;
    let mut idle = ok("watch", storage.watch("/slow/", 0).await);
    // Also poll it once so that it has caught up and is following live writes.
    let first = create(&*storage, "/slow/first", "").await;
    assert_eq!(next_event(&mut idle).await.revision(), first.mod_revision);
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let storage = Arc::clone(&storage);
        tasks.push(tokio::spawn(async move {
            for i in 0..PER_TASK {
                let key = format!("/slow/{task}/{i}");
                ok(
                    "create",
                    storage.create(&key, Bytes::from(vec![0; 512])).await,
                );
            }
        }));
    }
    for task in tasks {
        ok(
            "writer task",
            deadline("writes past an idle watcher", task).await,
        );
    }
    let total = (TASKS * PER_TASK) as Revision;
    let mut expected = start + 2;
    loop {
        match next_item(&mut idle).await {
            Some(Ok(event)) => {
                assert_eq!(event.revision(), expected, "events in order, none missing");
                expected += 1;
                if expected > start + 1 + total {
                    break;
                }
            }
            Some(Err(Error::Lagged { .. })) => break,
            other => panic!("unexpected watch item {other:?}"),
        }
    }
}
