//! The aggregator: kube-aggregator's part of the server chain. Every group-version is an
//! `APIService` (`kinds::apiregistration`): those this server serves itself are *local*
//! (registered by `controllers::apiservices`), the others name another server, and
//! requests under `/apis/<group>/<version>` go there ([`proxy`]): authenticated and
//! authorized here, then sent with the end user in the front-proxy headers
//! (`X-Remote-User`, `X-Remote-Group`, `X-Remote-Extra-*`) over TLS with the proxy's
//! client certificate, streamed both ways (watches, upgrades). An APIService that is not
//! `Available` answers kube's 503 without affecting any other group.
//!
//! The documents clients discover the API with are merged ([`discovery`], [`openapi`]):
//! `/apis` (legacy and aggregated) lists the other servers' groups beside the local ones,
//! `/apis/<group>` answers for them, and `/openapi/v2` and `/openapi/v3` include their
//! paths and schemas, as fetched by the availability controller when it checks them.
//!
//! This room sits in the handler chain right after authorization, in front of the local
//! router; with no remote APIService, requests pass through untouched.

mod client;
mod discovery;
mod openapi;
mod proxy;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use serde_json::Value;
use tokio::sync::Notify;

pub use client::ProxyIdentity;
pub(crate) use client::{HttpsClient, Trust};

use crate::kinds::apiregistration::{APIService, APIServiceSpec};

/// Encodes a Swagger 2.0 document as gnostic protobuf (kubectl 1.20 reads `/openapi/v2`
/// only so); given by the binary, as the renderer is.
pub type OpenApiV2Encoder = Arc<dyn Fn(&Value) -> Vec<u8> + Send + Sync>;

/// The aggregator's state, shared by the proxy, the merged documents and the availability
/// controller.
pub struct Aggregator {
    identity: Option<ProxyIdentity>,
    encoder: Option<OpenApiV2Encoder>,
    registered: ArcSwap<Registered>,
    merged_v2: openapi::MergedV2,
    /// Wakes the availability controller: a proxied request found its server gone.
    recheck: Notify,
}

impl Aggregator {
    /// An aggregator presenting `identity` to the servers it proxies to.
    pub fn new(identity: Option<ProxyIdentity>, encoder: Option<OpenApiV2Encoder>) -> Aggregator {
        Aggregator {
            identity,
            encoder,
            registered: ArcSwap::from_pointee(Registered::default()),
            merged_v2: Default::default(),
            recheck: Notify::new(),
        }
    }

    /// The APIServices as last read.
    pub fn registered(&self) -> Arc<Registered> {
        self.registered.load_full()
    }

    /// Takes the APIServices as they now are (the controller's list), keeping the clients
    /// and fetched documents of those whose spec did not change; returns whether a remote
    /// one is new or changed (and so wants checking).
    pub fn set(&self, services: Vec<APIService>) -> bool {
        let before = self.registered();
        let mut changed = false;
        let mut entries: Vec<Arc<Entry>> = services
            .into_iter()
            .map(|service| {
                let name = service.metadata.name.clone().unwrap_or_default();
                match before.by_name.get(&name) {
                    Some(old) if old.service.spec == service.spec => Arc::new(Entry {
                        service,
                        remote: old.remote.clone(),
                        fetched: Mutex::new(old.fetched()),
                    }),
                    _ => {
                        changed |= !service.is_local();
                        Arc::new(Entry::new(service, self.identity.as_ref()))
                    }
                }
            })
            .collect();
        entries.sort_by(|a, b| discovery::order(&a.service, &b.service));
        let by_name = (entries.iter())
            .map(|e| (e.name().to_owned(), Arc::clone(e)))
            .collect();
        self.registered
            .store(Arc::new(Registered { entries, by_name }));
        changed
    }

    /// Asks the availability controller to check the remote APIServices now.
    pub fn recheck(&self) {
        self.recheck.notify_one();
    }

    /// Waits until [`recheck`](Self::recheck) is asked.
    pub async fn rechecks(&self) {
        self.recheck.notified().await;
    }
}

/// The APIServices, in kube's discovery order (group priority, then name; versions by
/// priority, then version).
#[derive(Default)]
pub struct Registered {
    entries: Vec<Arc<Entry>>,
    by_name: HashMap<String, Arc<Entry>>,
}

impl Registered {
    /// All of them, in discovery order.
    pub fn entries(&self) -> &[Arc<Entry>] {
        &self.entries
    }

    /// The remote APIService of `group`/`version`, if there is one.
    pub fn remote(&self, group: &str, version: &str) -> Option<&Arc<Entry>> {
        (self.entries.iter()).find(|e| {
            !e.service.is_local()
                && e.service.spec.group == group
                && e.service.spec.version == version
        })
    }

    /// Whether any APIService names another server.
    pub fn any_remote(&self) -> bool {
        self.entries.iter().any(|e| !e.service.is_local())
    }

    /// Whether `group` has a remote APIService.
    pub fn is_remote_group(&self, group: &str) -> bool {
        (self.entries.iter()).any(|e| !e.service.is_local() && e.service.spec.group == group)
    }
}

/// One APIService, ready to proxy to.
pub struct Entry {
    /// As last read.
    pub service: APIService,
    /// Its server and the clients to it; `Err` when they cannot be made (a `caBundle`
    /// with no certificate).
    remote: Option<Result<Arc<Remote>, String>>,
    fetched: Mutex<Fetched>,
}

/// A remote APIService's server.
pub struct Remote {
    /// `https://host:port` (and a path prefix, for a `url`), without a trailing slash.
    pub base: String,
    /// Checks the server's certificate as the APIService says.
    pub client: HttpsClient,
}

/// What the availability controller fetched from a remote APIService's server.
#[derive(Clone, Default)]
pub struct Fetched {
    /// Its entry of the aggregated discovery (`APIVersionDiscovery` of this version).
    pub discovery: Option<Arc<Value>>,
    /// Its `/openapi/v2` (JSON).
    pub openapi_v2: Option<Arc<Value>>,
    /// Its `/openapi/v3/apis/<group>/<version>` (JSON).
    pub openapi_v3: Option<Arc<Value>>,
}

impl Entry {
    fn new(service: APIService, identity: Option<&ProxyIdentity>) -> Entry {
        let remote = location(&service.spec).map(|base| {
            let spec = &service.spec;
            let trust = match service.insecure() {
                true => Trust::Anything,
                false => Trust::Bundle(spec.ca_bundle.as_ref().map(|b| b.0.as_slice())),
            };
            client::client(trust, identity).map(|client| Arc::new(Remote { base, client }))
        });
        Entry {
            service,
            remote,
            fetched: Mutex::new(Fetched::default()),
        }
    }

    /// Its name (`v1.example.com`).
    pub fn name(&self) -> &str {
        self.service.metadata.name.as_deref().unwrap_or_default()
    }

    /// Whether its `Available` condition is `True`.
    pub fn available(&self) -> bool {
        self.service.available().is_some_and(|c| c.status == "True")
    }

    /// Its server, when remote.
    pub(crate) fn remote(&self) -> Option<&Result<Arc<Remote>, String>> {
        self.remote.as_ref()
    }

    /// What was last fetched from its server.
    pub fn fetched(&self) -> Fetched {
        self.fetched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Keeps what was fetched from its server (parts not fetched keep their last value,
    /// as kube keeps a backend's last good OpenAPI).
    pub fn keep(&self, fetched: Fetched) {
        let mut kept = self.fetched.lock().unwrap_or_else(|e| e.into_inner());
        kept.discovery = fetched.discovery.or(kept.discovery.take());
        kept.openapi_v2 = fetched.openapi_v2.or(kept.openapi_v2.take());
        kept.openapi_v3 = fetched.openapi_v3.or(kept.openapi_v3.take());
    }
}

/// Where a remote APIService's server is: its `url`, or its Service by the cluster's DNS
/// name (`https://<name>.<namespace>.svc:<port>`, the name kube checks its certificate
/// for); `None` for a local one.
fn location(spec: &APIServiceSpec) -> Option<String> {
    if let Some(url) = &spec.url {
        return Some(url.trim_end_matches('/').to_owned());
    }
    let service = spec.service.as_ref()?;
    Some(format!(
        "https://{}.{}.svc:{}",
        service.name,
        service.namespace,
        service.port.unwrap_or(443)
    ))
}

pub(crate) use discovery::version_entry;
pub(crate) use proxy::layer;

impl Aggregator {
    /// Fetches `path` from `remote` as the aggregator itself (`system:kube-aggregator` in
    /// `system:masters`, as kube's availability checks identify), with `accept`, within
    /// `timeout`: the status and the body.
    pub(crate) async fn fetch(
        remote: &Remote,
        path: &str,
        accept: &str,
        timeout: std::time::Duration,
    ) -> Result<(u16, bytes::Bytes), String> {
        use http_body_util::BodyExt;
        let url = format!("{}{path}", remote.base);
        let request = axum::http::Request::get(&url)
            .header("Accept", accept)
            .header("X-Remote-User", "system:kube-aggregator")
            .header("X-Remote-Group", "system:masters")
            .body(axum::body::Body::empty())
            .map_err(|e| e.to_string())?;
        let call = async {
            let response = remote
                .client
                .request(request)
                .await
                .map_err(|e| format!("Get {url:?}: {}", proxy::error_text(&e)))?;
            let status = response.status().as_u16();
            let body = (response.into_body().collect().await)
                .map_err(|e| format!("Get {url:?}: {e}"))?
                .to_bytes();
            Ok((status, body))
        };
        match tokio::time::timeout(timeout, call).await {
            Ok(result) => result,
            Err(_) => Err(format!(
                "Get {url:?}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
            )),
        }
    }
}
