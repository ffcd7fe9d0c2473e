//! The binary's flags, logging, and serving with graceful shutdown.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, ValueEnum};

use crate::limits::Limits;
use crate::state::AppState;

/// How long in-flight requests (event streams among them) get to finish on shutdown.
const GRACE: Duration = Duration::from_secs(15);

/// The Hecate HTTP API server: the operations layer over HTTP, and the web UI.
///
/// Every /api route needs a bearer token the Kubernetes API server accepts (a
/// TokenReview says who it is), and every action is authorised as that caller (a
/// SubjectAccessReview). The server reaches the cluster with its own credentials:
/// the in-cluster ServiceAccount, or $KUBECONFIG / ~/.kube/config.
#[derive(Parser, Debug)]
#[command(name = "hecate-api", version)]
pub struct Args {
    /// Where to listen.
    #[arg(long, env = "HECATE_API_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Audiences every TokenReview asks for (repeat or comma-separate); empty means
    /// the API server's own.
    #[arg(
        long = "token-audience",
        env = "HECATE_API_TOKEN_AUDIENCES",
        value_delimiter = ','
    )]
    pub audiences: Vec<String>,
    /// Log format.
    #[arg(long, env = "HECATE_API_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// The kubeconfig context to use (default: the current one, or in-cluster).
    #[arg(long)]
    pub context: Option<String>,
    /// The Fides server for Gates that name none in `evidence.serverURL`.
    #[arg(
        long,
        env = "FIDES_SERVER_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub fides_server: Option<String>,
    /// Run a connected cluster's kubeconfig `exec` plugin (EKS, GKE, AKS) when the
    /// Settings page probes it, as hecate-controller does under the same flag
    /// (DECISION 160); the plugin must be in this image too. Off: such a kubeconfig is
    /// said to be refused.
    #[arg(long, env = "HECATE_API_INSECURE_KUBECONFIG_EXEC")]
    pub insecure_kubeconfig_exec: bool,
    /// Seconds a client may take to send a request's headers; an idle connection is
    /// closed after as long.
    #[arg(long, env = "HECATE_API_HEADER_TIMEOUT", default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout: u64,
    /// Seconds a client may take to send a request's body.
    #[arg(long, env = "HECATE_API_BODY_TIMEOUT", default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout: u64,
    /// Event streams one caller may hold open at once.
    #[arg(long, env = "HECATE_API_MAX_STREAMS_PER_CALLER", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_streams_per_caller: u64,
    /// Event streams the server holds open at once, for everyone.
    #[arg(long, env = "HECATE_API_MAX_STREAMS", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_streams: u64,
    /// Seconds between re-authorisations of an open event stream's caller.
    #[arg(long, env = "HECATE_API_STREAM_REAUTHORIZE", default_value_t = 300, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=1800))]
    pub stream_reauthorize: u64,
    /// Browser sign-in through an OpenID Connect provider.
    #[command(flatten)]
    pub oidc: crate::oidc::OidcArgs,
}

impl Args {
    /// The limits the flags ask for.
    pub fn limits(&self) -> Limits {
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Limits {
            header_read: Duration::from_secs(self.header_timeout),
            body_read: Duration::from_secs(self.body_timeout),
            streams_per_caller: count(self.max_streams_per_caller),
            streams: count(self.max_streams),
            reauthorize_every: Duration::from_secs(self.stream_reauthorize),
        }
    }
}

/// How logs are written.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// For people.
    Text,
    /// One JSON object per line, for log pipelines.
    Json,
}

/// Runs the server until SIGTERM or Ctrl-C, then drains in-flight requests.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    match args.log_format {
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .init(),
        LogFormat::Text => tracing_subscriber::fmt().with_env_filter(filter).init(),
    }
    // Browser sign-in is checked, and its issuer discovered, before anything listens.
    let oidc = match args
        .oidc
        .settings(std::env::var("HECATE_OIDC_CLIENT_SECRET").ok())?
    {
        Some(settings) => {
            let oidc =
                crate::oidc::Oidc::discover(&settings, &crate::oidc::platform_roots()).await?;
            tracing::info!(issuer = %settings.issuer, client_id = %settings.client_id, "browser sign-in through OIDC is on: the cluster must trust the same issuer and client ID");
            Some(std::sync::Arc::new(oidc))
        }
        None => None,
    };
    let connected = hecate_access::connect(&hecate_access::Connection {
        context: args.context.clone(),
        ..hecate_access::Connection::default()
    })
    .await?;
    let (client, server) = (connected.client, connected.server);
    let limits = args.limits();
    let state = AppState::new(client, args.audiences)
        .with_fides_server(args.fides_server.unwrap_or_default())
        .with_kubeconfig_exec(if args.insecure_kubeconfig_exec {
            hecate_ops::kubeconfig::Exec::Allowed
        } else {
            hecate_ops::kubeconfig::Exec::Refused
        })
        .with_limits(limits)
        .cached();
    let state = if oidc.is_some() {
        state.with_oidc_sign_in()
    } else {
        state
    };
    let app = match oidc {
        Some(oidc) => oidc.router().merge(crate::routes::router(state)),
        None => crate::routes::router(state),
    };
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("listening on {}", args.addr))?;
    tracing::info!(addr = %args.addr, cluster = %server, version = env!("CARGO_PKG_VERSION"), "hecate-api listening (plain HTTP: terminate TLS in front of it)");
    serve(listener, app, limits, shutdown()).await;
    tracing::info!("stopped");
    Ok(())
}

/// Serves `app` on `listener` until `stop` resolves, then lets the requests in flight
/// finish — 15 s at most: event streams never do.
///
/// HTTP/1.1 with hyper's header-read timeout (`hecate_access::serve`, shared with
/// hecate-mcp): a client that sends its headers too slowly, or holds a connection
/// without sending a request — from the first byte and between kept-alive requests
/// alike — is cut off after `Limits::header_read`; the router bounds the body
/// (`Limits::body_read`).
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    limits: Limits,
    stop: impl Future<Output = ()>,
) {
    let (stopped, stopping) = tokio::sync::oneshot::channel::<()>();
    let stop = async move {
        stop.await;
        let _ = stopped.send(());
    };
    let grace = async move {
        if stopping.await.is_ok() {
            tokio::time::sleep(GRACE).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = hecate_access::serve(listener, app, limits.header_read, stop) => {}
        () = grace => tracing::info!("requests still in flight after {GRACE:?}; stopping anyway"),
    }
}

async fn shutdown() {
    hecate_access::shutdown_signal().await;
    tracing::info!("shutting down: finishing the requests in flight");
}
