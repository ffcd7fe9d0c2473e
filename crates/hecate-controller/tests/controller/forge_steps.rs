//! The forge steps, `git-pull-request` and `commit-status`, against GitHub and GitLab
//! faked with wiremock (`baseURL` points at it), with their credentials Secrets read
//! from a real API server as the controller's own identity, and a real local checkout
//! whose `origin` names the public host (so the forge is inferred) while the requests
//! go to the fake.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hecate_sources::git::AppTokens;
use hecate_steps::forge::{CommitStatus, Forge, GitPullRequest};
use hecate_steps::runner::{Progress, Runner, StepContext, StepError, StepResult};
use hecate_testenv::TestEnv;
use hecate_types::{Bundle, BundleSpec};
use serde_json::{Value, json};
use tempfile::TempDir;
use wiremock::matchers::{body_partial_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use super::git_steps::{as_controller, context, git, secret};
use hecate_steps::reason::Reason;

/// The host API token in the `forge` Secret (which also holds a `password`, unused).
const TOKEN: &str = "tok-123";
/// The Passage's default head branch (Passage `dev-1`).
const HEAD: &str = "hecate/dev-1";
/// GitHub's pull request collection of `acme/fleet`.
const PULLS: &str = "/repos/acme/fleet/pulls";
/// GitLab's merge request collection of `acme/platform/fleet`, its path escaped.
const MERGE_REQUESTS: &str = "/api/v4/projects/acme%2Fplatform%2Ffleet/merge_requests";

struct Fixture {
    env: TestEnv,
    client: kube::Client,
    root: TempDir,
    bundle: Bundle,
    outputs: BTreeMap<String, Value>,
}

impl Fixture {
    /// A namespace with the `forge` Secret, read as the controller.
    async fn new() -> Self {
        let env = TestEnv::new().await;
        env.create(secret(
            "forge",
            &[("token", TOKEN), ("password", "not-the-token")],
        ))
        .await;
        let client = as_controller(&env).await;
        Self {
            env,
            client,
            root: tempfile::tempdir().unwrap(),
            bundle: Bundle::new(
                "shop-0123456789ab",
                BundleSpec {
                    alias: "shop 1.4".into(),
                    ..BundleSpec::default()
                },
            ),
            outputs: BTreeMap::new(),
        }
    }

    fn forge(&self) -> Forge {
        Forge::new(self.client.clone(), AppTokens::default())
    }

    /// An empty work directory `name`.
    fn work_dir(&self, name: &str) -> PathBuf {
        let work = self.root.path().join(name);
        std::fs::create_dir_all(&work).unwrap();
        work
    }

    /// A work directory `name` with a checkout at `repo` on `main`, one commit, and
    /// `origin` at `origin`; and the commit's SHA.
    fn checkout(&self, name: &str, origin: &str) -> (PathBuf, String) {
        let work = self.work_dir(name);
        let repo = work.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("README.md"), "fleet\n").unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "seed"]);
        git(&repo, &["remote", "add", "origin", origin]);
        let sha = std::fs::read_to_string(repo.join(".git/refs/heads/main")).unwrap();
        (work, sha.trim().to_string())
    }

    /// The context of Passage `dev-1` crossing Gate `dev`.
    fn ctx<'a>(&'a self, work: &'a Path, config: Value) -> StepContext<'a> {
        context(&self.env, &self.bundle, &self.outputs, work, config)
    }
}

/// A GitHub pull request of `acme/fleet` from [`HEAD`].
fn github_pr(number: u64, state: &str, merged: bool, sha: Option<&str>) -> Value {
    json!({
        "number": number,
        "html_url": format!("https://github.com/acme/fleet/pull/{number}"),
        "state": state,
        "merged": merged,
        "merged_at": if merged { json!("2026-12-01T03:00:00Z") } else { Value::Null },
        "merge_commit_sha": sha,
        "head": {"ref": HEAD},
    })
}

/// A GitLab merge request of `acme/platform/fleet` from [`HEAD`].
fn gitlab_mr(iid: u64, state: &str, merge: Option<&str>, squash: Option<&str>) -> Value {
    json!({
        "id": 9000 + iid,
        "iid": iid,
        "web_url": format!("https://gitlab.com/acme/platform/fleet/-/merge_requests/{iid}"),
        "state": state,
        "source_branch": HEAD,
        "merge_commit_sha": merge,
        "squash_commit_sha": squash,
        "sha": "0badc0de",
    })
}

/// An answer with a JSON body.
fn answer(status: u16, body: Value) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(body)
}

/// The one request `server` received for `method path`.
async fn received(server: &MockServer, verb: &str, at: &str) -> Request {
    let mut found: Vec<Request> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() == verb && r.url.path() == at)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{verb} {at} was received {} times",
        found.len()
    );
    found.remove(0)
}

fn header_of<'r>(request: &'r Request, name: &str) -> Option<&'r str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

/// GitHub's three headers, on every request `server` received.
async fn assert_github_headers(server: &MockServer, bearer: &str) {
    let requests = server.received_requests().await.unwrap();
    assert!(!requests.is_empty());
    for request in requests {
        if request.url.path().starts_with("/app/") {
            continue;
        }
        let at = format!("{} {}", request.method, request.url);
        assert_eq!(
            header_of(&request, "authorization"),
            Some(format!("Bearer {bearer}").as_str()),
            "{at}"
        );
        assert_eq!(
            header_of(&request, "accept"),
            Some("application/vnd.github+json"),
            "{at}"
        );
        assert_eq!(
            header_of(&request, "x-github-api-version"),
            Some("2022-11-28"),
            "{at}"
        );
        assert_eq!(header_of(&request, "private-token"), None, "{at}");
    }
}

fn output(result: &Result<StepResult, StepError>) -> &Value {
    match result {
        Ok(done) => done.output.as_ref().unwrap(),
        Err(error) => error.output.as_ref().unwrap(),
    }
}

fn reason(error: &StepError) -> (Reason, bool) {
    (error.reason, error.terminal)
}

#[tokio::test]
async fn a_pull_request_is_opened_as_documented_and_waited_on() {
    let fx = Fixture::new().await;
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(PULLS))
        .and(query_param("state", "open"))
        .and(query_param("head", format!("acme:{HEAD}")))
        .respond_with(answer(200, json!([])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(PULLS))
        .respond_with(answer(201, github_pr(7, "open", false, Some("test-merge"))))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/fleet/issues/7/labels"))
        .respond_with(answer(200, json!([{"name": "promotion"}])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PULLS}/7")))
        .respond_with(answer(200, github_pr(7, "open", false, Some("test-merge"))))
        .expect(1)
        .mount(&server)
        .await;
    let (work, _) = fx.checkout("opened", "https://github.com/acme/fleet.git");
    let config = json!({
        "credentialsRef": {"name": "forge"},
        "baseURL": server.uri(),
        "body": "Moves shop to dev.",
        "labels": ["promotion"],
        "pollInterval": "30s",
    });

    let step = GitPullRequest::new(fx.forge());
    let result = step.run(&fx.ctx(&work, config)).await;

    let done = result.as_ref().unwrap();
    assert_eq!(done.progress, Progress::Running);
    assert_eq!(done.retry_after, Some(Duration::from_secs(30)));
    assert!(done.message.contains("waiting"), "{}", done.message);
    assert_eq!(
        output(&result),
        &json!({"number": 7, "url": "https://github.com/acme/fleet/pull/7",
                "state": "Open", "branch": HEAD})
    );
    let create = received(&server, "POST", PULLS).await;
    assert_eq!(header_of(&create, "content-type"), Some("application/json"));
    assert_eq!(
        create.body_json::<Value>().unwrap(),
        json!({"title": "Promote shop 1.4 to dev", "head": HEAD, "base": "main",
               "body": "Moves shop to dev."})
    );
    let labels = received(&server, "POST", "/repos/acme/fleet/issues/7/labels").await;
    assert_eq!(
        labels.body_json::<Value>().unwrap(),
        json!({"labels": ["promotion"]})
    );
    assert_github_headers(&server, TOKEN).await;
    server.verify().await;
}

#[tokio::test]
async fn an_open_pull_request_is_found_and_not_opened_again() {
    let fx = Fixture::new().await;
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(PULLS))
        .and(query_param("state", "open"))
        .respond_with(answer(200, json!([github_pr(7, "open", false, None)])))
        .expect(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(PULLS))
        .respond_with(answer(201, github_pr(8, "open", false, None)))
        .expect(0)
        .mount(&server)
        .await;
    // Labelled when first found, never on a later poll.
    Mock::given(method("POST"))
        .and(path("/repos/acme/fleet/issues/7/labels"))
        .respond_with(answer(200, json!([])))
        .expect(1)
        .mount(&server)
        .await;
    let (work, _) = fx.checkout("found", "git@github.com:acme/fleet.git");
    let config = json!({
        "credentialsRef": {"name": "forge"},
        "baseURL": server.uri(),
        "labels": ["promotion"],
        "waitForMerge": false,
    });
    let step = GitPullRequest::new(fx.forge());

    for attempt in [0, 1] {
        let mut ctx = fx.ctx(&work, config.clone());
        ctx.attempt = attempt;
        let result = step.run(&ctx).await;
        let done = result.as_ref().unwrap();
        assert_eq!(done.progress, Progress::Succeeded);
        assert!(done.message.starts_with("found"), "{}", done.message);
        assert_eq!(output(&result)["number"], json!(7));
        assert_eq!(output(&result)["state"], json!("Open"));
    }
    server.verify().await;
}

#[tokio::test]
async fn a_duplicate_is_looked_up_again_and_a_label_refusal_is_ignored() {
    let fx = Fixture::new().await;
    let server = MockServer::start().await;
    // Nothing open at first; someone else's (or a lost) create lands meanwhile.
    Mock::given(method("GET"))
        .and(path(PULLS))
        .respond_with(answer(200, json!([])))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(PULLS))
        .respond_with(answer(200, json!([github_pr(9, "open", false, None)])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(PULLS))
        .respond_with(answer(
            422,
            json!({"message": "Validation Failed", "errors": [{"resource": "PullRequest",
                   "code": "custom",
                   "message": "A pull request already exists for acme:hecate/dev-1."}]}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/fleet/issues/9/labels"))
        .respond_with(answer(500, json!({"message": "Server Error"})))
        .expect(1)
        .mount(&server)
        .await;
    let (work, _) = fx.checkout("raced", "https://github.com/acme/fleet");
    let config = json!({
        "credentialsRef": {"name": "forge"},
        "baseURL": server.uri(),
        "labels": ["promotion"],
        "waitForMerge": false,
    });

    let result = GitPullRequest::new(fx.forge())
        .run(&fx.ctx(&work, config))
        .await;

    let done = result.as_ref().unwrap();
    assert_eq!(done.progress, Progress::Succeeded);
    assert!(
        done.message.contains("opened meanwhile") && done.message.contains("labels not added"),
        "{}",
        done.message
    );
    assert_eq!(output(&result)["number"], json!(9));
    server.verify().await;
}

#[tokio::test]
async fn merged_gives_the_merge_commit_and_closed_ends_the_crossing() {
    let fx = Fixture::new().await;
    let (work, _) = fx.checkout("merge", "https://github.com/acme/fleet.git");
    let config =
        |server: &MockServer| json!({"credentialsRef": {"name": "forge"}, "baseURL": server.uri()});
    let step = GitPullRequest::new(fx.forge());

    // Merged while open in the list.
    let merged = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(PULLS))
        .respond_with(answer(200, json!([github_pr(7, "open", false, None)])))
        .mount(&merged)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PULLS}/7")))
        .respond_with(answer(
            200,
            github_pr(7, "closed", true, Some("f00dfeed0123")),
        ))
        .expect(1)
        .mount(&merged)
        .await;
    let result = step.run(&fx.ctx(&work, config(&merged))).await;
    assert_eq!(result.as_ref().unwrap().progress, Progress::Succeeded);
    assert_eq!(
        output(&result),
        &json!({"number": 7, "url": "https://github.com/acme/fleet/pull/7",
                "state": "Merged", "branch": HEAD, "sha": "f00dfeed0123"})
    );

    // Merged between two polls: no longer open, found among all, never opened again.
    let later = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(PULLS))
        .and(query_param("state", "open"))
        .respond_with(answer(200, json!([])))
        .expect(1)
        .mount(&later)
        .await;
    Mock::given(method("GET"))
        .and(path(PULLS))
        .and(query_param("state", "all"))
        .and(query_param("head", format!("acme:{HEAD}")))
        .respond_with(answer(
            200,
            json!([github_pr(7, "closed", true, Some("f00dfeed0123"))]),
        ))
        .expect(1)
        .mount(&later)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PULLS}/7")))
        .respond_with(answer(
            200,
            github_pr(7, "closed", true, Some("f00dfeed0123")),
        ))
        .mount(&later)
        .await;
    Mock::given(method("POST"))
        .respond_with(answer(201, github_pr(8, "open", false, None)))
        .expect(0)
        .mount(&later)
        .await;
    let mut ctx = fx.ctx(&work, config(&later));
    ctx.attempt = 3;
    let result = step.run(&ctx).await;
    assert_eq!(output(&result)["sha"], json!("f00dfeed0123"));
    later.verify().await;

    // Closed without a merge.
    let closed = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(PULLS))
        .respond_with(answer(200, json!([github_pr(7, "open", false, None)])))
        .mount(&closed)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PULLS}/7")))
        .respond_with(answer(
            200,
            github_pr(7, "closed", false, Some("test-merge")),
        ))
        .mount(&closed)
        .await;
    let result = step.run(&fx.ctx(&work, config(&closed))).await;
    let error = result.as_ref().unwrap_err();
    assert_eq!(reason(error), (Reason::PullRequestClosed, true));
    assert_eq!(output(&result)["state"], json!("Closed"));
    assert_eq!(output(&result).get("sha"), None);
}

#[tokio::test]
async fn refusals_have_their_reasons() {
    let fx = Fixture::new().await;
    let (work, _) = fx.checkout("refused", "https://github.com/acme/fleet.git");
    let step = GitPullRequest::new(fx.forge());
    let cases = [
        (
            401,
            json!({"message": "Bad credentials"}),
            Reason::ProviderAuthFailed,
            true,
        ),
        (
            403,
            json!({"message": "Resource not accessible by integration"}),
            Reason::ProviderAuthFailed,
            true,
        ),
        (
            404,
            json!({"message": "Not Found"}),
            Reason::ProviderFailed,
            true,
        ),
        (
            500,
            json!({"message": "Server Error"}),
            Reason::ProviderFailed,
            false,
        ),
    ];
    for (status, body, want_reason, terminal) in cases {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path(PULLS))
            .respond_with(answer(status, body.clone()))
            .mount(&server)
            .await;
        let config = json!({"credentialsRef": {"name": "forge"}, "baseURL": server.uri()});
        let error = step.run(&fx.ctx(&work, config)).await.unwrap_err();
        assert_eq!(reason(&error), (want_reason, terminal), "{status}");
        let said = body["message"].as_str().unwrap();
        assert!(
            error.message.contains(&status.to_string()) && error.message.contains(said),
            "{}",
            error.message
        );
        assert!(!error.message.contains(TOKEN), "{}", error.message);
    }

    // Nobody there: retryable.
    let config = json!({"credentialsRef": {"name": "forge"}, "baseURL": "http://127.0.0.1:1"});
    let error = step.run(&fx.ctx(&work, config)).await.unwrap_err();
    assert_eq!(
        reason(&error),
        (Reason::ProviderFailed, false),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_gitlab_merge_request_in_a_nested_group() {
    let fx = Fixture::new().await;
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(MERGE_REQUESTS))
        .and(query_param("state", "opened"))
        .and(query_param("source_branch", HEAD))
        .respond_with(answer(200, json!([])))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(MERGE_REQUESTS))
        .and(query_param("state", "opened"))
        .respond_with(answer(200, json!([gitlab_mr(4, "opened", None, None)])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(MERGE_REQUESTS))
        .respond_with(answer(
            409,
            json!({"message": ["Another open merge request already exists for this source branch: !4"]}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    // A squash merge: no merge commit, the squashed one landed.
    Mock::given(method("GET"))
        .and(path(format!("{MERGE_REQUESTS}/4")))
        .respond_with(answer(
            200,
            gitlab_mr(4, "merged", None, Some("5a5a5a5a99")),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let (work, _) = fx.checkout("gitlab", "https://gitlab.com/acme/platform/fleet.git");
    let config = json!({
        "credentialsRef": {"name": "forge"},
        "baseURL": format!("{}/api/v4", server.uri()),
        "labels": ["promotion", "dev"],
        "body": "Moves shop to dev.",
    });

    let result = GitPullRequest::new(fx.forge())
        .run(&fx.ctx(&work, config))
        .await;

    assert_eq!(result.as_ref().unwrap().progress, Progress::Succeeded);
    assert_eq!(
        output(&result),
        &json!({"number": 4,
                "url": "https://gitlab.com/acme/platform/fleet/-/merge_requests/4",
                "state": "Merged", "branch": HEAD, "sha": "5a5a5a5a99"})
    );
    let create = received(&server, "POST", MERGE_REQUESTS).await;
    assert_eq!(
        create.body_json::<Value>().unwrap(),
        json!({"source_branch": HEAD, "target_branch": "main",
               "title": "Promote shop 1.4 to dev", "description": "Moves shop to dev.",
               "labels": "promotion,dev"})
    );
    for request in server.received_requests().await.unwrap() {
        assert_eq!(header_of(&request, "private-token"), Some(TOKEN));
        assert_eq!(header_of(&request, "authorization"), None);
    }
    server.verify().await;

    // The merge commit when there is one.
    let plain = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(MERGE_REQUESTS))
        .respond_with(answer(200, json!([gitlab_mr(4, "opened", None, None)])))
        .mount(&plain)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{MERGE_REQUESTS}/4")))
        .respond_with(answer(
            200,
            gitlab_mr(4, "merged", Some("eeee1111"), Some("5a5a")),
        ))
        .mount(&plain)
        .await;
    let config = json!({"credentialsRef": {"name": "forge"}, "provider": "gitlab",
                        "baseURL": format!("{}/api/v4", plain.uri())});
    let result = GitPullRequest::new(fx.forge())
        .run(&fx.ctx(&work, config))
        .await;
    assert_eq!(output(&result)["sha"], json!("eeee1111"));
}

#[tokio::test]
async fn commit_status_on_github_reports_what_happened() {
    let fx = Fixture::new().await;
    let (work, sha) = fx.checkout("status", "https://github.com/acme/fleet.git");
    let statuses = format!("/repos/acme/fleet/statuses/{sha}");
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(&statuses))
        .respond_with(answer(201, json!({"id": 1, "state": "x"})))
        .expect(3)
        .mount(&server)
        .await;
    let step = CommitStatus::new(fx.forge());
    let base = json!({"credentialsRef": {"name": "forge"}, "baseURL": server.uri()});

    // After a failure, with everything defaulted.
    let mut ctx = fx.ctx(&work, base.clone());
    ctx.failed = true;
    let result = step.run(&ctx).await;
    assert_eq!(
        output(&result),
        &json!({"state": "Failure", "sha": sha, "context": "hecate/dev"})
    );
    // Without one.
    let result = step.run(&fx.ctx(&work, base.clone())).await;
    assert_eq!(output(&result)["state"], json!("Success"));
    // Told, with a long description.
    let mut told = base.clone();
    told["state"] = json!("Pending");
    told["context"] = json!("ci/hecate");
    told["targetURL"] = json!("https://hecate.example/passages/dev-1");
    told["description"] = json!("é".repeat(200));
    let result = step.run(&fx.ctx(&work, told)).await;
    assert_eq!(
        output(&result),
        &json!({"state": "Pending", "sha": sha, "context": "ci/hecate"})
    );

    let bodies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json::<Value>().unwrap())
        .collect();
    assert_eq!(
        bodies,
        [
            json!({"state": "failure", "context": "hecate/dev",
                   "description": "shop 1.4 did not cross dev"}),
            json!({"state": "success", "context": "hecate/dev",
                   "description": "shop 1.4 crossed dev"}),
            json!({"state": "pending", "context": "ci/hecate",
                   "description": format!("{}…", "é".repeat(139)),
                   "target_url": "https://hecate.example/passages/dev-1"}),
        ]
    );
    assert_github_headers(&server, TOKEN).await;
    server.verify().await;
}

#[tokio::test]
async fn commit_status_on_gitlab_and_a_status_already_set() {
    let fx = Fixture::new().await;
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let statuses = format!("/api/v4/projects/acme%2Fplatform%2Ffleet/statuses/{sha}");
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(&statuses))
        .and(header("private-token", TOKEN))
        .and(body_partial_json(json!({"state": "success"})))
        .respond_with(answer(201, json!({"id": 1, "status": "success"})))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(&statuses))
        .and(body_partial_json(json!({"state": "failed"})))
        .respond_with(answer(
            400,
            json!({"message": "Cannot transition status via :drop from :failed (Reasons: ...)"}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(&statuses))
        .and(body_partial_json(json!({"state": "pending"})))
        .respond_with(answer(
            400,
            json!({"message": "400 Bad request - name is invalid"}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    // No checkout: sha and repo both given.
    let work = fx.work_dir("gitlab-status");
    let base = json!({
        "credentialsRef": {"name": "forge"},
        "sha": sha,
        "repo": "git@gitlab.com:acme/platform/fleet.git",
        "baseURL": format!("{}/api/v4", server.uri()),
    });
    let step = CommitStatus::new(fx.forge());

    let result = step.run(&fx.ctx(&work, base.clone())).await;
    assert_eq!(
        output(&result),
        &json!({"state": "Success", "sha": sha, "context": "hecate/dev"})
    );
    let sent = received(&server, "POST", &statuses).await;
    assert_eq!(
        sent.body_json::<Value>().unwrap(),
        json!({"state": "success", "name": "hecate/dev", "description": "shop 1.4 crossed dev"})
    );

    let mut already = base.clone();
    already["state"] = json!("Failure");
    let result = step.run(&fx.ctx(&work, already)).await;
    assert!(
        result.as_ref().unwrap().message.contains("already Failure"),
        "{result:?}"
    );
    assert_eq!(output(&result)["state"], json!("Failure"));

    let mut refused = base;
    refused["state"] = json!("Pending");
    let error = step.run(&fx.ctx(&work, refused)).await.unwrap_err();
    assert_eq!(
        reason(&error),
        (Reason::ProviderFailed, false),
        "{}",
        error.message
    );
    assert!(!work.join(".hecate").exists(), "no git was run");
    server.verify().await;
}

#[tokio::test]
async fn commit_status_refusals_and_checkouts_it_cannot_use_have_their_reasons() {
    let fx = Fixture::new().await;
    let (work, sha) = fx.checkout("status-refused", "https://github.com/acme/fleet.git");
    let step = CommitStatus::new(fx.forge());
    for (status, want) in [
        (401, (Reason::ProviderAuthFailed, true)),
        (403, (Reason::ProviderAuthFailed, true)),
        (404, (Reason::ProviderFailed, true)),
        (502, (Reason::ProviderFailed, false)),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(format!("/repos/acme/fleet/statuses/{sha}")))
            .respond_with(answer(status, json!({"message": "no"})))
            .expect(1)
            .mount(&server)
            .await;
        let config = json!({"credentialsRef": {"name": "forge"}, "baseURL": server.uri()});
        let error = step.run(&fx.ctx(&work, config)).await.unwrap_err();
        assert_eq!(reason(&error), want, "{status}: {}", error.message);
        assert!(!error.message.contains(TOKEN), "{}", error.message);
        server.verify().await;
    }

    // What the step cannot read from a checkout, it cannot report on. Nothing is sent.
    let config = json!({"credentialsRef": {"name": "forge"}, "baseURL": "http://127.0.0.1:1"});
    // A checkout with no commit yet: nothing to report on.
    let unborn = fx.work_dir("unborn");
    git(&unborn, &["init", "-q", "-b", "main", "repo"]);
    git(
        &unborn.join("repo"),
        &[
            "remote",
            "add",
            "origin",
            "https://github.com/acme/fleet.git",
        ],
    );
    let error = step
        .run(&fx.ctx(&unborn, config.clone()))
        .await
        .unwrap_err();
    assert_eq!(
        reason(&error),
        (Reason::GitFailed, true),
        "{}",
        error.message
    );
    // A checkout without an origin: say which repository.
    let (remoteless, _) = fx.checkout("remoteless", "https://github.com/acme/fleet.git");
    git(&remoteless.join("repo"), &["remote", "remove", "origin"]);
    let error = step
        .run(&fx.ctx(&remoteless, config.clone()))
        .await
        .unwrap_err();
    assert_eq!(
        reason(&error),
        (Reason::InvalidConfig, true),
        "{}",
        error.message
    );
    assert!(error.message.contains("set repo"), "{}", error.message);
    // A checkout git cannot read (its `.git` points nowhere): both forge steps fail
    // terminally rather than guess.
    let broken = fx.work_dir("broken");
    std::fs::create_dir_all(broken.join("repo")).unwrap();
    std::fs::write(broken.join("repo/.git"), "gitdir: /nonexistent/hecate\n").unwrap();
    let pull_request = GitPullRequest::new(fx.forge());
    for step in [&step as &dyn Runner, &pull_request] {
        let error = step
            .run(&fx.ctx(&broken, config.clone()))
            .await
            .unwrap_err();
        assert_eq!(
            reason(&error),
            (Reason::GitFailed, true),
            "{}: {}",
            step.name(),
            error.message
        );
    }

    // Configuration mistakes, caught before any request.
    for (config, words) in [
        (json!({}), "credentialsRef"),
        (
            json!({"credentialsRef": {"name": "forge"}, "state": "Done"}),
            "state",
        ),
        (
            json!({"credentialsRef": {"name": "forge"}, "sha": "abc", "repo": "https://example.com/acme/fleet"}),
            "provider",
        ),
        (
            json!({"credentialsRef": {"name": "absent"}, "sha": "abc", "repo": "https://github.com/acme/fleet"}),
            "absent",
        ),
    ] {
        let error = step.run(&fx.ctx(&work, config.clone())).await.unwrap_err();
        assert_eq!(
            reason(&error),
            (Reason::InvalidConfig, true),
            "{config}: {}",
            error.message
        );
        assert!(error.message.contains(words), "{config}: {}", error.message);
    }
}

#[tokio::test]
async fn without_a_checkout_the_forge_steps_say_the_work_dir_is_lost() {
    let fx = Fixture::new().await;
    let work = fx.work_dir("lost");
    let status = CommitStatus::new(fx.forge());
    let pull_request = GitPullRequest::new(fx.forge());
    let cases: [(&dyn Runner, Value); 4] = [
        (
            &status,
            json!({"credentialsRef": {"name": "forge"}, "sha": "abc"}),
        ),
        (
            &status,
            json!({"credentialsRef": {"name": "forge"}, "repo": "https://github.com/acme/fleet"}),
        ),
        (
            &pull_request,
            json!({"credentialsRef": {"name": "forge"}, "repo": "https://github.com/acme/fleet"}),
        ),
        (
            &pull_request,
            json!({"credentialsRef": {"name": "forge"}, "base": "main"}),
        ),
    ];
    for (step, config) in cases {
        let error = step.run(&fx.ctx(&work, config.clone())).await.unwrap_err();
        assert_eq!(reason(&error), (Reason::WorkDirLost, true), "{config}");
    }
    let error = status
        .run(&fx.ctx(&work, json!({"credentialsRef": {"name": "forge"}})))
        .await
        .unwrap_err();
    assert!(
        error.message.contains("set sha and repo"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn the_host_token_is_token_then_password_from_a_required_secret() {
    let fx = Fixture::new().await;
    fx.env
        .create(secret(
            "password-only",
            &[("username", "bot"), ("password", "pw-9\n")],
        ))
        .await;
    fx.env
        .create(secret("ssh-only", &[("identity", "KEY")]))
        .await;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(header("authorization", "Bearer pw-9"))
        .respond_with(answer(201, json!({})))
        .expect(1)
        .mount(&server)
        .await;
    let work = fx.work_dir("tokens");
    let step = CommitStatus::new(fx.forge());
    let config = |secret: &str| {
        json!({"credentialsRef": {"name": secret}, "sha": "abc",
               "repo": "https://github.com/acme/fleet", "baseURL": server.uri()})
    };

    step.run(&fx.ctx(&work, config("password-only")))
        .await
        .unwrap();
    for (secret, words) in [
        ("ssh-only", "no host API token"),
        ("absent", "does not exist"),
    ] {
        let error = step.run(&fx.ctx(&work, config(secret))).await.unwrap_err();
        assert_eq!(reason(&error), (Reason::InvalidConfig, true), "{secret}");
        assert!(error.message.contains(words), "{}", error.message);
    }
    let error = step
        .run(&fx.ctx(
            &work,
            json!({"sha": "abc", "repo": "https://github.com/acme/fleet"}),
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&error), (Reason::InvalidConfig, true));
    assert!(
        error.message.contains("credentialsRef"),
        "{}",
        error.message
    );
    server.verify().await;
}

/// A fresh 2048-bit RSA key in PEM (PKCS#1, as GitHub hands them out).
fn rsa_key() -> String {
    let output = std::process::Command::new("openssl")
        .args(["genrsa", "-traditional", "2048"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn a_github_app_secret_mints_an_installation_token() {
    let fx = Fixture::new().await;
    let server = MockServer::start().await;
    let pem = rsa_key();
    for (name, installation) in [("app", "7"), ("app-refused", "8")] {
        fx.env
            .create(secret(
                name,
                &[
                    ("privateKey", pem.as_str()),
                    ("appID", "42"),
                    ("installationID", installation),
                    ("baseURL", server.uri().as_str()),
                    // An App's key wins over a token or a password.
                    ("token", "not-used"),
                    ("password", "not-used"),
                ],
            ))
            .await;
    }
    let expires = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
    Mock::given(method("POST"))
        .and(path("/app/installations/7/access_tokens"))
        .respond_with(answer(
            201,
            json!({"token": "ghs_minted", "expires_at": expires.to_string()}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/app/installations/8/access_tokens"))
        .respond_with(answer(
            401,
            json!({"message": "A JSON web token could not be decoded"}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(PULLS))
        .respond_with(answer(200, json!([github_pr(7, "open", false, None)])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/fleet/statuses/abc"))
        .respond_with(answer(201, json!({})))
        .expect(1)
        .mount(&server)
        .await;
    let (work, _) = fx.checkout("app", "https://github.com/acme/fleet.git");
    // One cache for both steps, as the process has.
    let forge = fx.forge();

    let opened = GitPullRequest::new(forge.clone())
        .run(&fx.ctx(
            &work,
            json!({"credentialsRef": {"name": "app"}, "baseURL": server.uri(),
                   "waitForMerge": false}),
        ))
        .await;
    assert_eq!(output(&opened)["number"], json!(7));
    CommitStatus::new(forge.clone())
        .run(&fx.ctx(
            &work,
            json!({"credentialsRef": {"name": "app"}, "baseURL": server.uri(), "sha": "abc"}),
        ))
        .await
        .unwrap();
    assert_github_headers(&server, "ghs_minted").await;

    // Minting refused: un-coded (`Unknown`) and retryable.
    let error = CommitStatus::new(forge)
        .run(&fx.ctx(
            &work,
            json!({"credentialsRef": {"name": "app-refused"}, "baseURL": server.uri(),
                   "sha": "abc"}),
        ))
        .await
        .unwrap_err();
    assert_eq!(
        reason(&error),
        (Reason::Unknown, false),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("GitHub App token"),
        "{}",
        error.message
    );
    server.verify().await;
}
