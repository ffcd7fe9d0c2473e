//! `render-kustomize` and `render-helm` running the real `kustomize` and `helm` — the
//! pinned releases, built once per machine by the test environment like the control
//! plane (`hecate_testenv::Tool`). No Kubernetes API is involved: each test calls the
//! step's `Runner::run` on a work directory of its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use hecate_steps::reason::Reason;
use hecate_steps::render::{RenderHelm, RenderKustomize};
use hecate_steps::runner::{Progress, Runner, StepContext, StepError, StepResult};
use hecate_testenv::Tool;
use hecate_types::{Bundle, BundleSpec};
use serde::Deserialize as _;
use serde_json::{Value, json};

/// The pinned program, found or built (once per machine; a test waiting for the build
/// waits on its lock).
async fn program(tool: Tool) -> PathBuf {
    tokio::task::spawn_blocking(move || tool.locate_or_build())
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{} is needed: {e:#}", tool.name()))
}

async fn kustomize() -> RenderKustomize {
    RenderKustomize::new(program(Tool::Kustomize).await)
}

async fn helm() -> RenderHelm {
    RenderHelm::new(program(Tool::Helm).await)
}

/// A work directory of its own and the Passage a step runs for.
struct Work {
    dir: tempfile::TempDir,
    bundle: Bundle,
    outputs: BTreeMap<String, Value>,
}

impl Work {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            bundle: Bundle::new("app-0123456789ab", BundleSpec::default()),
            outputs: BTreeMap::new(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path().join(relative)).unwrap()
    }

    fn modified(&self, relative: &str) -> SystemTime {
        std::fs::metadata(self.path().join(relative))
            .and_then(|m| m.modified())
            .unwrap()
    }

    async fn run(&self, step: &dyn Runner, config: Value) -> Result<StepResult, StepError> {
        let ctx = StepContext {
            namespace: "demo",
            gate: "dev",
            passage: "dev-app-0123456789ab",
            bundle: &self.bundle,
            actor: "controller",
            work_dir: self.path(),
            config,
            outputs: &self.outputs,
            attempt: 0,
            failed: false,
            traceparent: "",
            started_at: jiff::Timestamp::UNIX_EPOCH,
        };
        step.run(&ctx).await
    }

    /// Runs `config`, which must fail terminally with `reason`; returns the message.
    async fn refused(&self, step: &dyn Runner, config: Value, reason: Reason) -> String {
        let error = self
            .run(step, config.clone())
            .await
            .expect_err(&config.to_string());
        assert_eq!(
            (error.reason, error.terminal),
            (reason, true),
            "{config}: {}",
            error.message
        );
        let root = self.path().to_string_lossy().into_owned();
        assert!(
            !error.message.contains(&root),
            "the message names the work directory: {}",
            error.message
        );
        error.message
    }
}

// ----- kustomize -------------------------------------------------------------------

/// A base (a Deployment and a Service) and a dev overlay that renames, relabels and
/// generates a ConfigMap.
fn fleet(work: &Work) {
    work.write(
        "repo/base/kustomization.yaml",
        "resources:\n- deployment.yaml\n- service.yaml\n",
    );
    work.write(
        "repo/base/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: app}\n  template:\n    metadata:\n      labels: {app: app}\n    spec:\n      containers:\n      - name: app\n        image: ghcr.io/acme/app:1.0.0\n",
    );
    work.write(
        "repo/base/service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: app\nspec:\n  selector: {app: app}\n  ports:\n  - port: 80\n",
    );
    work.write(
        "repo/envs/dev/kustomization.yaml",
        "namePrefix: dev-\nnamespace: dev\nlabels:\n- pairs: {env: dev}\nresources:\n- ../../base\nconfigMapGenerator:\n- name: settings\n  literals: [LOG_LEVEL=debug]\nimages:\n- name: ghcr.io/acme/app\n  newTag: 1.2.3\n",
    );
}

fn overlay() -> Value {
    json!({"path": "repo/envs/dev", "out": "out/dev.yaml"})
}

#[tokio::test]
async fn kustomize_renders_an_overlay_and_a_rerun_finds_it_done() {
    let step = kustomize().await;
    let work = Work::new();
    fleet(&work);

    let first = work.run(&step, overlay()).await.unwrap();
    assert_eq!(first.progress, Progress::Succeeded);
    assert_eq!(
        first.output,
        Some(json!({"changed": true, "file": "out/dev.yaml", "resources": 3}))
    );
    let rendered = work.read("out/dev.yaml");
    for expected in [
        "kind: ConfigMap",
        "name: dev-settings-",
        "name: dev-app",
        "namespace: dev",
        "env: dev",
        "image: ghcr.io/acme/app:1.2.3",
    ] {
        assert!(rendered.contains(expected), "{expected}:\n{rendered}");
    }
    // kustomize's own order: the ConfigMap, the Service, then the Deployment.
    let at = |kind: &str| rendered.find(&format!("kind: {kind}\n")).unwrap();
    assert!(at("ConfigMap") < at("Service") && at("Service") < at("Deployment"));
    assert!(rendered.ends_with('\n'));
    assert!(
        !work.path().join(".hecate/render").exists(),
        "the scratch area is removed"
    );

    // Re-run: the same bytes are there, so nothing is written.
    let written = work.modified("out/dev.yaml");
    let again = work.run(&step, overlay()).await.unwrap();
    assert_eq!(
        again.output,
        Some(json!({"changed": false, "file": "out/dev.yaml", "resources": 3}))
    );
    assert!(again.message.contains("already holds"), "{}", again.message);
    assert_eq!(work.modified("out/dev.yaml"), written);

    // The same sources in another work directory (a restart) render the same bytes.
    let elsewhere = Work::new();
    fleet(&elsewhere);
    elsewhere.run(&step, overlay()).await.unwrap();
    assert_eq!(elsewhere.read("out/dev.yaml"), rendered);

    // A changed source is written again.
    work.write(
        "repo/envs/dev/kustomization.yaml",
        &work
            .read("repo/envs/dev/kustomization.yaml")
            .replace("1.2.3", "1.2.4"),
    );
    let changed = work.run(&step, overlay()).await.unwrap();
    assert_eq!(changed.output.unwrap()["changed"], json!(true));
    assert!(work.read("out/dev.yaml").contains("app:1.2.4"));
}

#[tokio::test]
async fn kustomize_reads_outside_its_directory_only_with_load_restrictions_none() {
    let step = kustomize().await.allowing_load_restrictions_none(true);
    let work = Work::new();
    work.write(
        "repo/shared/config.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata: {a: b}\n",
    );
    work.write(
        "repo/envs/dev/kustomization.yaml",
        "resources:\n- ../../shared/config.yaml\n",
    );

    let message = work.refused(&step, overlay(), Reason::RenderFailed).await;
    assert!(message.starts_with("kustomize build failed: "), "{message}");
    // Paths are named inside the work directory.
    assert!(message.contains("repo/shared/config.yaml"), "{message}");
    assert!(message.contains("is not in or below"), "{message}");
    assert!(!work.path().join("out/dev.yaml").exists());

    let done = work
        .run(
            &step,
            json!({"path": "repo/envs/dev", "out": "out/dev.yaml", "loadRestrictionsNone": true}),
        )
        .await
        .unwrap();
    assert_eq!(done.output.unwrap()["resources"], json!(1));
    assert!(work.read("out/dev.yaml").contains("name: shared"));
}

/// Issue 30: `loadRestrictionsNone` let a Gate author render the controller's own
/// files (its kubeconfig, its ServiceAccount token) into the checkout, for a later
/// step to push. It is the operator's to allow, not the Gate author's.
#[cfg(unix)]
#[tokio::test]
async fn load_restrictions_none_is_refused_unless_the_operator_allows_it() {
    let step = kustomize().await;
    let work = Work::new();
    let controller = tempfile::tempdir().unwrap();
    let kubeconfig = controller.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stolen\ndata: {token: s3cret}\n",
    )
    .unwrap();
    work.write(
        "repo/envs/dev/kustomization.yaml",
        &format!("resources:\n- {}\n", kubeconfig.display()),
    );
    let config =
        json!({"path": "repo/envs/dev", "out": "out/dev.yaml", "loadRestrictionsNone": true});

    let message = work
        .refused(&step, config.clone(), Reason::NotAllowed)
        .await;
    assert!(
        message.contains("loadRestrictionsNone")
            && message.contains("--allow-kustomize-load-restrictions-none"),
        "{message}"
    );
    assert!(!work.path().join("out").exists(), "nothing was rendered");

    // Without it, kustomize's own restriction holds: links out are refused too.
    std::os::unix::fs::symlink(
        &kubeconfig,
        work.path().join("repo/envs/dev/kubeconfig.yaml"),
    )
    .unwrap();
    work.write(
        "repo/envs/dev/kustomization.yaml",
        "resources:\n- kubeconfig.yaml\n",
    );
    let message = work
        .refused(
            &step,
            json!({"path": "repo/envs/dev", "out": "out/dev.yaml"}),
            Reason::RenderFailed,
        )
        .await;
    assert!(message.contains("is not in or below"), "{message}");
    assert!(!work.path().join("out").exists(), "nothing was rendered");

    // The operator's flag allows it, for every Gate.
    let allowed = step.allowing_load_restrictions_none(true);
    work.run(&allowed, config).await.unwrap();
    assert!(work.read("out/dev.yaml").contains("s3cret"));
}

#[tokio::test]
async fn kustomize_failures_are_terminal_and_name_paths_in_the_work_directory() {
    let step = kustomize().await;
    let work = Work::new();
    work.write("repo/envs/empty/kustomization.yaml", "resources: []\n");
    work.write(
        "repo/envs/broken/kustomization.yaml",
        "resources:\n- missing.yaml\n",
    );
    work.write("repo/envs/none/README.md", "no kustomization here\n");

    let message = work
        .refused(
            &step,
            json!({"path": "repo/envs/empty", "out": "out.yaml"}),
            Reason::NothingRendered,
        )
        .await;
    assert!(message.contains("repo/envs/empty"), "{message}");
    assert!(!work.path().join("out.yaml").exists());

    let message = work
        .refused(
            &step,
            json!({"path": "repo/envs/broken", "out": "out.yaml"}),
            Reason::RenderFailed,
        )
        .await;
    assert!(
        message.contains("'repo/envs/broken/missing.yaml'"),
        "{message}"
    );

    for (path, words) in [
        ("repo/envs/gone", "does not exist"),
        ("repo/envs/none", "holds no kustomization"),
        ("repo/envs/none/README.md/x", "does not exist"),
        ("repo/envs/empty/kustomization.yaml", "is not a directory"),
    ] {
        let message = work
            .refused(
                &step,
                json!({"path": path, "out": "out.yaml"}),
                Reason::FileNotFound,
            )
            .await;
        assert!(message.contains(words), "{path}: {message}");
    }

    for config in [
        json!({"path": "../elsewhere", "out": "out.yaml"}),
        json!({"path": "repo/envs/empty", "out": "../out.yaml"}),
        json!({"path": "repo/envs/empty", "out": "out.yaml", "extra": 1}),
    ] {
        work.refused(&step, config, Reason::InvalidConfig).await;
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_symbolic_link_out_of_the_work_directory_is_refused() {
    let step = kustomize().await;
    let work = Work::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("kustomization.yaml"), "resources: []\n").unwrap();
    std::fs::create_dir_all(work.path().join("repo")).unwrap();
    std::os::unix::fs::symlink(outside.path(), work.path().join("repo/linked")).unwrap();
    std::os::unix::fs::symlink(outside.path(), work.path().join("out")).unwrap();
    fleet(&work);

    let message = work
        .refused(
            &step,
            json!({"path": "repo/linked", "out": "o.yaml"}),
            Reason::InvalidConfig,
        )
        .await;
    assert!(message.contains("symbolic link"), "{message}");
    work.refused(
        &step,
        json!({"path": "repo/envs/dev", "out": "out/dev.yaml"}),
        Reason::InvalidConfig,
    )
    .await;
    assert!(!outside.path().join("dev.yaml").exists());

    // Helm follows links when it loads a chart: one leading out is refused, one
    // inside the work directory is not.
    let helm = helm().await;
    chart(&work, None);
    std::fs::write(outside.path().join("token"), "s3cret\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("token"),
        work.path().join("repo/chart/files-token"),
    )
    .unwrap();
    let message = work
        .refused(&helm, chart_config(json!({})), Reason::InvalidConfig)
        .await;
    assert!(
        message.contains("repo/chart/files-token in repo/chart leads out"),
        "{message}"
    );
    std::fs::remove_file(work.path().join("repo/chart/files-token")).unwrap();
    work.write(
        "repo/shared/monitor.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n",
    );
    std::os::unix::fs::symlink(
        work.path().join("repo/shared/monitor.yaml"),
        work.path().join("repo/chart/templates/shared.yaml"),
    )
    .unwrap();
    // (`out/` is the link out of the work directory made above.)
    let config = chart_config(json!({"out": "rendered/app.yaml"}));
    work.run(&helm, config).await.unwrap();
    assert!(work.read("rendered/app.yaml").contains("name: shared"));
}

// ----- helm ------------------------------------------------------------------------

/// A chart whose ConfigMap shows what the templates saw: values, release, namespace,
/// capabilities. It carries a CRD, a hook (a migration Job), and a ServiceMonitor
/// rendered only when its API is announced.
fn chart(work: &Work, kube_version_constraint: Option<&str>) {
    let constraint = kube_version_constraint
        .map(|c| format!("kubeVersion: \"{c}\"\n"))
        .unwrap_or_default();
    work.write(
        "repo/chart/Chart.yaml",
        &format!("apiVersion: v2\nname: app\nversion: 0.1.0\n{constraint}"),
    );
    work.write(
        "repo/chart/values.yaml",
        "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.0\"\nlist: [a, b]\nlimits:\n  cpu: 100m\n  memory: 64Mi\nenabled: true\n",
    );
    work.write(
        "repo/chart/templates/config.yaml",
        "{{- if .Values.enabled }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\n  namespace: {{ .Release.Namespace }}\ndata:\n  image: {{ printf \"%s:%s\" .Values.image.repository .Values.image.tag | quote }}\n  list: {{ .Values.list | toJson | quote }}\n  limits: {{ .Values.limits | toJson | quote }}\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n{{- end }}\n",
    );
    work.write(
        "repo/chart/templates/monitor.yaml",
        "{{- if .Capabilities.APIVersions.Has \"monitoring.coreos.com/v1\" }}\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: {{ .Release.Name }}\n{{- end }}\n",
    );
    work.write(
        "repo/chart/templates/migrate.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-migrate\n  annotations:\n    helm.sh/hook: pre-install,pre-upgrade\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: migrate\n        image: busybox\n",
    );
    work.write(
        "repo/chart/crds/widgets.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n",
    );
}

fn chart_config(extra: Value) -> Value {
    let mut config = json!({"chart": "repo/chart", "out": "out/app.yaml", "releaseName": "shop"});
    for (key, value) in extra.as_object().unwrap() {
        config[key] = value.clone();
    }
    config
}

/// The rendered ConfigMap's `data`.
fn config_data(rendered: &str) -> BTreeMap<String, String> {
    let config = serde_yaml_ng::Deserializer::from_str(rendered)
        .map(|document| serde_yaml_ng::Value::deserialize(document).unwrap())
        .find(|document| document["kind"] == "ConfigMap")
        .unwrap_or_else(|| panic!("no ConfigMap in:\n{rendered}"));
    serde_yaml_ng::from_value(config["data"].clone()).unwrap()
}

#[tokio::test]
async fn helm_renders_a_chart_with_the_gates_namespace_and_no_hooks() {
    let step = helm().await;
    let work = Work::new();
    chart(&work, None);

    let first = work.run(&step, chart_config(json!({}))).await.unwrap();
    assert_eq!(
        first.output,
        Some(json!({"changed": true, "file": "out/app.yaml"}))
    );
    let rendered = work.read("out/app.yaml");
    assert!(rendered.ends_with('\n'));
    assert!(rendered.contains("name: shop-config"), "{rendered}");
    assert!(rendered.contains("namespace: demo"), "{rendered}");
    assert!(
        !rendered.contains("helm.sh/hook"),
        "hooks are left out:\n{rendered}"
    );
    assert!(!rendered.contains("CustomResourceDefinition"), "{rendered}");
    assert!(!rendered.contains("ServiceMonitor"), "{rendered}");
    assert!(!work.path().join(".hecate/render").exists());

    let written = work.modified("out/app.yaml");
    let again = work.run(&step, chart_config(json!({}))).await.unwrap();
    assert_eq!(again.output.unwrap()["changed"], json!(false));
    assert_eq!(work.modified("out/app.yaml"), written);

    let elsewhere = Work::new();
    chart(&elsewhere, None);
    elsewhere.run(&step, chart_config(json!({}))).await.unwrap();
    assert_eq!(elsewhere.read("out/app.yaml"), rendered);

    // A namespace of its own, CRDs, an announced API.
    let options = chart_config(json!({
        "namespace": "apps", "includeCRDs": true,
        "apiVersions": ["monitoring.coreos.com/v1"],
    }));
    let done = work.run(&step, options).await.unwrap();
    assert_eq!(done.output.unwrap()["changed"], json!(true));
    let rendered = work.read("out/app.yaml");
    assert!(rendered.contains("namespace: apps"), "{rendered}");
    let crd = rendered.find("kind: CustomResourceDefinition").unwrap();
    assert!(
        crd < rendered.find("kind: ConfigMap").unwrap(),
        "CRDs come first"
    );
    assert!(rendered.contains("kind: ServiceMonitor"), "{rendered}");
}

#[tokio::test]
async fn helm_applies_values_files_in_order_then_values_with_lists_replaced() {
    let step = helm().await;
    let work = Work::new();
    chart(&work, None);
    work.write(
        "repo/values/base.yaml",
        "image:\n  tag: \"2.0\"\nlist: [c]\nlimits:\n  cpu: 200m\n",
    );
    work.write(
        "repo/values/dev.yaml",
        "list: [d, e]\nlimits:\n  memory: 128Mi\n",
    );
    let files = json!(["repo/values/base.yaml", "repo/values/dev.yaml"]);

    work.run(&step, chart_config(json!({"valuesFiles": files})))
        .await
        .unwrap();
    let data = config_data(&work.read("out/app.yaml"));
    // Maps merge key by key; the later file's list replaces the earlier one whole.
    assert_eq!(data["image"], "ghcr.io/acme/app:2.0");
    assert_eq!(data["list"], r#"["d","e"]"#);
    assert_eq!(data["limits"], r#"{"cpu":"200m","memory":"128Mi"}"#);

    let values = json!({"image": {"tag": "3.0"}, "list": ["f"], "limits": {"gpu": 1}});
    work.run(
        &step,
        chart_config(json!({"valuesFiles": files, "values": values})),
    )
    .await
    .unwrap();
    let data = config_data(&work.read("out/app.yaml"));
    assert_eq!(data["image"], "ghcr.io/acme/app:3.0");
    assert_eq!(data["list"], r#"["f"]"#);
    assert_eq!(data["limits"], r#"{"cpu":"200m","gpu":1,"memory":"128Mi"}"#);

    // Values that turn every template off render nothing.
    let message = work
        .refused(
            &step,
            chart_config(json!({"values": {"enabled": false}})),
            Reason::NothingRendered,
        )
        .await;
    assert!(message.contains("repo/chart"), "{message}");
}

#[tokio::test]
async fn helm_honours_kube_version_never_the_clusters() {
    let step = helm().await;
    let work = Work::new();
    chart(&work, Some("<1.30.0-0"));

    // Helm's own default is newer than the chart allows.
    let message = work
        .refused(&step, chart_config(json!({})), Reason::RenderFailed)
        .await;
    assert!(message.starts_with("helm template failed: "), "{message}");
    assert!(message.contains("kubeVersion"), "{message}");

    work.run(&step, chart_config(json!({"kubeVersion": "1.29.3"})))
        .await
        .unwrap();
    let data = config_data(&work.read("out/app.yaml"));
    assert_eq!(data["kube"], "v1.29.3");

    let message = work
        .refused(
            &step,
            chart_config(json!({"kubeVersion": "soon"})),
            Reason::RenderFailed,
        )
        .await;
    assert!(message.contains("soon"), "{message}");
}

#[tokio::test]
async fn helm_failures_are_terminal_and_name_paths_in_the_work_directory() {
    let step = helm().await;
    let work = Work::new();
    chart(&work, None);
    work.write("repo/bad-values.yaml", "list: [\n");
    work.write("repo/not-a-chart/values.yaml", "a: 1\n");

    let message = work
        .refused(
            &step,
            chart_config(json!({"valuesFiles": ["repo/bad-values.yaml"]})),
            Reason::RenderFailed,
        )
        .await;
    assert!(message.contains("repo/bad-values.yaml"), "{message}");

    work.write(
        "repo/chart/templates/broken.yaml",
        "{{ .Values.missing.field }}\n",
    );
    let message = work
        .refused(&step, chart_config(json!({})), Reason::RenderFailed)
        .await;
    assert!(message.contains("app/templates/broken.yaml"), "{message}");
    assert!(!message.contains("--debug"), "{message}");
    std::fs::remove_file(work.path().join("repo/chart/templates/broken.yaml")).unwrap();

    for (config, words) in [
        (json!({"chart": "repo/gone"}), "does not exist"),
        (json!({"chart": "repo/not-a-chart"}), "holds no Chart.yaml"),
        (
            json!({"valuesFiles": ["repo/chart/values.yaml", "repo/values-prod.yaml"]}),
            "valuesFiles[1]: repo/values-prod.yaml does not exist",
        ),
    ] {
        let message = work
            .refused(&step, chart_config(config.clone()), Reason::FileNotFound)
            .await;
        assert!(message.contains(words), "{config}: {message}");
    }

    for config in [
        json!({"valuesFiles": ["../values.yaml"]}),
        json!({"out": "/tmp/app.yaml"}),
        json!({"releaseName": ""}),
    ] {
        work.refused(&step, chart_config(config), Reason::InvalidConfig)
            .await;
    }
    assert!(!work.path().join("out/app.yaml").exists());
}

// ----- both ------------------------------------------------------------------------

#[tokio::test]
async fn an_absent_program_is_a_terminal_error_naming_it_and_its_flag() {
    let work = Work::new();
    fleet(&work);
    chart(&work, None);
    let cases: [(Box<dyn Runner>, Value, &str, &str); 4] = [
        (
            Box::new(RenderKustomize::new("hecate-test-no-kustomize")),
            overlay(),
            "kustomize",
            "--kustomize-path",
        ),
        (
            Box::new(RenderKustomize::new(work.path().join("bin/kustomize"))),
            overlay(),
            "kustomize",
            "--kustomize-path",
        ),
        (
            Box::new(RenderHelm::new("hecate-test-no-helm")),
            chart_config(json!({})),
            "helm",
            "--helm-path",
        ),
        (
            Box::new(RenderHelm::new("/nonexistent/helm")),
            chart_config(json!({})),
            "helm",
            "--helm-path",
        ),
    ];
    for (step, config, name, flag) in cases {
        let error = work.run(step.as_ref(), config).await.unwrap_err();
        assert_eq!((error.reason, error.terminal), (Reason::RenderFailed, true));
        assert!(
            error
                .message
                .starts_with(&format!("{name} is not installed")),
            "{}",
            error.message
        );
        assert!(error.message.contains(flag), "{}", error.message);
    }
}

// ----- what a program starts -------------------------------------------------------

/// A stand-in for kustomize or helm: a shell script at `<bin>/<name>` running `body`.
/// (Programs run with an empty environment, so the script names its files itself.)
fn fake(bin: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = bin.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The pid a fake program's child wrote to `file` (waiting up to 10 s for it).
async fn child_pid(file: &Path) -> i32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("no pid in {}", file.display());
}

/// Whether process `pid` still runs (a zombie waiting for a reaper does not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// Waits (up to 5 s) for process `pid` to be gone.
async fn gone(pid: i32) -> bool {
    for _ in 0..100 {
        if !running(pid) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

/// A script that starts a long-lived child (holding the program's stdout, as a plugin
/// would), writes the child's pid to `pid_file`, then does `then`.
fn spawning(pid_file: &Path, then: &str) -> String {
    format!("sleep 300 &\necho $! > '{}'\n{then}", pid_file.display())
}

/// A render past its time limit is killed with everything it started: the step fails
/// terminally at the limit and the program's child does not outlive it.
#[tokio::test]
async fn a_render_past_its_time_takes_what_it_started_with_it() {
    let work = Work::new();
    fleet(&work);
    let bin = tempfile::tempdir().unwrap();
    let pid_file = bin.path().join("child.pid");
    let program = fake(bin.path(), "kustomize", &spawning(&pid_file, "wait"));
    let step = RenderKustomize::new(program).with_time_limit(std::time::Duration::from_secs(2));
    let started = std::time::Instant::now();
    let message = work.refused(&step, overlay(), Reason::RenderFailed).await;
    assert_eq!(message, "kustomize build did not finish within 2s");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let child = child_pid(&pid_file).await;
    assert!(gone(child).await, "the program's child {child} outlived it");
    assert!(!work.path().join("out/dev.yaml").exists());
}

/// A program that exits but leaves a child behind holding its output: the render ends
/// when the program does (not at the time limit), and the child is killed.
#[tokio::test]
async fn a_render_that_leaves_a_child_behind_ends_with_the_program() {
    let work = Work::new();
    chart(&work, None);
    let bin = tempfile::tempdir().unwrap();
    let pid_file = bin.path().join("child.pid");
    let manifest = "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: x\\n'";
    let program = fake(bin.path(), "helm", &spawning(&pid_file, manifest));
    let step = RenderHelm::new(program).with_time_limit(std::time::Duration::from_secs(30));
    let started = std::time::Instant::now();
    let done = work
        .run(&step, chart_config(json!({})))
        .await
        .unwrap_or_else(|e| panic!("{}: {}", e.reason, e.message));
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(10), "took {took:?}");
    assert_eq!(done.output.unwrap()["changed"], json!(true));
    let child = child_pid(&pid_file).await;
    assert!(gone(child).await, "the program's child {child} outlived it");
}

/// A step dropped mid-render (an abort, a shutdown) kills the program and its children.
#[tokio::test]
async fn an_abandoned_render_takes_what_it_started_with_it() {
    let work = Work::new();
    fleet(&work);
    let bin = tempfile::tempdir().unwrap();
    let pid_file = bin.path().join("child.pid");
    let program = fake(bin.path(), "kustomize", &spawning(&pid_file, "wait"));
    let step = RenderKustomize::new(program);
    let abandoned = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        work.run(&step, overlay()),
    )
    .await;
    assert!(abandoned.is_err(), "still running when dropped");
    let child = child_pid(&pid_file).await;
    assert!(gone(child).await, "the program's child {child} outlived it");
}

/// A program that writes without end is cut off at the output limit: a terminal
/// failure, memory bounded, nothing written.
#[tokio::test]
async fn a_render_that_writes_without_end_is_cut_off() {
    let work = Work::new();
    fleet(&work);
    let bin = tempfile::tempdir().unwrap();
    let program = fake(bin.path(), "kustomize", "exec yes 'a: 1'");
    let step = RenderKustomize::new(program).with_time_limit(std::time::Duration::from_secs(60));
    let message = work.refused(&step, overlay(), Reason::RenderFailed).await;
    assert_eq!(message, "kustomize build wrote more than 64 MiB");
    assert!(!work.path().join("out/dev.yaml").exists());
}
