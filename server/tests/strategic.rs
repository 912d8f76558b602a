//! Strategic merge patch for custom kinds, with kubectl 1.32 and 1.20 against the real
//! `kapi-server`: `kubectl patch` (strategic by default) merges `container.ports` by
//! `containerPort` and honours `$patch: delete`; `kubectl edit` with a scripted editor;
//! client-side `kubectl apply`'s three-way merge keeps an item someone else added and
//! removes one dropped from the manifest. kubectl knows how to merge from the
//! `x-kubernetes-patch-*` extensions of the published OpenAPI documents, which the server
//! derives from the list types, as it derives its own merging.

mod support;

use serde_json::{Value, json};
use support::{Kubectl, Server, Version, for_both_versions};

fn start(version: Version) -> (Server, Kubectl) {
    version.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    (server, kubectl)
}

/// A WebApp manifest with `replicas` and one port per `(containerPort, name)`.
fn webapp(replicas: i32, ports: &[(i32, &str)]) -> String {
    let ports: Vec<String> = (ports.iter())
        .map(|(port, name)| format!("    - {{containerPort: {port}, name: {name}}}\n"))
        .collect();
    format!(
        "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata: {{name: web}}\nspec:\n  \
         replicas: {replicas}\n  container:\n    image: nginx:1.27\n    ports:\n{}",
        ports.concat()
    )
}

fn object(kubectl: &Kubectl) -> Value {
    kubectl.ok(&["get", "wa", "web", "-o", "json"]).json()
}

/// The `(containerPort, name)` of each port, in order.
fn ports(kubectl: &Kubectl) -> Vec<(i64, String)> {
    let object = object(kubectl);
    (object["spec"]["container"]["ports"]
        .as_array()
        .into_iter()
        .flatten())
    .map(|p| {
        let name = p["name"].as_str().unwrap_or_default().to_owned();
        (p["containerPort"].as_i64().unwrap_or_default(), name)
    })
    .collect()
}

fn named(ports: &[(i64, &str)]) -> Vec<(i64, String)> {
    ports.iter().map(|(p, n)| (*p, (*n).to_owned())).collect()
}

fn patch_merges_list_maps_by_key(version: Version) {
    let (_server, kubectl) = start(version);
    let manifest = kubectl.write_file("web.yaml", &webapp(2, &[(80, "http")]));
    kubectl.ok(&["create", "-f", &manifest]);

    // A new item merges in (kube puts items new to the list first).
    kubectl.ok(&[
        "patch",
        "wa",
        "web",
        "-p",
        r#"{"spec":{"container":{"ports":[{"containerPort":81,"name":"alt"}]}}}"#,
    ]);
    assert_eq!(ports(&kubectl), named(&[(81, "alt"), (80, "http")]));
    // An existing item is merged into, matched by its key.
    kubectl.ok(&[
        "patch",
        "wa",
        "web",
        "-p",
        r#"{"spec":{"container":{"ports":[{"containerPort":80,"protocol":"UDP"}]}}}"#,
    ]);
    assert_eq!(ports(&kubectl), named(&[(81, "alt"), (80, "http")]));
    assert_eq!(
        object(&kubectl)["spec"]["container"]["ports"][1]["protocol"],
        "UDP"
    );
    // `$patch: delete` removes one item.
    kubectl.ok(&[
        "patch",
        "wa",
        "web",
        "--type=strategic",
        "-p",
        r#"{"spec":{"container":{"ports":[{"containerPort":81,"$patch":"delete"}]}}}"#,
    ]);
    assert_eq!(ports(&kubectl), named(&[(80, "http")]));
    // Maps merge too: the other fields stay.
    let after = object(&kubectl);
    assert_eq!(after["spec"]["replicas"], 2);
    assert_eq!(after["spec"]["container"]["image"], "nginx:1.27");
    assert_eq!(after["spec"]["container"]["ports"][0]["protocol"], "UDP");
    // A bad directive is kube's error.
    kubectl
        .fails(&["patch", "wa", "web", "-p", r#"{"spec":{"$patch":"merge"}}"#])
        .stderr_has("unknown patch type: merge in map: map[$patch:merge]");
}

fn edit_with_a_scripted_editor(version: Version) {
    let (_server, kubectl) = start(version);
    let manifest = kubectl.write_file("web.yaml", &webapp(2, &[(80, "http"), (81, "alt")]));
    kubectl.ok(&["create", "-f", &manifest]);
    let edit = kubectl.run_with_env(
        &[(
            "KUBE_EDITOR",
            "sed -i -e s/nginx:1.27/nginx:1.28/ -e /replicas:/s/2/4/",
        )],
        &["edit", "wa", "web"],
    );
    edit.check(edit.succeeded(), "kubectl edit should succeed");
    edit.stdout_has("webapp.apps.example.dev/web edited");
    let after = object(&kubectl);
    assert_eq!(after["spec"]["container"]["image"], "nginx:1.28");
    assert_eq!(after["spec"]["replicas"], 4);
    assert_eq!(ports(&kubectl), named(&[(80, "http"), (81, "alt")]));
}

fn client_side_apply_three_way_merges_lists(version: Version) {
    let (_server, kubectl) = start(version);
    let first = kubectl.write_file("first.yaml", &webapp(2, &[(80, "http")]));
    kubectl.ok(&["apply", "-f", &first]);
    // Someone else adds a port the manifest never had.
    kubectl.ok(&[
        "patch",
        "wa",
        "web",
        "-p",
        r#"{"spec":{"container":{"ports":[{"containerPort":9090,"name":"metrics"}]}}}"#,
    ]);
    // The manifest gains a port: the other writer's stays (kubectl 1.32 sends a strategic
    // merge patch built from the published merge keys). kubectl 1.20 builds a JSON merge
    // patch for every kind it was not compiled with (its `apply.go` falls back when its
    // scheme lacks the kind), which replaces the list, against kube-apiserver too.
    let second = kubectl.write_file("second.yaml", &webapp(3, &[(80, "http"), (82, "admin")]));
    kubectl.ok(&["apply", "-f", &second]);
    let mut got = ports(&kubectl);
    got.sort();
    let kept = match version {
        Version::V1_32 => named(&[(80, "http"), (82, "admin"), (9090, "metrics")]),
        Version::V1_20 => named(&[(80, "http"), (82, "admin")]),
    };
    assert_eq!(got, kept);
    assert_eq!(object(&kubectl)["spec"]["replicas"], 3);
    // The manifest drops a port it had: it goes; the other writer's still stays.
    let third = kubectl.write_file("third.yaml", &webapp(3, &[(82, "admin")]));
    kubectl.ok(&["apply", "-f", &third]);
    let mut got = ports(&kubectl);
    got.sort();
    let kept = match version {
        Version::V1_32 => named(&[(82, "admin"), (9090, "metrics")]),
        Version::V1_20 => named(&[(82, "admin")]),
    };
    assert_eq!(got, kept);
    assert_eq!(
        object(&kubectl)["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .map(|text| serde_json::from_str::<Value>(text).expect("JSON")["spec"]["container"]["ports"].clone()),
        Some(json!([{"containerPort": 82, "name": "admin"}]))
    );
}

for_both_versions! {
    patch_merges_list_maps_by_key => kubectl_1_32_patch_merges_list_maps_by_key,
        kubectl_1_20_patch_merges_list_maps_by_key;
    edit_with_a_scripted_editor => kubectl_1_32_edit_with_a_scripted_editor,
        kubectl_1_20_edit_with_a_scripted_editor;
    client_side_apply_three_way_merges_lists => kubectl_1_32_client_side_apply_three_way_merges_lists,
        kubectl_1_20_client_side_apply_three_way_merges_lists;
}
