//! WebApp's versions converting through the hub: `v1` expresses the whole hub, `v1beta1`
//! only part of it, and writing through `v1beta1` onto the stored hub loses nothing.

use api_types::apps::{self, v1, v1beta1};
use kapi::Convert;
use kapi::meta::ObjectMeta;
use kapi::scheme::KindEntry;
use serde_json::json;

/// A hub with everything `v1beta1` cannot express: env, paused, three ports.
fn rich_hub() -> apps::WebApp {
    apps::WebApp {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: apps::WebAppSpec {
            replicas: 3,
            container: apps::Container {
                image: "nginx:1.27".into(),
                ports: vec![
                    port(Some("http"), 80, apps::Protocol::TCP),
                    port(Some("https"), 443, apps::Protocol::TCP),
                    port(None, 53, apps::Protocol::UDP),
                ],
                env: vec![apps::EnvVar {
                    name: "MODE".into(),
                    value: "prod".into(),
                }],
            },
            paused: true,
        },
        status: apps::WebAppStatus {
            replicas: Some(3),
            ready_replicas: Some(2),
            observed_generation: Some(4),
            conditions: Vec::new(),
        },
    }
}

fn port(name: Option<&str>, number: i32, protocol: apps::Protocol) -> apps::ContainerPort {
    apps::ContainerPort {
        name: name.map(str::to_owned),
        container_port: number,
        protocol,
    }
}

fn new_hub<V: Convert<apps::WebApp>>(version: V) -> apps::WebApp {
    let mut hub = apps::WebApp::default();
    version.into_hub(&mut hub);
    hub
}

#[test]
fn v1_expresses_the_whole_hub() {
    let hub = rich_hub();
    let v1 = v1::WebApp::from_hub(&hub);
    assert_eq!(new_hub(v1.clone()), hub);
    assert_eq!(v1::WebApp::from_hub(&new_hub(v1.clone())), v1);
}

#[test]
fn v1beta1_reads_the_first_port_and_the_image() {
    let beta = v1beta1::WebApp::from_hub(&rich_hub());
    assert_eq!(beta.spec.replicas, 3);
    assert_eq!(beta.spec.image, "nginx:1.27");
    assert_eq!(beta.spec.port, 80);
    assert_eq!(beta.status.and_then(|s| s.ready_replicas), Some(2));
}

#[test]
fn v1beta1_write_onto_the_stored_hub_keeps_what_it_cannot_express() {
    let stored = rich_hub();
    let mut beta = v1beta1::WebApp::from_hub(&stored);
    beta.spec.replicas = 5;
    beta.spec.port = 8080;
    let mut written = stored.clone();
    beta.into_hub(&mut written);

    let mut expected = stored;
    expected.spec.replicas = 5;
    expected.spec.container.ports[0].container_port = 8080;
    assert_eq!(written, expected);
}

#[test]
fn v1beta1_read_then_written_back_unchanged_is_the_identity() {
    let stored = rich_hub();
    let mut written = stored.clone();
    v1beta1::WebApp::from_hub(&stored).into_hub(&mut written);
    assert_eq!(written, stored);
}

#[test]
fn v1beta1_created_reads_through_v1() {
    let beta: v1beta1::WebApp = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "image": "nginx", "port": 8443},
    }))
    .unwrap();
    let v1 = v1::WebApp::from_hub(&new_hub(beta));
    assert_eq!(
        serde_json::to_value(&v1).unwrap(),
        json!({
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "container": {
                    "image": "nginx",
                    "ports": [{"containerPort": 8443, "protocol": "TCP"}],
                },
                "paused": false,
            },
        })
    );
}

/// Through the scheme, as the registry converts: JSON in one version, onto a base hub.
#[test]
fn scheme_update_through_v1beta1_keeps_v1_fields() {
    let kind = KindEntry::new::<apps::WebApp>()
        .version::<apps::WebApp, v1::WebApp>("v1")
        .version::<apps::WebApp, v1beta1::WebApp>("v1beta1");
    let v1_json = serde_json::to_value(v1::WebApp::from_hub(&rich_hub())).unwrap();
    let stored = kind.to_hub(v1_json.clone(), "v1").unwrap();
    let mut beta = kind.convert(v1_json, "v1", "v1beta1").unwrap();
    beta["spec"]["replicas"] = json!(7);

    let updated = kind
        .to_hub_over(beta.clone(), "v1beta1", || Ok(stored))
        .unwrap();
    let v1 = kind.from_hub(updated, "v1").unwrap();
    assert_eq!(v1["spec"]["replicas"], json!(7));
    assert_eq!(v1["spec"]["paused"], json!(true));
    assert_eq!(v1["spec"]["container"]["env"][0]["name"], json!("MODE"));
    assert_eq!(
        v1["spec"]["container"]["ports"].as_array().unwrap().len(),
        3
    );

    // Without a base (a create), what v1beta1 cannot express is defaulted.
    let created = kind.to_hub(beta, "v1beta1").unwrap();
    let v1 = kind.from_hub(created, "v1").unwrap();
    assert_eq!(v1["spec"]["paused"], json!(false));
    assert_eq!(
        v1["spec"]["container"]["ports"].as_array().unwrap().len(),
        1
    );
}

/// A hub without ports reads as v1beta1's default port; writing that back adds no port.
#[test]
fn v1beta1_default_port_written_back_onto_a_hub_without_ports_adds_none() {
    let mut stored = rich_hub();
    stored.spec.container.ports.clear();
    let beta = v1beta1::WebApp::from_hub(&stored);
    assert_eq!(beta.spec.port, 8080);
    let mut written = stored.clone();
    beta.into_hub(&mut written);
    assert_eq!(written, stored);
}
