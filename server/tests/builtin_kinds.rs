//! Kubernetes' built-in API (`kapi-builtin`, generated from k8s.io/api): kubectl lists
//! every GA resource kube 1.32 serves, as kube's own discovery lists them (recorded in
//! `apigen/inputs/kube-1.32-resources.json`), and kubectl 1.32 and 1.20 apply, read, list,
//! watch, patch (strategic, merge, JSON), apply server-side and delete an object of each
//! kind; its typed generators send protobuf bodies.

use crate::support;

use serde_json::{Value, json};
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

/// The flags that serve every built-in kind: kube's beta APIs off by default, and the
/// resources behind feature gates that are off by default, turned on.
const EVERY_KIND: [&str; 2] = [
    "--feature-gates=MutatingAdmissionPolicy=true",
    "--runtime-config=admissionregistration.k8s.io/v1beta1=true",
];

#[test]
fn kubectl_lists_every_ga_resource_of_kube_1_32() {
    let server = Server::start_with(&EVERY_KIND);
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

support::for_both_versions! {
    every_built_in_kind => kubectl_1_32_writes_and_reads_each_built_in_kind,
        kubectl_1_20_writes_and_reads_each_built_in_kind;
}

/// The test object's name for a resource: one per version (`sample-v1`), so that a kind
/// served in two versions (HorizontalPodAutoscalers) has an object written through each;
/// one of its own for a kind stored with another (`events.k8s.io` Events are the core
/// Events: the same name would be the same object).
fn sample(resource: &Value) -> String {
    let group_version = resource["groupVersion"].as_str().expect("groupVersion");
    let version = group_version.rsplit('/').next().unwrap_or(group_version);
    match resource.get("storedWith") {
        Some(_) => format!(
            "sample-{}-{version}",
            resource["plural"].as_str().expect("plural")
        ),
        None => format!("sample-{version}"),
    }
}

/// A pod template that kube's rules accept, as YAML at the top level (its pods labelled
/// `app: sample`); callers indent it where they embed it.
const TEMPLATE: &str = "template:\n  metadata:\n    labels:\n      app: sample\n  spec:\n    containers:\n    - name: app\n      image: nginx\n";

/// What an object of a kind needs beside its metadata to be valid, as YAML at the top
/// level: the kinds whose rules kapi checks (kube's rules).
fn body(resource: &Value) -> String {
    let selected = |under: &str| {
        let template = TEMPLATE.replace('\n', &format!("\n{under}"));
        format!(
            "{under}selector:\n{under}  matchLabels:\n{under}    app: sample\n{under}{template}"
        )
    };
    let kind = (resource["groupVersion"].as_str(), resource["kind"].as_str());
    let spec = match kind {
        (Some("apps/v1"), Some("Deployment" | "ReplicaSet" | "DaemonSet")) => selected("  "),
        (Some("apps/v1"), Some("StatefulSet")) => {
            format!("  serviceName: sample\n{}", selected("  "))
        }
        (Some("v1"), Some("ReplicationController")) => {
            let template = TEMPLATE.replace('\n', "\n  ");
            format!("  selector:\n    app: sample\n  {template}")
        }
        (Some("batch/v1"), Some("Job")) => {
            let template = TEMPLATE.replace("containers:", "restartPolicy: Never\n    containers:");
            format!("  {}", template.replace('\n', "\n  "))
        }
        (Some("batch/v1"), Some("CronJob")) => {
            let template = TEMPLATE.replace("containers:", "restartPolicy: Never\n    containers:");
            let template = template.replace('\n', "\n      ");
            format!("  schedule: \"@hourly\"\n  jobTemplate:\n    spec:\n      {template}")
        }
        (Some("v1"), Some("Pod")) => "  containers:\n  - name: app\n    image: nginx\n".into(),
        (Some("v1"), Some("Service")) => "  ports:\n  - port: 80\n".into(),
        (Some("v1"), Some("PersistentVolumeClaim")) => {
            "  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n"
                .into()
        }
        (Some("networking.k8s.io/v1"), Some("Ingress")) => {
            "  defaultBackend:\n    service:\n      name: web\n      port:\n        number: 80\n"
                .into()
        }
        (Some("v1"), Some("PersistentVolume")) => {
            "  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n  hostPath:\n    path: /data\n"
                .into()
        }
        (Some("networking.k8s.io/v1"), Some("IngressClass")) => {
            "  controller: example.com/ingress\n".into()
        }
        (Some("storage.k8s.io/v1"), Some("VolumeAttachment")) => {
            "  attacher: disk.example.com\n  nodeName: node-1\n  source:\n    persistentVolumeName: pv-1\n"
                .into()
        }
        // A policy that holds for every ConfigMap, and its binding.
        (Some("admissionregistration.k8s.io/v1"), Some("ValidatingAdmissionPolicy")) => {
            "  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"\"]\n      \
             apiVersions: [v1]\n      operations: [CREATE]\n      resources: [configmaps]\n  \
             validations:\n  - expression: \"true\"\n"
                .into()
        }
        (Some("admissionregistration.k8s.io/v1"), Some("ValidatingAdmissionPolicyBinding")) => {
            "  policyName: sample-v1\n  validationActions: [Audit]\n".into()
        }
        // A policy that changes no ConfigMap, and its binding.
        (Some("admissionregistration.k8s.io/v1beta1"), Some("MutatingAdmissionPolicy")) => {
            "  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"\"]\n      \
             apiVersions: [v1]\n      operations: [CREATE]\n      resources: [configmaps]\n  \
             reinvocationPolicy: Never\n  mutations:\n  - patchType: ApplyConfiguration\n    \
             applyConfiguration:\n      expression: \"Object{}\"\n"
                .into()
        }
        (Some("admissionregistration.k8s.io/v1beta1"), Some("MutatingAdmissionPolicyBinding")) => {
            "  policyName: sample-v1beta1\n".into()
        }
        (Some("autoscaling/v1" | "autoscaling/v2"), Some("HorizontalPodAutoscaler")) => {
            "  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n  maxReplicas: 3\n"
                .into()
        }
        _ => String::new(),
    };
    if !spec.is_empty() {
        // The indented template leaves spaces after its last line: the next document's
        // `---` must start a line.
        return format!("spec:\n{}\n", spec.trim_end());
    }
    if kind == (Some("v1"), Some("PodTemplate")) {
        return TEMPLATE.into();
    }
    match kind {
        (Some("rbac.authorization.k8s.io/v1"), Some("RoleBinding" | "ClusterRoleBinding")) => {
            "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: view\n"
        }
        (Some("node.k8s.io/v1"), Some("RuntimeClass")) => "handler: runc\n",
        (Some("storage.k8s.io/v1"), Some("StorageClass")) => "provisioner: example.com/disk\n",
        (Some("apps/v1"), Some("ControllerRevision")) => "data: {}\nrevision: 1\n",
        // Through `events.k8s.io`, kube's strict rules for new Events.
        (Some("events.k8s.io/v1"), Some("Event")) => {
            "eventTime: \"2026-12-03T01:02:03.000004Z\"\nreportingController: example.dev/test\n\
             reportingInstance: test-1\naction: Tested\nreason: Testing\ntype: Normal\n\
             regarding:\n  kind: Pod\n  namespace: default\n  name: p\n"
        }
        _ => "",
    }
    .into()
}

/// A manifest of one object of each kind, all carrying `labels`.
fn manifest(kinds: &[Value], labels: &str) -> String {
    let mut manifest = String::new();
    for kind in kinds {
        let namespace = match kind["namespaced"].as_bool() == Some(true) {
            true => "  namespace: default\n",
            false => "",
        };
        manifest.push_str(&format!(
            "---\napiVersion: {}\nkind: {}\nmetadata:\n  name: {}\n{namespace}  labels:\n{labels}{}",
            kind["groupVersion"].as_str().expect("groupVersion"),
            kind["kind"].as_str().expect("kind"),
            sample(kind),
            body(kind),
        ));
    }
    manifest
}

/// The objects of the manifest `file` as kubectl reads them (a `List`, in the file's order).
fn read_all(kubectl: &Kubectl, version: Version, file: &str) -> Vec<Value> {
    let mut get = vec!["get", "-f", file, "-o", "json"];
    // kubectl 1.32 leaves managedFields out of what it prints unless asked.
    if version == Version::V1_32 {
        get.push("--show-managed-fields");
    }
    let list = kubectl.ok(&get).json();
    list["items"].as_array().expect("a List").clone()
}

/// kubectl (both versions) creates an object of each built-in kind from YAML with a
/// client-side apply, reads and lists them, watches each while it is patched (strategic),
/// patches them all (merge, JSON), applies them again client- and server-side, and deletes
/// them. What kubectl can do for many objects at once it does once (`-f`): every kubectl
/// run costs a Go program's start.
fn every_built_in_kind(version: Version) {
    let server = Server::start_with(&EVERY_KIND);
    let kubectl = Kubectl::new(version, &server);
    let kinds: Vec<Value> = kube_resources()
        .into_iter()
        .filter(|r| r.get("pending").is_none())
        // Only created, never stored: Bindings against a pod (`builtin_subresources`), the
        // reviews by those who ask (`authorization`, `authentication` tests); only read,
        // never written: ComponentStatuses (`component_statuses`). CustomResourceDefinitions
        // and APIServices, which install kinds and group-versions, have suites of their own
        // (`crds`, `aggregation`).
        .filter(|r| r.get("createOnly").is_none() && r.get("readOnly").is_none())
        .filter(|r| !["crds", "aggregation"].contains(&r["set"].as_str().unwrap_or_default()))
        .collect();
    let first = manifest(&kinds, "    made-by: builtin-kinds-test\n");
    let file = kubectl.write_file("all.yaml", &first);
    kubectl.ok(&["apply", "-f", &file]);
    let objects = read_all(&kubectl, version, &file);
    assert_eq!(objects.len(), kinds.len());
    for (kind, object) in kinds.iter().zip(&objects) {
        let what = format!("{} {}", kind["groupVersion"], kind["kind"]);
        assert_eq!(object["kind"], kind["kind"], "{what}: {object}");
        assert_eq!(
            object["metadata"]["name"].as_str(),
            Some(sample(kind).as_str())
        );
        assert_eq!(
            object["metadata"]["labels"]["made-by"], "builtin-kinds-test",
            "{what}: {object}"
        );
        let applied =
            &object["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"];
        assert!(applied.is_string(), "{what}: {object}");
    }
    // Listed by label, every resource in one request each.
    let resources: Vec<String> = kinds.iter().map(qualified).collect();
    // A kind stored with another is listed with it (the core `events` list has the Events
    // written through `events.k8s.io`).
    let mut unique: Vec<String> = (kinds.iter())
        .filter(|k| k.get("storedWith").is_none())
        .map(qualified)
        .collect();
    unique.dedup();
    let listed = kubectl
        .ok(&[
            "get",
            &unique.join(","),
            "-A",
            "-l",
            "made-by=builtin-kinds-test",
            "-o",
            "name",
        ])
        .stdout
        .lines()
        .count();
    assert_eq!(listed, kinds.len(), "one listed per object");

    // A watch of each object sees its strategic merge patch.
    let waiting = std::time::Duration::from_secs(20);
    for (kind, resource) in kinds.iter().zip(&resources) {
        let name = sample(kind);
        let mark = "jsonpath={.metadata.labels.strategic}{\"\\n\"}";
        let mut watch = kubectl.spawn(&["get", resource, &name, "-n", "default", "-w", "-o", mark]);
        watch.wait_line(waiting, "the object as listed", str::is_empty);
        kubectl.ok(&[
            "patch",
            resource,
            &name,
            "-n",
            "default",
            "--type=strategic",
            "-p",
            r#"{"metadata":{"labels":{"strategic":"yes"}}}"#,
        ]);
        watch.wait_line(waiting, "the strategic patch", |l| l == "yes");
    }
    // Merge and JSON patches, of every object at once.
    kubectl.ok(&[
        "patch",
        "-f",
        &file,
        "--type=merge",
        "-p",
        r#"{"metadata":{"annotations":{"merged":"yes"}}}"#,
    ]);
    kubectl.ok(&[
        "patch",
        "-f",
        &file,
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/metadata/annotations/json","value":"yes"}]"#,
    ]);
    for (kind, object) in kinds.iter().zip(read_all(&kubectl, version, &file)) {
        let metadata = &object["metadata"];
        let marks = (
            &metadata["labels"]["strategic"],
            &metadata["annotations"]["merged"],
            &metadata["annotations"]["json"],
        );
        assert_eq!(
            marks,
            (&json!("yes"), &json!("yes"), &json!("yes")),
            "{kind}"
        );
    }

    // Applied again client-side: the label changes on each object.
    let second = manifest(
        &kinds,
        "    made-by: builtin-kinds-test\n    applied: client\n",
    );
    let file = kubectl.write_file("all.yaml", &second);
    kubectl.ok(&["apply", "-f", &file]);
    // And server-side, by a field manager of its own taking the label over.
    let third = manifest(
        &kinds,
        "    made-by: builtin-kinds-test\n    applied: server\n",
    );
    let file = kubectl.write_file("all.yaml", &third);
    kubectl.ok(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=builtin-kinds-test",
        "-f",
        &file,
    ]);
    for (kind, object) in kinds.iter().zip(read_all(&kubectl, version, &file)) {
        assert_eq!(
            object["metadata"]["labels"]["applied"], "server",
            "{kind}: {object}"
        );
        let managers: Vec<&str> = (object["metadata"]["managedFields"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|m| m["manager"].as_str())
            .collect();
        assert!(
            managers.contains(&"builtin-kinds-test"),
            "{kind}: {managers:?}"
        );
    }
    // A claim and a volume keep kube's protection finalizers (StorageObjectInUseProtection),
    // which kube's controllers remove once nothing uses them; kapi runs none of those
    // controllers, as envtest: the test takes them off.
    kubectl.ok(&["delete", "-f", &file, "--wait=false"]);
    for kind in ["persistentvolumeclaim", "persistentvolume"] {
        let no_finalizers = r#"{"metadata":{"finalizers":null}}"#;
        kubectl.ok(&[
            "patch",
            kind,
            "sample-v1",
            "--type=merge",
            "-p",
            no_finalizers,
        ]);
    }
    // (The namespace goes once its controller emptied it.)
    let left = || {
        kubectl
            .ok(&["get", "-f", &file, "--ignore-not-found", "-o", "name"])
            .stdout
    };
    support::wait_for(
        std::time::Duration::from_secs(30),
        "nothing to be left",
        left,
        || left().trim().is_empty().then_some(()),
    );
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

/// What kube-apiserver makes at start: its system namespaces and PriorityClasses, written
/// by `kube-apiserver`, and the readiness hook that says the classes are there.
#[test]
fn the_server_makes_kubes_system_objects() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let names = kubectl.ok(&["get", "namespaces", "-o", "name"]);
    for namespace in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(
            names
                .stdout
                .lines()
                .any(|l| l == format!("namespace/{namespace}")),
            "{namespace} in {}",
            names.stdout
        );
    }
    let classes = kubectl
        .ok(&[
            "get",
            "priorityclasses",
            "-o",
            "json",
            "--show-managed-fields",
        ])
        .json();
    let classes: Vec<(&str, &Value, &str, &str)> = (classes["items"].as_array().unwrap().iter())
        .map(|c| {
            let manager = c["metadata"]["managedFields"][0]["manager"]
                .as_str()
                .unwrap_or("");
            let policy = c["preemptionPolicy"].as_str().unwrap_or("");
            (
                c["metadata"]["name"].as_str().unwrap(),
                &c["value"],
                policy,
                manager,
            )
        })
        .collect();
    assert_eq!(
        classes,
        [
            (
                "system-cluster-critical",
                &json!(2_000_000_000),
                "PreemptLowerPriority",
                "kube-apiserver"
            ),
            (
                "system-node-critical",
                &json!(2_000_001_000),
                "PreemptLowerPriority",
                "kube-apiserver"
            ),
        ]
    );
    let ready = server.client().get("/readyz?verbose").unwrap();
    assert!(
        ready
            .body
            .contains("[+]poststarthook/scheduling/bootstrap-system-priority-classes ok"),
        "{}",
        ready.body
    );
    // The system classes cannot be deleted (kube's PriorityClass storage).
    kubectl
        .fails(&["delete", "priorityclass", "system-node-critical"])
        .stderr_has(
            "priorityclasses.scheduling.k8s.io \"system-node-critical\" is forbidden: this is a \
             system priority class and cannot be deleted",
        );
}

/// kube-controller-manager's root CA publisher: with a client CA, every namespace holds
/// `kube-root-ca.crt` with it, a new one within moments, and a changed one is put back.
#[test]
fn every_namespace_holds_the_root_ca() {
    let server = Server::start_secure(support::pki::Pki::new(), support::Backend::Embedded, &[]);
    let client = server.client();
    let ca = String::from_utf8(server.pki().ca_pem()).unwrap();
    let root_ca = |namespace: &str| {
        let response = client
            .get(&format!(
                "/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt"
            ))
            .ok()?;
        (response.status == 200).then(|| response.json())
    };
    let wait = |namespace: &str, what: &str| {
        support::wait_for(
            std::time::Duration::from_secs(20),
            what,
            String::new,
            || root_ca(namespace).filter(|map| map["data"]["ca.crt"] == ca.as_str()),
        )
    };
    let published = wait("kube-system", "kube-system's kube-root-ca.crt");
    assert!(
        published["metadata"]["annotations"]["kubernetes.io/description"]
            .as_str()
            .unwrap()
            .starts_with("Contains a CA bundle that can be used to verify the kube-apiserver"),
        "{published}"
    );
    let created = client
        .post(
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}}),
        )
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    wait("fresh", "the new namespace's kube-root-ca.crt");
    let changed = client
        .merge_patch(
            "/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt",
            &json!({"data": {"ca.crt": "tampered"}}),
        )
        .unwrap();
    assert_eq!(changed.status, 200, "{changed:?}");
    wait("fresh", "kube-root-ca.crt put back");
}
