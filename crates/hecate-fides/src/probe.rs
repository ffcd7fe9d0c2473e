//! Whether a Fides server answers at all: `GET <server>/api/v1/flows`, without
//! credentials, within a time limit. What the answer means (a 401 still shows the
//! server is there) is `hecate-ops`' to decide.

use std::time::Duration;

/// What a probe saw.
#[derive(Debug)]
pub enum Probe {
    /// The server answered with this status code; `line` is the status line, e.g.
    /// `503 Service Unavailable`.
    Answered {
        /// The status code.
        status: u16,
        /// The code and its reason phrase.
        line: String,
    },
    /// No answer: the URL is unusable, the server could not be reached, or it did not
    /// answer in time. How to word it (with its causes) is the caller's.
    Failed(Unanswered),
}

/// Why a probe got no answer.
#[derive(Debug, thiserror::Error)]
pub enum Unanswered {
    /// The URL is not `http` or `https`.
    #[error("the server URL must be http or https, not {0}")]
    Scheme(String),
    /// The URL does not parse.
    #[error("the server URL is not usable")]
    Url(#[source] url::ParseError),
    /// The HTTP client could not be built.
    #[error("building the HTTP client")]
    Client(#[source] reqwest::Error),
    /// Nothing answered within the time limit.
    #[error("no answer within {}s", .0.as_secs_f32())]
    Timeout(Duration),
    /// The request failed (refused, unresolvable, TLS): reqwest's words and causes.
    #[error(transparent)]
    Request(reqwest::Error),
}

/// Asks `server` (a base URL; a path prefix is kept) for its flows, without
/// credentials, giving up after `timeout`. Redirects are not followed: any answer
/// shows the server is there.
pub async fn probe(server: &str, timeout: Duration) -> Probe {
    let base = server.trim().trim_end_matches('/');
    let url = match url::Url::parse(&format!("{base}/api/v1/flows")) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => url,
        Ok(url) => return Probe::Failed(Unanswered::Scheme(url.scheme().to_string())),
        Err(e) => return Probe::Failed(Unanswered::Url(e)),
    };
    let http = match reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(http) => http,
        Err(e) => return Probe::Failed(Unanswered::Client(e)),
    };
    match http.get(url).send().await {
        Ok(response) => {
            let status = response.status();
            Probe::Answered {
                status: status.as_u16(),
                line: format!(
                    "{} {}",
                    status.as_u16(),
                    status.canonical_reason().unwrap_or_default()
                )
                .trim_end()
                .to_string(),
            }
        }
        Err(e) if e.is_timeout() => Probe::Failed(Unanswered::Timeout(timeout)),
        Err(e) => Probe::Failed(Unanswered::Request(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unusable_url_is_said_to_be_one() {
        let probed = probe("ftp://fides.example", Duration::from_secs(1)).await;
        assert!(
            matches!(&probed, Probe::Failed(why) if why.to_string().contains("http or https")),
            "{probed:?}"
        );
        let probed = probe("not a url", Duration::from_secs(1)).await;
        assert!(
            matches!(&probed, Probe::Failed(Unanswered::Url(_))),
            "{probed:?}"
        );
    }
}
