//! Conformance cases for reads: gets and lists, at the latest or a past revision, with
//! limits and continuation, counts and sizes.

use super::*;

/// A missing key reads as `None`, before creation and after deletion.
pub async fn get_missing_key(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    assert_eq!(ok("get", s.get("/missing/a", 0).await), None);
    let kv = create(s, "/missing/a", "1").await;
    assert_eq!(ok("get", s.get("/missing/a", 0).await), Some(kv));
    ok("delete", s.delete("/missing/a", None).await);
    assert_eq!(ok("get", s.get("/missing/a", 0).await), None);
    // A key is not a prefix.
    create(s, "/missing/ab", "1").await;
    assert_eq!(ok("get", s.get("/missing/a", 0).await), None);
}

/// A list that skips the count of what follows returns the same page and the same `more`
/// (deleted keys after the page are not "more"); `remaining` is `0` or the exact count.
pub async fn list_without_remaining_keeps_more_exact(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    for key in ["a", "b", "c", "d", "e"] {
        create(s, &format!("/skip/{key}"), key).await;
    }
    ok("delete", s.delete("/skip/e", None).await);
    for (limit, start_after) in [
        (2, None),
        (2, Some("/skip/b")),
        (1, Some("/skip/c")),
        (3, Some("/skip/a")),
    ] {
        let mut request = ListRequest::prefix("/skip/").limit(limit);
        request.start_after = start_after.map(str::to_owned);
        let counted = ok("list", s.list(request.clone()).await);
        let skipped = ok("list", s.list(request.without_remaining()).await);
        assert_eq!(
            keys(&skipped.items),
            keys(&counted.items),
            "{limit} after {start_after:?}"
        );
        assert_eq!(skipped.more, counted.more, "{limit} after {start_after:?}");
        assert!(
            [0, counted.remaining].contains(&skipped.remaining),
            "{limit} after {start_after:?}: {} of {}",
            skipped.remaining,
            counted.remaining
        );
    }
    // Only a deleted key after the page: nothing more.
    let last = ok(
        "list",
        s.list(
            ListRequest::prefix("/skip/")
                .start_after("/skip/c")
                .limit(1)
                .without_remaining(),
        )
        .await,
    );
    assert_eq!((keys(&last.items), last.more), (vec!["/skip/d"], false));
}

/// A keys-only list answers what the full one does (keys, `more`, the revision read at,
/// each key's revisions naming the same writes: `Storage::same_write`), with every value
/// empty.
pub async fn list_keys_only(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    for key in ["a", "b", "c"] {
        create(s, &format!("/keys/{key}"), key).await;
    }
    ok(
        "update",
        s.update("/keys/b", bytes("b2"), current(s).await - 1).await,
    );
    ok("delete", s.delete("/keys/c", None).await);
    for request in [
        ListRequest::prefix("/keys/"),
        ListRequest::prefix("/keys/").limit(1),
    ] {
        let full = ok("list", s.list(request.clone()).await);
        let bare = ok("keys-only list", s.list(request.clone().keys_only()).await);
        let keys =
            |items: &[KeyValue]| -> Vec<String> { items.iter().map(|kv| kv.key.clone()).collect() };
        assert_eq!(keys(&bare.items), keys(&full.items), "{request:?}");
        for (bare, full) in bare.items.iter().zip(&full.items) {
            assert!(
                s.same_write(bare.create_revision, full.create_revision)
                    && s.same_write(bare.mod_revision, full.mod_revision),
                "{request:?}: {bare:?} against {full:?}"
            );
        }
        assert_eq!((bare.more, bare.revision), (full.more, full.revision));
        assert!(
            bare.items.iter().all(|kv| kv.value.is_empty()),
            "{request:?}"
        );
        assert!(full.items.iter().all(|kv| !kv.value.is_empty()));
    }
}

/// A list is ordered by key (not by creation) and reports the revision it read at.
pub async fn list_is_ordered_by_key(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let empty = ok("list", s.list(ListRequest::prefix("/order/")).await);
    assert!(empty.items.is_empty() && !empty.more);
    assert_eq!(empty.revision, current(s).await);
    for key in ["/order/c", "/order/a", "/order/b/x", "/order/b"] {
        create(s, key, key).await;
    }
    let list = ok("list", s.list(ListRequest::prefix("/order/")).await);
    assert_eq!(
        keys(&list.items),
        ["/order/a", "/order/b", "/order/b/x", "/order/c"]
    );
    assert_eq!(list.revision, current(s).await);
    assert!(!list.more);
    assert_eq!(list.remaining, 0);
    for kv in &list.items {
        assert_eq!(kv.value, bytes(&kv.key));
    }
}

/// A prefix matches its own keys only: `/a/b/` is not `/a/bc/`.
pub async fn list_does_not_leak_sibling_prefix(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    for key in ["/a/b", "/a/b/1", "/a/b/2", "/a/bc/1", "/a/a/1", "/a/c"] {
        create(s, key, "v").await;
    }
    let list = ok("list", s.list(ListRequest::prefix("/a/b/")).await);
    assert_eq!(keys(&list.items), ["/a/b/1", "/a/b/2"]);
    assert_eq!(ok("count", s.count("/a/b/").await), 2);
    let list = ok("list", s.list(ListRequest::prefix("/a/bc/")).await);
    assert_eq!(keys(&list.items), ["/a/bc/1"]);
    // Continuing from a key before the prefix starts at the prefix.
    let list = ok(
        "list",
        s.list(ListRequest::prefix("/a/b/").start_after("/a/a/1"))
            .await,
    );
    assert_eq!(keys(&list.items), ["/a/b/1", "/a/b/2"]);
    let list = ok(
        "list",
        s.list(ListRequest::prefix("/a/b/").start_after("/a/b/2"))
            .await,
    );
    assert!(list.items.is_empty() && !list.more);
}

/// Pages of `limit` items, each continuing after the last key of the previous one.
pub async fn list_limit_and_continue(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    for i in 0..7 {
        create(s, &format!("/page/{i}"), &i.to_string()).await;
    }
    create(s, "/pagf/0", "outside").await;
    ok("delete", s.delete("/page/3", None).await);
    let mut pages = Vec::new();
    let mut request = ListRequest::prefix("/page/").limit(2);
    loop {
        let page = ok("list", s.list(request.clone()).await);
        assert!(page.items.len() <= 2);
        pages.push((keys(&page.items).join(","), page.more, page.remaining));
        let Some(last) = page.items.last() else { break };
        if !page.more {
            break;
        }
        request = request.start_after(last.key.clone()).at(page.revision);
    }
    assert_eq!(
        pages,
        [
            ("/page/0,/page/1".to_owned(), true, 4),
            ("/page/2,/page/4".to_owned(), true, 2),
            ("/page/5,/page/6".to_owned(), false, 0),
        ]
    );
    let exact = ok("list", s.list(ListRequest::prefix("/page/").limit(6)).await);
    assert_eq!(
        (exact.items.len(), exact.more, exact.remaining),
        (6, false, 0)
    );
}

/// A list at a past revision sees the state as of then: old values, deleted keys, not yet
/// created keys absent.
pub async fn list_at_past_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let a = create(s, "/past/a", "a1").await;
    let b = create(s, "/past/b", "b1").await;
    let then = current(s).await;
    update(s, "/past/a", "a2", a.mod_revision).await;
    ok("delete", s.delete("/past/b", None).await);
    create(s, "/past/c", "c1").await;
    let old = ok("list", s.list(ListRequest::prefix("/past/").at(then)).await);
    assert_eq!(old.revision, then);
    assert_eq!(
        entries(&old.items),
        [
            ("/past/a".into(), "a1".into(), a.mod_revision),
            ("/past/b".into(), "b1".into(), b.mod_revision),
        ]
    );
    let now = ok("list", s.list(ListRequest::prefix("/past/")).await);
    assert_eq!(keys(&now.items), ["/past/a", "/past/c"]);
    // Past reads with a limit page the same way.
    let page = ok(
        "list",
        s.list(ListRequest::prefix("/past/").at(then).limit(1))
            .await,
    );
    assert_eq!(
        (keys(&page.items), page.more, page.remaining),
        (vec!["/past/a"], true, 1)
    );
}

/// A get at a past revision sees the value as of then.
pub async fn get_at_past_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let v1 = create(s, "/getpast/a", "1").await;
    let v2 = update(s, "/getpast/a", "2", v1.mod_revision).await;
    let deleted = ok("delete", s.delete("/getpast/a", None).await);
    let at = |revision| s.get("/getpast/a", revision);
    assert_eq!(ok("get", at(v1.mod_revision - 1).await), None);
    assert_eq!(ok("get", at(v1.mod_revision).await), Some(v1.clone()));
    assert_eq!(ok("get", at(v2.mod_revision).await), Some(v2));
    assert_eq!(ok("get", at(deleted.revision).await), None);
    let v3 = create(s, "/getpast/a", "3").await;
    assert_eq!(ok("get", at(0).await), Some(v3.clone()));
    assert_eq!(v3.create_revision, v3.mod_revision);
}

/// Every page read at the first page's revision, while writes go on, together equal one
/// list at that revision.
pub async fn paginate_while_writing(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    for i in 0..20 {
        create(s, &format!("/paginate/{i:02}"), "0").await;
    }
    let first = ok(
        "list",
        s.list(ListRequest::prefix("/paginate/").limit(3)).await,
    );
    let revision = first.revision;
    let full = ok(
        "list",
        s.list(ListRequest::prefix("/paginate/").at(revision)).await,
    );
    assert_eq!(full.items.len(), 20);
    let mut items = first.items.clone();
    let mut page = first;
    let mut i = 0;
    while page.more {
        // Change the store between pages: update, delete and create keys on both sides of
        // the page boundary.
        let key = format!("/paginate/{:02}", (i * 7) % 20);
        if let Some(kv) = ok("get", s.get(&key, 0).await) {
            if i % 2 == 0 {
                update(s, &key, &format!("{i}"), kv.mod_revision).await;
            } else {
                ok("delete", s.delete(&key, None).await);
            }
        }
        create(s, &format!("/paginate/{i:02}-new"), "new").await;
        i += 1;
        let last = items.last().map(|kv| kv.key.clone()).unwrap_or_default();
        let request = ListRequest::prefix("/paginate/")
            .limit(3)
            .start_after(last)
            .at(revision);
        page = ok("list", s.list(request).await);
        assert_eq!(page.revision, revision);
        items.extend(page.items.iter().cloned());
    }
    assert_eq!(items, full.items);
    assert!(i > 3, "the writes happened between pages");
}

/// Reading at a revision after the current one fails.
pub async fn read_at_future_revision(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    create(s, "/future/a", "1").await;
    let now = current(s).await;
    let future = now + 10;
    assert_future(s.get("/future/a", future).await, future, now);
    assert_future(
        s.list(ListRequest::prefix("/future/").at(future)).await,
        future,
        now,
    );
    assert_eq!(
        s.get("/future/a", now).await.map(|kv| kv.is_some()),
        Ok(true)
    );
}

/// Count sees live keys under the prefix only.
pub async fn count_live_keys(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    assert_eq!(ok("count", s.count("/count/").await), 0);
    for i in 0..5 {
        create(s, &format!("/count/{i}"), "v").await;
    }
    create(s, "/countx/0", "v").await;
    let kv = ok("get", s.get("/count/0", 0).await).expect("key exists");
    update(s, "/count/0", "w", kv.mod_revision).await;
    ok("delete", s.delete("/count/1", None).await);
    assert_eq!(ok("count", s.count("/count/").await), 4);
    assert_eq!(ok("count", s.count("/countx/").await), 1);
}

/// The database's size is known and comes to cover what was written.
pub async fn size_covers_what_is_stored(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    let value = "x".repeat(64 * 1024);
    for i in 0..4 {
        create(s, &format!("/size/{i}"), &value).await;
    }
    // etcd commits its backend in batches (every 100 ms): its size follows shortly.
    deadline("the size to cover 256 KiB written", async {
        loop {
            let size = ok("size", s.size().await);
            if size >= 4 * 64 * 1024 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

/// A collection larger than one default gRPC message (4 MiB) is read whole: a list of it,
/// and a watch replaying its creation (kube's etcd client takes messages of any size, so
/// a watch cache can fill from one list of a kind with many objects).
pub async fn big_collections_are_read_whole(backend: impl TestBackend) {
    let storage = backend.storage();
    let s = &*storage;
    // A revision before the collection's (0 would be "from now").
    let start = create(s, "/big-start", "").await.mod_revision;
    // Six values of 1 MiB less a little (etcd refuses requests over 1.5 MiB by default).
    let value = "v".repeat(1_000_000);
    for i in 0..6 {
        create(s, &format!("/big/{i}"), &value).await;
    }
    let list = ok("list", s.list(ListRequest::prefix("/big/")).await);
    assert_eq!(list.items.len(), 6);
    assert!(list.items.iter().all(|kv| kv.value.len() == value.len()));
    let mut watch = ok("watch", s.watch("/big/", start).await);
    for i in 0..6 {
        match next_event(&mut watch).await {
            WatchEvent::Put { kv, .. } => {
                assert_eq!(
                    (kv.key.as_str(), kv.value.len()),
                    (&*format!("/big/{i}"), value.len())
                );
            }
            other => panic!("expected the creation of /big/{i}, got {other:?}"),
        }
    }
}
