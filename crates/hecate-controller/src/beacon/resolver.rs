//! The built-in [`Source`]: every watch kind, each in its own module ([`super::git`],
//! [`super::image`], [`super::chart`], [`super::provider`]), with the credentials its
//! entry names read from the Beacon's namespace.

use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use hecate_sources::git::{AppTokens, GitCredentials};
use hecate_sources::oci::{Basic, Cache, Registry, Repository};
use hecate_sources::secrets::SecretData;
use hecate_types::{
    Artifact, ChartWatch, CommitArtifact, GitWatch, ImageWatch, LocalSecretRef, WatchSourceRef,
};

use super::credentials;
use super::git::{self, Git};
use super::source::{Occasion, ResolveError, Source};
use super::{chart, image, provider};

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
    /// What image and OCI chart watches remember of registries between polls.
    pub registries: Cache,
    /// What chart watches remember of Helm repositories' indexes between polls.
    pub indexes: chart::Indexes,
}

impl Resolver {
    /// The production resolver: git with [`git::DEFAULT_TIMEOUT`], HTTP as
    /// [`http_client`] makes it, nothing remembered yet.
    pub fn new(client: kube::Client, app_tokens: AppTokens) -> std::io::Result<Self> {
        Ok(Self {
            client,
            git: Git::new(git::DEFAULT_TIMEOUT),
            app_tokens,
            http: http_client()?,
            registries: Cache::default(),
            indexes: chart::Indexes::default(),
        })
    }

    /// Runs git as `git` does: the operator's `--allow-local-git` and
    /// `--max-checkout-size` (see [`Git`]).
    #[must_use]
    pub fn with_git(mut self, git: Git) -> Self {
        self.git = git;
        self
    }

    async fn secret(
        &self,
        namespace: &str,
        secret: &LocalSecretRef,
    ) -> Result<SecretData, ResolveError> {
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
        Ok(hecate_sources::oci::credentials::registry(
            &secret.name,
            &data,
            repo,
            &host,
        )?)
    }

    async fn image(
        &self,
        namespace: &str,
        watch: &ImageWatch,
        occasion: Occasion,
    ) -> Result<Artifact, ResolveError> {
        if !watch.platform.is_empty() {
            // Refused before any request or Secret read: it would not be honoured.
            let nothing = (&Registry::default(), &Cache::default());
            return image::resolve(nothing, watch, None, occasion).await;
        }
        let auth = self
            .registry_auth(
                namespace,
                watch.credentials_ref.as_ref(),
                &watch.repo,
                watch.insecure,
            )
            .await?;
        let registry = Registry::new(self.http.clone());
        let registries = (&registry, &self.registries);
        image::resolve(registries, watch, auth.as_ref(), occasion).await
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
        let registries = (&registry, &self.registries);
        chart::resolve(&self.http, registries, &self.indexes, watch, auth.as_ref()).await
    }

    async fn one(
        &self,
        namespace: &str,
        watch: WatchSourceRef<'_>,
        occasion: Occasion,
    ) -> Result<Artifact, ResolveError> {
        match watch {
            WatchSourceRef::Git(watch) => self.git(namespace, watch).await,
            WatchSourceRef::Image(watch) => self.image(namespace, watch, occasion).await,
            WatchSourceRef::Chart(watch) => self.chart(namespace, watch).await,
            WatchSourceRef::Provider(watch) => {
                provider::resolve(&self.client, namespace, &watch.name).await
            }
        }
    }
}

/// The client Beacons reach registries and chart repositories with: [`HTTP_TIMEOUT`]
/// per request, the controller's `User-Agent`, and the servers [`hecate_sources::tls`] trusts.
pub fn http_client() -> std::io::Result<reqwest::Client> {
    hecate_sources::tls::client_builder()
        .timeout(HTTP_TIMEOUT)
        .user_agent(USER_AGENT)
        .build()
        .map_err(std::io::Error::other)
}

/// What the controller calls itself to registries and chart repositories.
pub const USER_AGENT: &str = concat!("hecate-controller/", env!("CARGO_PKG_VERSION"));

impl Source for Resolver {
    fn resolve<'a>(
        &'a self,
        namespace: &'a str,
        watch: WatchSourceRef<'a>,
        occasion: Occasion,
    ) -> BoxFuture<'a, Result<Artifact, ResolveError>> {
        self.one(namespace, watch, occasion).boxed()
    }

    fn history<'a>(
        &'a self,
        namespace: &'a str,
        watch: &'a GitWatch,
        commit: &'a CommitArtifact,
        since: Option<&'a str>,
    ) -> BoxFuture<'a, Result<git::Chronicle, ResolveError>> {
        async move {
            let secret = watch.credentials_ref.as_ref().map(|s| s.name.as_str());
            let credentials = GitCredentials::read(&self.client, namespace, secret).await?;
            self.git
                .history(watch, &credentials, &self.app_tokens, commit, since)
                .await
        }
        .boxed()
    }
}
