//! Following a crossing while the test plays the controller, and redrawing status.

use std::time::Duration;

use hecate_cli::exit;
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Passage, PassagePhase, PassageStatus, StepPhase, StepStatus};
use pretty_assertions::assert_eq;
use tokio::io::AsyncReadExt as _;

use crate::harness::*;

/// Plays the controller: once the Passage exists, settles its steps one by one and
/// then ends it in `phase`.
async fn play_controller(env: &TestEnv, name: &str, phase: PassagePhase, message: &str) {
    let api = env.api::<Passage>();
    let mut passage = loop {
        if let Some(passage) = api.get_opt(name).await.unwrap() {
            break passage;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let step = |uses: &str, phase: StepPhase, message: &str| StepStatus {
        uses: uses.into(),
        phase,
        message: message.into(),
        ..StepStatus::default()
    };
    let last = if phase == PassagePhase::Succeeded {
        StepPhase::Succeeded
    } else {
        StepPhase::Failed
    };
    let stages = [
        vec![
            step("git-push", StepPhase::Running, "pushing"),
            step("flux-wait", StepPhase::Pending, ""),
        ],
        vec![
            step("git-push", StepPhase::Succeeded, "pushed 1a2b3c"),
            step("flux-wait", StepPhase::Running, "waiting for Flux"),
        ],
        vec![
            step("git-push", StepPhase::Succeeded, "pushed 1a2b3c"),
            step("flux-wait", last, message),
        ],
    ];
    for (i, steps) in stages.into_iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let phase = if i == 2 { phase } else { PassagePhase::Running };
        passage.status = Some(PassageStatus {
            phase: Some(phase),
            message: message.into(),
            steps,
            ..PassageStatus::default()
        });
        passage = env.write_status(&passage).await;
    }
}

async fn watch_to(phase: PassagePhase, message: &str) -> Run {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "staging", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    let child = hecate
        .command(
            Identity::Bob,
            &[
                "promote",
                "staging",
                "--bundle",
                "b1",
                "--watch",
                "--timeout",
                "60s",
            ],
        )
        .spawn()
        .unwrap();
    let (out, ()) = tokio::join!(
        child.wait_with_output(),
        play_controller(&env, "staging-1", phase, message)
    );
    output(out.unwrap())
}

#[tokio::test]
async fn a_crossing_that_lands_exits_0() {
    let run = watch_to(PassagePhase::Succeeded, "Flux applied it").await;
    assert_eq!(run.code, i32::from(exit::OK), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "crossing b1 through staging as staging-1");
    assert_eq!(lines[1], "  git-push         Succeeded  pushed 1a2b3c");
    assert_eq!(lines[2], "  flux-wait        Succeeded  Flux applied it");
    assert_eq!(lines.last(), Some(&"b1 crossed staging"));
    assert!(
        !run.stdout.contains("waiting for Flux"),
        "a running step is not announced"
    );
}

#[tokio::test]
async fn a_crossing_that_fails_exits_6() {
    let run = watch_to(PassagePhase::Failed, "the cluster said no").await;
    assert_eq!(run.code, i32::from(exit::CROSSING_FAILED), "{run:?}");
    assert!(
        run.stdout
            .contains("  flux-wait        Failed     the cluster said no"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("b1 did not cross staging: the cluster said no"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("hecate explain staging -n "),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn an_aborted_crossing_exits_6() {
    let run = watch_to(PassagePhase::Aborted, "aborted").await;
    assert_eq!(run.code, i32::from(exit::CROSSING_FAILED), "{run:?}");
    assert!(
        run.stdout.contains("aborted crossing b1 through staging"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn a_timeout_exits_2() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "staging", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    let run = hecate
        .run(
            Identity::Bob,
            &[
                "promote",
                "staging",
                "--bundle",
                "b1",
                "--watch",
                "--timeout",
                "1s",
            ],
        )
        .await;
    assert_eq!(run.code, i32::from(exit::COULD_NOT_TELL), "{run:?}");
    assert!(
        run.stdout.contains("still crossing after 1s: staging-1"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn a_vanished_passage_exits_2() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "staging", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    let child = hecate
        .command(
            Identity::Bob,
            &[
                "promote",
                "staging",
                "--bundle",
                "b1",
                "--watch",
                "--timeout",
                "60s",
            ],
        )
        .spawn()
        .unwrap();
    let collect = async {
        let api = env.api::<Passage>();
        while api.get_opt("staging-1").await.unwrap().is_none() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        api.delete("staging-1", &Default::default()).await.unwrap();
    };
    let (out, ()) = tokio::join!(child.wait_with_output(), collect);
    let run = output(out.unwrap());
    assert_eq!(run.code, i32::from(exit::COULD_NOT_TELL), "{run:?}");
    assert!(run.stderr.contains("collected"), "{}", run.stderr);
}

#[tokio::test]
async fn status_watch_redraws_when_something_changes() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "dev", gate_spec(&[], false)).await;
    let mut child = hecate
        .command(Identity::Alice, &["status", "--watch"])
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = String::new();
    let mut buffer = [0u8; 4096];
    let read_until = |needle: &'static str| {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        (needle, deadline)
    };
    for (step, (needle, deadline)) in [
        read_until("no Bundle from any admitted Beacon"),
        read_until("ready to cross"),
    ]
    .into_iter()
    .enumerate()
    {
        if step == 1 {
            bundle(&env, "b1").await;
        }
        while !seen.contains(needle) {
            let n = tokio::time::timeout_at(deadline, stdout.read(&mut buffer))
                .await
                .expect("status --watch redrew in time")
                .unwrap();
            assert!(n > 0, "status --watch ended early: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    }
    // Ctrl-C ends watching the status, and that is a success.
    interrupt(&child);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("status --watch stopped on Ctrl-C")
        .unwrap();
    assert_eq!(status.code(), Some(i32::from(exit::OK)), "{status:?}");
    assert_eq!(
        seen.matches("GATE").count(),
        2,
        "drawn once, then once more after the change: {seen}"
    );
}

/// Sends SIGINT (Ctrl-C) to `child`.
fn interrupt(child: &tokio::process::Child) {
    let pid = child.id().expect("still running").to_string();
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(status.success(), "kill -INT {pid}");
}

/// CLI #27: Ctrl-C while following a crossing stops the watching, not the crossing: it
/// says so, names the Passage still crossing, and exits 2 (we can no longer tell how
/// it ends). The Passage is untouched.
#[tokio::test]
async fn cli27_ctrl_c_stops_watching_not_the_crossing() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "staging", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    let mut child = hecate
        .command(
            Identity::Bob,
            &[
                "promote",
                "staging",
                "--bundle",
                "b1",
                "--watch",
                "--timeout",
                "60s",
            ],
        )
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = String::new();
    let mut buffer = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !seen.contains("crossing b1 through staging as staging-1\n") {
        let n = tokio::time::timeout_at(deadline, stdout.read(&mut buffer))
            .await
            .expect("the promote line in time")
            .unwrap();
        assert!(n > 0, "promote --watch ended early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
    }
    interrupt(&child);
    let rest = async {
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).await.unwrap();
        (child.wait().await.unwrap(), rest)
    };
    let (status, rest) = tokio::time::timeout(Duration::from_secs(10), rest)
        .await
        .expect("promote --watch stopped on Ctrl-C");
    seen.push_str(&rest);
    assert_eq!(
        status.code(),
        Some(i32::from(exit::COULD_NOT_TELL)),
        "{status:?}: {seen}"
    );
    assert_eq!(
        seen,
        "crossing b1 through staging as staging-1\n\nstopped watching; staging-1 is still crossing\n"
    );
    let passage = env.api::<Passage>().get("staging-1").await.unwrap();
    assert!(!passage.spec.abort, "stopping the watch does not abort");
}

/// Issue #20: `status --watch` redraws when time alone changes the status, with no
/// change in the cluster: a Passage still `Pending` is "about to start" until two
/// minutes after its creation, then it has not started (`NotStarted`). ops says when
/// that is; the Passage here was created (by its `hecate.dev/created-at`) a little
/// under two minutes ago, so the redraw comes within seconds — and nothing in the
/// cluster changes meanwhile.
#[tokio::test]
async fn status_watch_redraws_when_a_crossing_passes_its_start_threshold() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "staging", gate_spec(&[], false)).await;
    bundle(&env, "b1").await;
    let created = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(110);
    let mut pending = Passage::new(
        "staging-1",
        hecate_types::PassageSpec {
            gate: "staging".into(),
            bundle: "b1".into(),
            steps: vec![hecate_types::Step {
                uses: "flux-wait".into(),
                ..hecate_types::Step::default()
            }],
            ..hecate_types::PassageSpec::default()
        },
    );
    pending.metadata.annotations = Some(
        [(
            hecate_types::wellknown::ANNOTATION_CREATED_AT.to_string(),
            created.to_string(),
        )]
        .into(),
    );
    env.create(pending).await;

    let mut child = hecate
        .command(Identity::Alice, &["status", "--watch"])
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = String::new();
    let mut buffer = [0u8; 4096];
    // The stall comes 120 s after creation: about 10 s from now.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(25);
    for needle in ["staging-1 is about to start", "staging-1 has not started"] {
        while !seen.contains(needle) {
            let n = tokio::time::timeout_at(deadline, stdout.read(&mut buffer))
                .await
                .unwrap_or_else(|_| panic!("no {needle:?} in time: {seen}"))
                .unwrap();
            assert!(n > 0, "status --watch ended early: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    }
    let redrawn_after = jiff::Timestamp::now().duration_since(created);
    interrupt(&child);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("status --watch stopped on Ctrl-C")
        .unwrap();
    assert_eq!(status.code(), Some(i32::from(exit::OK)), "{status:?}");
    assert_eq!(
        seen.matches("GATE").count(),
        2,
        "drawn once, then once more when the threshold passed: {seen}"
    );
    assert!(
        redrawn_after >= hecate_ops::rules::explain::STALL_AFTER,
        "not before the threshold: {redrawn_after:?}"
    );
    let first = &seen[..seen.rfind("GATE").unwrap()];
    assert!(!first.contains("has not started"), "{seen}");
    let passage = env.api::<Passage>().get("staging-1").await.unwrap();
    assert_eq!(passage.status, None, "nothing in the cluster changed");
}
