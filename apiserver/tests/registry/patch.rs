//! Patches: JSON, merge and apply patches as kube applies them, and unconditional patches racing.

use super::*;

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
