//! Update: resourceVersion checks, generation, kube's errors, and the status and scale subresources.

use super::*;

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
    let object = written.clone().into_object().unwrap();
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
        written.clone().into_object().unwrap()["status"],
        json!({"replicas": 2, "readyReplicas": 2})
    );
    assert_eq!(
        written.clone().into_object().unwrap()["metadata"]["generation"],
        2
    );

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
    assert_eq!(
        written.clone().into_object().unwrap()["spec"],
        json!({"replicas": 4})
    );
    assert_eq!(written.clone().into_object().unwrap()["kind"], "Scale");
    let object = env.get(target, "web").await.unwrap();
    assert_eq!(object["spec"]["replicas"], 4);
    assert_eq!(object["metadata"]["generation"], 2);
    assert_eq!(
        object["metadata"]["resourceVersion"],
        written.clone().into_object().unwrap()["metadata"]["resourceVersion"]
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
    assert_eq!(written.clone().into_object().unwrap()["spec"], json!({}));
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
