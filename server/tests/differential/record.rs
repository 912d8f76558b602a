//! The recorder of the differential tables: every table's rows sent to the peer
//! kube-apiserver (`shared/peer/`), its answers written beside them; and WebApp installed
//! there as the CustomResourceDefinition the apply rows need.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::{Row, TABLES, Table, rows, run, run_namespace, table_dir};
use crate::support;
use support::http::Client;

/// Records the peer's answers into every table's recording. Needs a running peer (see
/// `builtin.yaml`): `KAPI_PEER_DIR` names its directory (certificates and tokens);
/// `KAPI_RECORD_TABLES` (`validation,builtin`) records those tables alone.
#[test]
#[ignore = "needs the kube-apiserver of shared/peer/ running"]
fn record() {
    let client = support::Peer::from_env().client();
    let version = client
        .request("GET", "/version", "", None)
        .expect("the peer answers");
    let version: Value = serde_json::from_str(&version.body).expect("/version is JSON");
    install_webapp_crd(&client);
    let chosen = std::env::var("KAPI_RECORD_TABLES").ok();
    let chosen = |table: &Table| match &chosen {
        None => true,
        Some(names) => {
            (names.split(',')).any(|name| table.rows.strip_suffix(".yaml") == Some(name.trim()))
        }
    };
    for table in TABLES.into_iter().filter(chosen) {
        let rows: Vec<Row> = rows(table).iter().map(Row::for_peer).collect();
        let answers: Map<String, Value> = (run(&client, &run_namespace(), &rows))
            .into_iter()
            .collect();
        let recorded = json!({
            "recordedFrom": format!("kube-apiserver {} (shared/peer/)", version["gitVersion"].as_str().unwrap_or("?")),
            "answers": answers,
        });
        let mut text = serde_json::to_string_pretty(&recorded).expect("JSON");
        text.push('\n');
        std::fs::write(table_dir().join(table.recorded), text).expect("writing the recording");
    }
}

/// Installs WebApp in the peer as a CustomResourceDefinition with WebApp's published v1
/// schema ([`support::webapp_crd`]); waits until it is established.
fn install_webapp_crd(client: &Client) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let crd = support::webapp_crd::webapp_crd(&root);
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let existing = client.request("GET", &format!("{path}/webapps.apps.example.dev"), "", None);
    let response = match existing {
        Ok(found) if found.status == 200 => {
            let mut crd = crd.clone();
            crd["metadata"]["resourceVersion"] =
                found.json()["metadata"]["resourceVersion"].clone();
            client.request(
                "PUT",
                &format!("{path}/webapps.apps.example.dev"),
                "application/json",
                Some(&crd.to_string()),
            )
        }
        _ => client.request("POST", path, "application/json", Some(&crd.to_string())),
    }
    .expect("the peer answers");
    assert!(
        (200..300).contains(&response.status),
        "installing the CRD: {}",
        response.body
    );
    support::wait_for(
        std::time::Duration::from_secs(30),
        "the WebApp CRD to be established",
        String::new,
        || {
            let crd = client
                .request("GET", &format!("{path}/webapps.apps.example.dev"), "", None)
                .ok()?
                .json();
            let established = (crd.pointer("/status/conditions")?.as_array()?.iter())
                .any(|c| c["type"] == "Established" && c["status"] == "True");
            let served = client
                .request("GET", "/apis/apps.example.dev/v1", "", None)
                .ok()?
                .status
                == 200;
            (established && served).then_some(())
        },
    );
}
