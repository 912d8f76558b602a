//! Lists: pages of one snapshot under concurrent writes, selectors, and delete collection.

use super::*;

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

    let (deleted, _) = (env.registry)
        .delete_collection(target, &labels("app=web"), &DeleteOptions::default(), None)
        .await
        .unwrap();
    assert_eq!(
        deleted.items.iter().map(item_name).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(env.names(target, list_options()).await, ["c", "d"]);
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
