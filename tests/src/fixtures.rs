//! Small objects for tests, created through the API server in a [`TestEnv`]'s
//! namespace — statuses through the status subresource, as a controller writes them.
//! One Beacon (`app`) feeds everything; Gates cross with two steps.

use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ObjectMeta, Patch, PatchParams};

use hecate_types::{
    Admission, Artifact, Bundle, BundleApproval, BundleOrigin, BundleSpec, BundleStatus,
    CommitArtifact, CommitSummary, Gate, GateCrossing, GateSpec, Passage, PassagePhase,
    PassageSpec, PassageStatus, PassageTemplate, RolloutPhase, RolloutStatus, Step, TargetPhase,
    TargetStatus, Time, wellknown,
};

use crate::TestEnv;

/// Secret `name` holding `pairs` as data, labelled `hecate.dev/usable=true`: Hecate
/// uses a Secret a Gate or Beacon names only once it opts in (DECISION 147).
pub fn usable_secret(name: &str, pairs: &[(&str, &str)]) -> Secret {
    let mut secret = unlabelled_secret(name, pairs);
    secret.metadata.labels =
        Some([(wellknown::LABEL_USABLE.to_string(), "true".to_string())].into());
    secret
}

/// Opts Secret `name` in to use by Gates and Beacons (`hecate.dev/usable=true`), or
/// out (the label removed), as someone who may write it would.
pub async fn set_usable(env: &TestEnv, name: &str, usable: bool) {
    let value = usable.then_some("true");
    let patch = serde_json::json!({"metadata": {"labels": {wellknown::LABEL_USABLE: value}}});
    env.api::<Secret>()
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_or_else(|e| panic!("labelling Secret {name}: {e}"));
}

/// Secret `name` holding `pairs` as data, without Hecate's opt-in label: one that no
/// Gate or Beacon may use (DECISION 147).
pub fn unlabelled_secret(name: &str, pairs: &[(&str, &str)]) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                .collect(),
        ),
        ..Secret::default()
    }
}

/// The wall clock, as the kinds write time.
pub fn now() -> Time {
    Time(k8s_openapi::jiff::Timestamp::now())
}

/// A Gate admitting Bundles of Beacon `app` after `after`, crossing with `git-push`
/// then `flux-wait`.
pub fn gate_spec(after: &[&str], require_approval: bool) -> GateSpec {
    GateSpec {
        admits: vec![Admission {
            from: BundleOrigin {
                beacon: "app".into(),
            },
            after: after.iter().map(|s| s.to_string()).collect(),
            require_approval,
            approvals: None,
        }],
        passage: Some(PassageTemplate {
            // Steps a Gate may run as written (ops judges each `with:`).
            steps: vec![
                Step {
                    uses: "git-push".into(),
                    ..Step::default()
                },
                Step {
                    uses: "flux-wait".into(),
                    with: Some(serde_json::json!({
                        "resources": [{"kind": "Kustomization", "name": "app"}],
                    })),
                    ..Step::default()
                },
            ],
        }),
        ..GateSpec::default()
    }
}

/// Creates Gate `name`.
pub async fn gate(env: &TestEnv, name: &str, spec: GateSpec) -> Gate {
    env.create(Gate::new(name, spec)).await
}

/// A Bundle of Beacon `app`: one image, `ghcr.io/acme/app:1.0.0` at digest
/// `sha256:abcdef0123456789`.
pub fn bundle_spec() -> BundleSpec {
    BundleSpec {
        beacon: "app".into(),
        artifacts: vec![Artifact::image(
            "ghcr.io/acme/app",
            "1.0.0",
            "sha256:abcdef0123456789",
        )],
        ..BundleSpec::default()
    }
}

/// Production's admission after staging under an approval policy (DECISION 137): two
/// release managers ([`crate::RELEASE_MANAGERS`]), never one who promoted the Bundle
/// through an earlier Gate; approvals lasting `expire_after` (empty: for ever).
pub fn release_managers_spec(expire_after: &str) -> GateSpec {
    let mut spec = gate_spec(&["staging"], true);
    spec.admits[0].approvals = Some(hecate_types::ApprovalPolicy {
        required: vec![hecate_types::ApprovalRule {
            count: 2,
            groups: vec![crate::RELEASE_MANAGERS.into()],
            users: vec![],
        }],
        expire_after: expire_after.into(),
        exclude_upstream_promoters: true,
        ..hecate_types::ApprovalPolicy::default()
    });
    spec
}

/// Creates Bundle `name`, cleared through `gates` by crossings `actor` asked for.
pub async fn cleared_by(env: &TestEnv, name: &str, gates: &[&str], actor: &str) -> Bundle {
    let created = bundle(env, name).await;
    let mut cleared = bundle_status(env, created, gates, &[]).await;
    if let Some(status) = cleared.status.as_mut() {
        for crossing in &mut status.cleared {
            crossing.actor = actor.into();
        }
    }
    env.write_status(&cleared).await
}

/// Creates Bundle `name` ([`bundle_spec`]).
pub async fn bundle(env: &TestEnv, name: &str) -> Bundle {
    env.create(Bundle::new(name, bundle_spec())).await
}

/// Creates Bundles in the order given, a second apart, so that creation time (which
/// the API server sets, to the second) orders them.
pub async fn bundles_in_order(env: &TestEnv, names: &[&str]) -> Vec<Bundle> {
    let mut created = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(1100)).await;
        }
        created.push(bundle(env, name).await);
    }
    created
}

/// Writes which Gates `bundle` cleared (through Passage `<gate>-1`) and who approved
/// it for which Gate (`(gate, actor)`).
pub async fn bundle_status(
    env: &TestEnv,
    mut bundle: Bundle,
    cleared: &[&str],
    approved_for: &[(&str, &str)],
) -> Bundle {
    bundle.status = Some(BundleStatus {
        cleared: cleared
            .iter()
            .map(|g| GateCrossing {
                gate: g.to_string(),
                passage: format!("{g}-1"),
                at: now(),
                actor: String::new(),
                reason: String::new(),
            })
            .collect(),
        approved_for: approved_for
            .iter()
            .map(|(g, actor)| BundleApproval {
                gate: g.to_string(),
                actor: actor.to_string(),
                at: now(),
            })
            .collect(),
        ..BundleStatus::default()
    });
    env.write_status(&bundle).await
}

/// Creates Passage `name` moving `bundle` through `gate` (one `flux-wait` step), in
/// `phase`, its message the phase's name.
pub async fn passage(
    env: &TestEnv,
    name: &str,
    gate: &str,
    bundle: &str,
    phase: PassagePhase,
) -> Passage {
    let mut passage = env
        .create(Passage::new(name, flux_wait_crossing(gate, bundle)))
        .await;
    passage.status = Some(PassageStatus {
        phase: Some(phase),
        message: format!("{phase:?}"),
        ..PassageStatus::default()
    });
    env.write_status(&passage).await
}

/// A crossing of `bundle` through `gate` whose one step is a `flux-wait`.
fn flux_wait_crossing(gate: &str, bundle: &str) -> PassageSpec {
    PassageSpec {
        gate: gate.into(),
        bundle: bundle.into(),
        steps: vec![Step {
            uses: "flux-wait".into(),
            ..Step::default()
        }],
        ..PassageSpec::default()
    }
}

/// How [`halted`] says its rollout halted: the words a halt's blocker shows.
pub const HALT: &str = "canary failed at step 2 (GitRejected); wave 1 (canary) tolerates none";

/// Creates Passage `name` moving `bundle` through `gate`'s targets, running, its
/// rollout halted as the controller records a halt: the canary (wave 1) failed at
/// step 2, eu-1 (wave 2) not started ([`HALT`]).
pub async fn halted(env: &TestEnv, name: &str, gate: &str, bundle: &str) -> Passage {
    let mut crossing = passage(env, name, gate, bundle, PassagePhase::Running).await;
    let at = Time("2026-08-11T12:00:00Z".parse().expect("a time"));
    let status = crossing.status.get_or_insert_with(PassageStatus::default);
    status.rollout = Some(RolloutStatus {
        phase: RolloutPhase::Halted,
        message: format!("halted: {HALT}"),
        targets: vec![
            TargetStatus {
                name: "canary".into(),
                phase: TargetPhase::Failed,
                attempt: 1,
                current_step: 1,
                reason: "GitRejected".into(),
                pushed_revision: "main@sha1:3f1c2a9d0e4b5a6978".into(),
                started_at: Some(at),
                ..TargetStatus::default()
            },
            TargetStatus {
                name: "eu-1".into(),
                wave: 1,
                ..TargetStatus::default()
            },
        ],
        ..RolloutStatus::default()
    });
    env.write_status(&crossing).await
}

/// Creates Passage `name`, a rollback of `targets` of the rollout `undoing` to
/// `bundle` (DECISION 163), finished: each target crossed back.
pub async fn rolled_back_targets(
    env: &TestEnv,
    name: &str,
    gate: &str,
    bundle: &str,
    undoing: &str,
    targets: &[&str],
) -> Passage {
    let mut crossing = Passage::new(
        name,
        PassageSpec {
            targets: targets.iter().map(|t| t.to_string()).collect(),
            ..flux_wait_crossing(gate, bundle)
        },
    );
    crossing.metadata.annotations = Some(
        [(
            hecate_types::wellknown::ANNOTATION_ROLLBACK_OF.to_string(),
            undoing.to_string(),
        )]
        .into(),
    );
    let mut crossing = env.create(crossing).await;
    crossing.status = Some(PassageStatus {
        phase: Some(PassagePhase::Succeeded),
        rollout: Some(RolloutStatus {
            phase: RolloutPhase::Completed,
            targets: targets
                .iter()
                .map(|t| TargetStatus {
                    name: t.to_string(),
                    phase: TargetPhase::Succeeded,
                    attempt: 1,
                    ..TargetStatus::default()
                })
                .collect(),
            ..RolloutStatus::default()
        }),
        ..PassageStatus::default()
    });
    env.write_status(&crossing).await
}

/// The repository [`release_spec`]'s commits are in.
pub const RELEASE_REPO: &str = "https://git.example/app";

/// A commit as a Beacon records one a Bundle brings (DECISION 140): its full SHA
/// (`sha`), subject, author (`Name <email>`) and committer time.
pub fn commit(sha: &str, subject: &str, author: &str, at: Time) -> CommitSummary {
    CommitSummary {
        sha: sha.into(),
        subject: subject.into(),
        author: author.into(),
        committed_at: Some(at),
    }
}

/// A release of Beacon `app` as a Beacon emits one now (DECISION 140): version
/// `version` as its alias; the commit `head` of [`RELEASE_REPO`] tagged `version`,
/// with the subject, author and time of the newest of `brings` (the commits it brings,
/// newest first) counted since commit `since` (empty: not recorded); and the image
/// `ghcr.io/acme/app:<version>`.
pub fn release_spec(
    version: &str,
    head: &str,
    since: &str,
    brings: Vec<CommitSummary>,
) -> BundleSpec {
    let newest = brings.first().cloned().unwrap_or_default();
    BundleSpec {
        beacon: "app".into(),
        alias: version.into(),
        artifacts: vec![
            Artifact {
                commit: Some(CommitArtifact {
                    repo: RELEASE_REPO.into(),
                    sha: head.into(),
                    tag: version.into(),
                    message: newest.subject,
                    author: newest.author,
                    committed_at: newest.committed_at,
                    commits: brings,
                    commits_since: since.into(),
                    ..CommitArtifact::default()
                }),
                ..Artifact::default()
            },
            Artifact::image("ghcr.io/acme/app", version, ""),
        ],
        ..BundleSpec::default()
    }
}

/// A full commit SHA of one repeated character.
pub fn sha_of(c: char) -> String {
    c.to_string().repeat(40)
}

/// Creates release `name`, emitted `minute` minutes past 10:00 on 2026-03-01: version
/// `version` on commit [`sha_of`]`(head)`, bringing one commit per subject of `brings`
/// (by Ann, `minute` minutes past 09:00) since commit `since` ([`release_spec`]).
pub async fn release_at(
    env: &TestEnv,
    name: &str,
    minute: u32,
    head: char,
    version: &str,
    since: &str,
    brings: &[&str],
) -> Bundle {
    let at = |hour: u32| {
        Time(
            format!("2026-03-01T{hour:02}:{minute:02}:00Z")
                .parse()
                .expect("a time"),
        )
    };
    let commits = brings
        .iter()
        .map(|subject| commit(&sha_of(head), subject, "Ann <ann@example.com>", at(9)))
        .collect();
    release(
        env,
        name,
        at(10),
        release_spec(version, &sha_of(head), since, commits),
    )
    .await
}

/// Creates Bundle `name` of `spec` ([`release_spec`]) as emitted at `emitted` (the
/// time its Beacon records, which orders Bundles).
pub async fn release(env: &TestEnv, name: &str, emitted: Time, spec: BundleSpec) -> Bundle {
    let mut bundle = Bundle::new(name, spec);
    bundle.metadata.annotations = Some(
        [(
            wellknown::ANNOTATION_CREATED_AT.to_string(),
            emitted.0.to_string(),
        )]
        .into(),
    );
    env.create(bundle).await
}
