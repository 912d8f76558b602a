//! The Pod Security Standards' checks (k8s.io/pod-security-admission's `policy`, at kube
//! 1.32's latest version): each names what a Pod's spec and metadata do that its level
//! forbids, with kube's reasons and details, in kube's order (baseline checks, then
//! restricted ones, each by id; a restricted check replacing its baseline one).

use std::collections::BTreeSet;

use serde_json::Value;

/// A level of the standards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    pub(crate) fn parse(value: &str) -> Option<Level> {
        match value {
            "privileged" => Some(Level::Privileged),
            "baseline" => Some(Level::Baseline),
            "restricted" => Some(Level::Restricted),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// One failed check: kube's reason and detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Violation {
    pub(crate) reason: String,
    pub(crate) detail: String,
}

const CAPABILITIES: [&str; 13] = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];
const SYSCTLS: [&str; 12] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
];
const VOLUMES: [&str; 8] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];
const SELINUX_TYPES: [&str; 5] = [
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

fn quote(items: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let quoted: Vec<String> = items
        .into_iter()
        .map(|i| format!("\"{}\"", i.as_ref()))
        .collect();
    quoted.join(", ")
}

/// `container "a"` or `containers "a", "b"`.
fn containers_phrase(names: &[String]) -> String {
    let noun = if names.len() == 1 {
        "container"
    } else {
        "containers"
    };
    format!("{noun} {}", quote(names))
}

/// `pod`, the containers, or `pod and containers ...`.
fn subject(pod: bool, names: &[String]) -> String {
    let mut parts = Vec::new();
    if pod {
        parts.push("pod".to_owned());
    }
    if !names.is_empty() {
        parts.push(containers_phrase(names));
    }
    parts.join(" and ")
}

fn sorted(set: BTreeSet<String>) -> Vec<String> {
    set.into_iter().collect()
}

/// The containers of a spec, in kube's order (init, regular, ephemeral).
fn containers(spec: &Value) -> Vec<&Value> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|field| spec[*field].as_array().into_iter().flatten())
        .collect()
}

fn name(container: &Value) -> String {
    container["name"].as_str().unwrap_or_default().to_owned()
}

/// The containers of `spec` for which `test` holds.
fn named(spec: &Value, test: impl Fn(&Value) -> bool) -> Vec<String> {
    containers(spec)
        .into_iter()
        .filter(|c| test(c))
        .map(name)
        .collect()
}

fn violation(reason: &str, detail: String) -> Violation {
    Violation {
        reason: reason.into(),
        detail,
    }
}

/// What `pod` (its metadata and spec) does that `level` forbids, in kube's order.
pub(crate) fn check(level: Level, metadata: &Value, spec: &Value) -> Vec<Violation> {
    if level == Level::Privileged {
        return Vec::new();
    }
    let restricted = level == Level::Restricted;
    let windows = spec["os"]["name"] == "windows";
    let mut found = Vec::new();
    found.extend(app_armor(metadata, spec));
    if !restricted {
        found.extend(capabilities_baseline(spec));
    }
    found.extend(host_namespaces(spec));
    if !restricted {
        found.extend(host_path_volumes(spec));
    }
    found.extend(host_ports(spec));
    let privileged = named(spec, |c| c["securityContext"]["privileged"] == true);
    if !privileged.is_empty() {
        let detail = format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&privileged)
        );
        found.push(violation("privileged", detail));
    }
    found.extend(proc_mount(spec));
    found.extend(se_linux(spec));
    if !restricted {
        found.extend(seccomp(spec, false));
    }
    found.extend(sysctls(spec));
    found.extend(host_process(spec));
    if restricted {
        if !windows {
            let escalating = named(spec, |c| {
                c["securityContext"]["allowPrivilegeEscalation"] != false
            });
            if !escalating.is_empty() {
                let detail = format!(
                    "{} must set securityContext.allowPrivilegeEscalation=false",
                    containers_phrase(&escalating)
                );
                found.push(violation("allowPrivilegeEscalation != false", detail));
            }
            found.extend(capabilities_restricted(spec));
        }
        found.extend(restricted_volumes(spec));
        found.extend(run_as_non_root(spec));
        found.extend(run_as_user(spec));
        if !windows {
            found.extend(seccomp(spec, true));
        }
    }
    found
}

fn app_armor(metadata: &Value, spec: &Value) -> Option<Violation> {
    let allowed = |t: &Value| t.is_null() || t == "RuntimeDefault" || t == "Localhost";
    let mut bad = BTreeSet::new();
    let pod_type = &spec["securityContext"]["appArmorProfile"]["type"];
    let pod = !allowed(pod_type);
    if pod {
        bad.insert(pod_type.as_str().unwrap_or_default().to_owned());
    }
    let mut names = Vec::new();
    for container in containers(spec) {
        let t = &container["securityContext"]["appArmorProfile"]["type"];
        if !allowed(t) {
            bad.insert(t.as_str().unwrap_or_default().to_owned());
            names.push(name(container));
        }
    }
    let mut annotations = BTreeSet::new();
    for (key, value) in metadata["annotations"].as_object().into_iter().flatten() {
        let value = value.as_str().unwrap_or_default();
        if key.starts_with("container.apparmor.security.beta.kubernetes.io/")
            && !(value.is_empty() || value == "runtime/default" || value.starts_with("localhost/"))
        {
            annotations.insert(format!("{key}=\"{value}\""));
        }
    }
    if bad.is_empty() && annotations.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if pod {
        parts.push("pod".to_owned());
    }
    if !names.is_empty() {
        parts.push(containers_phrase(&names));
    }
    if !annotations.is_empty() {
        parts.push(
            if annotations.len() == 1 {
                "annotation"
            } else {
                "annotations"
            }
            .to_owned(),
        );
    }
    let count = bad.len() + annotations.len();
    let values: Vec<String> = sorted(bad).into_iter().chain(annotations).collect();
    let reason = if count == 1 {
        "forbidden AppArmor profile"
    } else {
        "forbidden AppArmor profiles"
    };
    Some(violation(
        reason,
        format!(
            "{} must not set AppArmor profile type to {}",
            parts.join(" and "),
            quote(values)
        ),
    ))
}

fn added(container: &Value) -> Vec<String> {
    (container["securityContext"]["capabilities"]["add"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(|c| c.as_str().map(str::to_owned))
    .collect()
}

fn capabilities_baseline(spec: &Value) -> Option<Violation> {
    let mut bad = BTreeSet::new();
    let mut names = Vec::new();
    for container in containers(spec) {
        let forbidden: Vec<String> = added(container)
            .into_iter()
            .filter(|c| !CAPABILITIES.contains(&c.as_str()))
            .collect();
        if !forbidden.is_empty() {
            names.push(name(container));
            bad.extend(forbidden);
        }
    }
    (!names.is_empty()).then(|| {
        let detail = format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&names),
            quote(sorted(bad))
        );
        violation("non-default capabilities", detail)
    })
}

fn capabilities_restricted(spec: &Value) -> Option<Violation> {
    let mut undropped = Vec::new();
    let mut adding = Vec::new();
    let mut bad = BTreeSet::new();
    for container in containers(spec) {
        let drops_all = (container["securityContext"]["capabilities"]["drop"]
            .as_array()
            .into_iter()
            .flatten())
        .any(|c| c == "ALL");
        if !drops_all {
            undropped.push(name(container));
        }
        let forbidden: Vec<String> = added(container)
            .into_iter()
            .filter(|c| c != "NET_BIND_SERVICE")
            .collect();
        if !forbidden.is_empty() {
            adding.push(name(container));
            bad.extend(forbidden);
        }
    }
    let mut parts = Vec::new();
    if !undropped.is_empty() {
        parts.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&undropped)
        ));
    }
    if !adding.is_empty() {
        parts.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            quote(sorted(bad))
        ));
    }
    (!parts.is_empty()).then(|| violation("unrestricted capabilities", parts.join("; ")))
}

fn host_namespaces(spec: &Value) -> Option<Violation> {
    let set: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .iter()
        .filter(|f| spec[**f] == true)
        .map(|f| format!("{f}=true"))
        .collect();
    (!set.is_empty()).then(|| violation("host namespaces", set.join(", ")))
}

fn volumes(spec: &Value) -> impl Iterator<Item = &Value> {
    spec["volumes"].as_array().into_iter().flatten()
}

fn host_path_volumes(spec: &Value) -> Option<Violation> {
    let names: Vec<String> = volumes(spec)
        .filter(|v| v.get("hostPath").is_some())
        .map(name)
        .collect();
    (!names.is_empty()).then(|| {
        let noun = if names.len() == 1 {
            "volume"
        } else {
            "volumes"
        };
        violation("hostPath volumes", format!("{noun} {}", quote(&names)))
    })
}

fn restricted_volumes(spec: &Value) -> Option<Violation> {
    let mut names = Vec::new();
    let mut types = BTreeSet::new();
    for volume in volumes(spec) {
        let kind = (volume.as_object().into_iter().flatten())
            .map(|(k, _)| k.as_str())
            .find(|k| *k != "name")
            .unwrap_or("unknown");
        if !VOLUMES.contains(&kind) {
            names.push(name(volume));
            types.insert(kind.to_owned());
        }
    }
    (!names.is_empty()).then(|| {
        let (noun, verb) = if names.len() == 1 {
            ("volume", "uses")
        } else {
            ("volumes", "use")
        };
        let kinds = if types.len() == 1 { "type" } else { "types" };
        let detail = format!(
            "{noun} {} {verb} restricted volume {kinds} {}",
            quote(&names),
            quote(sorted(types))
        );
        violation("restricted volume types", detail)
    })
}

fn host_ports(spec: &Value) -> Option<Violation> {
    let mut names = Vec::new();
    let mut ports = BTreeSet::new();
    for container in containers(spec) {
        let used: Vec<String> = (container["ports"].as_array().into_iter().flatten())
            .filter_map(|p| p["hostPort"].as_i64().filter(|&h| h != 0))
            .map(|h| h.to_string())
            .collect();
        if !used.is_empty() {
            names.push(name(container));
            ports.extend(used);
        }
    }
    (!names.is_empty()).then(|| {
        let verb = if names.len() == 1 { "uses" } else { "use" };
        let noun = if ports.len() == 1 {
            "hostPort"
        } else {
            "hostPorts"
        };
        let ports: Vec<String> = sorted(ports);
        violation(
            "hostPort",
            format!(
                "{} {verb} {noun} {}",
                containers_phrase(&names),
                ports.join(", ")
            ),
        )
    })
}

fn proc_mount(spec: &Value) -> Option<Violation> {
    let mut names = Vec::new();
    let mut values = BTreeSet::new();
    for container in containers(spec) {
        let mount = &container["securityContext"]["procMount"];
        if let Some(mount) = mount.as_str().filter(|m| *m != "Default") {
            names.push(name(container));
            values.insert(mount.to_owned());
        }
    }
    (!names.is_empty()).then(|| {
        let detail = format!(
            "{} must not set securityContext.procMount to {}",
            containers_phrase(&names),
            quote(sorted(values))
        );
        violation("procMount", detail)
    })
}

fn se_linux(spec: &Value) -> Option<Violation> {
    let mut types = BTreeSet::new();
    let (mut user, mut role) = (false, false);
    let mut judge = |options: &Value| {
        if options.is_null() {
            return false;
        }
        let t = options["type"].as_str().unwrap_or_default();
        let bad_type = !SELINUX_TYPES.contains(&t);
        if bad_type {
            types.insert(t.to_owned());
        }
        let bad_user = options["user"].as_str().is_some_and(|u| !u.is_empty());
        let bad_role = options["role"].as_str().is_some_and(|r| !r.is_empty());
        user |= bad_user;
        role |= bad_role;
        bad_type || bad_user || bad_role
    };
    let pod = judge(&spec["securityContext"]["seLinuxOptions"]);
    let names: Vec<String> = containers(spec)
        .into_iter()
        .filter(|c| judge(&c["securityContext"]["seLinuxOptions"]))
        .map(name)
        .collect();
    if !pod && names.is_empty() {
        return None;
    }
    let mut problems = Vec::new();
    if !types.is_empty() {
        let noun = if types.len() == 1 { "type" } else { "types" };
        problems.push(format!("{noun} {}", quote(sorted(types))));
    }
    if user {
        problems.push("user may not be set".into());
    }
    if role {
        problems.push("role may not be set".into());
    }
    let detail = format!(
        "{} set forbidden securityContext.seLinuxOptions: {}",
        subject(pod, &names),
        problems.join("; ")
    );
    Some(violation("seLinuxOptions", detail))
}

fn seccomp(spec: &Value, restricted: bool) -> Option<Violation> {
    let valid = |t: &Value| t == "RuntimeDefault" || t == "Localhost";
    let mut bad = BTreeSet::new();
    let pod_type = &spec["securityContext"]["seccompProfile"]["type"];
    let pod = !pod_type.is_null() && !valid(pod_type);
    if pod {
        bad.insert(pod_type.as_str().unwrap_or_default().to_owned());
    }
    let mut names = Vec::new();
    let mut unset = Vec::new();
    for container in containers(spec) {
        let t = &container["securityContext"]["seccompProfile"]["type"];
        if t.is_null() {
            unset.push(name(container));
        } else if !valid(t) {
            bad.insert(t.as_str().unwrap_or_default().to_owned());
            names.push(name(container));
        }
    }
    if pod || !names.is_empty() {
        let detail = format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            subject(pod, &names),
            quote(sorted(bad))
        );
        return Some(violation("seccompProfile", detail));
    }
    if restricted && !valid(pod_type) && !unset.is_empty() {
        let detail = format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            containers_phrase(&unset)
        );
        return Some(violation("seccompProfile", detail));
    }
    None
}

fn sysctls(spec: &Value) -> Option<Violation> {
    let bad: Vec<String> = (spec["securityContext"]["sysctls"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(|s| s["name"].as_str())
    .filter(|n| !SYSCTLS.contains(n))
    .map(str::to_owned)
    .collect();
    (!bad.is_empty()).then(|| violation("forbidden sysctls", bad.join(", ")))
}

fn host_process(spec: &Value) -> Option<Violation> {
    let set = |context: &Value| context["windowsOptions"]["hostProcess"] == true;
    let pod = set(&spec["securityContext"]);
    let names = named(spec, |c| set(&c["securityContext"]));
    (pod || !names.is_empty()).then(|| {
        let detail = format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            subject(pod, &names)
        );
        violation("hostProcess", detail)
    })
}

fn run_as_non_root(spec: &Value) -> Option<Violation> {
    let pod_value = &spec["securityContext"]["runAsNonRoot"];
    let pod_false = *pod_value == false;
    let explicit = named(spec, |c| c["securityContext"]["runAsNonRoot"] == false);
    if pod_false || !explicit.is_empty() {
        let detail = format!(
            "{} must not set securityContext.runAsNonRoot=false",
            subject(pod_false, &explicit)
        );
        return Some(violation("runAsNonRoot != true", detail));
    }
    if *pod_value == true {
        return None;
    }
    let unset = named(spec, |c| c["securityContext"]["runAsNonRoot"].is_null());
    (!unset.is_empty()).then(|| {
        let detail = format!(
            "pod or {} must set securityContext.runAsNonRoot=true",
            containers_phrase(&unset)
        );
        violation("runAsNonRoot != true", detail)
    })
}

fn run_as_user(spec: &Value) -> Option<Violation> {
    let pod = spec["securityContext"]["runAsUser"] == 0;
    let names = named(spec, |c| c["securityContext"]["runAsUser"] == 0);
    (pod || !names.is_empty()).then(|| {
        violation(
            "runAsUser=0",
            format!("{} must not set runAsUser=0", subject(pod, &names)),
        )
    })
}
