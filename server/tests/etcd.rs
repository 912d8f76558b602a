//! Several `kapi-server` replicas on one etcd, and etcd clusters losing members: what only
//! the etcd backend has. Raw HTTP, since what is checked is the wire (statuses, watch
//! lines), across processes.
//!
//! - Two replicas on one etcd: a create through one is readable through the other at once,
//!   a watch on one sees writes made through the other, and concurrent updates of one
//!   object through both give exactly one 200 and one 409.
//! - A three-member cluster: one member down changes nothing for clients; two down makes
//!   requests fail fast with 503/504; when the members return the server recovers by itself
//!   and its open watch resumes.
//! - `kill -9` of a replica while writers write through it loses no acknowledged write.
#![cfg(feature = "etcd")]

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::etcd::Etcd;
use support::http::{Client, Watch};
use support::server::etcd_args;
use support::{Server, wait_for};

/// How long one watch event may take.
const EVENT: Duration = Duration::from_secs(20);

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
    // stopped one, and what a member refused for want of a leader).
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
            "without quorum: {method} {path} -> {} in {took:?}",
            response.status
        );
        assert!(
            [503, 504].contains(&response.status),
            "{method} {path} without quorum: {response:?}"
        );
        let status = response.json();
        assert_eq!(status["kind"], "Status", "{status}");
        assert!(
            took < Duration::from_secs(20),
            "{method} {path} took {took:?} to fail"
        );
    }

    // The members return: the same server process serves again, and its open watch
    // resumes where it was.
    etcd.restart(leader);
    etcd.restart(second);
    etcd.wait_healthy(leader);
    etcd.wait_healthy(second);
    let log = server.log();
    wait_for(
        Duration::from_secs(30),
        "a create to succeed once the members are back",
        || log.tail(40),
        || {
            let response = client.post(CONFIGMAPS, &configmap("after", "1")).ok()?;
            (response.status == 201).then_some(())
        },
    );
    assert_eq!(
        next_change(&mut open_watch),
        ("ADDED".into(), "after".into())
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
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_kapi-server"))
        .args(["--listen", "127.0.0.1:0"])
        .args(&args)
        .output()
        .unwrap();
    assert!(!output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("etcd"), "{stderr}");
}
