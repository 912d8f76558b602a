//! Kubernetes' built-in API (`kapi-builtin`, generated from k8s.io/api): kubectl lists
//! every GA resource kube 1.32 serves, as kube's own discovery lists them (recorded in
//! `apigen/inputs/kube-1.32-resources.json`), and creates, reads, lists, patches and
//! deletes an object of each kind; its typed generators send protobuf bodies.

use crate::support;

use serde_json::Value;
use support::{Kubectl, Server, Version};

/// kube 1.32's GA resources, as recorded for the generator.
fn kube_resources() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../apigen/inputs/kube-1.32-resources.json"
    );
    let text = std::fs::read_to_string(path).expect("the recorded resources");
    let facts: Value = serde_json::from_str(&text).expect("JSON");
    facts["resources"].as_array().expect("resources").clone()
}

/// `pods`, `deployments.apps`: how `kubectl api-resources -o name` names a resource.
fn qualified(resource: &Value) -> String {
    let plural = resource["plural"].as_str().expect("plural");
    match resource["groupVersion"]
        .as_str()
        .expect("groupVersion")
        .split_once('/')
    {
        Some((group, _)) => format!("{plural}.{group}"),
        None => plural.to_owned(),
    }
}

#[test]
fn kubectl_lists_every_ga_resource_of_kube_1_32() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let listed = kubectl.ok(&["api-resources", "-o", "name"]).stdout.clone();
    let listed: Vec<&str> = listed.lines().collect();
    let missing: Vec<String> = kube_resources()
        .iter()
        .filter(|r| r.get("pending").is_none())
        .map(qualified)
        .filter(|name| !listed.contains(&name.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "not served: {missing:?}\nlisted: {listed:?}"
    );
    // Short names and categories as kube's: `kubectl get all` reaches the workloads.
    kubectl.ok(&["create", "deployment", "web", "--image=nginx"]);
    kubectl.ok(&["get", "deploy", "web"]);
    let all = kubectl.ok(&["get", "all", "-o", "name"]).stdout.clone();
    assert!(all.contains("deployment.apps/web"), "{all}");
}

#[test]
fn kubectl_writes_and_reads_an_object_of_each_built_in_kind() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let kinds: Vec<Value> = kube_resources()
        .into_iter()
        .filter(|r| r.get("pending").is_none() && r.get("declaredByHand").is_none())
        // Bindings are only created against a pod (a later issue binds them).
        .filter(|r| r["kind"] != "Binding")
        .collect();
    let mut manifest = String::new();
    for kind in &kinds {
        let namespace = match kind["namespaced"].as_bool() == Some(true) {
            true => "  namespace: default\n",
            false => "",
        };
        manifest.push_str(&format!(
            "---\napiVersion: {}\nkind: {}\nmetadata:\n  name: sample\n{namespace}  labels:\n    \
             made-by: builtin-kinds-test\n",
            kind["groupVersion"].as_str().expect("groupVersion"),
            kind["kind"].as_str().expect("kind"),
        ));
    }
    let file = kubectl.write_file("all.yaml", &manifest);
    kubectl.ok(&["create", "-f", &file]);
    for kind in &kinds {
        let resource = qualified(kind);
        let object = kubectl
            .ok(&["get", &resource, "sample", "-n", "default", "-o", "json"])
            .json();
        assert_eq!(object["kind"], kind["kind"], "{resource}: {object}");
        assert_eq!(
            object["metadata"]["labels"]["made-by"],
            "builtin-kinds-test"
        );
        kubectl.ok(&["get", &resource, "-A", "-l", "made-by=builtin-kinds-test"]);
        kubectl.ok(&[
            "patch",
            &resource,
            "sample",
            "-n",
            "default",
            "--type=merge",
            "-p",
            r#"{"metadata":{"annotations":{"patched":"yes"}}}"#,
        ]);
        kubectl
            .ok(&[
                "get",
                &resource,
                "sample",
                "-n",
                "default",
                "-o",
                "jsonpath={.metadata.annotations.patched}",
            ])
            .stdout_is("yes");
    }
    kubectl.ok(&["delete", "-f", &file]);
    for kind in &kinds {
        kubectl.fails(&["get", &qualified(kind), "sample", "-n", "default"]);
    }
}

#[test]
fn kubectl_s_typed_generators_send_protobuf() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    kubectl.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    kubectl
        .ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image} {.spec.replicas}",
        ])
        .stdout_is("nginx:1.27 2");
    kubectl.ok(&["create", "service", "clusterip", "web", "--tcp=80:8080"]);
    kubectl
        .ok(&[
            "get",
            "service",
            "web",
            "-o",
            "jsonpath={.spec.ports[0].targetPort}",
        ])
        .stdout_is("8080");
    kubectl.ok(&[
        "create",
        "secret",
        "generic",
        "creds",
        "--from-literal=user=admin",
    ]);
    kubectl
        .ok(&["get", "secret", "creds", "-o", "jsonpath={.data.user}"])
        .stdout_is("YWRtaW4=");
    kubectl.ok(&["create", "job", "once", "--image=busybox", "--", "true"]);
    kubectl.ok(&["create", "serviceaccount", "robot"]);
    kubectl.ok(&[
        "create",
        "cronjob",
        "tick",
        "--image=busybox",
        "--schedule=*/5 * * * *",
    ]);
    kubectl
        .ok(&["get", "cronjob", "tick", "-o", "jsonpath={.spec.schedule}"])
        .stdout_is("*/5 * * * *");
    // Strategic merge on a list merged by key, as kube's `containers` by `name`.
    kubectl.ok(&[
        "patch",
        "deployment",
        "web",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}"#,
    ]);
    kubectl
        .ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].image}",
        ])
        .stdout_is("nginx:1.28");
}
