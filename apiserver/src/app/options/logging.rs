//! Logging (kube's `logs.Options` and klog's `-v`): the format and the verbosity.

use clap::ValueEnum;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::prelude::*;

/// What the log says, and how.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Logging")]
pub struct LoggingOptions {
    /// The log's format (kube-apiserver's `--logging-format`).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub logging_format: LogFormat,

    /// Log verbosity, as kube-apiserver's: 0-3 info, 4-5 debug, 6+ trace; a line per
    /// request (target `kapi::http`) from 3, as kube's httplog. `RUST_LOG`
    /// (`info,kapi::http=info`) overrides it.
    #[arg(short = 'v', long = "v", value_name = "LEVEL", default_value_t = 0)]
    pub verbosity: u8,
}

/// `--logging-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl LoggingOptions {
    /// Installs the log for the program `name` (on stderr).
    pub fn init(&self, name: &str) {
        let verbosity = self.verbosity;
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
        match self.logging_format {
            LogFormat::Text => tracing_subscriber::registry()
                .with(layer.with_ansi(colors).with_filter(filter))
                .init(),
            // One JSON object per line (kube's `--logging-format json`), for log pipelines.
            LogFormat::Json => tracing_subscriber::registry()
                .with(layer.json().flatten_event(true).with_filter(filter))
                .init(),
        }
    }
}
