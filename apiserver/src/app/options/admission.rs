//! Admission (kube's `AdmissionOptions`): which of kube-apiserver's admission plugins run.

use crate::admission::Enabled;

/// Which admission plugins run.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Admission")]
pub struct AdmissionOptions {
    /// Admission plugins to run besides the default ones (kube's names, comma-separated;
    /// kapi implements NamespaceLifecycle, LimitRanger, PodSecurity, Priority,
    /// DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection,
    /// PersistentVolumeClaimResize, the admission webhooks and ResourceQuota).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub enable_admission_plugins: Vec<String>,

    /// Admission plugins not to run, of the default ones (kube's names, comma-separated;
    /// any of kube's may be named, as envtest names ServiceAccount).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub disable_admission_plugins: Vec<String>,
}

impl AdmissionOptions {
    /// The plugins that run.
    pub fn enabled(&self) -> Result<Enabled, Vec<String>> {
        Enabled::new(
            &self.enable_admission_plugins,
            &self.disable_admission_plugins,
        )
    }

    /// The checks that need no I/O.
    pub fn validate(&self) -> Vec<String> {
        self.enabled().err().unwrap_or_default()
    }
}
