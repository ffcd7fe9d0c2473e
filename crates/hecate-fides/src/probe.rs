//! Whether a Fides server answers at all: `GET <server>/api/v1/flows`, without
//! credentials, within a time limit. What the answer means (a 401 still shows the
//! server is there) is `hecate-ops`' to decide.

use std::time::Duration;

/// What a probe saw.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// answer in time. The text says which.
    Failed(String),
}

/// Asks `server` (a base URL; a path prefix is kept) for its flows, without
/// credentials, giving up after `timeout`. Redirects are not followed: any answer
/// shows the server is there.
pub async fn probe(server: &str, timeout: Duration) -> Probe {
    let base = server.trim().trim_end_matches('/');
    let url = match url::Url::parse(&format!("{base}/api/v1/flows")) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => url,
        Ok(url) => {
            return Probe::Failed(format!(
                "the server URL must be http or https, not {}",
                url.scheme()
            ));
        }
        Err(e) => return Probe::Failed(format!("the server URL is not usable: {e}")),
    };
    let http = match reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(http) => http,
        Err(e) => return Probe::Failed(format!("building the HTTP client: {e}")),
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
        Err(e) if e.is_timeout() => {
            Probe::Failed(format!("no answer within {}s", timeout.as_secs_f32()))
        }
        Err(e) => Probe::Failed(error_chain(&e)),
    }
}

/// An error and its causes, `a: b: c` (reqwest's own text alone says only "error
/// sending request").
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unusable_url_is_said_to_be_one() {
        let probed = probe("ftp://fides.example", Duration::from_secs(1)).await;
        assert!(
            matches!(&probed, Probe::Failed(text) if text.contains("http or https")),
            "{probed:?}"
        );
        let probed = probe("not a url", Duration::from_secs(1)).await;
        assert!(
            matches!(&probed, Probe::Failed(text) if text.contains("not usable")),
            "{probed:?}"
        );
    }
}
