//! Running the binary: check the flags, reach the cluster, say what is served (on
//! stderr: stdout carries the protocol), and serve until the client goes or a signal
//! comes.

use std::time::Duration;

use hecate_ops::{Cache, Ops};
use rmcp::ServiceExt as _;
use rmcp::service::ServerInitializeError;

use crate::args::{Args, FlagError, Http, Plan, Transport, Writes};
use crate::http::{Guards, Timeouts, router, serve};
use crate::server::{HecateMcp, Settings};
use hecate_access::{Connection, Reviewer};

/// How long in-flight HTTP requests get to finish after a signal.
const DRAIN: Duration = Duration::from_secs(5);

/// Why the server could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The flags contradict each other, or a value is malformed.
    #[error(transparent)]
    Flags(#[from] FlagError),
    /// No usable Kubernetes configuration (hecate-access says why).
    #[error("{0}")]
    Kubeconfig(String),
    /// The HTTP address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// What was asked for.
        address: String,
        /// Why not.
        source: std::io::Error,
    },
    /// The transport failed.
    #[error("{0}")]
    Serve(String),
}

/// Checks `args`, connects, and serves until the client closes stdin (stdio) or
/// SIGTERM / Ctrl-C (both).
pub async fn run(args: Args) -> Result<(), RunError> {
    let plan = args.check()?;
    init_logging();
    let connected = hecate_access::connect(&Connection {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        namespace: plan.namespace.clone(),
        ..Connection::default()
    })
    .await
    .map_err(|e| RunError::Kubeconfig(e.to_string()))?;
    let client = connected.client;
    let ops = Ops::new(client.clone()).with_fides_server(args.fides_server.unwrap_or_default());
    let settings = Settings {
        namespace: connected.namespace,
        writes: plan.writes.clone(),
    };
    match &plan.transport {
        Transport::Stdio => serve_stdio(client, ops, settings).await,
        Transport::Http(http) => serve_http(client, ops, settings, http, &plan).await,
    }
}

/// Logs go to stderr, whatever the transport: stdout is the protocol's over stdio.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "warn,hecate_mcp=info".into());
    // A second initialisation (tests running `run` twice) keeps the first.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .try_init();
}

/// `read-only`, or who writes are recorded as.
fn mode(writes: &Writes) -> String {
    match writes {
        Writes::Off => "read-only".into(),
        Writes::As(actor) => format!("writes enabled as {actor}"),
        Writes::AsCaller => "writes enabled as each authenticated caller".into(),
    }
}

async fn serve_stdio(client: kube::Client, ops: Ops, settings: Settings) -> Result<(), RunError> {
    eprintln!(
        "hecate-mcp {} serving {} over stdio ({})",
        env!("CARGO_PKG_VERSION"),
        settings.namespace,
        mode(&settings.writes)
    );
    // The kubeconfig's identity is the caller: what it may read bounds the overview.
    let server = HecateMcp::new(ops, settings, None).acting_as(client);
    let running = match server.serve(rmcp::transport::stdio_pipes()).await {
        Ok(running) => running,
        // The client went away before saying anything: nothing to serve, nothing wrong.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(RunError::Serve(format!("starting the MCP session: {e}"))),
    };
    let cancel = running.cancellation_token();
    tokio::select! {
        quit = running.waiting() => {
            quit.map_err(|e| RunError::Serve(format!("serving over stdio: {e}")))?;
        }
        () = hecate_access::shutdown_signal() => cancel.cancel(),
    }
    Ok(())
}

/// `ops` answering reads from a watch-backed cache whose watches `client` runs (a task
/// on the current runtime), as `hecate-mcp --listen` serves — like hecate-api, a tool
/// call then costs the API server nothing. Until the cache has listed once
/// ([`Cache::ready`]), reads go to the API server.
pub fn cached(ops: Ops, client: kube::Client) -> (Ops, Cache) {
    let (cache, driver) = Cache::start(client);
    tokio::spawn(driver);
    (ops.with_cache(cache.clone()), cache)
}

async fn serve_http(
    client: kube::Client,
    ops: Ops,
    settings: Settings,
    http: &Http,
    plan: &Plan,
) -> Result<(), RunError> {
    let host = if http.host.is_empty() {
        "0.0.0.0"
    } else {
        http.host.as_str()
    };
    let listener = tokio::net::TcpListener::bind((host, http.port))
        .await
        .map_err(|source| RunError::Listen {
            address: format!("{}:{}", http.host, http.port),
            source,
        })?;
    let bound = listener
        .local_addr()
        .map_err(|e| RunError::Serve(e.to_string()))?;
    let reviewer = http
        .kubernetes_auth
        .then(|| Reviewer::new(client.clone(), Vec::new()));
    let auth = if reviewer.is_some() {
        "callers authenticated by Kubernetes"
    } else {
        "no authentication"
    };
    eprintln!(
        "hecate-mcp {} serving {} over http on {bound} ({}; {auth})",
        env!("CARGO_PKG_VERSION"),
        settings.namespace,
        mode(&plan.writes)
    );
    // Over stdio a session is short, so it reads directly; over HTTP, from a cache.
    let (ops, _) = cached(ops, client.clone());
    let server = match &reviewer {
        Some(_) => HecateMcp::new(ops, settings, reviewer.clone()),
        None => HecateMcp::new(ops, settings, None).acting_as(client.clone()),
    };
    let app = router(
        server,
        Guards {
            allowed_origins: http.allowed_origins.clone(),
            allowed_hosts: http.allowed_hosts.clone(),
            reviewer,
        },
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(serve(listener, app, Timeouts::default(), async {
        let _ = stopped.await;
    }));
    hecate_access::shutdown_signal().await;
    tracing::info!("shutting down: finishing the requests in flight");
    let _ = stop.send(());
    match tokio::time::timeout(DRAIN, serving).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(RunError::Serve(format!("serving HTTP: {e}"))),
        Err(_) => {
            tracing::warn!("requests still in flight after {DRAIN:?}; stopping anyway");
            Ok(())
        }
    }
}
