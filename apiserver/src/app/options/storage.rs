//! Storage (kube's `EtcdOptions` and watch cache flags): the backend (the embedded store or
//! etcd), where its data is, the watch caches' history and bookmarks, and compaction.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::ValueEnum;
use kapi_storage::Storage;
use kapi_storage::cache::CacheOptions;
use kapi_storage::embedded::EmbeddedStorage;

/// Where the data is.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Storage")]
pub struct StorageOptions {
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
}

/// `--storage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The durable single-file store in --data-dir.
    Embedded,
    /// An etcd cluster (--etcd-servers).
    Etcd,
}

impl StorageOptions {
    /// The storage backend: `--storage`, else etcd when `--etcd-servers` names a cluster
    /// (as kube-apiserver is configured), else the embedded store.
    pub fn backend(&self) -> Backend {
        (self.storage).unwrap_or(if self.etcd_servers.is_empty() {
            Backend::Embedded
        } else {
            Backend::Etcd
        })
    }

    /// The checks that need no I/O.
    pub fn validate(&self) -> Vec<String> {
        let mut errors = Vec::new();
        if self.backend() == Backend::Etcd && self.etcd_servers.is_empty() {
            errors.push("--storage etcd needs --etcd-servers URL[,URL...]".to_owned());
        }
        if self.backend() == Backend::Embedded && !self.etcd_servers.is_empty() {
            // Serving from the embedded store while the operator named an etcd cluster would
            // silently keep the data somewhere else than they think.
            errors.push("--etcd-servers cannot be used with --storage embedded".to_owned());
        }
        if self.backend() == Backend::Etcd && !cfg!(feature = "etcd") {
            errors.push(
                "--storage etcd: this binary was built without etcd support; build it with \
                 kapi's `etcd` feature (`--features etcd`), or use --storage embedded"
                    .to_owned(),
            );
        }
        errors
    }

    /// The watch caches' options.
    pub fn cache(&self) -> CacheOptions {
        CacheOptions {
            history: self.watch_cache_history.max(1),
            bookmark_interval: self.watch_bookmark_interval,
            ..CacheOptions::default()
        }
    }

    /// The store `--storage` names, opened.
    pub async fn open(&self) -> Result<Arc<dyn Storage>> {
        match self.backend() {
            Backend::Embedded => {
                let data_dir = self.data_dir.clone();
                let options = kapi_storage::embedded::Options {
                    cache_bytes: self.embedded_cache_mib << 20,
                    ..Default::default()
                };
                let store = tokio::task::spawn_blocking(move || {
                    EmbeddedStorage::open_with(&data_dir, options)
                })
                .await
                .context("opening the embedded store")?
                .with_context(|| {
                    format!("opening the embedded store in {}", self.data_dir.display())
                })?;
                Ok(Arc::new(store))
            }
            Backend::Etcd => self.open_etcd().await,
        }
    }

    #[cfg(feature = "etcd")]
    async fn open_etcd(&self) -> Result<Arc<dyn Storage>> {
        use kapi_storage::etcd::{EtcdOptions, EtcdStorage, EtcdTls};

        let mut options = EtcdOptions::new(self.etcd_servers.iter().cloned());
        if self.etcd_cafile.is_some() || self.etcd_certfile.is_some() {
            options.tls = Some(EtcdTls {
                ca_file: self.etcd_cafile.clone(),
                cert_file: self.etcd_certfile.clone(),
                key_file: self.etcd_keyfile.clone(),
            });
        }
        let store = EtcdStorage::connect(options)
            .await
            .with_context(|| format!("connecting to etcd at {}", self.etcd_servers.join(",")))?;
        Ok(Arc::new(store))
    }

    #[cfg(not(feature = "etcd"))]
    async fn open_etcd(&self) -> Result<Arc<dyn Storage>> {
        // `validate` refuses `--storage etcd` in this build.
        anyhow::bail!("this binary was built without etcd support")
    }

    /// Where the data is, for the log.
    pub fn describe(&self) -> String {
        match self.backend() {
            Backend::Embedded => format!("embedded in {}", self.data_dir.display()),
            Backend::Etcd => format!(
                "etcd at {} under {}",
                self.etcd_servers.join(","),
                self.etcd_prefix
            ),
        }
    }
}
