//! The flags of an API server under kube-apiserver's names, grouped as kube's option
//! structs are (`k8s.io/apiserver/pkg/server/options`, kube-apiserver's
//! `ServerRunOptions`): secure serving, storage, authentication, authorization, auditing,
//! the server's run, the aggregator, Services' addresses, API enablement, features (with
//! kube's feature gates) and logging. Each group is a `clap::Args`
//! (its flags, under a heading of `--help` of its own), with `validate` (the checks that
//! need no I/O, every error listed, as kube's `Validate() []error`) and what applying it
//! makes (a listener, a store, an authenticator, the modes, an auditor). [`Options`] holds
//! them all; a server with flags of its own flattens it into its parser.

mod admission;
mod aggregator;
mod api_enablement;
mod audit;
mod authentication;
mod authorization;
mod feature_gates;
mod features;
mod logging;
mod run;
mod services;
mod serving;
mod storage;

pub use admission::AdmissionOptions;
pub use aggregator::AggregatorOptions;
pub use api_enablement::ApiEnablementOptions;
pub use audit::AuditOptions;
pub use authentication::AuthenticationOptions;
pub use authorization::{Authorization, AuthorizationOptions};
pub use feature_gates::{FeatureGates, GATES, Gate, Stage};
pub use features::FeatureOptions;
pub use logging::{LogFormat, LoggingOptions};
pub use run::ServerRunOptions;
pub use services::{EndpointReconciler, ServiceOptions};
pub use serving::ServingOptions;
pub use storage::{Backend, StorageOptions};

use clap::Parser;

/// The flags of an API server, under kube-apiserver's names.
#[derive(Debug, Parser)]
#[command(version)]
pub struct Options {
    /// Where and how the server serves.
    #[command(flatten)]
    pub serving: ServingOptions,
    /// Where the data is.
    #[command(flatten)]
    pub storage: StorageOptions,
    /// Who a request is from.
    #[command(flatten)]
    pub authentication: AuthenticationOptions,
    /// Whether a user may do what a request asks.
    #[command(flatten)]
    pub authorization: AuthorizationOptions,
    /// What is audited, and where it goes.
    #[command(flatten)]
    pub audit: AuditOptions,
    /// Which admission plugins run.
    #[command(flatten)]
    pub admission: AdmissionOptions,
    /// Limits, timeouts and shutdown.
    #[command(flatten)]
    pub run: ServerRunOptions,
    /// How the aggregator reaches other servers.
    #[command(flatten)]
    pub aggregator: AggregatorOptions,
    /// Services' addresses and the server's own Service.
    #[command(flatten)]
    pub services: ServiceOptions,
    /// Which group-versions are served.
    #[command(flatten)]
    pub api_enablement: ApiEnablementOptions,
    /// Optional features.
    #[command(flatten)]
    pub features: FeatureOptions,
    /// What the log says, and how.
    #[command(flatten)]
    pub logging: LoggingOptions,
}

impl Options {
    /// Every group's checks, then those across groups; an error is a usage error (exit 2).
    pub fn validate(&self) -> Vec<String> {
        let mut errors = Vec::new();
        errors.extend(self.serving.validate());
        errors.extend(self.storage.validate());
        errors.extend(self.authorization.validate());
        errors.extend(self.audit.validate());
        errors.extend(self.aggregator.validate());
        errors.extend(self.api_enablement.validate());
        errors.extend(self.services.validate());
        errors.extend(self.admission.validate());
        errors.extend(self.features.validate());
        errors.extend(self.exposure());
        errors
    }

    /// No unprotected server on the network: off loopback, TLS and an authenticator.
    fn exposure(&self) -> Option<String> {
        let exposed = (self.serving.addresses().iter()).any(|a| !a.ip().is_loopback());
        let authenticates = self.authentication.authenticates();
        if exposed && (self.serving.tls_cert_file.is_none() || !authenticates) {
            return Some(
                "serving on a non-loopback address needs TLS (--tls-cert-file, \
                 --tls-private-key-file) and an authenticator (--client-ca-file, \
                 --token-auth-file or --oidc-issuer-url); listen on 127.0.0.1 to run without \
                 them"
                    .to_owned(),
            );
        }
        let everything = self.authorization.allows_everything();
        if exposed && everything {
            tracing::warn!(
                "--authorization-mode=AlwaysAllow: every authenticated user may do everything; \
                 use --authorization-mode=RBAC"
            );
        }
        if !exposed && !authenticates && everything {
            tracing::info!(
                "no authentication and --authorization-mode=AlwaysAllow: every request is allowed \
                 (listening on loopback only)"
            );
        }
        None
    }
}

/// The start-up error of a flag that needs one of Kubernetes' feature sets this server was
/// built without.
fn missing_set(flag: &str, feature: &str, set: &str) -> String {
    format!(
        "{flag} needs Kubernetes' {set} set, which this server was built without: build it \
         with kapi's `{feature}` feature and list kapi::kinds::{set} in its API's kinds"
    )
}
