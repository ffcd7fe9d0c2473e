//! The reference's habits (surfaces §1.1, §1.2): single-dash long flags, `hecate help`,
//! `-v`, and the hint `status <gate>` earns — each typed as its users type it.

use hecate_cli::exit;
use hecate_testenv::{Identity, TestEnv};
use pretty_assertions::assert_eq;
use serde_json::json;
use wiremock::matchers::{header, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;

fn hecate_binary() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_BIN_EXE_hecate"))
}

/// `hecate <args>` as `who`, with no `-n` of the harness's: the test says the namespace.
async fn typed(hecate: &Hecate, who: Identity, args: &[&str]) -> Run {
    output(
        binary(hecate_binary())
            .args(args)
            .arg("-kubeconfig")
            .arg(hecate.kubeconfig(who))
            .output()
            .await
            .unwrap(),
    )
}

#[tokio::test]
async fn single_dash_long_flags_are_ours() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let ns = env.namespace.as_str();
    gate(&env, "production", gate_spec(&[], true)).await;
    bundle(&env, "b1").await;

    // `-namespace X` is the namespace, not `-n amespace`; `-output json` is `-o json`.
    let status = typed(
        &hecate,
        Identity::Alice,
        &["status", "-namespace", ns, "-output", "json"],
    )
    .await;
    assert_eq!(status.code, 0, "{status:?}");
    let explanations: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(explanations[0]["gate"], "production", "{}", status.stdout);
    assert_eq!(explanations[0]["namespace"], ns);

    let explain = typed(
        &hecate,
        Identity::Alice,
        &[
            "explain",
            "production",
            &format!("-namespace={ns}"),
            "-output=yaml",
        ],
    )
    .await;
    assert_eq!(explain.code, 0, "{explain:?}");
    assert!(
        explain.stdout.contains("gate: production"),
        "{}",
        explain.stdout
    );

    // Short flags still work beside them.
    let short = typed(
        &hecate,
        Identity::Alice,
        &["status", "-n", ns, "-o", "json"],
    )
    .await;
    assert_eq!(short.stdout, status.stdout);

    let approve = typed(
        &hecate,
        Identity::Carol,
        &["approve", "b1", "-gate", "production", "-namespace", ns],
    )
    .await;
    assert_eq!(
        (approve.code, approve.stdout.as_str()),
        (0, "b1 approved for production by carol\n"),
        "{approve:?}"
    );

    // No controller runs here, so the crossing is still waiting when -timeout ends it.
    let promote = typed(
        &hecate,
        Identity::Bob,
        &[
            "promote",
            "production",
            "-bundle",
            "b1",
            "-watch",
            "-timeout",
            "1s",
            "-namespace",
            ns,
        ],
    )
    .await;
    assert_eq!(promote.code, i32::from(exit::COULD_NOT_TELL), "{promote:?}");
    assert!(
        promote
            .stdout
            .contains("still crossing after 1s: production-1"),
        "{}",
        promote.stdout
    );
}

#[tokio::test]
async fn verify_takes_the_reference_spellings() {
    let fides = MockServer::start().await;
    Mock::given(path("/api/v1/trails/t-1/verify-chain"))
        .and(header("authorization", "Bearer k"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"valid": true, "count": 2, "broken_at": -1})),
        )
        .mount(&fides)
        .await;
    let uri = fides.uri();
    let run = output(
        binary(hecate_binary())
            .args([
                "verify", "-server", &uri, "-token", "k", "-trail", "t-1", "-output", "json",
            ])
            .output()
            .await
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let reports: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(reports[0]["trail"], "t-1", "{}", run.stdout);
    assert_eq!(reports[0]["valid"], true);
}

#[tokio::test]
async fn help_version_and_the_status_hint() {
    let run = |args: &'static [&'static str]| async move {
        output(binary(hecate_binary()).args(args).output().await.unwrap())
    };
    let help = run(&["help"]).await;
    assert_eq!(help.code, 0, "{help:?}");
    assert!(help.stdout.contains("Usage: hecate"), "{}", help.stdout);
    assert_eq!(help.stdout, run(&["--help"]).await.stdout);

    let promote = run(&["help", "promote"]).await;
    assert_eq!(promote.code, 0, "{promote:?}");
    assert!(
        promote.stdout.contains("--bundle <BUNDLE>"),
        "{}",
        promote.stdout
    );

    let version = run(&["-v"]).await;
    assert_eq!(
        (version.code, version.stdout.trim()),
        (0, concat!("hecate ", env!("CARGO_PKG_VERSION")))
    );

    let status = run(&["status", "production"]).await;
    assert_eq!(
        (status.code, status.stderr.as_str(), status.stdout.as_str()),
        (
            i32::from(exit::USAGE),
            "hecate: status shows every Gate and takes no name: did you mean \
             `hecate explain production`?\n",
            ""
        )
    );

    // As a kubectl plugin, the hint is typed as the user types it.
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("kubectl-hecate");
    std::fs::copy(hecate_binary(), &plugin).unwrap();
    let hint = output(
        binary(&plugin)
            .args(["status", "-namespace", "shop", "staging"])
            .output()
            .await
            .unwrap(),
    );
    assert_eq!(hint.code, i32::from(exit::USAGE));
    assert!(
        hint.stderr
            .ends_with("did you mean `kubectl hecate explain staging`?\n"),
        "{}",
        hint.stderr
    );
}

#[tokio::test]
async fn reference_flags_without_a_counterpart_say_what_to_do() {
    let args = ["promote", "production", "-bundle", "b1", "-actor", "olaf"];
    let says = "hecate: there is no --actor: writes record who the cluster says you are";
    let run = output(binary(hecate_binary()).args(args).output().await.unwrap());
    assert_eq!(run.code, i32::from(exit::USAGE), "{args:?}: {run:?}");
    assert!(run.stderr.starts_with(says), "{}", run.stderr);
}
