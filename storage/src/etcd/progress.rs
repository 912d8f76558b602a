//! Progress requests on etcd's watches ([`Storage::request_progress`]), and whether the
//! cluster answers them in order.
//!
//! A progress request asks a member for a notification at its current revision on a watch
//! stream. Before v3.4.31 and v3.5.13 etcd sent that answer beside the stream's events
//! rather than in order with them (etcd-io/etcd#15220): the notification could overtake
//! events of lower revisions still on their way, and a watch cache trusting it would skip
//! them. So, as kube-apiserver's feature check does, this backend asks every configured
//! endpoint its version (`Maintenance.Status`) and sends progress requests only once each
//! has answered with a version that has the fix. The check runs in the background from
//! [`EtcdStorage::connect`](super::EtcdStorage::connect), retrying endpoints that do not
//! answer; until it succeeds no request is sent, and a watch cache that is behind leaves
//! consistent reads to etcd, which is always correct.
//!
//! [`Storage::request_progress`]: crate::Storage::request_progress

use std::sync::Weak;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use etcd_client::{Client, ConnectOptions};
use tokio::sync::watch;

/// The first and the longest pause between two rounds of the version check (kube's).
const CHECK_BACKOFF: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(15));

/// Whether progress requests are sent, and the signal that makes every watch send one.
pub(super) struct Progress {
    /// Whether the cluster answers progress requests in order with events.
    supported: AtomicBool,
    /// Counts the requests; each watch sends one progress request per change it sees.
    requests: watch::Sender<u64>,
}

impl Progress {
    /// Progress requests decided once and for all (`Some`), or left to [`check`].
    pub(super) fn new(decided: Option<bool>) -> Progress {
        Progress {
            supported: AtomicBool::new(decided.unwrap_or(false)),
            requests: watch::Sender::new(0),
        }
    }

    /// Whether the cluster answers progress requests in order.
    pub(super) fn supported(&self) -> bool {
        self.supported.load(Ordering::Acquire)
    }

    /// Makes every watch send a progress request, if the cluster answers them in order.
    pub(super) fn request(&self) {
        if self.supported() {
            self.requests
                .send_modify(|count| *count = count.wrapping_add(1));
        }
    }

    /// What a new watch follows: requests made from now on.
    pub(super) fn subscribe(&self) -> watch::Receiver<u64> {
        self.requests.subscribe()
    }
}

/// Whether etcd `version` ("3.5.13") sends progress notifications in order with events:
/// v3.4.31+, v3.5.13+ and every later minor version.
pub(super) fn answers_in_order(version: &str) -> bool {
    let mut numbers = version.split('.').map(|part| {
        let digits = part.bytes().take_while(u8::is_ascii_digit).count();
        part[..digits].parse::<u64>().ok()
    });
    let (Some(Some(major)), Some(Some(minor)), patch) =
        (numbers.next(), numbers.next(), numbers.next())
    else {
        return false;
    };
    let patch = patch.flatten().unwrap_or(0);
    match (major, minor) {
        (3, 4) => patch >= 31,
        (3, 5) => patch >= 13,
        (3, minor) => minor >= 6,
        (major, _) => major > 3,
    }
}

/// Asks each of `endpoints` its version until all have answered, then turns progress
/// requests on if every version answers in order. Ends early when the storage is dropped
/// or a version does not.
pub(super) async fn check(
    progress: Weak<Progress>,
    endpoints: Vec<String>,
    connect: ConnectOptions,
) {
    let mut unchecked = endpoints;
    let mut pause = CHECK_BACKOFF.0;
    loop {
        let mut unanswered = Vec::new();
        for endpoint in unchecked {
            match version_of(&endpoint, &connect).await {
                Ok(version) if answers_in_order(&version) => {}
                Ok(version) => {
                    tracing::info!(
                        %endpoint,
                        %version,
                        "etcd older than v3.4.31 / v3.5.13 does not order progress \
                         notifications with events: consistent reads that a watch cache \
                         cannot answer at once go to etcd"
                    );
                    return;
                }
                Err(error) => {
                    tracing::debug!(%endpoint, %error, "etcd version check failed; retrying");
                    unanswered.push(endpoint);
                }
            }
        }
        let Some(progress) = progress.upgrade() else {
            return;
        };
        if unanswered.is_empty() {
            progress.supported.store(true, Ordering::Release);
            return;
        }
        drop(progress);
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(CHECK_BACKOFF.1);
        unchecked = unanswered;
    }
}

/// The version of the member at `endpoint`, asked on a connection of its own.
async fn version_of(endpoint: &str, connect: &ConnectOptions) -> Result<String, String> {
    let client = Client::connect([endpoint], Some(connect.clone())).await;
    let mut maintenance = client.map_err(|e| e.to_string())?.maintenance_client();
    let status = maintenance.status().await.map_err(|e| e.to_string())?;
    Ok(status.version().to_owned())
}

#[cfg(test)]
mod tests {
    use super::answers_in_order;

    /// kube-apiserver's thresholds: the fix of etcd-io/etcd#15220 shipped in v3.4.31 and
    /// v3.5.13.
    #[test]
    fn versions_with_ordered_progress() {
        for version in [
            "3.4.31", "3.4.40", "3.5.13", "3.5.21", "3.6.0", "3.7.1", "4.0.0",
        ] {
            assert!(answers_in_order(version), "{version}");
        }
        for version in [
            "3.4.23", "3.4.30", "3.5.0", "3.5.12", "3.3.27", "2.3.8", "", "x",
        ] {
            assert!(!answers_in_order(version), "{version}");
        }
        // Pre-releases and build suffixes are read by their numbers.
        assert!(answers_in_order("3.5.13-rc.0"));
        assert!(!answers_in_order("3.4.30+git"));
    }
}
