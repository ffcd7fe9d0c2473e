//! The manifests in `deploy/` are accepted by a real API server (server-side dry run:
//! only the Namespace is created for real, since namespaced objects need it to exist).

use hecate_testenv::{TestEnv, apply_manifest};

#[tokio::test]
async fn the_manifests_are_accepted() {
    let env = TestEnv::new().await;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy");
    let server = std::fs::read_to_string(root.join("hecate-api/hecate-api.yaml")).unwrap();
    let namespace = server
        .split("\n---\n")
        .find(|d| d.contains("kind: Namespace"))
        .unwrap();
    apply_manifest(&env.admin, namespace, false).await.unwrap();
    let mut applied = 0;
    for file in ["rbac/user-roles.yaml", "hecate-api/hecate-api.yaml"] {
        let yaml = std::fs::read_to_string(root.join(file)).unwrap();
        applied += apply_manifest(&env.admin, &yaml, true)
            .await
            .unwrap_or_else(|e| panic!("{file}: {e:#}"))
            .len();
    }
    // Six user roles (viewer, promoter, approver, poker, flux-operator,
    // notifier-editor) and the server's seven objects (Namespace, ServiceAccount,
    // ClusterRole and its binding, PodDisruptionBudget, Service, Deployment).
    assert_eq!(applied, 6 + 7, "every object of both files");
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::namespaced(env.admin.clone(), "hecate-system");
    assert!(
        deployments.get_opt("hecate-api").await.unwrap().is_none(),
        "a dry run writes nothing"
    );
}

/// The chart starts the server — with its defaults, and with every option on — with
/// flags it takes, listening on every interface at the port its Service targets.
#[test]
fn the_chart_starts_the_server_with_flags_it_takes() {
    use clap::Parser as _;
    use hecate_testenv::{Tool, chart};

    let helm = Tool::Helm.locate_or_build().unwrap();
    let everything = chart::everything_values();
    for values in [&[][..], &[everything.as_path()]] {
        let rendered = chart::template(&helm, "hecate-system", values, &[]).unwrap();
        let args = chart::container_args(&rendered, "hecate-api").unwrap();
        let parsed = hecate_api::Args::try_parse_from(
            std::iter::once("hecate-api".to_string()).chain(args.iter().cloned()),
        )
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(parsed.addr, "0.0.0.0:8080".parse().unwrap(), "{args:?}");
    }
}
