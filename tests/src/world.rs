//! The world outside the cluster that a crossing touches, made of real local parts:
//! bare git repositories on disk (an application's, a fleet's with a branch per
//! environment), and a loop that plays Flux — when an environment's branch moves it
//! reports the stand-in Kustomization applied at that commit, as Flux's
//! kustomize-controller would. The end-to-end test and `cargo xtask demo` both build
//! their pipelines on it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context as _;
use tokio::process::Command;

use crate::flux::{self, KUSTOMIZATION};

/// Runs git in `dir` with a clean environment and a fixed identity; its output,
/// trimmed.
pub async fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "Dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .output()
        .await
        .context("running git (is it installed?)")?;
    anyhow::ensure!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// A bare repository with a work tree beside it to commit from.
#[derive(Clone, Debug)]
pub struct Repository {
    /// `<root>/<name>.git`.
    pub bare: PathBuf,
    /// `<root>/<name>-work`.
    pub work: PathBuf,
    /// `file://` URL of the bare repository: what Beacons and steps are given.
    pub url: String,
}

impl Repository {
    /// Creates `<name>.git` under `root` (replacing one there), seeded with `files`
    /// in one commit pushed to each of `branches`.
    pub async fn create(
        root: &Path,
        name: &str,
        branches: &[&str],
        files: &[(impl AsRef<str>, impl AsRef<str>)],
    ) -> anyhow::Result<Self> {
        let first = branches.first().context("a repository needs a branch")?;
        let bare = root.join(format!("{name}.git"));
        let work = root.join(format!("{name}-work"));
        for dir in [&bare, &work] {
            if dir.exists() {
                std::fs::remove_dir_all(dir)?;
            }
            std::fs::create_dir_all(dir)?;
        }
        git(
            &bare,
            &["init", "--quiet", "--bare", "--initial-branch", first],
        )
        .await?;
        git(&work, &["init", "--quiet", "--initial-branch", first]).await?;
        for (file, text) in files {
            write_file(&work, file.as_ref(), text.as_ref())?;
        }
        git(&work, &["add", "."]).await?;
        git(
            &work,
            &["commit", "--quiet", "-m", &format!("{name}: first")],
        )
        .await?;
        let url = format!("file://{}", bare.display());
        git(&work, &["remote", "add", "origin", &url]).await?;
        let refspecs: Vec<String> = branches
            .iter()
            .map(|branch| format!("HEAD:refs/heads/{branch}"))
            .collect();
        let mut push = vec!["push", "--quiet", "origin"];
        push.extend(refspecs.iter().map(String::as_str));
        git(&work, &push).await?;
        Ok(Self { bare, work, url })
    }

    /// Writes `file` and commits it to `branch` with `message`; the new SHA.
    pub async fn commit(
        &self,
        branch: &str,
        file: &str,
        text: &str,
        message: &str,
    ) -> anyhow::Result<String> {
        self.commit_files(branch, &[(file, text)], message).await
    }

    /// Writes `files` (paths relative to the work tree) and commits them to `branch`
    /// with `message`, in one commit; the new SHA.
    pub async fn commit_files(
        &self,
        branch: &str,
        files: &[(impl AsRef<str>, impl AsRef<str>)],
        message: &str,
    ) -> anyhow::Result<String> {
        for (file, text) in files {
            write_file(&self.work, file.as_ref(), text.as_ref())?;
        }
        git(&self.work, &["add", "."]).await?;
        git(&self.work, &["commit", "--quiet", "-m", message]).await?;
        git(
            &self.work,
            &[
                "push",
                "--quiet",
                "origin",
                &format!("HEAD:refs/heads/{branch}"),
            ],
        )
        .await?;
        git(&self.work, &["rev-parse", "HEAD"]).await
    }

    /// Commits `files` onto `branch` as it is in the bare repository now — after
    /// pushes from elsewhere (a crossing's `git-push`) too — with `message`; the new
    /// SHA. The work tree is left at that commit, detached.
    pub async fn commit_on_tip(
        &self,
        branch: &str,
        files: &[(impl AsRef<str>, impl AsRef<str>)],
        message: &str,
    ) -> anyhow::Result<String> {
        git(&self.work, &["fetch", "--quiet", "origin", branch]).await?;
        git(
            &self.work,
            &["checkout", "--quiet", "--detach", "FETCH_HEAD"],
        )
        .await?;
        self.commit_files(branch, files, message).await
    }

    /// Tags the work tree's `HEAD` as `tag` (annotated, as releases are) and pushes the
    /// tag.
    pub async fn tag(&self, tag: &str) -> anyhow::Result<()> {
        git(&self.work, &["tag", "-a", tag, "-m", tag]).await?;
        git(
            &self.work,
            &["push", "--quiet", "origin", &format!("refs/tags/{tag}")],
        )
        .await?;
        Ok(())
    }

    /// The repository's URL on `server`, which serves the directory it is in.
    pub fn served(&self, server: &crate::git_http::GitHttp) -> String {
        let name = self
            .bare
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        server.url(&name)
    }

    /// The head of `branch`, as the bare repository has it.
    pub async fn head(&self, branch: &str) -> anyhow::Result<String> {
        git(&self.bare, &["rev-parse", &format!("refs/heads/{branch}")]).await
    }

    /// The heads of every branch under `prefix` (e.g. `env/`), by branch name, read in
    /// one call however many there are.
    pub async fn heads(&self, prefix: &str) -> anyhow::Result<HashMap<String, String>> {
        let refs = git(
            &self.bare,
            &[
                "for-each-ref",
                "--format=%(refname:strip=2) %(objectname)",
                &format!("refs/heads/{prefix}"),
            ],
        )
        .await?;
        Ok(refs
            .lines()
            .filter_map(|line| line.split_once(' '))
            .map(|(branch, sha)| (branch.to_string(), sha.to_string()))
            .collect())
    }

    /// `path` at `revision` (`env/dev:values.yaml`), as the bare repository has it.
    pub async fn show(&self, revision_path: &str) -> anyhow::Result<String> {
        git(&self.bare, &["show", revision_path]).await
    }
}

/// Writes `text` to `file` under `root`, making its directories.
fn write_file(root: &Path, file: &str, text: &str) -> anyhow::Result<()> {
    let path = root.join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

/// Plays Flux for Kustomizations `app-<environment>`, each following branch
/// `env/<environment>` of a fleet repository. Stops when dropped.
pub struct FluxPlayer {
    paused: Arc<Mutex<HashSet<String>>>,
    /// Environments whose next apply fails, with the reason Flux gives.
    failing: Arc<Mutex<HashMap<String, String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl FluxPlayer {
    /// Starts playing Flux in `namespace` (the Kustomizations must exist).
    pub fn start(
        client: kube::Client,
        namespace: &str,
        fleet: Repository,
        environments: &[&str],
    ) -> Self {
        let paused: Arc<Mutex<HashSet<String>>> = Arc::default();
        let failing: Arc<Mutex<HashMap<String, String>>> = Arc::default();
        let environments: Vec<String> = environments.iter().map(|e| e.to_string()).collect();
        let namespace = namespace.to_string();
        let held = paused.clone();
        let broken = failing.clone();
        let task = tokio::spawn(async move {
            let mut applied = vec![String::new(); environments.len()];
            loop {
                // One look at every branch, however many environments there are.
                let heads = fleet.heads("env/").await.unwrap_or_default();
                for (i, environment) in environments.iter().enumerate() {
                    if held
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .contains(environment)
                    {
                        continue;
                    }
                    let branch = format!("env/{environment}");
                    let Some(sha) = heads.get(&branch).cloned() else {
                        continue;
                    };
                    if sha == applied[i] {
                        continue;
                    }
                    let revision = format!("{branch}@sha1:{sha}");
                    let name = format!("app-{environment}");
                    let failure = broken
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(environment);
                    let reported = match &failure {
                        Some(reason) => {
                            flux::report_failed(
                                &client,
                                KUSTOMIZATION,
                                &namespace,
                                &name,
                                &revision,
                                reason,
                            )
                            .await
                        }
                        None => {
                            flux::report_applied(
                                &client,
                                KUSTOMIZATION,
                                &namespace,
                                &name,
                                &revision,
                            )
                            .await
                        }
                    };
                    if reported.is_ok() {
                        applied[i] = sha;
                    }
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        Self {
            paused,
            failing,
            task,
        }
    }

    /// Makes the next apply in `environment` fail for `reason`, as a health check that
    /// never passes would: the Kustomization stalls at that revision. The apply after it
    /// succeeds again.
    pub fn fail_next(&self, environment: &str, reason: &str) {
        self.failing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(environment.to_string(), reason.to_string());
    }

    /// Stops applying `environment`'s branch (Flux lagging or broken there).
    pub fn pause(&self, environment: &str) {
        self.paused
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(environment.to_string());
    }

    /// Applies `environment`'s branch again.
    pub fn resume(&self, environment: &str) {
        self.paused
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(environment);
    }
}

impl Drop for FluxPlayer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Creates the stand-in Kustomizations `app-<environment>` in `namespace`, for a
/// [`FluxPlayer`] to report on: valid Flux objects (so a cluster running Flux's own
/// CRDs takes them too), labelled [`flux::STAND_IN_LABEL`] so Flux's controllers,
/// where they run, leave them to the player.
pub async fn kustomizations(
    client: &kube::Client,
    namespace: &str,
    environments: &[&str],
) -> anyhow::Result<()> {
    use kube::api::{Api, DynamicObject, PostParams};
    flux::install_flux_standins(client).await?;
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), namespace, &KUSTOMIZATION.api_resource());
    for environment in environments {
        let mut object =
            DynamicObject::new(&format!("app-{environment}"), &KUSTOMIZATION.api_resource());
        object.metadata.labels =
            Some([(flux::STAND_IN_LABEL.to_string(), "true".to_string())].into());
        object.data = serde_json::json!({"spec": {
            "path": format!("./envs/{environment}"),
            "interval": "1m",
            "prune": false,
            "sourceRef": {"kind": "GitRepository", "name": "fleet"},
        }});
        match api.create(&PostParams::default(), &object).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

/// A pipeline of the spec's §10.1 shape, as YAML to apply: Beacon `beacon` on the
/// application repository's `main`, and one Gate per stage that clones the fleet's
/// `env/<gate>` branch, sets `<beacon>.revision` in `values.yaml` to the Bundle's
/// commit, commits, pushes, waits for Kustomization `app-<gate>` to apply that commit
/// and, when `hook` is given, always calls it. The end-to-end test, the demo and the
/// bench all cross this shape.
#[derive(Clone, Debug)]
pub struct Pipeline<'a> {
    /// The namespace everything goes in.
    pub namespace: &'a str,
    /// The Beacon's name (and the key in `values.yaml`).
    pub beacon: &'a str,
    /// The application repository's URL.
    pub app: &'a str,
    /// The fleet repository's URL.
    pub fleet: &'a str,
    /// A URL the crossing calls at the end, failed or not.
    pub hook: Option<&'a str>,
    /// The Gates, in order.
    pub stages: &'a [Stage<'a>],
    /// Which Flux applies the fleet.
    pub flux: Flux,
}

/// Which Flux a [`Pipeline`] is crossed against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flux {
    /// The stand-in Kustomizations [`FluxPlayer`] reports on. The Beacon follows the
    /// application's `main`, and a crossing sets `<beacon>.revision` in `values.yaml`.
    StandIn,
    /// Flux's own controllers over the objects [`crate::fleet::flux_objects`] makes.
    /// The Beacon follows the application's release tags (`v1.2.3`); a crossing also
    /// renders the application's `deploy/` at the Bundle's tag with kustomize into the
    /// fleet's `deploy/<beacon>.yaml`, which Flux applies and checks the health of.
    Real {
        /// Whether a crossing asks Flux to reconcile now (`flux-reconcile`) after its
        /// push, or leaves it to Flux's own interval.
        reconcile: bool,
    },
}

/// One Gate of a [`Pipeline`].
#[derive(Clone, Copy, Debug)]
pub struct Stage<'a> {
    /// Its name (and its fleet branch `env/<name>`).
    pub name: &'a str,
    /// The Gate a Bundle must have crossed first.
    pub after: Option<&'a str>,
    /// It crosses by itself.
    pub auto: bool,
    /// What it asks of approvals.
    pub approval: Approval,
    /// The clusters it spans, when it spans several ([`FanOut`]); `None`: one place,
    /// this cluster.
    pub fan_out: Option<FanOut<'a>>,
}

/// A [`Stage`] over several clusters, each connected to the namespace by a Secret of
/// its name labelled `region` (and `tier: canary` for the canary): reached the canary
/// first, which must stay healthy `canary_soak`, then region eu, then the rest. Each
/// target's branch is `env/<stage>-<target>`, and its Flux objects, on its own cluster
/// in a namespace of the Gate's name, `fleet-<stage>-<target>` and
/// `app-<stage>-<target>` ([`crate::fleet::flux_objects`] of environment
/// `<stage>-<target>`).
#[derive(Clone, Copy, Debug)]
pub struct FanOut<'a> {
    /// The clusters, by their Secrets' names.
    pub clusters: &'a [&'a str],
    /// How long the canary stays healthy before the next wave (a Go duration).
    pub canary_soak: &'a str,
}

/// What a [`Stage`] asks of approvals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Nothing.
    No,
    /// One approval, from anyone allowed (`requireApproval`).
    One,
    /// Two release managers, neither of whom promoted the Bundle through an earlier
    /// Gate (an approval policy).
    TwoReleaseManagers,
}

/// The spec's §10.1 stages: dev crosses by itself, staging when someone promotes,
/// production by itself once a Bundle is approved.
pub const DEV_STAGING_PRODUCTION: [Stage<'static>; 3] = [
    Stage {
        name: "dev",
        after: None,
        auto: true,
        approval: Approval::No,
        fan_out: None,
    },
    Stage {
        name: "staging",
        after: Some("dev"),
        auto: false,
        approval: Approval::No,
        fan_out: None,
    },
    Stage {
        name: "production",
        after: Some("staging"),
        auto: true,
        approval: Approval::One,
        fan_out: None,
    },
];

/// The demo's stages: §10.1's, with production asking two release managers, neither
/// of whom promoted the Bundle through staging.
pub const DEMO_STAGES: [Stage<'static>; 3] = [
    DEV_STAGING_PRODUCTION[0],
    DEV_STAGING_PRODUCTION[1],
    Stage {
        approval: Approval::TwoReleaseManagers,
        fan_out: Some(DEMO_FAN_OUT),
        ..DEV_STAGING_PRODUCTION[2]
    },
];

/// The clusters the demo's production spans: eu-1, the canary, then eu-2, then us-1.
pub const DEMO_CLUSTERS: [&str; 3] = ["eu-1", "eu-2", "us-1"];

/// How the demo's production spans [`DEMO_CLUSTERS`]: the canary healthy 10 s first.
pub const DEMO_FAN_OUT: FanOut<'static> = FanOut {
    clusters: &DEMO_CLUSTERS,
    canary_soak: "10s",
};

impl FanOut<'_> {
    /// The labels cluster `name` is connected with: its region (`eu-1` is in `eu`),
    /// and the first is the canary.
    pub fn labels(&self, name: &str) -> Vec<(&'static str, String)> {
        let region = name.split('-').next().unwrap_or(name).to_string();
        let mut labels = vec![("region", region)];
        if self.clusters.first() == Some(&name) {
            labels.push(("tier", "canary".to_string()));
        }
        labels
    }

    /// The Gate's `targets`, `rollout` and `watch` (YAML under `spec`) for stage
    /// `name`.
    fn spec(&self, name: &str) -> String {
        let watch: String = self
            .clusters
            .iter()
            .map(|cluster| {
                format!(
                    r#"
    - uses: flux
      with:
        clusterRef: {{name: {cluster}}}
        resources: [{{kind: Kustomization, name: app-{name}-{cluster}}}]"#
                )
            })
            .collect();
        format!(
            r#"  targets:
    selector: {{matchExpressions: [{{key: region, operator: Exists}}]}}
  rollout:
    waves:
      - name: canary
        targets: {{selector: {{matchLabels: {{tier: canary}}}}}}
        minSuccessTime: {soak}
      - name: eu
        targets: {{selector: {{matchLabels: {{region: eu}}}}}}
  watch:{watch}
"#,
            soak = self.canary_soak
        )
    }
}

impl Pipeline<'_> {
    /// The Beacon and the Gates, as one multi-document YAML.
    pub fn manifest(&self) -> String {
        let (namespace, beacon, app) = (self.namespace, self.beacon, self.app);
        let follow = match self.flux {
            Flux::StandIn => "branch: main",
            Flux::Real { .. } => "tags: {constraint: \">=0.1.0\"}",
        };
        let mut yaml = format!(
            r#"apiVersion: hecate.dev/v1alpha1
kind: Beacon
metadata:
  name: {beacon}
  namespace: {namespace}
spec:
  interval: 1m
  watch:
    - git: {{repo: "{app}", {follow}}}
"#
        );
        for stage in self.stages {
            yaml.push_str(&self.gate(stage));
        }
        yaml
    }

    fn gate(&self, stage: &Stage<'_>) -> String {
        let (namespace, beacon, app, fleet) = (self.namespace, self.beacon, self.app, self.fleet);
        let Stage {
            name,
            auto,
            approval,
            ..
        } = *stage;
        let after = stage
            .after
            .map(|a| format!("\n      after: [{a}]"))
            .unwrap_or_default();
        let approval = match approval {
            Approval::No => "requireApproval: false".to_string(),
            Approval::One => "requireApproval: true".to_string(),
            Approval::TwoReleaseManagers => format!(
                "requireApproval: true\n      approvals:\n        required:\n          - {{count: 2, groups: [{}]}}\n        excludeUpstreamPromoters: true",
                crate::RELEASE_MANAGERS
            ),
        };
        let hook = self
            .hook
            .map(|url| {
                format!(
                    r#"      - uses: http
        if: always
        with:
          url: {url}
          body: {{gate: "${{{{ gate }}}}", failed: "${{{{ failed }}}}"}}
"#
                )
            })
            .unwrap_or_default();
        // On the real Flux, the application's own manifests at the Bundle's release are
        // what the environment runs: rendered into the fleet beside the record.
        let render = match self.flux {
            Flux::StandIn => String::new(),
            Flux::Real { .. } => format!(
                r#"      - uses: git-clone
        with: {{repo: "{app}", branch: "${{{{ bundle.commit('{app}').tag }}}}", path: app, depth: 1}}
      - uses: render-kustomize
        with: {{path: app/deploy, out: repo/deploy/{beacon}.yaml}}
"#
            ),
        };
        // A stage over several clusters: each target has its branch and Flux objects
        // (on its own cluster, which Flux steps reach by default).
        let (place, spread) = match &stage.fan_out {
            Some(fan_out) => (format!("{name}-${{{{ target.name }}}}"), fan_out.spec(name)),
            None => (
                name.to_string(),
                format!(
                    r#"  watch:
    - uses: flux
      with:
        resources: [{{kind: Kustomization, name: app-{name}}}]
"#
                ),
            ),
        };
        let reconcile = match self.flux {
            Flux::Real { reconcile: true } => format!(
                r#"      - uses: flux-reconcile
        with:
          resources: [{{kind: GitRepository, name: "fleet-{place}"}}, {{kind: Kustomization, name: "app-{place}"}}]
"#
            ),
            _ => String::new(),
        };
        format!(
            r#"---
apiVersion: hecate.dev/v1alpha1
kind: Gate
metadata:
  name: {name}
  namespace: {namespace}
spec:
  auto: {auto}
  admits:
    - from: {{beacon: {beacon}}}{after}
      {approval}
  vars:
    - {{name: fleet, value: "{fleet}"}}
{spread}  passage:
    steps:
      - uses: git-clone
        with: {{repo: "${{{{ vars.fleet }}}}", branch: "env/{place}"}}
{render}      - uses: edit-yaml
        with:
          path: repo/values.yaml
          edits:
            - key: {beacon}.revision
              value: "${{{{ bundle.commit('{app}').sha }}}}"
      - uses: git-commit
        as: commit
        with: {{message: "{name}: {beacon} ${{{{ bundle.name }}}}"}}
      - uses: git-push
{reconcile}      - uses: flux-wait
        timeout: 30m
        with:
          resources: [{{kind: Kustomization, name: "app-{place}"}}]
          expectedRevision: "${{{{ steps.commit.sha }}}}"
{hook}"#
        )
    }
}
