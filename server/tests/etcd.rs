//! Several `kapi-server` replicas on one etcd, and etcd clusters losing members: what only
//! the etcd backend has. Raw HTTP, since what is checked is the wire (statuses, watch
//! lines), across processes.
//!
//! - Two replicas on one etcd: a create through one is readable through the other at once,
//!   a watch on one sees writes made through the other, and concurrent updates of one
//!   object through both give exactly one 200 and one 409.
//! - A three-member cluster: one member down changes nothing for clients; two down makes
//!   requests fail fast with 503/504 and `/readyz` 503; when the members return the server
//!   recovers by itself (ready again) and its open watch resumes.
//! - `kill -9` of a replica while writers write through it loses no acknowledged write.
//! - `--etcd-prefix`: the keys in etcd, read with etcd's own client, are kube-apiserver's
//!   layout under the prefix, holding the storage version; servers on different prefixes
//!   of one etcd do not see each other's objects.
//! - TLS to etcd with a client certificate.
//! - A kind holding more than 4 MiB (one default gRPC message) is listed whole by a replica
//!   that starts afterwards.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use kapi::storage::etcd::etcd_client;
use serde_json::{Value, json};
use support::etcd::Etcd;
use support::http::{Client, Watch};
use support::server::etcd_args;
use support::{Server, wait_for};

/// How long one watch event may take.
const EVENT: Duration = Duration::from_secs(20);

/// The etcd backend's deadline for one request (`EtcdOptions::request_timeout`).
const STORAGE_DEADLINE: Duration = Duration::from_secs(5);

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
        "data": {"value": value}})
}

fn rv(object: &Value) -> String {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[track_caller]
fn create(client: &Client, name: &str) -> Value {
    let response = client.post(CONFIGMAPS, &configmap(name, "1")).unwrap();
    assert_eq!(response.status, 201, "{response:?}");
    response.json()
}

/// A watch of the ConfigMaps in `default` after `resource_version`.
#[track_caller]
fn watch(client: &Client, resource_version: &str) -> Watch {
    let path = format!("{CONFIGMAPS}?watch=true&resourceVersion={resource_version}");
    let mut watch = client.watch(&path, "application/json").unwrap();
    if watch.status != 200 {
        let body = watch.next_line(EVENT).unwrap_or_default();
        panic!("watch {path}: {} {body}", watch.status);
    }
    watch
}

/// The next event that is not a bookmark: `(type, name)`.
#[track_caller]
fn next_change(watch: &mut Watch) -> (String, String) {
    loop {
        let event = watch.next_event(EVENT);
        let kind = event["type"].as_str().unwrap_or_default().to_owned();
        if kind != "BOOKMARK" {
            let name = event["object"]["metadata"]["name"].as_str();
            return (kind, name.unwrap_or_default().to_owned());
        }
    }
}

#[test]
fn two_replicas_share_one_etcd() {
    let etcd = Etcd::start();
    let a = Server::start_with(&etcd_args(&etcd));
    let b = Server::start_with(&etcd_args(&etcd));
    let (client_a, client_b) = (Client::new(a.addr()), Client::new(b.addr()));

    // Read-your-writes across replicas: reads are linearizable etcd reads.
    for i in 0..20 {
        let name = format!("cm-{i}");
        let created = create(&client_a, &name);
        let read = client_b.get(&format!("{CONFIGMAPS}/{name}")).unwrap();
        assert_eq!(
            read.status, 200,
            "{name} through the other replica: {read:?}"
        );
        assert_eq!(read.json()["metadata"]["uid"], created["metadata"]["uid"]);
        assert_eq!(rv(&read.json()), rv(&created));
    }
    let list_b = client_b.get(CONFIGMAPS).unwrap().json();
    assert_eq!(list_b["items"].as_array().map(Vec::len), Some(20));

    // A watch on one replica sees writes made through the other, in order.
    let mut watch_b = watch(&client_b, &rv(&list_b));
    create(&client_a, "watched");
    let response = client_a.delete(&format!("{CONFIGMAPS}/cm-0")).unwrap();
    assert_eq!(response.status, 200, "{response:?}");
    assert_eq!(
        next_change(&mut watch_b),
        ("ADDED".into(), "watched".into())
    );
    assert_eq!(next_change(&mut watch_b), ("DELETED".into(), "cm-0".into()));

    // Concurrent updates of one object through both replicas, from the same
    // resourceVersion: one wins, the other gets 409 Conflict.
    for round in 0..5 {
        let path = format!("{CONFIGMAPS}/cm-1");
        let current = client_a.get(&path).unwrap().json();
        let barrier = Arc::new(Barrier::new(2));
        let updates: Vec<_> = [a.addr(), b.addr()]
            .into_iter()
            .enumerate()
            .map(|(i, addr)| {
                let (barrier, path) = (barrier.clone(), path.clone());
                let mut object = current.clone();
                object["data"]["value"] = json!(format!("round {round} replica {i}"));
                thread::spawn(move || {
                    let client = Client::new(addr);
                    barrier.wait();
                    client.put(&path, &object).unwrap()
                })
            })
            .collect();
        let mut statuses: Vec<_> = (updates.into_iter())
            .map(|u| u.join().unwrap())
            .map(|r| {
                if r.status == 409 {
                    assert_eq!(r.json()["reason"], "Conflict", "{r:?}");
                }
                r.status
            })
            .collect();
        statuses.sort();
        assert_eq!(statuses, [200, 409], "round {round}");
    }
}

#[test]
fn a_three_member_cluster_loses_and_regains_quorum() {
    let mut etcd = Etcd::cluster(3);
    let server = Server::start_with(&etcd_args(&etcd));
    let client = Client::new(server.addr());
    let first = create(&client, "before");
    let mut open_watch = watch(&client, &rv(&first));

    // One member down, the leader (the harder case: an election follows): a majority
    // remains; requests go on (the client retries on the others what could not reach the
    // stopped one, and what a member refused for want of a leader; a create's namespace
    // check, a linearizable read, rides out the election before its write is sent).
    let leader = etcd.leader().expect("a leader");
    etcd.stop(leader);
    for i in 0..10 {
        let name = format!("one-down-{i}");
        create(&client, &name);
        let read = client.get(&format!("{CONFIGMAPS}/{name}")).unwrap();
        assert_eq!(read.status, 200, "{read:?}");
        assert_eq!(next_change(&mut open_watch), ("ADDED".into(), name));
    }

    // Two down: no quorum. Requests fail with 503/504 Status in bounded time, never hang.
    let second = (leader + 1) % 3;
    etcd.stop(second);
    let mut lost_create = false;
    for (method, path) in [
        ("POST", CONFIGMAPS.to_owned()),
        ("GET", format!("{CONFIGMAPS}/before")),
        ("GET", CONFIGMAPS.to_owned()),
    ] {
        let started = Instant::now();
        let response = match method {
            "POST" => client.post(&path, &configmap("no-quorum", "1")),
            _ => client.get(&path),
        }
        .unwrap_or_else(|e| panic!("{method} {path}: no response: {e}"));
        let took = started.elapsed();
        eprintln!(
            "without quorum: {method} {path} -> {} in {took:?}: {}",
            response.status, response.body
        );
        assert!(
            [503, 504].contains(&response.status),
            "{method} {path} without quorum: {response:?}"
        );
        // A create cut off in flight (504) may still be applied once quorum returns: etcd
        // keeps what a member accepted. A 503 says it never reached one.
        lost_create |= method == "POST" && response.status == 504;
        let status = response.json();
        assert_eq!(status["kind"], "Status", "{status}");
        assert!(
            took < Duration::from_secs(20),
            "{method} {path} took {took:?} to fail"
        );
        // A create learns within the storage deadline (5 s, with a second for the request's
        // own handling) that its outcome is unknown: the read that would settle a write
        // cut off in flight shares the write's deadline.
        if method == "POST" {
            assert!(
                took < STORAGE_DEADLINE + Duration::from_secs(1),
                "a create without quorum took {took:?}"
            );
        }
    }
    // Not ready: the storage check fails (kube's `[-]etcd failed`), within the bound.
    let log = server.log();
    let not_ready = wait_for(
        Duration::from_secs(20),
        "/readyz to fail (500) without quorum",
        || format!("{:?}\n{}", client.get("/readyz"), log.tail(40)),
        || {
            let response = client.get("/readyz").ok()?;
            assert_ne!(response.status, 200, "ready without quorum: {response:?}");
            (response.status == 500).then_some(response)
        },
    );
    assert!(
        not_ready.body.contains("[-]etcd failed: reason withheld"),
        "{not_ready:?}"
    );

    // The members return: the same server process serves again, and its open watch
    // resumes where it was.
    etcd.restart(leader);
    etcd.restart(second);
    etcd.wait_healthy(leader);
    etcd.wait_healthy(second);
    wait_for(
        Duration::from_secs(30),
        "a create to succeed once the members are back",
        || log.tail(40),
        || {
            let response = client.post(CONFIGMAPS, &configmap("after", "1")).ok()?;
            (response.status == 201).then_some(())
        },
    );
    // The client retries the create it got no answer to, as long as it gets none (a
    // cluster just back may time out again, on a loaded machine): it was written once,
    // whether an unanswered attempt landed (409) or not (201).
    let mut unanswered = lost_create;
    let retried = wait_for(
        Duration::from_secs(30),
        "the retried create to be answered",
        || log.tail(40),
        || {
            let response = client.post(CONFIGMAPS, &configmap("no-quorum", "1")).ok()?;
            unanswered |= response.status == 504;
            (![503, 504].contains(&response.status)).then_some(response)
        },
    );
    assert!(
        [201, 409].contains(&retried.status),
        "the retried create: {retried:?}"
    );
    assert!(unanswered || retried.status == 201, "{retried:?}");
    // A read may time out too while the cluster settles (CI saw a 504 here): it is retried
    // as the create is, until it is answered.
    let read = wait_for(
        Duration::from_secs(30),
        "the read of the retried create to be answered",
        || log.tail(40),
        || {
            let response = client.get(&format!("{CONFIGMAPS}/no-quorum")).ok()?;
            (![503, 504].contains(&response.status)).then_some(response)
        },
    );
    assert_eq!(read.status, 200, "{read:?}");
    let mut added = Vec::new();
    loop {
        let change = next_change(&mut open_watch);
        assert_eq!(change.0, "ADDED", "{change:?}");
        added.push(change.1);
        if added.iter().any(|n| n == "after") && added.iter().any(|n| n == "no-quorum") {
            break;
        }
    }
    assert_eq!(
        added.iter().filter(|n| *n == "no-quorum").count(),
        1,
        "{added:?}"
    );
    // Ready again (the health check may still meet a member catching up at first).
    wait_for(
        Duration::from_secs(30),
        "/readyz to answer 200 again",
        || format!("{:?}\n{}", client.get("/readyz"), log.tail(40)),
        || (client.get("/readyz").ok()?.status == 200).then_some(()),
    );
    // A watch opened now works too.
    let list = client.get(CONFIGMAPS).unwrap().json();
    let mut fresh = watch(&client, &rv(&list));
    create(&client, "later");
    assert_eq!(next_change(&mut fresh), ("ADDED".into(), "later".into()));
    assert_eq!(
        next_change(&mut open_watch),
        ("ADDED".into(), "later".into())
    );
}

/// Writers create ConfigMaps through replica A; A is killed with SIGKILL mid-write; every
/// create A acknowledged is readable through replica B, and through A once restarted.
#[test]
fn kill_9_of_a_replica_loses_no_acknowledged_write() {
    const WRITERS: usize = 6;
    const ACKNOWLEDGED_BEFORE_KILL: usize = 150;
    let etcd = Etcd::start();
    let mut a = Server::start_with(&etcd_args(&etcd));
    let b = Server::start_with(&etcd_args(&etcd));
    let acknowledged: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let killed = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let client = Client::new(a.addr());
            let (acknowledged, killed) = (acknowledged.clone(), killed.clone());
            thread::spawn(move || {
                for i in 0.. {
                    let name = format!("w{writer}-{i}");
                    match client.post(CONFIGMAPS, &configmap(&name, "x")) {
                        Ok(r) if r.status == 201 => {
                            let uid = r.json()["metadata"]["uid"].as_str().unwrap().to_owned();
                            acknowledged.lock().unwrap().push((name, uid));
                        }
                        Ok(r) => panic!("create {name}: {r:?}"),
                        Err(_) if killed.load(Ordering::SeqCst) => return,
                        Err(e) => panic!("create {name}: {e}"),
                    }
                }
            })
        })
        .collect();
    let log = a.log();
    wait_for(
        Duration::from_secs(60),
        &format!("{ACKNOWLEDGED_BEFORE_KILL} acknowledged creates"),
        || log.tail(40),
        || (acknowledged.lock().unwrap().len() >= ACKNOWLEDGED_BEFORE_KILL).then_some(()),
    );
    killed.store(true, Ordering::SeqCst);
    a.kill_9();
    for writer in writers {
        writer.join().expect("a writer panicked");
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    a.restart();
    for replica in [&b, &a] {
        let client = Client::new(replica.addr());
        let lost: Vec<_> = (acknowledged.iter())
            .filter(|(name, uid)| {
                let read = client.get(&format!("{CONFIGMAPS}/{name}")).unwrap();
                read.status != 200 || read.json()["metadata"]["uid"] != uid.as_str()
            })
            .collect();
        assert!(
            lost.is_empty(),
            "{} of {} acknowledged creates are missing: {lost:?}",
            lost.len(),
            acknowledged.len()
        );
    }
}

/// PEM files of a test CA, an etcd member certificate for `127.0.0.1` and a client
/// certificate, all signed by the CA, written into `dir`.
struct Certificates {
    ca: String,
    member: (String, String),
    client: (String, String),
}

fn certificates(dir: &std::path::Path) -> Certificates {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    };

    let write = |name: &str, pem: String| {
        let path = dir.join(name);
        std::fs::write(&path, pem).unwrap();
        path.display().to_string()
    };
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    (ca_params.distinguished_name).push(DnType::CommonName, "kapi etcd test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |name: &str, usage: ExtendedKeyUsagePurpose| {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
        (params.distinguished_name).push(DnType::CommonName, name);
        params.extended_key_usages = vec![usage];
        let cert = params.signed_by(&key, &issuer).unwrap();
        (
            write(&format!("{name}.pem"), cert.pem()),
            write(&format!("{name}-key.pem"), key.serialize_pem()),
        )
    };
    Certificates {
        ca: write("ca.pem", ca.pem()),
        member: leaf("member", ExtendedKeyUsagePurpose::ServerAuth),
        client: leaf("client", ExtendedKeyUsagePurpose::ClientAuth),
    }
}

/// etcd serving clients over TLS and asking for client certificates: the server trusts the
/// members through `--etcd-cafile` and presents `--etcd-certfile`/`--etcd-keyfile`;
/// without its certificate etcd turns it away and it does not start.
#[test]
fn tls_to_etcd_with_a_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certificates(dir.path());
    let etcd = Etcd::start_tls(support::etcd::EtcdTls {
        cert_file: certs.member.0.clone().into(),
        key_file: certs.member.1.clone().into(),
        client_ca_file: Some(certs.ca.clone().into()),
    });
    assert!(etcd.servers_flag().starts_with("https://"));
    let mut args = etcd_args(&etcd);
    args.extend(["--etcd-cafile".to_owned(), certs.ca.clone()]);
    let server = Server::start_with(
        &[
            args.clone(),
            vec![
                "--etcd-certfile".into(),
                certs.client.0.clone(),
                "--etcd-keyfile".into(),
                certs.client.1.clone(),
            ],
        ]
        .concat(),
    );
    let client = Client::new(server.addr());
    let created = create(&client, "over-tls");
    let read = client.get(&format!("{CONFIGMAPS}/over-tls")).unwrap();
    assert_eq!(rv(&read.json()), rv(&created));

    // No client certificate: etcd refuses the connection; the server fails to start
    // (after its request deadline) instead of serving.
    let data_dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kapi-server"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir.path())
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read on a thread, so that a full pipe never blocks the server.
    let mut stderr = child.stderr.take().unwrap();
    let stderr = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    // Several request deadlines (5 s): it must give up, not retry forever.
    let Some(status) = support::wait_exit(&mut child, Duration::from_secs(60)) else {
        panic!(
            "without a client certificate the server neither exited nor failed within 60 s\n{}",
            stderr.join().unwrap_or_default()
        );
    };
    let stderr = stderr.join().unwrap();
    assert!(!status.success(), "{status}\n{stderr}");
    assert!(stderr.contains("etcd"), "{stderr}");
}

/// Every key in `etcd` (read with etcd's client, not through kapi's store) with its value
/// as JSON and its `mod_revision`.
#[track_caller]
fn etcd_contents(etcd: &Etcd) -> BTreeMap<String, (Value, i64)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let read = async {
        let mut client = etcd_client::Client::connect(etcd.endpoints(), None).await?;
        let all = etcd_client::GetOptions::new().with_all_keys();
        client.get("", Some(all)).await
    };
    let response = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(20), read).await })
        .expect("etcd answered within 20 s")
        .expect("reading every key from etcd");
    (response.kvs().iter())
        .map(|kv| {
            let key = String::from_utf8_lossy(kv.key()).into_owned();
            let value = serde_json::from_slice(kv.value())
                .unwrap_or_else(|e| panic!("{key} does not hold JSON ({e}): {:?}", kv.value()));
            (key, (value, kv.mod_revision()))
        })
        .collect()
}

/// The JSON value of `key` in `etcd` (without the slot prefix a batched create leaves,
/// `storage::etcd`'s revisions).
fn etcd_value(etcd: &Etcd, key: &str) -> Value {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let read = async {
        let mut client = etcd_client::Client::connect(etcd.endpoints(), None).await?;
        client.get(key, None).await
    };
    let response = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(20), read).await })
        .expect("etcd answered within 20 s")
        .expect("reading from etcd");
    let value = response
        .kvs()
        .first()
        .map(|kv| kv.value().to_vec())
        .unwrap_or_default();
    let slot = b"\0kapi-slot\0";
    let json = match value.starts_with(slot) {
        true => &value[slot.len() + 2..],
        false => &value[..],
    };
    serde_json::from_slice(json).unwrap_or_else(|e| panic!("{key} does not hold JSON ({e})"))
}

/// Server flags for `etcd` under `prefix` (the address the `kubernetes` Service's
/// endpoints name for the server, and so its lease's key, fixed).
fn args_with_prefix(etcd: &Etcd, prefix: &str) -> Vec<String> {
    let mut args = etcd_args(etcd);
    args.extend(["--etcd-prefix".to_owned(), prefix.to_owned()]);
    args.extend(["--advertise-address".to_owned(), "192.0.2.50".to_owned()]);
    args
}

/// `--etcd-prefix /custom`: kube-apiserver's key layout under the prefix
/// (`<prefix>/<resource>/<namespace>/<name>`, the group before the resource except for the
/// core group, no namespace for cluster-scoped kinds), nothing outside it, each value the
/// object's JSON in its kind's storage version (a WebApp written through v1beta1 is stored
/// as v1) at the revision the client was given, without its resourceVersion (the revision
/// is the version). A second server on `other/` of the same etcd sees none of it, and
/// writes under its own prefix, cleaned as kube-apiserver cleans it (`/other`).
#[test]
fn keys_are_kube_apiserver_layout_under_the_etcd_prefix() {
    let etcd = Etcd::start();
    let server = Server::start_with(&args_with_prefix(&etcd, "/custom"));
    let client = Client::new(server.addr());
    let post = |client: &Client, path: &str, body: Value| -> Value {
        let response = client.post(path, &body).unwrap();
        assert_eq!(response.status, 201, "POST {path}: {response:?}");
        response.json()
    };
    let namespace = post(
        &client,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
    );
    let configmap = post(
        &client,
        "/api/v1/namespaces/team-a/configmaps",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
            "data": {"mode": "fast"}}),
    );
    let webapp = post(
        &client,
        "/apis/apps.example.dev/v1beta1/namespaces/team-a/webapps",
        json!({"apiVersion": "apps.example.dev/v1beta1", "kind": "WebApp",
            "metadata": {"name": "legacy"},
            "spec": {"replicas": 1, "image": "httpd:2.4", "port": 8081}}),
    );
    let tenant_body = json!({"apiVersion": "platform.example.dev/v1", "kind": "Tenant",
        "metadata": {"name": "acme"},
        "spec": {"displayName": "Acme Corp", "owners": ["alice@example.dev"]}});
    let tenant = post(
        &client,
        "/apis/platform.example.dev/v1/tenants",
        tenant_body.clone(),
    );

    let stored = etcd_contents(&etcd);
    // The local APIServices, one per group-version served (kube-apiserver's own layout
    // too: `<prefix>/apiregistration.k8s.io/apiservices/<name>`).
    let api_service = "/custom/apiregistration.k8s.io/apiservices/v1.apps.example.dev";
    assert!(stored.contains_key(api_service), "{:?}", stored.keys());
    // kube's API Priority and Fairness objects: every one of kube's FlowSchemas and
    // levels (`flowcontrol.rs` checks them).
    let flow_control = [
        "/custom/flowschemas/",
        "/custom/prioritylevelconfigurations/",
    ];
    let apf = (stored.keys()).filter(|key| flow_control.iter().any(|p| key.starts_with(p)));
    assert_eq!(apf.count(), 13 + 8, "{:?}", stored.keys());
    let keys: Vec<&str> = (stored.keys().map(String::as_str))
        .filter(|key| !key.starts_with("/custom/apiregistration.k8s.io/apiservices/"))
        .filter(|key| !flow_control.iter().any(|p| key.starts_with(p)))
        .collect();
    assert_eq!(
        keys,
        [
            "/custom/apps.example.dev/webapps/team-a/legacy",
            "/custom/configmaps/team-a/settings",
            // Created by the server at start, as kube-apiserver does: the `kubernetes`
            // Service with its endpoints and the server's lease, the allocators' ranges,
            // the system namespaces and PriorityClasses.
            "/custom/endpointslices/default/kubernetes",
            "/custom/masterleases/192.0.2.50",
            "/custom/namespaces/default",
            "/custom/namespaces/kube-node-lease",
            "/custom/namespaces/kube-public",
            "/custom/namespaces/kube-system",
            "/custom/namespaces/team-a",
            "/custom/platform.example.dev/tenants/acme",
            "/custom/priorityclasses/system-cluster-critical",
            "/custom/priorityclasses/system-node-critical",
            "/custom/ranges/serviceips",
            "/custom/ranges/servicenodeports",
            "/custom/services/endpoints/default/kubernetes",
            "/custom/services/specs/default/kubernetes",
        ],
        "every key in etcd"
    );
    for (key, object, api_version) in [
        ("/custom/namespaces/team-a", &namespace, "v1"),
        ("/custom/configmaps/team-a/settings", &configmap, "v1"),
        (
            "/custom/apps.example.dev/webapps/team-a/legacy",
            &webapp,
            "apps.example.dev/v1",
        ),
        (
            "/custom/platform.example.dev/tenants/acme",
            &tenant,
            "platform.example.dev/v1",
        ),
    ] {
        let (value, mod_revision) = &stored[key];
        assert_eq!(value["apiVersion"], api_version, "{key}: {value}");
        assert_eq!(value["kind"], object["kind"], "{key}: {value}");
        assert_eq!(
            value["metadata"]["uid"], object["metadata"]["uid"],
            "{key}: {value}"
        );
        assert_eq!(
            value["metadata"].get("resourceVersion"),
            None,
            "{key}: {value}"
        );
        // Written alone: at the end of its etcd revision (`storage::etcd`'s revisions).
        let slots = kapi::storage::etcd::SLOT_BITS;
        let end_of_etcd_revision = ((mod_revision + 1) << slots) - 1;
        assert_eq!(
            end_of_etcd_revision.to_string(),
            rv(object),
            "{key}: {value}"
        );
    }
    assert_eq!(
        stored["/custom/configmaps/team-a/settings"].0["data"]["mode"],
        "fast"
    );
    let (stored_webapp, _) = &stored["/custom/apps.example.dev/webapps/team-a/legacy"];
    assert_eq!(
        stored_webapp["spec"]["container"]["image"], "httpd:2.4",
        "v1's shape: {stored_webapp}"
    );
    assert_eq!(stored_webapp["spec"].get("image"), None, "{stored_webapp}");

    // Another server, another prefix, the same etcd. Spelled without the leading `/` and
    // with a trailing one: kube-apiserver roots and cleans it (`path.Join("/", prefix)`).
    let other = Server::start_with(&args_with_prefix(&etcd, "other/"));
    let other_client = Client::new(other.addr());
    for path in [
        "/api/v1/namespaces/team-a",
        "/api/v1/namespaces/team-a/configmaps/settings",
        "/apis/apps.example.dev/v1/namespaces/team-a/webapps/legacy",
        "/apis/platform.example.dev/v1/tenants/acme",
    ] {
        let response = other_client.get(path).unwrap();
        assert_eq!(response.status, 404, "{path} on /other: {response:?}");
    }
    for path in [
        "/api/v1/configmaps",
        "/apis/apps.example.dev/v1/webapps",
        "/apis/platform.example.dev/v1/tenants",
    ] {
        let response = other_client.get(path).unwrap();
        assert_eq!(response.status, 200, "{path} on /other: {response:?}");
        assert_eq!(response.json()["items"], json!([]), "{path} on /other");
    }
    let namespaces = other_client.get("/api/v1/namespaces").unwrap().json();
    let names: Vec<&str> = (namespaces["items"].as_array().unwrap().iter())
        .filter_map(|n| n["metadata"]["name"].as_str())
        .collect();
    // Only the system namespaces the server makes at start.
    assert_eq!(
        names,
        ["default", "kube-node-lease", "kube-public", "kube-system"],
        "namespaces on /other"
    );
    // The same name is free there, and lands under /other; /custom is untouched.
    let other_tenant = post(
        &other_client,
        "/apis/platform.example.dev/v1/tenants",
        tenant_body,
    );
    assert_ne!(other_tenant["metadata"]["uid"], tenant["metadata"]["uid"]);
    let after = etcd_contents(&etcd);
    let other_keys: Vec<&str> = (after.keys())
        .filter(|k| !k.starts_with("/custom/"))
        .filter(|k| !k.starts_with("/other/apiregistration.k8s.io/apiservices/"))
        .filter(|k| {
            !k.starts_with("/other/flowschemas/")
                && !k.starts_with("/other/prioritylevelconfigurations/")
        })
        .map(String::as_str)
        .collect();
    assert_eq!(
        other_keys,
        [
            "/other/endpointslices/default/kubernetes",
            "/other/masterleases/192.0.2.50",
            "/other/namespaces/default",
            "/other/namespaces/kube-node-lease",
            "/other/namespaces/kube-public",
            "/other/namespaces/kube-system",
            "/other/platform.example.dev/tenants/acme",
            "/other/priorityclasses/system-cluster-critical",
            "/other/priorityclasses/system-node-critical",
            "/other/ranges/serviceips",
            "/other/ranges/servicenodeports",
            "/other/services/endpoints/default/kubernetes",
            "/other/services/specs/default/kubernetes",
        ]
    );
    // (The server's lease is renewed every ten seconds; FlowSchemas get their status.)
    let kept = |key: &str| !key.contains("/masterleases/") && !key.contains("/flowschemas/");
    for (key, (value, mod_revision)) in stored.iter().filter(|(k, _)| kept(k)) {
        assert_eq!(
            after.get(key),
            Some(&(value.clone(), *mod_revision)),
            "{key}"
        );
    }
    let read = client
        .get("/apis/platform.example.dev/v1/tenants/acme")
        .unwrap();
    assert_eq!(read.json()["metadata"]["uid"], tenant["metadata"]["uid"]);
}

/// Both replicas run the namespace controller: a namespace deleted through one with 40
/// objects in it, one held by a finalizer, is emptied by both at once without errors, waits
/// for the finalizer (removed through the other replica), and goes; neither replica logs a
/// failed pass.
#[test]
fn two_replicas_run_the_namespace_controller_together() {
    let etcd = Etcd::start();
    let a = Server::start_with(&etcd_args(&etcd));
    let b = Server::start_with(&etcd_args(&etcd));
    let (client_a, client_b) = (Client::new(a.addr()), Client::new(b.addr()));
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}});
    assert_eq!(
        client_a
            .post("/api/v1/namespaces", &namespace)
            .unwrap()
            .status,
        201
    );
    let configmaps = "/api/v1/namespaces/team/configmaps";
    for i in 0..40 {
        let mut object =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c{i}")}});
        if i == 0 {
            object["metadata"]["finalizers"] = json!(["example.com/hold"]);
        }
        let client = if i % 2 == 0 { &client_a } else { &client_b };
        assert_eq!(client.post(configmaps, &object).unwrap().status, 201);
    }
    let deleted = client_b.delete("/api/v1/namespaces/team").unwrap();
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_eq!(deleted.json()["status"]["phase"], "Terminating");

    let names = |client: &Client| -> Vec<String> {
        let list = client.get(configmaps).unwrap().json();
        (list["items"].as_array().into_iter().flatten())
            .filter_map(|item| item["metadata"]["name"].as_str().map(str::to_owned))
            .collect()
    };
    wait_for(
        Duration::from_secs(30),
        "all but the held object to go",
        || format!("{:?}", names(&client_a)),
        || (names(&client_a) == ["c0"] && names(&client_b) == ["c0"]).then_some(()),
    );
    let held = client_a.get(&format!("{configmaps}/c0")).unwrap().json();
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    let patch = client_a
        .send_raw(
            "PATCH",
            &format!("{configmaps}/c0"),
            "application/merge-patch+json",
            r#"{"metadata":{"finalizers":null}}"#,
        )
        .unwrap();
    assert_eq!(patch.status, 200, "{}", patch.body);
    wait_for(
        Duration::from_secs(30),
        "the namespace to go from both replicas",
        String::new,
        || {
            let gone =
                |client: &Client| client.get("/api/v1/namespaces/team").unwrap().status == 404;
            (gone(&client_a) && gone(&client_b)).then_some(())
        },
    );
    for server in [&a, &b] {
        let log = server.log().tail(2000);
        assert!(
            !log.contains("namespace controller"),
            "a failed controller pass:\n{log}"
        );
    }
}

/// Both replicas run the garbage collector: 10 WebApps with 3 dependent ConfigMaps each,
/// the owners deleted through the other replica (Background), and a watch sees every
/// dependent deleted exactly once; none is left behind, no pass fails.
#[test]
fn two_replicas_collect_every_dependent_once() {
    let etcd = Etcd::start();
    let a = Server::start_with(&etcd_args(&etcd));
    let b = Server::start_with(&etcd_args(&etcd));
    let (client_a, client_b) = (Client::new(a.addr()), Client::new(b.addr()));
    let webapps = "/apis/apps.example.dev/v1/namespaces/default/webapps";
    let mut dependents = Vec::new();
    for i in 0..10 {
        let owner = json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
            "metadata": {"name": format!("web-{i}")}, "spec": {"container": {"image": "nginx"}}});
        let created = client_a.post(webapps, &owner).unwrap();
        assert_eq!(created.status, 201, "{}", created.body);
        let uid = created.json()["metadata"]["uid"].clone();
        for j in 0..3 {
            let name = format!("dep-{i}-{j}");
            let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name,
                "ownerReferences": [{"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
                    "name": format!("web-{i}"), "uid": uid}]}});
            assert_eq!(client_b.post(CONFIGMAPS, &object).unwrap().status, 201);
            dependents.push(name);
        }
    }
    let list = client_a.get(CONFIGMAPS).unwrap().json();
    let mut changes = watch(
        &client_a,
        list["metadata"]["resourceVersion"].as_str().unwrap(),
    );
    for i in 0..10 {
        let deleted = client_b.delete(&format!("{webapps}/web-{i}")).unwrap();
        assert_eq!(deleted.status, 200, "{}", deleted.body);
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    while seen.len() < dependents.len() {
        let (kind, name) = next_change(&mut changes);
        assert_eq!(kind, "DELETED", "{name}");
        *seen.entry(name).or_default() += 1;
    }
    // Nothing more for them: each was deleted once.
    let gone = client_a.get(CONFIGMAPS).unwrap().json();
    let left: Vec<&Value> = (gone["items"].as_array().into_iter().flatten())
        .filter(|item| {
            item["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("dep-"))
        })
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(seen.values().all(|n| *n == 1), "{seen:?}");
    for server in [&a, &b] {
        let log = server.log().tail(2000);
        assert!(
            !log.contains("garbage collector"),
            "a failed collector pass:\n{log}"
        );
    }
}

/// A kind holding more than one default gRPC message (4 MiB) of objects: a replica that
/// starts afterwards fills its watch cache from one list of them (etcd's client takes
/// messages of any size, as Go's clientv3 does for kube-apiserver), and serves consistent
/// lists, cached lists and watches of all of them.
#[test]
fn a_kind_larger_than_a_grpc_message_is_served_whole() {
    let etcd = Etcd::start();
    let writer = Server::start_with(&etcd_args(&etcd));
    let client = Client::new(writer.addr());
    let data = "x".repeat(700_000);
    for i in 0..7 {
        let response = client
            .post(CONFIGMAPS, &configmap(&format!("big-{i}"), &data))
            .unwrap();
        assert_eq!(response.status, 201, "{response:?}");
    }
    // A replica started now lists 4.9 MB of ConfigMaps to fill its cache.
    let replica = Server::start_with(&etcd_args(&etcd));
    let client = Client::new(replica.addr());
    let names = |list: &Value| -> Vec<String> {
        (list["items"].as_array().into_iter().flatten())
            .map(|item| {
                item["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    };
    let expected: Vec<String> = (0..7).map(|i| format!("big-{i}")).collect();
    for path in [
        CONFIGMAPS.to_owned(),
        format!("{CONFIGMAPS}?resourceVersion=0"),
    ] {
        let response = client.get(&path).unwrap();
        assert_eq!(
            response.status,
            200,
            "{path}: {:?}",
            response.json()["message"]
        );
        assert_eq!(names(&response.json()), expected, "{path}");
    }
    let mut watch = watch(&client, "0");
    let mut added: Vec<String> = (0..7).map(|_| next_change(&mut watch).1).collect();
    added.sort();
    assert_eq!(added, expected);
}

const SERVICES: &str = "/api/v1/namespaces/default/services";

fn service(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
        "spec": {"type": "NodePort", "ports": [{"port": 80}]}})
}

/// The cluster IPs and node ports of every Service (`kubernetes` included), through `client`.
fn allocated(client: &Client) -> (Vec<String>, Vec<i64>) {
    let list = client.get(SERVICES).unwrap().json();
    let items = list["items"].as_array().unwrap();
    let ips = items
        .iter()
        .map(|s| s["spec"]["clusterIP"].as_str().unwrap().to_owned())
        .collect();
    let ports = (items.iter())
        .flat_map(|s| s["spec"]["ports"].as_array().unwrap().iter())
        .filter_map(|p| p["nodePort"].as_i64())
        .collect();
    (ips, ports)
}

/// 200 Services created at once through two replicas on one etcd get 200 distinct
/// cluster IPs and node ports: both hand out from the same bitmaps in etcd.
#[test]
fn two_replicas_never_hand_out_one_address_twice() {
    const PER_REPLICA: usize = 100;
    const WRITERS: usize = 8;
    let etcd = Etcd::start();
    let replicas = [
        Server::start_with(&etcd_args(&etcd)),
        Server::start_with(&etcd_args(&etcd)),
    ];
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let client = Client::new(replicas[writer % 2].addr());
            thread::spawn(move || {
                for i in (writer / 2..PER_REPLICA).step_by(WRITERS / 2) {
                    let name = format!("r{}-{i}", writer % 2);
                    let response = client.post(SERVICES, &service(&name)).unwrap();
                    assert_eq!(response.status, 201, "{name}: {response:?}");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("a writer panicked");
    }
    let (ips, ports) = allocated(&Client::new(replicas[0].addr()));
    assert_eq!(ips.len(), 2 * PER_REPLICA + 1, "and the kubernetes Service");
    let distinct: BTreeSet<&String> = ips.iter().collect();
    assert_eq!(
        distinct.len(),
        ips.len(),
        "a cluster IP handed out twice: {ips:?}"
    );
    let distinct: BTreeSet<&i64> = ports.iter().collect();
    assert_eq!(
        distinct.len(),
        2 * PER_REPLICA,
        "a node port handed out twice: {ports:?}"
    );
}

/// Writers create Services through replica A, killed with SIGKILL mid-write; replica B's
/// repair pass then leaves taken exactly the addresses and ports of the Services that
/// exist: what A took for a write it never stored goes back.
#[test]
fn the_repair_pass_frees_what_a_killed_replica_left_taken() {
    const WRITERS: usize = 4;
    let etcd = Etcd::start();
    let mut a = Server::start_with(&etcd_args(&etcd));
    let mut args = etcd_args(&etcd);
    args.extend(["--service-repair-interval".to_owned(), "100ms".to_owned()]);
    let b = Server::start_with(&args);
    let created = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let killed = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let client = Client::new(a.addr());
            let (created, killed) = (created.clone(), killed.clone());
            thread::spawn(move || {
                for i in 0.. {
                    match client.post(SERVICES, &service(&format!("w{writer}-{i}"))) {
                        Ok(r) if r.status == 201 => created.fetch_add(1, Ordering::SeqCst),
                        Ok(r) => panic!("create: {r:?}"),
                        Err(_) if killed.load(Ordering::SeqCst) => return,
                        Err(e) => panic!("create: {e}"),
                    };
                }
            })
        })
        .collect();
    let log = a.log();
    wait_for(
        Duration::from_secs(60),
        "40 Services created",
        || log.tail(40),
        || (created.load(Ordering::SeqCst) >= 40).then_some(()),
    );
    killed.store(true, Ordering::SeqCst);
    a.kill_9();
    for writer in writers {
        writer.join().expect("a writer panicked");
    }
    let client = Client::new(b.addr());
    let offsets = |key: &str| crate::services::bitmap(&etcd_value(&etcd, key));
    wait_for(
        Duration::from_secs(30),
        "the stored bitmaps to hold exactly the Services' addresses and ports",
        || format!("{:?}\n{}", allocated(&client), b.log().tail(20)),
        || {
            let (ips, ports) = allocated(&client);
            let ips: BTreeSet<usize> = (ips.iter())
                .map(|ip| usize::from(ip.rsplit('.').next().unwrap().parse::<u8>().unwrap()) - 1)
                .collect();
            let ports: BTreeSet<usize> = ports.iter().map(|p| (*p - 30000) as usize).collect();
            let stored_ips = offsets("/registry/ranges/serviceips");
            let stored_ports = offsets("/registry/ranges/servicenodeports");
            (stored_ips == ips && stored_ports == ports).then_some(())
        },
    );
}

/// The `kubernetes` Service's endpoints name every live replica: both replicas' addresses,
/// then, once one stops, the other's alone.
#[test]
fn the_kubernetes_endpoints_name_every_live_replica() {
    let etcd = Etcd::start();
    let replica = |address: &str| {
        let mut args = etcd_args(&etcd);
        args.extend(["--advertise-address".to_owned(), address.to_owned()]);
        Server::start_with(&args)
    };
    let mut a = replica("192.0.2.61");
    let b = replica("192.0.2.62");
    let client = Client::new(b.addr());
    let addresses = || {
        let endpoints = client
            .get("/api/v1/namespaces/default/endpoints/kubernetes")
            .unwrap()
            .json();
        let slice = client
            .get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes")
            .unwrap()
            .json();
        let from_endpoints: Vec<String> = (endpoints["subsets"][0]["addresses"].as_array())
            .into_iter()
            .flatten()
            .map(|a| a["ip"].as_str().unwrap().to_owned())
            .collect();
        let from_slice: Vec<String> = (slice["endpoints"].as_array().into_iter().flatten())
            .map(|e| e["addresses"][0].as_str().unwrap().to_owned())
            .collect();
        (from_endpoints, from_slice)
    };
    // B's first round, at its start, saw A's lease.
    let both = vec!["192.0.2.61".to_owned(), "192.0.2.62".to_owned()];
    assert_eq!(addresses(), (both.clone(), both));
    a.terminate(Duration::from_secs(30));
    let alone = vec!["192.0.2.62".to_owned()];
    assert_eq!(
        addresses(),
        (alone.clone(), alone),
        "A took its address out as it stopped"
    );
}
