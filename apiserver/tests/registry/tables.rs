//! Tables: printer columns computed on the hub.

use super::*;

#[tokio::test]
async fn tables_show_printer_columns_computed_on_the_hub() {
    let env = env().await;
    let target = env.webapps("v1beta1", "default");
    let mut body = webapp("web", "nginx:1");
    body["metadata"]["labels"] = json!({"a": "b"});
    env.create(env.webapps("v1", "default"), body)
        .await
        .unwrap();
    let list = env
        .list(
            target,
            ListOptions {
                limit: 10,
                ..list_options()
            },
        )
        .await
        .unwrap();
    let table = env
        .registry
        .table(
            target,
            &list.items.iter().map(|o| o.value()).collect::<Vec<_>>(),
            Some(&list),
            "",
        )
        .unwrap();
    let table = serde_json::to_value(table).unwrap();
    let columns: Vec<_> = (table["columnDefinitions"].as_array().unwrap().iter())
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["type"].as_str().unwrap(),
                c["priority"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        columns,
        [
            ("Name", "string", 0),
            ("Image", "string", 0),
            ("Replicas", "integer", 0),
            ("Ready", "integer", 0),
            ("Paused", "boolean", 1),
            ("Age", "date", 0)
        ]
    );
    assert_eq!(table["columnDefinitions"][0]["format"], "name");
    assert_eq!(
        table["columnDefinitions"][1]["description"],
        "Custom resource definition column (in JSONPath format): .spec.container.image"
    );
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        table["metadata"]["resourceVersion"],
        list.resource_version.as_str()
    );
    let cells = table["rows"][0]["cells"].as_array().unwrap();
    assert_eq!(
        cells[..5],
        [
            json!("web"),
            json!("nginx:1"),
            json!(2),
            Value::Null,
            json!(false)
        ]
    );
    let age = cells[5].as_str().unwrap();
    assert!(
        age.ends_with('s') && age[..age.len() - 1].parse::<u32>().is_ok(),
        "{age}"
    );
    assert_eq!(
        table["rows"][0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": list.items[0].value()["metadata"]})
    );

    let single = env.get(target, "web").await.unwrap();
    let table = env
        .registry
        .table(target, std::slice::from_ref(&single), None, "Object")
        .unwrap();
    assert_eq!(table.rows[0].object.as_ref(), Some(&single));
    assert_eq!(
        table.metadata.resource_version,
        Some(rv(&single).to_string())
    );
    let table = env
        .registry
        .table(target, std::slice::from_ref(&single), None, "None")
        .unwrap();
    assert_eq!(table.rows[0].object, None);
    check_error(
        env.registry.table(target, &[single], None, "Everything"),
        422,
        "Invalid",
        "TableOptions.meta.k8s.io \"\" is invalid: includeObject: Invalid value: \"Everything\": must be 'Metadata', 'Object', 'None', or empty",
    );

    // ConfigMap's Data column counts the entries.
    let cm = env.configmaps("default");
    let created = env
        .create(
            cm,
            json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2", "c": "3"}}),
        )
        .await
        .unwrap();
    let table = env.registry.table(cm, &[created], None, "").unwrap();
    assert_eq!(table.rows[0].cells[..2], [json!("c"), json!(3)]);
    assert_eq!(
        table.column_definitions[1].description,
        "Number of data entries"
    );
}
