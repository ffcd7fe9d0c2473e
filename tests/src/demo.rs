//! A fixed pipeline for the web UI's browser tests: an application `shop` moving
//! through `dev` (automatic) → `staging` → `production` (approval required, frozen at
//! weekends), with days of history — twelve releases, a failed crossing, one running.
//!
//! It writes the states the controller produces (occupants, history, cleared and
//! blocked crossings, Passage outcomes) through the status subresource, so the UI's
//! tests see the same page every time, at a known moment. `cargo xtask demo` no longer
//! uses it: there the controller itself carries releases through the pipeline. The
//! people's Role ([`grant_people`]) and [`reset`] serve both. Loading is idempotent
//! (server-side apply).

use anyhow::Context as _;
use hecate_types::{
    Admission, Artifact, Beacon, BeaconSpec, BeaconStatus, Bundle, BundleApproval, BundleOrigin,
    BundleSpec, BundleStatus, Condition, ConditionStatus, Gate, GateCrossing, GateOccupant,
    GateSpec, GateStatus, Health, HealthCheck, HealthReport, ImageWatch, Passage, PassagePhase,
    PassageSpec, PassageStatus, PassageTemplate, Step, StepPhase, StepStatus, Time, WatchSource,
    Window, digest, wellknown,
};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use kube::core::object::HasStatus;
use kube::{Resource, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest as _, Sha256};

const FIELD_MANAGER: &str = "hecate-demo-driver";
const BEACON: &str = "shop";
/// Releases 1.0.0 to 1.11.0.
pub const VERSIONS: usize = 12;

/// The Bundle that has cleared staging and waits for an approval for production
/// (release 1.10.0).
pub fn awaiting_approval() -> Bundle {
    release_bundle(VERSIONS - 2)
}

/// The Bundle of release `1.<index>.0` (index below [`VERSIONS`]).
pub fn release_bundle(index: usize) -> Bundle {
    release(index).bundle
}

/// Lets alice, bob and carol use Hecate in the demo namespace (read everything,
/// start and abort crossings, approve, poll); ci-bot gets nothing, to show a refusal.
pub async fn grant_people(client: &kube::Client, namespace: &str) -> anyhow::Result<()> {
    use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let role = Role {
        metadata: ObjectMeta {
            name: Some("hecate-user".into()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![
            PolicyRule {
                api_groups: Some(strings(&["hecate.dev"])),
                resources: Some(strings(&["gates", "bundles", "passages", "beacons"])),
                verbs: strings(&["get", "list", "watch"]),
                ..PolicyRule::default()
            },
            PolicyRule {
                api_groups: Some(strings(&["hecate.dev"])),
                resources: Some(strings(&["passages", "bundles/status", "beacons"])),
                verbs: strings(&["create", "update", "patch"]),
                ..PolicyRule::default()
            },
        ]),
    };
    let binding = RoleBinding {
        metadata: ObjectMeta {
            name: Some("hecate-user".into()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "Role".into(),
            name: "hecate-user".into(),
        },
        subjects: Some(
            ["alice", "bob", "carol", "dave"]
                .iter()
                .map(|user| Subject {
                    api_group: Some("rbac.authorization.k8s.io".into()),
                    kind: "User".into(),
                    name: user.to_string(),
                    ..Subject::default()
                })
                .collect(),
        ),
    };
    let params = PatchParams::apply(FIELD_MANAGER).force();
    Api::<Role>::namespaced(client.clone(), namespace)
        .patch("hecate-user", &params, &Patch::Apply(&role))
        .await?;
    Api::<RoleBinding>::namespaced(client.clone(), namespace)
        .patch("hecate-user", &params, &Patch::Apply(&binding))
        .await?;
    Ok(())
}

/// One release of the application: its version and the Bundle that pins it.
struct Release {
    version: String,
    bundle: Bundle,
}

fn release(index: usize) -> Release {
    let version = format!("1.{index}.0");
    let artifacts = vec![
        Artifact::image(
            "ghcr.io/acme/shop-api",
            version.clone(),
            image_digest("shop-api", &version),
        ),
        Artifact::image(
            "ghcr.io/acme/shop-web",
            version.clone(),
            image_digest("shop-web", &version),
        ),
    ];
    let content = digest::content_digest(&artifacts);
    let mut bundle = Bundle::new(
        &digest::bundle_name(BEACON, &content),
        BundleSpec {
            beacon: BEACON.into(),
            digest: content,
            alias: format!("v{version}"),
            artifacts,
        },
    );
    bundle
        .labels_mut()
        .insert(wellknown::LABEL_BEACON.into(), BEACON.into());
    Release { version, bundle }
}

/// A stable, real-looking image digest for a demo image.
fn image_digest(image: &str, version: &str) -> String {
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(format!("{image}:{version}").as_bytes()))
    )
}

fn at(now: Timestamp, minutes_ago: i64) -> Time {
    Time(now - SignedDuration::from_mins(minutes_ago))
}

fn steps(gate: &str) -> Vec<Step> {
    let step = |uses: &str, alias: &str, with: serde_json::Value| Step {
        uses: uses.into(),
        alias: alias.into(),
        with: Some(with),
        ..Step::default()
    };
    vec![
        step(
            "git-clone",
            "repo",
            serde_json::json!({"repo": "https://github.com/acme/shop-config", "branch": "main"}),
        ),
        step(
            "set-image",
            "",
            serde_json::json!({"path": format!("envs/{gate}/kustomization.yaml"), "image": "ghcr.io/acme/shop-api", "digest": "${{ bundle.image(\"ghcr.io/acme/shop-api\").digest }}"}),
        ),
        step(
            "git-commit",
            "commit",
            serde_json::json!({"message": format!("promote ${{{{ bundle.alias }}}} to {gate}")}),
        ),
        step("git-push", "", serde_json::json!({})),
        step(
            "flux-wait",
            "",
            serde_json::json!({"resources": [{"kind": "Kustomization", "name": format!("shop-{gate}")}]}),
        ),
    ]
}

fn gate(name: &str, after: Option<&str>, auto: bool, approval: bool) -> Gate {
    let mut spec = GateSpec {
        admits: vec![Admission {
            from: BundleOrigin {
                beacon: BEACON.into(),
            },
            after: after.into_iter().map(String::from).collect(),
            require_approval: approval,
            approvals: None,
        }],
        passage: Some(PassageTemplate { steps: steps(name) }),
        watch: vec![HealthCheck {
            uses: "flux".into(),
            with: Some(
                serde_json::json!({"resources": [{"kind": "Kustomization", "name": format!("shop-{name}")}]}),
            ),
        }],
        auto,
        ..GateSpec::default()
    };
    if name == "production" {
        spec.windows = vec![Window {
            schedule: "0 0 * * 6".into(),
            duration: "48h".into(),
            time_zone: "Europe/London".into(),
            deny: true,
        }];
    }
    Gate::new(name, spec)
}

/// A finished or running crossing, and what it did to the Gate and the Bundle.
struct Crossing {
    gate: &'static str,
    release: usize,
    actor: &'static str,
    minutes_ago: i64,
    outcome: PassagePhase,
}

/// The demo's history, oldest first. Every release crossed `dev` on its own; most
/// were promoted to staging by alice or ci-bot; production got approved releases
/// from bob; 1.9.0 failed in production at `flux-wait`; 1.11.0 is crossing staging.
fn history() -> Vec<Crossing> {
    let mut crossings = Vec::new();
    for index in 0..VERSIONS {
        let minutes_ago = ((VERSIONS - index) as i64) * 600;
        crossings.push(Crossing {
            gate: "dev",
            release: index,
            actor: wellknown::ACTOR_CONTROLLER,
            minutes_ago,
            outcome: PassagePhase::Succeeded,
        });
        if index < VERSIONS - 1 {
            let actor = if index % 2 == 0 { "alice" } else { "ci-bot" };
            crossings.push(Crossing {
                gate: "staging",
                release: index,
                actor,
                minutes_ago: minutes_ago - 120,
                outcome: PassagePhase::Succeeded,
            });
        }
        // Production skips a few releases; 1.7.0 failed there, and 1.8.0 crossed after.
        if index <= 8 && (index % 3 != 1 || index == 7) {
            let outcome = if index == 7 {
                PassagePhase::Failed
            } else {
                PassagePhase::Succeeded
            };
            crossings.push(Crossing {
                gate: "production",
                release: index,
                actor: "bob",
                minutes_ago: minutes_ago - 300,
                outcome,
            });
        }
    }
    crossings.push(Crossing {
        gate: "staging",
        release: VERSIONS - 1,
        actor: "alice",
        minutes_ago: 4,
        outcome: PassagePhase::Running,
    });
    crossings
}

fn passage_name(crossing: &Crossing, release: &Release) -> String {
    format!("{}-{}", crossing.gate, release.version.replace('.', "-"))
}

/// Deletes every Gate, Bundle, Passage and Beacon in `namespace`, so that the next
/// [`load`] starts the story afresh (approvals and crossings someone made while trying
/// the demo go too). Hecate's objects carry no finalizers, so they go at once.
pub async fn reset(client: &kube::Client, namespace: &str) -> anyhow::Result<()> {
    async fn delete_all<K>(client: &kube::Client, namespace: &str) -> anyhow::Result<()>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + std::fmt::Debug
            + DeserializeOwned,
    {
        Api::<K>::namespaced(client.clone(), namespace)
            .delete_collection(&Default::default(), &Default::default())
            .await
            .with_context(|| format!("deleting the {}s in {namespace}", K::kind(&())))?;
        Ok(())
    }
    delete_all::<Passage>(client, namespace).await?;
    delete_all::<Bundle>(client, namespace).await?;
    delete_all::<Gate>(client, namespace).await?;
    delete_all::<Beacon>(client, namespace).await?;
    // A Notifier's record names Passages by name: a new story's would read as sent.
    delete_all::<hecate_types::Notifier>(client, namespace).await?;
    Ok(())
}

/// Writes the whole pipeline, idempotently (server-side apply), as of `now`.
pub async fn load(client: &kube::Client, namespace: &str, now: Timestamp) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let object = Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    namespaces
        .patch(
            namespace,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&object),
        )
        .await?;

    let releases: Vec<Release> = (0..VERSIONS).map(release).collect();
    let mut gates: Vec<Gate> = vec![
        gate("dev", None, true, false),
        gate("staging", Some("dev"), false, false),
        gate("production", Some("staging"), false, true),
    ];
    let mut bundles: Vec<Bundle> = releases.iter().map(|r| r.bundle.clone()).collect();
    let mut passages = Vec::new();

    for crossing in history() {
        let release = &releases[crossing.release];
        let bundle_name = release.bundle.name_any();
        let name = passage_name(&crossing, release);
        let started = at(now, crossing.minutes_ago);
        let finished = at(now, crossing.minutes_ago - 3);
        let template = steps(crossing.gate);
        let mut passage = Passage::new(
            &name,
            PassageSpec {
                gate: crossing.gate.into(),
                bundle: bundle_name.clone(),
                steps: template.clone(),
                actor: crossing.actor.into(),
                ..PassageSpec::default()
            },
        );
        passage
            .labels_mut()
            .insert(wellknown::LABEL_GATE.into(), crossing.gate.into());
        passage
            .labels_mut()
            .insert(wellknown::LABEL_BUNDLE.into(), bundle_name.clone());
        let step_phase = |i: usize| match crossing.outcome {
            PassagePhase::Succeeded => StepPhase::Succeeded,
            PassagePhase::Failed if i < 4 => StepPhase::Succeeded,
            PassagePhase::Failed => StepPhase::Failed,
            _ if i < 2 => StepPhase::Succeeded,
            _ if i == 2 => StepPhase::Running,
            _ => StepPhase::Pending,
        };
        let step_statuses = template
            .iter()
            .enumerate()
            .map(|(i, step)| {
                let phase = step_phase(i);
                let failed = phase == StepPhase::Failed;
                StepStatus {
                    uses: step.uses.clone(),
                    alias: step.alias.clone(),
                    phase,
                    reason: if failed { "FluxDegraded".into() } else { String::new() },
                    message: if failed { format!("Kustomization {namespace}/shop-production is not Ready: health check failed for deployment shop-api") } else { String::new() },
                    started_at: (phase != StepPhase::Pending).then(|| started.clone()),
                    finished_at: phase.is_terminal().then(|| finished.clone()),
                    attempts: i32::from(phase != StepPhase::Pending),
                    ..StepStatus::default()
                }
            })
            .collect();
        let message = match crossing.outcome {
            PassagePhase::Succeeded => format!("crossed {}", crossing.gate),
            PassagePhase::Failed => format!(
                "step flux-wait: Kustomization {namespace}/shop-production is not Ready: health check failed for deployment shop-api"
            ),
            _ => "waiting for git-commit".into(),
        };
        passage.status = Some(PassageStatus {
            phase: Some(crossing.outcome),
            message: message.clone(),
            steps: step_statuses,
            current_step: if crossing.outcome == PassagePhase::Running {
                2
            } else {
                4
            },
            started_at: Some(started.clone()),
            finished_at: crossing.outcome.is_terminal().then(|| finished.clone()),
            ..PassageStatus::default()
        });

        let gate = gates
            .iter_mut()
            .find(|g| g.name_any() == crossing.gate)
            .context("a demo gate")?;
        let gate_status = gate.status.get_or_insert_with(GateStatus::default);
        let bundle = bundles
            .iter_mut()
            .find(|b| b.name_any() == bundle_name)
            .context("a demo bundle")?;
        let bundle_status = bundle.status.get_or_insert_with(BundleStatus::default);
        let entry = GateCrossing {
            gate: crossing.gate.into(),
            passage: name.clone(),
            at: finished.clone(),
            actor: crossing.actor.into(),
            reason: String::new(),
        };
        if crossing.gate == "production" {
            // Production needs an approval, from someone other than the promoter.
            let approver = if crossing.release % 2 == 0 {
                "carol"
            } else {
                "alice"
            };
            bundle_status.approved_for.push(BundleApproval {
                gate: "production".into(),
                actor: approver.into(),
                at: at(now, crossing.minutes_ago + 30),
            });
        }
        match crossing.outcome {
            PassagePhase::Succeeded => {
                let occupant = GateOccupant {
                    bundle: bundle_name.clone(),
                    digest: release.bundle.spec.digest.clone(),
                    passage: name.clone(),
                    entered_at: finished.clone(),
                    actor: crossing.actor.into(),
                    verified: None,
                };
                gate_status.current = Some(occupant.clone());
                gate_status.history.insert(0, occupant);
                gate_status.history.truncate(10);
                bundle_status.cleared.push(entry);
            }
            PassagePhase::Failed => bundle_status.blocked.insert(
                0,
                GateCrossing {
                    reason: message,
                    ..entry
                },
            ),
            _ => gate_status.active_passage = name.clone(),
        }
        passages.push(passage);
    }
    // 1.10.0 has cleared staging and waits for someone to approve it for production.
    for gate in &mut gates {
        let status = gate.status.get_or_insert_with(GateStatus::default);
        let crossing = !status.active_passage.is_empty();
        let (reason, message) = if crossing {
            (
                wellknown::gate_reason::CROSSING,
                format!("Passage {} is in progress", status.active_passage),
            )
        } else {
            (wellknown::gate_reason::IDLE, "nothing to do".to_string())
        };
        status.conditions = vec![Condition {
            type_: wellknown::condition::READY.into(),
            status: ConditionStatus::True,
            observed_generation: 1,
            last_transition_time: at(now, 4),
            reason: reason.into(),
            message,
        }];
        status.observed_generation = 1;
        let health = if crossing {
            Health::Progressing
        } else {
            Health::Healthy
        };
        status.health = Some(HealthReport {
            status: health,
            issues: if crossing {
                vec![format!(
                    "Kustomization {namespace}/shop-staging: reconciliation in progress"
                )]
            } else {
                Vec::new()
            },
            details: None,
            observed_at: Some(at(now, 0)),
            since: Some(at(now, if crossing { 4 } else { 300 })),
        });
    }

    let beacon = beacon(now, &releases);
    apply(client, namespace, &beacon).await?;
    // Each Bundle says when its Beacon emitted it (`hecate.dev/created-at`, as a
    // Beacon writes it), ten minutes before it reached dev: Bundles are ordered by
    // emission, not by when this loader happened to write them.
    for (index, bundle) in bundles.iter_mut().enumerate() {
        let emitted = at(now, ((VERSIONS - index) as i64) * 600 + 10);
        bundle.annotations_mut().insert(
            wellknown::ANNOTATION_CREATED_AT.into(),
            emitted.0.to_string(),
        );
        apply(client, namespace, bundle).await?;
    }
    for gate in &gates {
        apply(client, namespace, gate).await?;
    }
    // Written within a second or two, the Passages tie on creation: ops orders them by
    // when they started, which is the story's order (1.7.0 failed in production,
    // 1.8.0 crossed after it).
    for passage in &passages {
        apply(client, namespace, passage).await?;
    }
    Ok(())
}

fn beacon(now: Timestamp, releases: &[Release]) -> Beacon {
    let latest = releases
        .last()
        .map(|r| r.bundle.clone())
        .unwrap_or_default();
    let mut beacon = Beacon::new(
        BEACON,
        BeaconSpec {
            interval: Some("5m".into()),
            watch: ["ghcr.io/acme/shop-api", "ghcr.io/acme/shop-web"]
                .map(|repo| WatchSource {
                    image: Some(ImageWatch {
                        repo: repo.into(),
                        constraint: "^1.0.0".into(),
                        ..ImageWatch::default()
                    }),
                    ..WatchSource::default()
                })
                .into(),
            ..BeaconSpec::default()
        },
    );
    beacon.status = Some(BeaconStatus {
        observed_generation: 1,
        conditions: vec![Condition {
            type_: wellknown::condition::READY.into(),
            status: ConditionStatus::True,
            observed_generation: 1,
            last_transition_time: at(now, 600),
            reason: wellknown::beacon_reason::DISCOVERED.into(),
            message: format!(
                "resolved 2 source(s); latest Bundle is {}",
                latest.name_any()
            ),
        }],
        last_polled: Some(at(now, 2)),
        latest_bundle: latest.name_any(),
        discovered: latest.spec.artifacts.clone(),
        ..BeaconStatus::default()
    });
    beacon
}

/// Applies an object's spec and then its status (server-side, so loading twice
/// changes nothing).
async fn apply<K>(client: &kube::Client, namespace: &str, object: &K) -> anyhow::Result<()>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + HasStatus
        + Clone
        + std::fmt::Debug
        + Serialize
        + DeserializeOwned,
    K::Status: Serialize,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let name = object.name_any();
    let mut spec_only = serde_json::to_value(object)?;
    if let Some(map) = spec_only.as_object_mut() {
        map.remove("status");
    }
    api.patch(&name, &params, &Patch::Apply(&spec_only))
        .await
        .with_context(|| format!("applying {} {name}", K::kind(&())))?;
    let status = serde_json::json!({"apiVersion": K::api_version(&()), "kind": K::kind(&()), "status": object.status()});
    api.patch_status(&name, &params, &Patch::Apply(&status))
        .await
        .with_context(|| format!("writing the status of {} {name}", K::kind(&())))?;
    Ok(())
}
