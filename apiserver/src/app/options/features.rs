//! Features (kube's `FeatureOptions`, with kube's `--feature-gates`): what the server
//! offers besides its API, and which of kube's feature gates are on ([`super::FeatureGates`]).

use super::FeatureGates;

/// Optional features.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Features")]
pub struct FeatureOptions {
    /// Serve CPU profiles at `/debug/pprof/profile?seconds=N` to those allowed
    /// `/debug/pprof/*` (kube-apiserver's `--profiling`, on by default in builds with kapi's
    /// `profiling` feature).
    #[arg(long, value_name = "BOOL", default_value_t = cfg!(feature = "profiling"), action = clap::ArgAction::Set)]
    pub profiling: bool,

    /// kube's feature gates to set, `<name>=<bool>` pairs, comma-separated (the flag may
    /// be repeated; `kube:<name>=<bool>` as kube allows). Every gate of kube-apiserver 1.34
    /// is accepted as kube accepts it; kapi acts on AllAlpha=true|false (ALPHA -
    /// default=false), AllBeta=true|false (BETA - default=false) and
    /// MutatingAdmissionPolicy=true|false (BETA - default=false), and warns that setting
    /// another off its default changes nothing.
    #[arg(long, value_name = "NAME=BOOL[,...]")]
    pub feature_gates: Vec<String>,
}

impl FeatureOptions {
    /// The gates `--feature-gates` sets, or kube's error.
    pub fn gates(&self) -> Result<FeatureGates, String> {
        FeatureGates::parse(&self.feature_gates)
    }

    /// What setting the gates is to be warned of (kube's warnings of GA and deprecated
    /// gates; kapi's of gates it does not act on).
    pub fn warnings(&self) -> Vec<String> {
        (FeatureGates::parse_warned(&self.feature_gates))
            .map(|(_, warnings)| warnings)
            .unwrap_or_default()
    }

    /// The checks that need no I/O: `--feature-gates` as kube reads it.
    pub fn validate(&self) -> Vec<String> {
        (self.gates().err().into_iter())
            .map(|error| format!("--feature-gates: {error}"))
            .collect()
    }
}
