//! Create: server-set metadata, kube's errors, unknown fields, generated names and dry runs.

use super::*;

#[tokio::test]
async fn create_sets_server_metadata_and_resource_version_from_storage() {
    let env = env().await;
    let created = env
        .create(env.webapps("v1", "default"), webapp("web", "nginx"))
        .await
        .unwrap();
    let metadata = &created["metadata"];
    assert_eq!(metadata["uid"].as_str().unwrap().len(), 36);
    let timestamp = metadata["creationTimestamp"].as_str().unwrap();
    assert!(
        timestamp.len() == 20 && timestamp.ends_with('Z'),
        "{timestamp}"
    );
    assert_eq!(metadata["generation"], 1);
    assert_eq!(rv(&created), env.storage.current_revision().await.unwrap());
    // Cluster-scoped kinds have no namespace, in the object or in the key.
    let tenant = json!({"metadata": {"name": "acme", "namespace": "default"}, "spec": {"displayName": "Acme"}});
    let created = env.create(env.tenants(), tenant).await.unwrap();
    assert_eq!(created["metadata"].get("namespace"), None);
    assert_eq!(created["spec"]["quota"]["maxWebApps"], 10);
    assert!(
        env.raw("/registry/platform.example.dev/tenants/acme")
            .await
            .is_some()
    );
    assert!(
        env.raw("/registry/configmaps/default/nothing")
            .await
            .is_none()
    );
}

#[tokio::test]
async fn create_errors_are_kubes() {
    let env = env().await;
    env.create(env.webapps("v1", "default"), webapp("web", "nginx"))
        .await
        .unwrap();
    let target = env.webapps("v1", "default");
    let cases: Vec<(Value, u16, &str, &str)> = vec![
        (
            json!({"spec": {"container": {"image": "x"}}}),
            422,
            "Invalid",
            "WebApp.apps.example.dev \"\" is invalid: metadata.name: Required value: name or generateName is required",
        ),
        (
            webapp("Web_1", "x"),
            422,
            "Invalid",
            "WebApp.apps.example.dev \"Web_1\" is invalid: metadata.name: Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
        (
            json!({"metadata": {"name": "w", "labels": {"a": "-x"}}, "spec": {"container": {"image": "x"}}}),
            422,
            "Invalid",
            "WebApp.apps.example.dev \"w\" is invalid: metadata.labels: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        (
            json!({"metadata": {"name": "w"}, "spec": {"replicas": -1, "container": {"image": "x"}}}),
            422,
            "Invalid",
            "WebApp.apps.example.dev \"w\" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer",
        ),
        (
            json!({"apiVersion": "apps.example.dev/v1beta1", "metadata": {"name": "w"}}),
            400,
            "BadRequest",
            "the API version in the data (apps.example.dev/v1beta1) does not match the expected API version (apps.example.dev/v1)",
        ),
        (
            json!({"kind": "Tenant", "metadata": {"name": "w"}}),
            400,
            "BadRequest",
            "Tenant in version \"v1\" cannot be handled as a WebApp: no kind \"Tenant\" is registered for version \"apps.example.dev/v1\"",
        ),
        (
            json!({"metadata": {"name": "w"}, "spec": {"replicas": "two", "container": {"image": "x"}}}),
            400,
            "BadRequest",
            "WebApp in version \"v1\" cannot be handled as a WebApp: invalid type: string \"two\", expected i32",
        ),
        (
            json!({"metadata": {"name": "w", "namespace": "other"}, "spec": {"container": {"image": "x"}}}),
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
        ),
        (
            webapp("web", "nginx"),
            409,
            "AlreadyExists",
            "webapps.apps.example.dev \"web\" already exists",
        ),
        (
            json!({"metadata": {"name": "w", "resourceVersion": "3"}, "spec": {"container": {"image": "x"}}}),
            400,
            "BadRequest",
            "resourceVersion should not be set on objects to be created",
        ),
        // Validation comes first, as kube's storage refuses the resourceVersion at the write.
        (
            json!({"metadata": {"name": "W", "resourceVersion": "3"}, "spec": {"container": {"image": "x"}}}),
            422,
            "Invalid",
            "WebApp.apps.example.dev \"W\" is invalid: metadata.name: Invalid value: \"W\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
    ];
    for (body, code, reason, message) in cases {
        check_error(env.create(target, body).await, code, reason, message);
    }
    check_error(
        env.create(env.webapps("v1", "missing"), webapp("w", "x"))
            .await,
        404,
        "NotFound",
        "namespaces \"missing\" not found",
    );
    check_error(
        env.create(env.namespaces(), json!({"metadata": {"name": "my.ns"}}))
            .await,
        422,
        "Invalid",
        "Namespace \"my.ns\" is invalid: metadata.name: Invalid value: \"my.ns\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
    // Nothing of the failures was stored.
    assert_eq!(env.names(target, list_options()).await, ["web"]);
    // A resourceVersion that is not a number above zero is ignored, as kube's versioner
    // ignores it; a dry run never reaches the write that refuses one.
    for (name, version) in [("zero", "0"), ("word", "abc")] {
        let body = json!({"metadata": {"name": name, "resourceVersion": version},
            "spec": {"container": {"image": "x"}}});
        let created = env.create(target, body).await.unwrap();
        assert_ne!(created["metadata"]["resourceVersion"], version);
    }
    let dry_run = WriteOptions {
        dry_run: true,
        ..WriteOptions::default()
    };
    let body = json!({"metadata": {"name": "dry", "resourceVersion": "3"},
        "spec": {"container": {"image": "x"}}});
    assert!(env.registry.create(target, body, &dry_run).await.is_ok());
}

#[tokio::test]
async fn unknown_fields_warn_or_fail_per_field_validation() {
    let env = env().await;
    let body = json!({"metadata": {"name": "w"}, "spec": {"container": {"image": "x", "imag": "y"}, "extra": 1}});
    let written = (env.registry)
        .create(
            env.webapps("v1", "default"),
            body.clone(),
            &WriteOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        written.warnings,
        [
            "unknown field \"spec.container.imag\"",
            "unknown field \"spec.extra\""
        ]
    );
    assert_eq!(
        written.clone().into_object().unwrap()["spec"].get("extra"),
        None
    );
    let strict = WriteOptions {
        field_validation: FieldValidation::Strict,
        ..WriteOptions::default()
    };
    check_error(
        env.registry
            .create(env.webapps("v1", "default"), body, &strict)
            .await,
        400,
        "BadRequest",
        "WebApp in version \"v1\" cannot be handled as a WebApp: strict decoding error: unknown field \"spec.container.imag\", unknown field \"spec.extra\"",
    );
}

#[tokio::test]
async fn generate_name_draws_kubes_suffix_and_dry_run_stores_nothing() {
    let env = env().await;
    let target = env.configmaps("default");
    let body = json!({"metadata": {"generateName": "cfg-"}, "data": {"a": "b"}});
    let first = env.create(target, body.clone()).await.unwrap();
    let second = env.create(target, body.clone()).await.unwrap();
    for object in [&first, &second] {
        let name = name(object);
        assert!(name.starts_with("cfg-") && name.len() == 9, "{name}");
        assert_eq!(object["metadata"]["generateName"], "cfg-");
    }
    assert_ne!(name(&first), name(&second));

    let revision = env.storage.current_revision().await.unwrap();
    let dry = WriteOptions {
        dry_run: true,
        ..WriteOptions::default()
    };
    let written = env
        .registry
        .create(target, configmap("dry", json!({})), &dry)
        .await
        .unwrap();
    assert_eq!(name(&written.clone().into_object().unwrap()), "dry");
    assert_eq!(
        written.clone().into_object().unwrap()["metadata"].get("resourceVersion"),
        None
    );
    assert_eq!(env.storage.current_revision().await.unwrap(), revision);
    check_error(
        env.get(target, "dry").await,
        404,
        "NotFound",
        "configmaps \"dry\" not found",
    );
}
