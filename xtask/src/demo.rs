//! `cargo xtask demo`: a local control plane with a realistic pipeline to explore.
//!
//! Until Hecate's controller exists, this module is the **demo driver**: it writes the
//! states a controller would have produced (current occupants, history, cleared and
//! blocked crossings, Passage outcomes) through the status subresource, the way the
//! controller will. The pipeline is an application `shop` moving through `dev`
//! (automatic) → `staging` → `production` (approval required, frozen at weekends).

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use hecate_testenv::{Binaries, ControlPlane, Endpoint, Identity, Lifetime};
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

/// The namespace the demo pipeline lives in.
pub(crate) const NAMESPACE: &str = "demo";
const FIELD_MANAGER: &str = "hecate-demo-driver";
const BEACON: &str = "shop";
const VERSIONS: usize = 12;

pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let dev_dir = crate::control_plane::dev_dir(root);
    // Reuse a control plane started with `cargo xtask control-plane start`; otherwise
    // start one that lives exactly as long as this command.
    let (endpoint, owned) = match ControlPlane::find_detached(&dev_dir) {
        Some(endpoint) => (endpoint, None),
        None => {
            let binaries = Binaries::locate_or_build()?;
            let plane = ControlPlane::start(
                &binaries,
                &dev_dir.join("demo-plane"),
                Lifetime::ThisProcess,
            )?;
            (plane.endpoint().clone(), Some(plane))
        }
    };
    endpoint
        .write_kubeconfigs(&dev_dir)
        .context("writing kubeconfigs")?;

    let hecate = build_hecate(root)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = endpoint.client(Identity::Admin).await?;
        load(&client, Timestamp::now()).await?;
        grant_people(&client).await?;
        let kubeconfig = dev_dir.join("kubeconfig");
        for args in [["status"].as_slice(), ["explain", "production"].as_slice()] {
            println!("\n$ hecate {} -n {NAMESPACE}", args.join(" "));
            std::process::Command::new(&hecate)
                .args(args)
                .args(["-n", NAMESPACE])
                .env("KUBECONFIG", &kubeconfig)
                .status()
                .context("running hecate")?;
        }
        print_tour(root, &endpoint, owned.is_some());
        if owned.is_some() {
            let mut terminate =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            tokio::select! {
                interrupted = tokio::signal::ctrl_c() => interrupted?,
                _ = terminate.recv() => {}
            }
            eprintln!("\nstopping the control plane…");
        }
        anyhow::Ok(())
    })?;
    if let Some(mut plane) = owned {
        plane.stop();
    }
    Ok(())
}

/// Lets alice, bob and carol use Hecate in the demo namespace (read everything,
/// start and abort crossings, approve, poll); ci-bot gets nothing, to show a refusal.
async fn grant_people(client: &kube::Client) -> anyhow::Result<()> {
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
            ["alice", "bob", "carol"]
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
    Api::<Role>::namespaced(client.clone(), NAMESPACE)
        .patch("hecate-user", &params, &Patch::Apply(&role))
        .await?;
    Api::<RoleBinding>::namespaced(client.clone(), NAMESPACE)
        .patch("hecate-user", &params, &Patch::Apply(&binding))
        .await?;
    Ok(())
}

/// Builds the `hecate` binary (quietly; it is usually built already) and returns it.
fn build_hecate(root: &Path) -> anyhow::Result<std::path::PathBuf> {
    let status =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args([
                "build",
                "--quiet",
                "--package",
                "hecate-cli",
                "--bin",
                "hecate",
            ])
            .current_dir(root)
            .status()
            .context("building hecate")?;
    anyhow::ensure!(status.success(), "building hecate failed");
    Ok(root.join("target/debug/hecate"))
}

fn print_tour(root: &Path, endpoint: &Endpoint, owned: bool) {
    let dir = crate::control_plane::dev_dir(root);
    let kubeconfig = dir.join("kubeconfig");
    println!();
    println!("Hecate demo: the `shop` pipeline is loaded into namespace `{NAMESPACE}`.");
    println!("  dev (automatic) → staging → production (approval required, frozen at weekends)");
    println!();
    println!("  control plane  {}", endpoint.server);
    println!(
        "  kubeconfig     {}  (contexts: admin, alice, bob, carol, ci-bot, hecate-api)",
        kubeconfig.display()
    );
    println!();
    let candidate = release(VERSIONS - 2).bundle.name_any();
    println!(
        "Try (hecate is target/debug/hecate; `cargo install --path crates/hecate-cli` puts it on PATH):"
    );
    println!("  export KUBECONFIG={}", kubeconfig.display());
    println!("  hecate status -n {NAMESPACE}");
    println!("  hecate explain production -n {NAMESPACE}");
    println!("  hecate --context carol approve {candidate} --gate production -n {NAMESPACE}");
    println!(
        "  hecate --context bob promote production --bundle {candidate} -n {NAMESPACE} --watch"
    );
    println!(
        "  hecate --context ci-bot status -n {NAMESPACE}    # refused: ci-bot has no Role here"
    );
    println!("  hecate audit -n {NAMESPACE}");
    println!(
        "(production is frozen at weekends: on a Saturday or Sunday the promotion is refused, and"
    );
    println!(" `hecate explain production` says until when.)");
    println!();
    println!("Tokens (for the API server and UI, when they land):");
    for who in Identity::ALL {
        println!(
            "  {:<11} {}",
            who.username(),
            endpoint.tokens.get(&who).map_or("", String::as_str)
        );
    }
    println!();
    if owned {
        println!("Press Ctrl-C to stop the control plane.");
    } else {
        println!(
            "Using the control plane from `cargo xtask control-plane start`; it keeps running."
        );
    }
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
            serde_json::json!({"kind": "Kustomization", "name": format!("shop-{gate}")}),
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
        }],
        passage: Some(PassageTemplate { steps: steps(name) }),
        watch: vec![HealthCheck {
            uses: "flux".into(),
            with: Some(
                serde_json::json!({"kind": "Kustomization", "name": format!("shop-{name}")}),
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
        if index <= 9 && index % 3 != 1 || index == 9 {
            let outcome = if index == 9 {
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

/// Writes the whole pipeline, idempotently (server-side apply), as of `now`.
pub(crate) async fn load(client: &kube::Client, now: Timestamp) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(NAMESPACE.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    namespaces
        .patch(
            NAMESPACE,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&namespace),
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
                    message: if failed { "Kustomization demo/shop-production is not Ready: health check failed for deployment shop-api".into() } else { String::new() },
                    started_at: (phase != StepPhase::Pending).then(|| started.clone()),
                    finished_at: phase.is_terminal().then(|| finished.clone()),
                    attempts: i32::from(phase != StepPhase::Pending),
                    ..StepStatus::default()
                }
            })
            .collect();
        let message = match crossing.outcome {
            PassagePhase::Succeeded => format!("crossed {}", crossing.gate),
            PassagePhase::Failed => "step flux-wait: Kustomization demo/shop-production is not Ready: health check failed for deployment shop-api".into(),
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
                vec!["Kustomization demo/shop-staging: reconciliation in progress".into()]
            } else {
                Vec::new()
            },
            details: None,
            observed_at: Some(at(now, 0)),
            since: Some(at(now, if crossing { 4 } else { 300 })),
        });
    }

    let beacon = beacon(now, &releases);
    apply(client, &beacon).await?;
    // Bundles are judged newest-first by creation time, which has one-second
    // resolution: create the recent releases a second apart so their order is their
    // age. (Older ones are settled everywhere; their order does not matter.)
    let bundle_api: Api<Bundle> = Api::namespaced(client.clone(), NAMESPACE);
    for (index, bundle) in bundles.iter().enumerate() {
        let recent = index + 4 >= VERSIONS;
        if recent && bundle_api.get_opt(&bundle.name_any()).await?.is_none() {
            tokio::time::sleep(Duration::from_millis(1050)).await;
        }
        apply(client, bundle).await?;
    }
    for gate in &gates {
        apply(client, gate).await?;
    }
    for passage in &passages {
        apply(client, passage).await?;
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
async fn apply<K>(client: &kube::Client, object: &K) -> anyhow::Result<()>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + HasStatus
        + Clone
        + std::fmt::Debug
        + Serialize
        + DeserializeOwned,
    K::Status: Serialize,
{
    let api: Api<K> = Api::namespaced(client.clone(), NAMESPACE);
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
