//! The built-in [`Source`]: every watch kind, each in its own module, with the
//! credentials its entry names read from the Beacon's namespace.

use futures::FutureExt as _;
use futures::future::BoxFuture;
use hecate_types::{Artifact, GitWatch, WatchSourceRef};

use super::credentials::{self, GitAuth};
use super::git::Git;
use super::source::{ResolveError, Source};
use crate::steps::git::AppTokens;

/// Resolves watch entries against the real world: Git remotes (and, as they land,
/// registries, chart repositories and providers).
#[derive(Clone)]
pub struct Resolver {
    /// Reads credentials Secrets and providers.
    pub client: kube::Client,
    /// Runs git.
    pub git: Git,
    /// GitHub App installation tokens (shared with the git steps' cache when the
    /// process builds one for both).
    pub app_tokens: AppTokens,
}

impl Resolver {
    async fn git(&self, namespace: &str, watch: &GitWatch) -> Result<Artifact, ResolveError> {
        let auth = match &watch.credentials_ref {
            None => GitAuth::Anonymous,
            Some(secret) => {
                let data = credentials::read(&self.client, namespace, &secret.name).await?;
                credentials::git(&secret.name, &data, &self.app_tokens).await?
            }
        };
        self.git.resolve(watch, &auth).await
    }

    async fn one(&self, namespace: &str, watch: WatchSourceRef<'_>) -> Result<Artifact, ResolveError> {
        match watch {
            WatchSourceRef::Git(git) => self.git(namespace, git).await,
            WatchSourceRef::Image(image) if !image.platform.is_empty() => {
                Err(ResolveError::unsupported(format!(
                    "image {}: platform is not supported (the digest followed is the one a \
                     node pulls: the index for a multi-arch image)",
                    image.repo
                )))
            }
            WatchSourceRef::Image(image) => Err(ResolveError::unsupported(format!(
                "image {}: image sources are not supported by this controller yet",
                image.repo
            ))),
            WatchSourceRef::Chart(chart) => Err(ResolveError::unsupported(format!(
                "chart {}: chart sources are not supported by this controller yet",
                chart.repo
            ))),
            WatchSourceRef::Provider(provider) => Err(ResolveError::unsupported(format!(
                "provider {}: provider sources are not supported by this controller yet",
                provider.name
            ))),
        }
    }
}

impl Source for Resolver {
    fn resolve<'a>(
        &'a self,
        namespace: &'a str,
        watch: WatchSourceRef<'a>,
    ) -> BoxFuture<'a, Result<Artifact, ResolveError>> {
        self.one(namespace, watch).boxed()
    }
}
