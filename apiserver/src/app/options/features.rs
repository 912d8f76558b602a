//! Features (kube's `FeatureOptions`): what the server offers besides its API.

/// Optional features.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Features")]
pub struct FeatureOptions {
    /// Serve CPU profiles at `/debug/pprof/profile?seconds=N` to those allowed
    /// `/debug/pprof/*` (kube-apiserver's `--profiling`, on by default in builds with kapi's
    /// `profiling` feature).
    #[arg(long, value_name = "BOOL", default_value_t = cfg!(feature = "profiling"), action = clap::ArgAction::Set)]
    pub profiling: bool,
}
