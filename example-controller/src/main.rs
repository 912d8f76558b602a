//! `webapp-controller`: the example API's controller, written with kube-rs on the
//! `api-types` types themselves (no second declaration of the WebApp for kube-rs).
//!
//! With leader election (the default, as kube-controller-manager), only the instance that
//! holds the Lease reconciles; on SIGTERM or SIGINT it stops reconciling and releases the
//! Lease for the next; when it cannot renew the Lease within the renew deadline it stops
//! reconciling and exits with an error, as kube-controller-manager does ("leaderelection
//! lost"), for its supervisor to start it again as a candidate.

mod flags;
mod leader;
mod reconcile;

use anyhow::Context as _;
use clap::Parser;
use flags::Flags;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let flags = Flags::parse();
    if let Err(error) = flags.check() {
        anyhow::bail!("invalid leader election flags: {error}");
    }
    let client = client(&flags).await?;
    let identity = flags.identity();
    let reconciling = reconcile::run(client.clone(), &identity);
    if !flags.leader_elect {
        tokio::select! {
            () = reconciling => {}
            () = shutdown() => tracing::info!("stopping"),
        }
        return Ok(());
    }
    let mut elector = leader::Elector::new(
        client,
        &flags.leader_elect_resource_namespace,
        &flags.leader_elect_resource_name,
        identity.clone(),
        (
            flags.leader_elect_lease_duration,
            flags.leader_elect_renew_deadline,
            flags.leader_elect_retry_period,
        ),
    );
    tokio::select! {
        () = elector.acquire() => {}
        () = shutdown() => return Ok(()),
    }
    tokio::select! {
        () = reconciling => Ok(()),
        () = elector.keep_renewing() => anyhow::bail!("leaderelection lost"),
        () = shutdown() => {
            tracing::info!("stopping: releasing the leader lease");
            elector.release().await;
            Ok(())
        }
    }
}

/// The client, from `--kubeconfig` when given, else as kube-rs infers its configuration
/// (`KUBECONFIG`, `~/.kube/config`, in-cluster).
async fn client(flags: &Flags) -> anyhow::Result<kube::Client> {
    let config = match &flags.kubeconfig {
        Some(path) => {
            let kubeconfig = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("reading the kubeconfig {}", path.display()))?;
            let options = kube::config::KubeConfigOptions::default();
            kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .with_context(|| format!("using the kubeconfig {}", path.display()))?
        }
        None => kube::Config::infer()
            .await
            .context("finding a cluster configuration")?,
    };
    kube::Client::try_from(config).context("building the client")
}

/// SIGTERM or SIGINT.
async fn shutdown() {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("installing the SIGTERM handler");
    tokio::select! {
        _ = terminate.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
