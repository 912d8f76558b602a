//! ConfigMap's own rules (kube's `ValidateConfigMap`, `ValidateConfigMapUpdate`) through
//! kubectl 1.32 against the real `kapi-server`: config keys, a key in both maps, the 1 MiB
//! limit, `binaryData` that is not base64, immutability; each refused with the text kubectl
//! prints for kube-apiserver's answer, and nothing stored. The same requests over raw HTTP,
//! with kube's codes, reasons and causes, are rows of the differential table
//! (`differential.rs`).

use crate::support;

use support::{Kubectl, Server, Version};

fn start() -> (Server, Kubectl) {
    Version::V1_32.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    (server, kubectl)
}

/// A manifest of ConfigMap `name` with the given `data:` and `binaryData:` YAML maps.
fn config_map(name: &str, data: &str, binary: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata: {data}\nbinaryData: {binary}\n"
    )
}

const KEY_REGEX: &str = "a valid config key must consist of alphanumeric characters, '-', '_' \
    or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is \
    '[-._a-zA-Z0-9]+')";

#[test]
fn a_config_map_with_both_maps_is_created() {
    let (_server, kubectl) = start();
    let binary: Vec<u8> = (0..=255u8).rev().collect();
    let file = kubectl.write_file("blob", "");
    std::fs::write(&file, &binary).expect("writing the binary file");
    kubectl
        .ok(&[
            "create",
            "configmap",
            "settings",
            "--from-literal=mode=fast",
            "--from-literal=level.max=3",
            &format!("--from-file=blob={file}"),
        ])
        .stdout_has("configmap/settings created");
    let stored = kubectl.ok(&["get", "cm", "settings", "-o", "json"]).json();
    assert_eq!(stored["data"]["mode"], "fast");
    assert_eq!(stored["data"]["level.max"], "3");
    let blob = stored["binaryData"]["blob"]
        .as_str()
        .expect("binaryData.blob");
    assert_eq!(kapi::byte_string::decode(blob.as_bytes()), Ok(binary));

    // The same through apply, with a key that starts with one dot.
    let manifest = kubectl.write_file(
        "valid.yaml",
        &config_map("applied", r#"{.hidden: "x", a: "y"}"#, "{b: aGk=}"),
    );
    kubectl
        .ok(&["apply", "-f", &manifest])
        .stdout_has("configmap/applied created");
}

#[test]
fn invalid_config_maps_are_refused_with_kubes_messages() {
    let (_server, kubectl) = start();
    for (name, data, binary, expected) in [
        (
            "slash",
            "{a/b: v}",
            "{}",
            format!(
                "The ConfigMap \"slash\" is invalid: data[a/b]: Invalid value: \"a/b\": {KEY_REGEX}"
            ),
        ),
        (
            "empty-key",
            "{\"\": v}",
            "{}",
            format!("The ConfigMap \"empty-key\" is invalid: data[]: Invalid value: \"\": {KEY_REGEX}"),
        ),
        (
            "dot",
            "{}",
            "{.: aGk=}",
            "The ConfigMap \"dot\" is invalid: binaryData[.]: Invalid value: \".\": must not be '.'"
                .to_owned(),
        ),
        (
            "dotdot",
            "{..x: v}",
            "{}",
            "The ConfigMap \"dotdot\" is invalid: data[..x]: Invalid value: \"..x\": must not \
             start with '..'"
                .to_owned(),
        ),
        (
            "long",
            &format!("{{{}: v}}", "k".repeat(254)),
            "{}",
            format!(
                "The ConfigMap \"long\" is invalid: data[{k}]: Invalid value: \"{k}\": must be no \
                 more than 253 characters",
                k = "k".repeat(254)
            ),
        ),
        (
            "both",
            "{k: v}",
            "{k: aGk=}",
            "The ConfigMap \"both\" is invalid: data[k]: Invalid value: \"k\": duplicate of key \
             present in binaryData"
                .to_owned(),
        ),
        (
            "not-base64",
            "{}",
            "{k: \"not base64!\"}",
            "Error from server (BadRequest): error when creating \"FILE\": ConfigMap in version \
             \"v1\" cannot be handled as a ConfigMap: illegal base64 data at input byte 3"
                .to_owned(),
        ),
    ] {
        let file = kubectl.write_file(&format!("{name}.yaml"), &config_map(name, data, binary));
        let expected = expected.replace("FILE", &file);
        kubectl.fails(&["apply", "-f", &file]).stderr_has(&expected);
        kubectl.fails(&["create", "-f", &file]).stderr_has(&expected);
    }
    // kubectl checks `--from-literal` keys itself, with the same rule's words.
    kubectl
        .fails(&["create", "configmap", "literal", "--from-literal=a/b=v"])
        .stderr_has(&format!(
            "\"a/b\" is not a valid key name for a ConfigMap: {KEY_REGEX}"
        ));
    kubectl.ok(&["get", "cm", "-o", "name"]).stdout_is("");
}

#[test]
fn more_than_one_mebibyte_is_refused() {
    let (_server, kubectl) = start();
    let big = kubectl.write_file("big", &"x".repeat(1024 * 1024 + 1));
    kubectl
        .fails(&[
            "create",
            "configmap",
            "big",
            &format!("--from-file=big={big}"),
        ])
        .stderr_has(
            "error: failed to create configmap: ConfigMap \"big\" is invalid: []: Too long: may \
             not be more than 1048576 bytes",
        );
    // Both maps count, `binaryData` by its decoded size: 600,000 + 450,000 bytes.
    let data = "x".repeat(600_000);
    let binary = "AAAA".repeat(150_000);
    let both = kubectl.write_file(
        "both.yaml",
        &config_map(
            "both",
            &format!("{{a: \"{data}\"}}"),
            &format!("{{b: {binary}}}"),
        ),
    );
    // (`create`: client-side apply would also copy it into an annotation, past its limit.)
    kubectl.fails(&["create", "-f", &both]).stderr_has(
        "The ConfigMap \"both\" is invalid: []: Too long: may not be more than 1048576 bytes",
    );
    // 600,000 + 390,000 bytes fit, though their base64 would not.
    let binary = "AAAA".repeat(130_000);
    let fits = kubectl.write_file(
        "fits.yaml",
        &config_map(
            "fits",
            &format!("{{a: \"{data}\"}}"),
            &format!("{{b: {binary}}}"),
        ),
    );
    kubectl.ok(&["create", "-f", &fits]);
    kubectl
        .ok(&["get", "cm", "-o", "name"])
        .stdout_is("configmap/fits");
}

#[test]
fn updates_are_validated_and_immutable_config_maps_stay() {
    let (_server, kubectl) = start();
    kubectl.ok(&["create", "configmap", "c", "--from-literal=a=x"]);
    kubectl
        .fails(&[
            "patch",
            "cm",
            "c",
            "--type=merge",
            "-p",
            r#"{"data":{"x/y":"z"}}"#,
        ])
        .stderr_has(&format!(
            "The ConfigMap \"c\" is invalid: data[x/y]: Invalid value: \"x/y\": {KEY_REGEX}"
        ));
    kubectl
        .fails(&[
            "patch",
            "cm",
            "c",
            "--type=merge",
            "-p",
            r#"{"binaryData":{"a":"aGk="}}"#,
        ])
        .stderr_has(
            "The ConfigMap \"c\" is invalid: data[a]: Invalid value: \"a\": duplicate of key \
             present in binaryData",
        );

    let frozen = kubectl.write_file(
        "frozen.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\ndata: {a: \"x\"}\n\
         binaryData: {b: aGk=}\nimmutable: true\n",
    );
    kubectl.ok(&["apply", "-f", &frozen]);
    let changed = kubectl.write_file(
        "changed.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\ndata: {a: \"y\"}\n\
         binaryData: {b: aG8=}\nimmutable: true\n",
    );
    kubectl.fails(&["apply", "-f", &changed]).stderr_has(
        "The ConfigMap \"frozen\" is invalid: \n\
         * data: Forbidden: field is immutable when `immutable` is set\n\
         * binaryData: Forbidden: field is immutable when `immutable` is set",
    );
    kubectl
        .fails(&[
            "patch",
            "cm",
            "frozen",
            "--type=merge",
            "-p",
            r#"{"immutable":false}"#,
        ])
        .stderr_has(
            "The ConfigMap \"frozen\" is invalid: immutable: Forbidden: field is immutable when \
             `immutable` is set",
        );
    // Metadata may still change.
    kubectl.ok(&["label", "cm", "frozen", "tier=web"]);
    let stored = kubectl.ok(&["get", "cm", "frozen", "-o", "json"]).json();
    assert_eq!(stored["data"]["a"], "x");
    assert_eq!(stored["binaryData"]["b"], "aGk=");
    assert_eq!(stored["metadata"]["labels"]["tier"], "web");
    assert_eq!(
        kubectl.ok(&["get", "cm", "c", "-o", "json"]).json()["data"]["a"],
        "x"
    );
}
