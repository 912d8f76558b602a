//! kapi as the aggregator in front of another kapi server: two secure servers on loopback.
//! The back one serves CronTabs (a CustomResourceDefinition) and trusts the front one's
//! proxy client certificate (`--requestheader-client-ca-file`); the front one registers an
//! `APIService` for `stable.example.com/v1` pointing at it (`spec.url`, kapi's extension
//! for servers outside a cluster) and proxies that group-version there
//! (`--proxy-client-cert-file`), with the end user in the front-proxy headers. Driven by
//! kubectl 1.32 and 1.20 and raw HTTPS.

use crate::support;

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use support::crontabs::{DEFINITIONS, crontab, crontab_definition, wait_established};
use support::http::Client;
use support::kubectl::{Kubectl, Version};
use support::pki::{BOB_TOKEN, Pki};
use support::webhook::Webhook;
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

/// A front server presenting `proxy`'s certificate `front-proxy-client` to the servers
/// it proxies to, with `extra` flags.
fn start_front(proxy: &Pki, extra: &[&str]) -> Server {
    let (cert, key) = proxy.client("front-proxy-client", None);
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let mut flags = vec![
        "--proxy-client-cert-file",
        &cert,
        "--proxy-client-key-file",
        &key,
    ];
    flags.extend_from_slice(extra);
    Server::start_secure(Pki::new(), Backend::Embedded, &flags)
}

fn start() -> Pair {
    // The front one trusts its own proxy certificate's CA for front-proxy requests and so
    // publishes it (`kube-system/extension-apiserver-authentication`); the back one reads
    // it there through `--authentication-kubeconfig`, as an extension server behind a
    // cluster does.
    let proxy = Pki::new();
    let proxy_ca = proxy.ca.display().to_string();
    let front = start_front(
        &proxy,
        &[
            "--requestheader-client-ca-file",
            &proxy_ca,
            "--requestheader-allowed-names",
            "front-proxy-client",
        ],
    );
    let published = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";
    let trust = wait_for(
        Duration::from_secs(10),
        "the front one to publish its client trust",
        || front.log().tail(30),
        || {
            let config_map = front.client().get(published).ok()?;
            (config_map.status == 200).then(|| config_map.json())
        },
    );
    assert_eq!(
        trust["data"]["requestheader-allowed-names"],
        "[\"front-proxy-client\"]"
    );
    let kubeconfig = support::kubeconfig(&front.url(), &front.pki().ca, support::pki::ADMIN_TOKEN);
    let back = Server::start_secure(
        Pki::new(),
        Backend::Embedded,
        &["--authentication-kubeconfig", &kubeconfig],
    );
    let back_admin = back.client();
    let created = back_admin.post(DEFINITIONS, &crontab_definition()).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    wait_established(&back_admin, "crontabs.stable.example.com");
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
    // The back server's authorizer learns the binding from its watch: soon, not at once.
    let made = support::wait_for(
        std::time::Duration::from_secs(20),
        "the back server to allow devs",
        String::new,
        || {
            let made = bob
                .post(
                    crontabs,
                    &crontab("nightly", json!({"cronSpec": "0 3 * * *"})),
                )
                .unwrap();
            (made.status != 403).then_some(made)
        },
    );
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
    // `kubectl get apiservices` prints them as kube does.
    let table = Kubectl::new(Version::V1_32, &front)
        .ok(&["get", "apiservices"])
        .table();
    let local = table
        .row_where("NAME", "v1.")
        .expect("the legacy group's row");
    assert_eq!((local["SERVICE"], local["AVAILABLE"]), ("Local", "True"));
    let remote = (table.row_where("NAME", "v1.stable.example.com")).expect("the remote row");
    assert_eq!(
        remote["AVAILABLE"], "False (FailedDiscoveryCheck)",
        "{table:?}"
    );
    assert_eq!(remote["SERVICE"], back.url(), "kapi's url, as it is");
    let again = bob.get(crontabs).unwrap();
    assert_eq!(
        (again.status, again.body.as_str()),
        (503, "service unavailable\n")
    );
    let configmaps = admin.get("/api/v1/namespaces/default/configmaps").unwrap();
    assert_eq!(configmaps.status, 200, "{configmaps:?}");
    // kube's aggregator metrics say so too.
    let metrics = admin.get("/metrics").unwrap().body;
    for line in [
        "aggregator_unavailable_apiservice{name=\"v1.stable.example.com\"} 1",
        "aggregator_unavailable_apiservice{name=\"v1.apps.example.dev\"} 0",
        "aggregator_unavailable_apiservice_total{name=\"v1.stable.example.com\",reason=\"FailedDiscoveryCheck\"} 1",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
}

/// kapi behind a real kube-apiserver (`shared/peer/`, 1.20) as its extension API server:
/// kapi reads the peer's front-proxy settings from the ConfigMap the peer publishes; the
/// peer's aggregator reaches kapi through an `ExternalName` Service (`localhost`; the peer
/// refuses loopback Endpoints), proxies `platform.example.dev/v1` with its front-proxy
/// certificate, and kubectl 1.32 and 1.20 against the peer discover, explain, create, list,
/// watch and delete Tenants that kapi stores, kapi authorizing the peer's user by the
/// headers. Needs the peer running (`KAPI_PEER_DIR`, fixed ports): run one at a time.
#[test]
#[ignore = "needs the kube-apiserver of shared/peer/ running"]
fn behind_kube_apiserver() {
    let access = support::Peer::from_env();
    let (peer_url, ca, token) = (access.url, access.ca.clone(), access.token.clone());
    let peer = access.client();
    let ca_flag = ca.display().to_string();
    // kapi learns the peer's front-proxy CA and headers where the peer publishes them
    // (`kube-system/extension-apiserver-authentication`), through its kubeconfig.
    let kubeconfig_path = support::kubeconfig(peer_url, &ca, &token);
    let back = Server::start_secure(
        Pki::new(),
        Backend::Embedded,
        &["--authentication-kubeconfig", &kubeconfig_path],
    );
    let port = back.addr().port();
    let service_path = "/api/v1/namespaces/default/services/kapi-extension";
    let apiservice_path = "/apis/apiregistration.k8s.io/v1/apiservices/v1.platform.example.dev";
    // Leftovers of an earlier run go first, and the peer stops routing them (it may drop
    // the route of a re-created APIService when it sees the delete late).
    let cleanup = Cleanup(&peer, &[apiservice_path, service_path]);
    drop(Cleanup(&peer, cleanup.1));
    wait_for(
        Duration::from_secs(30),
        "the peer to forget an earlier registration",
        String::new,
        || {
            let gone = peer.get(apiservice_path).ok()?.status == 404;
            let unrouted = peer.get("/apis/platform.example.dev/v1").ok()?.status == 404;
            (gone && unrouted).then_some(())
        },
    );
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kapi-extension", "namespace": "default"},
        "spec": {"type": "ExternalName", "externalName": "localhost",
            "ports": [{"name": "https", "port": port, "targetPort": port}]}
    });
    let created = peer
        .post("/api/v1/namespaces/default/services", &service)
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let registration = json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1.platform.example.dev"},
        "spec": {"group": "platform.example.dev", "version": "v1",
            "service": {"namespace": "default", "name": "kapi-extension", "port": port},
            "insecureSkipTLSVerify": true, "groupPriorityMinimum": 1000, "versionPriority": 15}
    });
    let created = peer
        .post("/apis/apiregistration.k8s.io/v1/apiservices", &registration)
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let mut routed = 0;
    wait_for(
        Duration::from_secs(30),
        "the peer to find kapi available",
        || format!("{:?}", peer.get(apiservice_path)),
        || {
            let service = peer.get(apiservice_path).ok()?.json();
            let conditions = service.pointer("/status/conditions")?.as_array()?.clone();
            let available =
                (conditions.iter()).any(|c| c["type"] == "Available" && c["status"] == "True");
            // The peer's route comes and goes for a moment after it finds the APIService
            // available (its controllers catch up): wait until it has answered 20 times in
            // a row.
            match peer.get("/apis/platform.example.dev/v1").ok()?.status {
                200 => routed += 1,
                _ => routed = 0,
            }
            (available && routed >= 20).then_some(())
        },
    );

    // The peer merges kapi's OpenAPI a little later (its controller downloads it a second
    // after the APIService appears).
    wait_for(
        Duration::from_secs(90),
        "the peer's OpenAPI to include Tenant",
        String::new,
        || {
            let document = peer.get("/openapi/v2").ok()?.json();
            let definitions = document["definitions"].as_object()?;
            definitions
                .keys()
                .any(|name| name.ends_with(".Tenant"))
                .then_some(())
        },
    );
    for version in [Version::V1_32, Version::V1_20] {
        let kubectl = Kubectl::at(
            version,
            peer_url,
            vec![
                format!("--certificate-authority={ca_flag}"),
                format!("--token={token}"),
            ],
        );
        let name = format!("team-{}", version.label().replace(['.', ' '], "-"));
        kubectl
            .ok(&[
                "api-resources",
                "--api-group=platform.example.dev",
                "--no-headers",
            ])
            .stdout_has("tenants");
        kubectl
            .ok(&["explain", "tenants.spec"])
            .stdout_has("displayName");
        let manifest = kubectl.write_file(
            "tenant.yaml",
            &format!(
                "apiVersion: platform.example.dev/v1\nkind: Tenant\nmetadata:\n  name: {name}\n\
                 spec:\n  displayName: Team\n  owners: [alice]\n"
            ),
        );
        kubectl.ok(&["create", "-f", &manifest]);
        let stored = back
            .client()
            .get(&format!("/apis/platform.example.dev/v1/tenants/{name}"));
        assert_eq!(stored.unwrap().status, 200, "stored by kapi");
        kubectl.ok(&["get", "tenants"]).stdout_has(&name);
        let mut watch = kubectl.spawn(&["get", "tenants", "-w", "-o", "name"]);
        watch.wait_line(Duration::from_secs(20), "the listed Tenant", |l| {
            l.contains(&name)
        });
        kubectl.ok(&["label", "tenant", &name, "seen=yes"]);
        watch.wait_line(Duration::from_secs(20), "the change", |l| l.contains(&name));
        drop(watch);
        kubectl.ok(&["delete", "tenant", &name]);
    }
    // kapi saw the peer's user, named by the peer's front-proxy headers, create them.
    let log = back.log().tail(100_000);
    let created = log.lines().any(|line| {
        line.contains("path=/apis/platform.example.dev/v1/tenants")
            && line.contains("verb=\"create\" status=201")
            && line.contains("user=\"admin\"")
    });
    assert!(created, "{}", back.log().tail(40));
    drop(cleanup);
}

/// Deletes its paths from the peer when dropped, also when a test fails.
struct Cleanup<'a>(&'a Client, &'a [&'a str]);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        for path in self.1 {
            let _ = self.0.delete(path);
        }
    }
}

/// Through the proxy to a server of another kind (a Python script): the request arrives
/// with the user in kube's front-proxy headers (what the client sent under those names
/// replaced, its credentials removed) over the proxy's client certificate, and an upgrade
/// (`Connection: Upgrade`) is answered with the server's 101 and joined both ways.
#[test]
fn requests_and_upgrades_reach_a_server_of_another_kind() {
    let proxy = Pki::new();
    let front = start_front(&proxy, &[]);
    let backend_pki = Pki::new();
    let proxy_ca = proxy.ca.display().to_string();
    let backend = Webhook::start_with(
        "aggregated_backend.py",
        &backend_pki,
        &[&proxy_ca, "echo.example.com/v1"],
    );
    let ca = base64::engine::general_purpose::STANDARD.encode(backend_pki.ca_pem());
    let registration = json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1.echo.example.com"},
        "spec": {"group": "echo.example.com", "version": "v1", "url": backend.url(""),
            "caBundle": ca, "groupPriorityMinimum": 1000, "versionPriority": 15}
    });
    let admin = front.client();
    let created = admin
        .post("/apis/apiregistration.k8s.io/v1/apiservices", &registration)
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let path = "/apis/apiregistration.k8s.io/v1/apiservices/v1.echo.example.com";
    wait_for(
        Duration::from_secs(15),
        "the APIService to be available",
        || format!("{:?}", admin.get(path)),
        || {
            let service = admin.get(path).ok()?.json();
            (service["status"]["conditions"][0]["status"] == "True").then_some(())
        },
    );

    let seen = admin
        .request_with_headers(
            "GET",
            "/apis/echo.example.com/v1/namespaces/default/things/headers",
            None,
            &[("X-Remote-User", "mallory"), ("X-Remote-Extra-Evil", "yes")],
        )
        .unwrap();
    assert_eq!(seen.status, 200, "{seen:?}");
    let seen = seen.json();
    let headers = &seen["headers"];
    assert_eq!(headers["x-remote-user"], json!(["admin"]), "{seen}");
    assert_eq!(
        headers["x-remote-group"],
        json!(["system:masters", "system:authenticated"]),
        "{seen}"
    );
    assert!(headers.get("authorization").is_none(), "{seen}");
    assert!(headers.get("x-remote-extra-evil").is_none(), "{seen}");
    assert_eq!(seen["client"], "front-proxy-client", "{seen}");

    // An upgrade, on a raw TLS connection (HTTP/1.1).
    use rustls::pki_types::pem::PemObject;
    use std::io::{Read, Write};
    let mut roots = rustls::RootCertStore::empty();
    for certificate in rustls::pki_types::CertificateDer::pem_slice_iter(&front.pki().ca_pem()) {
        roots.add(certificate.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let connection = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let socket = std::net::TcpStream::connect(front.addr()).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut stream = rustls::StreamOwned::new(connection, socket);
    write!(
        stream,
        "GET /apis/echo.example.com/v1/namespaces/default/things/echo HTTP/1.1\r\n\
         Host: {}\r\nAuthorization: Bearer {}\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n",
        front.addr(),
        support::pki::ADMIN_TOKEN
    )
    .unwrap();
    stream.flush().unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_string();
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    stream.write_all(b"hello through the proxy").unwrap();
    stream.flush().unwrap();
    let mut echoed = [0u8; 23];
    stream.read_exact(&mut echoed).unwrap();
    assert_eq!(&echoed, b"hello through the proxy");
}
