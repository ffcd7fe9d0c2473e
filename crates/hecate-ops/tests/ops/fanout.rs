//! Fan-out's fields through a real API server (DECISION 151): the CRDs keep a Gate's
//! targets and waves and a Passage's rollout record as written — a hundred targets
//! with every bounded field full included — and refuse budgets and times no rule could
//! read.

use std::collections::BTreeMap;

use hecate_ops::rules::rollout::{self, Cluster, WaveKind};
use hecate_testenv::TestEnv;
use hecate_types::limits::{
    MAX_ACTOR_CHARS, MAX_REASON_CHARS, MAX_REASON_CODE_CHARS, MAX_REVISION_CHARS,
    MAX_ROLLOUT_MESSAGE_BYTES, MAX_TARGET_MESSAGE_BYTES, MAX_TARGET_NAME, MAX_TARGETS, MAX_WAVES,
};
use hecate_types::{
    AcceptedFailures, ClusterSecretRef, CountOrPercent, Gate, GateSpec, Health, LabelSelector,
    PassagePhase, Rollout, RolloutPhase, RolloutStatus, Target, TargetPhase, TargetStatus, Targets,
    Var, VerificationPhase, Wave, WaveTargets,
};
use kube::api::PostParams;
use pretty_assertions::assert_eq;

use crate::fixtures::*;

/// eu-1 listed with its vars, and every connected cluster labelled `tier=prod`; a
/// canary wave, then the rest a quarter at a time, one failure allowed.
fn spanning() -> GateSpec {
    let mut spec = gate_spec(&[], false);
    spec.targets = Some(Targets {
        list: vec![Target {
            name: "eu-1".into(),
            cluster_ref: Some(ClusterSecretRef {
                name: "eu-1".into(),
                key: Some("value.yaml".into()),
            }),
            vars: vec![Var {
                name: "region".into(),
                value: "eu".into(),
            }],
        }],
        selector: Some(LabelSelector {
            match_labels: BTreeMap::from([("tier".into(), "prod".into())]),
            ..LabelSelector::default()
        }),
    });
    spec.rollout = Some(Rollout {
        waves: vec![
            Wave {
                name: "canary".into(),
                targets: Some(WaveTargets {
                    names: vec!["eu-1".into()],
                    selector: None,
                }),
                min_success_time: "30m".into(),
                ..Wave::default()
            },
            Wave {
                name: "rest".into(),
                max_concurrency: Some(CountOrPercent::Text("25%".into())),
                max_failures: Some(CountOrPercent::Count(1)),
                progress_deadline: "20m".into(),
                ..Wave::default()
            },
        ],
    });
    spec
}

#[tokio::test]
async fn a_gate_spanning_targets_is_stored_as_written_and_judged() {
    let env = TestEnv::new().await;
    let spec = spanning();
    let stored = gate(&env, "production", spec.clone()).await;
    assert_eq!(stored.spec, spec);

    let prod = |name: &str| Cluster {
        name: name.into(),
        labels: BTreeMap::from([("tier".into(), "prod".into())]),
    };
    let clusters = [prod("us-1"), prod("eu-2"), prod("eu-1")];
    let span = rollout::span(&stored.spec, &clusters)
        .expect("no problem")
        .expect("targets");
    let waves: Vec<(WaveKind, Vec<String>, usize)> = span
        .plan
        .waves
        .iter()
        .map(|w| (w.kind, w.targets.clone(), w.max_concurrency))
        .collect();
    assert_eq!(
        waves,
        [
            (WaveKind::Listed, vec!["eu-1".to_string()], 1),
            (
                WaveKind::Listed,
                vec!["eu-2".to_string(), "us-1".to_string()],
                1
            ),
        ]
    );
}

#[tokio::test]
async fn a_rollout_record_at_its_bounds_is_stored() {
    let env = TestEnv::new().await;
    gate(&env, "production", spanning()).await;
    let mut crossing = passage(
        &env,
        "production-1",
        "production",
        "app-1",
        PassagePhase::Running,
    )
    .await;
    let full = |n: usize| "x".repeat(n);
    // Whole seconds: the API server keeps a time to the second.
    let at = hecate_types::Time("2026-08-11T12:00:00Z".parse().unwrap());
    let record = |i: usize| TargetStatus {
        name: format!("{}{i:03}", full(MAX_TARGET_NAME - 3)),
        wave: 9,
        phase: TargetPhase::Verifying,
        attempt: 3,
        current_step: 7,
        reason: full(MAX_REASON_CODE_CHARS),
        pushed_revision: full(MAX_REVISION_CHARS),
        applied_revision: full(MAX_REVISION_CHARS),
        health: Some(Health::Progressing),
        verification: Some(VerificationPhase::Verifying),
        started_at: Some(at.clone()),
        finished_at: None,
        departed_at: None,
        message: full(MAX_TARGET_MESSAGE_BYTES),
        steps: Vec::new(),
        // Being verified: one verification, its words at the most a target's record
        // keeps of them (DECISION 162).
        verifying: Some(hecate_types::VerificationStatus {
            phase: VerificationPhase::Verifying,
            started_at: Some(at.clone()),
            finished_at: None,
            message: full(128),
            verifiers: vec![hecate_types::VerifierStatus {
                uses: "http".into(),
                phase: VerificationPhase::Verifying,
                passes: 1,
                failures: 0,
                inconclusive: 0,
                last_value: full(128),
                last_look_at: Some(at.clone()),
                next_look_at: Some(at.clone()),
                message: full(128),
                restarts: Vec::new(),
            }],
        }),
    };
    let rollout = RolloutStatus {
        phase: RolloutPhase::Halted,
        wave: 1,
        message: full(MAX_ROLLOUT_MESSAGE_BYTES),
        targets: (0..MAX_TARGETS).map(record).collect(),
        omitted_targets: 2,
        retries_done: 10,
        acceptances_done: 10,
        crossing: full(64),
        accepted: (0..MAX_WAVES)
            .map(|_| AcceptedFailures {
                by: full(MAX_ACTOR_CHARS),
                at: at.clone(),
                reason: full(MAX_REASON_CHARS),
                targets: vec![full(MAX_TARGET_NAME); MAX_TARGETS],
            })
            .collect(),
    };
    crossing.status.as_mut().unwrap().rollout = Some(rollout.clone());
    let written = env.write_status(&crossing).await;
    assert_eq!(written.status.unwrap().rollout, Some(rollout));
}

#[tokio::test]
async fn the_api_server_refuses_what_no_rule_could_read() {
    let env = TestEnv::new().await;
    let wave = |change: fn(&mut Wave)| {
        let mut spec = spanning();
        if let Some(rollout) = spec.rollout.as_mut() {
            change(&mut rollout.waves[1]);
        }
        spec
    };
    let too_many = {
        let mut spec = spanning();
        if let Some(targets) = spec.targets.as_mut() {
            targets.list = (0..=MAX_TARGETS)
                .map(|i| Target {
                    name: format!("t-{i}"),
                    ..Target::default()
                })
                .collect();
        }
        spec
    };
    let cases: Vec<(&str, GateSpec)> = vec![
        (
            "maxFailures: half",
            wave(|w| w.max_failures = Some(CountOrPercent::Text("half".into()))),
        ),
        (
            "maxFailures: 101%",
            wave(|w| w.max_failures = Some(CountOrPercent::Text("101%".into()))),
        ),
        (
            "maxConcurrency: 12.5%",
            wave(|w| w.max_concurrency = Some(CountOrPercent::Text("12.5%".into()))),
        ),
        (
            "minSuccessTime: 5 minutes",
            wave(|w| w.min_success_time = "5 minutes".into()),
        ),
        (
            "progressDeadline: soon",
            wave(|w| w.progress_deadline = "soon".into()),
        ),
        ("a wave called Rest", wave(|w| w.name = "Rest".into())),
        ("101 listed targets", too_many),
    ];
    for (case, spec) in cases {
        let mut gate = Gate::new("refused", spec);
        gate.metadata.namespace = Some(env.namespace.clone());
        match env
            .api::<Gate>()
            .create(&PostParams::default(), &gate)
            .await
        {
            Err(kube::Error::Api(status)) => assert_eq!(status.code, 422, "{case}: {status:?}"),
            other => panic!("{case}: the API server did not refuse it: {other:?}"),
        }
    }
}

/// The test environment connects its clusters (`hecate_testenv::clusters`) in the
/// shape Settings' "connect cluster" writes, so fan-out's tests select the clusters a
/// user would have connected — and a change to one shape fails here until the other
/// follows.
#[tokio::test]
async fn the_test_environment_connects_a_cluster_as_settings_does() {
    let env = TestEnv::new().await;
    let kubeconfig = "apiVersion: v1\nkind: Config\n";
    hecate_ops::Ops::new(env.admin.clone())
        .connect_cluster(&env.namespace, "eu-1", kubeconfig, "admin")
        .await
        .unwrap();
    let written = env
        .api::<k8s_openapi::api::core::v1::Secret>()
        .get("eu-1")
        .await
        .unwrap();
    let ours = hecate_testenv::clusters::connection_secret("eu-1", kubeconfig, &[], "admin");
    assert_eq!(written.metadata.labels, ours.metadata.labels);
    assert_eq!(written.metadata.annotations, ours.metadata.annotations);
    assert_eq!(written.type_, ours.type_);
    assert_eq!(written.data, ours.data);
}

/// Settings' probe of a connected cluster follows the operator's choice on `exec`
/// kubeconfigs as the controller does (DECISION 160): with `exec` allowed, a cluster
/// whose kubeconfig gets its token from a plugin answers; by default it is said to ask
/// to run a program, naming the flag — and the plugin never runs.
#[tokio::test]
async fn settings_probe_an_exec_kubeconfig_only_where_the_operator_allows_it() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::new().await;
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let plugin = dir.path().join("token.sh");
    let token = &env.endpoint().tokens[&hecate_testenv::Identity::Admin];
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\necho run >> {}\necho '{{\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\"}}}}'\n",
            runs.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut kubeconfig: serde_json::Value = serde_yaml_ng::from_str(
        &env.endpoint()
            .kubeconfig_yaml(hecate_testenv::Identity::Admin),
    )
    .unwrap();
    for user in kubeconfig["users"].as_array_mut().unwrap() {
        user["user"] = serde_json::json!({"exec": {
            "apiVersion": "client.authentication.k8s.io/v1", "command": plugin,
        }});
    }
    let ops = hecate_ops::Ops::new(env.admin.clone());
    ops.connect_cluster(&env.namespace, "eks", &kubeconfig.to_string(), "admin")
        .await
        .unwrap();
    let probe = |ops: hecate_ops::Ops| {
        let namespaces = vec![env.namespace.clone()];
        async move {
            let identity = hecate_ops::rules::settings::SettingsIdentity {
                name: "admin".into(),
                groups: Vec::new(),
            };
            let settings = ops
                .settings(
                    &namespaces,
                    identity,
                    "test",
                    &hecate_ops::settings::Environment::default(),
                )
                .await
                .unwrap();
            let cluster = settings.clusters.into_iter().next().unwrap();
            (cluster.reachable, cluster.detail)
        }
    };

    let (reachable, detail) = probe(ops.clone()).await;
    assert!(!reachable, "{detail}");
    assert!(
        detail.contains("run a program (exec)") && detail.contains("--insecure-kubeconfig-exec"),
        "{detail}"
    );
    assert!(!runs.exists(), "refused, the plugin never ran");

    let allowed = ops.with_kubeconfig_exec(hecate_ops::kubeconfig::Exec::Allowed);
    let (reachable, detail) = probe(allowed).await;
    assert!(reachable, "{detail}");
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "run\n");
}
