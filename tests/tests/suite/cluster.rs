//! The local cluster's own parts: each pinned program builds (a pin that no longer
//! builds fails here, loudly) and still takes the flags it is started with; and the
//! cluster runs workloads — a Deployment gets its ReplicaSet, its pods scheduled onto
//! kwok's node and reported Ready — with Flux's CRDs served.

use std::process::Command;
use std::time::{Duration, Instant};

use hecate_testenv::{Binaries, TestEnv, programs};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, PostParams};

/// The flags each program is started with by the test environment (`cluster.rs`).
fn flags_we_pass(name: &str) -> &'static [&'static str] {
    match name {
        "kwok" => &[
            "--kubeconfig",
            "--config",
            "--manage-nodes-with-annotation-selector",
            "--node-lease-duration-seconds",
            "--cidr",
            "--node-ip",
            "--server-address",
        ],
        "source-controller" => &[
            "--watch-all-namespaces",
            "--watch-label-selector",
            "--enable-leader-election",
            "--metrics-addr",
            "--health-addr",
            "--log-encoding",
            "--storage-path",
            "--storage-addr",
            "--storage-adv-addr",
        ],
        "kustomize-controller" => &[
            "--watch-all-namespaces",
            "--watch-label-selector",
            "--enable-leader-election",
            "--metrics-addr",
            "--health-addr",
            "--log-encoding",
        ],
        _ => &[],
    }
}

fn help(binary: &std::path::Path) -> String {
    let output = Command::new(binary).arg("--help").output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn every_pinned_program_builds_and_takes_the_flags_it_is_given() {
    for program in programs::ALL {
        let built = program.locate_or_build().unwrap_or_else(|e| {
            panic!(
                "{} {} no longer builds: {e:#}",
                program.name, program.version
            )
        });
        let help = help(&built.binary);
        for flag in flags_we_pass(program.name) {
            assert!(
                help.contains(flag),
                "{} {} no longer takes {flag}:\n{help}",
                program.name,
                program.version
            );
        }
        for file in program.keep {
            assert!(built.file(file).is_file(), "{} lacks {file}", program.name);
        }
    }
    let binaries = Binaries::locate_or_build()
        .unwrap()
        .with_workloads()
        .unwrap();
    for (binary, flags) in [
        (
            &binaries.kube_controller_manager,
            &[
                "--kubeconfig",
                "--secure-port",
                "--leader-elect",
                "--root-ca-file",
            ][..],
        ),
        (
            &binaries.kube_scheduler,
            &["--kubeconfig", "--secure-port", "--leader-elect"][..],
        ),
    ] {
        let help = help(binary);
        for flag in flags {
            assert!(
                help.contains(flag),
                "{} no longer takes {flag}",
                binary.display()
            );
        }
    }
}

#[tokio::test]
async fn a_deployment_runs_on_the_simulated_node() {
    let env = TestEnv::with_flux().await;
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }))
    .unwrap();
    let api: Api<Deployment> = env.api();
    api.create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = api.get("web").await.unwrap().status.unwrap_or_default();
        if status.available_replicas == Some(3) && status.ready_replicas == Some(3) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "web never became available: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pods: Api<Pod> = env.api();
    let pods = pods
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap()
        .items;
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(
            spec.node_name.as_deref(),
            Some(hecate_testenv::NODE),
            "scheduled by kube-scheduler"
        );
        let status = pod.status.as_ref().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert!(pod.metadata.owner_references.as_ref().unwrap()[0].kind == "ReplicaSet");
    }

    // Flux's own CRDs are served there.
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(env.admin.clone());
    for name in [
        "gitrepositories.source.toolkit.fluxcd.io",
        "kustomizations.kustomize.toolkit.fluxcd.io",
    ] {
        let crd = crds.get(name).await.unwrap();
        assert!(
            crd.metadata
                .annotations
                .unwrap_or_default()
                .contains_key("controller-gen.kubebuilder.io/version"),
            "{name} is Flux's own CRD, not a stand-in"
        );
    }
}
