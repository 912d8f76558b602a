//! Namespaces: `default`, termination taking the content along, and a termination finished after a restart.

use super::*;

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
