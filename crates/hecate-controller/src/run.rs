//! Starting the controller (spec controller.md §0.6): logs, the cluster connection, the
//! CRD skew check, Flux API discovery, tracing from `OTEL_*`, the metrics and probe
//! endpoints, then the controllers until SIGTERM or Ctrl-C (and the last spans flushed).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use hecate_sources::git::{AppTokens, Limits};
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::args::{Args, BindAddress, LogFormat, LogLevel};
use crate::beacon::{self, BeaconReconciler, Resolver};
use crate::events::Events;
use crate::gate::{self, GateReconciler, Written};
use crate::lease::{Elector, Timings};
use crate::metrics::Metrics;
use crate::passage::{self, PassageReconciler};
use crate::scope::Scope;
use crate::{crd_check, flux_api, notify, serve, telemetry, verify};
use hecate_steps::clock::SystemClock;
use hecate_steps::{self as steps, health};

/// How long reconciles under way may take to finish once a stop is asked for (a
/// kubelet waits 30 s by default before it kills).
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs the controller until it is told to stop.
pub async fn run(args: Args) -> anyhow::Result<()> {
    init_logs(args.log_format, args.log_level);
    let metrics = Arc::new(Metrics::new());
    let client = connect(args.context.as_deref(), metrics.clone()).await?;
    if args.skip_crd_check {
        tracing::warn!(
            "--skip-crd-check: not comparing the installed CRDs with this controller's; fields they lack will be dropped silently"
        );
    } else {
        let skew = crd_check::check(&client)
            .await
            .context("reading the installed CRDs")?;
        anyhow::ensure!(skew.is_empty(), "{skew}");
    }
    flux_api::warn_about_missing(&client).await;
    let otel = telemetry::Tracing::from_env()?;

    let ready = Arc::new(AtomicBool::new(false));
    // Where the controller listens: no step may call it (`reach`).
    let mut own = Vec::new();
    if let BindAddress::On(addr) = args.metrics_bind_address {
        own.push(serve::metrics(addr, metrics.clone()).await?);
    }
    if let BindAddress::On(addr) = args.health_probe_bind_address {
        own.push(serve::probes(addr, ready.clone()).await?);
    }

    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("stopping: letting reconciles under way finish");
        let _ = stop.send(true);
    });
    let shutdown = |mut stopped: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    };

    let Builtin {
        health,
        verifiers,
        steps,
        app_tokens,
        wakes,
        reach,
        flux_access,
    } = builtin(&client, &args, own)?;
    let beacons = BeaconReconciler {
        client: client.clone(),
        sources: Arc::new(
            Resolver::new(client.clone(), app_tokens)
                .context("starting git")?
                .with_git(
                    beacon::git::Git::new(beacon::git::DEFAULT_TIMEOUT).within(git_limits(&args)),
                ),
        ),
        clock: Arc::new(SystemClock),
        events: Events::new(client.clone(), "beacon-controller", args.pod_name.clone()),
        metrics: metrics.clone(),
    };
    let elector = args
        .leader_elect
        .then(|| elector(&client, &args))
        .transpose()?;
    // The namespaces this controller acts in: one watch of them for all three loops.
    let scope = Scope::start(&client, args.watch_label_selector.as_deref());
    // A step runs only in a namespace of this shard, and with election only while this
    // replica leads (DECISIONS 112, 133).
    let steps = match &elector {
        Some(elector) => steps.fenced_by(Arc::new((elector.leadership(), scope.clone()))),
        None => steps.fenced_by(Arc::new(scope.clone())),
    };
    let passages = PassageReconciler {
        client: client.clone(),
        clock: Arc::new(SystemClock),
        steps,
        verifiers: verifiers.clone(),
        events: Events::new(client.clone(), "passage-controller", args.pod_name.clone()),
        metrics: metrics.clone(),
        work_root: args.work_root.clone(),
        fides_server: args.fides_server.clone(),
        tracing: otel.clone(),
    };
    // What Gates have to tell, and the notifier that tells it (DECISION 166).
    let outbox = notify::Outbox::default();
    let notifiers = notify::Notifiers::new(
        client.clone(),
        outbox.clone(),
        reach.clone(),
        notify::Links {
            ui: args.ui_url.clone().unwrap_or_default(),
        },
        args.pod_namespace
            .clone()
            .unwrap_or_else(|| client.default_namespace().to_string()),
        notify::PER_MINUTE,
        Arc::new(SystemClock),
        metrics.clone(),
    );
    let gate_outbox = outbox.clone();
    let gate_client = client.clone();
    let gate_metrics = metrics.clone();
    let gate_events = Events::new(client.clone(), "gate-controller", args.pod_name.clone());
    let gate_fides_server = args.fides_server.clone();
    let build: gate::controller::Build = Box::new(move |stores| GateReconciler {
        client: gate_client.clone(),
        reads: stores,
        clock: Arc::new(SystemClock),
        health,
        verifiers,
        events: gate_events,
        metrics: gate_metrics,
        written: Written::default(),
        fides_server: gate_fides_server,
        outbox: gate_outbox,
    });
    // Standby replicas are ready too: readiness says the process works, not that it
    // leads (as controller-runtime has it).
    ready.store(true, Ordering::Relaxed);
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        "hecate-controller started"
    );
    if let Some(elector) = &elector {
        tracing::info!(lease = %args.leader_election_id, "waiting to lead");
        tokio::select! {
            () = elector.acquire() => tracing::info!(lease = %args.leader_election_id, "leading"),
            () = shutdown(stopped.clone()) => return Ok(()),
        }
    }
    // From here until the process ends this replica runs the controllers (leadership
    // lost ends the process).
    metrics.set_leader(true);
    // Reconciles under way get a grace period to finish after a stop is asked for; one
    // that would not end (a step stuck on a remote, a reconcile waiting for a first
    // list that the stopping controller no longer reads) must not keep the process
    // alive until the kubelet kills it and the Lease expires.
    let grace = {
        let mut stopped = stopped.clone();
        async move {
            let _ = stopped.wait_for(|stop| *stop).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
            tracing::warn!(
                grace_s = SHUTDOWN_GRACE.as_secs(),
                "reconciles still running after the grace period; stopping anyway"
            );
        }
    };
    let controllers = async {
        let all = futures::future::join4(
            gate::controller::run(
                client.clone(),
                build,
                flux_access,
                outbox.listening(),
                scope.clone(),
                shutdown(stopped.clone()),
            ),
            passage::controller::run(
                client.clone(),
                passages,
                wakes,
                scope.clone(),
                shutdown(stopped.clone()),
            ),
            beacon::controller::run(
                client.clone(),
                beacons,
                scope.clone(),
                shutdown(stopped.clone()),
            ),
            notifiers.run(scope.clone(), shutdown(stopped.clone())),
        );
        tokio::select! {
            _ = all => {},
            () = grace => {},
        }
    };
    match elector {
        None => controllers.await,
        Some(elector) => {
            tokio::select! {
                () = controllers => {
                    // Stopping cleanly: hand the Lease over now rather than when it expires.
                    if let Err(error) = elector.release().await {
                        tracing::warn!(%error, "could not hand back the leader Lease");
                    }
                }
                () = elector.keep() => anyhow::bail!(
                    "lost the leader Lease {}: stopping, so that only one replica acts",
                    args.leader_election_id
                ),
            }
        }
    }
    otel.shutdown().await;
    tracing::info!("hecate-controller stopped");
    Ok(())
}

/// This replica's candidate for the leader Lease: named after its Pod (or host and
/// process), in the controller's own namespace unless told otherwise. Timings that
/// leave no margin between the renew deadline and the Lease are refused.
fn elector(client: &kube::Client, args: &Args) -> anyhow::Result<Elector> {
    let namespace = args
        .leader_election_namespace
        .clone()
        .or_else(|| args.pod_namespace.clone())
        .unwrap_or_else(|| client.default_namespace().to_string());
    let identity = args.pod_name.clone().unwrap_or_else(|| {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "hecate-controller".into());
        format!("{host}-{}", std::process::id())
    });
    let timings = Timings {
        lease_duration: args.leader_election_lease_duration,
        renew_deadline: args.leader_election_renew_deadline,
        retry_period: args.leader_election_retry_period,
    };
    timings.check().map_err(anyhow::Error::msg)?;
    Ok(Elector::new(
        client.clone(),
        &namespace,
        &args.leader_election_id,
        &identity,
        timings,
    ))
}

/// What every controller has built in.
struct Builtin {
    /// The health checkers: `flux`.
    health: health::Checkers,
    /// The verifiers: `flagger`, `soak`, `http`, `prometheus`.
    verifiers: verify::Verifiers,
    /// The steps.
    steps: hecate_steps::engine::Steps,
    /// GitHub App installation tokens, shared by the git steps and Beacons.
    app_tokens: AppTokens,
    /// Passages whose waited-for object changed.
    wakes: passage::wake::Wakes,
    /// What `http` steps, verifications and notices may reach.
    reach: hecate_steps::reach::Reach,
    /// How the `flux` checker reaches Flux objects; the Gate controller's watches of
    /// Flux's kinds feed it.
    flux_access: Arc<hecate_steps::flux::FluxAccess>,
}

/// `--allow-local-git` and `--max-checkout-size` (0: no limit), for every git the
/// controller runs.
fn git_limits(args: &Args) -> Limits {
    Limits {
        local: args.allow_local_git,
        max_checkout_size: (args.max_checkout_size > 0).then_some(args.max_checkout_size),
    }
}

fn builtin(
    client: &kube::Client,
    args: &Args,
    own: Vec<std::net::SocketAddr>,
) -> anyhow::Result<Builtin> {
    let exec = if args.insecure_kubeconfig_exec {
        hecate_ops::kubeconfig::Exec::Allowed
    } else {
        hecate_ops::kubeconfig::Exec::Refused
    };
    let access = Arc::new(hecate_steps::flux::FluxAccess::new(client.clone()).allowing_exec(exec));
    let flux = Arc::new(hecate_steps::flux::FluxChecker::new(
        access.clone(),
        args.no_cross_namespace_refs,
    ));
    let mut health = health::Checkers::new();
    health.register(flux.clone())?;
    let mut verifiers = verify::Verifiers::new();
    verifiers.register(Arc::new(verify::FlaggerVerifier::new(
        client.clone(),
        args.no_cross_namespace_refs,
    )))?;
    verifiers.register(Arc::new(verify::SoakVerifier))?;
    let reach = hecate_steps::reach::Reach {
        local: args.allow_local_http,
        own,
    };
    // `http` and `prometheus` verifications reach what `http` steps may, and nothing
    // more.
    verifiers.register(Arc::new(verify::HttpVerifier::new(
        client.clone(),
        reach.clone(),
    )))?;
    verifiers.register(Arc::new(verify::PrometheusVerifier::new(
        client.clone(),
        reach.clone(),
    )))?;
    let (wake, wakes) = passage::wake::Watches::new(client.clone());
    let tools = steps::Tools {
        client: client.clone(),
        flux,
        refuse_cross_namespace: args.no_cross_namespace_refs,
        // git-clone, git-push and Beacons share one GitHub App token cache.
        app_tokens: AppTokens::default(),
        fides_server: args.fides_server.clone(),
        kustomize: args.kustomize_path.clone(),
        helm: args.helm_path.clone(),
        allow_kustomize_load_restrictions_none: args.allow_kustomize_load_restrictions_none,
        git: git_limits(args),
        reach: reach.clone(),
        wake: Arc::new(wake),
    };
    let steps = steps::runners(&tools)?;
    Ok(Builtin {
        health,
        verifiers,
        steps,
        app_tokens: tools.app_tokens,
        wakes,
        reach,
        flux_access: access,
    })
}

fn init_logs(format: LogFormat, level: LogLevel) {
    // `RUST_LOG`, when set, is the more precise of the two (levels per module).
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| level.directive().into());
    // Logs go to stderr, as every Kubernetes controller's do; stdout stays free.
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    match format {
        LogFormat::Json => logs.json().init(),
        LogFormat::Text => logs.init(),
    }
}

/// A client from the kubeconfig (`context` if given) or the in-cluster ServiceAccount,
/// counting its requests in `metrics`.
async fn connect(context: Option<&str>, metrics: Arc<Metrics>) -> anyhow::Result<kube::Client> {
    let config = match context {
        Some(context) => {
            let options = KubeConfigOptions {
                context: Some(context.into()),
                ..KubeConfigOptions::default()
            };
            kube::Config::from_custom_kubeconfig(Kubeconfig::read()?, &options).await?
        }
        None => kube::Config::infer()
            .await
            .context("no cluster: set KUBECONFIG, or run in a cluster")?,
    };
    let count =
        tower::util::MapRequestLayer::new(move |request: http::Request<kube::client::Body>| {
            metrics.count_request(&request);
            request
        });
    Ok(kube::client::ClientBuilder::try_from(config)?
        .with_layer(&count)
        .build())
}

/// SIGTERM (what a kubelet sends) or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
