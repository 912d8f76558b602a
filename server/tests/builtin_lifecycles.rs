//! Kubernetes' API-only lifecycle tests, in spirit, against the real binary: the e2e
//! tests that need nothing but kube-apiserver (PodTemplates, ResourceQuotas, Secrets,
//! Endpoints, Ingresses and IngressClasses, NetworkPolicies, RuntimeClasses,
//! CertificateSigningRequests, ServiceAccounts) and client-go's watch negotiation on
//! Services in JSON and protobuf. Each runs their steps (create, read, list by label,
//! watch, patch, update, the status subresource, delete and deletecollection) with kubectl
//! 1.32 (whose typed clients speak protobuf) and raw HTTP where kubectl has no command.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::Client;
use support::{Kubectl, Server, Version};

/// How long a watch may take to report a change the test made.
const EVENT: Duration = Duration::from_secs(20);

/// Creates the objects of `yaml` with kubectl.
fn create(kubectl: &Kubectl, name: &str, yaml: &str) {
    let file = kubectl.write_file(name, yaml);
    kubectl.ok(&["create", "-f", &file]);
}

/// `kubectl get ARGS -o json`.
fn get(kubectl: &Kubectl, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend(args);
    all.extend(["-o", "json"]);
    kubectl.ok(&all).json()
}

/// The names of a list.
fn names(list: &Value) -> Vec<String> {
    (list["items"].as_array().into_iter().flatten())
        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// Watches `path` from now (its list's resourceVersion) in JSON.
fn watch_from_now(client: &Client, path: &str) -> support::http::Watch {
    let list = client.get(path).unwrap().json();
    let from = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let separator = if path.contains('?') { '&' } else { '?' };
    let watch = client
        .watch(
            &format!("{path}{separator}watch=true&resourceVersion={from}"),
            "application/json",
        )
        .unwrap();
    assert_eq!(watch.status, 200);
    watch
}

/// The next event's type and object name.
fn event(watch: &mut support::http::Watch) -> (String, String) {
    let event = watch.next_event(EVENT);
    let kind = event["type"].as_str().unwrap_or_default().to_owned();
    let name = event["object"]["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (kind, name)
}

/// kube's "should run the lifecycle of PodTemplates" and "should delete a collection of
/// pod templates": create, read, patch labels, delete; three created, deleted as a
/// collection by label.
#[test]
fn pod_templates_live_and_are_deleted_as_a_collection() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let template = |name: &str| {
        format!(
            "---\napiVersion: v1\nkind: PodTemplate\nmetadata:\n  name: {name}\n  labels: {{podtemplate-set: 'true'}}\n\
             template:\n  metadata:\n    labels: {{app: web}}\n  spec:\n    containers:\n    - {{name: app, image: nginx}}\n"
        )
    };
    create(&kubectl, "one.yaml", &template("nginx-pod-template"));
    let read = get(&kubectl, &["podtemplate", "nginx-pod-template"]);
    assert_eq!(read["template"]["spec"]["containers"][0]["image"], "nginx");
    kubectl.ok(&[
        "patch",
        "podtemplate",
        "nginx-pod-template",
        "--type=merge",
        "-p",
        r#"{"metadata":{"labels":{"podtemplate":"patched"}}}"#,
    ]);
    let patched = get(&kubectl, &["podtemplates", "-l", "podtemplate=patched"]);
    assert_eq!(names(&patched), ["nginx-pod-template"]);
    kubectl.ok(&["delete", "podtemplate", "nginx-pod-template"]);
    kubectl.fails(&["get", "podtemplate", "nginx-pod-template"]);

    let set: String = (1..=3)
        .map(|i| template(&format!("template-{i}")))
        .collect();
    create(&kubectl, "set.yaml", &set);
    let listed = get(
        &kubectl,
        &["podtemplates", "-A", "-l", "podtemplate-set=true"],
    );
    assert_eq!(names(&listed).len(), 3, "{listed}");
    let client = server.client();
    let deleted = client
        .delete("/api/v1/namespaces/default/podtemplates?labelSelector=podtemplate-set%3Dtrue")
        .unwrap();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    assert_eq!(deleted.json()["kind"], "PodTemplateList");
    let left = get(
        &kubectl,
        &["podtemplates", "-A", "-l", "podtemplate-set=true"],
    );
    assert!(names(&left).is_empty(), "{left}");
}

/// kube's "should manage the lifecycle of a ResourceQuota" and its update and delete:
/// create, read, list by label, update the spec, the status through its subresource,
/// patch, delete as a collection.
#[test]
fn resource_quotas_live_with_their_status() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    kubectl.ok(&["create", "quota", "e2e-quota", "--hard=pods=5,secrets=10"]);
    kubectl.ok(&["label", "quota", "e2e-quota", "e2e-rq-label=e2e-quota"]);
    let listed = get(&kubectl, &["quota", "-l", "e2e-rq-label=e2e-quota"]);
    assert_eq!(names(&listed), ["e2e-quota"]);
    let mut quota = get(&kubectl, &["quota", "e2e-quota"]);
    assert_eq!(quota["spec"]["hard"]["pods"], "5");
    quota["spec"]["hard"]["pods"] = json!("7");
    let file = kubectl.write_file("quota.json", &quota.to_string());
    kubectl.ok(&["replace", "-f", &file]);
    assert_eq!(
        get(&kubectl, &["quota", "e2e-quota"])["spec"]["hard"]["pods"],
        "7"
    );
    // The quota controller's part, written as it writes it: the status subresource.
    kubectl.ok(&[
        "patch",
        "quota",
        "e2e-quota",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"hard":{"pods":"7","secrets":"10"},"used":{"pods":"0","secrets":"1"}}}"#,
    ]);
    let quota = get(&kubectl, &["quota", "e2e-quota"]);
    assert_eq!(quota["status"]["used"]["secrets"], "1", "{quota}");
    // A spec update does not touch the status; a status update does not touch the spec.
    kubectl.ok(&[
        "patch",
        "quota",
        "e2e-quota",
        "--type=merge",
        "-p",
        r#"{"spec":{"hard":{"pods":"9"}},"status":{"used":{"pods":"4"}}}"#,
    ]);
    let quota = get(&kubectl, &["quota", "e2e-quota"]);
    assert_eq!(quota["spec"]["hard"]["pods"], "9", "{quota}");
    assert_eq!(quota["status"]["used"]["pods"], "0", "{quota}");
    kubectl.ok(&["delete", "quota", "-l", "e2e-rq-label=e2e-quota"]);
    kubectl.fails(&["get", "quota", "e2e-quota"]);
}

/// kube's "should patch a secret": create, list by label, patch data and labels, delete
/// the collection by label.
#[test]
fn secrets_are_patched_and_deleted_as_a_collection() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    kubectl.ok(&[
        "create",
        "secret",
        "generic",
        "test-secret",
        "--from-literal=key=value",
    ]);
    kubectl.ok(&["label", "secret", "test-secret", "testsecret-constant=true"]);
    let listed = get(
        &kubectl,
        &["secrets", "-A", "-l", "testsecret-constant=true"],
    );
    assert_eq!(names(&listed), ["test-secret"]);
    kubectl.ok(&[
        "patch",
        "secret",
        "test-secret",
        "--type=merge",
        "-p",
        r#"{"metadata":{"labels":{"testsecret":"true"}},"data":{"key":"dmFsdWUx"}}"#,
    ]);
    let patched = get(&kubectl, &["secret", "test-secret"]);
    assert_eq!(patched["data"], json!({"key": "dmFsdWUx"}));
    assert_eq!(patched["metadata"]["labels"]["testsecret"], "true");
    let client = server.client();
    let deleted = client
        .delete("/api/v1/namespaces/default/secrets?labelSelector=testsecret-constant%3Dtrue")
        .unwrap();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    let left = get(
        &kubectl,
        &["secrets", "-A", "-l", "testsecret-constant=true"],
    );
    assert!(names(&left).is_empty(), "{left}");
}

/// kube's "should test the lifecycle of an Endpoint": create, watch it added, read, list
/// across namespaces by label, update, patch (watched), delete the collection (watched).
#[test]
fn endpoints_live_under_a_watch() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let client = server.client();
    let mut watch = watch_from_now(
        &client,
        "/api/v1/endpoints?labelSelector=test-endpoint-static%3Dtrue",
    );
    create(
        &kubectl,
        "endpoints.yaml",
        "
apiVersion: v1
kind: Endpoints
metadata:
  name: testservice
  labels: {test-endpoint-static: 'true'}
subsets:
- addresses: [{ip: 10.0.0.24}]
  ports: [{name: http, port: 80, protocol: TCP}]
",
    );
    assert_eq!(event(&mut watch), ("ADDED".into(), "testservice".into()));
    let listed = get(
        &kubectl,
        &["endpoints", "-A", "-l", "test-endpoint-static=true"],
    );
    assert_eq!(names(&listed), ["testservice"]);
    let mut endpoints = get(&kubectl, &["endpoints", "testservice"]);
    endpoints["metadata"]["labels"]["test-service"] = json!("updated");
    let file = kubectl.write_file("updated.json", &endpoints.to_string());
    kubectl.ok(&["replace", "-f", &file]);
    assert_eq!(event(&mut watch), ("MODIFIED".into(), "testservice".into()));
    kubectl.ok(&[
        "patch", "endpoints", "testservice", "--type=merge", "-p",
        r#"{"subsets":[{"addresses":[{"ip":"10.0.0.25"}],"ports":[{"name":"http-test","port":8080}]}]}"#,
    ]);
    assert_eq!(event(&mut watch), ("MODIFIED".into(), "testservice".into()));
    let patched = get(&kubectl, &["endpoints", "testservice"]);
    assert_eq!(
        patched["subsets"][0]["addresses"][0]["ip"], "10.0.0.25",
        "{patched}"
    );
    assert_eq!(patched["subsets"][0]["ports"][0]["port"], 8080, "{patched}");
    let deleted = client
        .delete("/api/v1/namespaces/default/endpoints?labelSelector=test-endpoint-static%3Dtrue")
        .unwrap();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    assert_eq!(event(&mut watch), ("DELETED".into(), "testservice".into()));
}

/// kube's "should support creating IngressClass API operations" and "Ingress API
/// operations": create, read, list and watch by label, patch, update, the Ingress status
/// through its subresource, delete and delete the collection.
#[test]
fn ingresses_and_their_classes_live() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let client = server.client();
    let classes = "/apis/networking.k8s.io/v1/ingressclasses?labelSelector=special-label%3Dgeneric";
    let mut class_watch = watch_from_now(&client, classes);
    let class = |name: &str| {
        format!(
            "---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: {name}\n  \
             labels: {{special-label: generic}}\nspec:\n  controller: example.com/controller\n"
        )
    };
    create(
        &kubectl,
        "classes.yaml",
        &format!("{}{}", class("ingressclass1"), class("ingressclass2")),
    );
    assert_eq!(
        event(&mut class_watch),
        ("ADDED".into(), "ingressclass1".into())
    );
    assert_eq!(
        event(&mut class_watch),
        ("ADDED".into(), "ingressclass2".into())
    );
    kubectl.ok(&[
        "patch",
        "ingressclass",
        "ingressclass1",
        "--type=merge",
        "-p",
        r#"{"metadata":{"annotations":{"patched":"true"}}}"#,
    ]);
    assert_eq!(
        event(&mut class_watch),
        ("MODIFIED".into(), "ingressclass1".into())
    );

    let ingresses = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";
    let mut watch = watch_from_now(
        &client,
        &format!("{ingresses}?labelSelector=special-label%3Dingress"),
    );
    create(
        &kubectl,
        "ingress.yaml",
        "
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ingress1
  labels: {special-label: ingress}
spec:
  ingressClassName: ingressclass1
  defaultBackend:
    service: {name: default-backend, port: {number: 8080}}
  rules:
  - host: foo.bar.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service: {name: test-backend, port: {number: 8080}}
",
    );
    assert_eq!(event(&mut watch), ("ADDED".into(), "ingress1".into()));
    let read = get(&kubectl, &["ingress", "ingress1"]);
    assert_eq!(read["spec"]["rules"][0]["host"], "foo.bar.com");
    kubectl.ok(&[
        "patch",
        "ingress",
        "ingress1",
        "--type=merge",
        "-p",
        r#"{"metadata":{"annotations":{"patched":"true"}}}"#,
    ]);
    assert_eq!(event(&mut watch), ("MODIFIED".into(), "ingress1".into()));
    // The controller's part: the load balancer, through the status subresource, which
    // may change an Ingress's annotations too (kube's status strategy resets its spec
    // only; e2e's "Ingress API operations" patches both).
    let status = json!({
        "metadata": {"annotations": {"patchedstatus": "true"}},
        "status": {"loadBalancer": {"ingress": [{"ip": "169.1.1.1"}]}},
        "spec": {"ingressClassName": "other"},
    });
    let path = format!("{ingresses}/ingress1/status");
    let written = client.merge_patch(&path, &status).unwrap();
    assert_eq!(written.status, 200, "{written:?}");
    assert_eq!(event(&mut watch), ("MODIFIED".into(), "ingress1".into()));
    let read = client.get(&path).unwrap().json();
    assert_eq!(
        read["status"]["loadBalancer"]["ingress"][0]["ip"], "169.1.1.1",
        "{read}"
    );
    assert_eq!(read["metadata"]["annotations"]["patchedstatus"], "true");
    assert_eq!(read["spec"]["ingressClassName"], "ingressclass1");
    kubectl.ok(&["get", "ingress", "ingress1"]);
    kubectl.ok(&["delete", "ingress", "ingress1"]);
    assert_eq!(event(&mut watch), ("DELETED".into(), "ingress1".into()));

    let deleted = client.delete(classes).unwrap();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    let mut gone: Vec<_> = (0..2).map(|_| event(&mut class_watch)).collect();
    gone.sort();
    assert_eq!(
        gone,
        [
            ("DELETED".into(), "ingressclass1".into()),
            ("DELETED".into(), "ingressclass2".into())
        ]
    );
}

/// kube's "should support creating NetworkPolicy API operations" and "RuntimeClass API
/// operations": create, read, list, watch, patch, update and delete.
#[test]
fn network_policies_and_runtime_classes_live() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let client = server.client();
    let mut watch = watch_from_now(&client, "/apis/networking.k8s.io/v1/networkpolicies");
    create(
        &kubectl,
        "policy.yaml",
        "
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: e2e-example-netpol}
spec:
  podSelector: {matchLabels: {app: web}}
  ingress:
  - from: [{podSelector: {matchLabels: {role: frontend}}}]
    ports: [{protocol: TCP, port: 80}]
",
    );
    assert_eq!(
        event(&mut watch),
        ("ADDED".into(), "e2e-example-netpol".into())
    );
    let policy = get(&kubectl, &["networkpolicy", "e2e-example-netpol"]);
    assert_eq!(
        policy["spec"]["ingress"][0]["ports"][0]["port"], 80,
        "{policy}"
    );
    kubectl.ok(&[
        "patch",
        "networkpolicy",
        "e2e-example-netpol",
        "--type=merge",
        "-p",
        r#"{"metadata":{"annotations":{"patched":"true"}}}"#,
    ]);
    assert_eq!(
        event(&mut watch),
        ("MODIFIED".into(), "e2e-example-netpol".into())
    );
    kubectl.ok(&["delete", "networkpolicy", "e2e-example-netpol"]);
    assert_eq!(
        event(&mut watch),
        ("DELETED".into(), "e2e-example-netpol".into())
    );

    let mut watch = watch_from_now(&client, "/apis/node.k8s.io/v1/runtimeclasses");
    create(
        &kubectl,
        "runtime.yaml",
        "
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: runtimeclass-1}
handler: runc
overhead: {podFixed: {cpu: 250m}}
scheduling: {nodeSelector: {runtime: runc}}
",
    );
    assert_eq!(event(&mut watch), ("ADDED".into(), "runtimeclass-1".into()));
    kubectl
        .ok(&["get", "runtimeclass"])
        .stdout_has("runtimeclass-1");
    let mut class = get(&kubectl, &["runtimeclass", "runtimeclass-1"]);
    assert_eq!(class["overhead"]["podFixed"]["cpu"], "250m", "{class}");
    class["metadata"]["annotations"] = json!({"updated": "true"});
    let file = kubectl.write_file("class.json", &class.to_string());
    kubectl.ok(&["replace", "-f", &file]);
    assert_eq!(
        event(&mut watch),
        ("MODIFIED".into(), "runtimeclass-1".into())
    );
    kubectl.ok(&["delete", "runtimeclass", "runtimeclass-1"]);
    assert_eq!(
        event(&mut watch),
        ("DELETED".into(), "runtimeclass-1".into())
    );
}

/// kube's "should support CSR API operations": create, read, list and watch, patch,
/// approve (the `approval` subresource), write the certificate through `status`, delete.
#[test]
fn certificate_signing_requests_are_approved_and_issued() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let client = server.client();
    let mut watch = watch_from_now(
        &client,
        "/apis/certificates.k8s.io/v1/certificatesigningrequests",
    );
    create(
        &kubectl,
        "csr.yaml",
        "
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: e2e-csr, labels: {e2e: csr}}
spec:
  request: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K
  signerName: example.com/e2e
  usages: [digital signature, client auth]
",
    );
    assert_eq!(event(&mut watch), ("ADDED".into(), "e2e-csr".into()));
    kubectl.ok(&[
        "patch",
        "csr",
        "e2e-csr",
        "--type=merge",
        "-p",
        r#"{"metadata":{"annotations":{"patched":"true"}}}"#,
    ]);
    assert_eq!(event(&mut watch), ("MODIFIED".into(), "e2e-csr".into()));
    kubectl.ok(&["certificate", "approve", "e2e-csr"]);
    assert_eq!(event(&mut watch), ("MODIFIED".into(), "e2e-csr".into()));
    // The signer's part: the certificate, through `status`.
    let certificate =
        json!({"status": {"certificate": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}});
    let path = "/apis/certificates.k8s.io/v1/certificatesigningrequests/e2e-csr/status";
    let written = client.merge_patch(path, &certificate).unwrap();
    assert_eq!(written.status, 200, "{written:?}");
    assert_eq!(event(&mut watch), ("MODIFIED".into(), "e2e-csr".into()));
    let csr = get(&kubectl, &["csr", "e2e-csr"]);
    assert_eq!(csr["status"]["conditions"][0]["type"], "Approved", "{csr}");
    assert_eq!(
        csr["status"]["certificate"], "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==",
        "{csr}"
    );
    let listed = get(&kubectl, &["csr", "-l", "e2e=csr"]);
    assert_eq!(names(&listed), ["e2e-csr"]);
    kubectl.ok(&["delete", "csr", "e2e-csr"]);
    assert_eq!(event(&mut watch), ("DELETED".into(), "e2e-csr".into()));
}

/// kube's "should run through the lifecycle of a ServiceAccount": create (watched), list
/// by label, patch (watched), delete the collection (watched).
#[test]
fn service_accounts_live_under_a_watch() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let client = server.client();
    let accounts = "/api/v1/namespaces/default/serviceaccounts";
    let mut watch = watch_from_now(
        &client,
        &format!("{accounts}?labelSelector=test-serviceaccount-static%3Dtrue"),
    );
    kubectl.ok(&["create", "serviceaccount", "testserviceaccount"]);
    kubectl.ok(&[
        "label",
        "serviceaccount",
        "testserviceaccount",
        "test-serviceaccount-static=true",
    ]);
    assert_eq!(
        event(&mut watch),
        ("ADDED".into(), "testserviceaccount".into())
    );
    kubectl.ok(&[
        "patch",
        "serviceaccount",
        "testserviceaccount",
        "--type=merge",
        "-p",
        r#"{"automountServiceAccountToken":false}"#,
    ]);
    assert_eq!(
        event(&mut watch),
        ("MODIFIED".into(), "testserviceaccount".into())
    );
    let account = get(&kubectl, &["serviceaccount", "testserviceaccount"]);
    assert_eq!(account["automountServiceAccountToken"], false, "{account}");
    let listed = get(
        &kubectl,
        &[
            "serviceaccounts",
            "-A",
            "-l",
            "test-serviceaccount-static=true",
        ],
    );
    assert_eq!(names(&listed), ["testserviceaccount"]);
    let deleted = client
        .delete(&format!(
            "{accounts}?labelSelector=test-serviceaccount-static%3Dtrue"
        ))
        .unwrap();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    assert_eq!(
        event(&mut watch),
        ("DELETED".into(), "testserviceaccount".into())
    );
}

/// client-go's watch negotiation: a watch of Services in JSON and one in protobuf, each
/// seeing the Service created, in its own framing.
#[test]
fn services_are_watched_in_json_and_protobuf() {
    const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let client = server.client();
    let services = "/api/v1/namespaces/default/services";
    let mut json_watch = watch_from_now(&client, services);
    let from = client.get(services).unwrap().json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut protobuf = client
        .watch_frames(
            &format!("{services}?watch=true&resourceVersion={from}"),
            &format!("{PROTOBUF};stream=watch"),
        )
        .unwrap();
    assert_eq!(protobuf.status, 200);
    assert_eq!(protobuf.content_type, format!("{PROTOBUF};stream=watch"));
    kubectl.ok(&[
        "create",
        "service",
        "clusterip",
        "negotiated",
        "--tcp=80:8080",
    ]);
    assert_eq!(
        event(&mut json_watch),
        ("ADDED".into(), "negotiated".into())
    );
    let frame = protobuf.next(EVENT);
    let text = String::from_utf8_lossy(&frame);
    assert!(text.contains("ADDED"), "{text}");
    // The object is a whole protobuf body (magic and envelope) inside the event.
    let magic = frame
        .windows(4)
        .position(|w| w == b"k8s\0")
        .expect("an enveloped object");
    let object = String::from_utf8_lossy(&frame[magic..]);
    assert!(
        object.contains("Service") && object.contains("negotiated"),
        "{object}"
    );
}

/// Pods' deletion as kube's Pod storage answers it: an unscheduled or finished Pod goes
/// at once; a scheduled one is marked for its `terminationGracePeriodSeconds` and stays
/// (no kubelet confirms it stopped, as with envtest's kube-apiserver); a later delete may
/// only shorten the period; `--grace-period=0 --force` removes it.
#[test]
fn pods_are_deleted_at_once_or_gracefully_as_kube_deletes_them() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let client = Client::new(server.addr());
    let pods = "/api/v1/namespaces/default/pods";
    let pod = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"terminationGracePeriodSeconds": 30, "containers": [{"name": "c", "image": "busybox"}]}})
    };
    let create = |name: &str| {
        let created = client.post(pods, &pod(name)).unwrap();
        assert_eq!(created.status, 201, "{created:?}");
    };
    let bind = |name: &str| {
        let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"kind": "Node", "name": "node-1"}});
        let bound = client
            .post(&format!("{pods}/{name}/binding"), &binding)
            .unwrap();
        assert_eq!(bound.status, 201, "{bound:?}");
    };

    // Unscheduled: gone at once.
    create("pending");
    kubectl.ok(&["delete", "pod", "pending"]);
    assert_eq!(client.get(&format!("{pods}/pending")).unwrap().status, 404);

    // Scheduled: marked for 30 s, and kept.
    create("running");
    bind("running");
    // The binding sets the node once.
    let again = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "running"},
        "target": {"kind": "Node", "name": "node-2"}});
    let refused = client
        .post(&format!("{pods}/running/binding"), &again)
        .unwrap();
    assert_eq!(refused.status, 409, "{refused:?}");
    let before = std::time::SystemTime::now();
    let deleted = client.delete(&format!("{pods}/running")).unwrap();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    let marked = client.get(&format!("{pods}/running")).unwrap().json();
    assert_eq!(
        marked["metadata"]["deletionGracePeriodSeconds"], 30,
        "{marked}"
    );
    let at = |pod: &Value| {
        humantime::parse_rfc3339(pod["metadata"]["deletionTimestamp"].as_str().unwrap()).unwrap()
    };
    let until = at(&marked)
        .duration_since(before)
        .unwrap_or_default()
        .as_secs();
    assert!(
        (28..=31).contains(&until),
        "deleted {until} s from now: {marked}"
    );
    kubectl
        .ok(&["get", "pod", "running"])
        .stdout_has("Terminating");

    // A longer period changes nothing; a shorter one moves the deletion earlier.
    let longer = client
        .delete(&format!("{pods}/running?gracePeriodSeconds=60"))
        .unwrap();
    assert_eq!(longer.status, 200, "{longer:?}");
    let same = client.get(&format!("{pods}/running")).unwrap().json();
    assert_eq!(
        same["metadata"]["resourceVersion"],
        marked["metadata"]["resourceVersion"]
    );
    let shorter = client
        .delete(&format!("{pods}/running?gracePeriodSeconds=10"))
        .unwrap();
    assert_eq!(shorter.status, 200, "{shorter:?}");
    let sooner = client.get(&format!("{pods}/running")).unwrap().json();
    assert_eq!(
        sooner["metadata"]["deletionGracePeriodSeconds"], 10,
        "{sooner}"
    );
    assert_eq!(
        at(&marked).duration_since(at(&sooner)).unwrap().as_secs(),
        20,
        "{marked}\n{sooner}"
    );
    kubectl.ok(&["delete", "pod", "running", "--grace-period=0", "--force"]);
    assert_eq!(client.get(&format!("{pods}/running")).unwrap().status, 404);

    // Finished: gone at once.
    create("done");
    bind("done");
    let finished = client
        .merge_patch(
            &format!("{pods}/done/status"),
            &json!({"status": {"phase": "Succeeded"}}),
        )
        .unwrap();
    assert_eq!(finished.status, 200, "{finished:?}");
    kubectl.ok(&["delete", "pod", "done"]);
    assert_eq!(client.get(&format!("{pods}/done")).unwrap().status, 404);
}

/// What a status write may change besides the status is each kind's status strategy's:
/// a Deployment's keeps its stored labels, a Pod's its owner references; both take new
/// annotations. A custom resource's status write changes its status only.
#[test]
fn status_writes_change_the_metadata_their_kind_lets_them() {
    let server = Server::start();
    let client = server.client();
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"tier": "front"}},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}
            }
        }
    });
    assert_eq!(client.post(deployments, &deployment).unwrap().status, 201);
    let patch = json!({
        "metadata": {"labels": {"tier": "back"}, "annotations": {"seen": "yes"}},
        "status": {"observedGeneration": 1},
    });
    let written = client
        .merge_patch(&format!("{deployments}/web/status"), &patch)
        .unwrap();
    assert_eq!(written.status, 200, "{written:?}");
    let written = written.json();
    assert_eq!(written["metadata"]["labels"], json!({"tier": "front"}));
    assert_eq!(written["metadata"]["annotations"]["seen"], "yes");
    assert_eq!(written["status"]["observedGeneration"], 1);

    let pods = "/api/v1/namespaces/default/pods";
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}
    });
    assert_eq!(client.post(pods, &pod).unwrap().status, 201);
    let owner = json!([{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "1"}]);
    let patch = json!({
        "metadata": {"labels": {"app": "api"}, "ownerReferences": owner},
        "status": {"phase": "Running"},
    });
    let written = client
        .merge_patch(&format!("{pods}/p/status"), &patch)
        .unwrap();
    assert_eq!(written.status, 200, "{written:?}");
    let written = written.json();
    assert_eq!(written["metadata"]["labels"], json!({"app": "api"}));
    assert!(
        written["metadata"].get("ownerReferences").is_none(),
        "{written}"
    );
    assert_eq!(written["status"]["phase"], "Running");
}
