//! Starting the controller (spec controller.md §0.6): logs, the cluster connection, the
//! CRD skew check, Flux API discovery, the metrics and probe endpoints, then the
//! controllers until SIGTERM or Ctrl-C.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::args::{Args, BindAddress, LogFormat};
use crate::clock::SystemClock;
use crate::events::Events;
use crate::gate::{self, GateReconciler};
use crate::metrics::Metrics;
use crate::{crd_check, flux_api, health, serve, verify};

/// Runs the controller until it is told to stop.
pub async fn run(args: Args) -> anyhow::Result<()> {
    init_logs(args.log_format);
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

    let ready = Arc::new(AtomicBool::new(false));
    if let BindAddress::On(addr) = args.metrics_bind_address {
        serve::metrics(addr, metrics.clone()).await?;
    }
    if let BindAddress::On(addr) = args.health_probe_bind_address {
        serve::probes(addr, ready.clone()).await?;
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

    let (health, verifiers) = builtin(&client, args.no_cross_namespace_refs)?;
    let gate_client = client.clone();
    let gate_metrics = metrics.clone();
    let build: gate::controller::Build = Box::new(move |stores| GateReconciler {
        client: gate_client.clone(),
        reads: stores,
        clock: Arc::new(SystemClock),
        health,
        verifiers,
        events: Events::new(gate_client, "gate-controller"),
        metrics: gate_metrics,
    });
    ready.store(true, Ordering::Relaxed);
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        "hecate-controller started"
    );
    gate::controller::run(
        client,
        build,
        args.watch_label_selector.clone(),
        shutdown(stopped.clone()),
    )
    .await;
    tracing::info!("hecate-controller stopped");
    Ok(())
}

/// The health checkers (`flux`) and verifiers (`flagger`) every controller has.
fn builtin(
    client: &kube::Client,
    refuse_cross_namespace: bool,
) -> anyhow::Result<(health::Registry, verify::Registry)> {
    let mut checkers = health::Registry::new();
    let access = Arc::new(health::flux_access::FluxAccess::new(client.clone()));
    checkers.register(Arc::new(health::FluxChecker::new(
        access,
        refuse_cross_namespace,
    )))?;
    let mut verifiers = verify::Registry::new();
    verifiers.register(Arc::new(verify::FlaggerVerifier::new(client.clone())))?;
    Ok((checkers, verifiers))
}

fn init_logs(format: LogFormat) {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    match format {
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .init(),
        LogFormat::Text => tracing_subscriber::fmt().with_env_filter(filter).init(),
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
