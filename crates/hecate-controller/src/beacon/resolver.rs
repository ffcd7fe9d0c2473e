//! The built-in [`Source`]: every watch kind, each in its own module ([`super::git`],
//! [`super::image`], [`super::chart`], [`super::provider`]), with the credentials its
//! entry names read from the Beacon's namespace.

use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use hecate_types::{Artifact, ChartWatch, GitWatch, ImageWatch, LocalSecretRef, WatchSourceRef};

use super::credentials;
use super::git::{self, Git};
use super::source::{ResolveError, Source};
use super::{chart, image, provider};
use crate::git::{AppTokens, GitCredentials};
use crate::oci::{Basic, Registry, Repository};

/// How long one HTTP request to a registry or chart repository may take.
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// Resolves watch entries against the real world: Git remotes, registries, chart
/// repositories and Flux Operator providers.
#[derive(Clone)]
pub struct Resolver {
    /// Reads credentials Secrets and providers.
    pub client: kube::Client,
    /// Runs git.
    pub git: Git,
    /// GitHub App installation tokens (shared with the git steps' cache when the
    /// process builds one for both).
    pub app_tokens: AppTokens,
    /// Talks to registries and chart repositories (its TLS roots are the ones trusted).
    pub http: reqwest::Client,
}

impl Resolver {
    /// The production resolver: git with [`git::DEFAULT_TIMEOUT`], HTTP with
    /// [`HTTP_TIMEOUT`] and the platform's web PKI roots.
    pub fn new(client: kube::Client, app_tokens: AppTokens) -> std::io::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(HTTP_TIMEOUT)
            .user_agent(concat!("hecate-controller/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(std::io::Error::other)?;
        Ok(Self {
            client,
            git: Git::new(git::DEFAULT_TIMEOUT),
            app_tokens,
            http,
        })
    }

    async fn secret(
        &self,
        namespace: &str,
        secret: &LocalSecretRef,
    ) -> Result<credentials::SecretData, ResolveError> {
        credentials::read(&self.client, namespace, &secret.name).await
    }

    async fn git(&self, namespace: &str, watch: &GitWatch) -> Result<Artifact, ResolveError> {
        let secret = watch.credentials_ref.as_ref().map(|s| s.name.as_str());
        let credentials = GitCredentials::read(&self.client, namespace, secret).await?;
        self.git
            .resolve(watch, &credentials, &self.app_tokens)
            .await
    }

    /// Registry credentials for `repo` (as written), if the entry names a Secret.
    async fn registry_auth(
        &self,
        namespace: &str,
        secret: Option<&LocalSecretRef>,
        repo: &str,
        insecure: bool,
    ) -> Result<Option<Basic>, ResolveError> {
        let Some(secret) = secret else {
            return Ok(None);
        };
        let data = self.secret(namespace, secret).await?;
        let host = Repository::parse(repo, insecure)?.registry;
        Ok(crate::oci::credentials::registry(
            &secret.name,
            &data,
            repo,
            &host,
        )?)
    }

    async fn image(&self, namespace: &str, watch: &ImageWatch) -> Result<Artifact, ResolveError> {
        if !watch.platform.is_empty() {
            // Refused before any request or Secret read: it would not be honoured.
            return image::resolve(&Registry::default(), watch, None).await;
        }
        let auth = self
            .registry_auth(
                namespace,
                watch.credentials_ref.as_ref(),
                &watch.repo,
                watch.insecure,
            )
            .await?;
        image::resolve(&Registry::new(self.http.clone()), watch, auth.as_ref()).await
    }

    async fn chart(&self, namespace: &str, watch: &ChartWatch) -> Result<Artifact, ResolveError> {
        let auth = match (&watch.credentials_ref, chart::location(watch)?) {
            (None, _) => None,
            (Some(secret), chart::Location::Oci(reference)) => {
                self.registry_auth(namespace, Some(secret), &reference, false)
                    .await?
            }
            (Some(secret), chart::Location::Index(_)) => {
                let data = self.secret(namespace, secret).await?;
                Some(credentials::basic(&secret.name, &data)?)
            }
        };
        let registry = Registry::new(self.http.clone());
        chart::resolve(&self.http, &registry, watch, auth.as_ref()).await
    }

    async fn one(
        &self,
        namespace: &str,
        watch: WatchSourceRef<'_>,
    ) -> Result<Artifact, ResolveError> {
        match watch {
            WatchSourceRef::Git(watch) => self.git(namespace, watch).await,
            WatchSourceRef::Image(watch) => self.image(namespace, watch).await,
            WatchSourceRef::Chart(watch) => self.chart(namespace, watch).await,
            WatchSourceRef::Provider(watch) => {
                provider::resolve(&self.client, namespace, &watch.name).await
            }
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
