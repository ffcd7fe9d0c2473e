//! Leader election with a `coordination.k8s.io` Lease: of several replicas, exactly one
//! runs the controllers; when it goes, another takes over once the Lease expires (or at
//! once, when the leader stops cleanly and hands the Lease back).
//!
//! The protocol is client-go's: the holder renews `renewTime` every retry period;
//! anyone may take a Lease whose `renewTime + leaseDurationSeconds` has passed. Every
//! write carries the resourceVersion it read, so of two candidates taking an expired
//! Lease at once the API server accepts exactly one (see DECISIONS: no maintained crate
//! supports our kube version, and the one closest to it takes over with an unguarded
//! merge patch, which lets two replicas lead at once).
//!
//! [`decide`] is the pure rule; [`Elector`] does the reads and writes.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};

/// Timings, with controller-runtime's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timings {
    /// How long a Lease holds without renewal.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up leading.
    pub renew_deadline: Duration,
    /// How often candidates try, and the leader renews.
    pub retry_period: Duration,
}

impl Default for Timings {
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// What a candidate does with the Lease it read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// There is none: create it, held by us.
    Create,
    /// We hold it: renew it.
    Renew,
    /// It expired (or was handed back): take it.
    Take,
    /// Someone else holds it until then.
    Wait {
        /// Who.
        holder: String,
    },
}

/// What `me` does with `lease` at `now`.
pub fn decide(lease: Option<&LeaseSpec>, me: &str, now: Timestamp) -> Step {
    let Some(spec) = lease else {
        return Step::Create;
    };
    let holder = spec.holder_identity.clone().unwrap_or_default();
    if holder == me {
        return Step::Renew;
    }
    let expires = spec.renew_time.as_ref().map(|renewed| {
        renewed.0 + SignedDuration::from_secs(i64::from(spec.lease_duration_seconds.unwrap_or(0)))
    });
    match expires {
        Some(expires) if !holder.is_empty() && now < expires => Step::Wait { holder },
        _ => Step::Take,
    }
}

/// Reads and writes one Lease as one candidate.
pub struct Elector {
    api: Api<Lease>,
    name: String,
    identity: String,
    timings: Timings,
}

impl Elector {
    /// Candidate `identity` for Lease `namespace/name`.
    pub fn new(
        client: kube::Client,
        namespace: &str,
        name: &str,
        identity: &str,
        timings: Timings,
    ) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            name: name.into(),
            identity: identity.into(),
            timings,
        }
    }

    /// One attempt to acquire or renew; whether we hold the Lease afterwards.
    pub async fn try_acquire_or_renew(&self) -> Result<bool, kube::Error> {
        let now = Timestamp::now();
        let current = self.api.get_opt(&self.name).await?;
        let step = decide(
            current.as_ref().and_then(|l| l.spec.as_ref()),
            &self.identity,
            now,
        );
        let seconds = i32::try_from(self.timings.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let result = match (step, current) {
            (Step::Wait { .. }, _) => return Ok(false),
            (Step::Create, _) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(LeaseSpec {
                        holder_identity: Some(self.identity.clone()),
                        lease_duration_seconds: Some(seconds),
                        acquire_time: Some(MicroTime(now)),
                        renew_time: Some(MicroTime(now)),
                        lease_transitions: Some(0),
                        ..LeaseSpec::default()
                    }),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
            (step, Some(mut lease)) => {
                let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
                if step == Step::Take {
                    spec.holder_identity = Some(self.identity.clone());
                    spec.acquire_time = Some(MicroTime(now));
                    spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
                }
                spec.renew_time = Some(MicroTime(now));
                spec.lease_duration_seconds = Some(seconds);
                // Carries the resourceVersion read above: a concurrent taker loses.
                self.api
                    .replace(&self.name, &PostParams::default(), &lease)
                    .await
            }
            (_, None) => return Ok(false),
        };
        match result {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Hands the Lease back if we hold it, so another candidate takes it at once.
    pub async fn release(&self) -> Result<(), kube::Error> {
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            return Ok(());
        };
        let Some(spec) = lease.spec.as_mut() else {
            return Ok(());
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Waits until this candidate holds the Lease.
    pub async fn acquire(&self) {
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => return,
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(%error, lease = %self.name, "could not read or write the leader Lease")
                }
            }
            tokio::time::sleep(self.timings.retry_period).await;
        }
    }

    /// Renews the Lease every retry period; returns when leadership is lost (the Lease
    /// taken by another, or not renewed within the renew deadline).
    pub async fn keep(&self) {
        let mut last_renewed = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(self.timings.retry_period).await;
            match self.try_acquire_or_renew().await {
                Ok(true) => last_renewed = tokio::time::Instant::now(),
                Ok(false) => return,
                Err(error) => {
                    tracing::warn!(%error, lease = %self.name, "could not renew the leader Lease");
                    if last_renewed.elapsed() > self.timings.renew_deadline {
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(holder: &str, renewed: Timestamp, seconds: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: (!holder.is_empty()).then(|| holder.to_string()),
            renew_time: Some(MicroTime(renewed)),
            lease_duration_seconds: Some(seconds),
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn the_lease_rule() {
        let t0: Timestamp = "2026-08-10T12:00:00Z".parse().expect("a time");
        let at = |s: i64| t0 + SignedDuration::from_secs(s);
        assert_eq!(decide(None, "a", t0), Step::Create);
        assert_eq!(decide(Some(&lease("a", t0, 15)), "a", at(100)), Step::Renew);
        assert_eq!(
            decide(Some(&lease("b", t0, 15)), "a", at(14)),
            Step::Wait { holder: "b".into() }
        );
        assert_eq!(decide(Some(&lease("b", t0, 15)), "a", at(15)), Step::Take);
        // Handed back: free at once, whatever the times say.
        assert_eq!(decide(Some(&lease("", t0, 15)), "a", at(1)), Step::Take);
        // A Lease nobody ever renewed is free.
        let mut never = lease("b", t0, 15);
        never.renew_time = None;
        assert_eq!(decide(Some(&never), "a", t0), Step::Take);
    }
}
