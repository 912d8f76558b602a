//! kube-apiserver's default admission plugins that kapi implements, through the real
//! binary: `Priority`, `DefaultTolerationSeconds`, `LimitRanger`, `DefaultStorageClass`,
//! `StorageObjectInUseProtection` and `PersistentVolumeClaimResize`, each changing or
//! refusing what kube's does with kube's 403 messages; `--enable-admission-plugins` and
//! `--disable-admission-plugins` under kube's names (envtest's
//! `--disable-admission-plugins=ServiceAccount` accepted).

use crate::support;

use serde_json::{Value, json};
use support::http::Client;
use support::{Kubectl, Server, Version};

const PODS: &str = "/api/v1/namespaces/default/pods";
const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";

fn pod(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("containers").is_none() {
        spec["containers"] = json!([{"name": "app", "image": "nginx"}]);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

fn created(client: &Client, path: &str, body: &Value) -> Value {
    let response = client.post(path, body).unwrap();
    assert_eq!(response.status, 201, "{response:?}");
    response.json()
}

fn refused(client: &Client, path: &str, body: &Value) -> String {
    let response = client.post(path, body).unwrap();
    assert_eq!(response.status, 403, "{response:?}");
    let status = response.json();
    assert_eq!(status["reason"], "Forbidden", "{status}");
    status["message"].as_str().unwrap().to_owned()
}

/// Priority: 0 and `PreemptLowerPriority` without a class, the class's value with one,
/// the global default's when there is one; an unknown class, or a priority the Pod gives
/// that is not its class's, is kube's 403; one global default at most. The creator does
/// not own what admission set.
#[test]
fn pods_get_the_priority_of_their_class() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let plain = created(&client, PODS, &pod("plain", json!({})));
    assert_eq!(plain["spec"]["priority"], 0);
    assert_eq!(plain["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    let owned = plain["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"].clone();
    assert!(
        owned.get("f:priority").is_none() && owned.get("f:tolerations").is_none(),
        "{owned}"
    );
    let critical = created(
        &client,
        PODS,
        &pod(
            "critical",
            json!({"priorityClassName": "system-node-critical"}),
        ),
    );
    assert_eq!(critical["spec"]["priority"], 2_000_001_000);
    assert_eq!(
        refused(
            &client,
            PODS,
            &pod("lost", json!({"priorityClassName": "nope"}))
        ),
        "pods \"lost\" is forbidden: no PriorityClass with name nope was found"
    );
    assert_eq!(
        refused(&client, PODS, &pod("greedy", json!({"priority": 7}))),
        "pods \"greedy\" is forbidden: the integer value of priority (7) must not be provided \
         in pod spec; priority admission controller computed 0 from the given PriorityClass name"
    );
    let classes = "/apis/scheduling.k8s.io/v1/priorityclasses";
    let class = |name: &str, value: i64| {
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "globalDefault": true,
            "preemptionPolicy": "Never"})
    };
    created(&client, classes, &class("everyday", 1000));
    assert_eq!(
        refused(&client, classes, &class("another", 2000)),
        "priorityclasses.scheduling.k8s.io \"another\" is forbidden: PriorityClass everyday is \
         already marked as default. Only one default can exist"
    );
    let defaulted = created(&client, PODS, &pod("defaulted", json!({})));
    assert_eq!(defaulted["spec"]["priorityClassName"], "everyday");
    assert_eq!(defaulted["spec"]["priority"], 1000);
    assert_eq!(defaulted["spec"]["preemptionPolicy"], "Never");
}

/// DefaultTolerationSeconds: the not-ready and unreachable tolerations, 300 s each, but
/// for a Pod that tolerates them already (an empty key tolerates every taint).
#[test]
fn pods_tolerate_unready_nodes_for_five_minutes() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let plain = created(&client, PODS, &pod("plain", json!({})));
    assert_eq!(
        plain["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ])
    );
    let own = json!([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]);
    let partly = created(&client, PODS, &pod("partly", json!({"tolerations": own})));
    let tolerations = partly["spec"]["tolerations"].as_array().unwrap();
    assert_eq!(tolerations.len(), 2, "{tolerations:?}");
    assert_eq!(tolerations[0]["tolerationSeconds"], 60);
    assert_eq!(tolerations[1]["key"], "node.kubernetes.io/not-ready");
    let all = created(
        &client,
        PODS,
        &pod("all", json!({"tolerations": [{"operator": "Exists"}]})),
    );
    assert_eq!(all["spec"]["tolerations"], json!([{"operator": "Exists"}]));
}

/// LimitRanger: a LimitRange's defaults fill what containers lack (and say so in kube's
/// annotation); its bounds refuse a container, a Pod and a claim beyond them (kubectl 1.32
/// and 1.20 show kube's message).
#[test]
fn limit_ranges_default_and_bound_what_pods_and_claims_ask_for() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let ranges = "/api/v1/namespaces/default/limitranges";
    created(
        &client,
        ranges,
        &json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
            "spec": {"limits": [
                {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                    "defaultRequest": {"cpu": "100m"}, "max": {"cpu": "1"}, "min": {"memory": "64Mi"}},
                {"type": "Pod", "max": {"memory": "1Gi"}},
                {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}}]}}),
    );
    let defaulted = created(&client, PODS, &pod("defaulted", json!({})));
    assert_eq!(
        defaulted["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}})
    );
    assert_eq!(
        defaulted["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app"
    );
    let big = json!({"containers": [{"name": "big", "image": "nginx", "resources": {"limits": {"cpu": "2"}}}]});
    for version in [Version::V1_32, Version::V1_20] {
        let kubectl = Kubectl::new(version, &server);
        let file = kubectl.write_file("big.json", &pod("big", big.clone()).to_string());
        kubectl.fails(&["create", "-f", &file]).stderr_has(
            "pods \"big\" is forbidden: maximum cpu usage per Container is 1, but limit is 2",
        );
    }
    let two = json!({"containers": [
        {"name": "a", "image": "nginx", "resources": {"limits": {"memory": "768Mi"}}},
        {"name": "b", "image": "nginx", "resources": {"limits": {"memory": "768Mi"}}}]});
    assert_eq!(
        refused(&client, PODS, &pod("two", two)),
        "pods \"two\" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1536Mi"
    );
    let small = json!({"containers": [{"name": "small", "image": "nginx",
        "resources": {"limits": {"memory": "32Mi"}}}]});
    assert_eq!(
        refused(&client, PODS, &pod("small", small)),
        "pods \"small\" is forbidden: minimum memory usage per Container is 64Mi, but request \
         is 32Mi"
    );
    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "tiny"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "100Mi"}}}});
    assert_eq!(
        refused(&client, CLAIMS, &claim),
        "persistentvolumeclaims \"tiny\" is forbidden: minimum storage usage per \
         PersistentVolumeClaim is 1Gi, but request is 100Mi"
    );
}

/// The storage plugins: a new claim gets the default StorageClass and kube's protection
/// finalizer (a volume its own); a bound claim grows only when its class allows it.
#[test]
fn claims_get_the_default_class_and_grow_only_when_their_class_allows() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let classes = "/apis/storage.k8s.io/v1/storageclasses";
    let class = |name: &str, default: bool, expands: bool| {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name, "annotations": {"storageclass.kubernetes.io/is-default-class": default.to_string()}},
            "provisioner": "example.com/disk", "allowVolumeExpansion": expands})
    };
    created(&client, classes, &class("fixed", false, false));
    created(&client, classes, &class("standard", true, true));
    let claim = |name: &str, class: Option<&str>| {
        let mut claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
        if let Some(class) = class {
            claim["spec"]["storageClassName"] = json!(class);
        }
        claim
    };
    let data = created(&client, CLAIMS, &claim("data", None));
    assert_eq!(data["spec"]["storageClassName"], "standard");
    assert_eq!(
        data["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    let opted_out = created(&client, CLAIMS, &claim("none", Some("")));
    assert_eq!(opted_out["spec"]["storageClassName"], "");
    let volume = created(
        &client,
        "/api/v1/persistentvolumes",
        &json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}}),
    );
    assert_eq!(
        volume["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );

    let grow = |name: &str| {
        client
            .merge_patch(
                &format!("{CLAIMS}/{name}"),
                &json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}}),
            )
            .unwrap()
    };
    // An unbound claim's requests are immutable: validation refuses before admission.
    let unbound = grow("data");
    assert_eq!(unbound.status, 422, "{unbound:?}");
    created(&client, CLAIMS, &claim("fixed", Some("fixed")));
    // Bound as kube's volume controller binds a claim: a volume named, the phase Bound.
    for name in ["data", "fixed"] {
        let named = client
            .merge_patch(
                &format!("{CLAIMS}/{name}"),
                &json!({"spec": {"volumeName": "pv"}}),
            )
            .unwrap();
        assert_eq!(named.status, 200, "{named:?}");
        let bound = client
            .merge_patch(
                &format!("{CLAIMS}/{name}/status"),
                &json!({"status": {"phase": "Bound"}}),
            )
            .unwrap();
        assert_eq!(bound.status, 200, "{bound:?}");
    }
    let fixed = grow("fixed");
    assert_eq!(fixed.status, 403, "{fixed:?}");
    assert_eq!(
        fixed.json()["message"],
        "persistentvolumeclaims \"fixed\" is forbidden: only dynamically provisioned pvc can be \
         resized and the storageclass that provisions the pvc must support resize"
    );
    let grown = grow("data");
    assert_eq!(grown.status, 200, "{grown:?}");
}

/// `--disable-admission-plugins` switches kube's plugins off by their names (envtest's
/// `ServiceAccount` included); enabling one kapi does not implement, an unknown name, or a
/// name in both lists stops the server at start with kube's message.
#[test]
fn admission_plugins_are_chosen_by_kube_names() {
    let server = Server::start_with(&[
        "--disable-admission-plugins=ServiceAccount,Priority,DefaultTolerationSeconds",
    ]);
    let client = Client::new(server.addr());
    let plain = created(&client, PODS, &pod("plain", json!({})));
    assert_eq!(plain["spec"].get("priority"), None, "{plain}");
    assert_eq!(plain["spec"].get("tolerations"), None, "{plain}");

    let start = |args: &[&str]| {
        let (code, stderr) = support::start_refused(args);
        assert_eq!(code, Some(2), "{args:?} started: {stderr}");
        stderr
    };
    let stderr = start(&["--enable-admission-plugins=Priority,Nope"]);
    assert!(
        stderr.contains("enable-admission-plugins plugin \"Nope\" is unknown"),
        "{stderr}"
    );
    let stderr = start(&[
        "--enable-admission-plugins=Priority",
        "--disable-admission-plugins=Priority",
    ]);
    assert!(
        stderr.contains(
            "[Priority] in enable-admission-plugins and disable-admission-plugins overlapped"
        ),
        "{stderr}"
    );
    let stderr = start(&["--enable-admission-plugins=ServiceAccount"]);
    assert!(
        stderr.contains("\"ServiceAccount\" is kube-apiserver's but not implemented by kapi"),
        "{stderr}"
    );
}

/// ResourceQuota: the quota controller keeps a quota's status (hard from spec, used
/// counted, zero where nothing is used); the ResourceQuota plugin charges creates against
/// it, refuses what would exceed it with kube's 403, asks Pods to say what they use of a
/// limited compute resource; deletes give usage back at the controller's next count.
#[test]
fn resource_quotas_count_and_refuse_what_exceeds_them() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let quotas = "/api/v1/namespaces/default/resourcequotas";
    created(
        &client,
        quotas,
        &json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "small"},
            "spec": {"hard": {"count/configmaps": "2", "pods": "1", "limits.cpu": "1", "services.nodeports": "1"}}}),
    );
    let status =
        |client: &Client| client.get(&format!("{quotas}/small")).unwrap().json()["status"].clone();
    // The controller's first count: every hard resource used, kube-root-ca.crt aside.
    let counted = support::wait_for(
        std::time::Duration::from_secs(20),
        "the quota's status",
        || status(&client).to_string(),
        || {
            let status = status(&client);
            (status["hard"]["pods"] == "1").then_some(status)
        },
    );
    assert_eq!(
        counted["used"],
        json!({"count/configmaps": "0", "limits.cpu": "0", "pods": "0", "services.nodeports": "0"})
    );
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let configmap =
        |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    created(&client, configmaps, &configmap("one"));
    created(&client, configmaps, &configmap("two"));
    assert_eq!(
        status(&client)["used"]["count/configmaps"],
        "2",
        "charged at admission"
    );
    assert_eq!(
        refused(&client, configmaps, &configmap("three")),
        "configmaps \"three\" is forbidden: exceeded quota: small, requested: count/configmaps=1, \
         used: count/configmaps=2, limited: count/configmaps=2"
    );
    // A Pod must say what it limits of the CPU the quota limits.
    assert_eq!(
        refused(&client, PODS, &pod("loose", json!({}))),
        "pods \"loose\" is forbidden: failed quota: small: must specify limits.cpu for: app"
    );
    let limited = |name: &str, cpu: &str| {
        pod(
            name,
            json!({"containers": [{"name": "app", "image": "nginx",
            "resources": {"limits": {"cpu": cpu}}}]}),
        )
    };
    created(&client, PODS, &limited("first", "500m"));
    assert_eq!(
        refused(&client, PODS, &limited("second", "100m")),
        "pods \"second\" is forbidden: exceeded quota: small, requested: pods=1, used: pods=1, limited: pods=1"
    );
    // Deleted, the first Pod's usage comes back at the next count.
    assert_eq!(client.delete(&format!("{PODS}/first")).unwrap().status, 200);
    support::wait_for(
        std::time::Duration::from_secs(20),
        "the pod's usage to come back",
        || status(&client).to_string(),
        || (status(&client)["used"]["pods"] == "0").then_some(()),
    );
    created(&client, PODS, &limited("second", "100m"));
    assert_eq!(status(&client)["used"]["limits.cpu"], "100m");
    let nodeport = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
        "spec": {"type": "NodePort", "ports": [{"port": 80}]}})
    };
    created(
        &client,
        "/api/v1/namespaces/default/services",
        &nodeport("np"),
    );
    assert!(
        refused(
            &client,
            "/api/v1/namespaces/default/services",
            &nodeport("np2")
        )
        .contains("exceeded quota: small, requested: services.nodeports=1"),
    );
}

/// PodSecurity: a namespace labelled `enforce=restricted` refuses a privileged Pod with
/// kube's message (kubectl 1.32 and 1.20), admits a compliant one; `warn=baseline` admits
/// with kube's warning; a workload's template is only warned about; an invalid label is
/// refused on the namespace; enforcing a stricter level warns about the Pods already there.
#[test]
fn namespaces_hold_their_pods_to_the_pod_security_standards() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let namespace = |name: &str, labels: Value| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}});
    created(
        &client,
        "/api/v1/namespaces",
        &namespace(
            "locked",
            json!({"pod-security.kubernetes.io/enforce": "restricted"}),
        ),
    );
    created(
        &client,
        "/api/v1/namespaces",
        &namespace(
            "watched",
            json!({"pod-security.kubernetes.io/warn": "baseline"}),
        ),
    );
    let privileged = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx", "securityContext": {"privileged": true}}]}})
    };
    let expected = "pods \"root\" is forbidden: violates PodSecurity \"restricted:latest\": privileged \
        (container \"app\" must not set securityContext.privileged=true), allowPrivilegeEscalation != false \
        (container \"app\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities \
        (container \"app\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true \
        (pod or container \"app\" must set securityContext.runAsNonRoot=true), seccompProfile \
        (pod or container \"app\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")";
    assert_eq!(
        refused(
            &client,
            "/api/v1/namespaces/locked/pods",
            &privileged("root")
        ),
        expected
    );
    for version in [Version::V1_32, Version::V1_20] {
        let kubectl = Kubectl::new(version, &server);
        let file = kubectl.write_file("root.json", &privileged("root").to_string());
        kubectl
            .fails(&["create", "-n", "locked", "-f", &file])
            .stderr_has(expected);
    }
    let compliant = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fine"},
        "spec": {"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "app", "image": "nginx", "securityContext": {
                "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}});
    created(&client, "/api/v1/namespaces/locked/pods", &compliant);

    let warned = client
        .post("/api/v1/namespaces/watched/pods", &privileged("loud"))
        .unwrap();
    assert_eq!(warned.status, 201, "{warned:?}");
    assert_eq!(
        warned.warnings,
        [
            "299 - \"would violate PodSecurity \\\"baseline:latest\\\": privileged (container \\\"app\\\" must not set securityContext.privileged=true)\""
        ]
    );
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
            "spec": {"hostNetwork": true, "containers": [{"name": "app", "image": "nginx"}]}}}});
    let templated = client
        .post("/apis/apps/v1/namespaces/locked/deployments", &deployment)
        .unwrap();
    assert_eq!(
        templated.status, 201,
        "a template is warned about, not refused: {templated:?}"
    );
    assert!(
        templated.warnings[0].contains("would violate PodSecurity \\\"restricted:latest\\\": host namespaces (hostNetwork=true)"),
        "{:?}",
        templated.warnings
    );

    let invalid = client
        .post(
            "/api/v1/namespaces",
            &namespace(
                "odd",
                json!({"pod-security.kubernetes.io/enforce": "strict"}),
            ),
        )
        .unwrap();
    assert_eq!(invalid.status, 422, "{invalid:?}");
    assert_eq!(
        invalid.json()["message"],
        "Namespace \"odd\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted"
    );
    let stricter = client
        .merge_patch(
            "/api/v1/namespaces/watched",
            &json!({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "baseline"}}}),
        )
        .unwrap();
    assert_eq!(stricter.status, 200, "{stricter:?}");
    assert_eq!(
        stricter.warnings,
        [
            "299 - \"existing pods in namespace \\\"watched\\\" violate the new PodSecurity enforce level \\\"baseline:latest\\\"\"",
            "299 - \"loud: privileged\"",
        ]
    );
}

/// RuntimeClass: a Pod naming a class gets its overhead, node selector and tolerations
/// (merged as kube merges them); a node selector contradicting the class's, an overhead
/// of its own, or a class that does not exist is kube's 403 (e2e's "should reject a Pod
/// requesting a RuntimeClass with conflicting node selector").
#[test]
fn pods_get_the_scheduling_and_overhead_of_their_runtime_class() {
    let server = Server::start();
    let client = Client::new(server.addr());
    created(
        &client,
        "/apis/node.k8s.io/v1/runtimeclasses",
        &json!({
            "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": "sandboxed"}, "handler": "runsc",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
            "scheduling": {
                "nodeSelector": {"sandbox": "yes"},
                "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]
            }
        }),
    );
    let pod_of = |name: &str, extra: Value| {
        let mut spec = json!({"runtimeClassName": "sandboxed"});
        for (key, value) in extra.as_object().unwrap() {
            spec[key] = value.clone();
        }
        pod(name, spec)
    };
    let admitted = created(
        &client,
        PODS,
        &pod_of(
            "sandboxed",
            json!({
                "nodeSelector": {"zone": "a"},
                "tolerations": [{"key": "sandbox", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]
            }),
        ),
    );
    let spec = &admitted["spec"];
    assert_eq!(spec["overhead"], json!({"cpu": "250m", "memory": "64Mi"}));
    assert_eq!(spec["nodeSelector"], json!({"sandbox": "yes", "zone": "a"}));
    // The class's `Exists` toleration tolerates a superset of the Pod's `Equal` one.
    let sandbox: Vec<&Value> = (spec["tolerations"].as_array().unwrap().iter())
        .filter(|t| t["key"] == "sandbox")
        .collect();
    assert_eq!(
        sandbox,
        vec![&json!({"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"})]
    );
    assert_eq!(
        refused(
            &client,
            PODS,
            &pod_of("conflict", json!({"nodeSelector": {"sandbox": "no"}}))
        ),
        "pods \"conflict\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; \
         pod.spec.nodeSelector[sandbox] = no"
    );
    assert_eq!(
        refused(
            &client,
            PODS,
            &pod_of("heavy", json!({"overhead": {"cpu": "1"}}))
        ),
        "pods \"heavy\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's \
         defined Overhead"
    );
    assert_eq!(
        refused(
            &client,
            PODS,
            &pod("lost", json!({"runtimeClassName": "missing"}))
        ),
        "pods \"lost\" is forbidden: pod rejected: RuntimeClass \"missing\" not found"
    );
    assert_eq!(
        refused(
            &client,
            PODS,
            &pod("classless", json!({"overhead": {"cpu": "1"}}))
        ),
        "pods \"classless\" is forbidden: pod rejected: Pod Overhead set without corresponding \
         RuntimeClass defined Overhead"
    );
}
