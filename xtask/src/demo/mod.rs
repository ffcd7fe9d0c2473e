//! `cargo xtask demo`: the first five minutes. A local control plane (built on first
//! use); the `shop` pipeline in namespace `demo`, carried through five releases by
//! `hecate-controller` itself ([`pipeline`]: real git repositories, Flux played by the
//! demo, people acting through hecate-ops); `hecate-api` with the web UI on
//! `127.0.0.1:8080`; what `hecate status` and `hecate explain production` say, and the
//! commands and tokens to try. Ctrl-C stops everything. `--check` does all of it
//! without waiting, checks what `hecate status` printed and that the UI answers, and
//! exits: CI runs it.

mod pipeline;
mod smoke;
mod told;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use hecate_testenv::{Binaries, ControlPlane, Endpoint, Identity, Lifetime, Parts, demo};

/// The namespace the demo pipeline lives in.
const NAMESPACE: &str = "demo";

/// How the demo runs.
#[derive(clap::Args)]
pub(crate) struct Options {
    /// Run everything, check what `hecate status` says and that the UI answers, then
    /// stop and exit (non-zero when something is wrong).
    #[arg(long)]
    check: bool,
    /// Where hecate-api (and the UI) listens.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    #[command(subcommand)]
    action: Option<Action>,
}

/// What else the demo can do, while it runs in another terminal.
#[derive(clap::Subcommand)]
enum Action {
    /// Commit the application's next version, and ask its Beacon to look now: watch
    /// dev take it by itself (`hecate status -n demo --watch`, or the UI).
    Release,
}

pub(crate) fn run(root: &Path, options: &Options) -> anyhow::Result<()> {
    let started = Instant::now();
    let dev_dir = crate::control_plane::dev_dir(root);
    if let Some(Action::Release) = options.action {
        return tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(pipeline::release(&dev_dir, NAMESPACE));
    }
    // Reuse a control plane started with `cargo xtask control-plane start`; otherwise
    // start one that lives exactly as long as this command.
    // It must run Flux: one started before Flux came to the control plane is not used.
    let (endpoint, owned) = match ControlPlane::find_detached(&dev_dir) {
        Some(endpoint) if endpoint.parts.flux => (endpoint, None),
        found => {
            if found.is_some() {
                eprintln!(
                    "[demo] the running control plane has no Flux (`cargo xtask control-plane stop`, \
                     then start it again, gives it Flux); starting one of the demo's own"
                );
            }
            let binaries = Binaries::locate_or_build()?;
            let plane = ControlPlane::start_parts(
                &binaries,
                &dev_dir.join("demo-plane"),
                Lifetime::ThisProcess,
                Parts::WITH_FLUX,
            )?;
            (plane.endpoint().clone(), Some(plane))
        }
    };
    let kustomize = hecate_testenv::Tool::Kustomize.locate_or_build()?;
    endpoint
        .write_kubeconfigs(&dev_dir)
        .context("writing kubeconfigs")?;
    let kubeconfig = dev_dir.join("kubeconfig");
    let (hecate, hecate_api, controller) = build(root)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = endpoint.client(Identity::Admin).await?;
        ensure_namespace(&client).await?;
        demo::reset(&client, NAMESPACE).await?;
        demo::grant_people(&client, NAMESPACE).await?;
        hecate_testenv::rbac::install_deployed_roles(&client).await?;
        grant_flux_operator(&client, "bob").await?;
        eprintln!("[demo] hecate-controller carries shop through dev, staging and production…");
        let pipeline = pipeline::run(
            &endpoint,
            &controller,
            &kustomize,
            &pipeline::dir(&dev_dir),
            NAMESPACE,
            &format!("http://{}", options.addr),
        )
        .await?;
        let log = dev_dir.join("hecate-api.log");
        let server =
            crate::api_server::start(&hecate_api, options.addr, &kubeconfig, Some(&log)).await?;

        let status = hecate_output(&hecate, &kubeconfig, &["status"])?;
        println!("\n$ hecate status -n {NAMESPACE}\n{status}");
        let explain = hecate_output(&hecate, &kubeconfig, &["explain", "production"])?;
        println!("$ hecate explain production -n {NAMESPACE}\n{explain}");
        let metrics = hecate_output(&hecate, &kubeconfig, &["metrics"])?;
        println!("$ hecate metrics -n {NAMESPACE}\n{metrics}");
        // What carol is asked to approve, against what production runs now.
        let waiting = &pipeline.bundles[3];
        let diff = hecate_output(
            &hecate,
            &kubeconfig,
            &["diff", waiting, "--against", "production"],
        )?;
        println!("$ hecate diff {waiting} --against production -n {NAMESPACE}\n{diff}");

        if options.check {
            // What the story's people were told: the webhook got each kind, signed.
            pipeline
                .told
                .wait_for(
                    &[
                        "ApprovalWanted",
                        "CrossingStarted",
                        "Crossed",
                        "VerificationFailed",
                        "RolledBack",
                        "CrossingAborted",
                    ],
                    std::time::Duration::from_secs(120),
                )
                .await?;
            check(
                &hecate,
                &kubeconfig,
                &server.base,
                &endpoint,
                &pipeline.bundles,
            )
            .await?;
            println!(
                "demo check passed: ready in {:.1} s (hecate-api ready {:.1} s after start)",
                started.elapsed().as_secs_f64(),
                server.ready_after.as_secs_f64()
            );
            return anyhow::Ok(());
        }
        print_tour(
            &kubeconfig,
            &endpoint,
            &server.base,
            &log,
            owned.is_some(),
            &pipeline,
            &pipeline::dir(&dev_dir),
        );
        println!("(ready in {:.1} s)", started.elapsed().as_secs_f64());
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            interrupted = tokio::signal::ctrl_c() => interrupted?,
            _ = terminate.recv() => {}
        }
        eprintln!(
            "\nstopping hecate-api{}…",
            if owned.is_some() {
                " and the control plane"
            } else {
                ""
            }
        );
        drop(server);
        drop(pipeline);
        anyhow::Ok(())
    })?;
    if let Some(mut plane) = owned {
        plane.stop();
    }
    Ok(())
}

/// Builds `hecate` and `hecate-api` (quietly; usually they are built already).
fn build(root: &Path) -> anyhow::Result<(PathBuf, PathBuf, PathBuf)> {
    let dir = crate::build(
        root,
        &["hecate-cli", "hecate-api", "hecate-controller"],
        false,
    )?;
    Ok((
        dir.join("hecate"),
        dir.join("hecate-api"),
        dir.join("hecate-controller"),
    ))
}

/// Creates namespace `demo` if it is not there.
async fn ensure_namespace(client: &kube::Client) -> anyhow::Result<()> {
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::{Api, ObjectMeta, Patch, PatchParams};
    let object = Namespace {
        metadata: ObjectMeta {
            name: Some(NAMESPACE.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client.clone())
        .patch(
            NAMESPACE,
            &PatchParams::apply("hecate-demo").force(),
            &Patch::Apply(&object),
        )
        .await
        .context("creating namespace demo")?;
    Ok(())
}

/// Lets `who` suspend, resume and reconcile the demo Gates' Flux objects (the chart's
/// `hecate-flux-operator`), as the tour shows bob resuming staging.
async fn grant_flux_operator(client: &kube::Client, who: &str) -> anyhow::Result<()> {
    use k8s_openapi::api::rbac::v1::RoleBinding;
    use kube::api::{Api, Patch, PatchParams};
    let name = format!("{who}-flux-operator");
    let binding: RoleBinding = serde_json::from_value(serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "hecate-flux-operator"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": who}],
    }))?;
    Api::<RoleBinding>::namespaced(client.clone(), NAMESPACE)
        .patch(
            &name,
            &PatchParams::apply("hecate-demo").force(),
            &Patch::Apply(&binding),
        )
        .await
        .with_context(|| format!("letting {who} operate the demo's Flux objects"))?;
    Ok(())
}

/// What `hecate <args> -n demo` prints, as admin; an error when it fails.
fn hecate_output(hecate: &Path, kubeconfig: &Path, args: &[&str]) -> anyhow::Result<String> {
    let output = std::process::Command::new(hecate)
        .args(args)
        .args(["-n", NAMESPACE])
        .env("KUBECONFIG", kubeconfig)
        .output()
        .context("running hecate")?;
    anyhow::ensure!(
        output.status.success(),
        "hecate {} failed ({}): {}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `url`'s JSON answer to `token`'s bearer: what a page of the UI reads.
async fn read_as(
    http: &reqwest::Client,
    token: &str,
    url: String,
) -> anyhow::Result<serde_json::Value> {
    let body = http
        .get(url)
        .bearer_auth(token)
        .send()
        .await?
        .error_for_status()?
        .text()
        .await?;
    Ok(serde_json::from_str(&body)?)
}

/// The story the demo tells, as `hecate status -o json` reports it, and the UI and API
/// answering as alice.
async fn check(
    hecate: &Path,
    kubeconfig: &Path,
    base: &str,
    endpoint: &Endpoint,
    bundles: &[String],
) -> anyhow::Result<()> {
    let status: serde_json::Value = serde_json::from_str(&hecate_output(
        hecate,
        kubeconfig,
        &["status", "-o", "json"],
    )?)
    .context("hecate status -o json printed something else than JSON")?;
    // The reference's value: every Gate's Explanation, upstream first.
    let gates = status
        .as_array()
        .context("hecate status -o json is not an array of Explanation")?;
    let gate = |name: &str| {
        gates
            .iter()
            .find(|g| g["gate"] == name)
            .with_context(|| format!("no Gate {name} in hecate status"))
    };
    let newest = bundles.last().context("the story emitted no Bundle")?;
    let (dev, staging, production) = (gate("dev")?, gate("staging")?, gate("production")?);
    let order: Vec<&str> = gates.iter().filter_map(|g| g["gate"].as_str()).collect();
    anyhow::ensure!(
        order == ["dev", "staging", "production"],
        "expected dev, staging, production upstream first; hecate status shows {order:?}"
    );
    anyhow::ensure!(
        dev["state"] == "Idle" && dev["current"] == newest.as_str(),
        "dev should be Idle with {newest}: {dev}"
    );
    anyhow::ensure!(
        staging["current"] == newest.as_str(),
        "staging should hold {newest}, soaking: {staging}"
    );
    let (held, awaiting) = (&bundles[2], &bundles[3]);
    anyhow::ensure!(
        production["current"] == held.as_str()
            && production["waiting"].as_array().is_some_and(|waiting| {
                waiting.iter().any(|w| {
                    w["bundle"] == awaiting.as_str()
                        && w["kind"] == "AwaitingApproval"
                        && w["approvals"]["summary"]
                            == "1 of 2 from release-managers; carol approved"
                })
            }),
        "production should hold shop 1.2.0 and have 1.3.0 awaiting the second release manager's approval: {production}"
    );
    // The newest waits for staging's soak, and Explain says until when.
    anyhow::ensure!(
        production["waiting"].as_array().is_some_and(|waiting| {
            waiting.iter().any(|w| {
                w["bundle"] == newest.as_str()
                    && w["reason"].as_str().is_some_and(|r| {
                        r.starts_with("being verified in staging: soak: soaking until")
                    })
                    && w["until"].is_string()
            })
        }),
        "production should have {newest} waiting for staging's soak, with its end: {production}"
    );

    // Versions, not hashes, and what carol is asked to approve against what
    // production runs: 1.2.0 → 1.3.0 and the commit between them (DECISION 140).
    anyhow::ensure!(
        production["versions"][awaiting.as_str()] == "v1.3.0"
            && production["versions"][held.as_str()] == "v1.2.0",
        "Explain should name production's Bundles by version: {production}"
    );
    let diff: serde_json::Value = serde_json::from_str(&hecate_output(
        hecate,
        kubeconfig,
        &["diff", awaiting, "--against", "production", "-o", "json"],
    )?)
    .context("hecate diff -o json printed something else than JSON")?;
    anyhow::ensure!(
        diff["from"]["version"] == "v1.2.0"
            && diff["to"]["version"] == "v1.3.0"
            && diff["direction"] == "forward"
            && diff["commits"].as_array().is_some_and(|c| !c.is_empty()),
        "hecate diff should say production runs v1.2.0 and v1.3.0 brings commits: {diff}"
    );

    // 1.1.0's failure is history once 1.2.0 crossed: nothing to report as a blocker.
    anyhow::ensure!(
        production["blockers"]
            .as_array()
            .is_none_or(|blockers| blockers.iter().all(|b| b["kind"] != "PassageFailed")),
        "production holds a newer Bundle than the one that failed; it is not failed: {production}"
    );

    let http = reqwest::Client::new();
    let page = http.get(format!("{base}/")).send().await?;
    anyhow::ensure!(
        page.status().is_success(),
        "the UI answered {}",
        page.status()
    );
    let alice = endpoint
        .tokens
        .get(&Identity::Alice)
        .context("alice's token")?;
    // The demo namespace's Gates (a shared control plane may hold other namespaces
    // alice can read too).
    let gates: serde_json::Value = read_as(
        &http,
        alice,
        format!("{base}/api/v1alpha1/namespaces/{NAMESPACE}/gates"),
    )
    .await?;
    let count = gates.as_array().map_or(0, Vec::len);
    anyhow::ensure!(
        count == 3,
        "alice should see the 3 demo Gates through the API, not {count}: {gates}"
    );
    // The Overview names carol's approval as what waits on a person (DECISION 141).
    let overview: serde_json::Value =
        read_as(&http, alice, format!("{base}/api/v1alpha1/overview")).await?;
    let approval = overview["attention"].as_array().and_then(|all| {
        all.iter().find(|a| {
            a["namespace"] == NAMESPACE
                && a["gate"] == "production"
                && a["kind"] == "Approval"
                && a["bundle"] == bundles[3].as_str()
        })
    });
    anyhow::ensure!(
        approval.is_some(),
        "the Overview should say production waits for an approval of {}: {}",
        bundles[3],
        overview["attention"]
    );
    // The history holds the controller's own failure: shop 1.1.0's rollout, halted on
    // production's canary and aborted by bob.
    let (release, _) = pipeline::FAILS_IN_PRODUCTION;
    let failed = pipeline::RELEASES
        .iter()
        .position(|r| *r == release)
        .and_then(|i| bundles.get(i))
        .context("the failing release emitted no Bundle")?;
    let passages: serde_json::Value = read_as(
        &http,
        alice,
        format!("{base}/api/v1alpha1/namespaces/{NAMESPACE}/passages"),
    )
    .await?;
    let failure = passages.as_array().and_then(|all| {
        all.iter().find(|p| {
            p["spec"]["gate"] == "production"
                && p["spec"]["bundle"] == failed.as_str()
                && p["status"]["phase"] == "Aborted"
        })
    });
    let of = |release: &str| {
        pipeline::RELEASES
            .iter()
            .position(|r| *r == release)
            .and_then(|i| bundles.get(i))
            .with_context(|| format!("shop {release} emitted no Bundle"))
    };
    rolled_back(
        &passages,
        of(pipeline::FAILS_IN_STAGING.0)?,
        of(pipeline::AWAITS_APPROVAL)?,
    )?;
    delivered(hecate, kubeconfig)?;
    halted_on_the_canary(failure, &gates, failed)
}

/// `failure`, production's rollout of `failed`, failed on the canary at
/// [`pipeline::FAILED_STEP`] (of production's steps, among `gates`) and reached no
/// other cluster.
fn halted_on_the_canary(
    failure: Option<&serde_json::Value>,
    gates: &serde_json::Value,
    failed: &str,
) -> anyhow::Result<()> {
    let targets = failure
        .and_then(|p| p["status"]["rollout"]["targets"].as_array())
        .with_context(|| {
            format!("production's rollout of {failed} should be recorded: {failure:?}")
        })?;
    let canary = targets.iter().find(|t| t["name"] == pipeline::CANARY);
    let steps = gates
        .as_array()
        .and_then(|all| all.iter().find(|g| g["metadata"]["name"] == "production"))
        .and_then(|g| g["spec"]["passage"]["steps"].as_array());
    let step = canary
        .filter(|t| t["phase"] == "Failed")
        .and_then(|t| t["currentStep"].as_u64())
        .and_then(|i| steps?.get(usize::try_from(i).ok()?))
        .and_then(|s| s["uses"].as_str());
    anyhow::ensure!(
        step == Some(pipeline::FAILED_STEP),
        "production's rollout of {failed} should have failed on {} at {}, not {step:?}: {targets:?}",
        pipeline::CANARY,
        pipeline::FAILED_STEP
    );
    let reached: Vec<&serde_json::Value> = targets
        .iter()
        .filter(|t| t["name"] != pipeline::CANARY && t["attempt"].as_u64().unwrap_or(0) > 0)
        .collect();
    anyhow::ensure!(
        reached.is_empty(),
        "production's rollout of {failed} should have reached no cluster but the canary: {reached:?}"
    );
    Ok(())
}

/// Staging's smoke test said no to `failed`'s crossing, and staging rolled back to
/// `restored` by itself: both are in the Passages alice reads.
fn rolled_back(passages: &serde_json::Value, failed: &str, restored: &str) -> anyhow::Result<()> {
    let staging: Vec<&serde_json::Value> = passages
        .as_array()
        .map(|all| {
            all.iter()
                .filter(|p| p["spec"]["gate"] == "staging")
                .collect()
        })
        .unwrap_or_default();
    let refused = staging.iter().find(|p| {
        p["spec"]["bundle"] == failed && p["status"]["verification"]["phase"] == "Failed"
    });
    let refused_name = refused
        .and_then(|p| p["metadata"]["name"].as_str())
        .with_context(|| {
            format!("staging's crossing of {failed} should have failed its verification")
        })?;
    let rollback = staging.iter().find(|p| {
        p["spec"]["bundle"] == restored
            && p["spec"]["actor"] == "controller"
            && p["metadata"]["annotations"]["hecate.dev/rollback-of"] == refused_name
            && p["status"]["phase"] == "Succeeded"
    });
    anyhow::ensure!(
        rollback.is_some(),
        "staging should have rolled back to {restored} by itself after {refused_name}: {staging:?}"
    );
    Ok(())
}

/// `hecate metrics`: production crossed three times — 1.0.0, 1.1.0 failing, 1.2.0
/// restoring it — and the figures say so.
fn delivered(hecate: &Path, kubeconfig: &Path) -> anyhow::Result<()> {
    let figures: serde_json::Value = serde_json::from_str(&hecate_output(
        hecate,
        kubeconfig,
        &["metrics", "-o", "json"],
    )?)
    .context("hecate metrics -o json printed something else than JSON")?;
    let pipeline = &figures["pipeline"];
    anyhow::ensure!(
        pipeline["gates"] == serde_json::json!(["production"])
            && pipeline["changeFailureRate"]["crossings"] == 3
            && pipeline["changeFailureRate"]["failed"] == 1
            && pipeline["deploymentFrequency"]["crossings"] == 2
            && pipeline["timeToRestore"]["restored"] == 1
            && pipeline["timeToRestore"]["medianSeconds"]
                .as_u64()
                .is_some_and(|s| s > 0)
            && pipeline["leadTime"]["crossings"] == 2,
        "production's figures should count three crossings, one failed and restored: {pipeline}"
    );
    Ok(())
}

fn print_tour(
    kubeconfig: &Path,
    endpoint: &Endpoint,
    base: &str,
    log: &Path,
    owned: bool,
    pipeline: &pipeline::Pipeline,
    world: &Path,
) {
    // What carol is asked to approve.
    let candidate = &pipeline.bundles[3];
    let token = |who: Identity| {
        endpoint
            .tokens
            .get(&who)
            .map_or("", String::as_str)
            .to_string()
    };
    println!("Hecate demo: hecate-controller carried `shop` through namespace `{NAMESPACE}`.");
    println!(
        "  dev (automatic) → staging → production (two release managers approve; frozen at weekends)"
    );
    println!(
        "  production spans three clusters, each with its own Flux: eu-1 (the canary), then eu-2, then us-1;"
    );
    println!("  on Flux's own source-controller and kustomize-controller; kwok runs the pods.");
    println!(
        "  staging's smoke test said no to shop 1.3.1 and staging rolled back to 1.3.0 by itself;"
    );
    println!(
        "  since then it asks each release to soak 30 minutes: 1.4.0 soaks there now. 1.3.0 has carol's"
    );
    println!(
        "  approval and waits for a second release manager's (bob promoted it through staging:"
    );
    println!(
        "  his does not count). production's rollout of 1.1.0 halted on the canary at flux-wait: its pods"
    );
    println!(
        "  ask for 200 CPUs each (200m was meant), eight replicas do not fit, and Flux's health check"
    );
    println!(
        "  gave up on them; eu-2 and us-1 never saw it, and bob aborted it. 1.2.0 rolled out wave by wave."
    );
    println!(
        "  git repositories, work directories, the controller's log: {}",
        world.display()
    );
    println!();
    println!("  web UI         {base}/   (sign in with a token below)");
    println!(
        "  API            {base}/api/v1alpha1   (log: {})",
        log.display()
    );
    println!(
        "  notices        a signed webhook on {} prints each as [told] above (Notifier {NAMESPACE}/demo; hecate notifications -n {NAMESPACE})",
        pipeline.told.addr
    );
    println!("  control plane  {}", endpoint.server);
    for cluster in pipeline.clusters.iter() {
        println!(
            "  {:<14} {}   (production's; connected as Secret {NAMESPACE}/{})",
            cluster.name(),
            cluster.endpoint().server,
            cluster.name()
        );
    }
    println!(
        "  kubeconfig     {}  (contexts: admin, alice, bob, carol, dave, ci-bot, hecate-api)",
        kubeconfig.display()
    );
    println!();
    println!(
        "Try (hecate is target/debug/hecate; `cargo install --path crates/hecate-cli` puts it on PATH):"
    );
    println!("  export KUBECONFIG={}", kubeconfig.display());
    println!("  hecate explain production -n {NAMESPACE}");
    println!(
        "  hecate --context bob approvals -n {NAMESPACE}    # 1 of 2 from release-managers; bob's would not count"
    );
    println!(
        "  hecate diff {candidate} --against production -n {NAMESPACE}   # what production would take: versions, commits"
    );
    println!(
        "  hecate --context bob approve {candidate} --gate production -n {NAMESPACE}   # refused: he promoted it"
    );
    println!(
        "  hecate --context dave approve {candidate} --gate production -n {NAMESPACE}  # the second release manager"
    );
    println!("  hecate status -n {NAMESPACE} --watch     # production takes it by itself");
    println!(
        "  cargo xtask demo release                # a new version of shop: dev takes it by itself"
    );
    println!(
        "  hecate --context ci-bot status -n {NAMESPACE}    # refused: ci-bot has no Role here"
    );
    println!(
        "  hecate passages -n {NAMESPACE}               # staging's rollback, and each crossing's verification"
    );
    println!(
        "  hecate --context bob rollback staging -n {NAMESPACE}   # back to the last verified release, by hand"
    );
    println!("  hecate flux staging -n {NAMESPACE}           # the Flux objects staging watches");
    println!(
        "  hecate targets production -n {NAMESPACE}     # production's last rollout, cluster by cluster"
    );
    println!("  hecate audit -n {NAMESPACE}");
    println!(
        "  hecate metrics -n {NAMESPACE}            # lead time, deployments, failure rate, time to restore"
    );
    println!(
        "  curl -H \"Authorization: Bearer {}\" {base}/api/v1alpha1/overview",
        token(Identity::Alice)
    );
    println!("(production is frozen at weekends: then the promotion is refused, and");
    println!(" `hecate explain production` says until when.)");
    println!();
    println!(
        "Tokens for the UI and the API (alice, bob, carol and dave may read, promote, approve"
    );
    println!(
        "and abort in {NAMESPACE} — though never approve what they promote; carol and dave are the"
    );
    println!("release managers production counts; ci-bot may do nothing):");
    for who in [
        Identity::Alice,
        Identity::Bob,
        Identity::Carol,
        Identity::Dave,
        Identity::CiBot,
    ] {
        println!("  {:<7} {}", who.username(), token(who));
    }
    println!();
    if owned {
        println!("Press Ctrl-C to stop hecate-api and the control plane.");
    } else {
        println!(
            "Press Ctrl-C to stop hecate-api; the control plane (from `cargo xtask control-plane start`) keeps running."
        );
    }
}
