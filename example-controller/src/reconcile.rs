//! The reconciler: each WebApp's status, applied with server-side apply on `/status` by the
//! field manager `webapp-controller`. The rollout is simulated: `replicas` is
//! `spec.replicas` at once, `readyReplicas` too unless the WebApp is paused (then 0), and
//! the `Ready` condition says which (`True`/`Available` or `False`/`Paused`), for the
//! generation it was computed from (`observedGeneration`). A change is also recorded as an
//! Event on the WebApp.

use std::sync::Arc;
use std::time::Duration;

use api_types::apps::v1::{WebApp, WebAppStatus};
use futures_util::StreamExt;
use kapi::meta::{Condition, Time};
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::watcher;
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

/// The field manager of the status this controller applies.
pub(crate) const FIELD_MANAGER: &str = "webapp-controller";

/// What every reconciliation shares.
struct Context {
    client: kube::Client,
    recorder: Recorder,
}

/// Why a reconciliation failed (retried after a while).
#[derive(Debug)]
struct Failed(kube::Error);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "applying a WebApp's status: {}", self.0)
    }
}

impl std::error::Error for Failed {}

/// Reconciles every WebApp until the process ends (or the future is dropped).
pub(crate) async fn run(client: kube::Client, identity: &str) {
    let webapps = Api::<WebApp>::all(client.clone());
    let reporter = Reporter {
        controller: FIELD_MANAGER.into(),
        instance: Some(identity.to_owned()),
    };
    let context = Arc::new(Context {
        recorder: Recorder::new(client.clone(), reporter),
        client,
    });
    Controller::new(webapps, watcher::Config::default())
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::warn!(%error, "reconciling");
            }
        })
        .await;
}

async fn reconcile(webapp: Arc<WebApp>, context: Arc<Context>) -> Result<Action, Failed> {
    let desired = desired_status(&webapp);
    let current = webapp.status.clone().unwrap_or_default();
    if same_status(&current, &desired) {
        return Ok(Action::await_change());
    }
    let namespace = webapp.namespace().unwrap_or_default();
    let name = webapp.name_any();
    let webapps = Api::<WebApp>::namespaced(context.client.clone(), &namespace);
    // Only what this manager owns: the status, not a copy of the spec.
    let applied = json!({
        "apiVersion": WebApp::api_version(&()),
        "kind": WebApp::kind(&()),
        "metadata": {"name": name, "namespace": namespace},
        "status": desired,
    });
    let params = PatchParams::apply(FIELD_MANAGER).force();
    webapps
        .patch_status(&name, &params, &Patch::Apply(&applied))
        .await
        .map_err(Failed)?;
    let ready = &desired.conditions[0];
    tracing::info!(%namespace, %name, reason = %ready.reason, "applied the status");
    let event = Event {
        type_: EventType::Normal,
        reason: ready.reason.clone(),
        note: Some(ready.message.clone()),
        action: "ApplyStatus".into(),
        secondary: None,
    };
    if let Err(error) = (context.recorder)
        .publish(&event, &webapp.object_ref(&()))
        .await
    {
        tracing::warn!(%error, "recording an event");
    }
    Ok(Action::await_change())
}

fn error_policy(_: Arc<WebApp>, error: &Failed, _: Arc<Context>) -> Action {
    tracing::warn!(%error, "will retry");
    Action::requeue(Duration::from_secs(2))
}

/// The status the WebApp should have, its `Ready` condition's transition time kept when
/// its status stays.
pub(crate) fn desired_status(webapp: &WebApp) -> WebAppStatus {
    let generation = webapp.metadata.generation;
    let replicas = webapp.spec.replicas;
    let (status, reason, message, ready) = if webapp.spec.paused {
        ("False", "Paused", "the WebApp is paused".to_owned(), 0)
    } else {
        let message = format!("{replicas} of {replicas} replicas are ready");
        ("True", "Available", message, replicas)
    };
    let previous =
        (webapp.status.as_ref()).and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"));
    let last_transition_time = match previous {
        Some(previous) if previous.status == status => previous.last_transition_time.clone(),
        _ => Some(kapi::meta::now_time()),
    };
    WebAppStatus {
        replicas: Some(replicas),
        ready_replicas: Some(ready),
        observed_generation: generation,
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: status.into(),
            reason: reason.into(),
            message,
            last_transition_time,
            observed_generation: generation,
        }],
    }
}

/// Whether the status already says what `desired` says (times aside).
fn same_status(current: &WebAppStatus, desired: &WebAppStatus) -> bool {
    let ready = |status: &WebAppStatus| -> Option<Condition> {
        let condition = status.conditions.iter().find(|c| c.type_ == "Ready")?;
        Some(Condition {
            last_transition_time: None::<Time>,
            ..condition.clone()
        })
    };
    current.replicas == desired.replicas
        && current.ready_replicas == desired.ready_replicas
        && current.observed_generation == desired.observed_generation
        && ready(current) == ready(desired)
}
