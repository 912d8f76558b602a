//! List bytes against their slow path: a list (JSON, Table, protobuf) written from the
//! objects' shared encodings is exactly what encoding the objects one by one gives, from
//! the watch cache, a consistent read and storage, in every version; so the fast paths
//! cannot drift.

use serde_json::{Value, json};

use super::support::http::Client;
use super::support::{Server, wait_for};
use super::{EVENT, WEBAPPS, get, rv, webapp};

/// The bytes of a list are exactly what encoding its objects one by one gives (the slow
/// path: each object as a GET answers it, in a list serialized by serde), in every version,
/// whether the list comes from the watch cache (items shared with it), from a consistent
/// read, or from storage (`Exact`); pretty JSON and YAML hold the same list; Tables from the
/// cache and from storage agree.
#[test]
fn list_bytes_are_the_encoding_of_the_objects_in_every_version() {
    // Also the bytes of single GETs, which send the same shared encodings.
    let server = Server::start();
    let client = Client::new(server.addr());
    let mut created = Vec::new();
    for i in 0..40 {
        let mut object = webapp(
            &format!("w{i:02}"),
            json!({"n": i.to_string()}),
            "nginx:1.27",
        );
        object["spec"]["container"]["env"] = json!([{"name": "K", "value": "é\"\\<>&"}]);
        // Large enough for the list and its Tables to span several chunks of the body.
        if i % 3 == 0 {
            object["metadata"]["annotations"] = json!({"note": "x".repeat(i * 300)});
        }
        let response = client.post(WEBAPPS, &object).unwrap();
        assert_eq!(response.status, 201, "{response:?}");
        created.push(response.json());
    }
    let latest = rv(&get(&client, WEBAPPS));
    cache_reaches(&client, &latest);
    answered_as_read(&client, &created);
    let bytes = |path: &str, accept: &str| {
        let (status, body) = client.get_accepting(path, accept).unwrap();
        assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
        body
    };
    for version in ["v1", "v1beta1"] {
        let path = format!("/apis/apps.example.dev/{version}/namespaces/default/webapps");
        let cached = bytes(&format!("{path}?resourceVersion=0"), "application/json");
        let consistent = bytes(&path, "application/json");
        let exact = bytes(
            &format!("{path}?resourceVersion={latest}&resourceVersionMatch=Exact"),
            "application/json",
        );
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
        assert_eq!(text(&cached), text(&exact), "{version}: cache and storage");
        assert_eq!(
            text(&cached),
            text(&consistent),
            "{version}: consistent read"
        );

        let list: Value = serde_json::from_slice(&cached).unwrap();
        let items: Vec<Value> = (list["items"].as_array().unwrap().iter())
            .map(|item| {
                let name = item["metadata"]["name"].as_str().unwrap();
                // A GET sends the cache's shared bytes: exactly what encoding the object
                // would write.
                let body = bytes(&format!("{path}/{name}"), "application/json");
                let value: Value = serde_json::from_slice(&body).unwrap();
                let mut encoded = serde_json::to_vec(&value).unwrap();
                encoded.push(b'\n');
                assert_eq!(text(&body), text(&encoded), "{version}: GET {name}");
                let pretty = bytes(&format!("{path}/{name}?pretty=true"), "application/json");
                assert_eq!(serde_json::from_slice::<Value>(&pretty).unwrap(), value);
                value
            })
            .collect();
        assert_eq!(items.len(), 40);
        let slow = json!({
            "apiVersion": format!("apps.example.dev/{version}"),
            "kind": "WebAppList",
            "metadata": {"resourceVersion": latest},
            "items": items,
        });
        let mut slow = serde_json::to_vec(&slow).unwrap();
        slow.push(b'\n');
        assert_eq!(
            text(&cached),
            text(&slow),
            "{version}: the objects one by one"
        );

        let pretty: Value =
            serde_json::from_slice(&bytes(&format!("{path}?pretty=true"), "application/json"))
                .unwrap();
        assert_eq!(pretty, list, "{version}: pretty");
        let yaml: Value = serde_yaml_ng::from_slice(&bytes(&path, "application/yaml")).unwrap();
        assert_eq!(yaml, list, "{version}: YAML");

        let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
        let from_cache: Value =
            serde_json::from_slice(&bytes(&format!("{path}?resourceVersion=0"), table)).unwrap();
        let from_storage: Value = serde_json::from_slice(&bytes(
            &format!("{path}?resourceVersion={latest}&resourceVersionMatch=Exact"),
            table,
        ))
        .unwrap();
        let from_cache = without_ages(from_cache);
        assert_eq!(from_cache["rows"].as_array().unwrap().len(), 40);
        assert_eq!(from_cache, without_ages(from_storage), "{version}: Tables");

        // Compact Tables are written from what each object keeps (no decoding); pretty
        // ones are serialized from a Table built anew: the same Table, ages aside, for
        // every `includeObject`, in bytes exactly serde's.
        for include in ["", "&includeObject=Object", "&includeObject=None"] {
            let compact = bytes(&format!("{path}?resourceVersion=0{include}"), table);
            let fast: Value = serde_json::from_slice(&compact).unwrap();
            let mut canonical = serde_json::to_vec(&fast).unwrap();
            canonical.push(b'\n');
            assert_eq!(
                text(&compact),
                text(&canonical),
                "{version}{include}: bytes"
            );
            let pretty = bytes(
                &format!("{path}?resourceVersion=0&pretty=true{include}"),
                table,
            );
            let slow: Value = serde_json::from_slice(&pretty).unwrap();
            assert_eq!(
                without_ages(fast),
                without_ages(slow),
                "{version}{include}: the compact Table is the slow path's"
            );
        }
    }

    // Storage's own decoding: once every object has a newer write in the cache, a list at
    // the old revision decodes each from storage, and must still be the same bytes.
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let versions = ["v1", "v1beta1"].map(|version| {
        let path = format!("/apis/apps.example.dev/{version}/namespaces/default/webapps");
        let list = bytes(&format!("{path}?resourceVersion=0"), "application/json");
        let rows = bytes(&format!("{path}?resourceVersion=0"), table);
        (path, list, rows)
    });
    let mut patched_objects = Vec::new();
    for i in 0..40 {
        let patch = json!({"metadata": {"annotations": {"later": "write"}}});
        let patched = client.merge_patch(&format!("{WEBAPPS}/w{i:02}"), &patch);
        let patched = patched.unwrap();
        assert_eq!(patched.status, 200, "{patched:?}");
        patched_objects.push(patched.json());
    }
    cache_reaches(&client, &rv(&get(&client, WEBAPPS)));
    answered_as_read(&client, &patched_objects);
    for (path, list, rows) in versions {
        let old = format!("{path}?resourceVersion={latest}&resourceVersionMatch=Exact");
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
        assert_eq!(
            text(&bytes(&old, "application/json")),
            text(&list),
            "{path}: decoded from storage"
        );
        let rows_now: Value = serde_json::from_slice(&bytes(&old, table)).unwrap();
        let rows_then: Value = serde_json::from_slice(&rows).unwrap();
        assert_eq!(
            without_ages(rows_now),
            without_ages(rows_then),
            "{path}: Table rows decoded from storage"
        );
    }
}

/// Each object a write answered with (in the storage version: the value it has just
/// stored) is what a GET of it then reads.
fn answered_as_read(client: &Client, written: &[Value]) {
    for object in written {
        let name = object["metadata"]["name"].as_str().unwrap();
        let read = get(client, &format!("{WEBAPPS}/{name}"));
        assert_eq!(&read, object, "{name}: the write's answer and a GET");
    }
}

/// Waits until the webapps' cache answers at `revision`.
fn cache_reaches(client: &Client, revision: &str) {
    wait_for(
        EVENT,
        "the cache to reach the last write",
        String::new,
        || (rv(&get(client, &format!("{WEBAPPS}?resourceVersion=0"))) == revision).then_some(()),
    );
}

/// `table` with its `date` cells emptied (ages move with the clock).
fn without_ages(mut table: Value) -> Value {
    let dates: Vec<usize> = (table["columnDefinitions"].as_array().unwrap().iter())
        .enumerate()
        .filter(|(_, c)| c["type"] == "date")
        .map(|(i, _)| i)
        .collect();
    for row in table["rows"].as_array_mut().unwrap() {
        for &i in &dates {
            row["cells"][i] = Value::Null;
        }
    }
    table
}

/// Protobuf lists (of a kind with a protobuf form) are written from each object's message
/// as a GET sends it: the list's bytes are exactly the envelope around its metadata and
/// those messages, whether it comes from the watch cache, a consistent read or storage.
#[test]
fn protobuf_list_bytes_are_the_messages_of_the_objects() {
    use kapi::api::protobuf::{decode_envelope, encode};
    const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
    let server = Server::start();
    let client = Client::new(server.addr());
    let configmaps = "/api/v1/namespaces/default/configmaps";
    for i in 0..30 {
        let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("c{i:02}"), "labels": {"n": i.to_string()}},
            "data": {"k": "é\"\\<>&".repeat(i)}});
        assert_eq!(client.post(configmaps, &configmap).unwrap().status, 201);
    }
    let latest = rv(&get(&client, configmaps));
    wait_for(
        EVENT,
        "the cache to reach the last create",
        String::new,
        || {
            let cached = get(&client, &format!("{configmaps}?resourceVersion=0"));
            (rv(&cached) == latest).then_some(())
        },
    );
    let bytes = |path: &str| {
        let (status, body) = client.get_accepting(path, PROTOBUF).unwrap();
        assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
        body
    };
    let names: Vec<String> = (0..30).map(|i| format!("c{i:02}")).collect();
    let messages: Vec<Vec<u8>> = (names.iter())
        .map(|name| {
            let body = bytes(&format!("{configmaps}/{name}"));
            let envelope = decode_envelope(&body).unwrap();
            assert_eq!(
                (envelope.api_version.as_str(), envelope.kind.as_str()),
                ("v1", "ConfigMap")
            );
            envelope.raw.to_vec()
        })
        .collect();
    let slow = encode::list(
        "v1",
        "ConfigMapList",
        &json!({"resourceVersion": latest}),
        messages.iter().map(Vec::as_slice),
    )
    .unwrap();
    for query in [
        "?resourceVersion=0".to_owned(),
        String::new(),
        format!("?resourceVersion={latest}&resourceVersionMatch=Exact"),
    ] {
        let fast = bytes(&format!("{configmaps}{query}"));
        assert!(
            fast == slow,
            "{query}: the list is not its objects' messages"
        );
    }
}

/// A write answered as YAML or pretty JSON (decoded from the bytes it stored) is what a
/// GET of the object then reads in that form, and a float in it is the number written.
#[test]
fn writes_answered_as_yaml_or_pretty_json_are_what_a_get_reads() {
    const TENANTS: &str = "/apis/platform.example.dev/v1/tenants";
    let server = Server::start();
    let client = Client::new(server.addr());
    // A float whose inexact parse is one unit off in its last digit.
    let tenant = json!({"apiVersion": "platform.example.dev/v1", "kind": "Tenant",
        "metadata": {"name": "floats"}, "spec": {"quota": {"cpu": 97.02372027944563}}});
    let json_body = "application/json";
    let created = (client.send_accepting(
        "POST",
        TENANTS,
        json_body,
        &tenant.to_string(),
        "application/yaml",
    ))
    .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    assert!(
        created.content_type.starts_with("application/yaml"),
        "{created:?}"
    );
    assert!(
        created.body.contains("cpu: 97.02372027944563"),
        "{}",
        created.body
    );
    let path = format!("{TENANTS}/floats");
    let read = |accept: &str, path: &str| {
        let (status, body) = client.get_accepting(path, accept).unwrap();
        assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
        String::from_utf8(body).unwrap()
    };
    assert_eq!(
        created.body,
        read("application/yaml", &path),
        "the create and a GET"
    );

    let patch = json!({"spec": {"displayName": "Floats"}});
    let pretty = format!("{path}?pretty=true");
    let merge = "application/merge-patch+json";
    let patched = (client.send_raw("PATCH", &pretty, merge, &patch.to_string())).unwrap();
    assert_eq!(patched.status, 200, "{patched:?}");
    assert!(
        patched.body.contains("\n  \"kind\": \"Tenant\""),
        "{}",
        patched.body
    );
    assert!(
        patched.body.contains("97.02372027944563"),
        "{}",
        patched.body
    );
    assert_eq!(
        patched.body,
        read("application/json", &pretty),
        "the patch and a GET"
    );
}
