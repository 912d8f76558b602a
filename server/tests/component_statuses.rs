//! ComponentStatuses (`kubectl get componentstatuses`), as kube 1.32 serves them: read
//! only, each a probe made when read (the controller manager and the scheduler at their
//! default ports on 127.0.0.1, the storage), listed and got by kubectl 1.32 and 1.20;
//! never created; a name nobody probes answered as kube answers it.

use crate::support;

use serde_json::Value;
use support::{Backend, Kubectl, Server, Version};

support::on_both_backends! {
    component_statuses_are_probes_made_when_read => probes_made_when_read();
}

/// The `Healthy` condition of a ComponentStatus.
fn healthy(status: &Value) -> &Value {
    let conditions = status["conditions"].as_array().expect("conditions");
    assert_eq!(conditions.len(), 1, "{status}");
    assert_eq!(conditions[0]["type"], "Healthy", "{status}");
    &conditions[0]
}

fn probes_made_when_read(backend: Backend) {
    let server = Server::start_on(backend);
    let storage = match backend {
        Backend::Etcd => "etcd-0",
        Backend::Embedded => "storage-0",
    };
    for version in [Version::V1_32, Version::V1_20] {
        let kubectl = Kubectl::new(version, &server);
        let list = kubectl
            .ok(&["get", "componentstatuses", "-o", "json"])
            .json();
        let items = list["items"].as_array().expect("items");
        let mut names: Vec<&str> = (items.iter())
            .map(|item| item["metadata"]["name"].as_str().expect("name"))
            .collect();
        names.sort_unstable();
        let mut expected = vec!["controller-manager", "scheduler", storage];
        expected.sort_unstable();
        assert_eq!(names, expected, "{list}");
        for item in items {
            assert_eq!(item["kind"], "ComponentStatus", "{item}");
            let condition = healthy(item);
            let name = item["metadata"]["name"].as_str().expect("name");
            if name == storage {
                assert_eq!(condition["status"], "True", "{item}");
                assert_eq!(condition["message"], "ok", "{item}");
                continue;
            }
            // Probed at kube's default ports: whatever runs there (on CI, nothing) says.
            let port = if name == "scheduler" { 10259 } else { 10257 };
            match condition["status"].as_str() {
                Some("True") => {}
                Some("False") => {
                    let message = condition["message"].as_str().expect("message");
                    let url = format!("Get \"https://127.0.0.1:{port}/healthz\": ");
                    assert!(message.starts_with(&url), "{item}");
                }
                other => panic!("{name}: status {other:?}: {item}"),
            }
        }
        // The short name, the table kubectl prints, and kube's deprecation warning.
        let printed = kubectl.ok(&["get", "cs"]);
        assert!(printed.stdout.contains(storage), "{}", printed.stdout);
        let warning = "Warning: v1 ComponentStatus is deprecated in v1.19+";
        assert!(printed.stderr.contains(warning), "{}", printed.stderr);
        let one = kubectl.ok(&["get", "cs", storage, "-o", "json"]).json();
        assert_eq!(healthy(&one)["status"], "True", "{one}");
    }

    let client = server.client();
    let collection = "/api/v1/componentstatuses";
    // Selected by name, as kube's list filters them.
    let by_name = client
        .get(&format!(
            "{collection}?fieldSelector=metadata.name%3D{storage}"
        ))
        .unwrap()
        .json();
    let items = by_name["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{by_name}");
    assert_eq!(items[0]["metadata"]["name"], storage);
    let labelled = client
        .get(&format!("{collection}?labelSelector=tier%3Dcontrol"))
        .unwrap()
        .json();
    assert_eq!(labelled["items"], serde_json::json!([]), "{labelled}");

    // A name nobody probes: kube's plain error, a 500 of no reason.
    let unknown = client.get(&format!("{collection}/nope")).unwrap();
    assert_eq!(unknown.status, 500, "{unknown:?}");
    let status = unknown.json();
    assert_eq!(status["message"], "Component not found: nope", "{status}");
    assert!(status.get("reason").is_none(), "{status}");

    // Read only: no create, no watch, and discovery says so.
    let body = serde_json::json!({
        "apiVersion": "v1", "kind": "ComponentStatus", "metadata": {"name": "mine"},
    });
    let created = client.post(collection, &body).unwrap();
    assert_eq!(created.status, 405, "{created:?}");
    let watch = client.get(&format!("{collection}?watch=true")).unwrap();
    assert_eq!(watch.status, 405, "{watch:?}");
    let discovery = client.get("/api/v1").unwrap().json();
    let resource = (discovery["resources"].as_array().expect("resources"))
        .iter()
        .find(|r| r["name"] == "componentstatuses")
        .cloned()
        .expect("componentstatuses in discovery");
    assert_eq!(
        resource["verbs"],
        serde_json::json!(["get", "list"]),
        "{resource}"
    );
    assert_eq!(
        resource["shortNames"],
        serde_json::json!(["cs"]),
        "{resource}"
    );
}
