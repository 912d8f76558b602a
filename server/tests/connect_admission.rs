//! Connects admitted as kube admits them, against the real `kapi-server`: a connect to
//! `pods/exec` (or a proxy) is judged with its options as the object, operation
//! `CONNECT`. A ValidatingAdmissionPolicy on `pods/exec` refuses shells, kubectl 1.32's
//! `exec` showing kube's refusal while an allowed command goes on to the pod (which no node
//! runs); a validating webhook is sent the connect (kind `PodExecOptions`, resource `pods`,
//! subresource `exec`, the command in the object) and refuses a reboot; a proxy's
//! `PodProxyOptions` carry its path. A mutating webhook changes a connect's options before
//! the validating side judges them and the connector reads them (an exec sent to another
//! container goes there).

use crate::support;

use std::cell::RefCell;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use support::http::Client;
use support::pki::Pki;
use support::webhook::Webhook;
use support::{Kubectl, Server, Version, wait_for};

const ADMISSION: &str = "/apis/admissionregistration.k8s.io/v1";
const PODS: &str = "/api/v1/namespaces/default/pods";

/// `POST` of an exec of `command` in the pod `web`: its status and message.
fn exec(client: &Client, command: &str) -> (u16, String) {
    exec_in(client, "app", command)
}

/// `POST` of an exec of `command` in `container` of the pod `web`: its status and message.
fn exec_in(client: &Client, container: &str, command: &str) -> (u16, String) {
    let path = format!("{PODS}/web/exec?container={container}&stdout=true&command={command}");
    let response = client.request("POST", &path, "", None).unwrap();
    let message = serde_json::from_str::<Value>(&response.body)
        .map(|body| body["message"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default();
    (response.status, message)
}

/// Waits until an exec of `command` is answered with `status` and a message containing
/// `text` (admission reads its configuration through the watch cache).
fn wait_exec(client: &Client, command: &str, status: u16, text: &str) {
    wait_exec_in(client, "app", command, status, text);
}

/// [`wait_exec`] in `container`.
fn wait_exec_in(client: &Client, container: &str, command: &str, status: u16, text: &str) {
    let last = RefCell::new(String::new());
    wait_for(
        Duration::from_secs(10),
        "the connect's admission",
        || last.borrow().clone(),
        || {
            let (got, message) = exec_in(client, container, command);
            *last.borrow_mut() = format!("{got}: {message}");
            (got == status && message.contains(text)).then_some(())
        },
    );
}

#[test]
fn connects_are_admitted_with_their_options() {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let server = Server::start();
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}});
    let created = client.post(PODS, &pod).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    // Before any policy, an exec reaches the pod, which no node runs.
    assert_eq!(
        exec(&client, "sh"),
        (400, "pod web does not have a host assigned".to_owned())
    );

    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "no-shells"},
        "spec": {"failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"operations": ["CONNECT"],
                "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/exec"]}]},
            "validations": [
                {"expression": "request.kind.kind == 'PodExecOptions' && \
                    object.kind == 'PodExecOptions' && request.subResource == 'exec' && \
                    object.container == 'app' && object.stdout",
                 "message": "not the exec sent"},
                {"expression": "!object.command.exists(c, c.endsWith('sh'))",
                 "messageExpression": "'no shells in ' + request.namespace + ': ' + \
                    object.command[0]"}]}});
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "no-shells-binding"},
        "spec": {"policyName": "no-shells", "validationActions": ["Deny"]}});
    for (resource, object) in [
        ("validatingadmissionpolicies", &policy),
        ("validatingadmissionpolicybindings", &binding),
    ] {
        let created = client
            .post(&format!("{ADMISSION}/{resource}"), object)
            .unwrap();
        assert_eq!(created.status, 201, "{created:?}");
    }
    wait_exec(&client, "sh", 422, "no shells in default: sh");
    let (_, refusal) = exec(&client, "bash");
    assert_eq!(
        refusal,
        "pods \"web\" is forbidden: ValidatingAdmissionPolicy 'no-shells' with binding \
         'no-shells-binding' denied request: no shells in default: bash"
    );
    kubectl
        .fails(&["exec", "web", "-c", "app", "--", "sh"])
        .stderr_has("denied request: no shells in default: sh");
    // What the policy allows goes on to the pod.
    kubectl
        .fails(&["exec", "web", "-c", "app", "--", "true"])
        .stderr_has("pod web does not have a host assigned");

    // A validating webhook is sent the connect, its options the object.
    let hook = json!({"name": "connect.example.com",
        "clientConfig": {"url": webhook.url("/connect"),
            "caBundle": base64::engine::general_purpose::STANDARD.encode(pki.ca_pem())},
        "rules": [{"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": ["pods/exec", "pods/proxy"]}],
        "sideEffects": "None", "admissionReviewVersions": ["v1"]});
    let configuration = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "connects"},
        "webhooks": [hook]});
    let created = client
        .post(
            &format!("{ADMISSION}/validatingwebhookconfigurations"),
            &configuration,
        )
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    wait_exec(&client, "reboot", 403, "reboots are not allowed");
    let review = webhook.next_for("web");
    assert_eq!(review["operation"], "CONNECT", "{review}");
    assert_eq!(
        review["kind"],
        json!({"group": "", "version": "v1", "kind": "PodExecOptions"})
    );
    assert_eq!(review["subResource"], "exec");
    assert_eq!(review["namespace"], "default");
    assert_eq!(
        review["object"],
        json!({"kind": "PodExecOptions", "apiVersion": "v1", "stdout": true,
            "container": "app", "command": ["reboot"]})
    );
    assert_eq!(review["hasOldObject"], false);
    // A proxy's options carry its path.
    webhook.drain();
    let proxied = client.get(&format!("{PODS}/web/proxy/healthz")).unwrap();
    assert_eq!(proxied.status, 400, "{proxied:?}");
    let review = webhook.next_for("web");
    assert_eq!(
        review["object"],
        json!({"kind": "PodProxyOptions", "apiVersion": "v1", "path": "/healthz"})
    );
}

/// The pod `web`, with the one container `app`.
fn create_pod(client: &Client) {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}});
    let created = client.post(PODS, &pod).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
}

/// A webhook configuration of `resource` named `name` whose one webhook calls `path` of
/// the test's webhook for connects to `pods/exec`.
fn connect_webhook(client: &Client, webhook: &Webhook, pki: &Pki, resource: &str, path: &str) {
    let kind = match resource {
        "mutatingwebhookconfigurations" => "MutatingWebhookConfiguration",
        _ => "ValidatingWebhookConfiguration",
    };
    let hook = json!({"name": format!("{}.example.com", path.trim_start_matches('/')),
        "clientConfig": {"url": webhook.url(path),
            "caBundle": base64::engine::general_purpose::STANDARD.encode(pki.ca_pem())},
        "rules": [{"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": ["pods/exec"]}],
        "sideEffects": "None", "admissionReviewVersions": ["v1"]});
    let configuration = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": path.trim_start_matches('/')}, "webhooks": [hook]});
    let created = client
        .post(&format!("{ADMISSION}/{resource}"), &configuration)
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
}

/// A mutating webhook on `pods/exec` sends every exec to the container `app`: an exec of
/// a container the pod lacks, refused before, goes on to the pod (kubectl 1.32 shows the
/// pod's answer); the validating webhook after it is sent the options as it left them.
#[test]
fn connects_are_mutated_before_they_are_judged_and_run() {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let server = Server::start();
    let client = server.client();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    create_pod(&client);
    assert_eq!(
        exec_in(&client, "nope", "true"),
        (400, "container nope is not valid for pod web".to_owned())
    );
    connect_webhook(
        &client,
        &webhook,
        &pki,
        "mutatingwebhookconfigurations",
        "/exec-in-app",
    );
    connect_webhook(
        &client,
        &webhook,
        &pki,
        "validatingwebhookconfigurations",
        "/connect",
    );
    wait_exec_in(
        &client,
        "nope",
        "true",
        400,
        "pod web does not have a host assigned",
    );
    kubectl
        .fails(&["exec", "web", "-c", "nope", "--", "true"])
        .stderr_has("pod web does not have a host assigned");
    // The webhook's warning comes with the pod's refusal, as kube's warning headers come
    // with any answer.
    let path = format!("{PODS}/web/exec?container=nope&stdout=true&command=true");
    let refused = client.request("POST", &path, "", None).unwrap();
    assert_eq!(refused.status, 400, "{refused:?}");
    assert_eq!(
        refused.warnings,
        ["299 - \"exec sent to app\""],
        "{refused:?}"
    );

    // The mutating webhook first, sent the options as asked; the validating one after,
    // sent them as the mutating one left them, and refusing what it refuses.
    webhook.drain();
    assert_eq!(
        exec_in(&client, "nope", "reboot"),
        (
            403,
            "admission webhook \"connect.example.com\" denied the request: reboots are not allowed"
                .to_owned()
        )
    );
    let mutating = webhook.next_for("web");
    assert_eq!(mutating["path"], "/exec-in-app", "{mutating}");
    assert_eq!(mutating["operation"], "CONNECT");
    assert_eq!(
        mutating["object"],
        json!({"kind": "PodExecOptions", "apiVersion": "v1", "stdout": true,
            "container": "nope", "command": ["reboot"]})
    );
    let validating = webhook.next_for("web");
    assert_eq!(validating["path"], "/connect", "{validating}");
    assert_eq!(validating["object"]["container"], "app", "{validating}");
    assert_eq!(validating["object"]["command"], json!(["reboot"]));
}
