//! Real kubectl 1.32 against the real binary, for the requests it sends as protobuf: its
//! generators for built-in kinds (`kubectl create namespace`, `kubectl create configmap`)
//! post `application/vnd.kubernetes.protobuf` bodies, which the server decodes through the
//! kinds' protobuf descriptors. On the embedded store and (with the `etcd` feature, as
//! `etcd::*`) on an etcd of its own.

mod support;

use support::{Backend, Kubectl, Server, Version, on_both_backends};

on_both_backends! {
    kubectl_creates_builtin_kinds_with_protobuf_bodies => creates_builtin_kinds();
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
