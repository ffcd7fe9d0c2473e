//! kubectl's `-o name`, `-o wide` and `-o jsonpath=…` on the lists, the single
//! answers and the writes, against a real API server: exactly what each prints. A
//! template that cannot work is a usage error before any request.

use hecate_cli::exit;
use hecate_testenv::{Identity, TestEnv};
use hecate_types::{Beacon, BeaconSpec, GateStatus, ImageWatch, PassagePhase, Time, WatchSource};
use pretty_assertions::assert_eq;

use crate::harness::*;

/// The objects the read tests look at: Gates `dev` (crossing) → `production`
/// (approval required, b1 eligible), Bundles `b1` (cleared dev, approved for production by carol) and `b2`
/// (newer), Passages `dev-0` (failed after 90 s) and `dev-1` (moving b2 into dev),
/// and Beacon `app`.
async fn pipeline(env: &TestEnv) {
    let mut dev = gate(env, "dev", gate_spec(&[], false)).await;
    dev.status = Some(GateStatus {
        active_passage: "dev-1".into(),
        ..GateStatus::default()
    });
    env.write_status(&dev).await;
    let mut production = gate(env, "production", gate_spec(&["dev"], true)).await;
    production.status = Some(GateStatus {
        eligible: vec!["b1".into()],
        ..GateStatus::default()
    });
    env.write_status(&production).await;
    let created = bundles_in_order(env, &["b1", "b2"]).await;
    if let Some(b1) = created.into_iter().next() {
        bundle_status(env, b1, &["dev"], &[("production", "carol")]).await;
    }
    let mut failed = passage(env, "dev-0", "dev", "b1", PassagePhase::Failed).await;
    if let Some(status) = failed.status.as_mut() {
        let started = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(10);
        status.started_at = Some(Time(started));
        status.finished_at = Some(Time(started + jiff::SignedDuration::from_secs(90)));
    }
    env.write_status(&failed).await;
    passage(env, "dev-1", "dev", "b2", PassagePhase::Running).await;
    let spec = BeaconSpec {
        watch: vec![WatchSource {
            image: Some(ImageWatch {
                repo: "ghcr.io/acme/app".into(),
                ..ImageWatch::default()
            }),
            ..WatchSource::default()
        }],
        ..BeaconSpec::default()
    };
    env.create(Beacon::new("app", spec)).await;
}

/// `table` with the cells of its AGE column (times since creation, which tick while
/// the test runs) as `~`, the layout otherwise as printed. Ages are under 100 s
/// here, so the column is as wide as its header.
fn ages_masked(table: &str) -> String {
    let mut lines = table.lines();
    let header: Vec<char> = lines.next().unwrap_or_default().chars().collect();
    let text: String = header.iter().collect();
    let start = text.find(" AGE").map(|i| i + 1).expect("an AGE column");
    let mut out = format!("{text}\n");
    for line in lines {
        let mut chars: Vec<char> = line.chars().collect();
        // The last column's cells are not padded.
        let end = start + 3;
        if chars.len() < end {
            chars.resize(end, ' ');
        }
        let age: String = chars[start..end].iter().collect();
        let age = age.trim_end();
        assert!(
            age == "-" || (age.ends_with('s') && age[..age.len() - 1].parse::<u64>().is_ok()),
            "{age:?} is not an age in {line:?}"
        );
        for c in &mut chars[start..end] {
            *c = '~';
        }
        out.push_str(chars.iter().collect::<String>().trim_end());
        out.push('\n');
    }
    out
}

/// What `hecate <args>` prints as Alice, who may read everything; it must succeed.
async fn out(hecate: &Hecate, args: &[&str]) -> String {
    let run = hecate.run(Identity::Alice, args).await;
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (0, ""),
        "{args:?}: {run:?}"
    );
    run.stdout
}

#[tokio::test]
async fn output_formats_on_reads() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    pipeline(&env).await;
    let run = |args| out(&hecate, args);

    // -o name: kind.group/name, one a line, in the table's order.
    for (args, names) in [
        (
            &["gates", "-o", "name"][..],
            "gate.hecate.dev/dev\ngate.hecate.dev/production\n",
        ),
        (
            &["status", "-o", "name"],
            "gate.hecate.dev/dev\ngate.hecate.dev/production\n",
        ),
        (
            &["explain", "production", "-o", "name"],
            "gate.hecate.dev/production\n",
        ),
        (
            &["bundles", "-o", "name"],
            "bundle.hecate.dev/b2\nbundle.hecate.dev/b1\n",
        ),
        (
            &["passages", "-o", "name"],
            "passage.hecate.dev/dev-1\npassage.hecate.dev/dev-0\n",
        ),
        (&["passages", "--gate", "production", "-o", "name"], ""),
        (&["beacons", "-o", "name"], "beacon.hecate.dev/app\n"),
    ] {
        assert_eq!(run(args).await, names, "{args:?}");
    }

    // -o jsonpath: the template over the JSON value, a list being `.items`; exactly
    // what it prints, with no newline of its own.
    for (args, printed) in [
        (
            &["gates", "-o", "jsonpath={.items[*].metadata.name}"][..],
            "dev production",
        ),
        (
            &[
                "gates",
                "-o",
                "jsonpath={range .items[*]}{.metadata.name}{\"\\t\"}{.stage.index}{\"\\n\"}{end}",
            ],
            "dev\t0\nproduction\t1\n",
        ),
        (
            &[
                "gates",
                "-o",
                "jsonpath=first {.items[0].metadata.name}, then {.items[-1].metadata.name}",
            ],
            "first dev, then production",
        ),
        (&["gates", "-o", "jsonpath={.items[*].nothing}"], ""),
        (
            &["bundles", "-o", "jsonpath={.items[0].metadata.name}"],
            "b2",
        ),
        (
            &[
                "bundles",
                "-o",
                "jsonpath={.items[*].status.cleared[*].gate}",
            ],
            "dev",
        ),
        (
            &[
                "passages",
                "-o",
                "jsonpath={.items[?(@.status.phase==\"Failed\")].metadata.name}",
            ],
            "dev-0",
        ),
        (
            &[
                "status",
                "-o",
                "jsonpath={range .items[*]}{.gate}={.state}{\"\\n\"}{end}",
            ],
            "dev=Crossing\nproduction=Ready\n",
        ),
        (
            &[
                "explain",
                "dev",
                "-o",
                "jsonpath={.gate} {.crossing.passage}",
            ],
            "dev dev-1",
        ),
        (
            &[
                "beacons",
                "-o",
                "jsonpath={.items[0].spec.watch[0].image.repo}",
            ],
            "ghcr.io/acme/app",
        ),
        (
            &["beacons", "--output=jsonpath={.items[*].metadata.name}"],
            "app",
        ),
    ] {
        assert_eq!(run(args).await, printed, "{args:?}");
    }

    // -o wide: the table and the columns it leaves out, nothing cut.
    assert_eq!(
        run(&["status", "-o", "wide"]).await,
        "\
GATE        STATE     CURRENT  VERSION  HEALTH   ELIGIBLE  CROSSING  BLOCKERS         SUMMARY
dev         Crossing  -        -        Unknown  1         dev-1     -                crossing b2
production  Ready     -        -        Unknown  1         -         AwaitingRequest  1 Bundle ready to cross; this Gate crosses only when asked
"
    );
    assert_eq!(
        ages_masked(&run(&["gates", "-o", "wide"]).await),
        "\
NAME        STAGE  ADMITS                    AUTO  CURRENT  HEALTH  AGE  STEPS               CROSSING  ELIGIBLE  WINDOWS
dev         0      app                       no    -        -       ~~~  git-push,flux-wait  dev-1     0         0
production  1      app after dev (approval)  no    -        -       ~~~  git-push,flux-wait  -         1         0
"
    );
    assert_eq!(
        ages_masked(&run(&["bundles", "-o", "wide"]).await),
        "\
NAME  BEACON  VERSION  AGE  ARTIFACTS               CLEARED  APPROVED             BLOCKED  AUTHOR  SUBJECT
b2    app     1.0.0    ~~~  ghcr.io/acme/app:1.0.0  -        -                    -        -       -
b1    app     1.0.0    ~~~  ghcr.io/acme/app:1.0.0  dev      production by carol  -        -       -
"
    );
    assert_eq!(
        ages_masked(&run(&["passages", "-o", "wide"]).await),
        "\
NAME   GATE  BUNDLE  VERSION  PHASE    ACTOR  AGE  VERIFIED  STEP           DURATION  MESSAGE
dev-1  dev   b2      1.0.0    Running  -      ~~~  -         -              -         Running
dev-0  dev   b1      1.0.0    Failed   -      ~~~  -         1/1 flux-wait  90s       Failed
"
    );
    assert_eq!(
        ages_masked(&run(&["beacons", "-o", "wide"]).await),
        "\
NAME  WATCHES           LATEST  READY  AGE  INTERVAL  POLLED  SUSPENDED  MESSAGE
app   ghcr.io/acme/app  -       -      ~~~  5m        -       no
"
    );
    // The plain table is the wide one without its extra columns.
    assert_eq!(
        ages_masked(&run(&["passages"]).await),
        "\
NAME   GATE  BUNDLE  VERSION  PHASE    ACTOR  AGE  VERIFIED
dev-1  dev   b2      1.0.0    Running  -      ~~~  -
dev-0  dev   b1      1.0.0    Failed   -      ~~~  -
"
    );
    // Text that is no table is the same wide.
    assert_eq!(
        run(&["explain", "production", "-o", "wide"]).await,
        run(&["explain", "production"]).await
    );
}

#[tokio::test]
async fn output_formats_on_writes() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    gate(&env, "dev", gate_spec(&[], false)).await;
    gate(&env, "production", gate_spec(&[], true)).await;
    bundle(&env, "b1").await;
    let spec = BeaconSpec {
        watch: vec![WatchSource {
            image: Some(ImageWatch {
                repo: "ghcr.io/acme/app".into(),
                ..ImageWatch::default()
            }),
            ..WatchSource::default()
        }],
        ..BeaconSpec::default()
    };
    env.create(Beacon::new("app", spec)).await;
    let write = |who, args| {
        let hecate = &hecate;
        async move {
            let run = hecate.run(who, args).await;
            assert_eq!(
                (run.code, run.stderr.as_str()),
                (0, ""),
                "{args:?}: {run:?}"
            );
            run.stdout
        }
    };

    // Each write names what it wrote: the Passage it created or asked to stop, the
    // Bundle the approval is on, the Beacon asked to look.
    assert_eq!(
        write(
            Identity::Bob,
            &["promote", "dev", "--bundle", "b1", "-o", "name"]
        )
        .await,
        "passage.hecate.dev/dev-1\n"
    );
    assert_eq!(
        write(Identity::Bob, &["abort", "dev-1", "-o", "name"]).await,
        "passage.hecate.dev/dev-1\n"
    );
    assert_eq!(
        write(
            Identity::Carol,
            &["approve", "b1", "--gate", "production", "-o", "name"]
        )
        .await,
        "bundle.hecate.dev/b1\n"
    );
    assert_eq!(
        write(Identity::Alice, &["poll", "app", "-o", "name"]).await,
        "beacon.hecate.dev/app\n"
    );
    // A template over the write's JSON answer; wide is its line.
    assert_eq!(
        write(
            Identity::Alice,
            &[
                "approve",
                "b1",
                "--gate",
                "production",
                "-o",
                "jsonpath={.action}: {.bundle} for {.gate} by {.approvedBy}, recorded now: {.recorded}",
            ]
        )
        .await,
        "approve: b1 for production by carol, recorded now: false"
    );
    assert_eq!(
        write(
            Identity::Alice,
            &["approve", "b1", "--gate", "production", "-o", "wide"]
        )
        .await,
        "b1 was already approved for production by carol\n"
    );
}

/// A kubeconfig whose cluster does not answer: a command that reached for it would
/// exit 2, not 1.
fn unreachable_kubeconfig(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n\
         users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
    )
    .unwrap();
    kubeconfig
}

#[tokio::test]
async fn output_formats_refused_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = unreachable_kubeconfig(&dir);
    for (args, stderr) in [
        (
            &["gates", "-o", "jsonpath={.items[*"][..],
            "error: invalid value 'jsonpath={.items[*' for '--output <FORMAT>': not a JSONPath \
             template: unterminated array: the [ at character 8 has no ]",
        ),
        (
            &["status", "-o", "jsonpath={range .items[*]}{.gate}"],
            "error: invalid value 'jsonpath={range .items[*]}{.gate}' for '--output <FORMAT>': \
             not a JSONPath template: {range} without its {end}",
        ),
        (
            &["bundles", "--output=jsonpath={.items[?(@.a=~\"x\")]}"],
            "error: invalid value 'jsonpath={.items[?(@.a=~\"x\")]}' for '--output <FORMAT>': \
             not a JSONPath template: unrecognized filter operator =~ at character 8: use ==, !=, \
             <, >, <= or >=",
        ),
        (
            &["gates", "-o", "jsonpath="],
            "error: invalid value 'jsonpath=' for '--output <FORMAT>': jsonpath needs its \
             template, as in -o jsonpath='{.items[*].metadata.name}'",
        ),
        (
            &["audit", "-o", "name"],
            "error: invalid value 'name' for '--output <FORMAT>': this command's answer is a \
             report, not objects, so it has no names to print: use -o json, -o yaml or -o \
             jsonpath=TEMPLATE",
        ),
        (
            &["gates", "-o", "toml"],
            "error: invalid value 'toml' for '--output <FORMAT>': the formats are table, wide, \
             json, yaml, name, jsonpath=TEMPLATE",
        ),
    ] {
        let run = output(
            binary(std::path::Path::new(env!("CARGO_BIN_EXE_hecate")))
                .args(args)
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .output()
                .await
                .unwrap(),
        );
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (
                i32::from(exit::USAGE),
                "",
                format!("{stderr}\n\nFor more information, try '--help'.\n").as_str()
            ),
            "{args:?}"
        );
    }
}

#[tokio::test]
async fn output_formats_a_template_that_does_not_fit_is_a_usage_error() {
    let env = TestEnv::new().await;
    let hecate = Hecate::new(&env).await;
    let run = hecate
        .run(
            Identity::Alice,
            &["bundles", "-o", "jsonpath={.items[0].metadata.name}"],
        )
        .await;
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            i32::from(exit::USAGE),
            "",
            "hecate: the JSONPath template does not fit the answer: array index out of bounds: \
             index 0, length 0\n"
        )
    );
    // As in kubectl, what is missing prints nothing; an empty list is an empty `.items`.
    let run = hecate
        .run(
            Identity::Alice,
            &["bundles", "-o", "jsonpath={.items[*].metadata.name}"],
        )
        .await;
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    let run = hecate
        .run(Identity::Alice, &["bundles", "-o", "name"])
        .await;
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
}
