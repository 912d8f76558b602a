//! kube's defaults on the built-in kinds, through kubectl's everyday commands: what
//! `kubectl create deployment`, `kubectl run` and `kubectl create service` leave is
//! completed as kube-apiserver completes it (the kinds' `SetDefaults_*` and `+default`
//! markers), owned by the creator as kube owns defaults, set again when a patch removes
//! them, and seen by a mutating webhook before it answers. The field-by-field comparison
//! with kube is the differential table's (`differential/builtin.yaml`, `defaults-*`).

use crate::support;

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use support::http::Client;
use support::pki::Pki;
use support::webhook::Webhook;
use support::{Kubectl, Server, Version, wait_for};

support::for_both_versions! {
    kubectl_commands_leave_kubes_defaults =>
        kubectl_1_32_commands_leave_kubes_defaults,
        kubectl_1_20_commands_leave_kubes_defaults;
}

fn get(kubectl: &Kubectl, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend(args);
    all.extend(["-o", "json"]);
    kubectl.ok(&all).json()
}

fn kubectl_commands_leave_kubes_defaults(version: Version) {
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);

    kubectl.ok(&["create", "deployment", "web", "--image=nginx"]);
    let deployment = get(&kubectl, &["deployment", "web"]);
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 1, "{deployment}");
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["securityContext"], json!({}));
    let container = &pod["containers"][0];
    assert_eq!(container["imagePullPolicy"], "Always", "untagged: latest");
    assert_eq!(container["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(container["terminationMessagePolicy"], "File");

    // A merge patch that removes defaulted fields gets them back, as kube defaults every
    // decoded object.
    kubectl.ok(&[
        "patch",
        "deployment",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"revisionHistoryLimit":null,"template":{"spec":{"dnsPolicy":null}}}}"#,
    ]);
    let patched = get(&kubectl, &["deployment", "web"]);
    assert_eq!(patched["spec"]["revisionHistoryLimit"], 10, "{patched}");
    assert_eq!(
        patched["spec"]["template"]["spec"]["dnsPolicy"],
        "ClusterFirst"
    );
    assert_eq!(
        patched["metadata"]["generation"], 1,
        "defaults put back change nothing"
    );

    kubectl.ok(&["run", "one", "--image=nginx:1.27"]);
    let pod = get(&kubectl, &["pod", "one"]);
    assert_eq!(
        pod["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    assert_eq!(pod["spec"]["enableServiceLinks"], true);
    assert_eq!(pod["status"]["phase"], "Pending", "{pod}");
    assert_eq!(pod["status"]["qosClass"], "BestEffort");

    kubectl.ok(&["create", "service", "clusterip", "front", "--tcp=80:8080"]);
    let service = get(&kubectl, &["service", "front"]);
    assert_eq!(service["spec"]["type"], "ClusterIP", "{service}");
    assert_eq!(service["spec"]["sessionAffinity"], "None");
    assert_eq!(service["spec"]["internalTrafficPolicy"], "Cluster");
    assert_eq!(service["spec"]["ports"][0]["protocol"], "TCP");
    assert_eq!(service["spec"]["ports"][0]["targetPort"], 8080);

    // A Secret's stringData is folded into data on decode: never stored, never read back.
    let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: folded\n\
                  data:\n  a: aGk=\n  b: aGk=\nstringData:\n  b: there\n  c: new\n";
    let file = kubectl.write_file("secret.yaml", secret);
    kubectl.ok(&["create", "-f", &file]);
    let secret = get(&kubectl, &["secret", "folded"]);
    assert_eq!(
        secret["data"],
        json!({"a": "aGk=", "b": "dGhlcmU=", "c": "bmV3"}),
        "{secret}"
    );
    assert!(secret.get("stringData").is_none(), "{secret}");
    assert_eq!(secret["type"], "Opaque");

    // A Job selects its pods by its uid, which labels its template.
    kubectl.ok(&["create", "job", "once", "--image=busybox"]);
    let job = get(&kubectl, &["job", "once"]);
    let uid = job["metadata"]["uid"].as_str().expect("a uid").to_owned();
    assert_eq!(
        job["spec"]["selector"]["matchLabels"],
        json!({"batch.kubernetes.io/controller-uid": uid}),
        "{job}"
    );
    let labels = &job["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["batch.kubernetes.io/job-name"], "once");
    assert_eq!(labels["controller-uid"], uid.as_str());
    assert_eq!(job["spec"]["backoffLimit"], 6);
    assert_eq!(job["spec"]["completions"], 1);
}

/// A creator (an update, in field management's terms) owns what defaulting set, as in kube
/// (its managed fields list them), while an applier owns only what it applied; a second
/// server-side apply of the same manifest changes nothing.
#[test]
fn defaults_are_owned_by_their_creator_and_reapplied_in_peace() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let manifest = |name: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  \
             selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      \
             labels: {{app: {name}}}\n    spec:\n      containers:\n      - name: app\n        \
             image: app:v1\n"
        )
    };
    let created = kubectl.write_file("created.yaml", &manifest("created"));
    kubectl.ok(&["create", "-f", &created]);
    let owned = get(
        &kubectl,
        &["deployment", "created", "--show-managed-fields"],
    );
    let owned = owned["metadata"]["managedFields"].to_string();
    assert!(owned.contains("f:progressDeadlineSeconds"), "{owned}");
    assert!(owned.contains("f:imagePullPolicy"), "{owned}");

    let file = kubectl.write_file("applied.yaml", &manifest("applied"));
    kubectl.ok(&["apply", "--server-side", "-f", &file]);
    let first = get(
        &kubectl,
        &["deployment", "applied", "--show-managed-fields"],
    );
    let applied = first["metadata"]["managedFields"].to_string();
    assert!(!applied.contains("f:progressDeadlineSeconds"), "{applied}");
    assert_eq!(first["spec"]["progressDeadlineSeconds"], 600);
    kubectl.ok(&["apply", "--server-side", "-f", &file]);
    let second = get(&kubectl, &["deployment", "applied"]);
    assert_eq!(
        first["metadata"]["resourceVersion"], second["metadata"]["resourceVersion"],
        "a second apply of the same manifest is a no-op"
    );
}

/// A mutating webhook is sent the object with kube's defaults already set, as kube's
/// webhooks see objects defaulted on decode.
#[test]
fn mutating_webhooks_see_defaulted_objects() {
    let pki = Pki::new();
    let webhook = Webhook::start("admission_webhook.py", &pki);
    let server = Server::start();
    let client = Client::new(server.addr());
    let configuration = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "labels"},
        "webhooks": [{
            "name": "label.example.com",
            "clientConfig": {
                "url": webhook.url("/label"),
                "caBundle": base64::engine::general_purpose::STANDARD.encode(pki.ca_pem()),
            },
            "rules": [{"operations": ["CREATE"], "apiGroups": ["apps"],
                "apiVersions": ["v1"], "resources": ["deployments"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }],
    });
    let path = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
    let created = client.post(path, &configuration).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let deployment = |name: &str| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}}})
    };
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    // The configuration reaches admission through the watch cache, a moment later.
    wait_for(
        Duration::from_secs(10),
        "the webhook to be called",
        String::new,
        || {
            let probe = client
                .post(&format!("{deployments}?dryRun=All"), &deployment("probe"))
                .ok()?;
            (probe.json()["metadata"]["labels"]["admitted-by"] == "test").then_some(())
        },
    );
    webhook.drain();
    let created = client.post(deployments, &deployment("seen")).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let review = webhook.next_for("seen");
    let spec = &review["spec"];
    assert_eq!(spec["progressDeadlineSeconds"], 600, "{review}");
    assert_eq!(spec["strategy"]["type"], "RollingUpdate");
    let container = &spec["template"]["spec"]["containers"][0];
    assert_eq!(container["imagePullPolicy"], "IfNotPresent");
}
