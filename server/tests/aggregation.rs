//! kapi as the aggregator in front of another kapi server: two secure servers on loopback.
//! The back one serves CronTabs (a CustomResourceDefinition) and trusts the front one's
//! proxy client certificate (`--requestheader-client-ca-file`); the front one registers an
//! `APIService` for `stable.example.com/v1` pointing at it (`spec.url`, kapi's extension
//! for servers outside a cluster) and proxies that group-version there
//! (`--proxy-client-cert-file`), with the end user in the front-proxy headers. Driven by
//! kubectl 1.32 and 1.20 and raw HTTPS.

mod support;

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use support::crontabs::{DEFINITIONS, crontab, crontab_definition, wait_established};
use support::http::Client;
use support::kubectl::{Kubectl, Version};
use support::pki::{BOB_TOKEN, Pki};
use support::{Backend, Server, wait_for};

const APISERVICE: &str = "/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com";

/// RBAC giving group `devs` everything on CronTabs.
fn grant_devs(client: &Client) {
    let role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "crontab-editor"},
        "rules": [{"apiGroups": ["stable.example.com"], "resources": ["crontabs"], "verbs": ["*"]}]
    });
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "devs-edit-crontabs"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "crontab-editor"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"}]
    });
    for (path, body) in [
        ("/apis/rbac.authorization.k8s.io/v1/clusterroles", role),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            binding,
        ),
    ] {
        let created = client.post(path, &body).unwrap();
        assert_eq!(created.status, 201, "{created:?}");
    }
}

/// The two servers: the back one serving CronTabs and trusting the front one's proxy
/// certificate; the front one with that certificate.
struct Pair {
    back: Server,
    front: Server,
}

fn start() -> Pair {
    let proxy = Pki::new();
    let proxy_ca = proxy.ca.display().to_string();
    let back = Server::start_secure(
        Pki::new(),
        Backend::Embedded,
        &[
            "--requestheader-client-ca-file",
            &proxy_ca,
            "--requestheader-allowed-names",
            "front-proxy-client",
        ],
    );
    let back_admin = back.client();
    let created = back_admin.post(DEFINITIONS, &crontab_definition()).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    wait_established(&back_admin, "crontabs.stable.example.com");

    let (cert, key) = proxy.client("front-proxy-client", None);
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let front = Server::start_secure(
        Pki::new(),
        Backend::Embedded,
        &[
            "--proxy-client-cert-file",
            &cert,
            "--proxy-client-key-file",
            &key,
        ],
    );
    // The front-proxy PKI's files must outlive the servers.
    std::mem::forget(proxy);
    Pair { back, front }
}

/// The APIService of the back one's CronTabs, as a manifest.
fn api_service(back: &Server) -> Value {
    let ca = base64::engine::general_purpose::STANDARD.encode(back.pki().ca_pem());
    json!({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "version": "v1",
            "url": back.url(),
            "caBundle": ca,
            "groupPriorityMinimum": 1000,
            "versionPriority": 15
        }
    })
}

/// The APIService's `Available` condition once its status is `status`.
#[track_caller]
fn wait_available(front: &Client, status: &str) -> Value {
    wait_for(
        Duration::from_secs(15),
        &format!("the APIService to be Available={status}"),
        || format!("{:?}", front.get(APISERVICE)),
        || {
            let service = front.get(APISERVICE).ok()?.json();
            let conditions = service.pointer("/status/conditions")?.as_array()?;
            let available = conditions.iter().find(|c| c["type"] == "Available")?;
            (available["status"] == status).then(|| available.clone())
        },
    )
}

/// kubectl against the front one finds, explains, creates, lists, watches and deletes the
/// back one's CronTabs.
fn kubectl_scenario(kubectl: &Kubectl, back: &Server) {
    let name = format!(
        "weekly-{}",
        kubectl.version.label().replace(['.', ' '], "-")
    );
    kubectl
        .ok(&[
            "api-resources",
            "--api-group=stable.example.com",
            "--no-headers",
        ])
        .stdout_has("crontabs")
        .stdout_has("stable.example.com/v1");
    kubectl
        .ok(&["explain", "crontabs.spec"])
        .stdout_has("cronSpec");
    let manifest = kubectl.write_file(
        "crontab.yaml",
        &format!(
            "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: {name}\n  \
             namespace: default\nspec:\n  cronSpec: \"0 4 * * 0\"\n  replicas: 2\n"
        ),
    );
    kubectl.ok(&["create", "-f", &manifest]);
    let table = kubectl.ok(&["get", "crontabs", "-n", "default"]).table();
    let row = table
        .row_where("NAME", &name)
        .expect("the new CronTab's row");
    assert_eq!(
        (row["SPEC"], row["REPLICAS"]),
        ("0 4 * * 0", "2"),
        "{row:?}"
    );

    // A watch through the proxy sees a change made on the back one.
    let mut watch = kubectl.spawn(&["get", "crontabs", "-n", "default", "-w", "-o", "name"]);
    watch.wait_line(Duration::from_secs(20), "the listed object", |l| {
        l.contains(&name)
    });
    let path = format!("/apis/stable.example.com/v1/namespaces/default/crontabs/{name}");
    let patched = back
        .client()
        .request(
            "PATCH",
            &path,
            "application/merge-patch+json",
            Some(r#"{"spec":{"replicas":3}}"#),
        )
        .unwrap();
    assert_eq!(patched.status, 200, "{patched:?}");
    watch.wait_line(Duration::from_secs(20), "the change", |l| l.contains(&name));
    drop(watch);

    kubectl.ok(&["delete", "crontab", &name, "-n", "default"]);
    let gone = back.client().get(&path).unwrap();
    assert_eq!(gone.status, 404, "{gone:?}");
}

#[test]
fn the_front_server_proxies_a_group_to_the_back_server() {
    let Pair { mut back, front } = start();
    let admin = front.client();
    grant_devs(&admin);

    // The local group-versions are registered as local APIServices.
    let local = wait_for(
        Duration::from_secs(10),
        "the local APIServices",
        String::new,
        || {
            let service = admin
                .get("/apis/apiregistration.k8s.io/v1/apiservices/v1.")
                .ok()?;
            (service.status == 200).then(|| service.json())
        },
    );
    assert_eq!(local["spec"]["groupPriorityMinimum"], 18000, "{local}");
    assert_eq!(
        local["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "onstart"
    );
    assert_eq!(
        local["status"]["conditions"][0],
        json!({"type": "Available", "status": "True", "reason": "Local",
            "message": "Local APIServices are always available",
            "lastTransitionTime": local["status"]["conditions"][0]["lastTransitionTime"]})
    );

    let created = admin
        .post(
            "/apis/apiregistration.k8s.io/v1/apiservices",
            &api_service(&back),
        )
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let available = wait_available(&admin, "True");
    assert_eq!(available["reason"], "Passed", "{available}");

    // bob (group devs) through the front one: the back one authorizes him by the
    // front-proxy headers, and refuses until it grants devs too.
    let bob = Client::with_tls(&front.url(), &front.pki().ca_pem(), BOB_TOKEN);
    let crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs";
    let refused = bob.get(crontabs).unwrap();
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(
        refused.json()["message"],
        "crontabs.stable.example.com is forbidden: User \"bob\" cannot list resource \
         \"crontabs\" in API group \"stable.example.com\" in the namespace \"default\"",
    );
    grant_devs(&back.client());
    let made = bob
        .post(
            crontabs,
            &crontab("nightly", json!({"cronSpec": "0 3 * * *"})),
        )
        .unwrap();
    assert_eq!(made.status, 201, "{made:?}");
    let stored = back.client().get(&format!("{crontabs}/nightly")).unwrap();
    assert_eq!(stored.status, 200, "{stored:?}");
    assert_eq!(
        stored.json()["spec"]["replicas"],
        1,
        "defaulted by the back one"
    );

    // A direct request with the headers but without the proxy's certificate is not
    // believed.
    let direct = Client::anonymous_tls(&back.url(), &back.pki().ca_pem());
    let answer = direct
        .request_with_headers(
            "GET",
            crontabs,
            None,
            &[("X-Remote-User", "bob"), ("X-Remote-Group", "devs")],
        )
        .unwrap();
    assert_eq!(answer.status, 403, "{answer:?}");
    assert!(answer.body.contains("system:anonymous"), "{answer:?}");

    // kubectl, both versions, as bob: discovery, explain, create, tables, a watch, delete.
    for version in [Version::V1_32, Version::V1_20] {
        kubectl_scenario(&Kubectl::with_token(version, &front, BOB_TOKEN), &back);
    }

    // Its server stops: the group answers 503, the front one's own kinds still work.
    back.kill_9();
    let gone = bob.get(crontabs).unwrap();
    assert_eq!(gone.status, 503, "{gone:?}");
    let unavailable = wait_available(&admin, "False");
    assert_eq!(
        unavailable["reason"], "FailedDiscoveryCheck",
        "{unavailable}"
    );
    let again = bob.get(crontabs).unwrap();
    assert_eq!(
        (again.status, again.body.as_str()),
        (503, "service unavailable\n")
    );
    let configmaps = admin.get("/api/v1/namespaces/default/configmaps").unwrap();
    assert_eq!(configmaps.status, 200, "{configmaps:?}");
}
