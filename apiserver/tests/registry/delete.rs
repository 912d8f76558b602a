//! Delete: preconditions, the answer (the object or a success Status).

use super::*;

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
    let (deleted, _) = (env.registry)
        .delete_collection(target, &list_options(), &DeleteOptions::default(), None)
        .await
        .unwrap();
    assert_eq!(deleted.items.len(), 1);
    assert_eq!(deleted.items[0].value()["kind"], "ConfigMap");
    assert_eq!(deleted.items[0].value()["data"], json!({"k": "d"}));
}
