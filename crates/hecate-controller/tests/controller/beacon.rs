//! The Beacon controller (spec controller.md §1, §10.3 check 1) against a real API
//! server and real git: bare repositories in a temporary directory, reached by
//! `file://` URLs, with commits and tags the tests make.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use hecate_controller::beacon::git::Git;
use hecate_controller::beacon::{BeaconReconciler, Outcome, Resolver, controller};
use hecate_controller::events::Events;
use hecate_sources::git::AppTokens;
use hecate_steps::clock::{Clock, ManualClock, SystemClock};
use hecate_testenv::TestEnv;
use hecate_types::{
    Artifact, Beacon, BeaconSpec, Bundle, BundleApproval, BundleSpec, BundleStatus, CommitArtifact,
    Condition, ConditionStatus, EmitPolicy, Gate, GateOccupant, GateStatus, GitWatch, ImageWatch,
    PassagePhase, TagWatch, Time, WatchSource, wellknown,
};
use jiff::Timestamp;
use k8s_openapi::api::events::v1::Event;
use kube::ResourceExt as _;
use kube::api::{Api, ListParams, ObjectMeta, Patch, PatchParams};
use pretty_assertions::assert_eq;

use crate::process::{eventually, join_shard};

mod matrix;
mod sources;
mod text;
mod wire;

// ---------------------------------------------------------------------------------
// Local git repositories.

/// A bare repository (the remote a Beacon reads) and a clone the test commits in.
struct Repo {
    dir: tempfile::TempDir,
    url: String,
}

impl Repo {
    /// An empty remote with branch `main`.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bare = dir.path().join("app.git");
        git(
            dir.path(),
            &["init", "-q", "--bare", "-b", "main", path(&bare)],
        );
        git(dir.path(), &["clone", "-q", path(&bare), "work"]);
        let url = format!("file://{}", bare.display());
        Self { dir, url }
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// Commits a change on `main`, pushes it, and returns its SHA.
    fn commit(&self, message: &str) -> String {
        let work = self.work();
        std::fs::write(work.join("file.txt"), message).unwrap();
        git(&work, &["add", "file.txt"]);
        git(&work, &["commit", "-q", "-m", message]);
        git(&work, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
        git(&work, &["rev-parse", "HEAD"])
    }

    /// Commits `content` at `file` (directories made as needed) on `main`, pushes, and
    /// returns the SHA.
    fn commit_file(&self, file: &str, content: &str, message: &str) -> String {
        let work = self.work();
        let target = work.join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, content).unwrap();
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", message]);
        git(&work, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
        git(&work, &["rev-parse", "HEAD"])
    }

    /// Tags the last commit (annotated: with a tag object) and pushes the tag.
    fn tag(&self, name: &str, annotated: bool) {
        let work = self.work();
        if annotated {
            git(&work, &["tag", "-a", "-m", name, name]);
        } else {
            git(&work, &["tag", name]);
        }
        git(
            &work,
            &["push", "-q", "origin", &format!("refs/tags/{name}")],
        );
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs git in `dir` with a fixed identity and no user or system configuration.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

// ---------------------------------------------------------------------------------
// Beacons and their reconciler.

fn branch(repo: &str, branch: &str) -> WatchSource {
    WatchSource {
        git: Some(GitWatch {
            repo: repo.into(),
            branch: branch.into(),
            ..GitWatch::default()
        }),
        ..WatchSource::default()
    }
}

fn tags(repo: &str, tags: TagWatch) -> WatchSource {
    WatchSource {
        git: Some(GitWatch {
            repo: repo.into(),
            tags: Some(tags),
            ..GitWatch::default()
        }),
        ..WatchSource::default()
    }
}

fn spec(watch: Vec<WatchSource>) -> BeaconSpec {
    BeaconSpec {
        watch,
        interval: Some("1h".into()),
        ..BeaconSpec::default()
    }
}

/// A Beacon reconciler over a test's namespace.
struct Beacons {
    env: TestEnv,
    reconciler: BeaconReconciler,
}

impl Beacons {
    async fn new() -> Self {
        Self::over(TestEnv::new().await, Duration::from_secs(30))
    }

    /// Another reconciler over the same namespace: a restarted controller, or a second
    /// replica.
    fn sibling(&self) -> Self {
        Self::over(self.env.clone(), Duration::from_secs(30))
    }

    fn over(env: TestEnv, git_timeout: Duration) -> Self {
        let clock = ManualClock::at(Timestamp::from_second(Timestamp::now().as_second()).unwrap());
        let reconciler = reconciler(&env, git_timeout, Arc::new(clock));
        Self { env, reconciler }
    }

    async fn create(&self, name: &str, spec: BeaconSpec) -> Beacon {
        self.env.create(Beacon::new(name, spec)).await
    }

    async fn reconcile(&self, name: &str) -> Outcome {
        self.reconciler
            .reconcile_named(&self.env.namespace, name)
            .await
            .unwrap_or_else(|e| panic!("reconciling Beacon {name}: {e}"))
    }

    async fn beacon(&self, name: &str) -> Beacon {
        self.env.api::<Beacon>().get(name).await.unwrap()
    }

    /// The message of Beacon `name`'s Ready condition, which must be `False` with
    /// `reason`.
    async fn refused(&self, name: &str, reason: &str) -> String {
        let ready = self.ready(name).await;
        assert_eq!(
            (ready.status, ready.reason.as_str()),
            (ConditionStatus::False, reason),
            "{name}: {}",
            ready.message
        );
        ready.message
    }

    async fn ready(&self, name: &str) -> Condition {
        self.beacon(name)
            .await
            .status
            .unwrap_or_default()
            .conditions
            .into_iter()
            .find(|c| c.type_ == wellknown::condition::READY)
            .unwrap_or_else(|| panic!("Beacon {name} has no Ready condition"))
    }

    /// The Bundles labelled for Beacon `beacon`, by name.
    async fn bundles(&self, beacon: &str) -> Vec<Bundle> {
        let selector = format!("{}={beacon}", wellknown::LABEL_BEACON);
        let mut bundles = self
            .env
            .api::<Bundle>()
            .list(&ListParams::default().labels(&selector))
            .await
            .unwrap()
            .items;
        bundles.sort_by_key(|b| b.name_any());
        bundles
    }

    /// The `BundleEmitted` Events in the namespace.
    async fn emitted_events(&self) -> Vec<Event> {
        Api::<Event>::namespaced(self.env.admin.clone(), &self.env.namespace)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("BundleEmitted"))
            .collect()
    }

    /// How many times `BundleEmitted` was reported: the recorder folds repeats of one
    /// reason on one object into a series on a single Event.
    async fn emissions(&self) -> i32 {
        self.emitted_events()
            .await
            .iter()
            .map(|e| e.series.as_ref().map_or(1, |s| s.count))
            .sum()
    }

    /// Writes the reconcile-request annotation, as `hecate poll` does.
    async fn poke(&self, name: &str, token: &str) {
        let patch = serde_json::json!({"metadata": {"annotations": {
            wellknown::ANNOTATION_RECONCILE_REQUESTED_AT: token
        }}});
        self.env
            .api::<Beacon>()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    }
}

fn reconciler(env: &TestEnv, git_timeout: Duration, clock: Arc<dyn Clock>) -> BeaconReconciler {
    BeaconReconciler {
        client: env.admin.clone(),
        sources: Arc::new(Resolver {
            client: env.admin.clone(),
            git: Git::new(git_timeout).within(hecate_sources::git::Limits::local()),
            app_tokens: AppTokens::default(),
            // The controller's own client: its User-Agent, the servers it trusts.
            http: hecate_controller::beacon::resolver::http_client().unwrap(),
            registries: Default::default(),
            indexes: Default::default(),
        }),
        clock,
        events: Events::new(env.admin.clone(), "beacon-controller", None),
        metrics: Default::default(),
    }
}

fn commit(repo: &str, sha: &str, branch: &str, tag: &str) -> Artifact {
    Artifact {
        commit: Some(CommitArtifact {
            repo: repo.into(),
            sha: sha.into(),
            branch: branch.into(),
            tag: tag.into(),
            message: String::new(),
            author: String::new(),
            ..CommitArtifact::default()
        }),
        ..Artifact::default()
    }
}

/// `artifacts` as the watches resolved them: without what the Beacon reads of a
/// commit's history when it emits a Bundle (DECISION 140) — the commit's subject,
/// author and time, and the commits it brings.
fn resolved(artifacts: &[Artifact]) -> Vec<Artifact> {
    artifacts
        .iter()
        .cloned()
        .map(|mut artifact| {
            if let Some(commit) = artifact.commit.as_mut() {
                *commit = CommitArtifact {
                    repo: std::mem::take(&mut commit.repo),
                    sha: std::mem::take(&mut commit.sha),
                    branch: std::mem::take(&mut commit.branch),
                    tag: std::mem::take(&mut commit.tag),
                    ..CommitArtifact::default()
                };
            }
            artifact
        })
        .collect()
}

/// The one commit artifact of `bundle`.
fn only_commit(bundle: &Bundle) -> &CommitArtifact {
    match bundle.spec.artifacts.as_slice() {
        [artifact] => artifact.commit.as_ref().expect("a commit"),
        other => panic!("one artifact, not {other:?}"),
    }
}

// ---------------------------------------------------------------------------------
// The cases.

/// §10.3 check 1: a new commit produces exactly one Bundle; re-polling produces none;
/// `latestBundle` names it; a poke is echoed with the same token.
#[tokio::test]
async fn check1_a_new_commit_emits_exactly_one_bundle() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    let first = repo.commit("one");
    let beacon = b.create("app", spec(vec![branch(&repo.url, "main")])).await;

    let outcome = b.reconcile("app").await;
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
    let bundles = b.bundles("app").await;
    assert_eq!(bundles.len(), 1, "{bundles:#?}");
    let bundle = &bundles[0];
    let artifacts = vec![commit(&repo.url, &first, "main", "")];
    assert_eq!(resolved(&bundle.spec.artifacts), artifacts);
    // What the Beacon read of the commit, for people (DECISION 140): the first Bundle
    // has no previous one to count commits from.
    let read = only_commit(bundle);
    assert_eq!(
        (read.message.as_str(), read.author.as_str()),
        ("one", "Test <test@example.com>")
    );
    assert!(read.committed_at.is_some());
    assert_eq!((read.commits.len(), read.commits_since.as_str()), (0, ""));
    assert_eq!(bundle.spec.alias, &first[..7], "its version: the short SHA");
    assert_eq!(bundle.spec.beacon, "app");
    assert_eq!(
        bundle.spec.digest,
        hecate_types::digest::content_digest(&artifacts)
    );
    assert_eq!(
        bundle.name_any(),
        format!("app-{}", &bundle.spec.digest[..12])
    );
    assert!(
        bundle.owner_references().is_empty(),
        "deleting a Beacon must keep its Bundles"
    );
    let status = b.beacon("app").await.status.unwrap();
    assert_eq!(status.latest_bundle, bundle.name_any());
    assert_eq!(status.discovered, artifacts);
    assert!(status.last_polled.is_some());
    assert_eq!(
        status.observed_generation,
        beacon.metadata.generation.unwrap()
    );
    let ready = b.ready("app").await;
    assert_eq!(
        (ready.status, ready.reason.as_str()),
        (ConditionStatus::True, "Discovered")
    );
    assert!(
        ready.message.contains(&bundle.name_any()),
        "{}",
        ready.message
    );
    let events = b.emitted_events().await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(b.emissions().await, 1);
    assert_eq!(events[0].action.as_deref(), Some("Emitting"));
    assert_eq!(events[0].type_.as_deref(), Some("Normal"));
    assert_eq!(
        events[0].reporting_controller.as_deref(),
        Some("beacon-controller")
    );

    // Re-polling an unchanged repository: nothing new, and no Event.
    b.reconcile("app").await;
    assert_eq!(b.bundles("app").await.len(), 1);
    assert_eq!(b.emissions().await, 1);

    // A new commit: exactly one more Bundle, and latestBundle names it.
    let second = repo.commit("two");
    b.reconcile("app").await;
    let bundles = b.bundles("app").await;
    assert_eq!(bundles.len(), 2);
    let latest = b.beacon("app").await.status.unwrap().latest_bundle;
    let newest = b.env.api::<Bundle>().get(&latest).await.unwrap();
    assert_eq!(
        resolved(&newest.spec.artifacts),
        [commit(&repo.url, &second, "main", "")]
    );
    // It brings the one commit since the first Bundle's.
    let read = only_commit(&newest);
    let brought: Vec<(&str, &str)> = read
        .commits
        .iter()
        .map(|c| (c.sha.as_str(), c.subject.as_str()))
        .collect();
    assert_eq!(brought, [(second.as_str(), "two")]);
    assert_eq!(
        (read.more_commits, read.commits_since.as_str()),
        (0, first.as_str())
    );
    assert_eq!(b.emissions().await, 2);

    // A poke is echoed with the very token.
    b.poke("app", "1786620716793895315").await;
    b.reconcile("app").await;
    let status = b.beacon("app").await.status.unwrap();
    assert_eq!(status.last_handled_reconcile_at, "1786620716793895315");
    assert_eq!(status.latest_bundle, latest);
    assert_eq!(b.bundles("app").await.len(), 2);
}

/// §1.4: tags chosen by semantic version, range and filters; an annotated tag resolves
/// to its commit; several watch entries make one Bundle.
#[tokio::test]
async fn tag_policies_pick_the_right_tag() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    let v1_0 = repo.commit("1.0");
    repo.tag("v1.0.0", false);
    let v1_1 = repo.commit("1.1");
    repo.tag("v1.1.0", true);
    let v2_rc = repo.commit("2.0-rc");
    repo.tag("v2.0.0-rc.1", true);
    repo.commit("tip");
    repo.tag("latest", false);
    let watch = vec![
        // Releases only, within ^1: the annotated v1.1.0, as its commit.
        tags(
            &repo.url,
            TagWatch {
                constraint: "^1.0".into(),
                ..TagWatch::default()
            },
        ),
        // A range that names a prerelease opts in to them.
        tags(
            &repo.url,
            TagWatch {
                constraint: ">= 0.0.0-0".into(),
                ..TagWatch::default()
            },
        ),
        // Filters come first: v1.1.0 ignored, so v1.0.0.
        tags(
            &repo.url,
            TagWatch {
                allow: r"^v1\.".into(),
                ignore: vec!["v1.1.0".into()],
                ..TagWatch::default()
            },
        ),
    ];
    b.create("app", spec(watch)).await;
    b.reconcile("app").await;

    let status = b.beacon("app").await.status.unwrap();
    let want = vec![
        commit(&repo.url, &v1_1, "", "v1.1.0"),
        commit(&repo.url, &v2_rc, "", "v2.0.0-rc.1"),
        commit(&repo.url, &v1_0, "", "v1.0.0"),
    ];
    assert_eq!(status.discovered, want);
    let bundle = b
        .env
        .api::<Bundle>()
        .get(&status.latest_bundle)
        .await
        .unwrap();
    assert_eq!(
        resolved(&bundle.spec.artifacts),
        want,
        "artifacts keep the watch order"
    );
    // Its version: each tag once, in watch order.
    assert_eq!(bundle.spec.alias, "v1.1.0, v2.0.0-rc.1, v1.0.0");
}

/// Path filters: the newest commit (first parents) that changed a watched path, with
/// its subject; unrelated commits emit nothing.
#[tokio::test]
async fn path_filters_follow_only_the_watched_paths() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    let web = repo.commit_file("apps/web/main.go", "1", "web: first");
    repo.commit_file("apps/web-old/main.go", "1", "not web");
    repo.commit_file("apps/web/README.md", "1", "web docs");
    let mut watch = GitWatch {
        repo: repo.url.clone(),
        branch: "main".into(),
        paths: vec!["apps/web/".into()],
        ignore_paths: vec!["apps/web/README.md".into()],
        ..GitWatch::default()
    };
    let source = |watch: &GitWatch| WatchSource {
        git: Some(watch.clone()),
        ..WatchSource::default()
    };
    b.create("web", spec(vec![source(&watch)])).await;
    b.reconcile("web").await;
    let status = b.beacon("web").await.status.unwrap();
    let found = status.discovered[0].commit.clone().unwrap();
    assert_eq!(
        (found.sha.as_str(), found.message.as_str()),
        (web.as_str(), "web: first")
    );
    assert_eq!(found.branch, "main");

    repo.commit_file("docs/guide.md", "1", "docs");
    b.reconcile("web").await;
    assert_eq!(
        b.bundles("web").await.len(),
        1,
        "an unrelated commit emits nothing"
    );

    let next = repo.commit_file("apps/web/main.go", "2", "web: second");
    b.reconcile("web").await;
    assert_eq!(b.bundles("web").await.len(), 2);
    let status = b.beacon("web").await.status.unwrap();
    assert_eq!(status.discovered[0].commit.as_ref().unwrap().sha, next);

    // A path nothing ever touched matches nothing (a state, not a failure).
    watch.paths = vec!["charts".into()];
    b.create("charts", spec(vec![source(&watch)])).await;
    b.reconcile("charts").await;
    assert_eq!(b.ready("charts").await.reason, "NoMatchingArtifact");
}

/// §1.2 steps 4–6: a failing entry stops emission; the first failure names the reason;
/// what did resolve is still reported; nothing is an error that backs off.
#[tokio::test]
async fn failures_are_conditions_not_bundles() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    let head = repo.commit("one");
    repo.tag("v1.0.0", false);
    let watch = vec![
        branch(&repo.url, "main"),
        tags(
            &repo.url,
            TagWatch {
                constraint: "^9".into(),
                ..TagWatch::default()
            },
        ),
        WatchSource {
            image: Some(ImageWatch {
                repo: "ghcr.io/acme/api".into(),
                platform: "linux/arm64".into(),
                ..ImageWatch::default()
            }),
            ..WatchSource::default()
        },
    ];
    b.create("app", spec(watch)).await;
    let outcome = b.reconcile("app").await;
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
    let message = b.refused("app", "NoMatchingArtifact").await;
    assert!(
        message.starts_with("watch[1]: ") && message.ends_with(" (and 1 more)"),
        "{message}"
    );
    let status = b.beacon("app").await.status.unwrap();
    assert_eq!(status.discovered, [commit(&repo.url, &head, "main", "")]);
    assert!(status.latest_bundle.is_empty());
    assert!(
        b.bundles("app").await.is_empty(),
        "a partial set never emits"
    );

    // A missing branch is a failure of its own class.
    b.create("missing", spec(vec![branch(&repo.url, "develop")]))
        .await;
    b.reconcile("missing").await;
    let ready = b.ready("missing").await;
    assert_eq!(ready.reason, "ResolveFailed");
    assert!(ready.message.contains("develop"), "{}", ready.message);
    // An unsupported option, alone.
    let platform = WatchSource {
        image: Some(ImageWatch {
            repo: "ghcr.io/acme/api".into(),
            platform: "linux/arm64".into(),
            ..ImageWatch::default()
        }),
        ..WatchSource::default()
    };
    b.create("arm", spec(vec![platform])).await;
    b.reconcile("arm").await;
    assert_eq!(b.ready("arm").await.reason, "UnsupportedSource");
}

/// A remote that accepts and never answers is given up on (the poll is not stuck) and
/// reported; the Beacon comes back at its interval, not in a backoff loop.
#[tokio::test]
async fn a_remote_that_never_answers_is_a_condition() {
    let env = TestEnv::new().await;
    let b = Beacons::over(env, Duration::from_secs(2));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let url = format!("http://{addr}/app.git");
    b.create("app", spec(vec![branch(&url, "main")])).await;
    let started = std::time::Instant::now();
    let outcome = b.reconcile("app").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
    let message = b.refused("app", "ResolveFailed").await;
    assert!(message.contains("did not answer"), "{message}");
    hold.abort();
}

/// Issue 30: a watch on a repository of the controller's own disk (a path, `file://`)
/// is the operator's to allow (`--allow-local-git`): without it the Beacon is not Ready,
/// says which flag would allow it, and emits nothing.
#[tokio::test]
async fn a_watch_on_the_controllers_own_disk_needs_the_operators_flag() {
    let mut b = Beacons::new().await;
    b.reconciler.sources = Arc::new(Resolver {
        client: b.env.admin.clone(),
        git: Git::new(Duration::from_secs(30)),
        app_tokens: AppTokens::default(),
        http: hecate_controller::beacon::resolver::http_client().unwrap(),
        registries: Default::default(),
        indexes: Default::default(),
    });
    let repo = Repo::new();
    repo.commit("one");
    let bare = repo.url.trim_start_matches("file://").to_string();
    b.create("url", spec(vec![branch(&repo.url, "main")])).await;
    b.create("path", spec(vec![branch(&bare, "main")])).await;
    for name in ["url", "path"] {
        b.reconcile(name).await;
        let message = b.refused(name, "ResolveFailed").await;
        assert!(
            message.contains("the controller's own disk") && message.contains("--allow-local-git"),
            "{name}: {message}"
        );
        assert!(b.bundles(name).await.is_empty(), "{name}");
    }
}

/// Every `Authorization` header a test server received, as sent.
type Authorizations = Arc<std::sync::Mutex<Vec<String>>>;

/// A git smart-HTTP server on loopback for the repositories under `root`, wanting
/// `bot`/`password`: git's own `http-backend`, behind a small CGI bridge. It keeps the
/// `Authorization` headers it is sent.
async fn git_over_http(
    root: PathBuf,
    password: &'static str,
) -> (String, tokio::task::JoinHandle<()>, Authorizations) {
    use axum::body::Bytes;
    use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
    use axum::response::{IntoResponse, Response};
    use base64::Engine as _;

    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("bot:{password}"))
    );
    let seen = Authorizations::default();
    let kept = seen.clone();
    let handler = move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
        let root = root.clone();
        let expected = expected.clone();
        let kept = kept.clone();
        async move {
            if let Some(sent) = headers.get(header::AUTHORIZATION) {
                let sent = String::from_utf8_lossy(sent.as_bytes()).into_owned();
                kept.lock().unwrap().push(sent);
            }
            if headers.get(header::AUTHORIZATION).map(|v| v.as_bytes()) != Some(expected.as_bytes())
            {
                return (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Basic realm=\"git\"")],
                )
                    .into_response();
            }
            let text = |name: header::HeaderName| {
                headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string()
            };
            let mut child = tokio::process::Command::new("/usr/lib/git-core/git-http-backend")
                .env_clear()
                .env("GIT_PROJECT_ROOT", &root)
                .env("GIT_HTTP_EXPORT_ALL", "1")
                .env("PATH_INFO", uri.path())
                .env("QUERY_STRING", uri.query().unwrap_or_default())
                .env("REQUEST_METHOD", method.as_str())
                .env("CONTENT_TYPE", text(header::CONTENT_TYPE))
                .env("CONTENT_LENGTH", body.len().to_string())
                .env("HTTP_CONTENT_ENCODING", text(header::CONTENT_ENCODING))
                .env(
                    "GIT_PROTOCOL",
                    text(header::HeaderName::from_static("git-protocol")),
                )
                .env("REMOTE_USER", "bot")
                .env("REMOTE_ADDR", "127.0.0.1")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            tokio::io::AsyncWriteExt::write_all(&mut stdin, &body)
                .await
                .unwrap();
            drop(stdin);
            let output = child.wait_with_output().await.unwrap();
            let raw = output.stdout;
            let split = raw
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map(|i| (i, i + 4))
                .or_else(|| {
                    raw.windows(2)
                        .position(|w| w == b"\n\n")
                        .map(|i| (i, i + 2))
                })
                .unwrap();
            let mut response = Response::new(axum::body::Body::from(raw[split.1..].to_vec()));
            for line in String::from_utf8_lossy(&raw[..split.0]).lines() {
                let Some((name, value)) = line.split_once(':') else {
                    continue;
                };
                let value = value.trim();
                if name.eq_ignore_ascii_case("status") {
                    let code: u16 = value.split(' ').next().unwrap().parse().unwrap();
                    *response.status_mut() = StatusCode::from_u16(code).unwrap();
                } else {
                    response.headers_mut().append(
                        header::HeaderName::from_bytes(name.trim().as_bytes()).unwrap(),
                        value.parse().unwrap(),
                    );
                }
            }
            response
        }
    };
    let app = axum::Router::new().fallback(handler);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serving = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (format!("http://{addr}"), serving, seen)
}

/// §5.2 HTTPS credentials against a server that wants them: refused without or with
/// the wrong ones (a condition, read from the Secret each time), served with them.
#[tokio::test]
async fn git_over_http_with_credentials() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    let head = repo.commit("one");
    let (server, serving, _) = git_over_http(repo.dir.path().to_path_buf(), "s3cret").await;
    let url = format!("{server}/app.git");
    let with_secret = |secret: Option<&str>| {
        let mut watch = branch(&url, "main");
        if let Some(git) = &mut watch.git {
            git.credentials_ref =
                secret.map(|name| hecate_types::LocalSecretRef { name: name.into() });
        }
        watch
    };
    for (name, password) in [("right", "s3cret"), ("wrong", "nope")] {
        b.env
            .create(text_secret(
                name,
                &[("username", "bot"), ("password", password)],
            ))
            .await;
    }

    b.create("anonymous", spec(vec![with_secret(None)])).await;
    b.reconcile("anonymous").await;
    assert_eq!(b.ready("anonymous").await.reason, "ResolveFailed");

    b.create("wrong", spec(vec![with_secret(Some("wrong"))]))
        .await;
    b.reconcile("wrong").await;
    let ready = b.ready("wrong").await;
    assert_eq!(ready.reason, "ResolveFailed");
    assert!(
        !ready.message.contains("nope"),
        "no password in messages: {}",
        ready.message
    );

    b.create("right", spec(vec![with_secret(Some("right"))]))
        .await;
    b.reconcile("right").await;
    assert_eq!(b.ready("right").await.reason, "Discovered");
    let status = b.beacon("right").await.status.unwrap();
    assert_eq!(status.discovered, [commit(&url, &head, "main", "")]);

    b.create("missing", spec(vec![with_secret(Some("absent"))]))
        .await;
    b.reconcile("missing").await;
    let ready = b.ready("missing").await;
    assert_eq!(ready.reason, "ResolveFailed");
    assert!(ready.message.contains("absent"), "{}", ready.message);
    serving.abort();
}

/// Issue 50, item 6: a Beacon author who may not read Secrets named one in
/// `credentialsRef`, and the controller sent it to her git server. A Secret is used
/// only once it opts in (`hecate.dev/usable=true`, DECISION 147): before that the
/// Beacon is `ResolveFailed` naming the label to add, and git is never run with it.
#[tokio::test]
async fn git_credentials_come_only_from_a_secret_that_opts_in() {
    use base64::Engine as _;

    let b = Beacons::new().await;
    let repo = Repo::new();
    let head = repo.commit("one");
    let (server, serving, seen) = git_over_http(repo.dir.path().to_path_buf(), "s3cret").await;
    let url = format!("{server}/app.git");
    b.env
        .create(hecate_testenv::fixtures::unlabelled_secret(
            "deploy-key",
            &[("username", "bot"), ("password", "s3cret")],
        ))
        .await;
    let mut watch = branch(&url, "main");
    if let Some(git) = &mut watch.git {
        git.credentials_ref = Some(hecate_types::LocalSecretRef {
            name: "deploy-key".into(),
        });
    }
    b.create("app", spec(vec![watch])).await;

    b.reconcile("app").await;
    let message = b.refused("app", "ResolveFailed").await;
    assert!(
        message.contains(&format!(
            "credentials Secret deploy-key in namespace {ns} is not labelled hecate.dev/usable=true",
            ns = b.env.namespace
        )) && message.contains("label secret deploy-key hecate.dev/usable=true"),
        "{message}"
    );
    assert!(!message.contains("s3cret"), "{message}");
    let password = base64::engine::general_purpose::STANDARD.encode("bot:s3cret");
    let sent_password = || seen.lock().unwrap().iter().any(|s| s.contains(&password));
    assert!(!sent_password(), "the password never reaches the server");
    assert!(b.bundles("app").await.is_empty());

    hecate_testenv::fixtures::set_usable(&b.env, "deploy-key", true).await;
    b.reconcile("app").await;
    assert_eq!(b.ready("app").await.reason, "Discovered");
    assert_eq!(
        b.beacon("app").await.status.unwrap().discovered,
        [commit(&url, &head, "main", "")]
    );
    assert!(sent_password());
    serving.abort();
}

/// A Secret holding `pairs` as text, opted in to use by Beacons.
fn text_secret(name: &str, pairs: &[(&str, &str)]) -> k8s_openapi::api::core::v1::Secret {
    hecate_testenv::fixtures::usable_secret(name, pairs)
}

/// §5.2 SSH keys for a git watch, against a real sshd: the Secret's key (with its
/// passphrase, as its user) lists the refs and clones for a path filter; `known_hosts`
/// is enforced when given and a new host accepted when not (as the git steps do); a
/// key the server does not know, or a host key that does not match, is a readable
/// `ResolveFailed` at the Beacon's interval — never the key or passphrase in it.
#[tokio::test]
async fn git_over_ssh_with_a_key() {
    use hecate_testenv::sshd::{KeyPair, Sshd};

    let b = Beacons::new().await;
    let repo = Repo::new();
    let head = repo.commit_file("app/values.yaml", "v1", "the app");
    repo.commit_file("docs/README.md", "docs", "docs only");
    let key = KeyPair::generate(None);
    let locked = KeyPair::generate(Some("open sesame"));
    let stranger = KeyPair::generate(None);
    let sshd = Sshd::start(&[&key, &locked]).await;
    let url = sshd.url(&repo.dir.path().join("app.git"));
    let impostor = format!("{} {}", sshd.host(), stranger.public);
    let user = sshd.user().to_string();
    let known_hosts = sshd.known_hosts();
    let secrets: [(&str, Vec<(&str, &str)>); 5] = [
        (
            "key",
            vec![
                ("identity", &key.private),
                ("known_hosts", &known_hosts),
                ("username", &user),
            ],
        ),
        (
            "locked",
            vec![
                ("identity", &locked.private),
                ("password", "open sesame"),
                ("username", &user),
            ],
        ),
        (
            "stranger",
            vec![
                ("identity", &stranger.private),
                ("known_hosts", &known_hosts),
                ("username", &user),
            ],
        ),
        (
            "impostor",
            vec![
                ("identity", &key.private),
                ("known_hosts", &impostor),
                ("username", &user),
            ],
        ),
        ("wrong-user", vec![("identity", &key.private)]),
    ];
    for (name, pairs) in &secrets {
        b.env.create(text_secret(name, pairs)).await;
    }
    let watch = |secret: &str, paths: &[&str]| {
        let mut watch = branch(&url, "main");
        if let Some(git) = &mut watch.git {
            git.credentials_ref = Some(hecate_types::LocalSecretRef {
                name: secret.into(),
            });
            git.paths = paths.iter().map(|p| p.to_string()).collect();
        }
        watch
    };

    // The branch head, with the key and the host verified.
    b.create("app", spec(vec![watch("key", &[])])).await;
    let outcome = b.reconcile("app").await;
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
    let ready = b.ready("app").await;
    assert_eq!(
        (ready.status, ready.reason.as_str()),
        (ConditionStatus::True, "Discovered"),
        "{}\n{}",
        ready.message,
        sshd.log()
    );
    let tip = git(&repo.work(), &["rev-parse", "HEAD"]);
    let bundles = b.bundles("app").await;
    assert_eq!(bundles.len(), 1, "{bundles:#?}");
    assert_eq!(
        resolved(&bundles[0].spec.artifacts),
        [commit(&url, &tip, "main", "")]
    );

    // A passphrase-protected key, no known_hosts (the host is accepted), and a path
    // filter: the shallow clone goes over SSH too.
    b.create("filtered", spec(vec![watch("locked", &["app"])]))
        .await;
    b.reconcile("filtered").await;
    let ready = b.ready("filtered").await;
    assert_eq!(ready.reason, "Discovered", "{}", ready.message);
    let status = b.beacon("filtered").await.status.unwrap();
    let found = status.discovered[0].commit.clone().unwrap();
    assert_eq!(
        (found.sha.as_str(), found.message.as_str()),
        (head.as_str(), "the app")
    );

    // Refusals: a key the server does not know, a host key that is not the one
    // known, the default user `git` that the server does not let in.
    let secret_words: Vec<&str> = [&key.private, &stranger.private]
        .iter()
        .flat_map(|k| k.lines().filter(|l| !l.starts_with("-----")))
        .collect();
    for (name, words) in [
        ("stranger", "permission denied"),
        ("impostor", "host key verification failed"),
        ("wrong-user", "permission denied"),
    ] {
        b.create(name, spec(vec![watch(name, &[])])).await;
        let outcome = b.reconcile(name).await;
        assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
        let ready = b.ready(name).await;
        assert_eq!(
            (ready.status, ready.reason.as_str()),
            (ConditionStatus::False, "ResolveFailed"),
            "{name}: {}",
            ready.message
        );
        assert!(
            ready
                .message
                .starts_with("watch[0]: listing the refs of ssh://")
                && ready.message.to_lowercase().contains(words),
            "{name}: {}",
            ready.message
        );
        for word in &secret_words {
            assert!(!ready.message.contains(word), "{name}: {}", ready.message);
        }
        assert!(b.bundles(name).await.is_empty());
    }
}

/// Two controllers polling the same content at the same moment: one Bundle, one Event.
/// The slower status write loses on its resourceVersion and is retried, harmlessly.
#[tokio::test]
async fn two_racing_reconcilers_emit_one_bundle() {
    let b = Beacons::new().await;
    let other = b.sibling();
    let repo = Repo::new();
    repo.commit("one");
    let beacon = b.create("app", spec(vec![branch(&repo.url, "main")])).await;

    let (mine, theirs) = tokio::join!(
        b.reconciler.reconcile(&beacon),
        other.reconciler.reconcile(&beacon)
    );
    let failures: Vec<String> = [mine, theirs]
        .into_iter()
        .filter_map(Result::err)
        .map(|e| e.to_string())
        .collect();
    assert!(failures.len() <= 1, "{failures:?}");
    for failure in &failures {
        assert!(
            failure.contains("conflict") || failure.contains("modified"),
            "only the status write may lose: {failure}"
        );
    }
    assert_eq!(b.bundles("app").await.len(), 1);
    assert_eq!(b.emissions().await, 1);
    // The retry settles it.
    b.reconcile("app").await;
    let status = b.beacon("app").await.status.unwrap();
    assert_eq!(status.latest_bundle, b.bundles("app").await[0].name_any());
    assert_eq!(b.emissions().await, 1);
}

/// A restarted controller (new process, nothing in memory) finds the Bundle it made
/// and makes no other.
#[tokio::test]
async fn a_restarted_controller_emits_nothing_new() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    repo.commit("one");
    b.create("app", spec(vec![branch(&repo.url, "main")])).await;
    b.reconcile("app").await;
    let before = b.beacon("app").await.status.unwrap().latest_bundle;

    let restarted = b.sibling();
    restarted.reconcile("app").await;
    restarted.reconcile("app").await;
    assert_eq!(b.bundles("app").await.len(), 1);
    assert_eq!(b.beacon("app").await.status.unwrap().latest_bundle, before);
    assert_eq!(b.emissions().await, 1);
    assert_eq!(b.ready("app").await.reason, "Discovered");
}

/// Quirk Q1: a name over 50 characters cannot name Bundles; say so at once.
#[tokio::test]
async fn q1_a_beacon_name_over_fifty_characters_is_refused_early() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    repo.commit("one");
    let name = "a".repeat(51);
    b.create(&name, spec(vec![branch(&repo.url, "main")])).await;
    let outcome = b.reconcile(&name).await;
    assert_eq!(outcome.requeue_after, None, "renaming needs a new object");
    let ready = b.ready(&name).await;
    assert_eq!(
        (ready.status, ready.reason.as_str()),
        (ConditionStatus::False, "NameTooLong")
    );
    assert!(ready.message.contains("50"), "{}", ready.message);
    assert!(b.bundles(&name).await.is_empty());

    // Fifty is fine.
    let name = "b".repeat(50);
    b.create(&name, spec(vec![branch(&repo.url, "main")])).await;
    b.reconcile(&name).await;
    let bundles = b.bundles(&name).await;
    assert_eq!(bundles.len(), 1);
    assert_eq!(bundles[0].name_any().len(), 63);
}

/// A suspended Beacon polls nothing but still acknowledges a request; a Manual one
/// reports without emitting.
#[tokio::test]
async fn suspended_and_manual_beacons_emit_nothing() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    let head = repo.commit("one");
    let mut suspended = spec(vec![branch(&repo.url, "main")]);
    suspended.suspend = true;
    b.create("paused", suspended).await;
    b.poke("paused", "token-1").await;
    assert_eq!(b.reconcile("paused").await.requeue_after, None);
    let status = b.beacon("paused").await.status.unwrap();
    assert_eq!(status.last_handled_reconcile_at, "token-1");
    assert!(status.last_polled.is_none());
    b.refused("paused", "Suspended").await;

    let mut manual = spec(vec![branch(&repo.url, "main")]);
    manual.emit = Some(EmitPolicy::Manual);
    b.create("manual", manual).await;
    b.reconcile("manual").await;
    let status = b.beacon("manual").await.status.unwrap();
    assert_eq!(status.discovered, [commit(&repo.url, &head, "main", "")]);
    assert!(status.latest_bundle.is_empty());
    let ready = b.ready("manual").await;
    assert_eq!(
        (ready.status, ready.reason.as_str()),
        (ConditionStatus::True, "Discovered")
    );
    assert!(b.bundles("paused").await.is_empty());
    assert!(b.bundles("manual").await.is_empty());
}

/// §1.8: the oldest unreferenced Bundles go; a Gate's occupant and history, a
/// Passage's Bundle, an approved Bundle and the latest stay; other Beacons' and
/// unlabelled Bundles are never touched.
#[tokio::test]
async fn retention_deletes_only_the_oldest_unreferenced_bundles() {
    let b = Beacons::new().await;
    let repo = Repo::new();
    repo.commit("one");
    let names = [
        "old-current",
        "old-history",
        "old-passage",
        "old-approved",
        "old-1",
        "old-2",
        "old-3",
    ];
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            // Creation times are kept to the second: a second apart orders them.
            tokio::time::sleep(Duration::from_millis(1100)).await;
        }
        b.env
            .create(Bundle {
                metadata: ObjectMeta {
                    name: Some(name.to_string()),
                    labels: Some([(wellknown::LABEL_BEACON.to_string(), "app".to_string())].into()),
                    ..ObjectMeta::default()
                },
                spec: BundleSpec {
                    beacon: "app".into(),
                    artifacts: vec![Artifact::commit(&repo.url, format!("{i:040}"))],
                    ..BundleSpec::default()
                },
                status: None,
            })
            .await;
    }
    let foreign = b
        .env
        .create(Bundle::new(
            "web-1",
            BundleSpec {
                beacon: "web".into(),
                artifacts: vec![Artifact::commit(&repo.url, "f".repeat(40))],
                ..BundleSpec::default()
            },
        ))
        .await;
    let mut approved = b.env.api::<Bundle>().get("old-approved").await.unwrap();
    approved.status = Some(BundleStatus {
        approved_for: vec![BundleApproval {
            gate: "production".into(),
            actor: "alice".into(),
            at: Time(Timestamp::now()),
        }],
        ..BundleStatus::default()
    });
    b.env.write_status(&approved).await;
    let occupant = |bundle: &str| GateOccupant {
        bundle: bundle.into(),
        digest: String::new(),
        passage: format!("{bundle}-p"),
        entered_at: Time(Timestamp::from_second(Timestamp::now().as_second()).unwrap()),
        actor: "controller".into(),
        verified: None,
    };
    let mut gate = b
        .env
        .create(Gate::new(
            "dev",
            hecate_testenv::fixtures::gate_spec(&[], false),
        ))
        .await;
    gate.status = Some(GateStatus {
        current: Some(occupant("old-current")),
        history: vec![occupant("old-current"), occupant("old-history")],
        ..GateStatus::default()
    });
    b.env.write_status(&gate).await;
    hecate_testenv::fixtures::passage(
        &b.env,
        "staging-1",
        "staging",
        "old-passage",
        PassagePhase::Succeeded,
    )
    .await;

    let mut retained = spec(vec![branch(&repo.url, "main")]);
    retained.retain = Some(1);
    b.create("app", retained).await;
    b.reconcile("app").await;

    let latest = b.beacon("app").await.status.unwrap().latest_bundle;
    let mut left: Vec<String> = b
        .bundles("app")
        .await
        .iter()
        .map(|b| b.name_any())
        .collect();
    left.sort();
    let mut want = vec![
        "old-3".to_string(),
        "old-approved".into(),
        "old-current".into(),
        "old-history".into(),
        "old-passage".into(),
        latest,
    ];
    want.sort();
    assert_eq!(left, want);
    assert!(
        b.env
            .api::<Bundle>()
            .get_opt(&foreign.name_any())
            .await
            .unwrap()
            .is_some()
    );

    // retain: 0 keeps everything from now on.
    let patch = serde_json::json!({"spec": {"retain": 0}});
    b.env
        .api::<Beacon>()
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    repo.commit("two");
    b.reconcile("app").await;
    assert_eq!(b.bundles("app").await.len(), want.len() + 1);
}

/// The controller at work: it emits by itself, answers a poke with the token, and its
/// own status writes do not wake it (with an hour's interval, nothing polls again
/// unasked).
#[tokio::test]
async fn the_running_controller_polls_on_request_and_never_wakes_itself() {
    let env = TestEnv::new().await;
    let ns = env.namespace.clone();
    join_shard(&env, &ns, &ns).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(controller::run(
        env.admin.clone(),
        reconciler(&env, Duration::from_secs(30), Arc::new(SystemClock)),
        hecate_controller::scope::Scope::start(
            &env.admin,
            Some(&format!("{}={ns}", crate::process::SHARD_LABEL)),
        ),
        async move {
            let _ = stopped.await;
        },
    ));
    let b = Beacons::over(env.clone(), Duration::from_secs(30));
    let repo = Repo::new();
    repo.commit("one");
    b.create("app", spec(vec![branch(&repo.url, "main")])).await;

    let first = eventually(Duration::from_secs(20), "a Bundle", || async {
        b.beacon("app")
            .await
            .status
            .filter(|s| !s.latest_bundle.is_empty())
    })
    .await;
    // Nothing asks: the controller's own write must not bring it back. A poll always
    // writes the status, so an unchanged resourceVersion means no poll.
    let version = b.beacon("app").await.resource_version();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(b.beacon("app").await.resource_version(), version);

    // A new commit and a poke: polled at once, the token echoed.
    repo.commit("two");
    b.poke("app", "poke-1").await;
    let second = eventually(Duration::from_secs(20), "the echo", || async {
        b.beacon("app")
            .await
            .status
            .filter(|s| s.last_handled_reconcile_at == "poke-1")
    })
    .await;
    assert_ne!(second.latest_bundle, first.latest_bundle);
    assert_eq!(b.bundles("app").await.len(), 2);

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the controller stops when told")
        .unwrap();
}
