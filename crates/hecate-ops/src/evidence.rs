//! Fides, from the cluster's side: reaching the Fides a Gate names, recording
//! approvals there, assembling a Bundle's evidence, and checking recorded chains.

use hecate_fides::model::{Approval, ApprovalRole};
use hecate_types::secrets::SecretUse;
use hecate_types::{Bundle, Gate, Passage};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt as _;
use kube::api::Api;

use crate::error::{Action, Error, Kind, Result};
use crate::model::{CrossingVerification, Evidence, FidesRecord, VerifyReport};
use crate::ops::Ops;
use crate::rules::eligibility::passages_newest_first;
use crate::rules::refusal::{Refusal, RefusalCode};
use crate::rules::verify;

fn fides_error(context: &str) -> impl FnOnce(hecate_fides::Error) -> Error + '_ {
    move |e| Error::Fides {
        context: context.into(),
        message: e.to_string(),
    }
}

/// A client for the Fides `gate` names: its `evidence.serverURL` (else
/// `default_server`, the process's `--fides-server`), authenticated with the `token` of
/// its `evidence.credentialsRef` Secret, read through `client` — a Secret that opts in
/// (`hecate_types::secrets`, DECISION 147). The one way to reach
/// Fides — ops' evidence and approvals, the controller's `evidence-gate` step and its
/// attestation on finish all dial here — so a Gate is never checked on one server and
/// recorded on another.
pub async fn dial_fides(
    client: &kube::Client,
    gate: &Gate,
    default_server: &str,
) -> Result<hecate_fides::Client> {
    dial_fides_trusting(client, gate, default_server, &[]).await
}

/// [`dial_fides`], the client trusting the CA certificates `roots` besides the web
/// PKI's: the controller hands over the platform's, as its other clients trust them.
pub async fn dial_fides_trusting(
    client: &kube::Client,
    gate: &Gate,
    default_server: &str,
    roots: &[hecate_fides::Certificate],
) -> Result<hecate_fides::Client> {
    let fail = |message: String| Error::Fides {
        context: "reaching Fides".into(),
        message,
    };
    let namespace = gate.namespace().unwrap_or_default();
    let Some(evidence) = &gate.spec.evidence else {
        return Err(fail(format!(
            "Gate {} has no evidence configuration",
            gate.name_any()
        )));
    };
    let server = if evidence.server_url.is_empty() {
        default_server
    } else {
        evidence.server_url.as_str()
    };
    let Some(credentials) = &evidence.credentials_ref else {
        return Err(fail(
            "the Gate has no evidence.credentialsRef, and Fides rejects an unauthenticated request"
                .into(),
        ));
    };
    let secret = Api::<Secret>::namespaced(client.clone(), &namespace)
        .get(&credentials.name)
        .await
        .map_err(|e| {
            fail(format!(
                "reading Secret {namespace}/{}: {e}",
                credentials.name
            ))
        })?;
    // The Gate's author chose where the token goes (`serverURL`), whoever reads it.
    hecate_types::secrets::judge(
        &namespace,
        &credentials.name,
        secret.metadata.labels.as_ref(),
        SecretUse::Credentials,
    )
    .map_err(fail)?;
    let token = secret
        .data
        .as_ref()
        .and_then(|d| d.get("token"))
        .map(|t| String::from_utf8_lossy(&t.0).into_owned())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| fail(format!("the Secret {} has no token", credentials.name)))?;
    hecate_fides::Client::trusting(
        &hecate_fides::Config {
            base_url: server.into(),
            token,
            timeout: None,
        },
        roots,
    )
    .map_err(|e| fail(e.to_string()))
}

/// The verification `passage` records, if it records one.
fn verification_of(passage: &Passage) -> Option<CrossingVerification> {
    let record = passage.status.as_ref()?.verification.clone()?;
    Some(CrossingVerification {
        gate: passage.spec.gate.clone(),
        passage: passage.name_any(),
        phase: record.phase,
        started_at: record.started_at,
        finished_at: record.finished_at,
        message: record.message,
        verifiers: record.verifiers,
    })
}

impl Ops {
    /// [`dial_fides`] with this Ops' client and default server.
    pub(crate) async fn dial_fides(&self, gate: &Gate) -> Result<hecate_fides::Client> {
        dial_fides(&self.client(), gate, self.fides_server()).await
    }

    /// Records `actor`'s approval of `bundle` in the Fides the Gate binds, before the
    /// approval is written to the cluster: if Fides fails, nothing is written, and
    /// running the same command again completes it (Fides upserts). Gates without
    /// evidence configuration never touch Fides.
    pub(crate) async fn record_approval_evidence(
        &self,
        gate: &Gate,
        bundle: &Bundle,
        actor: &str,
    ) -> Result<()> {
        if gate.spec.evidence.is_none() {
            return Ok(());
        }
        let refuse =
            |code, reason: String| Error::refused(Action::Approve, Refusal::new(code, reason));
        let fides = self.dial_fides(gate).await.map_err(|e| match e {
            Error::Fides { message, .. } => Error::Fides {
                context: "reaching Fides to record the approval".into(),
                message,
            },
            other => other,
        })?;
        let (gate_name, bundle_name) = (gate.name_any(), bundle.name_any());
        let Some(digest) = bundle.image_digests().next() else {
            return Err(refuse(
                RefusalCode::NoImageDigest,
                format!(
                    "Gate {gate_name} checks evidence, but Bundle {bundle_name} pins no image digest: there is nothing to record an approval against"
                ),
            ));
        };
        let trail = fides
            .trail_for_artifact(digest)
            .await
            .map_err(fides_error("looking up the artifact's trail"))?;
        let Some(trail) = trail else {
            return Err(refuse(
                RefusalCode::NoFidesTrail,
                format!(
                    "Fides has no record of {digest}, so the approval has nothing to attach to: the build that produced it did not report the artifact"
                ),
            ));
        };
        let namespace = gate.namespace().unwrap_or_default();
        let approval = Approval {
            by: actor.into(),
            role: ApprovalRole::Approver,
            reason: format!("approved for Gate {gate_name} in {namespace}"),
        };
        match fides.record_approval(&trail, &approval).await {
            Ok(()) => Ok(()),
            Err(e) if e.is_uncounted() => {
                Err(refuse(RefusalCode::ApprovalNotCounted, e.to_string()))
            }
            Err(e) => Err(fides_error("recording the approval in Fides")(e)),
        }
    }

    /// Records a "no" — or its withdrawal — on the artifact's Fides trail, when the
    /// Gate records evidence there: an attestation of type `hecate-rejection` (or
    /// `hecate-rejection-withdrawn`) naming the Gate, the person and the reason. Asked
    /// after the cluster's write, so a "no" never waits on Fides; what Fides answered
    /// is the answer's `fides` (`None`: the Gate records nothing in Fides).
    pub(crate) async fn record_rejection_evidence(
        &self,
        gate: &Gate,
        bundle: &Bundle,
        by: &str,
        reason: &str,
        withdrawn: bool,
    ) -> Option<FidesRecord> {
        gate.spec.evidence.as_ref()?;
        let (gate_name, bundle_name) = (gate.name_any(), bundle.name_any());
        let Some(digest) = bundle.image_digests().next() else {
            return Some(FidesRecord::not_recorded(format!(
                "Bundle {bundle_name} pins no image digest to record it against"
            )));
        };
        let recorded = async {
            let fides = self.dial_fides(gate).await?;
            let trail = fides
                .trail_for_artifact(digest)
                .await
                .map_err(fides_error("looking up the artifact's trail"))?
                .ok_or_else(|| Error::Fides {
                    context: "recording the rejection".into(),
                    message: format!("Fides has no trail for {digest}"),
                })?;
            let (name, type_name) = if withdrawn {
                ("rejection-withdrawn", "hecate-rejection-withdrawn")
            } else {
                ("rejection", "hecate-rejection")
            };
            let attestation = hecate_fides::model::Attestation {
                name: name.into(),
                type_name: type_name.into(),
                artifact: digest.into(),
                payload: serde_json::json!({
                    "gate": gate_name,
                    "namespace": gate.namespace().unwrap_or_default(),
                    "bundle": bundle_name,
                    "by": by,
                    "reason": reason,
                }),
                signed_by: String::new(),
            };
            fides
                .attest(&trail, &attestation)
                .await
                .map_err(fides_error("recording the rejection in Fides"))?;
            Ok::<_, Error>(trail)
        }
        .await;
        Some(match recorded {
            Ok(trail) => FidesRecord {
                trail,
                problem: String::new(),
            },
            Err(error) => FidesRecord::not_recorded(hecate_types::error_chain(&error)),
        })
    }

    /// Everything Fides holds about a Bundle's artifact: the trail, the change gate's
    /// verdict (controls, approvals, segregation of duties), an ITSM change request if
    /// one is attested, and the approvals Hecate recorded.
    ///
    /// Never fails for want of evidence: no Gate configured for Fides, no image digest,
    /// no trail — each is an answer, in `unavailable`. Only a configured Fides that
    /// does not answer is an error, because that one is worth retrying.
    ///
    /// What verification said of each crossing of the Bundle (`verifications`) is the
    /// cluster's record, read with one LIST of the Bundle's Passages and there on every
    /// answer, Fides or not.
    pub async fn evidence(&self, namespace: &str, bundle: &str) -> Result<Evidence> {
        let (bundle, gates, mut passages) = futures::try_join!(
            self.bundle(namespace, bundle),
            self.gates(namespace),
            self.passages_matching(namespace, None, Some(bundle)),
        )?;
        passages.sort_by(passages_newest_first);
        let mut evidence = Evidence {
            bundle: bundle.name_any(),
            namespace: namespace.into(),
            digest: String::new(),
            trail: String::new(),
            gate: String::new(),
            verdict: None,
            change: None,
            approved_in: bundle
                .status
                .as_ref()
                .map(|s| s.approved_for.clone())
                .unwrap_or_default(),
            unavailable: String::new(),
            verifications: passages.iter().filter_map(verification_of).collect(),
        };
        let Some(gate) = gates.iter().find(|g| g.spec.evidence.is_some()) else {
            evidence.unavailable = "no Gate in this namespace records evidence in Fides".into();
            return Ok(evidence);
        };
        evidence.gate = gate.name_any();
        let Some(digest) = bundle.image_digests().next() else {
            evidence.unavailable = format!(
                "Bundle {} pins no image digest, so there is no artifact to hold evidence about",
                evidence.bundle
            );
            return Ok(evidence);
        };
        evidence.digest = digest.into();
        let fides = self.dial_fides(gate).await?;
        let trail = fides
            .trail_for_artifact(digest)
            .await
            .map_err(fides_error("looking up the artifact's trail"))?;
        let Some(trail) = trail else {
            evidence.unavailable = format!(
                "Fides has no trail for {digest}: the build that produced it did not report the artifact"
            );
            return Ok(evidence);
        };
        evidence.verdict = Some(
            fides
                .change_gate(&trail)
                .await
                .map_err(fides_error("reading the change-gate verdict"))?,
        );
        // Best effort: most trails have no ITSM check, and its absence is not news.
        evidence.change = fides.change_request_for(&trail).await.ok().flatten();
        evidence.trail = trail;
        Ok(evidence)
    }

    /// Checks the chain of every trail a crossing of `bundle` recorded (Passages with
    /// `status.evidence.trail`), in `namespace` or — `None` — every namespace, sorted
    /// by Gate then Passage. Every chain is checked; none stops the others.
    pub async fn verify_bundle(
        &self,
        namespace: Option<&str>,
        bundle: &str,
        fides: &hecate_fides::Client,
    ) -> Result<Vec<VerifyReport>> {
        let passages = self
            .list::<hecate_types::Passage>(Kind::Passage, namespace)
            .await?;
        let mut crossings: Vec<(String, String, String)> = passages
            .into_iter()
            .filter(|p| p.spec.bundle == bundle)
            .filter_map(|p| {
                let trail = p.status.as_ref()?.evidence.as_ref()?.trail.clone();
                (!trail.is_empty()).then(|| (p.spec.gate.clone(), p.name_any(), trail))
            })
            .collect();
        crossings.sort();
        let checks = crossings
            .into_iter()
            .map(|(gate, passage, trail)| async move {
                let answer = fides.verify_chain(&trail).await.map_err(|e| e.to_string());
                verify::report(&gate, &passage, &trail, answer)
            });
        Ok(futures::future::join_all(checks).await)
    }

    /// Checks one trail's chain. Needs no cluster, so it needs no `Ops`.
    pub async fn verify_trail(trail: &str, fides: &hecate_fides::Client) -> VerifyReport {
        verify::report(
            "",
            "",
            trail,
            fides.verify_chain(trail).await.map_err(|e| e.to_string()),
        )
    }
}
