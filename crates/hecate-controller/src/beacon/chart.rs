//! The `chart` source (spec controller.md §1.3): the highest chart version within the
//! watch's range, from an OCI registry (`oci://…`: the repository's tags) or an HTTPS
//! Helm repository (its `index.yaml`, at most 64 MiB, with basic authentication when
//! the watch names a Secret). Selection is always by semantic version.

use std::collections::BTreeMap;

use hecate_types::{Artifact, ChartWatch};
use reqwest::StatusCode;
use serde::Deserialize;

use super::select::Selection;
use super::source::ResolveError;
use crate::oci::{Basic, Registry, Repository};

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

/// Resolves `watch` with `auth` (none: anonymous).
pub async fn resolve(
    http: &reqwest::Client,
    registry: &Registry,
    watch: &ChartWatch,
    auth: Option<&Basic>,
) -> Result<Artifact, ResolveError> {
    let versions = match location(watch)? {
        Location::Oci(reference) => {
            let repo = Repository::parse(&reference, false)?;
            registry.session(&repo, auth).tags().await?
        }
        Location::Index(url) => {
            let index = fetch_index(http, &url, auth).await?;
            versions(&index, &watch.name).ok_or_else(|| {
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

/// GETs `url`, refusing more than [`MAX_INDEX`] bytes.
async fn fetch_index(
    http: &reqwest::Client,
    url: &str,
    auth: Option<&Basic>,
) -> Result<Vec<u8>, ResolveError> {
    let mut request = http.get(url);
    if let Some(basic) = auth {
        request = request.basic_auth(&basic.username, Some(&basic.password));
    }
    let mut response = request
        .send()
        .await
        .map_err(|e| ResolveError::failed(format!("{url} is unreachable: {e}")))?;
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
    Ok(body)
}

#[derive(Deserialize)]
struct Index {
    #[serde(default)]
    entries: BTreeMap<String, Vec<Entry>>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    version: String,
}

/// The versions `index` lists for chart `name`; `None` when it has no such chart (or
/// is not an index).
pub fn versions(index: &[u8], name: &str) -> Option<Vec<String>> {
    let index: Index = serde_yaml_ng::from_slice(index).ok()?;
    index
        .entries
        .get(name)
        .map(|entries| entries.iter().map(|e| e.version.clone()).collect())
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
    }
}
