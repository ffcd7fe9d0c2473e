//! What the API server served, from its own `apiserver_request_total` counter — not
//! from our code's idea of what it sent.

use serde::Serialize;

/// Requests the API server counted, by what they were for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Counts {
    /// Reads and writes of `hecate.dev` objects (watches count when they end).
    pub(crate) hecate: f64,
    /// TokenReviews.
    pub(crate) token_reviews: f64,
    /// SubjectAccessReviews.
    pub(crate) access_reviews: f64,
    /// Discovery (`/api`, `/apis`: aggregated discovery needs no more).
    pub(crate) discovery: f64,
}

impl Counts {
    /// What happened between `self` (earlier) and `later`.
    pub(crate) fn until(self, later: Self) -> Self {
        Self {
            hecate: later.hecate - self.hecate,
            token_reviews: later.token_reviews - self.token_reviews,
            access_reviews: later.access_reviews - self.access_reviews,
            discovery: later.discovery - self.discovery,
        }
    }
}

/// The counter now. `admin` reads `/metrics` (which the counter does not count). The
/// server updates the counter as it finishes a response, a moment after the client has
/// it: callers leave a short pause before reading it.
pub(crate) async fn counts(admin: &kube::Client) -> anyhow::Result<Counts> {
    let request = http::Request::get("/metrics").body(Vec::new())?;
    let text = admin.request_text(request).await?;
    Ok(parse(&text))
}

fn parse(text: &str) -> Counts {
    let mut counts = Counts::default();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("apiserver_request_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let Ok(value) = value.trim().parse::<f64>() else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split(',')
                .find_map(|pair| pair.strip_prefix(&format!("{name}=\"")))
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or_default()
        };
        let slot = match (label("group"), label("resource"), label("subresource")) {
            ("hecate.dev", _, _) => &mut counts.hecate,
            (_, "tokenreviews", _) => &mut counts.token_reviews,
            (_, "subjectaccessreviews", _) => &mut counts.access_reviews,
            (_, "", "api" | "apis") => &mut counts.discovery,
            _ => continue,
        };
        *slot += value;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_the_counter_by_what_was_asked() {
        let text = r#"# HELP apiserver_request_total [STABLE] Counter of apiserver requests
apiserver_request_total{code="200",component="apiserver",dry_run="",group="hecate.dev",resource="gates",scope="namespace",subresource="",verb="LIST",version="v1alpha1"} 4
apiserver_request_total{code="200",component="apiserver",dry_run="",group="hecate.dev",resource="gates",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 2
apiserver_request_total{code="201",component="apiserver",dry_run="",group="authentication.k8s.io",resource="tokenreviews",scope="cluster",subresource="",verb="POST",version="v1"} 3
apiserver_request_total{code="201",component="apiserver",dry_run="",group="authorization.k8s.io",resource="subjectaccessreviews",scope="cluster",subresource="",verb="POST",version="v1"} 5
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="apis",verb="GET",version=""} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 641
apiserver_request_total{code="200",component="",dry_run="",group="",resource="",scope="",subresource="openapi/v3",verb="GET",version=""} 1317
"#;
        assert_eq!(
            parse(text),
            Counts {
                hecate: 6.0,
                token_reviews: 3.0,
                access_reviews: 5.0,
                discovery: 1.0,
            }
        );
    }
}
