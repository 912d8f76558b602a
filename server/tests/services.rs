//! What kube-apiserver does with Services beyond storing them, through the real binary:
//!
//! - kubectl's `expose`, `create service nodeport` and `create service clusterip
//!   --clusterip=None` get cluster IPs and node ports as kube hands them out (kubectl 1.32
//!   and 1.20); an address or port asked for that is taken or out of the range is kube's
//!   422; a delete or a type change gives them back; a dry run takes nothing and shows
//!   kube's made-up values; a LoadBalancer with `externalTrafficPolicy: Local` gets a
//!   health check node port, one with `allocateLoadBalancerNodePorts: false` none.
//! - Dual-stack ranges: `PreferDualStack` gets an address of each family, a policy change
//!   adds or gives back the secondary one; `RequireDualStack` on a single-stack server is
//!   kube's 422.
//! - The `default/kubernetes` Service names the server (its Endpoints and EndpointSlice),
//!   and `kubectl cluster-info` and `cluster-info dump` work.
//! - The repair pass marks again what a Service has and its bitmap lacks (with kube's
//!   Event on the Service) and gives back what no Service has after three passes.
//!
//! Several replicas on one etcd (concurrent creates, kill -9, the endpoints of both) are in
//! `etcd.rs`.

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::Duration;

use crate::support;

use serde_json::{Value, json};
use support::http::Client;
use support::{Kubectl, Server, Version, wait_for};

const SERVICES: &str = "/api/v1/namespaces/default/services";

support::for_both_versions! {
    kubectl_services_get_addresses_and_ports_as_kube_hands_them_out =>
        kubectl_1_32_services_get_addresses_and_ports_as_kube_hands_them_out,
        kubectl_1_20_services_get_addresses_and_ports_as_kube_hands_them_out;
}

fn spec(kubectl: &Kubectl, name: &str) -> Value {
    kubectl.ok(&["get", "service", name, "-o", "json"]).json()["spec"].clone()
}

fn ip_in_default_range(ip: &Value) -> IpAddr {
    let ip: IpAddr = ip.as_str().expect("an address").parse().expect("an IP");
    let IpAddr::V4(v4) = ip else {
        panic!("{ip} is not IPv4")
    };
    let [a, b, c, d] = v4.octets();
    assert!(
        (a, b, c) == (10, 0, 0) && (2..=254).contains(&d),
        "{ip} is not one 10.0.0.0/24 hands out (10.0.0.1 is the kubernetes Service's)"
    );
    ip
}

fn kubectl_services_get_addresses_and_ports_as_kube_hands_them_out(version: Version) {
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    kubectl.ok(&["create", "deployment", "web", "--image=nginx"]);
    kubectl.ok(&["expose", "deployment", "web", "--port=80"]);
    kubectl.ok(&["create", "service", "nodeport", "np", "--tcp=80:8080"]);
    kubectl.ok(&["create", "service", "clusterip", "db", "--clusterip=None"]);

    let web = spec(&kubectl, "web");
    let web_ip = ip_in_default_range(&web["clusterIP"]);
    assert_eq!(web["clusterIPs"], json!([web_ip.to_string()]));
    assert_eq!(web["ipFamilies"], json!(["IPv4"]));
    assert_eq!(web["ipFamilyPolicy"], "SingleStack");
    let np = spec(&kubectl, "np");
    let np_ip = ip_in_default_range(&np["clusterIP"]);
    assert_ne!(web_ip, np_ip);
    let node_port = np["ports"][0]["nodePort"].as_i64().expect("a node port");
    // Above kube's static band of the default range (30000-30085), as a free port is.
    assert!((30086..=32767).contains(&node_port), "{node_port}");
    let db = spec(&kubectl, "db");
    assert_eq!(db["clusterIP"], "None");
    assert_eq!(db["clusterIPs"], json!(["None"]));
    assert_eq!(db["ipFamilyPolicy"], "SingleStack");

    // `get svc` shows them as kube does.
    let table = kubectl.ok(&["get", "svc", "np", "--no-headers"]).stdout;
    assert!(
        table.contains(&format!("{np_ip}")) && table.contains(&format!("80:{node_port}/TCP")),
        "{table}"
    );

    // Taken, or outside the ranges: kube's 422s.
    let taken = format!("--clusterip={web_ip}");
    kubectl
        .fails(&["create", "service", "clusterip", "again", "--tcp=80", &taken])
        .stderr_has(&format!(
            "Service \"again\" is invalid: spec.clusterIPs: Invalid value: []string{{\"{web_ip}\"}}: \
             failed to allocate IP {web_ip}: provided IP is already allocated"
        ));
    kubectl
        .fails(&[
            "create",
            "service",
            "clusterip",
            "far",
            "--tcp=80",
            "--clusterip=10.1.0.5",
        ])
        .stderr_has(
            "failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid \
             range. The range of valid IPs is 10.0.0.0/24",
        );
    let port_taken = format!("--node-port={node_port}");
    kubectl
        .fails(&[
            "create",
            "service",
            "nodeport",
            "np2",
            "--tcp=80",
            &port_taken,
        ])
        .stderr_has(&format!(
            "Service \"np2\" is invalid: spec.ports[0].nodePort: Invalid value: {node_port}: \
             provided port is already allocated"
        ));
    kubectl
        .fails(&[
            "create",
            "service",
            "nodeport",
            "np3",
            "--tcp=80",
            "--node-port=40000",
        ])
        .stderr_has(
            "spec.ports[0].nodePort: Invalid value: 40000: provided port is not in the valid \
             range. The range of valid ports is 30000-32767",
        );
    // Nothing a failed create took stays taken: the name it did not get is free.
    kubectl.ok(&["create", "service", "clusterip", "again", "--tcp=80"]);

    // A type change gives the node port back; a delete the address.
    kubectl.ok(&[
        "patch",
        "service",
        "np",
        "-p",
        r#"{"spec":{"type":"ClusterIP"}}"#,
    ]);
    let np = spec(&kubectl, "np");
    assert_eq!(np["ports"][0].get("nodePort"), None, "{np}");
    assert_eq!(
        np["clusterIP"],
        np_ip.to_string(),
        "kept across the type change"
    );
    kubectl.ok(&[
        "create",
        "service",
        "nodeport",
        "np2",
        "--tcp=80",
        &port_taken,
    ]);
    kubectl.ok(&["delete", "service", "web"]);
    kubectl.ok(&["create", "service", "clusterip", "web2", "--tcp=80", &taken]);

    // A dry run shows kube's made-up values and takes nothing.
    let dry = kubectl
        .ok(&[
            "create",
            "service",
            "nodeport",
            "dry",
            "--tcp=80",
            "--dry-run=server",
            "-o",
            "json",
        ])
        .json();
    assert_eq!(dry["spec"]["clusterIP"], "10.0.0.0");
    assert_eq!(dry["spec"]["ports"][0]["nodePort"], 32769);
    kubectl.fails(&["get", "service", "dry"]);
}

/// A LoadBalancer's health check node port, and one that asks for no node ports.
#[test]
fn load_balancers_get_the_node_ports_they_ask_for() {
    let server = Server::start();
    let client = Client::new(server.addr());
    let create = |body: Value| {
        let response = client.post(SERVICES, &body).unwrap();
        assert_eq!(response.status, 201, "{response:?}");
        response.json()
    };
    let local = create(
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
        "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local",
            "ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP"}]}}),
    );
    let spec = &local["spec"];
    let ports: Vec<i64> = (spec["ports"].as_array().unwrap().iter())
        .map(|p| p["nodePort"].as_i64().unwrap())
        .collect();
    // One node port per port number: 53 over UDP and TCP share theirs.
    assert_eq!(ports[1], ports[2], "{spec}");
    assert_ne!(ports[0], ports[1], "{spec}");
    let health = spec["healthCheckNodePort"]
        .as_i64()
        .expect("a health check port");
    assert!(!ports.contains(&health), "{spec}");
    // Leaving `Local` gives the health check port back and clears it.
    let changed = client
        .merge_patch(
            &format!("{SERVICES}/lb"),
            &json!({"spec": {"externalTrafficPolicy": "Cluster"}}),
        )
        .unwrap();
    assert_eq!(changed.status, 200, "{changed:?}");
    assert_eq!(changed.json()["spec"].get("healthCheckNodePort"), None);
    let reuse = create(
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "np"},
        "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": health}]}}),
    );
    assert_eq!(reuse["spec"]["ports"][0]["nodePort"], health);

    let none = create(
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "bare"},
        "spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false,
            "ports": [{"port": 80}]}}),
    );
    assert_eq!(none["spec"]["ports"][0].get("nodePort"), None, "{none}");
}

/// Dual-stack ranges: an address of each family for `PreferDualStack`, the secondary one
/// added and given back by policy changes; a single-stack server refuses
/// `RequireDualStack`.
#[test]
fn dual_stack_services_get_an_address_of_each_family() {
    let server = Server::start_with(&["--service-cluster-ip-range", "10.0.0.0/24,fd00::/108"]);
    let client = Client::new(server.addr());
    let body = |name: &str, policy: &str| {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"ipFamilyPolicy": policy, "ports": [{"port": 80}]}})
    };
    let dual = client
        .post(SERVICES, &body("dual", "PreferDualStack"))
        .unwrap();
    assert_eq!(dual.status, 201, "{dual:?}");
    let spec = dual.json()["spec"].clone();
    assert_eq!(spec["ipFamilies"], json!(["IPv4", "IPv6"]));
    let ips: Vec<IpAddr> = (spec["clusterIPs"].as_array().unwrap().iter())
        .map(|ip| ip.as_str().unwrap().parse().unwrap())
        .collect();
    assert!(
        ips.len() == 2 && ips[0].is_ipv4() && ips[1].is_ipv6(),
        "{spec}"
    );
    assert!(ips[1].to_string().starts_with("fd00::"), "{spec}");

    // Single-stack, then upgraded: the IPv6 address added, the IPv4 one kept.
    let single = client
        .post(SERVICES, &body("single", "SingleStack"))
        .unwrap();
    assert_eq!(single.status, 201, "{single:?}");
    let first = single.json()["spec"]["clusterIP"].clone();
    let path = format!("{SERVICES}/single");
    let upgraded = client
        .merge_patch(
            &path,
            &json!({"spec": {"ipFamilyPolicy": "RequireDualStack"}}),
        )
        .unwrap();
    assert_eq!(upgraded.status, 200, "{upgraded:?}");
    let spec = upgraded.json()["spec"].clone();
    assert_eq!(spec["clusterIPs"][0], first);
    assert_eq!(spec["ipFamilies"], json!(["IPv4", "IPv6"]));
    let secondary = spec["clusterIPs"][1]
        .as_str()
        .expect("an IPv6 address")
        .to_owned();
    // Downgraded: only with SingleStack, and the secondary address goes back.
    let refused = client
        .merge_patch(
            &path,
            &json!({"spec": {"ipFamilies": ["IPv4"], "clusterIPs": [first]}}),
        )
        .unwrap();
    assert_eq!(refused.status, 422, "{refused:?}");
    let downgraded = client
        .merge_patch(&path, &json!({"spec": {"ipFamilyPolicy": "SingleStack"}}))
        .unwrap();
    assert_eq!(downgraded.status, 200, "{downgraded:?}");
    assert_eq!(downgraded.json()["spec"]["clusterIPs"], json!([first]));
    let reused = client
        .post(
            SERVICES,
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "v6"},
                "spec": {"ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv6"],
                    "clusterIP": secondary, "ports": [{"port": 80}]}}),
        )
        .unwrap();
    assert_eq!(
        reused.status, 201,
        "the released address is free again: {reused:?}"
    );

    let single_stack = Server::start();
    let refused = Client::new(single_stack.addr())
        .post(SERVICES, &body("dual", "RequireDualStack"))
        .unwrap();
    assert_eq!(refused.status, 422, "{refused:?}");
    assert_eq!(
        refused.json()["message"],
        "Service \"dual\" is invalid: spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": \
         this cluster is not configured for dual-stack services"
    );
}

/// `default/kubernetes` names the server: its address from the range, port 443 to the
/// server's port, Endpoints and an EndpointSlice naming the advertised address; kubectl's
/// `cluster-info` and `cluster-info dump` work.
#[test]
fn the_kubernetes_service_names_the_server() {
    let server = Server::start_with(&["--advertise-address", "192.0.2.77"]);
    let client = Client::new(server.addr());
    let port = server.addr().port();
    let service = client
        .get(&format!("{SERVICES}/kubernetes"))
        .unwrap()
        .json();
    assert_eq!(
        service["metadata"]["labels"],
        json!({"component": "apiserver", "provider": "kubernetes"})
    );
    assert_eq!(service["spec"]["clusterIP"], "10.0.0.1");
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}])
    );
    let endpoints = client
        .get("/api/v1/namespaces/default/endpoints/kubernetes")
        .unwrap()
        .json();
    assert_eq!(
        endpoints["subsets"],
        json!([{"addresses": [{"ip": "192.0.2.77"}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}])
    );
    assert_eq!(
        endpoints["metadata"]["labels"]["endpointslice.kubernetes.io/skip-mirror"],
        "true"
    );
    let slice = client
        .get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes")
        .unwrap()
        .json();
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(
        slice["metadata"]["labels"],
        json!({"kubernetes.io/service-name": "kubernetes"})
    );
    assert_eq!(
        slice["endpoints"],
        json!([{"addresses": ["192.0.2.77"], "conditions": {"ready": true}}])
    );

    for version in [Version::V1_32, Version::V1_20] {
        let kubectl = Kubectl::new(version, &server);
        // (`TERM=dumb`: no colours between the words.)
        let info = kubectl.run_with_env(&[("TERM", "dumb")], &["cluster-info"]);
        info.check(info.succeeded(), "cluster-info to succeed")
            .stdout_has(&format!(
                "Kubernetes control plane is running at {}",
                server.url()
            ));
        let dump = kubectl.ok(&["cluster-info", "dump", "--namespaces", "default"]);
        assert!(
            dump.stdout.contains("\"kind\": \"ServiceList\""),
            "{}",
            dump.stdout
        );
    }
}

/// The repair pass: a Service's address its bitmap lacks is marked taken again, with kube's
/// Event on the Service; an address taken by no Service (what a write killed between
/// taking it and storing its Service leaves) goes back on the third pass.
#[test]
fn the_repair_pass_marks_what_services_have_and_frees_what_they_do_not() {
    let mut server = Server::start_with(&["--service-repair-interval", "200ms"]);
    let client = Client::new(server.addr());
    let create = |name: &str, ip: &str| {
        let body = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"clusterIP": ip, "ports": [{"port": 80}]}});
        client.post(SERVICES, &body).unwrap()
    };
    assert_eq!(create("kept", "10.0.0.20").status, 201);
    server.kill_9();
    // The store as a killed server may leave it: 10.0.0.30 taken by nothing, 10.0.0.20
    // (kept's) not marked.
    let stored = support::stored_key(&server, "/registry/ranges/serviceips");
    let mut range: Value = serde_json::from_slice(&stored).unwrap();
    let mut taken = bitmap(&range);
    taken.remove(&19);
    taken.insert(29);
    range["data"] = json!(encode(&taken));
    support::store_key(
        &server,
        "/registry/ranges/serviceips",
        &serde_json::to_vec(&range).unwrap(),
    );
    server.restart();
    let client = Client::new(server.addr());
    let create = |name: &str, ip: &str| {
        let body = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"clusterIP": ip, "ports": [{"port": 80}]}});
        client.post(SERVICES, &body).unwrap()
    };
    // Marked again by the first pass, before the server served: 10.0.0.20 stays kept's.
    assert_eq!(create("thief", "10.0.0.20").status, 422);
    let events = client
        .get("/apis/events.k8s.io/v1/namespaces/default/events")
        .unwrap()
        .json();
    let event = (events["items"].as_array().unwrap().iter())
        .find(|e| e["reason"] == "ClusterIPNotAllocated")
        .unwrap_or_else(|| panic!("no ClusterIPNotAllocated event: {events}"));
    assert_eq!(event["regarding"]["name"], "kept");
    assert_eq!(
        event["note"],
        "Cluster IP [IPv4]:10.0.0.20 is not allocated; repairing"
    );
    assert_eq!(
        event["reportingController"],
        "ipallocator-repair-controller"
    );
    assert_eq!(event["type"], "Warning");
    // Flagged, then freed on the third pass: then it can be had.
    wait_for(
        Duration::from_secs(20),
        "10.0.0.30 to be given back",
        || server.log().tail(20),
        || (create("late", "10.0.0.30").status == 201).then_some(()),
    );
}

/// The offsets a stored range's bitmap marks (kube's `big.Int` bytes, base64).
pub(crate) fn bitmap(range: &Value) -> BTreeSet<usize> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(range["data"].as_str().unwrap_or(""))
        .unwrap();
    let mut taken = BTreeSet::new();
    for (i, byte) in bytes.iter().rev().enumerate() {
        for bit in 0..8 {
            if byte & (1 << bit) != 0 {
                taken.insert(i * 8 + bit);
            }
        }
    }
    taken
}

fn encode(taken: &BTreeSet<usize>) -> String {
    use base64::Engine as _;
    let len = taken.iter().max().map_or(0, |max| max / 8 + 1);
    let mut bytes = vec![0u8; len];
    for offset in taken {
        bytes[len - 1 - offset / 8] |= 1 << (offset % 8);
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
