//! The binary's flags, logging, and serving with graceful shutdown.

use std::net::SocketAddr;

use anyhow::Context as _;
use clap::{Parser, ValueEnum};

use crate::state::AppState;

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
    let connected = hecate_access::connect(&hecate_access::Connection {
        context: args.context.clone(),
        ..hecate_access::Connection::default()
    })
    .await?;
    let (client, server) = (connected.client, connected.server);
    let state = AppState::new(client, args.audiences)
        .with_fides_server(args.fides_server.unwrap_or_default())
        .cached();
    let app = crate::routes::router(state);
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("listening on {}", args.addr))?;
    tracing::info!(addr = %args.addr, cluster = %server, version = env!("CARGO_PKG_VERSION"), "hecate-api listening (plain HTTP: terminate TLS in front of it)");
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown())
        .await
        .context("serving")?;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing the requests in flight");
}
