//! Admission webhooks against the real `kapi-server`: a test webhook server
//! (`python/admission_webhook.py`, HTTPS on loopback with a certificate of the test's CA,
//! trusted through each configuration's `caBundle`) labels new WebApps (a mutating
//! webhook's JSON patch) and refuses those tagged `:edge` (a validating webhook), with
//! kubectl 1.32 and 1.20 showing the webhook's message and warning; on the compiled
//! WebApp and on the same kind defined by a CustomResourceDefinition. Also: a webhook that
//! is down under `failurePolicy: Fail` and `Ignore`, a namespace selector, dry runs, a
//! refused delete, and `matchPolicy: Equivalent` sending a v1beta1 write as v1; mutating
//! webhooks judging deletes before the validating ones, and failing one they patch.

use crate::support;

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use support::http::Client;
use support::pki::Pki;
use support::webapps::{WebApps, on_both_kinds};
use support::webhook::Webhook;
use support::{Kubectl, Server, Version, wait_for};

const CONFIGS: &str = "/apis/admissionregistration.k8s.io/v1";

/// A webhook entry calling `url` for WebApps of `kind` (`operations`).
pub(crate) fn hook(
    name: &str,
    url: String,
    pki: &Pki,
    kind: WebApps,
    operations: &[&str],
) -> Value {
    json!({
        "name": name,
        "clientConfig": {
            "url": url,
            "caBundle": base64::engine::general_purpose::STANDARD.encode(pki.ca_pem()),
        },
        "rules": [{"operations": operations, "apiGroups": [kind.group()],
            "apiVersions": ["v1"], "resources": ["webapps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

/// Creates a configuration of `kind` (`mutatingwebhookconfigurations` or
/// `validatingwebhookconfigurations`) with `hooks`.
#[track_caller]
pub(crate) fn configure(client: &Client, resource: &str, name: &str, hooks: Vec<Value>) {
    let kind = match resource {
        "mutatingwebhookconfigurations" => "MutatingWebhookConfiguration",
        _ => "ValidatingWebhookConfiguration",
    };
    let configuration = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": name}, "webhooks": hooks});
    let created = client
        .post(&format!("{CONFIGS}/{resource}"), &configuration)
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
}

/// The test's two webhooks for WebApps of `kind`: `label.example.com` (mutating, on
/// creates) and `policy.example.com` (validating, on `policy_operations`); returns once
/// they are called.
fn label_and_policy(
    client: &Client,
    webhook: &Webhook,
    pki: &Pki,
    kind: WebApps,
    policy_operations: &[&str],
) {
    let label = hook(
        "label.example.com",
        webhook.url("/label"),
        pki,
        kind,
        &["CREATE"],
    );
    configure(
        client,
        "mutatingwebhookconfigurations",
        "labels",
        vec![label],
    );
    let policy = hook(
        "policy.example.com",
        webhook.url("/policy"),
        pki,
        kind,
        policy_operations,
    );
    configure(
        client,
        "validatingwebhookconfigurations",
        "policy",
        vec![policy],
    );
    wait_admitting(client, kind, labelled);
    webhook.drain();
}

fn webapp(kind: WebApps, name: &str, image: &str) -> Value {
    json!({"apiVersion": kind.api_version(), "kind": "WebApp",
        "metadata": {"name": name}, "spec": {"container": {"image": image}}})
}

/// Waits until a dry-run create of a WebApp answers with what `ready` wants (the
/// configurations reach admission through the watch cache, a moment after their create).
#[track_caller]
fn wait_admitting(
    client: &Client,
    kind: WebApps,
    ready: impl Fn(&support::http::Response) -> bool,
) {
    let path = format!("{}?dryRun=All", kind.collection());
    wait_for(
        Duration::from_secs(10),
        "the webhooks to be called",
        String::new,
        || {
            ready(
                &client
                    .post(&path, &webapp(kind, "probe", "nginx:1.27"))
                    .ok()?,
            )
            .then_some(())
        },
    );
}

fn labelled(response: &support::http::Response) -> bool {
    response.status == 201 && response.json()["metadata"]["labels"]["admitted-by"] == "test"
}

fn webhooks_label_and_refuse(kind: WebApps) {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let server = kind.start();
    let client = Client::new(server.addr());
    let create_update = &["CREATE", "UPDATE"];
    label_and_policy(&client, &webhook, &pki, kind, create_update);

    // The mutating webhook's label, and its warning, through kubectl.
    for version in [Version::V1_32, Version::V1_20] {
        let kubectl = Kubectl::new(version, &server);
        let name = format!("web-{}", version.label().replace(['.', ' '], "-"));
        let manifest = kubectl.write_file(
            "web.yaml",
            &serde_json::to_string(&webapp(kind, &name, "nginx:1.27")).unwrap(),
        );
        let created = kubectl.ok(&["create", "-f", &manifest, "-n", "default"]);
        created.stdout_is(&format!("webapp.{}/{name} created", kind.group()));
        assert!(
            created
                .stderr
                .contains("Warning: labelled by the test webhook"),
            "{}",
            created.stderr
        );
        let labels = kubectl
            .ok(&[
                "get",
                &kind.resource(),
                &name,
                "-n",
                "default",
                "-o",
                "jsonpath={.metadata.labels}",
            ])
            .stdout;
        assert_eq!(labels, r#"{"admitted-by":"test"}"#);

        // The validating webhook's refusal, as kubectl shows it.
        let latest = kubectl.write_file(
            "latest.yaml",
            &serde_json::to_string(&webapp(kind, "latest", "nginx:edge")).unwrap(),
        );
        kubectl
            .fails(&["create", "-f", &latest, "-n", "default"])
            .stderr_has(
                "admission webhook \"policy.example.com\" denied the request: images tagged \
                 :edge are not allowed",
            );
        let patch = r#"{"spec":{"container":{"image":"nginx:edge"}}}"#;
        kubectl
            .fails(&[
                "patch",
                &kind.resource(),
                &name,
                "-n",
                "default",
                "--type",
                "merge",
                "-p",
                patch,
            ])
            .stderr_has("denied the request: images tagged :edge are not allowed");
    }

    // What the webhooks were sent.
    let reviews = webhook.drain();
    let label = (reviews.iter())
        .find(|r| r["path"] == "/label" && r["operation"] == "CREATE")
        .expect("a review of the mutating webhook");
    assert_eq!(
        label["kind"],
        json!({"group": kind.group(), "version": "v1", "kind": "WebApp"})
    );
    assert_eq!(label["namespace"], "default");
    assert_eq!(label["dryRun"], false);
    assert_eq!(label["user"], "system:anonymous");
    assert_eq!(
        label["query"], "timeout=10s",
        "kube's default timeout, in the query"
    );
    let update = (reviews.iter())
        .find(|r| r["path"] == "/policy" && r["operation"] == "UPDATE")
        .expect("a review of the validating webhook for the patch");
    assert_eq!(update["hasOldObject"], true);
    // The validating webhook sees what the mutating one made.
    let validated = (reviews.iter())
        .find(|r| r["path"] == "/policy" && r["operation"] == "CREATE")
        .expect("a review of the validating webhook");
    assert_eq!(validated["labels"], json!({"admitted-by": "test"}));

    // Nothing refused was stored.
    let missing = client
        .get(&format!("{}/latest", kind.collection()))
        .unwrap();
    assert_eq!(missing.status, 404);

    // kube's webhook metrics.
    let metrics = client.get("/metrics").unwrap().body;
    let sample = |family: &str, labels: &[&str]| {
        metrics
            .lines()
            .any(|l| l.starts_with(family) && labels.iter().all(|label| l.contains(label)))
    };
    assert!(
        sample(
            "apiserver_admission_webhook_rejection_count",
            &[
                r#"name="policy.example.com""#,
                r#"type="validating""#,
                r#"error_type="no_error""#,
                r#"rejection_code="403""#
            ],
        ),
        "{metrics}"
    );
    assert!(
        sample(
            "apiserver_admission_webhook_admission_duration_seconds_count",
            &[
                r#"name="label.example.com""#,
                r#"type="admit""#,
                r#"operation="CREATE""#,
                r#"rejected="false""#
            ],
        ),
        "{metrics}"
    );
}

on_both_kinds! {
    webhooks_label_and_refuse =>
        webhooks_label_and_refuse_compiled_webapps,
        webhooks_label_and_refuse_defined_webapps;
}

/// A webhook that cannot be reached fails the write under `failurePolicy: Fail` (kube's
/// 500 naming it) and is skipped under `Ignore`; once its configuration is deleted, it is
/// not called.
#[test]
fn failure_policy_decides_when_the_webhook_is_down() {
    let pki = Pki::new();
    // A port nothing listens on: a webhook started and stopped.
    let down = Webhook::start("admission_webhook.py", &pki);
    let down_url = down.url("/label");
    drop(down);
    let server = Server::start();
    let client = Client::new(server.addr());
    let kind = WebApps::Compiled;
    let mut fail = hook("down.example.com", down_url, &pki, kind, &["CREATE"]);
    fail["timeoutSeconds"] = json!(2);
    configure(
        &client,
        "validatingwebhookconfigurations",
        "down",
        vec![fail.clone()],
    );
    wait_admitting(&client, kind, |r| r.status == 500);
    let refused = client
        .post(&kind.collection(), &webapp(kind, "web", "nginx:1.27"))
        .unwrap();
    assert_eq!(refused.status, 500, "{refused:?}");
    let status = refused.json();
    assert_eq!(status["reason"], "InternalError");
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "Internal error occurred: failed calling webhook \"down.example.com\": failed to call webhook: Post"
        ),
        "{message}"
    );

    // The same webhook, ignored when it fails.
    let path = format!("{CONFIGS}/validatingwebhookconfigurations/down");
    let mut configuration = client.get(&path).unwrap().json();
    configuration["webhooks"][0]["failurePolicy"] = json!("Ignore");
    assert_eq!(client.put(&path, &configuration).unwrap().status, 200);
    wait_admitting(&client, kind, |r| r.status == 201);
    let created = client
        .post(&kind.collection(), &webapp(kind, "web", "nginx:1.27"))
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");

    // Failing again, then deleted: admission follows each change of the configurations
    // (it reuses what it compiled from them only while their caches stand still).
    let mut configuration = client.get(&path).unwrap().json();
    configuration["webhooks"][0]["failurePolicy"] = json!("Fail");
    assert_eq!(client.put(&path, &configuration).unwrap().status, 200);
    wait_admitting(&client, kind, |r| r.status == 500);
    assert_eq!(client.delete(&path).unwrap().status, 200);
    wait_admitting(&client, kind, |r| r.status == 201);
}

/// A namespace selector limits the webhook to the objects of the namespaces it selects.
#[test]
fn a_namespace_selector_limits_the_webhook() {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let server = Server::start();
    let client = Client::new(server.addr());
    let kind = WebApps::Compiled;
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "selected", "labels": {"admission": "on"}}});
    assert_eq!(
        client
            .post("/api/v1/namespaces", &namespace)
            .unwrap()
            .status,
        201
    );
    let mut selective = hook(
        "label.example.com",
        webhook.url("/label"),
        &pki,
        kind,
        &["CREATE"],
    );
    selective["namespaceSelector"] = json!({"matchLabels": {"admission": "on"}});
    configure(
        &client,
        "mutatingwebhookconfigurations",
        "selective",
        vec![selective],
    );
    let in_selected = |name: &str| {
        let path = kind.collection_in("selected");
        client
            .post(&path, &webapp(kind, name, "nginx:1.27"))
            .unwrap()
    };
    wait_for(
        Duration::from_secs(10),
        "the webhook to be called",
        String::new,
        || {
            let path = format!("{}?dryRun=All", kind.collection_in("selected"));
            let probe = client
                .post(&path, &webapp(kind, "probe", "nginx:1.27"))
                .ok()?;
            labelled(&probe).then_some(())
        },
    );
    assert!(labelled(&in_selected("web")));
    let elsewhere = client
        .post(&kind.collection(), &webapp(kind, "web", "nginx:1.27"))
        .unwrap();
    assert_eq!(elsewhere.status, 201, "{elsewhere:?}");
    assert!(!labelled(&elsewhere), "{}", elsewhere.body);
}

/// A dry run is sent with `dryRun: true` (every v1 webhook declares it has no side
/// effects) and stores nothing; a webhook refuses a delete with its message; a write in
/// v1beta1 reaches a webhook registered for v1 converted (`matchPolicy: Equivalent`).
#[test]
fn dry_runs_deletes_and_equivalent_versions() {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let server = Server::start();
    let client = Client::new(server.addr());
    let kind = WebApps::Compiled;
    label_and_policy(&client, &webhook, &pki, kind, &["DELETE"]);

    let dry = format!("{}?dryRun=All", kind.collection());
    assert!(labelled(
        &client
            .post(&dry, &webapp(kind, "dry", "nginx:1.27"))
            .unwrap()
    ));
    let review = webhook.next_for("dry");
    assert_eq!(
        (&review["dryRun"], &review["name"]),
        (&json!(true), &json!("dry"))
    );
    assert_eq!(
        client
            .get(&format!("{}/dry", kind.collection()))
            .unwrap()
            .status,
        404
    );

    for name in ["keep", "other"] {
        let created = client
            .post(&kind.collection(), &webapp(kind, name, "nginx:1.27"))
            .unwrap();
        assert_eq!(created.status, 201, "{created:?}");
    }
    let kubectl = Kubectl::new(Version::V1_32, &server);
    kubectl
        .fails(&["delete", "wa", "keep", "-n", "default"])
        .stderr_has(
            "admission webhook \"policy.example.com\" denied the request: objects named keep stay",
        );
    kubectl.ok(&["delete", "wa", "other", "-n", "default"]);
    assert_eq!(
        client
            .get(&format!("{}/keep", kind.collection()))
            .unwrap()
            .status,
        200
    );

    // v1beta1 in, v1 to the webhook (registered for v1 only), labelled all the same.
    webhook.drain();
    let beta = json!({"apiVersion": "apps.example.dev/v1beta1", "kind": "WebApp",
        "metadata": {"name": "beta"}, "spec": {"image": "nginx:1.27"}});
    let created = client
        .post(
            "/apis/apps.example.dev/v1beta1/namespaces/default/webapps",
            &beta,
        )
        .unwrap();
    assert!(labelled(&created), "{created:?}");
    let review = webhook.next_for("beta");
    assert_eq!(review["objectVersion"], "apps.example.dev/v1");
    assert_eq!(review["requestKind"]["version"], "v1beta1");
}

/// A mutating webhook with `reinvocationPolicy: IfNeeded` is called again when a later one
/// changed the object after it, and sees that change; one with `Never` is not.
#[test]
fn webhooks_are_reinvoked_if_needed() {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let server = Server::start();
    let client = Client::new(server.addr());
    let kind = WebApps::Compiled;
    let mut label = hook(
        "label.example.com",
        webhook.url("/label"),
        &pki,
        kind,
        &["CREATE"],
    );
    label["reinvocationPolicy"] = json!("IfNeeded");
    let annotate = hook(
        "annotate.example.com",
        webhook.url("/annotate"),
        &pki,
        kind,
        &["CREATE"],
    );
    configure(
        &client,
        "mutatingwebhookconfigurations",
        "both",
        vec![label, annotate],
    );
    wait_admitting(&client, kind, labelled);
    webhook.drain();

    let created = client
        .post(&kind.collection(), &webapp(kind, "web", "nginx:1.27"))
        .unwrap();
    assert!(labelled(&created), "{created:?}");
    assert_eq!(
        created.json()["metadata"]["annotations"]["annotated-by"],
        "test"
    );
    let calls: Vec<(String, Value)> = (0..3)
        .map(|_| webhook.next_for("web"))
        .map(|review| {
            (
                review["path"].as_str().unwrap().to_owned(),
                review["annotations"].clone(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("/label".to_owned(), Value::Null),
            ("/annotate".to_owned(), Value::Null),
            ("/label".to_owned(), json!({"annotated-by": "test"})),
        ]
    );
    let later = webhook.drain();
    assert!(later.iter().all(|r| r["name"] != "web"), "no fourth call");
}

/// A delete goes to the mutating webhooks that name it, with its stored object as
/// `oldObject` and no object, before the validating ones: a mutating webhook may refuse
/// it (the validating webhooks are then not called) and fails it with kube's 500 when it
/// answers with a patch, having nothing to patch; the object stays.
#[test]
fn mutating_webhooks_judge_deletes_before_validating_ones() {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let server = Server::start();
    let client = Client::new(server.addr());
    let kind = WebApps::Compiled;
    for name in ["keep", "other", "last"] {
        let created = client
            .post(&kind.collection(), &webapp(kind, name, "nginx:1.27"))
            .unwrap();
        assert_eq!(created.status, 201, "{created:?}");
    }
    let deletes = &["DELETE"];
    let refuse = hook(
        "refuse.example.com",
        webhook.url("/policy"),
        &pki,
        kind,
        deletes,
    );
    configure(
        &client,
        "mutatingwebhookconfigurations",
        "refuse",
        vec![refuse],
    );
    let check = hook(
        "check.example.com",
        webhook.url("/validating"),
        &pki,
        kind,
        deletes,
    );
    configure(
        &client,
        "validatingwebhookconfigurations",
        "check",
        vec![check],
    );
    let delete = |name: &str, dry: bool| {
        let dry = if dry { "?dryRun=All" } else { "" };
        client
            .delete(&format!("{}/{name}{dry}", kind.collection()))
            .unwrap()
    };
    wait_for(
        Duration::from_secs(10),
        "the mutating webhook to judge deletes",
        String::new,
        || (delete("keep", true).status == 403).then_some(()),
    );

    webhook.drain();
    let refused = delete("keep", false);
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(
        refused.json()["message"],
        "admission webhook \"refuse.example.com\" denied the request: objects named keep stay"
    );
    assert_eq!(delete("other", false).status, 200);
    // In order: the refused delete's mutating call only, then both calls of the other
    // (the waiting's dry runs, whose lines may trail, passed over).
    let reviews: Vec<Value> = std::iter::repeat_with(|| webhook.next())
        .filter(|review| review["dryRun"] != true)
        .take(3)
        .collect();
    let calls: Vec<(&str, &str)> = (reviews.iter())
        .map(|r| (r["name"].as_str().unwrap(), r["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        calls,
        [
            ("keep", "/policy"),
            ("other", "/policy"),
            ("other", "/validating")
        ],
        "{reviews:?}"
    );
    assert_eq!(reviews[0]["operation"], "DELETE");
    assert_eq!(reviews[0]["hasObject"], false);
    assert_eq!(reviews[0]["hasOldObject"], true);
    assert_eq!(reviews[0]["object"]["metadata"]["name"], "keep");

    // A mutating webhook that patches a delete fails it; nothing is deleted.
    let label = hook(
        "label.example.com",
        webhook.url("/label"),
        &pki,
        kind,
        deletes,
    );
    configure(
        &client,
        "mutatingwebhookconfigurations",
        "patch",
        vec![label],
    );
    let failed = "Internal error occurred: admission webhook \"label.example.com\" attempted \
        to modify the object, which is not supported for this operation";
    wait_for(
        Duration::from_secs(10),
        "the patching webhook to be called",
        String::new,
        || (delete("last", true).status == 500).then_some(()),
    );
    let refused = delete("last", false);
    assert_eq!(
        (refused.status, refused.json()["message"].clone()),
        (500, json!(failed)),
        "{refused:?}"
    );
    assert_eq!(refused.json()["reason"], "InternalError");
    Kubectl::new(Version::V1_32, &server)
        .fails(&["delete", "wa", "last", "-n", "default"])
        .stderr_has(failed);
    let kept = client.get(&format!("{}/last", kind.collection())).unwrap();
    assert_eq!(kept.status, 200, "{kept:?}");
}

/// A create answered by an action is sent to the mutating webhooks with its body as the
/// object, in its own kind and with the defaults kube's decoding sets (a TokenRequest's
/// hour).
#[test]
fn webhooks_see_token_requests_with_their_defaults() {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let server = Server::start();
    let client = Client::new(server.addr());
    let account =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "keep"}});
    let created = client
        .post("/api/v1/namespaces/default/serviceaccounts", &account)
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let mut tokens = hook(
        "tokens.example.com",
        webhook.url("/policy"),
        &pki,
        WebApps::Compiled,
        &["CREATE"],
    );
    tokens["rules"] = json!([{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
        "resources": ["serviceaccounts/token"]}]);
    configure(
        &client,
        "mutatingwebhookconfigurations",
        "tokens",
        vec![tokens],
    );
    let request = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": ["example"]}});
    let path = "/api/v1/namespaces/default/serviceaccounts/keep/token";
    // Issued (the webhook allows it) once the webhook is called.
    let review = wait_for(
        Duration::from_secs(10),
        "the webhook to be sent token requests",
        String::new,
        || {
            let issued = client.post(path, &request).ok()?;
            assert_eq!(issued.status, 201, "{issued:?}");
            webhook
                .drain()
                .into_iter()
                .find(|review| review["name"] == "keep")
        },
    );
    assert_eq!(review["operation"], "CREATE", "{review}");
    assert_eq!(review["subResource"], "token");
    assert_eq!(
        review["kind"],
        json!({"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"})
    );
    assert_eq!(
        review["object"]["spec"]["expirationSeconds"], 3600,
        "{review}"
    );
    assert_eq!(review["object"]["spec"]["audiences"], json!(["example"]));
}
