//! The API server as a program (kube's `cmd/kube-apiserver/app`): its flags under
//! kube-apiserver's names ([`Options`], which a user's own `clap` flags can flatten), and
//! the whole start-up and shutdown sequence for an [`Api`] that `cargo xtask generate`
//! made: open the store, build the registry from the generated scheme, start the built-in
//! controllers, serve the endpoints over HTTP (or HTTPS), and shut down gracefully on
//! SIGTERM / SIGINT. A server's `main` is [`main`] with its generated crate's items.
//!
//! Once it listens it prints, first and flushed, `listening on http://ADDR` (tests read the
//! port from it), then a ready-to-paste kubectl command line.

mod aggregation;
mod client_trust;
mod security;
mod serve;

pub use security::SecurityFlags;

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::controllers::{ControllerOptions, Controllers};
use crate::endpoints::{self, Config, Lifecycle, ServerVersion};
use crate::health::Health;
use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};
use kapi_core::api::{Documents, OpenApiV3Document, RouteBinding};
use kapi_core::scheme::Scheme;
use kapi_registry::{Registry, Schemas};
use kapi_storage::cache::CacheOptions;
use kapi_storage::embedded::EmbeddedStorage;
use kapi_storage::{Storage, compactor};
use serve::Connections;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::prelude::*;

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
    /// The generated `documents::OPENAPI_V3`.
    pub openapi_v3: &'static [OpenApiV3Document],
    /// What `/version` says about the build.
    pub version: ServerVersion,
}

/// The flags of an API server, under kube-apiserver's names.
#[derive(Debug, Parser)]
#[command(version)]
pub struct Options {
    /// Address to serve on (`127.0.0.1:0` picks a free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// Storage backend [default: etcd when --etcd-servers is given, else embedded].
    #[arg(long, value_enum)]
    pub storage: Option<Backend>,

    /// Directory of the embedded store.
    #[arg(long, value_name = "DIR", default_value = "./kapi-data")]
    pub data_dir: PathBuf,

    /// Memory the embedded store may keep for its file's pages, in MiB (the watch caches
    /// hold the live objects; this serves storage reads and writes' B-tree paths).
    #[arg(long, value_name = "MIB", default_value_t = kapi_storage::embedded::DEFAULT_CACHE_BYTES >> 20)]
    pub embedded_cache_mib: usize,

    /// etcd servers to connect to (selects `--storage etcd`).
    #[arg(long, value_name = "URL[,URL...]", value_delimiter = ',')]
    pub etcd_servers: Vec<String>,

    /// Prefix of every storage key.
    #[arg(long, value_name = "PREFIX", default_value = "/registry")]
    pub etcd_prefix: String,

    /// CA certificate (PEM) that signed the etcd members' certificates; with https://
    /// --etcd-servers.
    #[arg(long, value_name = "FILE")]
    pub etcd_cafile: Option<PathBuf>,

    /// Client certificate (PEM) to present to etcd; needs --etcd-keyfile.
    #[arg(long, value_name = "FILE", requires = "etcd_keyfile")]
    pub etcd_certfile: Option<PathBuf>,

    /// The private key (PEM) of --etcd-certfile.
    #[arg(long, value_name = "FILE", requires = "etcd_certfile")]
    pub etcd_keyfile: Option<PathBuf>,

    /// TLS, authentication, authorization, audit and the request limits.
    #[command(flatten)]
    pub security: SecurityFlags,

    /// How many recent changes each resource's watch cache keeps for watches that resume
    /// from a past resourceVersion (older ones get 410 Expired and relist).
    #[arg(long, value_name = "EVENTS", default_value_t = kapi_storage::cache::DEFAULT_HISTORY)]
    pub watch_cache_history: usize,

    /// How often a watch that allows bookmarks (`allowWatchBookmarks=true`) gets a BOOKMARK
    /// event with the resourceVersion it has reached (kube's watch cache sends one about
    /// every minute; e.g. `1m`, `200ms`). At least 10ms.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = humantime::parse_duration)]
    pub watch_bookmark_interval: Duration,

    /// How often the store's history is compacted, keeping one interval of it (e.g. `5m`,
    /// `30s`); `0` disables compaction. kube-apiserver's name for it,
    /// `--etcd-compaction-interval`, works too.
    #[arg(long, visible_alias = "etcd-compaction-interval", value_name = "DURATION", default_value = "5m", value_parser = humantime::parse_duration)]
    pub compaction_interval: Duration,

    /// How long an Event is kept after its last write (kube-apiserver's `--event-ttl`; e.g.
    /// `1h`, `30m`). At least 1s.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = event_ttl)]
    pub event_ttl: Duration,

    /// A watch without `timeoutSeconds` ends at a random point between this and twice this
    /// (kube-apiserver's `--min-request-timeout`, in seconds), so clients reconnect spread
    /// out; `0` lets such watches run until the client or the server ends them.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800)]
    pub min_request_timeout: u64,

    /// After SIGTERM, how long to keep serving while `/readyz` fails (500), so that load
    /// balancers notice before the listener closes (kube-apiserver's
    /// `--shutdown-delay-duration`; e.g. `10s`).
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = humantime::parse_duration)]
    pub shutdown_delay_duration: Duration,

    /// Then, how long in-flight requests may take to finish before the server stops anyway.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = humantime::parse_duration)]
    pub shutdown_timeout: Duration,

    /// How long a client may take to send a request's headers before its connection is
    /// closed (kube-apiserver's serving uses 32s, without a flag; a body is bounded by
    /// `--request-timeout`), so that slow clients cannot hold connections open.
    #[arg(long, value_name = "DURATION", default_value = "32s", value_parser = humantime::parse_duration)]
    pub read_header_timeout: Duration,

    /// Serve CPU profiles at `/debug/pprof/profile?seconds=N` to those allowed
    /// `/debug/pprof/*` (kube-apiserver's `--profiling`, on by default in builds with kapi's
    /// `profiling` feature).
    #[arg(long, value_name = "BOOL", default_value_t = cfg!(feature = "profiling"), action = clap::ArgAction::Set)]
    pub profiling: bool,

    /// The client certificate (PEM) the aggregator presents to the servers of remote
    /// APIServices, which trust it through their `--requestheader-client-ca-file`.
    #[arg(long, value_name = "FILE", requires = "proxy_client_key_file")]
    pub proxy_client_cert_file: Option<PathBuf>,

    /// Its private key (PEM).
    #[arg(long, value_name = "FILE", requires = "proxy_client_cert_file")]
    pub proxy_client_key_file: Option<PathBuf>,

    /// The log's format (kube-apiserver's `--logging-format`).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub logging_format: LogFormat,

    /// Log verbosity, as kube-apiserver's: 0-3 info, 4-5 debug, 6+ trace; a line per
    /// request (target `kapi::http`) from 3, as kube's httplog. `RUST_LOG`
    /// (`info,kapi::http=info`) overrides it.
    #[arg(short = 'v', long = "v", value_name = "LEVEL", default_value_t = 0)]
    pub verbosity: u8,
}

impl Options {
    /// The storage backend: `--storage`, else etcd when `--etcd-servers` names a cluster
    /// (as kube-apiserver is configured), else the embedded store.
    fn backend(&self) -> Backend {
        (self.storage).unwrap_or(if self.etcd_servers.is_empty() {
            Backend::Embedded
        } else {
            Backend::Etcd
        })
    }
}

/// `--logging-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// `--storage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The durable single-file store in --data-dir.
    Embedded,
    /// An etcd cluster (--etcd-servers).
    Etcd,
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
    init_logging(name, flags.verbosity, flags.logging_format);
    if flags.backend() == Backend::Etcd && flags.etcd_servers.is_empty() {
        eprintln!("{name}: --storage etcd needs --etcd-servers URL[,URL...]");
        return ExitCode::from(2);
    }
    if flags.backend() == Backend::Embedded && !flags.etcd_servers.is_empty() {
        // Serving from the embedded store while the operator named an etcd cluster would
        // silently keep the data somewhere else than they think.
        eprintln!("{name}: --etcd-servers cannot be used with --storage embedded");
        return ExitCode::from(2);
    }
    if flags.backend() == Backend::Etcd && !cfg!(feature = "etcd") {
        eprintln!(
            "{name}: --storage etcd: this binary was built without etcd support; build it \
             with kapi's `etcd` feature, or use --storage embedded"
        );
        return ExitCode::from(2);
    }
    let addrs: Vec<SocketAddr> = (flags.listen.to_socket_addrs())
        .map(Iterator::collect)
        .unwrap_or_default();
    if let Err(message) = (check_sets(&flags)).and_then(|()| flags.security.check(&addrs)) {
        eprintln!("{name}: {message}");
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

fn init_logging(name: &str, verbosity: u8, format: LogFormat) {
    let level = match verbosity {
        0..=3 => LevelFilter::INFO,
        4..=5 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    // kube logs each request only from -v=3 (httplog's `withLoggingLevel`): below it a
    // busy server would spend about a fifth of a GET's instructions, and a write to
    // stderr, on it.
    let requests = match verbosity {
        0..=2 => LevelFilter::WARN,
        _ => level,
    };
    let mut filter = Targets::new()
        .with_default(level)
        .with_target(crate::filters::REQUEST_LOG_TARGET, requests);
    if let Ok(spec) = std::env::var("RUST_LOG") {
        match spec.parse::<Targets>() {
            Ok(targets) => filter = targets,
            Err(e) => eprintln!("{name}: ignoring RUST_LOG={spec:?}: {e}"),
        }
    }
    let colors = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(true);
    match format {
        LogFormat::Text => tracing_subscriber::registry()
            .with(layer.with_ansi(colors).with_filter(filter))
            .init(),
        // One JSON object per line (kube's `--logging-format json`), for log pipelines.
        LogFormat::Json => tracing_subscriber::registry()
            .with(layer.json().flatten_event(true).with_filter(filter))
            .init(),
    }
}

/// The server, from start-up to a clean stop.
pub async fn run(flags: Options, api: Api) -> Result<()> {
    let started = Instant::now();
    let trust = client_trust::ClientTrust::resolve(&flags.security)?;
    let tls = flags.security.tls(trust.handshake_cas()?.as_ref())?;
    let storage = open_storage(&flags).await?;
    let closed = Arc::downgrade(&storage);
    let scheme = Arc::new((api.scheme)());
    // Every served version's schema, for defaulting and validation: a missing one is a
    // start-up error, never a failed request.
    let schemas = Schemas::new(&scheme, (api.openapi_v3.iter()).map(|d| (d.path, d.json)))
        .context("compiling the OpenAPI v3 schemas")?;
    let registry = Registry::new(scheme, Arc::clone(&storage), flags.etcd_prefix.clone())
        .await
        .context("starting the registry")?
        .with_schemas(Arc::new(schemas));
    // The admission webhooks, which the registry calls as its admission hook.
    #[cfg(feature = "admission-webhooks")]
    let registry = registry.with_admission(Arc::new(crate::webhooks::Webhooks::default()));
    let registry = registry.with_watch_cache(CacheOptions {
        history: flags.watch_cache_history.max(1),
        bookmark_interval: flags.watch_bookmark_interval,
        ..CacheOptions::default()
    });
    let registry = Arc::new(registry);
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
    let options = ControllerOptions {
        event_ttl: flags.event_ttl,
        aggregator: aggregator.clone(),
        published_trust,
        health: Arc::clone(&health),
    };
    let controllers = Controllers::start(Arc::downgrade(&registry), options);
    let (filters, rbac) = flags.security.filters(&trust, &registry).await?;
    // The request limits are in the chain; RBAC's bootstrap policy was reconciled.
    health.post_start_hook("max-in-flight-filter").done();
    if rbac {
        health.post_start_hook("rbac/bootstrap-roles").done();
    }
    let compactor = (!flags.compaction_interval.is_zero())
        .then(|| compactor::start(&storage, flags.compaction_interval));
    let lifecycle = Arc::new(Lifecycle::default());
    let app = endpoints::router(Config {
        routes: api.routes,
        registry: Arc::clone(&registry),
        storage,
        health,
        documents: *api.documents,
        renderer: Some(renderer()),
        version: api.version.clone(),
        filters,
        min_request_timeout: Duration::from_secs(flags.min_request_timeout),
        lifecycle: Arc::clone(&lifecycle),
        profiling: flags.profiling,
        aggregator,
    });

    // Before the first request can be answered (tests and orchestrators signal a server
    // as soon as it is ready).
    let signals = Signals::listen()?;
    let listener = bind(&flags.listen)?;
    let addr = listener
        .local_addr()
        .context("reading the listening address")?;
    announce(addr, &flags, &api);
    tracing::info!(
        %addr,
        storage = %storage_description(&flags),
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
        delay: flags.shutdown_delay_duration,
        timeout: flags.shutdown_timeout,
        signalled: Arc::default(),
    };
    let signalled = shutdown.signalled.clone();
    tokio::spawn(shutdown.run());
    drop(registry);
    serve::serve(listener, tls, flags.read_header_timeout, app, connections)
        .await
        .context("serving")?;
    controllers.stop().await;
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

/// The store `--storage` names.
async fn open_storage(flags: &Options) -> Result<Arc<dyn Storage>> {
    match flags.backend() {
        Backend::Embedded => {
            let data_dir = flags.data_dir.clone();
            let options = kapi_storage::embedded::Options {
                cache_bytes: flags.embedded_cache_mib << 20,
                ..Default::default()
            };
            let store =
                tokio::task::spawn_blocking(move || EmbeddedStorage::open_with(&data_dir, options))
                    .await
                    .context("opening the embedded store")?
                    .with_context(|| {
                        format!("opening the embedded store in {}", flags.data_dir.display())
                    })?;
            Ok(Arc::new(store))
        }
        Backend::Etcd => open_etcd(flags).await,
    }
}

#[cfg(feature = "etcd")]
async fn open_etcd(flags: &Options) -> Result<Arc<dyn Storage>> {
    use kapi_storage::etcd::{EtcdOptions, EtcdStorage, EtcdTls};

    let mut options = EtcdOptions::new(flags.etcd_servers.iter().cloned());
    if flags.etcd_cafile.is_some() || flags.etcd_certfile.is_some() {
        options.tls = Some(EtcdTls {
            ca_file: flags.etcd_cafile.clone(),
            cert_file: flags.etcd_certfile.clone(),
            key_file: flags.etcd_keyfile.clone(),
        });
    }
    let store = EtcdStorage::connect(options)
        .await
        .with_context(|| format!("connecting to etcd at {}", flags.etcd_servers.join(",")))?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "etcd"))]
async fn open_etcd(_flags: &Options) -> Result<Arc<dyn Storage>> {
    // `main` refuses `--storage etcd` in this build before getting here.
    anyhow::bail!("this binary was built without etcd support")
}

/// Where the data is, for the log.
fn storage_description(flags: &Options) -> String {
    match flags.backend() {
        Backend::Embedded => format!("embedded in {}", flags.data_dir.display()),
        Backend::Etcd => format!(
            "etcd at {} under {}",
            flags.etcd_servers.join(","),
            flags.etcd_prefix
        ),
    }
}

fn bind(listen: &str) -> Result<TcpListener> {
    let addrs: Vec<SocketAddr> = (listen.to_socket_addrs())
        .with_context(|| format!("--listen {listen:?}: not an address"))?
        .collect();
    TcpListener::bind(&addrs[..]).with_context(|| format!("listening on {listen}"))
}

/// Prints where the server listens (first, for whoever reads the port) and how to reach it.
fn announce(addr: SocketAddr, flags: &Options, api: &Api) {
    use std::io::Write as _;

    let scheme = if flags.security.tls_cert_file.is_some() {
        "https"
    } else {
        "http"
    };
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
    let tls_flags = match &flags.security.tls_cert_file {
        Some(cert)
            if flags.security.token_auth_file.is_none()
                && flags.security.client_ca_file.is_none() =>
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
        example_resource(api)
    );
    let _ = stdout.flush();
}

/// The resource the printed kubectl line lists: the API's own first namespaced kind (outside
/// Kubernetes' groups), else namespaces.
fn example_resource(api: &Api) -> &'static str {
    let scheme = (api.scheme)();
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
}

impl Shutdown {
    async fn run(mut self) {
        let signal = self.signals.next().await;
        let _ = self.signalled.set(Instant::now());
        self.lifecycle.shut_down();
        tracing::info!(%signal, delay = ?self.delay, "shutting down: /readyz fails");
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

/// `--event-ttl`: a duration of at least a second (kube's flag takes Go durations; these
/// are the same for the usual `1h`, `30m`, `90s`).
fn event_ttl(value: &str) -> Result<Duration, String> {
    let ttl = humantime::parse_duration(value).map_err(|e| e.to_string())?;
    if ttl < Duration::from_secs(1) {
        return Err("must be at least 1s".into());
    }
    Ok(ttl)
}

/// The start-up error of a flag that needs one of Kubernetes' feature sets this server was
/// built without.
fn missing_set(flag: &str, feature: &str, set: &str) -> String {
    format!(
        "{flag} needs Kubernetes' {set} set, which this server was built without: build it \
         with kapi's `{feature}` feature and list kapi::kinds::{set} in its API's kinds"
    )
}

/// The checks of flags that need a feature set this build has not compiled.
fn check_sets(flags: &Options) -> Result<(), String> {
    if !cfg!(feature = "aggregation") && flags.proxy_client_cert_file.is_some() {
        return Err(missing_set(
            "--proxy-client-cert-file",
            "aggregation",
            "AGGREGATION",
        ));
    }
    Ok(())
}

/// The discovery and OpenAPI documents of a scheme that gained kinds while the server runs,
/// rendered by the model and renderers that made `generated/`.
fn renderer() -> kapi_core::api::Renderer {
    std::sync::Arc::new(|kinds| {
        let model = kapi_codegen::ApiModel::build(kinds).map_err(|e| e.to_string())?;
        kapi_codegen::served_documents(&model).map_err(|e| e.to_string())
    })
}
