//! Serving HTTP to callers who may be slow on purpose, for both servers: `axum::serve`
//! has no time limits, so a client could hold a connection for as long as it likes.

use std::future::Future;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;

/// The most header lines a request may carry.
const MAX_HEADERS: usize = 100;

/// Serves `app` on `listener` over HTTP/1.1 until `stop` completes, then stops
/// accepting and returns once the connections in flight are done (the caller bounds
/// how long it waits for that: an event stream never is).
///
/// A client has `header_read` to send a request's headers, from the moment the server
/// waits for them: on a new connection, and between kept-alive requests alike — so an
/// idle connection is closed after as long. (A body's limit is the application's: it
/// depends on the route.) HTTP/1.1 only: cleartext HTTP/2 has no such limit, and
/// clients reach a server through a TLS terminator or speak HTTP/1.1 anyway.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    header_read: Duration,
    stop: impl Future<Output = ()>,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new()).http1_only();
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read)
        .max_headers(MAX_HEADERS);
    let graceful = GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, say: wait instead of spinning.
                    tracing::warn!(%error, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection.into_owned());
        tokio::spawn(async move {
            // A client that went away, or was cut off for slowness: not the server's
            // error.
            if let Err(error) = connection.await {
                tracing::debug!(%error, "a connection ended");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Resolves on SIGTERM (how Kubernetes stops a Pod) or Ctrl-C, whichever comes first;
/// where SIGTERM cannot be listened for, on Ctrl-C alone.
pub async fn shutdown_signal() {
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
}
