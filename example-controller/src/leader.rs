//! Leader election on a `coordination.k8s.io/v1` Lease, client-go's protocol
//! (`tools/leaderelection`) implemented once, so that this controller, client-go's and
//! controller-runtime's take turns on the same Lease:
//!
//! - a candidate tries every retry period (with up to 20% jitter): it reads the Lease and
//!   takes it when it is free (no holder) or expired, i.e. unchanged for the lease duration
//!   since this candidate *observed* it (its own clock: no trust in other hosts' clocks).
//!   Taking it is a replace conditioned on the resourceVersion read, so of two candidates
//!   only one wins; a new holder sets `acquireTime` and bumps `leaseTransitions`;
//! - the leader renews every retry period (`renewTime`); when no renewal succeeds within
//!   the renew deadline, it stops leading;
//! - on shutdown the leader releases the Lease (empty `holderIdentity`, a lease of one
//!   second, as client-go's `ReleaseOnCancel`), so the next candidate takes it at its next
//!   try instead of waiting for the lease to expire.
//!
//! kube-lease-manager (the one Lease crate for kube 5) was evaluated and not used: its
//! candidates sleep until the lease expires rather than retrying, it has no renew
//! deadline, and it writes with patches rather than client-go's conditional replace.

use std::time::{Duration, Instant, SystemTime};

use api_types::coordination::{Lease, LeaseSpec};
use kapi::meta::MicroTime;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};

use crate::flags::JITTER_FACTOR;

/// One candidate for one Lease.
pub(crate) struct Elector {
    leases: Api<Lease>,
    name: String,
    identity: String,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    /// The Lease's spec as last read, and when it was first read so (client-go's
    /// `observedRecord` and `observedTime`).
    observed: Option<(LeaseSpec, Instant)>,
}

impl Elector {
    /// A candidate named `identity` for the Lease `namespace/name`.
    pub(crate) fn new(
        client: kube::Client,
        namespace: &str,
        name: &str,
        identity: String,
        (lease_duration, renew_deadline, retry_period): (Duration, Duration, Duration),
    ) -> Elector {
        Elector {
            leases: Api::namespaced(client, namespace),
            name: name.to_owned(),
            identity,
            lease_duration,
            renew_deadline,
            retry_period,
            observed: None,
        }
    }

    /// Tries until this candidate holds the Lease.
    pub(crate) async fn acquire(&mut self) {
        tracing::info!(lease = %self.name, identity = %self.identity, "attempting to acquire the leader lease");
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => {
                    tracing::info!(lease = %self.name, identity = %self.identity, "acquired the leader lease");
                    return;
                }
                Ok(false) => {}
                Err(error) => tracing::warn!(%error, "error acquiring the leader lease"),
            }
            tokio::time::sleep(jittered(self.retry_period)).await;
        }
    }

    /// Renews the Lease every retry period while this candidate leads; returns when a
    /// renewal did not succeed within the renew deadline.
    pub(crate) async fn keep_renewing(&mut self) {
        loop {
            tokio::time::sleep(self.retry_period).await;
            let deadline = Instant::now() + self.renew_deadline;
            loop {
                match tokio::time::timeout_at(deadline.into(), self.try_acquire_or_renew()).await {
                    Ok(Ok(true)) => break,
                    Ok(Ok(false)) => {
                        tracing::error!(lease = %self.name, "the leader lease was taken by another");
                        return;
                    }
                    Ok(Err(error)) => tracing::warn!(%error, "error renewing the leader lease"),
                    Err(_) => {}
                }
                if Instant::now() + self.retry_period >= deadline {
                    tracing::error!(lease = %self.name, "failed to renew the leader lease within the renew deadline");
                    return;
                }
                tokio::time::sleep(self.retry_period).await;
            }
        }
    }

    /// Gives the Lease up if this candidate holds it: no holder, a one-second lease.
    pub(crate) async fn release(&mut self) {
        let lease = match self.leases.get_opt(&self.name).await {
            Ok(Some(lease)) => lease,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "reading the leader lease to release it");
                return;
            }
        };
        if lease.spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return;
        }
        let now = micro_now();
        let spec = LeaseSpec {
            holder_identity: Some(String::new()),
            lease_duration_seconds: Some(1),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            lease_transitions: lease.spec.lease_transitions,
            ..LeaseSpec::default()
        };
        let released = Lease { spec, ..lease };
        match self
            .leases
            .replace(&self.name, &PostParams::default(), &released)
            .await
        {
            Ok(_) => tracing::info!(lease = %self.name, "released the leader lease"),
            Err(error) => tracing::warn!(%error, "releasing the leader lease"),
        }
    }

    /// client-go's `tryAcquireOrRenew`: whether this candidate holds the Lease afterwards.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = micro_now();
        let Some(lease) = self.leases.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: self.held_spec(None, now),
            };
            return match self.leases.create(&PostParams::default(), &lease).await {
                Ok(created) => {
                    self.observe(&created.spec);
                    Ok(true)
                }
                Err(error) if conflict(&error) => Ok(false),
                Err(error) => Err(error),
            };
        };
        self.observe(&lease.spec);
        let holder = lease.spec.holder_identity.as_deref().unwrap_or_default();
        let held_by_us = holder == self.identity;
        if !holder.is_empty() && !held_by_us && !self.expired(&lease.spec) {
            return Ok(false);
        }
        let previous = held_by_us.then_some(&lease.spec);
        let spec = self.held_spec(previous, now);
        let taken = Lease { spec, ..lease };
        match self
            .leases
            .replace(&self.name, &PostParams::default(), &taken)
            .await
        {
            Ok(replaced) => {
                self.observe(&replaced.spec);
                Ok(true)
            }
            Err(error) if conflict(&error) => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// The spec of a Lease this candidate holds: renewed now, acquired now unless it
    /// already held it (`previous`), one more transition when it changes hands.
    fn held_spec(&self, previous: Option<&LeaseSpec>, now: MicroTime) -> LeaseSpec {
        let observed = self.observed.as_ref().map(|(spec, _)| spec);
        let transitions = observed
            .and_then(|spec| spec.lease_transitions)
            .unwrap_or(0);
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(
                i32::try_from(self.lease_duration.as_secs())
                    .unwrap_or(i32::MAX)
                    .max(1),
            ),
            acquire_time: match previous {
                Some(previous) => previous.acquire_time.clone().or(Some(now.clone())),
                None => Some(now.clone()),
            },
            renew_time: Some(now),
            lease_transitions: Some(match (previous, observed) {
                (Some(_), _) => transitions,
                (None, Some(_)) => transitions + 1,
                (None, None) => 0,
            }),
            ..LeaseSpec::default()
        }
    }

    /// Notes the spec read, and when, if it changed.
    fn observe(&mut self, spec: &LeaseSpec) {
        let unchanged = self.observed.as_ref().is_some_and(|(seen, _)| seen == spec);
        if !unchanged {
            self.observed = Some((spec.clone(), Instant::now()));
        }
    }

    /// Whether the holder let the Lease lapse: unchanged for its lease duration since it
    /// was observed so.
    fn expired(&self, spec: &LeaseSpec) -> bool {
        let duration = (spec.lease_duration_seconds)
            .and_then(|seconds| u64::try_from(seconds).ok())
            .map_or(self.lease_duration, Duration::from_secs);
        match &self.observed {
            Some((_, since)) => since.elapsed() >= duration,
            None => false,
        }
    }
}

/// `period` plus up to 20% (client-go's `wait.Jitter` with `JitterFactor`).
fn jittered(period: Duration) -> Duration {
    let random = f64::from(uuid::Uuid::new_v4().as_u128() as u16) / f64::from(u16::MAX);
    period.mul_f64(1.0 + (JITTER_FACTOR - 1.0) * random)
}

/// Now, as a Lease's times are written.
fn micro_now() -> MicroTime {
    MicroTime(kapi::meta::timestamp(SystemTime::now()))
}

/// A 409: another candidate wrote the Lease first (or created it).
fn conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409)
}
