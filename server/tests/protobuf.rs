//! Kubernetes protobuf, both ways, against the real binary. Real kubectl 1.32 sends its
//! generators' objects (`kubectl create namespace`, `kubectl create configmap`) as
//! `application/vnd.kubernetes.protobuf`, and its typed clients (those, `auth whoami`,
//! `auth can-i`, `describe`) accept protobuf answers, objects and errors alike, which they
//! decode with client-go's own types. (kubectl 1.20 asks for JSON throughout.) Raw HTTP checks what
//! kubectl does not ask for (lists, watch streams, a kind without a protobuf form), with
//! a raw wire reader (prost's primitives, not this server's decoder) reading the wire. On the embedded
//! store and (with the `etcd` feature, as `etcd::*`) on an etcd of its own.

use crate::support;

use std::time::Duration;

use serde_json::json;
use support::http::Client;
use support::{Backend, Kubectl, Server, Version, on_both_backends};

on_both_backends! {
    kubectl_creates_builtin_kinds_with_protobuf_bodies => creates_builtin_kinds();
    kubectl_reads_protobuf_answers => reads_protobuf_answers();
    objects_lists_watches_and_errors_are_protobuf_when_asked => raw_protobuf();
}

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// kubectl's typed clients ask for protobuf first: the answers to its creates are protobuf
/// (its verbose log shows the response's type), and what it prints is decoded from them.
fn reads_protobuf_answers(backend: Backend) {
    let server = Server::start_on(backend);
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let created = kubectl.ok(&["create", "namespace", "team-b", "-v=8"]);
    created.stdout_is("namespace/team-b created");
    let protobuf_answers = (created.stderr.lines())
        .filter(|l| l.contains("Content-Type: application/vnd.kubernetes.protobuf"))
        .count();
    // The request's body and the response.
    assert!(protobuf_answers >= 2, "{}", created.stderr);

    let printed = kubectl
        .ok(&[
            "create",
            "configmap",
            "c1",
            "--from-literal=a=b",
            "-n",
            "team-b",
            "-o",
            "json",
        ])
        .json();
    assert_eq!(printed["data"], json!({"a": "b"}), "{printed}");
    assert_eq!(printed["metadata"]["namespace"], "team-b");
    assert!(
        printed["metadata"]["uid"]
            .as_str()
            .is_some_and(|u| u.len() == 36)
    );
    assert!((printed["metadata"]["creationTimestamp"].as_str()).is_some_and(|t| t.ends_with('Z')));

    // Reviews answer with their status: who the request is, what it may do.
    let whoami = kubectl.ok(&["auth", "whoami", "-v=8"]);
    assert!(
        whoami.stdout.contains("system:anonymous")
            && whoami.stdout.contains("[system:unauthenticated]"),
        "{}",
        whoami.stdout
    );
    assert!(
        whoami
            .stderr
            .contains("Content-Type: application/vnd.kubernetes.protobuf")
    );
    kubectl
        .ok(&["auth", "can-i", "create", "configmaps"])
        .stdout_is("yes");

    // A refusal is a protobuf Status, which kubectl reads as kube's.
    let refused = kubectl.fails(&["create", "namespace", "team-b", "-v=8"]);
    refused.stderr_has(r#"namespaces "team-b" already exists"#);
    assert!(
        refused
            .stderr
            .contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "{}",
        refused.stderr
    );
}

/// A message's fields as `protoc --decode_raw` prints them (`1: "ADDED"`, `2 {`...`}`),
/// read with prost's wire-format primitives, not this server's decoder: a length-delimited
/// field that reads as a message is printed as one, anything else as a string.
fn decode_raw(message: &[u8]) -> String {
    let mut out = String::new();
    assert!(
        fields(message, 0, &mut out),
        "not a protobuf message: {message:?}"
    );
    out
}

/// Prints the fields of `message` at `depth` into `out`; `false` when it is not a message.
fn fields(mut message: &[u8], depth: usize, out: &mut String) -> bool {
    use prost::encoding::{WireType, decode_key, decode_varint};
    let indent = "  ".repeat(depth);
    while !message.is_empty() {
        let Ok((number, wire_type)) = decode_key(&mut message) else {
            return false;
        };
        match wire_type {
            WireType::Varint => match decode_varint(&mut message) {
                Ok(value) => out.push_str(&format!("{indent}{number}: {value}\n")),
                Err(_) => return false,
            },
            WireType::ThirtyTwoBit | WireType::SixtyFourBit => {
                let width = if wire_type == WireType::ThirtyTwoBit {
                    4
                } else {
                    8
                };
                let Some((bytes, rest)) = message.split_at_checked(width) else {
                    return false;
                };
                out.push_str(&format!("{indent}{number}: 0x{}\n", hex(bytes)));
                message = rest;
            }
            WireType::LengthDelimited => {
                let Ok(length) = decode_varint(&mut message) else {
                    return false;
                };
                let Some((bytes, rest)) = usize::try_from(length)
                    .ok()
                    .and_then(|length| message.split_at_checked(length))
                else {
                    return false;
                };
                let mut nested = String::new();
                if !bytes.is_empty() && fields(bytes, depth + 1, &mut nested) {
                    out.push_str(&format!("{indent}{number} {{\n{nested}{indent}}}\n"));
                } else {
                    let text = String::from_utf8_lossy(bytes);
                    out.push_str(&format!("{indent}{number}: {text:?}\n"));
                }
                message = rest;
            }
            // Groups: not in Kubernetes' messages.
            WireType::StartGroup | WireType::EndGroup => return false,
        }
    }
    true
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().rev().map(|b| format!("{b:02x}")).collect()
}

/// A whole protobuf body: the magic, then the envelope as `decode_raw` reads it.
#[track_caller]
fn envelope(body: &[u8]) -> String {
    assert_eq!(&body[..4], b"k8s\0", "the magic");
    decode_raw(&body[4..])
}

/// Whether `decode_raw`'s text has a field `number: "text"` (at any depth).
fn has(decoded: &str, number: u32, text: &str) -> bool {
    decoded
        .lines()
        .any(|l| l.trim() == format!("{number}: {text:?}"))
}

fn raw_protobuf(backend: Backend) {
    let server = Server::start_on(backend);
    let client = Client::new(server.addr());
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "p"}});
    assert_eq!(
        client
            .post("/api/v1/namespaces", &namespace)
            .unwrap()
            .status,
        201
    );
    let configmaps = "/api/v1/namespaces/p/configmaps";
    for name in ["c1", "c2"] {
        let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"tier": "web"}}, "data": {"k": name}});
        assert_eq!(client.post(configmaps, &configmap).unwrap().status, 201);
    }

    // One object: `Unknown {typeMeta {v1, ConfigMap}, raw {metadata, data}}`.
    let (status, content_type, body) = client
        .get_typed(&format!("{configmaps}/c1"), PROTOBUF)
        .unwrap();
    assert_eq!((status, content_type.as_str()), (200, PROTOBUF));
    let decoded = envelope(&body);
    for (number, text) in [
        (1, "v1"),
        (2, "ConfigMap"),
        (1, "c1"),
        (3, "p"),
        (1, "tier"),
        (2, "web"),
        (1, "k"),
    ] {
        assert!(
            has(&decoded, number, text),
            "{number}: {text:?} in\n{decoded}"
        );
    }

    // A list: `ConfigMapList {metadata, items...}`, each item the object's message.
    let (status, content_type, body) = client.get_typed(configmaps, PROTOBUF).unwrap();
    assert_eq!((status, content_type.as_str()), (200, PROTOBUF));
    let decoded = envelope(&body);
    assert!(has(&decoded, 2, "ConfigMapList"), "{decoded}");
    assert!(
        has(&decoded, 1, "c1") && has(&decoded, 1, "c2"),
        "{decoded}"
    );

    // An error: a `Status`.
    let (status, content_type, body) = client
        .get_typed(&format!("{configmaps}/nope"), PROTOBUF)
        .unwrap();
    assert_eq!((status, content_type.as_str()), (404, PROTOBUF));
    let decoded = envelope(&body);
    assert!(
        has(&decoded, 2, "Status") && has(&decoded, 4, "NotFound"),
        "{decoded}"
    );
    assert!(decoded.contains("6: 404"), "{decoded}");

    // A kind without a protobuf form: JSON when also acceptable, else 406.
    let webapps = "/apis/apps.example.dev/v1/namespaces/p/webapps";
    let (status, content_type, _) = client
        .get_typed(webapps, &format!("{PROTOBUF}, application/json"))
        .unwrap();
    assert_eq!((status, content_type.as_str()), (200, "application/json"));
    let (status, _, _) = client.get_typed(webapps, PROTOBUF).unwrap();
    assert_eq!(status, 406);

    // A watch: frames of `WatchEvent {type, object {raw: <a whole body>}}`.
    let list = client.get(configmaps).unwrap().json();
    let from = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut watch = client
        .watch_frames(
            &format!("{configmaps}?watch=true&resourceVersion={from}"),
            &format!("{PROTOBUF};stream=watch"),
        )
        .unwrap();
    assert_eq!(watch.status, 200);
    assert_eq!(watch.content_type, format!("{PROTOBUF};stream=watch"));
    let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c3"}, "data": {"k": "v"}});
    assert_eq!(client.post(configmaps, &configmap).unwrap().status, 201);
    let frame = watch.next(Duration::from_secs(10));
    let decoded = decode_raw(&frame);
    assert!(has(&decoded, 1, "ADDED"), "{decoded}");
    // The object is a whole body (magic and envelope) inside the event's `raw`.
    let magic = frame
        .windows(4)
        .position(|w| w == b"k8s\0")
        .expect("an enveloped object");
    let inner = envelope(&frame[magic..]);
    assert!(
        has(&inner, 2, "ConfigMap") && has(&inner, 1, "c3"),
        "{inner}"
    );
}

fn creates_builtin_kinds(backend: Backend) {
    let server = Server::start_on(backend);
    let kubectl = Kubectl::new(Version::V1_32, &server);

    kubectl
        .ok(&["create", "namespace", "team-a"])
        .stdout_is("namespace/team-a created");
    kubectl
        .ok(&[
            "create",
            "configmap",
            "c1",
            "--from-literal=a=b",
            "-n",
            "team-a",
        ])
        .stdout_is("configmap/c1 created");
    kubectl
        .ok(&[
            "get",
            "cm",
            "c1",
            "-n",
            "team-a",
            "-o",
            "jsonpath={.data.a}",
        ])
        .stdout_is("b");
    // Binary data travels as protobuf bytes and reads back as base64.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let binary = dir.path().join("binary");
    std::fs::write(&binary, [0_u8, 1, 2, 0xff, b'\n']).expect("writing a binary file");
    let from_file = format!("--from-file=bin={}", binary.display());
    kubectl.ok(&["create", "configmap", "c2", &from_file, "-n", "team-a"]);
    kubectl
        .ok(&[
            "get",
            "cm",
            "c2",
            "-n",
            "team-a",
            "-o",
            "jsonpath={.binaryData.bin}",
        ])
        .stdout_is("AAEC/wo=");
    kubectl
        .ok(&["get", "ns", "team-a", "-o", "jsonpath={.status.phase}"])
        .stdout_is("Active");

    // Errors come back as for JSON bodies.
    kubectl
        .fails(&["create", "namespace", "team-a"])
        .stderr_has(r#"namespaces "team-a" already exists"#);
}

/// A time before 1970 (e2e's Lease test sends Go's zero time plus two seconds) is
/// served in protobuf as a Timestamp with negative seconds, not a 500.
#[test]
fn times_before_the_epoch_are_served_in_protobuf() {
    let server = Server::start_on(Backend::Embedded);
    let client = Client::new(server.addr());
    let leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
    let lease = json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "zero"},
        "spec": {"holderIdentity": "holder", "acquireTime": "0001-01-01T00:00:02.000000Z"}
    });
    let created = client.post(leases, &lease).unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    let (status, content_type, body) = client
        .get_typed(&format!("{leases}/zero"), PROTOBUF)
        .unwrap();
    assert_eq!(
        (status, content_type.as_str()),
        (200, PROTOBUF),
        "{}",
        String::from_utf8_lossy(&body)
    );
    assert!(has(&envelope(&body), 1, "zero"));
    let read = client.get(&format!("{leases}/zero")).unwrap().json();
    assert_eq!(read["spec"]["acquireTime"], "0001-01-01T00:00:02.000000Z");
}
