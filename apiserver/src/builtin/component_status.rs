//! ComponentStatuses (`GET /api/v1/componentstatuses`, `kubectl get cs`): kube's health
//! probes of the control plane, made on every read and never stored (kube's
//! `pkg/registry/core/componentstatus`). As kube-apiserver does, kapi probes a controller
//! manager and a scheduler at their default ports on 127.0.0.1 (`https://127.0.0.1:10257`
//! and `:10259`, `/healthz`, any certificate accepted) and its storage: `etcd-0` when the
//! objects are in etcd, `storage-0` for the embedded store. A component nobody runs
//! answers as it does on kube: unhealthy, the refused connection in its message.

use std::future::Future;
use std::io::Read as _;
use std::net::{SocketAddr, TcpStream};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use kapi_core::error::{ApiError, GroupResource};
use kapi_registry::computed::Computed;
use kapi_storage::Storage;

/// kube's `probeTimeOut`: how long one probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// How much of a component's answer becomes its message (kube's probe reads 10 KiB).
const MAX_BODY: u64 = 10 * 1024;

/// The components a read probes.
pub(super) struct ComponentStatuses {
    /// The storage the objects are in.
    pub(super) storage: Arc<dyn Storage>,
    /// Its component's name: `etcd-0` or `storage-0`.
    pub(super) storage_name: &'static str,
}

/// What a probe found (kube's `probe.Result`, its message and error).
struct Probed {
    /// `True` (success), `False` (failure) or `Unknown` (neither: a redirect).
    status: &'static str,
    message: String,
    error: String,
}

impl Computed for ComponentStatuses {
    fn objects(&self) -> Pin<Box<dyn Future<Output = Vec<Value>> + Send + '_>> {
        Box::pin(async move {
            let controller_manager = tokio::task::spawn_blocking(|| probe_http(10257));
            let scheduler = tokio::task::spawn_blocking(|| probe_http(10259));
            let storage = match self.storage.health().await {
                Ok(()) => Probed {
                    status: "True",
                    message: "ok".into(),
                    error: String::new(),
                },
                Err(e) => Probed {
                    status: "False",
                    message: String::new(),
                    error: e.to_string(),
                },
            };
            let joined = |result: Result<Probed, tokio::task::JoinError>| {
                result.unwrap_or_else(|e| Probed {
                    status: "Unknown",
                    message: String::new(),
                    error: e.to_string(),
                })
            };
            vec![
                object("controller-manager", joined(controller_manager.await)),
                object("scheduler", joined(scheduler.await)),
                object(self.storage_name, storage),
            ]
        })
    }

    /// kube's storage answers a name it does not probe with a plain error, which its
    /// handler makes a 500 of unknown reason.
    fn not_found(&self, _resource: &GroupResource, name: &str) -> ApiError {
        ApiError::Unclassified(format!("Component not found: {name}"))
    }
}

/// A ComponentStatus of one `Healthy` condition.
fn object(name: &str, probed: Probed) -> Value {
    let mut condition = json!({"type": "Healthy", "status": probed.status});
    if !probed.message.is_empty() {
        condition["message"] = Value::String(probed.message);
    }
    if !probed.error.is_empty() {
        condition["error"] = Value::String(probed.error);
    }
    json!({"metadata": {"name": name}, "conditions": [condition]})
}

/// kube's HTTP probe of `https://127.0.0.1:<port>/healthz`: a 2xx answer is a success with
/// its body as the message, a 3xx neither, anything else a failure; an answer that never
/// comes is a failure whose message is Go's error (`Get "...": dial tcp ...: connect:
/// connection refused`), as kube's prober reports it.
fn probe_http(port: u16) -> Probed {
    let url = format!("https://127.0.0.1:{port}/healthz");
    let failed = |message: String| Probed {
        status: "False",
        message,
        error: String::new(),
    };
    // The connection first, so that the common failure reads as Go's.
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    if let Err(e) = TcpStream::connect_timeout(&address, PROBE_TIMEOUT) {
        let reason = match e.kind() {
            std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_owned(),
            std::io::ErrorKind::TimedOut => "i/o timeout".to_owned(),
            _ => e.to_string(),
        };
        return failed(format!("Get {url:?}: dial tcp {address}: {reason}"));
    }
    let tls = ureq::tls::TlsConfig::builder()
        .disable_verification(true)
        .build();
    let config = ureq::Agent::config_builder()
        .tls_config(tls)
        .timeout_global(Some(PROBE_TIMEOUT))
        .http_status_as_error(false)
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let mut response = match agent.get(&url).call() {
        Ok(response) => response,
        Err(e) => return failed(format!("Get {url:?}: {e}")),
    };
    let code = response.status().as_u16();
    let mut body = String::new();
    let reader = response.body_mut().as_reader();
    let _ = reader.take(MAX_BODY).read_to_string(&mut body);
    match code {
        200..=299 => Probed {
            status: "True",
            message: body,
            error: String::new(),
        },
        300..=399 => Probed {
            status: "Unknown",
            message: body,
            error: String::new(),
        },
        _ => failed(format!("HTTP probe failed with statuscode: {code}")),
    }
}
