//! The Helm chart (`charts/hecate`), checked with the real `helm` and the real API
//! server: it lints strictly, it renders with its defaults and with every option on,
//! the API server accepts both renderings (server-side dry run), it refuses what would
//! run wrong, and `deploy/` is exactly its rendering.

use std::path::{Path, PathBuf};

use hecate_testenv::{TestEnv, Tool, apply_manifest, chart};
use pretty_assertions::assert_eq;
use serde_json::Value;

fn helm() -> PathBuf {
    Tool::Helm
        .locate_or_build()
        .expect("helm, found or built once per machine")
}

/// Renders the chart into `namespace` with `values` files and `set` assignments.
fn render(namespace: &str, values: &[&Path], set: &[&str]) -> anyhow::Result<String> {
    chart::template(&helm(), namespace, values, set)
}

/// `kind/name` of every object, in order.
fn names(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {:?}", names(objects)))
}

fn container(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]["containers"][0]
}

fn args(deployment: &Value) -> Vec<&str> {
    container(deployment)["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect()
}

/// Applies `rendered` as a server-side dry run and returns what the API server would
/// have stored (defaults filled in), in order.
async fn dry_run(env: &TestEnv, rendered: &str) -> Vec<Value> {
    apply_manifest(&env.admin, rendered, true)
        .await
        .unwrap_or_else(|e| panic!("the API server refused the chart: {e:#}"))
        .into_iter()
        .map(|o| serde_json::to_value(o).unwrap())
        .collect()
}

/// What every Pod of the chart runs as: non-root, read-only root, no privileges.
fn assert_locked_down(deployment: &Value) {
    let name = &deployment["metadata"]["name"];
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true, "{name}");
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault",
        "{name}"
    );
    let security = &container(deployment)["securityContext"];
    assert_eq!(security["readOnlyRootFilesystem"], true, "{name}");
    assert_eq!(security["allowPrivilegeEscalation"], false, "{name}");
    assert_eq!(
        security["capabilities"]["drop"],
        serde_json::json!(["ALL"]),
        "{name}"
    );
}

#[test]
fn the_chart_lints_strictly_with_its_defaults_and_with_every_option() {
    let helm = helm();
    let chart = chart::chart_dir();
    let everything = chart::everything_values();
    let chart = chart.to_str().unwrap();
    for extra in [&[][..], &["--values", everything.to_str().unwrap()]] {
        let mut args = vec!["lint", "--strict", chart];
        args.extend(extra);
        let said = chart::helm(&helm, &args).unwrap_or_else(|e| panic!("{e:#}"));
        assert!(
            said.contains("1 chart(s) linted, 0 chart(s) failed"),
            "{said}"
        );
        assert!(
            !said.contains("[WARNING]") && !said.contains("[ERROR]"),
            "{said}"
        );
    }
}

#[tokio::test]
async fn the_defaults_are_accepted_by_the_api_server() {
    let env = TestEnv::new().await;
    let rendered = render(&env.namespace, &[], &[]).unwrap();
    let objects = dry_run(&env, &rendered).await;
    let mut kinds = names(&objects);
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "ClusterRole/hecate-api",
            "ClusterRole/hecate-approver",
            "ClusterRole/hecate-controller",
            "ClusterRole/hecate-flux-operator",
            "ClusterRole/hecate-poker",
            "ClusterRole/hecate-promoter",
            "ClusterRole/hecate-viewer",
            "ClusterRoleBinding/hecate-api",
            "ClusterRoleBinding/hecate-controller",
            "CustomResourceDefinition/beacons.hecate.dev",
            "CustomResourceDefinition/bundles.hecate.dev",
            "CustomResourceDefinition/gates.hecate.dev",
            "CustomResourceDefinition/passages.hecate.dev",
            "Deployment/hecate-api",
            "Deployment/hecate-controller",
            "Role/hecate-controller-leader-election",
            "RoleBinding/hecate-controller-leader-election",
            "Service/hecate-api",
            "ServiceAccount/hecate-api",
            "ServiceAccount/hecate-controller",
        ]
    );
    let controller = find(&objects, "Deployment", "hecate-controller");
    assert_eq!(controller["metadata"]["namespace"], env.namespace.as_str());
    assert_eq!(controller["spec"]["replicas"], 2);
    let controller_args = args(controller);
    for flag in ["--leader-elect", "--leader-election-id=hecate.hecate.dev"] {
        assert!(controller_args.contains(&flag), "{controller_args:?}");
    }
    assert!(
        !controller_args
            .iter()
            .any(|a| a.starts_with("--watch-label-selector") || a.starts_with("--fides-server")),
        "{controller_args:?}"
    );
    let api = find(&objects, "Deployment", "hecate-api");
    assert_eq!(
        container(api)["image"],
        format!(
            "ghcr.io/hecate-dev/hecate-api:{}",
            env!("CARGO_PKG_VERSION")
        )
    );
    for deployment in [controller, api] {
        assert_locked_down(deployment);
    }
}

#[tokio::test]
async fn every_option_is_accepted_by_the_api_server() {
    let env = TestEnv::new().await;
    let everything = chart::everything_values();
    let rendered = render(&env.namespace, &[&everything], &[]).unwrap();
    let objects = dry_run(&env, &rendered).await;

    // Leader election and sharding: the main controller takes the namespaces without
    // the shard label, each shard its own, each with a Lease of its own.
    let main = find(&objects, "Deployment", "hecate-controller");
    assert_eq!(main["spec"]["replicas"], 3);
    for (name, selector, lease) in [
        ("hecate-controller", "!hecate.dev/shard", "hecate"),
        (
            "hecate-controller-shard1",
            "hecate.dev/shard=shard1",
            "hecate-shard1",
        ),
        (
            "hecate-controller-shard2",
            "hecate.dev/shard=shard2",
            "hecate-shard2",
        ),
    ] {
        let deployment = find(&objects, "Deployment", name);
        let args = args(deployment);
        for flag in [
            "--leader-elect".to_string(),
            format!("--leader-election-id={lease}.hecate.dev"),
            "--leader-election-lease-duration=30s".to_string(),
            format!("--watch-label-selector={selector}"),
            "--fides-server=https://fides.example.com".to_string(),
            "--no-cross-namespace-refs=false".to_string(),
            "--skip-crd-check".to_string(),
        ] {
            assert!(
                args.contains(&flag.as_str()),
                "{name}: {flag} not in {args:?}"
            );
        }
        assert_eq!(
            deployment["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"], name,
            "each controller selects only its own Pods"
        );
        let env_names: Vec<&str> = container(deployment)["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert!(
            env_names.contains(&"OTEL_EXPORTER_OTLP_ENDPOINT"),
            "{env_names:?}"
        );
        assert_eq!(
            deployment["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"],
            "2Gi"
        );
        assert_locked_down(deployment);
    }

    // The API: audiences, Fides, the ingress with TLS.
    let api = find(&objects, "Deployment", "hecate-api");
    let api_args = args(api);
    for flag in [
        "--token-audience=hecate,https://kubernetes.default.svc",
        "--fides-server=https://fides.example.com",
    ] {
        assert!(api_args.contains(&flag), "{api_args:?}");
    }
    let ingress = find(&objects, "Ingress", "hecate-api");
    assert_eq!(ingress["spec"]["tls"][0]["secretName"], "hecate-tls");
    assert_eq!(
        ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"],
        "hecate-api"
    );

    // The MCP server: authenticated as each caller, answering to its Service's names
    // and the extra host, with writes (and the right to create Passages, never to
    // approve).
    let mcp = find(&objects, "Deployment", "hecate-mcp");
    let mcp_args = args(mcp);
    let hosts = format!(
        "--allowed-hosts=hecate-mcp,hecate-mcp.{ns},hecate-mcp.{ns}.svc,hecate-mcp.{ns}.svc.cluster.local,mcp.example.com",
        ns = env.namespace
    );
    for flag in [
        "--listen=0.0.0.0:8085",
        "--auth=kubernetes",
        &hosts,
        "--allowed-origins=https://agents.example.com",
        "--allow-writes",
        "--namespace=shop",
    ] {
        assert!(mcp_args.contains(&flag), "{flag} not in {mcp_args:?}");
    }
    assert_locked_down(mcp);
    find(&objects, "Service", "hecate-mcp");
    let role =
        serde_json::to_string(&find(&objects, "ClusterRole", "hecate-mcp")["rules"]).unwrap();
    assert!(role.contains("passages"), "{role}");
    assert!(
        !role.contains("bundles/status"),
        "the MCP server never approves: {role}"
    );

    // Without aggregation, the viewer role carries no aggregation label.
    let viewer = find(&objects, "ClusterRole", "hecate-viewer");
    assert!(
        viewer["metadata"]["labels"]
            .as_object()
            .unwrap()
            .keys()
            .all(|k| !k.starts_with("rbac.authorization.k8s.io/aggregate")),
        "{viewer}"
    );
}

#[test]
fn more_than_one_replica_without_leader_election_is_refused() {
    let error = render(
        "hecate-system",
        &[],
        &["controller.leaderElection.enabled=false"],
    )
    .expect_err("two replicas (the default) without leader election");
    assert!(
        format!("{error:#}")
            .contains("controller.replicas is 2 but controller.leaderElection.enabled is false"),
        "{error:#}"
    );

    // One replica without election renders, and never runs beside its successor.
    let rendered = render(
        "hecate-system",
        &[],
        &[
            "controller.leaderElection.enabled=false",
            "controller.replicas=1",
        ],
    )
    .unwrap();
    let objects = chart::objects(&rendered).unwrap();
    let controller = find(&objects, "Deployment", "hecate-controller");
    assert_eq!(controller["spec"]["strategy"]["type"], "Recreate");
    assert!(
        !args(controller)
            .iter()
            .any(|a| a.starts_with("--leader-elect"))
    );
    assert!(
        !names(&objects).iter().any(|n| n.starts_with("Role/")),
        "no Lease role without election: {:?}",
        names(&objects)
    );
}

#[test]
fn contradictory_or_malformed_sharding_is_refused() {
    for (set, says) in [
        (
            &[
                "controller.watchLabelSelector=team=a",
                "controller.sharding.shards={one}",
            ][..],
            "set one of them",
        ),
        (
            &["controller.sharding.shards={Shard_1}"],
            "is not a DNS label",
        ),
        (
            &[
                "controller.sharding.key=",
                "controller.sharding.shards={one}",
            ],
            "needs controller.sharding.key",
        ),
    ] {
        let error = render("hecate-system", &[], set).expect_err("refused");
        assert!(format!("{error:#}").contains(says), "{set:?}: {error:#}");
    }
}

#[test]
fn deploy_is_the_chart_rendered() {
    let files = chart::deploy_files(&helm()).unwrap();
    let root = chart::repo_root();
    for (path, want) in &files {
        let have = std::fs::read_to_string(root.join(path))
            .unwrap_or_else(|e| panic!("{}: {e}; run `cargo xtask manifests`", path.display()));
        assert!(
            have == *want,
            "{} differs from the chart's rendering: run `cargo xtask manifests`\n{}",
            path.display(),
            first_difference(&have, want)
        );
    }
    let mut made: Vec<&PathBuf> = files.iter().map(|(path, _)| path).collect();
    made.sort();
    let found = chart::files_in_deploy().unwrap();
    assert_eq!(
        found.iter().collect::<Vec<_>>(),
        made,
        "deploy/ holds only what the chart makes"
    );
}

/// The first line where `have` and `want` part, for the failure message.
fn first_difference(have: &str, want: &str) -> String {
    let mut want_lines = want.lines();
    for (n, line) in have.lines().enumerate() {
        match want_lines.next() {
            Some(wanted) if wanted == line => {}
            wanted => {
                return format!(
                    "line {}: the file has {line:?}, the chart makes {wanted:?}",
                    n + 1
                );
            }
        }
    }
    format!(
        "the file ends where the chart goes on with {:?}",
        want_lines.next()
    )
}

#[test]
fn the_chart_is_released_with_the_workspace() {
    let text = std::fs::read_to_string(chart::chart_dir().join("Chart.yaml")).unwrap();
    let chart: Value = serde_yaml_ng::from_str(&text).unwrap();
    assert_eq!(chart["apiVersion"], "v2");
    assert_eq!(chart["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(chart["appVersion"], env!("CARGO_PKG_VERSION"));
}
