//! The API server as a program (kube's `cmd/kube-apiserver/app`): its flags under
//! kube-apiserver's names, grouped as kube's option structs ([`Options`], which a user's
//! own `clap` flags can flatten; [`options`]), and
//! the whole start-up and shutdown sequence for an [`Api`] that `cargo xtask generate`
//! made: open the store, build the registry from the generated scheme, start the built-in
//! controllers, serve the endpoints over HTTP (or HTTPS), and shut down gracefully on
//! SIGTERM / SIGINT. A server's `main` is [`main`] with its generated crate's items.
//!
//! Once it listens it prints, first and flushed, `listening on http://ADDR` (tests read the
//! port from it), then a ready-to-paste kubectl command line.

mod aggregation;
mod client_trust;
pub mod options;
mod serve;

pub use options::Options;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::controllers::{ControllerOptions, Controllers};
use crate::endpoints::{self, Config, Lifecycle, ServerVersion};
use crate::health::Health;
use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches};
use kapi_core::api::{Documents, RouteBinding};
use kapi_core::scheme::Scheme;
use kapi_registry::{Registry, Schemas};
use kapi_storage::compactor;
use serve::Connections;

/// What `cargo xtask generate` made of an API (its generated crate's items), and how the
/// program presents itself.
pub struct Api {
    /// The program's name, in messages and `--help` (`kapi-server`).
    pub name: &'static str,
    /// The generated `scheme()`.
    pub scheme: fn() -> Scheme,
    /// The generated `ROUTES`.
    pub routes: &'static [RouteBinding],
    /// The generated `documents::DOCUMENTS`.
    pub documents: &'static Documents,
    /// What `/version` says about the build.
    pub version: ServerVersion,
}

/// Runs the API server for `api`, with the flags of the command line: a server's whole
/// `main`.
pub fn main(api: Api) -> ExitCode {
    let command = Options::command().name(api.name);
    let flags = match Options::from_arg_matches(&command.get_matches()) {
        Ok(flags) => flags,
        Err(e) => e.exit(),
    };
    main_with(flags, api)
}

/// Runs the API server for `api` with `flags` (a user's own flags may flatten [`Options`]
/// and hand them here).
pub fn main_with(flags: Options, api: Api) -> ExitCode {
    let name = api.name;
    flags.logging.init(name);
    let mut errors = flags.validate();
    if errors.is_empty() {
        // `--runtime-config` against the API: no I/O, a usage error as the others.
        errors = match flags.features.gates() {
            Ok(gates) => (flags.api_enablement).check(&(api.scheme)(), api.routes, &gates),
            Err(error) => vec![error],
        };
    }
    if !errors.is_empty() {
        for error in errors {
            eprintln!("{name}: {error}");
        }
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{name}: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(flags, api)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The server, from start-up to a clean stop.
pub async fn run(flags: Options, api: Api) -> Result<()> {
    let started = Instant::now();
    let scheme = Arc::new((api.scheme)());
    // kube's feature gates (`--feature-gates`): they hold resources back, below, and switch
    // admission plugins on.
    let gates = (flags.features.gates()).map_err(anyhow::Error::msg)?;
    for warning in flags.features.warnings() {
        tracing::warn!("{warning}");
    }
    // `--runtime-config`: the group-versions switched off, and the resources the gates hold
    // back, leave the scheme and the routes.
    let served = flags.api_enablement.apply(&scheme, api.routes, &gates)?;
    let trust = client_trust::ClientTrust::resolve(&flags.authentication)?;
    let tls = (flags.serving).tls(trust.handshake_cas()?.as_ref())?;
    // Every served version's schema, for defaulting and validation: a missing one is a
    // start-up error, never a failed request. Compiled on a thread of its own while the
    // storage opens: the two are most of the start-up.
    let compiling = {
        let (scheme, documents) = (Arc::clone(&scheme), api.documents.schemas_v3);
        std::thread::spawn(move || Schemas::compiled_in(&scheme, documents))
    };
    let storage = flags.storage.open().await?;
    let closed = Arc::downgrade(&storage);
    let prefix = flags.storage.etcd_prefix.clone();
    let registry = Registry::new(scheme, Arc::clone(&storage), prefix)
        .await
        .context("starting the registry")?;
    let schemas = (compiling.join())
        .map_err(|_| anyhow::anyhow!("compiling the OpenAPI v3 schemas panicked"))?
        .context("compiling the OpenAPI v3 schemas")?;
    let registry = registry.with_schemas(Arc::new(schemas));
    // The admission plugins and webhooks, which the registry calls as its admission hook.
    // Admission policies and webhooks' match conditions ask the authorization modes, which
    // are built after the registry.
    let authorizer = crate::authz::AuthorizerSlot::default();
    #[cfg(feature = "admission-webhooks")]
    let webhooks: Option<Arc<dyn crate::admission::Webhooks>> = Some(Arc::new(
        crate::webhooks::Webhooks::new(Arc::clone(&authorizer)),
    ));
    #[cfg(not(feature = "admission-webhooks"))]
    let webhooks = None;
    let plugins =
        (flags.admission.enabled()).map_err(|errors| anyhow::anyhow!(errors.join("; ")))?;
    let mutating_policies = gates.mutating_admission_policy();
    let chain = crate::admission::Chain::new(&plugins, webhooks, &authorizer, mutating_policies);
    let registry = registry.with_admission(Arc::new(chain));
    let registry = registry.with_watch_cache(flags.storage.cache());
    let registry = Arc::new(registry);
    // What kube does with its built-in kinds beyond storing them (Pod binding, eviction).
    #[cfg(feature = "builtin")]
    crate::builtin::register(
        &registry,
        &storage,
        flags.storage.backend() == options::Backend::Etcd,
    );
    // Services' cluster IPs and node ports, from the flags' ranges.
    #[cfg(feature = "builtin")]
    let allocators = {
        let network = crate::builtin::services::ServiceNetwork {
            cluster_ip_ranges: (flags.services.cluster_ip_ranges()).map_err(anyhow::Error::msg)?,
            node_ports: kapi_allocator::PortRange::parse(&flags.services.service_node_port_range)
                .map_err(anyhow::Error::msg)?,
            repair_interval: flags.services.service_repair_interval,
        };
        crate::builtin::services::register(&registry, &storage, &network)
    };
    // Health checks (`/healthz`, `/livez`, `/readyz`) under kube's names, each part's
    // registered as it starts. The registry made the `default` namespace (kube's
    // bootstrap controller) and set up admission.
    let health = Arc::new(Health::new());
    health
        .post_start_hook("start-kube-apiserver-admission-initializer")
        .done();
    if registry.scheme().by_resource("", "namespaces").is_some() {
        health.post_start_hook("bootstrap-controller").done();
    }
    // kube's system PriorityClasses, before the server serves.
    #[cfg(feature = "builtin")]
    if registry
        .scheme()
        .by_resource("scheduling.k8s.io", "priorityclasses")
        .is_some()
    {
        let hook = health.post_start_hook("scheduling/bootstrap-system-priority-classes");
        match crate::builtin::bootstrap_priority_classes(&registry).await {
            Ok(()) => hook.done(),
            Err(error) => tracing::warn!(%error, "cannot make the system priority classes"),
        }
    }
    // The allocations checked against the Services before the server serves (kube's
    // repair controllers' first pass), then every `--service-repair-interval`.
    #[cfg(feature = "builtin")]
    let repair = match &allocators {
        Some(allocators) => {
            let hook = health.post_start_hook("start-service-ip-repair-controllers");
            let repair = Arc::new(crate::builtin::services::Repair::new(Arc::clone(
                allocators,
            )));
            match repair.run_once(&registry).await {
                Ok(_) => hook.done(),
                Err(error) => {
                    tracing::warn!(%error, "unable to perform initial IP and Port allocation check")
                }
            }
            let interval = flags.services.service_repair_interval;
            Some(repair.start(Arc::downgrade(&registry), interval))
        }
        None => None,
    };
    // API Priority and Fairness: kube's configuration objects, then the classifier of
    // requests, before the server serves.
    let flow_control = match registry
        .scheme()
        .by_resource("flowcontrol.apiserver.k8s.io", "flowschemas")
    {
        Some(_) => {
            let hook = health.post_start_hook("priority-and-fairness-config-producer");
            match crate::flowcontrol::bootstrap::ensure(&registry).await {
                Ok(()) => hook.done(),
                Err(error) => {
                    tracing::warn!(%error, "unable to initialize APF bootstrap configuration")
                }
            }
            let flow = Arc::new(crate::flowcontrol::FlowControl::default());
            if let Err(error) = flow.sync(&registry).await {
                tracing::warn!(%error, "cannot read the flow control configuration yet");
            }
            Some(flow)
        }
        None => None,
    };
    // The built-in controllers (namespaces, garbage collection, event expiry): clients of
    // the registry.
    // What the controllers below keep is made before the server serves: the local
    // APIServices, and the client trust published for extension servers.
    // (A failure, such as an admission webhook that is down, is left to the controllers,
    // which retry.)
    let aggregator = aggregation::start(&flags, &registry).await?;
    let published_trust = trust.published();
    if let Some(data) = &published_trust
        && let Err(error) = crate::controllers::client_trust::sync(&registry, data).await
    {
        tracing::warn!(%error, "cannot publish kube-system/extension-apiserver-authentication yet");
    }
    #[cfg(feature = "builtin")]
    let service_accounts = service_accounts(&flags, &registry)?;
    #[cfg(feature = "builtin")]
    let token_method = (service_accounts.as_ref()).map(|(tokens, _)| {
        let objects = crate::serviceaccount::Objects::new(&registry);
        let method = crate::serviceaccount::authenticator::ServiceAccountTokens::new(
            Arc::clone(tokens),
            objects,
        );
        let method = Box::new(method) as Box<dyn crate::authn::Method>;
        (method, tokens.api_audiences.clone())
    });
    #[cfg(not(feature = "builtin"))]
    let token_method = None;
    let options = ControllerOptions {
        event_ttl: flags.run.event_ttl,
        aggregator: aggregator.clone(),
        published_trust,
        health: Arc::clone(&health),
        flow_control: flow_control.clone(),
        root_ca: match &flags.authentication.client_ca_file {
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .with_context(|| format!("reading --client-ca-file {}", path.display()))?,
            ),
            None => None,
        },
        #[cfg(feature = "builtin")]
        service_account_tokens: service_accounts
            .as_ref()
            .map(|(tokens, _)| Arc::clone(tokens)),
    };
    let controllers = Controllers::start(Arc::downgrade(&registry), options);
    let (mut filters, rbac) = self::filters(&flags, &trust, &registry, token_method).await?;
    let _ = authorizer.set(filters.authorizer.clone());
    filters.flow_control = flow_control;
    // The request limits are in the chain; RBAC's bootstrap policy was reconciled.
    health.post_start_hook("max-in-flight-filter").done();
    if rbac {
        health.post_start_hook("rbac/bootstrap-roles").done();
    }
    let compaction = flags.storage.compaction_interval;
    let compactor = (!compaction.is_zero()).then(|| compactor::start(&storage, compaction));
    let lifecycle = Arc::new(Lifecycle::default());
    #[cfg(feature = "builtin")]
    let storage_handle = Arc::clone(&storage);
    let app = endpoints::router(Config {
        routes: served.routes,
        registry: Arc::clone(&registry),
        storage,
        health,
        documents: *api.documents,
        renderer: Some(renderer()),
        // The generated documents describe what is served by default.
        render_documents: !served.as_by_default,
        version: api.version.clone(),
        filters,
        min_request_timeout: Duration::from_secs(flags.run.min_request_timeout),
        lifecycle: Arc::clone(&lifecycle),
        profiling: flags.features.profiling,
        aggregator,
        extra: extra_routes(
            #[cfg(feature = "builtin")]
            service_accounts
                .as_ref()
                .and_then(|(_, discovery)| discovery.as_ref()),
        ),
    });

    // Before the first request can be answered (tests and orchestrators signal a server
    // as soon as it is ready).
    let signals = Signals::listen()?;
    let listener = flags.serving.bind()?;
    let addr = listener
        .local_addr()
        .context("reading the listening address")?;
    #[cfg(feature = "builtin")]
    if let Some((_, Some(discovery))) = &service_accounts {
        discovery.listening_at(addr);
    }
    // The `kubernetes` Service naming this server (kube's bootstrap controller).
    #[cfg(feature = "builtin")]
    let kubernetes_service = (allocators.as_ref())
        .and_then(|allocators| allocators.service_ip())
        .map(|service_ip| {
            use crate::builtin::services::kubernetes::{KubernetesService, advertise_address};
            let services = &flags.services;
            let address = match services.endpoint_reconciler_type {
                options::EndpointReconciler::Lease => {
                    let address = advertise_address(services.advertise_address, addr);
                    if address.is_none() {
                        tracing::warn!("no address to advertise (no --advertise-address, no default route): the kubernetes Service has no endpoints");
                    }
                    address
                }
                options::EndpointReconciler::None => None,
            };
            let controller = KubernetesService::new(
                &registry,
                Arc::clone(&storage_handle),
                service_ip,
                addr.port(),
                services.kubernetes_service_node_port,
                address,
            );
            Arc::new(controller)
        });
    // Its first round before the server serves, so that clients find it at once.
    #[cfg(feature = "builtin")]
    if let Some(controller) = &kubernetes_service
        && let Err(error) = controller.sync(&registry).await
    {
        tracing::warn!(%error, "unable to sync kubernetes service");
    }
    #[cfg(feature = "builtin")]
    let kubernetes_task = kubernetes_service
        .clone()
        .map(|controller| controller.start());
    #[cfg_attr(not(feature = "builtin"), allow(unused_mut))]
    let mut pre_shutdown: Vec<PreShutdown> = Vec::new();
    #[cfg(feature = "builtin")]
    if let Some(controller) = kubernetes_service {
        pre_shutdown.push(Box::pin(async move { controller.stop().await }));
    }
    announce(addr, &flags, registry.scheme());
    tracing::info!(
        %addr,
        storage = %flags.storage.describe(),
        startup = ?started.elapsed(),
        "serving"
    );

    let connections = Connections::default();
    // Weak: the registry (and its store) must go with the router when serving ends.
    let shutdown = Shutdown {
        signals,
        connections: connections.clone(),
        registry: Arc::downgrade(&registry),
        lifecycle,
        delay: flags.run.shutdown_delay_duration,
        timeout: flags.run.shutdown_timeout,
        signalled: Arc::default(),
        pre_shutdown,
    };
    let signalled = shutdown.signalled.clone();
    tokio::spawn(shutdown.run());
    drop(registry);
    serve::serve(
        listener,
        tls,
        flags.serving.read_header_timeout,
        app,
        connections,
    )
    .await
    .context("serving")?;
    controllers.stop().await;
    #[cfg(feature = "builtin")]
    for task in [repair, kubernetes_task].into_iter().flatten() {
        task.abort();
        let _ = task.await;
    }
    if let Some(compactor) = compactor {
        compactor.abort();
        let _ = compactor.await;
    }

    // The router (with the registry and the store) is gone with the server: the store has
    // flushed and closed unless something still holds it.
    if closed.upgrade().is_some() {
        tracing::warn!("the store is still in use at exit; it recovers on the next start");
    }
    match signalled.get() {
        Some(at) => tracing::info!(after = ?at.elapsed(), "stopped"),
        None => tracing::info!("stopped"),
    }
    Ok(())
}

/// Prints where the server listens (first, for whoever reads the port) and how to reach it.
fn announce(addr: SocketAddr, flags: &Options, served: &Scheme) {
    use std::io::Write as _;

    let scheme = flags.serving.scheme();
    // A wildcard address is not one to connect to.
    let mut reachable = addr;
    if addr.ip().is_unspecified() {
        reachable.set_ip(if addr.is_ipv4() {
            [127, 0, 0, 1].into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    // Over HTTPS kubectl asks for credentials when it has none; without authentication
    // any token does.
    let authentication = &flags.authentication;
    let tls_flags = match &flags.serving.tls_cert_file {
        Some(cert)
            if authentication.token_auth_file.is_none()
                && authentication.client_ca_file.is_none() =>
        {
            format!(" --certificate-authority={} --token=none", cert.display())
        }
        Some(cert) => format!(" --certificate-authority={}", cert.display()),
        None => String::new(),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "listening on {scheme}://{addr}");
    let _ = writeln!(
        stdout,
        "try: kubectl --server={scheme}://{reachable}{tls_flags} get {} -A",
        example_resource(served)
    );
    let _ = stdout.flush();
}

/// The resource the printed kubectl line lists: the API's own first namespaced kind served
/// (outside Kubernetes' groups), else namespaces.
fn example_resource(scheme: &Scheme) -> &'static str {
    let kubernetes =
        |group: &str| group.is_empty() || group == "k8s.io" || group.ends_with(".k8s.io");
    let kind = (scheme.kinds().iter())
        .map(|k| k.info)
        .find(|info| !kubernetes(info.group) && info.scope == kapi_core::api::Scope::Namespaced);
    kind.map_or("namespaces", |info| info.plural)
}

/// kube-apiserver's shutdown sequence, on SIGTERM or SIGINT: `/readyz` fails (500) at once;
/// the server keeps serving for `--shutdown-delay-duration` (load balancers notice); then
/// the listener closes, open watches end cleanly (clients watch again elsewhere), and
/// in-flight requests finish within `--shutdown-timeout`. A second signal stops at once.
struct Shutdown {
    signals: Signals,
    connections: Connections,
    registry: Weak<Registry>,
    lifecycle: Arc<endpoints::Lifecycle>,
    delay: Duration,
    timeout: Duration,
    /// When the signal came, for the exit's log line.
    signalled: Arc<std::sync::OnceLock<Instant>>,
    /// What runs as the shutdown starts, beside the delay (kube's pre-shutdown hooks:
    /// this server's address leaves the `kubernetes` Service's endpoints).
    pre_shutdown: Vec<PreShutdown>,
}

/// One pre-shutdown hook.
type PreShutdown = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

impl Shutdown {
    async fn run(mut self) {
        let signal = self.signals.next().await;
        let _ = self.signalled.set(Instant::now());
        self.lifecycle.shut_down();
        tracing::info!(%signal, delay = ?self.delay, "shutting down: /readyz fails");
        // Bounded as kube bounds them (twice the endpoint interval).
        let hooks = futures_util::future::join_all(std::mem::take(&mut self.pre_shutdown));
        if tokio::time::timeout(Duration::from_secs(20), hooks)
            .await
            .is_err()
        {
            tracing::warn!("the pre-shutdown hooks timed out");
        }
        if !self.delay.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(self.delay) => {}
                signal = self.signals.next() => {
                    tracing::warn!(%signal, "stopping now");
                    self.connections.stop();
                    return;
                }
            }
        }
        tracing::info!(timeout = ?self.timeout, "closing the listener; finishing in-flight requests");
        if let Some(registry) = self.registry.upgrade() {
            registry.stop_watches();
        }
        self.connections.drain(self.timeout);
        let signal = self.signals.next().await;
        tracing::warn!(%signal, "stopping now");
        self.connections.stop();
    }
}

/// SIGTERM and SIGINT, listened for from before the server serves: a signal that came
/// before the shutdown task first ran would otherwise end the process at once (the
/// signal's default action), not by the shutdown sequence.
#[cfg(unix)]
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn listen() -> Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};

        Ok(Signals {
            term: signal(SignalKind::terminate()).context("listening for SIGTERM")?,
            int: signal(SignalKind::interrupt()).context("listening for SIGINT")?,
        })
    }

    /// The next signal's name.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        }
    }
}

#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn listen() -> Result<Signals> {
        Ok(Signals)
    }

    async fn next(&mut self) -> &'static str {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

/// `/version` of a build: the Kubernetes version kapi speaks, with the commit, its date and
/// the compiler's version when the build recorded them (empty ones are left out).
pub fn build_version(
    git_commit: Option<&str>,
    build_date: Option<&str>,
    rustc_version: Option<&str>,
) -> ServerVersion {
    let given = |value: Option<&str>| value.filter(|v| !v.is_empty()).map(str::to_owned);
    let default = ServerVersion::default();
    ServerVersion {
        git_commit: given(git_commit).unwrap_or(default.git_commit.clone()),
        build_date: given(build_date).unwrap_or(default.build_date.clone()),
        go_version: given(rustc_version).unwrap_or(default.go_version.clone()),
        ..default
    }
}

/// [`build_version`] from what a build script recorded in `KAPI_GIT_COMMIT`,
/// `KAPI_GIT_COMMIT_DATE` and `KAPI_RUSTC_VERSION` (unset: left out).
#[macro_export]
macro_rules! build_version {
    () => {
        $crate::app::build_version(
            ::core::option_env!("KAPI_GIT_COMMIT"),
            ::core::option_env!("KAPI_GIT_COMMIT_DATE"),
            ::core::option_env!("KAPI_RUSTC_VERSION"),
        )
    };
}

/// The handler chain's filters from the options: the authenticator, the authorization
/// modes (the RBAC authorizer started when RBAC is one), the auditor and the limits. The
/// reviews answer with the same authenticator and modes as requests get; with RBAC, writes
/// of roles and bindings are checked for escalation. Says whether RBAC is a mode.
async fn filters(
    flags: &Options,
    trust: &client_trust::ClientTrust,
    registry: &Arc<Registry>,
    service_accounts: Option<(Box<dyn crate::authn::Method>, Vec<String>)>,
) -> Result<(endpoints::Filters, bool)> {
    let authenticator = Arc::new(
        flags
            .authentication
            .authenticator(trust, service_accounts)?,
    );
    let authorization = flags.authorization.modes(registry).await?;
    let rbac = authorization.rbac();
    // Who may point admission policies at params.
    #[cfg(feature = "admission-webhooks")]
    registry.add_admission(Arc::new(crate::policies::access::ParamAccess::new(
        authorization.modes.clone(),
        Arc::downgrade(registry),
    )));
    #[cfg(feature = "rbac")]
    {
        crate::authn::reviews::register(registry, &authenticator);
        crate::authz::reviews::register(registry, &authorization.modes);
        if let Some(authorizer) = &authorization.rbac {
            let modes = authorization.modes.clone();
            let check =
                crate::authz::rbac::escalation::Escalation::new(modes, Arc::clone(authorizer));
            registry.add_admission(Arc::new(check));
        }
    }
    let filters = endpoints::Filters {
        authenticator,
        authorizer: authorization.modes,
        auditor: flags.audit.auditor()?,
        limits: flags.run.limits(),
        request_timeout: flags.run.request_timeout,
        flow_control: None,
    };
    Ok((filters, rbac))
}

/// Service-account tokens, when the scheme serves ServiceAccounts: what the flags say (an
/// ephemeral key without them), the TokenRequest action registered, and the issuer's
/// discovery documents when kube would serve them.
#[cfg(feature = "builtin")]
#[allow(clippy::type_complexity)]
fn service_accounts(
    flags: &Options,
    registry: &Arc<Registry>,
) -> Result<
    Option<(
        Arc<crate::serviceaccount::Tokens>,
        Option<Arc<crate::serviceaccount::discovery::Discovery>>,
    )>,
> {
    use crate::serviceaccount::{self, discovery::Discovery};
    if registry
        .scheme()
        .by_resource("", "serviceaccounts")
        .is_none()
    {
        return Ok(None);
    }
    let tokens = Arc::new(flags.authentication.service_accounts.tokens()?);
    serviceaccount::register(registry, &tokens);
    let discovery = match Discovery::new(Arc::clone(&tokens)) {
        Ok(discovery) => Some(discovery),
        Err(why) => {
            tracing::warn!(%why, "the service-account issuer's discovery documents are not served");
            None
        }
    };
    tracing::info!(
        issuer = tokens.issuer(),
        development = tokens.development,
        "service-account tokens"
    );
    Ok(Some((tokens, discovery)))
}

/// The routes outside the API: the service-account issuer's discovery documents.
fn extra_routes(
    #[cfg(feature = "builtin")] discovery: Option<
        &Arc<crate::serviceaccount::discovery::Discovery>,
    >,
) -> endpoints::Extra {
    #[cfg(feature = "builtin")]
    if let Some(discovery) = discovery {
        use crate::serviceaccount::discovery::{CONFIGURATION, JWKS};
        return endpoints::Extra {
            routes: discovery.router(),
            paths: vec![CONFIGURATION.to_owned(), JWKS.to_owned()],
        };
    }
    endpoints::Extra::default()
}

/// The discovery and OpenAPI documents of a scheme that gained kinds while the server runs,
/// rendered by the model and renderers that made `generated/`.
fn renderer() -> kapi_core::api::Renderer {
    std::sync::Arc::new(|kinds| {
        let model = kapi_codegen::ApiModel::build(kinds).map_err(|e| e.to_string())?;
        kapi_codegen::served_documents(&model).map_err(|e| e.to_string())
    })
}
