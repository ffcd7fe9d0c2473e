//! The git steps' credentials Secrets, read from a real API server as the controller's
//! own identity under its deployed ClusterRole: each kind of Secret is read as spec
//! §5.2 orders it, and `git-clone` fails a crossing cleanly when its Secret is missing
//! or holds nothing usable; `git-clone` and `git-push` over SSH against a real sshd.
//! (How git is given HTTPS credentials is tested in the crate's unit tests, against a
//! real smart-HTTP server.)

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use hecate_sources::git::{Basic, GitCredentials, SshKey};
use hecate_steps::git::GitClone;
use hecate_steps::reason::Reason;
use hecate_steps::runner::{Runner, StepContext, StepError};
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Bundle, BundleSpec};
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use serde_json::{Value, json};

pub(crate) use hecate_testenv::fixtures::usable_secret as secret;

/// A client as the controller, once its deployed role lets it read Secrets here.
pub(crate) async fn as_controller(env: &TestEnv) -> kube::Client {
    hecate_testenv::rbac::install_controller_role(&env.admin)
        .await
        .unwrap();
    let client = env.client(Identity::HecateController).await;
    let secrets = Api::<Secret>::namespaced(client.clone(), &env.namespace);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match secrets.get_opt("probe").await {
            Ok(_) => return client,
            // RBAC reaches the authorizer a moment after it is written.
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("the controller cannot read Secrets: {e}"),
        }
    }
}

#[tokio::test]
async fn each_kind_of_secret_is_read_in_precedence_order() {
    let env = TestEnv::new().await;
    for object in [
        secret("https", &[("username", "bot"), ("password", "tok\n")]),
        secret(
            "ssh",
            &[
                ("identity", "KEY"),
                ("known_hosts", "github.com ssh-ed25519 AAAA"),
                ("password", "https-ignored"),
            ],
        ),
        secret(
            "app",
            &[
                ("privateKey", "PEM"),
                ("appID", "42"),
                ("installationID", "7"),
                ("identity", "ignored"),
            ],
        ),
        secret("token-only", &[("token", "for the host API, not git")]),
    ] {
        env.create(object).await;
    }
    let client = as_controller(&env).await;
    let read = |name: Option<&'static str>| {
        let client = client.clone();
        let namespace = env.namespace.clone();
        async move { GitCredentials::read(&client, &namespace, name).await }
    };

    assert_eq!(read(None).await, Ok(GitCredentials::Anonymous));
    assert_eq!(
        read(Some("https")).await,
        Ok(GitCredentials::Https(Basic {
            username: "bot".into(),
            password: "tok".into(),
        }))
    );
    assert_eq!(
        read(Some("ssh")).await,
        Ok(GitCredentials::Ssh(SshKey {
            identity: "KEY".into(),
            passphrase: Some("https-ignored".into()),
            known_hosts: Some("github.com ssh-ed25519 AAAA".into()),
            user: "git".into(),
        }))
    );
    assert!(matches!(
        read(Some("app")).await,
        Ok(GitCredentials::GitHubApp(app)) if app.issuer == "42" && app.installation_id == "7"
    ));

    for (name, words) in [
        ("token-only", "no usable credentials"),
        ("absent", "does not exist"),
    ] {
        let error = StepError::from(read(Some(name)).await.expect_err(name));
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::InvalidConfig, true)
        );
        assert!(
            error.message.contains(name) && error.message.contains(words),
            "{}",
            error.message
        );
    }
}

/// `git <args>` in `dir`, which must succeed.
pub(crate) fn git(dir: &Path, args: &[&str]) {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Someone")
        .env("GIT_AUTHOR_EMAIL", "someone@example.com")
        .env("GIT_COMMITTER_NAME", "Someone")
        .env("GIT_COMMITTER_EMAIL", "someone@example.com")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn git_clone_reads_its_secret_and_fails_cleanly_without_one() {
    let env = TestEnv::new().await;
    env.create(secret(
        "fleet-https",
        &[("username", "bot"), ("password", "tok")],
    ))
    .await;
    env.create(secret("fleet-empty", &[])).await;
    let client = as_controller(&env).await;

    let root = tempfile::tempdir().unwrap();
    let bare = root.path().join("fleet.git");
    let seed = root.path().join("seed");
    git(
        root.path(),
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    git(
        root.path(),
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            seed.to_str().unwrap(),
        ],
    );
    std::fs::write(seed.join("README.md"), "fleet\n").unwrap();
    git(&seed, &["add", "-A"]);
    git(&seed, &["commit", "-q", "-m", "seed"]);
    git(&seed, &["push", "-q", "origin", "main"]);

    let bundle = Bundle::new("app-0123456789ab", BundleSpec::default());
    let outputs = BTreeMap::new();
    let step = GitClone::new(client).within(hecate_sources::git::Limits::local());
    let run = |work: &str, secret: &str| {
        let work = root.path().join(work);
        std::fs::create_dir_all(&work).unwrap();
        let config = json!({"repo": bare.to_str().unwrap(), "credentialsRef": {"name": secret}});
        (work, config)
    };

    // A file remote asks for no credentials, but the Secret is still read and must
    // be usable.
    let (work, config) = run("ok", "fleet-https");
    let done = step
        .run(&context(&env, &bundle, &outputs, &work, config))
        .await
        .unwrap();
    assert_eq!(done.output.unwrap()["reused"], json!(false));
    assert!(work.join("repo/README.md").exists());

    for (name, secret, words) in [
        ("missing", "fleet-missing", "does not exist"),
        ("empty", "fleet-empty", "no usable credentials"),
    ] {
        let (work, config) = run(name, secret);
        let error = step
            .run(&context(&env, &bundle, &outputs, &work, config))
            .await
            .unwrap_err();
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::InvalidConfig, true)
        );
        assert!(error.message.contains(words), "{}", error.message);
        assert!(!work.join("repo").exists(), "nothing is cloned");
    }
}

/// §5.2 SSH keys for `git-clone` and `git-push`, against a real sshd: the Secret's key,
/// as its user, with the host verified against its `known_hosts`; a host key that does
/// not match is a terminal `GitAuthFailed` that shows no key.
#[tokio::test]
async fn git_clone_and_push_over_ssh() {
    use hecate_steps::git::{GitCommit, GitPush};
    use hecate_testenv::sshd::{KeyPair, Sshd};

    let env = TestEnv::new().await;
    let key = KeyPair::generate(None);
    let sshd = Sshd::start(&[&key]).await;
    let impostor = format!("{} {}", sshd.host(), KeyPair::generate(None).public);
    for (name, known_hosts) in [("fleet-ssh", sshd.known_hosts()), ("impostor", impostor)] {
        env.create(secret(
            name,
            &[
                ("identity", &key.private),
                ("known_hosts", &known_hosts),
                ("username", sshd.user()),
            ],
        ))
        .await;
    }
    let client = as_controller(&env).await;

    let root = tempfile::tempdir().unwrap();
    let bare = root.path().join("fleet.git");
    let seed = root.path().join("seed");
    git(
        root.path(),
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    git(
        root.path(),
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            seed.to_str().unwrap(),
        ],
    );
    std::fs::write(seed.join("README.md"), "fleet\n").unwrap();
    git(&seed, &["add", "-A"]);
    git(&seed, &["commit", "-q", "-m", "seed"]);
    git(&seed, &["push", "-q", "origin", "main"]);
    let url = sshd.url(&bare);

    let bundle = Bundle::new("app-0123456789ab", BundleSpec::default());
    let outputs = BTreeMap::new();
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let with_secret = |name: &str, config: Value| {
        let mut config = config;
        config["credentialsRef"] = json!({"name": name});
        config
    };

    let clone = GitClone::new(client.clone());
    let cloned = clone
        .run(&context(
            &env,
            &bundle,
            &outputs,
            &work,
            with_secret("fleet-ssh", json!({"repo": url})),
        ))
        .await
        .unwrap_or_else(|e| panic!("{} ({})\n{}", e.message, e.reason, sshd.log()));
    assert_eq!(cloned.output.unwrap()["reused"], json!(false));
    std::fs::write(work.join("repo/README.md"), "fleet, promoted\n").unwrap();
    let committed = GitCommit::new()
        .run(&context(
            &env,
            &bundle,
            &outputs,
            &work,
            json!({"message": "promote"}),
        ))
        .await
        .unwrap();
    let sha = committed.output.unwrap()["sha"].clone();
    let push = GitPush::new(client);
    let pushed = push
        .run(&context(
            &env,
            &bundle,
            &outputs,
            &work,
            with_secret("fleet-ssh", json!({})),
        ))
        .await
        .unwrap_or_else(|e| panic!("{} ({})", e.message, e.reason));
    assert_eq!(
        pushed.output.unwrap(),
        json!({"branch": "main", "sha": sha, "pushed": true, "rebased": 0})
    );
    let remote_main = std::process::Command::new("git")
        .args(["--git-dir", bare.to_str().unwrap(), "rev-parse", "main"])
        .output()
        .unwrap();
    assert_eq!(
        json!(String::from_utf8_lossy(&remote_main.stdout).trim()),
        sha
    );
    // No key file is left behind in the work directory.
    for step in ["git-clone", "git-push"] {
        let scratch = work.join(".hecate/credentials").join(step);
        assert!(!scratch.exists(), "{} is left", scratch.display());
    }

    // A host that is not the one known: refused before any key is offered.
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let error = clone
        .run(&context(
            &env,
            &bundle,
            &outputs,
            &elsewhere,
            with_secret("impostor", json!({"repo": url})),
        ))
        .await
        .unwrap_err();
    assert_eq!(
        (error.reason, error.terminal),
        (Reason::GitAuthFailed, true),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("Host key verification failed"),
        "{}",
        error.message
    );
    for line in key.private.lines().filter(|l| !l.starts_with("-----")) {
        assert!(!error.message.contains(line), "{}", error.message);
    }
    assert!(!elsewhere.join("repo").exists(), "nothing is cloned");
}

/// The context of Passage `dev-1` in the test's namespace.
pub(crate) fn context<'a>(
    env: &'a TestEnv,
    bundle: &'a Bundle,
    outputs: &'a BTreeMap<String, Value>,
    work_dir: &'a Path,
    config: Value,
) -> StepContext<'a> {
    StepContext {
        namespace: &env.namespace,
        gate: "dev",
        passage: "dev-1",
        bundle,
        actor: "controller",
        work_dir,
        config,
        outputs,
        attempt: 0,
        failed: false,
        traceparent: "",
        started_at: jiff::Timestamp::UNIX_EPOCH,
    }
}
