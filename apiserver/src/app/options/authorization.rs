//! Authorization (kube's `BuiltInAuthorizationOptions` and `DelegatingAuthorizationOptions`):
//! the modes asked in order, the core cluster asked by the `Webhook` mode, and the paths
//! anyone may request.

use std::path::PathBuf;
use std::sync::Arc;

use crate::authz::delegated::SubjectAccessReviewer;
use crate::authz::{AlwaysAllow, AlwaysAllowPaths, AlwaysDeny, Mode};
use crate::kubeconfig::Remote;
use anyhow::{Context, Result, bail};
use kapi_registry::Registry;

/// The modes `--authorization-mode` knows.
const MODES: &[&str] = &["AlwaysAllow", "AlwaysDeny", "RBAC", "Webhook"];

/// Whether a user may do what a request asks.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Authorization")]
pub struct AuthorizationOptions {
    /// Authorization modes, asked in order: `AlwaysAllow`, `AlwaysDeny`, `RBAC`, `Webhook`.
    #[arg(
        long,
        value_name = "MODE[,MODE...]",
        value_delimiter = ',',
        default_value = "AlwaysAllow"
    )]
    pub authorization_mode: Vec<String>,

    /// Ask the core cluster this kubeconfig names for the decisions of the `Webhook`
    /// mode, in SubjectAccessReviews (an extension API server's delegated authorization;
    /// decisions kept for ten seconds).
    #[arg(long, value_name = "FILE")]
    pub authorization_kubeconfig: Option<PathBuf>,

    /// Non-resource paths anyone may request, before the modes are asked (`/healthz`;
    /// `/debug/*` for a prefix), as an extension API server allows its health checks.
    #[arg(long, value_name = "PATH[,PATH...]", value_delimiter = ',')]
    pub authorization_always_allow_paths: Vec<String>,
}

/// The modes, and the RBAC authorizer when RBAC is one of them.
pub struct Authorization {
    /// The modes, in order.
    pub modes: Mode,
    /// The RBAC authorizer, started: writes of roles and bindings are checked for
    /// escalation against it.
    #[cfg(feature = "rbac")]
    pub rbac: Option<Arc<crate::authz::rbac::Rbac>>,
}

impl Authorization {
    /// Whether RBAC is one of the modes (its bootstrap policy reconciled).
    pub fn rbac(&self) -> bool {
        #[cfg(feature = "rbac")]
        return self.rbac.is_some();
        #[cfg(not(feature = "rbac"))]
        false
    }
}

impl AuthorizationOptions {
    /// The checks that need no I/O: known modes, each with what it needs.
    pub fn validate(&self) -> Vec<String> {
        let mut errors = Vec::new();
        for mode in &self.authorization_mode {
            if !MODES.contains(&mode.as_str()) {
                errors.push(format!(
                    "--authorization-mode: unknown mode {mode:?} (known: {})",
                    MODES.join(", ")
                ));
            }
            if mode == "RBAC" && !cfg!(feature = "rbac") {
                errors.push(super::missing_set(
                    "--authorization-mode=RBAC",
                    "rbac",
                    "RBAC",
                ));
            }
        }
        let webhook = self.authorization_mode.iter().any(|m| m == "Webhook");
        if webhook != self.authorization_kubeconfig.is_some() {
            errors.push(
                "--authorization-mode=Webhook and --authorization-kubeconfig go together: the \
                 kubeconfig names the cluster the mode asks"
                    .to_owned(),
            );
        }
        errors
    }

    /// Whether every request is allowed.
    pub fn allows_everything(&self) -> bool {
        self.authorization_mode == ["AlwaysAllow"]
    }

    /// The modes; starts the RBAC authorizer (and reconciles kube's bootstrap policy) when
    /// RBAC is a mode.
    pub async fn modes(&self, registry: &Arc<Registry>) -> Result<Authorization> {
        let mut modes = Mode::new();
        if !self.authorization_always_allow_paths.is_empty() {
            let paths = AlwaysAllowPaths(self.authorization_always_allow_paths.clone());
            modes = modes.with("AlwaysAllowPaths", Arc::new(paths));
        }
        #[cfg(feature = "rbac")]
        let mut rbac = None;
        #[cfg(not(feature = "rbac"))]
        let _ = registry;
        for mode in &self.authorization_mode {
            modes = match mode.as_str() {
                "AlwaysAllow" => modes.with(mode, Arc::new(AlwaysAllow)),
                "AlwaysDeny" => modes.with(mode, Arc::new(AlwaysDeny)),
                #[cfg(feature = "rbac")]
                "RBAC" => {
                    let authorizer = start_rbac(registry).await?;
                    rbac = Some(Arc::clone(&authorizer));
                    modes.with(mode, authorizer)
                }
                "Webhook" => {
                    let path = (self.authorization_kubeconfig.as_ref())
                        .context("--authorization-mode=Webhook needs --authorization-kubeconfig")?;
                    let remote = Remote::load(path, std::time::Duration::from_secs(10))
                        .context("--authorization-kubeconfig")?;
                    tracing::info!(path = %path.display(), "delegated authorization");
                    modes.with(mode, Arc::new(SubjectAccessReviewer::new(remote)))
                }
                other => bail!("--authorization-mode: unknown mode {other:?}"),
            };
        }
        Ok(Authorization {
            modes,
            #[cfg(feature = "rbac")]
            rbac,
        })
    }
}

/// The RBAC authorizer, after kube's bootstrap policy is reconciled.
#[cfg(feature = "rbac")]
async fn start_rbac(registry: &Arc<Registry>) -> Result<Arc<crate::authz::rbac::Rbac>> {
    use crate::authz::rbac::{self, Rbac};

    if (registry
        .scheme()
        .by_kind(kapi_kinds::rbac::GROUP, "ClusterRole"))
    .is_none()
    {
        bail!(
            "--authorization-mode=RBAC: the server does not serve RBAC's kinds (list \
             kapi::kinds::RBAC in its API's kinds, and leave rbac.authorization.k8s.io/v1 on \
             in --runtime-config)"
        );
    }
    rbac::bootstrap::reconcile(registry)
        .await
        .context("--authorization-mode=RBAC: reconciling the bootstrap policy")?;
    let authorizer = Rbac::start(registry)
        .await
        .context("--authorization-mode=RBAC: loading the RBAC objects")?;
    Ok(Arc::new(authorizer))
}
