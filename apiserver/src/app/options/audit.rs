//! Auditing (kube's `AuditOptions`): the policy, and the log with its rotation.

use std::path::PathBuf;
use std::sync::Arc;

use crate::audit::{AuditLog, Auditor, LogOptions, Policy};
use anyhow::{Context, Result, bail};

/// What is audited, and where it goes.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Auditing")]
pub struct AuditOptions {
    /// The audit policy (an `audit.k8s.io/v1` Policy, YAML): which requests are audited, at
    /// which level. Needs --audit-log-path.
    #[arg(long, value_name = "FILE")]
    pub audit_policy_file: Option<PathBuf>,

    /// Where audit events go, one JSON line each; `-` is stdout.
    #[arg(long, value_name = "FILE")]
    pub audit_log_path: Option<PathBuf>,

    /// Rotate the audit log once it would pass this many megabytes (0: never).
    #[arg(long, value_name = "MB", default_value_t = 0)]
    pub audit_log_maxsize: u64,

    /// Keep at most this many rotated audit logs (0: all).
    #[arg(long, value_name = "FILES", default_value_t = 0)]
    pub audit_log_maxbackup: usize,

    /// Remove rotated audit logs older than this many days (0: never).
    #[arg(long, value_name = "DAYS", default_value_t = 0)]
    pub audit_log_maxage: u64,
}

impl AuditOptions {
    /// The checks that need no I/O: a policy and a log go together.
    pub fn validate(&self) -> Vec<String> {
        match (&self.audit_policy_file, &self.audit_log_path) {
            (Some(_), None) => vec!["--audit-policy-file needs --audit-log-path".to_owned()],
            (None, Some(_)) => vec!["--audit-log-path needs --audit-policy-file".to_owned()],
            _ => Vec::new(),
        }
    }

    /// The auditor, when a policy and a log are given.
    pub fn auditor(&self) -> Result<Option<Arc<Auditor>>> {
        let (policy, path) = match (&self.audit_policy_file, &self.audit_log_path) {
            (Some(policy), Some(path)) => (policy, path),
            (None, None) => return Ok(None),
            // `validate` says so first; a server run without it must not go unaudited.
            (Some(_), None) => bail!("--audit-policy-file needs --audit-log-path"),
            (None, Some(_)) => bail!("--audit-log-path needs --audit-policy-file"),
        };
        let policy = Policy::load(policy)?;
        let log = AuditLog::open(LogOptions {
            path: path.clone(),
            max_size_mb: self.audit_log_maxsize,
            max_backups: self.audit_log_maxbackup,
            max_age_days: self.audit_log_maxage,
        })
        .with_context(|| format!("--audit-log-path {}", path.display()))?;
        tracing::info!(path = %path.display(), "audit log");
        Ok(Some(Arc::new(Auditor { policy, log })))
    }
}
