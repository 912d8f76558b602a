//! Server-side apply through real clients against the real `kapi-server`: kube-rs
//! (`Api::patch` and `Api::patch_status` with `Patch::Apply` and `PatchParams::apply`,
//! with and without `force()`) and the official Python client
//! (`DynamicClient.server_side_apply` with `field_manager` and `force_conflicts`, on
//! `webapps` and `webapps.status`).
//!
//! Each client creates a WebApp by applying it, meets kube's 409 when a second manager
//! applies a field the first one owns, takes it over with force, and does the same on the
//! status subresource. The managedFields and the error bodies are compared with what
//! kube-apiserver writes (sigs.k8s.io/structured-merge-diff's field sets, k8s.io/apiserver's
//! `NewConflictError`): the whole entries but their `time`, the whole Status.

use crate::support;

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use kube::api::{Api, Patch, PatchParams};
use kube::core::{DynamicObject, GroupVersionKind, Status};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use support::Server;
use support::python::Script;
use support::server::Log;

const API_VERSION: &str = "apps.example.dev/v1";

/// How long one request of the kube-rs client may take.
const CALL: Duration = Duration::from_secs(30);

/// The WebApp's fields as kube-rs-ctrl and py-ctrl apply them at first: spec.replicas,
/// the image and one port (a list-map item, keyed by containerPort).
fn first_fields() -> Value {
    json!({"f:spec": {
        "f:replicas": {},
        "f:container": {
            "f:image": {},
            "f:ports": {"k:{\"containerPort\":80}": {".": {}, "f:containerPort": {}}},
        },
    }})
}

/// [`first_fields`] once another manager has taken spec.replicas over.
fn first_fields_without_replicas() -> Value {
    let mut fields = first_fields();
    fields["f:spec"]
        .as_object_mut()
        .unwrap()
        .remove("f:replicas");
    fields
}

/// The Apply entry of `manager` as kube writes it, but its `time`.
fn apply_entry(manager: &str, subresource: Option<&str>, fields: Value) -> Value {
    let mut entry = json!({
        "manager": manager,
        "operation": "Apply",
        "apiVersion": API_VERSION,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    });
    if let Some(subresource) = subresource {
        entry["subresource"] = json!(subresource);
    }
    entry
}

/// `object`'s managedFields by manager, each entry without its `time`, which must be an
/// RFC 3339 time in UTC to the second (`2006-01-02T15:04:05Z`, Go's `metav1.Time`).
/// Panics when a manager has two entries (these tests only apply).
#[track_caller]
fn managed_fields(object: &Value) -> BTreeMap<String, Value> {
    let entries = (object["metadata"]["managedFields"].as_array())
        .unwrap_or_else(|| panic!("no metadata.managedFields: {object:#}"));
    let mut by_manager = BTreeMap::new();
    for entry in entries {
        let mut entry = entry.clone();
        let time = (entry.as_object_mut().unwrap().remove("time"))
            .unwrap_or_else(|| panic!("an entry without time: {object:#}"));
        let time = time.as_str().unwrap_or_default().as_bytes();
        let rfc3339_seconds = time.len() == 20
            && (time.iter().enumerate()).all(|(i, &c)| match i {
                4 | 7 => c == b'-',
                10 => c == b'T',
                13 | 16 => c == b':',
                19 => c == b'Z',
                _ => c.is_ascii_digit(),
            });
        assert!(rfc3339_seconds, "time of an entry: {object:#}");
        let manager = entry["manager"].as_str().unwrap_or_default().to_owned();
        let previous = by_manager.insert(manager.clone(), entry);
        assert!(previous.is_none(), "two entries of {manager}: {object:#}");
    }
    by_manager
}

/// The expected managedFields, from [`apply_entry`]s.
fn expected(entries: &[Value]) -> BTreeMap<String, Value> {
    (entries.iter())
        .map(|e| (e["manager"].as_str().unwrap().to_owned(), e.clone()))
        .collect()
}

/// The causes of kube's 409 for one conflict with `owner` (as kube prints a manager) on
/// `field`.
fn conflict_causes(owner: &str, field: &str) -> Value {
    json!([{
        "reason": "FieldManagerConflict",
        "message": format!("conflict with {owner}"),
        "field": field,
    }])
}

/// kube's message for one conflict.
fn conflict_message(owner: &str, field: &str) -> String {
    format!("Apply failed with 1 conflict: conflict with {owner}: {field}")
}

/// The whole Status body kube-apiserver answers an apply with one conflict.
fn conflict_status(owner: &str, field: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": conflict_message(owner, field),
        "reason": "Conflict",
        "details": {"causes": conflict_causes(owner, field)},
        "code": 409,
    })
}

/// The v1 WebApp `web` in `default`, through a kube-rs client of `server` (plain HTTP),
/// every call bounded by [`CALL`].
struct KubeRs {
    api: Api<DynamicObject>,
    log: Log,
}

impl KubeRs {
    fn new(server: &Server) -> KubeRs {
        let config = kube::Config::new(server.url().parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let gvk = GroupVersionKind::gvk("apps.example.dev", "v1", "WebApp");
        let resource = ApiResource::from_gvk_with_plural(&gvk, "webapps");
        KubeRs {
            api: Api::namespaced_with(client, "default", &resource),
            log: server.log(),
        }
    }

    /// Awaits `call`, or panics with the server's output once [`CALL`] has passed.
    async fn within<T>(&self, what: &str, call: impl Future<Output = T>) -> T {
        match tokio::time::timeout(CALL, call).await {
            Ok(result) => result,
            Err(_) => panic!(
                "{what}: no answer within {CALL:?}\n--- server output ---\n{}",
                self.log.tail(60)
            ),
        }
    }

    /// The object as JSON, or the Status of an API error; panics on any other error.
    fn outcome(
        &self,
        what: &str,
        result: kube::Result<DynamicObject>,
    ) -> Result<Value, Box<Status>> {
        match result {
            Ok(object) => Ok(serde_json::to_value(object).unwrap()),
            Err(kube::Error::Api(status)) => Err(status),
            Err(error) => panic!(
                "{what}: {error:?}\n--- server output ---\n{}",
                self.log.tail(60)
            ),
        }
    }

    /// `PATCH .../webapps/web?fieldManager=MANAGER[&force=true]`, apply-patch+yaml.
    async fn apply(
        &self,
        manager: &str,
        force: bool,
        config: &Value,
    ) -> Result<Value, Box<Status>> {
        let params = params(manager, force);
        let what = format!("apply by {manager} (force: {force})");
        let result =
            (self.within(&what, self.api.patch("web", &params, &Patch::Apply(config)))).await;
        self.outcome(&what, result)
    }

    /// The same on `.../webapps/web/status`.
    async fn apply_status(
        &self,
        manager: &str,
        force: bool,
        config: &Value,
    ) -> Result<Value, Box<Status>> {
        let params = params(manager, force);
        let what = format!("status apply by {manager} (force: {force})");
        let patch = Patch::Apply(config);
        let call = self.api.patch_status("web", &params, &patch);
        let result = self.within(&what, call).await;
        self.outcome(&what, result)
    }

    async fn get(&self) -> Option<Value> {
        let result = self.within("get web", self.api.get_opt("web")).await;
        let object = result.unwrap_or_else(|e| panic!("get web: {e:?}"));
        object.map(|o| serde_json::to_value(o).unwrap())
    }
}

fn params(manager: &str, force: bool) -> PatchParams {
    let params = PatchParams::apply(manager);
    if force { params.force() } else { params }
}

/// Checks that `result` is kube's 409 for one conflict with `owner` on `field`.
#[track_caller]
fn assert_conflict(result: Result<Value, Box<Status>>, owner: &str, field: &str) {
    let status = match result {
        Ok(object) => panic!("expected a 409 conflict on {field}, the apply succeeded: {object:#}"),
        Err(status) => status,
    };
    assert_eq!(status.code, 409, "{status:?}");
    assert_eq!(status.reason, "Conflict", "{status:?}");
    assert_eq!(status.message, conflict_message(owner, field), "{status:?}");
    assert!(status.is_failure(), "{status:?}");
    let details = serde_json::to_value(status.details.as_ref()).unwrap();
    assert_eq!(
        details,
        json!({"causes": conflict_causes(owner, field)}),
        "{status:?}"
    );
}

/// kube-rs: `Api::patch` with `Patch::Apply` creates the WebApp (an Apply entry of its
/// manager); another manager's apply of spec.replicas is a 409 naming the owner, and
/// changes nothing; with `force()` it takes the field over. The same through
/// `Api::patch_status`, whose entries say `subresource: status` and which never touch the
/// spec or the generation.
#[test]
fn kube_rs_applies_with_and_without_force_on_a_webapp_and_its_status() {
    let server = Server::start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let kube_rs = KubeRs::new(&server);
        assert_eq!(kube_rs.get().await, None, "no WebApp web before the apply");

        // Create by applying.
        let first = json!({
            "apiVersion": API_VERSION,
            "kind": "WebApp",
            "metadata": {"name": "web"},
            "spec": {"replicas": 2, "container": {"image": "nginx:1.27", "ports": [{"containerPort": 80}]}},
        });
        let created = (kube_rs.apply("kube-rs-ctrl", false, &first).await).unwrap();
        assert_eq!(
            created["spec"],
            json!({
                "replicas": 2,
                "paused": false,
                "container": {"image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
            }),
            "{created:#}"
        );
        assert_eq!(created["metadata"]["generation"], 1, "{created:#}");
        assert_eq!(created["metadata"]["namespace"], "default", "{created:#}");
        assert_eq!(
            managed_fields(&created),
            expected(&[apply_entry("kube-rs-ctrl", None, first_fields())]),
            "{created:#}"
        );
        assert_eq!(kube_rs.get().await.as_ref(), Some(&created));

        // Another manager, no force: kube's 409, and nothing changes.
        let replicas = json!({
            "apiVersion": API_VERSION,
            "kind": "WebApp",
            "metadata": {"name": "web"},
            "spec": {"replicas": 5},
        });
        let conflict = kube_rs.apply("other", false, &replicas).await;
        assert_conflict(conflict, "\"kube-rs-ctrl\"", ".spec.replicas");
        assert_eq!(
            kube_rs.get().await.as_ref(),
            Some(&created),
            "unchanged by the conflicting apply"
        );

        // With force, it takes spec.replicas over.
        let forced = (kube_rs.apply("other", true, &replicas).await).unwrap();
        assert_eq!(forced["spec"]["replicas"], 5, "{forced:#}");
        assert_eq!(
            forced["spec"]["container"]["image"], "nginx:1.27",
            "{forced:#}"
        );
        assert_eq!(forced["metadata"]["generation"], 2, "{forced:#}");
        let spec_owners = [
            apply_entry("kube-rs-ctrl", None, first_fields_without_replicas()),
            apply_entry("other", None, json!({"f:spec": {"f:replicas": {}}})),
        ];
        assert_eq!(
            managed_fields(&forced),
            expected(&spec_owners),
            "{forced:#}"
        );
        assert_eq!(kube_rs.get().await.as_ref(), Some(&forced));

        // The status subresource, the same way (no metadata.name: the URL names it).
        let status = |ready: i64| {
            json!({
                "apiVersion": API_VERSION,
                "kind": "WebApp",
                "status": {"readyReplicas": ready},
            })
        };
        let with_status = (kube_rs.apply_status("status-writer", false, &status(2)).await)
            .unwrap();
        assert_eq!(
            with_status["status"],
            json!({"readyReplicas": 2}),
            "{with_status:#}"
        );
        assert_eq!(with_status["spec"], forced["spec"], "{with_status:#}");
        assert_eq!(with_status["metadata"]["generation"], 2, "{with_status:#}");
        let status_writer = apply_entry(
            "status-writer",
            Some("status"),
            json!({"f:status": {"f:readyReplicas": {}}}),
        );
        let mut owners = spec_owners.to_vec();
        owners.push(status_writer);
        assert_eq!(
            managed_fields(&with_status),
            expected(&owners),
            "{with_status:#}"
        );

        let conflict = (kube_rs.apply_status("status-other", false, &status(3))).await;
        assert_conflict(
            conflict,
            "\"status-writer\" with subresource \"status\"",
            ".status.readyReplicas",
        );
        assert_eq!(
            kube_rs.get().await.as_ref(),
            Some(&with_status),
            "unchanged by the conflicting status apply"
        );

        // With force: status-other owns readyReplicas, and status-writer, left with no
        // field, has no entry any more.
        let status_forced = (kube_rs.apply_status("status-other", true, &status(3)).await)
            .unwrap();
        assert_eq!(
            status_forced["status"],
            json!({"readyReplicas": 3}),
            "{status_forced:#}"
        );
        assert_eq!(status_forced["spec"], forced["spec"], "{status_forced:#}");
        assert_eq!(
            status_forced["metadata"]["generation"], 2,
            "{status_forced:#}"
        );
        let mut owners = spec_owners.to_vec();
        owners.push(apply_entry(
            "status-other",
            Some("status"),
            json!({"f:status": {"f:readyReplicas": {}}}),
        ));
        assert_eq!(
            managed_fields(&status_forced),
            expected(&owners),
            "{status_forced:#}"
        );
        assert_eq!(kube_rs.get().await.as_ref(), Some(&status_forced));
    });
}

/// The line whose `step` is `step`.
#[track_caller]
fn step<'a>(lines: &'a [Value], step: &str) -> &'a Value {
    (lines.iter().find(|line| line["step"] == step))
        .unwrap_or_else(|| panic!("no line with step = {step:?} in {lines:#?}"))
}

/// The official Python client: `server_side_apply` creates the WebApp; another manager
/// with `force_conflicts=False` gets kube's 409 (an `ApiException` with its Status body);
/// with `force_conflicts=True` it takes the field over. The same on `webapps.status`.
#[test]
fn the_python_client_applies_with_and_without_force_on_a_webapp_and_its_status() {
    let server = Server::start();
    let lines = Script::run("apply.py", &server);

    let created = &step(&lines, "create")["object"];
    assert_eq!(
        created["spec"],
        json!({
            "replicas": 2,
            "paused": false,
            "container": {"image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
        }),
        "{created:#}"
    );
    assert_eq!(
        managed_fields(created),
        expected(&[apply_entry("py-ctrl", None, first_fields())]),
        "{created:#}"
    );

    assert_eq!(
        step(&lines, "conflict")["status"],
        conflict_status("\"py-ctrl\"", ".spec.replicas")
    );

    let forced = &step(&lines, "force")["object"];
    assert_eq!(forced["spec"]["replicas"], 5, "{forced:#}");
    let spec_owners = [
        apply_entry("py-ctrl", None, first_fields_without_replicas()),
        apply_entry("py-other", None, json!({"f:spec": {"f:replicas": {}}})),
    ];
    assert_eq!(managed_fields(forced), expected(&spec_owners), "{forced:#}");

    let with_status = &step(&lines, "status")["object"];
    assert_eq!(
        with_status["status"],
        json!({"readyReplicas": 2}),
        "{with_status:#}"
    );
    let mut owners = spec_owners.to_vec();
    owners.push(apply_entry(
        "py-status",
        Some("status"),
        json!({"f:status": {"f:readyReplicas": {}}}),
    ));
    assert_eq!(
        managed_fields(with_status),
        expected(&owners),
        "{with_status:#}"
    );

    assert_eq!(
        step(&lines, "status-conflict")["status"],
        conflict_status(
            "\"py-status\" with subresource \"status\"",
            ".status.readyReplicas"
        )
    );

    let status_forced = &step(&lines, "status-force")["object"];
    assert_eq!(
        status_forced["status"],
        json!({"readyReplicas": 3}),
        "{status_forced:#}"
    );
    assert_eq!(status_forced["spec"], forced["spec"], "{status_forced:#}");
    let mut owners = spec_owners.to_vec();
    owners.push(apply_entry(
        "py-status-other",
        Some("status"),
        json!({"f:status": {"f:readyReplicas": {}}}),
    ));
    assert_eq!(
        managed_fields(status_forced),
        expected(&owners),
        "{status_forced:#}"
    );
    assert_eq!(step(&lines, "final")["object"], *status_forced);
}
