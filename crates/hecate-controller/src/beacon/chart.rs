//! The `chart` source (spec controller.md §1.3): the highest chart version within the
//! watch's range, from an OCI registry (`oci://…`: the repository's tags) or an HTTPS
//! Helm repository (its `index.yaml`, at most 64 MiB, with basic authentication when
//! the watch names a Secret). Selection is always by semantic version.
//!
//! An index that has not changed is not sent again: what a repository last served is
//! remembered ([`Indexes`]: its `ETag` and `Last-Modified`, and the versions it lists
//! per chart), and the next poll asks with `If-None-Match` / `If-Modified-Since`, so an
//! unchanged repository answers `304` with no body to read or parse. Polls of one index
//! take turns, and one that began before an answer arrived uses it. Servers are trusted
//! as [`hecate_sources::tls`] says.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use hecate_sources::oci::cache::{Memory, identity};
use hecate_sources::oci::{Basic, Cache, Registry, Repository};
use hecate_types::{Artifact, ChartWatch};
use reqwest::StatusCode;
use reqwest::header::{ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use serde::Deserialize;

use super::select::Selection;
use super::source::ResolveError;

/// The largest `index.yaml` read.
pub const MAX_INDEX: usize = 64 * 1024 * 1024;

/// Where a chart watch reads versions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// An OCI repository (the `oci://` prefix stripped).
    Oci(String),
    /// An HTTPS Helm repository's `index.yaml`.
    Index(String),
}

/// Where `watch` reads; an OCI chart names no chart (its reference already does).
pub fn location(watch: &ChartWatch) -> Result<Location, ResolveError> {
    match watch.repo.strip_prefix("oci://") {
        Some(_) if !watch.name.is_empty() => Err(ResolveError::failed(format!(
            "chart {}: name must be empty for an oci:// repository (the reference names the chart)",
            watch.repo
        ))),
        Some(reference) => Ok(Location::Oci(reference.to_string())),
        None if watch.name.is_empty() => Err(ResolveError::failed(format!(
            "chart {}: name is required for a Helm repository",
            watch.repo
        ))),
        None => Ok(Location::Index(format!(
            "{}/index.yaml",
            watch.repo.trim_end_matches('/')
        ))),
    }
}

/// Resolves `watch` with `auth` (none: anonymous): an OCI chart through `registry`,
/// remembering in `registries`, an index over `http`, remembering in `indexes`.
pub async fn resolve(
    http: &reqwest::Client,
    (registry, registries): (&Registry, &Cache),
    indexes: &Indexes,
    watch: &ChartWatch,
    auth: Option<&Basic>,
) -> Result<Artifact, ResolveError> {
    let versions: Vec<String> = match location(watch)? {
        Location::Oci(reference) => {
            let repo = Repository::parse(&reference, false)?;
            let mut look = registries.look(registry, &repo, auth).await;
            look.tags().await?.to_vec()
        }
        Location::Index(url) => {
            let charts = indexes.charts(http, &url, auth).await?;
            charts.get(&watch.name).cloned().ok_or_else(|| {
                ResolveError::failed(format!(
                    "{} has no chart named {:?}",
                    watch.repo, watch.name
                ))
            })?
        }
    };
    let selection = Selection {
        constraint: &watch.constraint,
        ..Selection::default()
    };
    let version = selection.pick(&versions).map_err(|e| ResolveError {
        message: format!("chart {}: {}", watch.repo, e.message),
        ..e
    })?;
    Ok(Artifact::chart(
        watch.repo.clone(),
        watch.name.clone(),
        version,
    ))
}

/// The versions an index lists, per chart.
pub type Charts = BTreeMap<String, Vec<String>>;

/// What Helm repositories last served, per index URL and credentials. Clones share it.
#[derive(Clone, Default)]
pub struct Indexes {
    memory: Arc<Memory<IndexKey, Served>>,
}

/// An index URL and the identity of the credentials it is read with.
type IndexKey = (String, Option<[u8; 32]>);

/// What one index URL served one set of credentials.
#[derive(Default)]
struct Served {
    /// Its validators and charts, from the last time it sent the index.
    index: Option<Index>,
    /// When the last answer arrived, and what it came to.
    last: Option<(Instant, Result<Arc<Charts>, ResolveError>)>,
}

/// An index as served.
struct Index {
    etag: Option<String>,
    last_modified: Option<String>,
    charts: Arc<Charts>,
}

impl Indexes {
    /// The charts the index at `url` lists now: asked for conditionally when it was
    /// served before, so an unchanged one costs a `304`.
    pub async fn charts(
        &self,
        http: &reqwest::Client,
        url: &str,
        auth: Option<&Basic>,
    ) -> Result<Arc<Charts>, ResolveError> {
        let asked = Instant::now();
        let mut served = self.memory.take(&(url.to_string(), identity(auth))).await;
        if let Some((at, result)) = &served.last
            && *at >= asked
        {
            return result.clone();
        }
        let result = match fetch_index(http, url, auth, served.index.as_ref()).await {
            Ok(Fetched::NotModified(charts)) => Ok(charts),
            Ok(Fetched::Index(index)) => {
                let charts = index.charts.clone();
                served.index = Some(index);
                Ok(charts)
            }
            Err(error) => Err(error),
        };
        served.last = Some((Instant::now(), result.clone()));
        result
    }
}

/// What a GET of an index brought.
enum Fetched {
    /// The index last served is still the index: its charts.
    NotModified(Arc<Charts>),
    /// A new index.
    Index(Index),
}

/// GETs `url` — conditionally when `last` was served before — refusing more than
/// [`MAX_INDEX`] bytes.
async fn fetch_index(
    http: &reqwest::Client,
    url: &str,
    auth: Option<&Basic>,
    last: Option<&Index>,
) -> Result<Fetched, ResolveError> {
    let mut request = http.get(url);
    if let Some(basic) = auth {
        request = request.basic_auth(&basic.username, Some(&basic.password));
    }
    for (header, value) in last.map(validators).unwrap_or_default() {
        request = request.header(header, value);
    }
    let mut response = request.send().await.map_err(|e| {
        let why = hecate_sources::tls::error_text(&e);
        ResolveError::failed(match hecate_sources::tls::untrusted_hint(&e) {
            Some(hint) => format!("{url}: {why}{hint}"),
            None => format!("{url} is unreachable: {why}"),
        })
    })?;
    if let (StatusCode::NOT_MODIFIED, Some(last)) = (response.status(), last) {
        return Ok(Fetched::NotModified(last.charts.clone()));
    }
    match response.status() {
        status if status.is_success() => {}
        status @ (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) => {
            return Err(ResolveError::failed(format!(
                "{url} refused access ({status}){}",
                if auth.is_some() {
                    ": check the credentials Secret"
                } else {
                    ": it needs credentials (credentialsRef)"
                }
            )));
        }
        status => return Err(ResolveError::failed(format!("{url} answered {status}"))),
    }
    let response_headers = response.headers().clone();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| ResolveError::failed(format!("reading {url}: {e}")))?
    {
        if body.len() + chunk.len() > MAX_INDEX {
            return Err(ResolveError::failed(format!(
                "{url} is larger than {} MiB",
                MAX_INDEX / 1024 / 1024
            )));
        }
        body.extend_from_slice(&chunk);
    }
    let header = |name| {
        response_headers
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
            .map(String::from)
    };
    let charts = charts(&body)
        .ok_or_else(|| ResolveError::failed(format!("{url} is not a Helm repository index")))?;
    Ok(Fetched::Index(Index {
        etag: header(ETAG),
        last_modified: header(LAST_MODIFIED),
        charts: Arc::new(charts),
    }))
}

/// The conditional headers that ask whether `index` is still what the server has.
fn validators(index: &Index) -> Vec<(reqwest::header::HeaderName, String)> {
    let mut headers = Vec::new();
    if let Some(etag) = &index.etag {
        headers.push((IF_NONE_MATCH, etag.clone()));
    }
    if let Some(last_modified) = &index.last_modified {
        headers.push((IF_MODIFIED_SINCE, last_modified.clone()));
    }
    headers
}

#[derive(Deserialize)]
struct IndexFile {
    #[serde(default)]
    entries: BTreeMap<String, Vec<Entry>>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    version: String,
}

/// The versions `index` lists per chart; `None` when it is not an index.
pub fn charts(index: &[u8]) -> Option<Charts> {
    let index: IndexFile = serde_yaml_ng::from_slice(index).ok()?;
    Some(
        index
            .entries
            .into_iter()
            .map(|(name, entries)| (name, entries.into_iter().map(|e| e.version).collect()))
            .collect(),
    )
}

/// The versions `index` lists for chart `name`; `None` when it has no such chart (or
/// is not an index).
pub fn versions(index: &[u8], name: &str) -> Option<Vec<String>> {
    charts(index)?.remove(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(repo: &str, name: &str) -> ChartWatch {
        ChartWatch {
            repo: repo.into(),
            name: name.into(),
            ..ChartWatch::default()
        }
    }

    #[test]
    fn where_a_chart_is_read() {
        assert_eq!(
            location(&watch("oci://ghcr.io/acme/charts/api", "")),
            Ok(Location::Oci("ghcr.io/acme/charts/api".into()))
        );
        assert_eq!(
            location(&watch("https://charts.example.com/stable/", "api")),
            Ok(Location::Index(
                "https://charts.example.com/stable/index.yaml".into()
            ))
        );
        assert!(location(&watch("oci://ghcr.io/acme/charts/api", "api")).is_err());
        assert!(location(&watch("https://charts.example.com", "")).is_err());
    }

    #[test]
    fn an_index_lists_versions_per_chart() {
        let index = br#"
apiVersion: v1
entries:
  api:
    - version: 1.2.0
      urls: [api-1.2.0.tgz]
    - version: 1.10.0
  web:
    - version: 0.1.0
generated: "2026-08-10T12:00:00Z"
"#;
        assert_eq!(
            versions(index, "api"),
            Some(vec!["1.2.0".into(), "1.10.0".into()])
        );
        assert_eq!(versions(index, "db"), None);
        assert_eq!(versions(b"not: [an index", "api"), None);
        assert_eq!(
            charts(index).map(|charts| charts.into_keys().collect::<Vec<_>>()),
            Some(vec!["api".to_string(), "web".to_string()])
        );
    }

    #[test]
    fn an_index_served_before_is_asked_for_with_its_validators() {
        let served = |etag: Option<&str>, last_modified: Option<&str>| Index {
            etag: etag.map(String::from),
            last_modified: last_modified.map(String::from),
            charts: Arc::default(),
        };
        assert_eq!(
            validators(&served(
                Some("\"v1\""),
                Some("Tue, 01 Dec 2026 05:00:00 GMT")
            )),
            [
                (IF_NONE_MATCH, "\"v1\"".to_string()),
                (
                    IF_MODIFIED_SINCE,
                    "Tue, 01 Dec 2026 05:00:00 GMT".to_string()
                )
            ]
        );
        assert_eq!(
            validators(&served(None, Some("Tue, 01 Dec 2026 05:00:00 GMT"))),
            [(
                IF_MODIFIED_SINCE,
                "Tue, 01 Dec 2026 05:00:00 GMT".to_string()
            )]
        );
        assert_eq!(validators(&served(None, None)), []);
    }
}
