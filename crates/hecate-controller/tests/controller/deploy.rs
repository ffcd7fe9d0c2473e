//! `deploy/hecate-controller/` is accepted by a real API server (server-side dry run;
//! only the Namespace is created for real, since namespaced objects need it).

use hecate_testenv::{TestEnv, apply_manifest, rbac::CONTROLLER_MANIFEST};

#[tokio::test]
async fn the_manifest_is_accepted_and_runs_locked_down() {
    let env = TestEnv::new().await;
    let namespace = CONTROLLER_MANIFEST
        .split("\n---\n")
        .find(|d| d.contains("kind: Namespace"))
        .unwrap();
    apply_manifest(&env.admin, namespace, false).await.unwrap();
    let applied = apply_manifest(&env.admin, CONTROLLER_MANIFEST, true)
        .await
        .unwrap_or_else(|e| panic!("deploy/hecate-controller: {e:#}"));
    // Namespace, ServiceAccount, ClusterRole and its binding, the Lease Role and its
    // binding, PodDisruptionBudget, metrics Service, Deployment.
    assert_eq!(applied.len(), 9, "every object: {applied:?}");
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::namespaced(env.admin.clone(), "hecate-system");
    assert!(
        deployments
            .get_opt("hecate-controller")
            .await
            .unwrap()
            .is_none(),
        "a dry run writes nothing"
    );
    // What the issue asks of the Pod: non-root, read-only root, probes.
    for needle in [
        "runAsNonRoot: true",
        "readOnlyRootFilesystem: true",
        "path: /healthz",
        "path: /readyz",
        "--leader-elect",
    ] {
        assert!(CONTROLLER_MANIFEST.contains(needle), "{needle}");
    }
}

/// Every controller the chart starts — with its defaults, and with every option on
/// (leader election, shards, Fides, unrestricted renders, local git and HTTP, a larger
/// clone limit, extra flags) — is started with flags this binary takes.
#[test]
fn the_chart_starts_the_controller_with_flags_it_takes() {
    use clap::Parser as _;
    use hecate_testenv::{Tool, chart};

    let helm = Tool::Helm.locate_or_build().unwrap();
    let everything = chart::everything_values();
    for (values, deployments, unrestricted) in [
        (&[][..], &["hecate-controller"][..], false),
        (
            &[everything.as_path()],
            &[
                "hecate-controller",
                "hecate-controller-shard1",
                "hecate-controller-shard2",
            ],
            true,
        ),
    ] {
        let rendered = chart::template(&helm, "hecate-system", values, &[]).unwrap();
        for name in deployments {
            let args = chart::container_args(&rendered, name).unwrap();
            let parsed = hecate_controller::Args::try_parse_from(
                std::iter::once("hecate-controller".to_string()).chain(args.iter().cloned()),
            )
            .unwrap_or_else(|e| panic!("{name} {args:?}: {e}"));
            assert!(parsed.leader_elect, "{name}: {args:?}");
            assert_eq!(parsed.work_root, std::path::Path::new("/work"));
            assert_eq!(
                parsed.allow_kustomize_load_restrictions_none, unrestricted,
                "{name}: {args:?}"
            );
            // What steps may reach: the flags' defaults, or everything on.
            assert_eq!(
                (parsed.allow_local_git, parsed.allow_local_http),
                (unrestricted, unrestricted),
                "{name}: {args:?}"
            );
            let limit: u64 = if unrestricted { 1 << 30 } else { 512 << 20 };
            assert_eq!(parsed.max_checkout_size, limit, "{name}: {args:?}");
        }
    }
}
