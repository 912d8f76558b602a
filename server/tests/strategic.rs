//! Strategic merge patch for custom kinds, with kubectl 1.32 and 1.20 against the real
//! `kapi-server`: `kubectl patch` (strategic by default) merges `container.ports` by
//! `containerPort` and honours `$patch: delete`; `kubectl edit` with a scripted editor;
//! client-side `kubectl apply`'s three-way merge keeps an item someone else added and
//! removes one dropped from the manifest. kubectl knows how to merge from the
//! `x-kubernetes-patch-*` extensions of the published OpenAPI documents, which the server
//! derives from the list types, as it derives its own merging.

use crate::support;

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

/// A ValidatingWebhookConfiguration of two webhooks, the first with `failurePolicy` and the
/// second with `timeoutSeconds` given, in `order` (names `first`, `second`).
fn webhooks(first_policy: &str, second_timeout: u32, order: [&str; 2]) -> String {
    let webhook = |name: &str| {
        let (policy, timeout) = match name {
            "first" => (first_policy, 5),
            _ => ("Fail", second_timeout),
        };
        format!(
            "- name: {name}.example.com\n  \
             clientConfig: {{url: \"https://127.0.0.1:9/{name}\"}}\n  \
             rules: [{{operations: [CREATE], apiGroups: [widgets.example.com], apiVersions: [v1], \
             resources: [widgets]}}]\n  \
             failurePolicy: {policy}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n  \
             timeoutSeconds: {timeout}\n"
        )
    };
    format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n\
         metadata: {{name: checks}}\nwebhooks:\n{}{}",
        webhook(order[0]),
        webhook(order[1])
    )
}

/// Client-side `kubectl apply` of changed webhook configurations: kubectl's strategic merge
/// patch names the webhooks (merged by `name`) in `$setElementOrder/webhooks` and carries only
/// the changed fields of each, which the server orders by their names. The results are the
/// ones kube-apiserver 1.20.2 (the peer of `shared/peer/`) gave to the same three applies, with
/// kubectl 1.32 and with 1.20. And a WebApp's ports, reordered in its manifest, take the
/// manifest's order, as kube orders them.
fn client_side_apply_of_changed_lists(version: Version) {
    let (_server, kubectl) = start(version);
    let summary = |kubectl: &Kubectl| {
        let object = kubectl
            .ok(&[
                "get",
                "validatingwebhookconfiguration",
                "checks",
                "-o",
                "json",
            ])
            .json();
        (object["webhooks"].as_array().unwrap().iter())
            .map(|w| {
                let name = w["name"].as_str().unwrap().to_owned();
                let policy = w["failurePolicy"].as_str().unwrap().to_owned();
                (name, policy, w["timeoutSeconds"].as_i64().unwrap())
            })
            .collect::<Vec<_>>()
    };
    let hook = |name: &str, policy: &str, timeout: i64| {
        (format!("{name}.example.com"), policy.to_owned(), timeout)
    };
    for (file, manifest, expected) in [
        (
            "a.yaml",
            webhooks("Fail", 5, ["first", "second"]),
            [hook("first", "Fail", 5), hook("second", "Fail", 5)],
        ),
        (
            "b.yaml",
            webhooks("Ignore", 7, ["first", "second"]),
            [hook("first", "Ignore", 5), hook("second", "Fail", 7)],
        ),
        (
            "c.yaml",
            webhooks("Fail", 5, ["second", "first"]),
            [hook("second", "Fail", 5), hook("first", "Fail", 5)],
        ),
    ] {
        let manifest = kubectl.write_file(file, &manifest);
        kubectl.ok(&["apply", "-f", &manifest]);
        assert_eq!(summary(&kubectl), expected, "after {file}");
    }

    let first = kubectl.write_file("first.yaml", &webapp(2, &[(80, "http"), (81, "alt")]));
    kubectl.ok(&["apply", "-f", &first]);
    let reordered = kubectl.write_file("reordered.yaml", &webapp(2, &[(81, "alt"), (80, "http")]));
    kubectl.ok(&["apply", "-f", &reordered]);
    assert_eq!(ports(&kubectl), named(&[(81, "alt"), (80, "http")]));
}

for_both_versions! {
    client_side_apply_of_changed_lists => kubectl_1_32_client_side_apply_of_changed_lists,
        kubectl_1_20_client_side_apply_of_changed_lists;
    patch_merges_list_maps_by_key => kubectl_1_32_patch_merges_list_maps_by_key,
        kubectl_1_20_patch_merges_list_maps_by_key;
    edit_with_a_scripted_editor => kubectl_1_32_edit_with_a_scripted_editor,
        kubectl_1_20_edit_with_a_scripted_editor;
    client_side_apply_three_way_merges_lists => kubectl_1_32_client_side_apply_three_way_merges_lists,
        kubectl_1_20_client_side_apply_three_way_merges_lists;
}
