//! The built-in kinds' subresources beside `status`, as kube 1.32 serves them: a Pod's
//! `binding` (and the `bindings` collection), `eviction` (through `kubectl drain`, and
//! PodDisruptionBudgets), `ephemeralcontainers` (through `kubectl debug`), `log`, `exec`
//! and `proxy` answered as kube answers them when no node can serve them, a CSR's
//! `approval` (through `kubectl certificate approve`), and the apps kinds' `scale` with
//! its selector.

use crate::support;

use serde_json::{Value, json};
use support::{Kubectl, Server, Version};

/// A pod with two containers, unscheduled.
const POD: &str = "
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - {name: app, image: nginx}
  - {name: side, image: busybox}
";

/// A node with no addresses.
const NODE: &str = "
apiVersion: v1
kind: Node
metadata:
  name: node-1
";

fn binding(name: &str, node: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "annotations": {"scheduled-by": "test"}},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    })
}

#[test]
fn pods_are_bound_to_nodes_as_kubes_scheduler_binds_them() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let file = kubectl.write_file("pod.yaml", POD);
    kubectl.ok(&["create", "-f", &file]);
    let client = server.client();
    let pods = "/api/v1/namespaces/default/pods";

    // The name in the body must be the path's.
    let wrong = client
        .post(&format!("{pods}/web/binding"), &binding("other", "node-1"))
        .unwrap();
    assert_eq!(wrong.status, 400, "{wrong:?}");
    assert_eq!(
        wrong.json()["message"],
        "name in URL does not match name in Binding object"
    );
    // A target without a name is kube's plain validation error: a 500 with no reason.
    let mut unnamed = binding("web", "");
    unnamed["target"]["kind"] = json!("Pod");
    let refused = client
        .post(&format!("{pods}/web/binding"), &unnamed)
        .unwrap();
    assert_eq!(refused.status, 500, "{refused:?}");
    let status = refused.json();
    assert_eq!(
        status["message"],
        r#"[target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]"#
    );
    assert!(status.get("reason").is_none(), "{status}");

    let bound = client
        .post(&format!("{pods}/web/binding"), &binding("web", "node-1"))
        .unwrap();
    assert_eq!(bound.status, 201, "{bound:?}");
    assert_eq!(
        bound.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    );
    let pod = kubectl.ok(&["get", "pod", "web", "-o", "json"]).json();
    assert_eq!(pod["spec"]["nodeName"], "node-1");
    assert_eq!(pod["metadata"]["annotations"]["scheduled-by"], "test");
    let scheduled = &pod["status"]["conditions"][0];
    assert_eq!(scheduled["type"], "PodScheduled");
    assert_eq!(scheduled["status"], "True");
    assert!(scheduled["lastTransitionTime"].is_string(), "{pod}");
    // The field selector kube's kubelets watch with finds it.
    kubectl
        .ok(&[
            "get",
            "pods",
            "--field-selector=spec.nodeName=node-1",
            "-o",
            "name",
        ])
        .stdout_is("pod/web");

    // Bound once only.
    let again = client
        .post(&format!("{pods}/web/binding"), &binding("web", "node-2"))
        .unwrap();
    assert_eq!(again.status, 409, "{again:?}");
    assert_eq!(
        again.json()["message"],
        r#"Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1""#
    );

    // The `bindings` collection binds the pod its body names; a stale resourceVersion is a
    // failed precondition.
    let second = POD.replace("name: web", "name: api");
    let file = kubectl.write_file("api.yaml", &second);
    kubectl.ok(&["create", "-f", &file]);
    let mut stale = binding("api", "node-1");
    stale["metadata"]["resourceVersion"] = json!("1");
    let conflict = client
        .post("/api/v1/namespaces/default/bindings", &stale)
        .unwrap();
    assert_eq!(conflict.status, 409, "{conflict:?}");
    let created = client
        .post(
            "/api/v1/namespaces/default/bindings",
            &binding("api", "node-1"),
        )
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    kubectl
        .ok(&["get", "pod", "api", "-o", "jsonpath={.spec.nodeName}"])
        .stdout_is("node-1");
    // Bindings are only created: kube's discovery gives them one verb, and one route.
    let read = client.get("/api/v1/namespaces/default/bindings").unwrap();
    assert_eq!(read.status, 405, "{read:?}");
    let read = client
        .get("/api/v1/namespaces/default/bindings/api")
        .unwrap();
    assert_eq!(read.status, 404, "{read:?}");
    let missing = client
        .post(&format!("{pods}/gone/binding"), &binding("gone", "node-1"))
        .unwrap();
    assert_eq!(missing.status, 404, "{missing:?}");
    assert_eq!(missing.json()["message"], r#"pods "gone" not found"#);
}

#[test]
fn kubectl_drain_evicts_pods_within_their_disruption_budget() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let api = POD
        .replace("name: web", "name: api")
        .replace("app: web", "app: api");
    let manifest = format!("{NODE}---{POD}---{api}");
    let file = kubectl.write_file("objects.yaml", &manifest);
    kubectl.ok(&["create", "-f", &file]);
    let client = server.client();
    let pods = "/api/v1/namespaces/default/pods";
    for name in ["web", "api"] {
        let bound = client
            .post(&format!("{pods}/{name}/binding"), &binding(name, "node-1"))
            .unwrap();
        assert_eq!(bound.status, 201, "{bound:?}");
        kubectl.ok(&[
            "patch",
            "pod",
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}"#,
        ]);
    }
    // A budget with no disruption left refuses, as kube's does: 429 with its cause.
    kubectl.ok(&[
        "create",
        "poddisruptionbudget",
        "web",
        "--selector=app=web",
        "--min-available=2",
    ]);
    kubectl.ok(&[
        "patch", "pdb", "web", "--subresource=status", "--type=merge", "-p",
        r#"{"status":{"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":2,"desiredHealthy":2,"expectedPods":2}}"#,
    ]);
    let eviction = |name: &str| json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}});
    let refused = client
        .post(&format!("{pods}/web/eviction"), &eviction("web"))
        .unwrap();
    assert_eq!(refused.status, 429, "{refused:?}");
    let status = refused.json();
    assert_eq!(status["reason"], "TooManyRequests");
    assert_eq!(
        status["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        status["details"]["causes"][0],
        json!({"reason": "DisruptionBudget", "message": "The disruption budget web needs 2 healthy pods and has 2 currently"})
    );
    // One disruption allowed: the eviction takes it and records the pod.
    kubectl.ok(&[
        "patch",
        "pdb",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"disruptionsAllowed":1}}"#,
    ]);
    let dry = client
        .post(&format!("{pods}/web/eviction?dryRun=All"), &eviction("web"))
        .unwrap();
    assert_eq!(dry.status, 201, "{dry:?}");
    kubectl.ok(&["get", "pod", "web"]);
    // kubectl drain cordons the node and evicts every pod on it (bare pods with --force),
    // with no grace period: no kubelet stops a pod gracefully deleted, so kubectl would
    // wait for ever (as with envtest's kube-apiserver).
    kubectl
        .ok(&[
            "drain",
            "node-1",
            "--force",
            "--grace-period=0",
            "--timeout=60s",
        ])
        .stdout_has("node/node-1 drained");
    kubectl.fails(&["get", "pod", "web"]);
    kubectl.fails(&["get", "pod", "api"]);
    kubectl
        .ok(&[
            "get",
            "node",
            "node-1",
            "-o",
            "jsonpath={.spec.unschedulable}",
        ])
        .stdout_is("true");
    let budget = kubectl.ok(&["get", "pdb", "web", "-o", "json"]).json();
    assert_eq!(budget["status"]["disruptionsAllowed"], 0, "{budget}");
    assert!(
        budget["status"]["disruptedPods"]["web"].is_string(),
        "{budget}"
    );
    let insufficient = (budget["status"]["conditions"].as_array().unwrap().iter())
        .find(|c| c["type"] == "DisruptionAllowed")
        .cloned()
        .unwrap_or_default();
    assert_eq!(insufficient["reason"], "InsufficientPods", "{budget}");

    // Pending pods go without asking any budget; the name must be the path's.
    let file = kubectl.write_file("pending.yaml", POD);
    kubectl.ok(&["create", "-f", &file]);
    kubectl.ok(&[
        "patch",
        "pod",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Pending"}}"#,
    ]);
    let wrong = client
        .post(&format!("{pods}/web/eviction"), &eviction("api"))
        .unwrap();
    assert_eq!(wrong.status, 400, "{wrong:?}");
    assert_eq!(
        wrong.json()["message"],
        "name in URL does not match name in Eviction object"
    );
    let evicted = client
        .post(&format!("{pods}/web/eviction"), &eviction("web"))
        .unwrap();
    assert_eq!(evicted.status, 201, "{evicted:?}");
    kubectl.fails(&["get", "pod", "web"]);
}

#[test]
fn node_subresources_answer_as_kube_does_without_a_node() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let manifest = format!("{NODE}---{POD}");
    let file = kubectl.write_file("objects.yaml", &manifest);
    kubectl.ok(&["create", "-f", &file]);
    let client = server.client();

    // Logs: the container must be chosen; a pod no node runs has none yet (204).
    let unchosen = client
        .get("/api/v1/namespaces/default/pods/web/log")
        .unwrap();
    assert_eq!(unchosen.status, 400, "{unchosen:?}");
    assert_eq!(
        unchosen.json()["message"],
        "a container name must be specified for pod web, choose one of: [app side]"
    );
    kubectl
        .fails(&["logs", "web", "-c", "nope"])
        .stderr_has("container nope is not valid for pod web");
    let log = client
        .get("/api/v1/namespaces/default/pods/web/log?container=app")
        .unwrap();
    assert_eq!((log.status, log.body.as_str()), (204, ""), "{log:?}");
    // kubectl picks the first container itself.
    kubectl.ok(&["logs", "web"]).stdout_is("");
    let invalid = client
        .get("/api/v1/namespaces/default/pods/web/log?container=app&tailLines=-1")
        .unwrap();
    assert_eq!(invalid.status, 422, "{invalid:?}");
    assert_eq!(
        invalid.json()["message"],
        r#"PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0"#
    );

    // exec and attach need the pod on a node.
    kubectl
        .fails(&["exec", "web", "-c", "app", "--", "true"])
        .stderr_has("pod web does not have a host assigned");
    let exec = client
        .request(
            "POST",
            "/api/v1/namespaces/default/pods/web/exec?container=app&dryRun=All",
            "",
            None,
        )
        .unwrap();
    assert_eq!(exec.status, 400, "{exec:?}");
    assert_eq!(exec.json()["message"], "dryRun is not supported");

    // Bound to a node with no address: kube's plain error, a 500 without a reason.
    let pods = "/api/v1/namespaces/default/pods";
    let bound = client
        .post(&format!("{pods}/web/binding"), &binding("web", "node-1"))
        .unwrap();
    assert_eq!(bound.status, 201, "{bound:?}");
    let log = client
        .get(&format!("{pods}/web/log?container=app"))
        .unwrap();
    assert_eq!(log.status, 500, "{log:?}");
    assert_eq!(
        log.json()["message"],
        "no preferred addresses found; known addresses: []"
    );
    // With an address, the request would go to the kubelet, which kapi does not run.
    kubectl.ok(&[
        "patch",
        "node",
        "node-1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"addresses":[{"type":"InternalIP","address":"10.0.0.7"}]}}"#,
    ]);
    let exec = client
        .request(
            "POST",
            &format!("{pods}/web/exec?container=app&command=true"),
            "",
            None,
        )
        .unwrap();
    assert_eq!(exec.status, 400, "{exec:?}");
    assert_eq!(exec.json()["message"], "Upgrade request required");
    let log = client
        .get(&format!("{pods}/web/log?container=app"))
        .unwrap();
    assert_eq!(log.status, 503, "{log:?}");

    // Proxies: the pod needs an IP; a Service, ready endpoints; a node, an address.
    kubectl
        .fails(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/pods/web/proxy/healthz",
        ])
        .stderr_has("address not allowed");
    kubectl
        .fails(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/pods/web:bad:80:x/proxy/",
        ])
        .stderr_has("invalid pod request");
    kubectl.ok(&["create", "service", "clusterip", "web", "--tcp=80:8080"]);
    kubectl
        .fails(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/services/web/proxy/",
        ])
        .stderr_has("not found");
    kubectl
        .fails(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/services/web:81/proxy/",
        ])
        .stderr_has("no service port 81 found for service");
    let endpoints = "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: web\n";
    let file = kubectl.write_file("endpoints.yaml", endpoints);
    kubectl.ok(&["create", "-f", &file]);
    kubectl
        .fails(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/services/web/proxy/",
        ])
        .stderr_has("no endpoints available for service");
    // A proxy's root is answered with its path and a trailing slash, as kube's handler does
    // (read on the socket: the clients follow redirects).
    let head = raw_request(&server, "GET /api/v1/nodes/node-1/proxy?x=1");
    assert!(head.starts_with("HTTP/1.1 301"), "{head}");
    assert!(
        head.to_lowercase()
            .contains("location: /api/v1/nodes/node-1/proxy/?x=1\r\n"),
        "{head}"
    );
    let root = client
        .request("HEAD", "/api/v1/nodes/node-1/proxy", "", None)
        .unwrap();
    assert_eq!(
        root.status, 503,
        "HEAD follows the redirect to the proxied root: {root:?}"
    );
    let other = client
        .request("DELETE", "/api/v1/nodes/node-1/proxy/configz", "", None)
        .unwrap();
    assert_eq!(other.status, 503, "{other:?}");
    assert!(
        other.json()["message"]
            .as_str()
            .unwrap()
            .starts_with("error trying to reach service"),
        "{other:?}"
    );
    kubectl
        .fails(&["get", "--raw", "/api/v1/nodes/node-2/proxy/"])
        .stderr_has("not found");
}

/// The head of the answer to `request_line` (`GET /path`), read on a socket of its own.
fn raw_request(server: &Server, request_line: &str) -> String {
    use std::io::{Read, Write};
    let mut socket = std::net::TcpStream::connect(server.addr()).expect("connect");
    let request = format!("{request_line} HTTP/1.1\r\nHost: kapi\r\nConnection: close\r\n\r\n");
    socket.write_all(request.as_bytes()).expect("write");
    let mut answer = String::new();
    socket.read_to_string(&mut answer).expect("read");
    answer
        .split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn ephemeral_containers_and_csr_approval_change_only_their_fields() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let file = kubectl.write_file("pod.yaml", POD);
    kubectl.ok(&["create", "-f", &file]);
    // `kubectl debug` adds an ephemeral container through the subresource.
    kubectl.ok(&[
        "debug",
        "web",
        "--image=busybox",
        "--container=debugger",
        "--target=app",
    ]);
    let pod = kubectl.ok(&["get", "pod", "web", "-o", "json"]).json();
    let debugger = &pod["spec"]["ephemeralContainers"][0];
    assert_eq!(debugger["name"], "debugger", "{pod}");
    assert_eq!(debugger["targetContainerName"], "app", "{pod}");
    // The subresource takes nothing else of the pod.
    let client = server.client();
    let path = "/api/v1/namespaces/default/pods/web/ephemeralcontainers";
    let patched = client
        .merge_patch(
            path,
            &json!({"metadata": {"labels": {"sneaky": "yes"}}, "spec": {"nodeName": "x"}}),
        )
        .unwrap();
    assert_eq!(patched.status, 200, "{patched:?}");
    let pod = patched.json();
    assert_eq!(pod["kind"], "Pod");
    assert!(pod["metadata"]["labels"].get("sneaky").is_none(), "{pod}");
    assert!(pod["spec"].get("nodeName").is_none(), "{pod}");
    let read = client.get(path).unwrap();
    assert_eq!(
        read.json()["spec"]["ephemeralContainers"][0]["name"],
        "debugger"
    );

    // A CSR's approval: `kubectl certificate approve` writes the condition through it.
    let csr = "
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: alice
spec:
  request: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K
  signerName: kubernetes.io/kube-apiserver-client
  usages: [client auth]
";
    let file = kubectl.write_file("csr.yaml", csr);
    kubectl.ok(&["create", "-f", &file]);
    kubectl
        .ok(&["certificate", "approve", "alice"])
        .stdout_has("approved");
    let approved = kubectl.ok(&["get", "csr", "alice", "-o", "json"]).json();
    let condition = &approved["status"]["conditions"][0];
    assert_eq!(condition["type"], "Approved", "{approved}");
    assert_eq!(condition["status"], "True", "{approved}");
    assert_eq!(
        approved["spec"]["signerName"],
        "kubernetes.io/kube-apiserver-client"
    );
    // The approval takes conditions (and, as kube's approval strategy, metadata) only: a
    // spec change through it is dropped (e2e's "CSR API operations" patches both).
    let path = "/apis/certificates.k8s.io/v1/certificatesigningrequests/alice/approval";
    let patched = client
        .merge_patch(
            path,
            &json!({
                "metadata": {"annotations": {"patchedapproval": "true"}},
                "spec": {"signerName": "example.com/other"},
            }),
        )
        .unwrap();
    assert_eq!(patched.status, 200, "{patched:?}");
    let patched = patched.json();
    assert_eq!(
        patched["spec"]["signerName"],
        "kubernetes.io/kube-apiserver-client"
    );
    assert_eq!(
        patched["metadata"]["annotations"]["patchedapproval"],
        "true"
    );
    // Scale reports the selector as kube's apps kinds do.
    kubectl.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=1",
    ]);
    kubectl.ok(&["scale", "deployment", "web", "--replicas=3"]);
    let scale = client
        .get("/apis/apps/v1/namespaces/default/deployments/web/scale")
        .unwrap()
        .json();
    assert_eq!(scale["spec"]["replicas"], 3, "{scale}");
    assert_eq!(scale["status"]["selector"], "app=web", "{scale}");
}
