//! The Helm chart (`charts/hecate`), checked with the real `helm` and the real API
//! server: it lints strictly, it renders with its defaults and with every option on,
//! the API server accepts both renderings (server-side dry run), it refuses what would
//! run wrong, and `deploy/` is exactly its rendering.

use std::path::{Path, PathBuf};

use hecate_testenv::{
    Binaries, ControlPlane, Identity, Lifetime, Parts, TestEnv, Tool, apply_manifest, chart,
    fixtures, install_crd_files, programs::PROMETHEUS_OPERATOR_CRDS,
};
use hecate_types::Gate;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::Api;
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
            "ClusterRole/hecate-notifier-editor",
            "ClusterRole/hecate-poker",
            "ClusterRole/hecate-promoter",
            "ClusterRole/hecate-viewer",
            "ClusterRoleBinding/hecate-api",
            "ClusterRoleBinding/hecate-controller",
            "CustomResourceDefinition/beacons.hecate.dev",
            "CustomResourceDefinition/bundles.hecate.dev",
            "CustomResourceDefinition/gates.hecate.dev",
            "CustomResourceDefinition/notifiers.hecate.dev",
            "CustomResourceDefinition/passages.hecate.dev",
            "Deployment/hecate-api",
            "Deployment/hecate-controller",
            "PodDisruptionBudget/hecate-api",
            "PodDisruptionBudget/hecate-controller",
            "Role/hecate-controller-leader-election",
            "RoleBinding/hecate-controller-leader-election",
            "Service/hecate-api",
            "Service/hecate-controller-metrics",
            "ServiceAccount/hecate-api",
            "ServiceAccount/hecate-controller",
            "ValidatingAdmissionPolicy/hecate-records",
            "ValidatingAdmissionPolicyBinding/hecate-records",
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
    // The ServiceMonitor is judged by the Prometheus Operator's own CRD.
    let monitoring = tokio::task::spawn_blocking(|| PROMETHEUS_OPERATOR_CRDS.locate_or_download())
        .await
        .unwrap()
        .expect("the Prometheus Operator's CRDs");
    install_crd_files(&env.admin, &monitoring).await.unwrap();
    let objects = dry_run(&env, &rendered).await;

    // Prometheus finds every controller's metrics (each shard's too) through one
    // Service and its ServiceMonitor.
    let metrics = find(&objects, "Service", "hecate-controller-metrics");
    assert_eq!(
        metrics["spec"]["selector"]["app.kubernetes.io/component"],
        "controller"
    );
    let monitor = find(&objects, "ServiceMonitor", "hecate-controller-metrics");
    assert_eq!(monitor["metadata"]["labels"]["release"], "prometheus");
    assert_eq!(monitor["spec"]["endpoints"][0]["port"], "metrics");
    assert_eq!(monitor["spec"]["endpoints"][0]["interval"], "30s");
    // Grafana's sidecar loads the delivery dashboard by its label, from the file the
    // controller's metrics test reads.
    let dashboard = find(&objects, "ConfigMap", "hecate-dashboard");
    assert_eq!(dashboard["metadata"]["labels"]["grafana_dashboard"], "1");
    assert_eq!(
        dashboard["metadata"]["annotations"]["grafana_folder"],
        "Hecate"
    );
    let json: Value = serde_json::from_str(
        dashboard["data"]["hecate-delivery.json"]
            .as_str()
            .expect("the dashboard's JSON"),
    )
    .unwrap();
    assert_eq!(json["uid"], "hecate-delivery");
    let shard = find(&objects, "Deployment", "hecate-controller-shard1");
    let spread = &shard["spec"]["template"]["spec"]["topologySpreadConstraints"];
    assert_eq!(spread[0]["topologyKey"], "topology.kubernetes.io/zone");
    assert_eq!(
        spread[0]["labelSelector"]["matchLabels"]["app.kubernetes.io/name"],
        "hecate-controller-shard1",
        "a constraint without a selector spreads the shard's own Pods"
    );
    assert_eq!(
        spread[1]["labelSelector"]["matchLabels"],
        serde_json::json!({"app.kubernetes.io/component": "controller"}),
        "a constraint's own selector stays"
    );
    assert_eq!(
        find(&objects, "PodDisruptionBudget", "hecate-controller-shard1")["spec"]["maxUnavailable"],
        2
    );
    // The platform's Notifier hears every namespace, from the release's, and is
    // made after its CRD; notices link to the UI.
    let notifier = find(&objects, "Notifier", "hecate-platform");
    assert_eq!(notifier["metadata"]["namespace"], env.namespace.as_str());
    assert_eq!(notifier["spec"]["allNamespaces"], true);
    assert_eq!(notifier["spec"]["secretRef"]["name"], "platform-alerts");
    assert_eq!(
        notifier["spec"]["events"],
        serde_json::json!(["CrossingFailed", "RolledBack", "RolloutHalted"])
    );
    assert_eq!(
        notifier["metadata"]["annotations"]["helm.sh/hook"],
        "post-install,post-upgrade"
    );
    assert!(
        args(find(&objects, "Deployment", "hecate-controller"))
            .contains(&"--ui-url=https://hecate.example.com")
    );
    let crd = find(&objects, "CustomResourceDefinition", "gates.hecate.dev");
    assert!(
        crd["metadata"]["annotations"]["helm.sh/resource-policy"].is_null(),
        "crds.keep=false: uninstalling removes them"
    );

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

/// `values.schema.json`: a misspelt or mistyped value stops the install with its
/// path, where it would otherwise be ignored and leave a default in place.
/// The records policy names every field of a Bundle's status — as one people may
/// add their own entries to, or as one only Hecate writes — so a field added later
/// cannot slip past it; and the list bound it makes room within is the CRD's.
#[test]
fn the_records_policy_covers_every_field_of_a_bundles_status() {
    let rendered = render("hecate-system", &[], &[]).unwrap();
    let policy = rendered
        .split("\n---\n")
        .find(|d| d.contains("kind: ValidatingAdmissionPolicy\n"))
        .expect("the records policy in the default rendering");
    let crd = hecate_types::crd::all()
        .into_iter()
        .find(|c| c.spec.names.kind == "Bundle")
        .unwrap();
    let schema = serde_json::to_value(&crd.spec.versions[0].schema).unwrap();
    let fields = schema["openAPIV3Schema"]["properties"]["status"]["properties"]
        .as_object()
        .unwrap();
    assert!(fields.len() >= 6, "{fields:?}");
    for field in fields.keys() {
        assert!(
            policy.contains(&format!("object.status.{field}")),
            "the records policy says nothing of status.{field}"
        );
    }
    assert!(policy.contains(&format!(
        "size(variables.oldRejections) >= {}",
        hecate_types::limits::MAX_APPROVALS
    )));
    // Everyone else is judged: the match condition trusts the chart's three
    // ServiceAccounts and nobody else.
    assert!(policy.contains(
        r#"["system:serviceaccount:hecate-system:hecate-controller","system:serviceaccount:hecate-system:hecate-api","system:serviceaccount:hecate-system:hecate-mcp"]"#
    ), "{policy}");
}

#[test]
fn a_misspelt_or_mistyped_value_is_refused() {
    for (set, says) in [
        ("controller.replicsa=3", "replicsa"),
        ("api.ingress.enabeld=true", "enabeld"),
        ("controller.logLevel=verbose", "logLevel"),
        ("api.replicas=two", "replicas"),
        ("crds.install=maybe", "install"),
        ("notifications.platform.type=pager", "type"),
        ("notifications.uiURL=hecate.example.com", "uiURL"),
    ] {
        let error = render("hecate-system", &[], &[set])
            .expect_err(set)
            .to_string();
        assert!(
            error.contains("values don't meet the specifications of the schema")
                && error.contains(says),
            "{set}: {error}"
        );
    }
}

#[test]
fn a_platform_notifier_without_its_secret_is_refused() {
    let error = render(
        "hecate-system",
        &[],
        &["notifications.platform.enabled=true"],
    )
    .expect_err("no secretName")
    .to_string();
    assert!(
        error.contains("notifications.platform.secretName"),
        "{error}"
    );
}

#[test]
fn notices_link_to_the_ingress_host_unless_told_otherwise() {
    let ui_url = |set: &[&str]| -> Vec<String> {
        let objects = chart::objects(&render("hecate-system", &[], set).unwrap()).unwrap();
        args(find(&objects, "Deployment", "hecate-controller"))
            .into_iter()
            .filter(|a| a.starts_with("--ui-url"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(ui_url(&[]), Vec::<String>::new(), "no address, no links");
    let ingress = [
        "api.ingress.enabled=true",
        "api.ingress.host=hecate.example.com",
    ];
    assert_eq!(ui_url(&ingress), ["--ui-url=https://hecate.example.com"]);
    let told = [
        ingress[0],
        ingress[1],
        "notifications.uiURL=https://releases.example.com",
    ];
    assert_eq!(ui_url(&told), ["--ui-url=https://releases.example.com"]);
}

/// The label Helm users filter by, on every object of the chart; the PDBs and the
/// spread follow each workload's own Pods, and one replica gets no budget (it would
/// block every node drain).
#[test]
fn every_object_says_helm_manages_it_and_replicas_are_spread_and_budgeted() {
    let objects = chart::objects(&render("hecate-system", &[], &[]).unwrap()).unwrap();
    for object in &objects {
        assert_eq!(
            object["metadata"]["labels"]["app.kubernetes.io/managed-by"], "Helm",
            "{}",
            object["metadata"]["name"]
        );
    }
    for name in ["hecate-controller", "hecate-api"] {
        let deployment = find(&objects, "Deployment", name);
        let selector = &deployment["spec"]["selector"]["matchLabels"];
        let spread = &deployment["spec"]["template"]["spec"]["topologySpreadConstraints"];
        assert_eq!(spread[0]["topologyKey"], "kubernetes.io/hostname", "{name}");
        assert_eq!(spread[0]["whenUnsatisfiable"], "ScheduleAnyway", "{name}");
        assert_eq!(
            &spread[0]["labelSelector"]["matchLabels"], selector,
            "{name}"
        );
        let budget = find(&objects, "PodDisruptionBudget", name);
        assert_eq!(
            &budget["spec"]["selector"]["matchLabels"], selector,
            "{name}"
        );
        assert_eq!(budget["spec"]["maxUnavailable"], 1, "{name}");
    }
    let single = chart::objects(
        &render(
            "hecate-system",
            &[],
            &[
                "controller.replicas=1",
                "controller.leaderElection.enabled=false",
            ],
        )
        .unwrap(),
    )
    .unwrap();
    assert!(
        !names(&single).contains(&"PodDisruptionBudget/hecate-controller".to_string()),
        "{:?}",
        names(&single)
    );
    let crds_off =
        chart::objects(&render("hecate-system", &[], &["crds.install=false"]).unwrap()).unwrap();
    assert!(
        crds_off
            .iter()
            .all(|o| o["kind"] != "CustomResourceDefinition"),
        "crds.install=false leaves the CRDs to the user"
    );
}

/// The CRDs the chart installs are the generated files (`files/crds/`), with the
/// chart's labels and the keep annotation added and nothing else changed by the
/// template's round trip through YAML.
#[test]
fn the_chart_installs_the_generated_crds_unchanged() {
    let objects = chart::objects(&render("hecate-system", &[], &[]).unwrap()).unwrap();
    let installed: Vec<&Value> = objects
        .iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
        .collect();
    let files = std::fs::read_dir(chart::chart_dir().join("files/crds")).unwrap();
    let mut compared = 0;
    for file in files {
        let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
        let generated = chart::objects(&text).unwrap().remove(0);
        let name = &generated["metadata"]["name"];
        let mut ours = (*installed
            .iter()
            .find(|o| &o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("the chart does not install {name}")))
        .clone();
        assert_eq!(
            ours["metadata"]["annotations"],
            serde_json::json!({"helm.sh/resource-policy": "keep"})
        );
        assert_eq!(
            ours["metadata"]["labels"]["app.kubernetes.io/part-of"],
            "hecate"
        );
        let metadata = ours["metadata"].as_object_mut().unwrap();
        metadata.remove("labels");
        metadata.remove("annotations");
        assert_eq!(numbers_as_floats(ours), numbers_as_floats(generated));
        compared += 1;
    }
    assert_eq!((compared, installed.len()), (5, 5));
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

/// A user's `helm install`, `helm upgrade` and `helm uninstall`, for real: on a cluster
/// of its own that runs workloads (kube-controller-manager, kube-scheduler, kwok) and
/// has nothing of Hecate's yet. The upgrade comes from an older chart whose Gate CRD
/// lacks a printer column, as a release's CRDs lag the next one's: the upgrade brings
/// the CRD up to date (Helm would never touch `crds/`), and the uninstall leaves the
/// CRDs and the Gates in them.
#[tokio::test]
async fn the_chart_installs_upgrades_and_uninstalls() {
    let dir = std::env::temp_dir().join(format!("hecate-helm-install-{}", std::process::id()));
    let cluster_dir = dir.join("cluster");
    let plane = tokio::task::spawn_blocking(move || {
        let binaries = Binaries::locate_or_build()?;
        ControlPlane::start_parts(
            &binaries,
            &cluster_dir,
            Lifetime::ThisProcess,
            Parts::BARE_WORKLOADS,
        )
    })
    .await
    .unwrap()
    .expect("a cluster that runs workloads");
    let kubeconfig = plane.endpoint().write_kubeconfigs(&dir).unwrap().remove(0);
    let admin = plane.endpoint().client(Identity::Admin).await.unwrap();
    // Helm's state and kubectl's discovery cache (under HOME) stay in the test's folder.
    let homes: Vec<(&str, PathBuf)> = [
        "HOME",
        "HELM_CACHE_HOME",
        "HELM_CONFIG_HOME",
        "HELM_DATA_HOME",
    ]
    .into_iter()
    .map(|name| (name, dir.join("homes").join(name)))
    .collect();
    let helm_run = |args: &[&str]| {
        let mut args = args.to_vec();
        let kubeconfig = kubeconfig.to_str().unwrap();
        args.extend(["--kubeconfig", kubeconfig, "--namespace", "hecate-system"]);
        let env: Vec<(&str, &Path)> = homes.iter().map(|(n, p)| (*n, p.as_path())).collect();
        chart::helm_with(&helm(), &args, &env)
    };

    // The older chart: the same, but its Gate CRD has one printer column fewer.
    let older = dir.join("hecate-0.0.9");
    copy_dir(&chart::chart_dir(), &older);
    let gates_crd = older.join("files/crds/hecate.dev_gates.yaml");
    let mut crd: Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(&gates_crd).unwrap()).unwrap();
    let columns = crd["spec"]["versions"][0]["additionalPrinterColumns"]
        .as_array_mut()
        .expect("the Gate CRD has printer columns");
    let newest = columns.pop().expect("a column to leave out");
    let older_count = columns.len();
    std::fs::write(&gates_crd, serde_yaml_ng::to_string(&crd).unwrap()).unwrap();

    let installed = helm_run(&[
        "install",
        "hecate",
        older.to_str().unwrap(),
        "--create-namespace",
        "--wait",
        "--timeout=3m",
    ])
    .unwrap_or_else(|e| panic!("helm install: {e:#}"));
    assert!(installed.contains("STATUS: deployed"), "{installed}");
    let deployments: Api<Deployment> = Api::namespaced(admin.clone(), "hecate-system");
    for name in ["hecate-controller", "hecate-api"] {
        assert_eq!(available(&deployments, name).await, 2, "{name}");
    }
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    let gates = crds.get("gates.hecate.dev").await.unwrap();
    assert_eq!(printer_columns(&gates), older_count);
    let labels = gates.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels
            .get("app.kubernetes.io/managed-by")
            .map(String::as_str),
        Some("Helm")
    );
    assert_eq!(
        gates
            .metadata
            .annotations
            .clone()
            .unwrap_or_default()
            .get("helm.sh/resource-policy")
            .map(String::as_str),
        Some("keep")
    );
    let budgets: Api<PodDisruptionBudget> = Api::namespaced(admin.clone(), "hecate-system");
    for name in ["hecate-controller", "hecate-api"] {
        let budget = budgets.get(name).await.unwrap();
        assert_eq!(
            budget.spec.and_then(|s| s.max_unavailable),
            Some(IntOrString::Int(1)),
            "{name}"
        );
    }
    let services: Api<Service> = Api::namespaced(admin.clone(), "hecate-system");
    services.get("hecate-controller-metrics").await.unwrap();

    // A Gate someone made: it must outlive every step below.
    let shop = TestEnv::on(Box::leak(Box::new(plane.endpoint().clone()))).await;
    shop.create(Gate::new("dev", fixtures::gate_spec(&[], false)))
        .await;

    let upgraded = helm_run(&[
        "upgrade",
        "hecate",
        "charts/hecate",
        "--set=controller.replicas=3",
        "--wait",
        "--timeout=3m",
    ])
    .unwrap_or_else(|e| panic!("helm upgrade: {e:#}"));
    assert!(upgraded.contains("REVISION: 2"), "{upgraded}");
    let gates = crds.get("gates.hecate.dev").await.unwrap();
    assert_eq!(
        printer_columns(&gates),
        older_count + 1,
        "the upgrade brings the CRD's {} column",
        newest["name"]
    );
    assert_eq!(available(&deployments, "hecate-controller").await, 3);

    let uninstalled = helm_run(&["uninstall", "hecate", "--wait", "--timeout=3m"])
        .unwrap_or_else(|e| panic!("helm uninstall: {e:#}"));
    assert!(uninstalled.contains("uninstalled"), "{uninstalled}");
    let left = deployments.list(&Default::default()).await.unwrap();
    assert!(left.items.is_empty(), "{:?}", names_of(&left.items));
    assert!(
        budgets
            .get_opt("hecate-controller")
            .await
            .unwrap()
            .is_none(),
        "the release's objects go with it"
    );
    for crd in ["beacons", "bundles", "gates", "passages"] {
        let name = format!("{crd}.hecate.dev");
        assert!(
            crds.get_opt(&name).await.unwrap().is_some(),
            "{name} is kept"
        );
    }
    assert!(
        shop.api::<Gate>().get_opt("dev").await.unwrap().is_some(),
        "the Gate outlives the release"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `value` with every number a float: YAML's `0.0` and `0` are one number to the API
/// server, and Helm's round trip writes the one for the other.
fn numbers_as_floats(value: Value) -> Value {
    match value {
        Value::Number(n) => serde_json::json!(n.as_f64()),
        Value::Array(items) => Value::Array(items.into_iter().map(numbers_as_floats).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, numbers_as_floats(v)))
                .collect(),
        ),
        other => other,
    }
}

/// The Deployment's available replicas (`helm --wait` waited for them).
async fn available(deployments: &Api<Deployment>, name: &str) -> i32 {
    let deployment = deployments.get(name).await.unwrap();
    deployment
        .status
        .and_then(|s| s.available_replicas)
        .unwrap_or_default()
}

fn printer_columns(crd: &CustomResourceDefinition) -> usize {
    crd.spec.versions[0]
        .additional_printer_columns
        .as_ref()
        .map_or(0, Vec::len)
}

fn names_of(deployments: &[Deployment]) -> Vec<String> {
    deployments
        .iter()
        .filter_map(|d| d.metadata.name.clone())
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
