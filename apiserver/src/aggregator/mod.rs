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
//! router. The APIServices are read as one snapshot, swapped whole when they change, with
//! what the proxy looks up made once then; with no remote APIService a request costs one
//! atomic load and a flag.

mod client;
mod discovery;
mod openapi;
mod proxy;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use serde_json::Value;
use tokio::sync::Notify;

pub use client::{Caller, FetchError, ProxyIdentity, Remote};
pub(crate) use discovery::version_entry;
pub(crate) use proxy::layer;

use kapi_kinds::apiregistration::{APIService, APIServiceSpec};

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
    /// APIServices a request found unreachable or unavailable, to check again soon.
    rechecks: Mutex<HashSet<String>>,
    /// Wakes the availability controller.
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
            rechecks: Mutex::new(HashSet::new()),
            recheck: Notify::new(),
        }
    }

    /// The APIServices as last read.
    pub fn registered(&self) -> Arc<Registered> {
        self.registered.load_full()
    }

    /// Takes the APIServices as they now are (the controller's list), keeping the clients
    /// and fetched documents of those whose spec did not change; returns the names of the
    /// remote ones that are new or changed (and so want checking).
    pub fn set(&self, services: Vec<APIService>) -> Vec<String> {
        let before = self.registered();
        let mut changed = Vec::new();
        let mut entries: Vec<Arc<Entry>> = services
            .into_iter()
            .map(|service| {
                let name = service.metadata.name.clone().unwrap_or_default();
                match before.by_name.get(&name) {
                    Some(old) if old.service.spec == service.spec => Arc::new(Entry {
                        service,
                        remote: old.remote.clone(),
                        fetched: Arc::clone(&old.fetched),
                    }),
                    _ => {
                        if !service.is_local() {
                            changed.push(name);
                        }
                        Arc::new(Entry::new(service, self.identity.as_ref()))
                    }
                }
            })
            .collect();
        entries.sort_by(|a, b| discovery::order(&a.service, &b.service));
        self.registered.store(Arc::new(Registered::new(entries)));
        changed
    }

    /// Asks the availability controller to check the remote APIService `name` soon (it
    /// decides how soon: a server that keeps failing is not asked at every request).
    pub fn recheck(&self, name: &str) {
        (self.rechecks.lock().unwrap_or_else(|e| e.into_inner())).insert(name.to_owned());
        self.recheck.notify_one();
    }

    /// Waits until a recheck is asked, and takes the names asked for.
    pub async fn rechecks(&self) -> HashSet<String> {
        self.recheck.notified().await;
        std::mem::take(&mut *self.rechecks.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Whether any APIService names another server: the filter's fast path.
    fn any_remote(&self) -> bool {
        self.registered.load().any_remote
    }
}

/// The APIServices, in kube's discovery order (group priority, then name; versions by
/// priority, then version), with what the proxy looks up on every request made once.
#[derive(Default)]
pub struct Registered {
    entries: Vec<Arc<Entry>>,
    by_name: HashMap<String, Arc<Entry>>,
    /// The remote ones, by group and version.
    remote: HashMap<(String, String), Arc<Entry>>,
    /// Their groups.
    remote_groups: HashSet<String>,
    any_remote: bool,
}

impl Registered {
    fn new(entries: Vec<Arc<Entry>>) -> Registered {
        let by_name = (entries.iter())
            .map(|e| (e.name().to_owned(), Arc::clone(e)))
            .collect();
        let remote: HashMap<(String, String), Arc<Entry>> = (entries.iter())
            .filter(|e| !e.service.is_local())
            .map(|e| {
                let spec = &e.service.spec;
                ((spec.group.clone(), spec.version.clone()), Arc::clone(e))
            })
            .collect();
        let remote_groups = remote.keys().map(|(group, _)| group.clone()).collect();
        Registered {
            any_remote: !remote.is_empty(),
            entries,
            by_name,
            remote,
            remote_groups,
        }
    }

    /// All of them, in discovery order.
    pub fn entries(&self) -> &[Arc<Entry>] {
        &self.entries
    }

    /// The one named `name`.
    pub fn named(&self, name: &str) -> Option<&Arc<Entry>> {
        self.by_name.get(name)
    }

    /// The remote APIService of `group`/`version`, if there is one.
    pub fn remote(&self, group: &str, version: &str) -> Option<&Arc<Entry>> {
        self.remote.get(&(group.to_owned(), version.to_owned()))
    }

    /// Whether `group` has a remote APIService.
    pub fn is_remote_group(&self, group: &str) -> bool {
        self.remote_groups.contains(group)
    }
}

/// One APIService, ready to proxy to.
pub struct Entry {
    /// As last read.
    pub service: APIService,
    /// Its server and the client to it; `Err` when the client cannot be made (a
    /// `caBundle` with no certificate).
    remote: Option<Result<Arc<Remote>, String>>,
    /// What was fetched from its server, shared with the entries that replace this one
    /// while its spec stays the same.
    fetched: Arc<Mutex<Fetched>>,
}

/// A document fetched from a remote APIService's server, with a hash of its bytes (which
/// the merged documents are keyed and tagged by).
pub struct Document {
    /// The document.
    pub value: Value,
    /// FNV-1a of the bytes it was read from.
    pub hash: u64,
}

impl Document {
    /// `bytes` as a JSON document.
    pub fn parse(bytes: &[u8]) -> Option<Document> {
        Some(Document {
            value: serde_json::from_slice(bytes).ok()?,
            hash: crate::http::fnv1a(bytes),
        })
    }
}

/// What the availability controller fetched from a remote APIService's server.
#[derive(Clone, Default)]
pub struct Fetched {
    /// Its entry of the aggregated discovery (`APIVersionDiscovery` of this version).
    pub discovery: Option<Arc<Value>>,
    /// Its `/openapi/v2` (JSON).
    pub openapi_v2: Option<Arc<Document>>,
    /// Its `/openapi/v3/apis/<group>/<version>` (JSON).
    pub openapi_v3: Option<Arc<Document>>,
}

impl Entry {
    fn new(service: APIService, identity: Option<&ProxyIdentity>) -> Entry {
        let remote = location(&service.spec).map(|base| {
            let trust = match service.insecure() {
                true => client::Trust::Anything,
                false => {
                    let bundle = &service.spec.ca_bundle.0;
                    client::Trust::Bundle((!bundle.is_empty()).then_some(bundle.as_slice()))
                }
            };
            Remote::new(base, trust, identity).map(Arc::new)
        });
        Entry {
            service,
            remote,
            fetched: Arc::default(),
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
    pub fn remote(&self) -> Option<&Result<Arc<Remote>, String>> {
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
