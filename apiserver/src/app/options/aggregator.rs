//! The aggregator (kube-aggregator's options): the client certificate its proxy presents to
//! the servers of remote APIServices. Needs the `aggregation` set.

use std::path::PathBuf;

/// How the aggregator reaches other servers.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Aggregator")]
pub struct AggregatorOptions {
    /// The client certificate (PEM) the aggregator presents to the servers of remote
    /// APIServices, which trust it through their `--requestheader-client-ca-file`.
    #[arg(long, value_name = "FILE", requires = "proxy_client_key_file")]
    pub proxy_client_cert_file: Option<PathBuf>,

    /// Its private key (PEM).
    #[arg(long, value_name = "FILE", requires = "proxy_client_cert_file")]
    pub proxy_client_key_file: Option<PathBuf>,
}

impl AggregatorOptions {
    /// The checks that need no I/O: the set is compiled in.
    pub fn validate(&self) -> Vec<String> {
        match !cfg!(feature = "aggregation") && self.proxy_client_cert_file.is_some() {
            true => vec![super::missing_set(
                "--proxy-client-cert-file",
                "aggregation",
                "AGGREGATION",
            )],
            false => Vec::new(),
        }
    }
}
