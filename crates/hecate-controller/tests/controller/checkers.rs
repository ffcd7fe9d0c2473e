//! The `flux` health checker and the `flagger` verifier against a real API server:
//! stand-in Flux and Flagger CRDs, objects whose status the test writes through the
//! status subresource as Flux and Flagger would, and the verdicts the controller draws
//! from them — including what each costs in requests, and the remote-cluster path
//! through a kubeconfig Secret.

use std::collections::BTreeMap;
use std::sync::Arc;

use hecate_controller::verify::{FlaggerVerifier, Subject, Verifier as _, VerifyError};
use hecate_ops::kubeconfig::Exec;
use hecate_ops::rules::verification::{Look, Seen};
use hecate_steps::flux::{FluxAccess, FluxChecker};
use hecate_steps::health::{self, Assessment};
use hecate_testenv::flux::{self as standins, KUSTOMIZATION, StandIn};
use hecate_testenv::{Identity, RequestLog, TestEnv};
use hecate_types::{Gate, GateSpec, Health, HealthCheck, Passage, PassageSpec, wellknown};
use jiff::Timestamp;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ObjectMeta, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const REVISION: &str = "main@sha1:9f8c1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f";

const CANARY: StandIn = StandIn {
    group: "flagger.app",
    version: "v1beta1",
    kind: "Canary",
    plural: "canaries",
};

/// A test's namespace with the Flux stand-ins installed, and a `flux` checker whose
/// local client records its requests.
struct Flux {
    env: TestEnv,
    registry: health::Checkers,
    requests: RequestLog,
}

impl Flux {
    async fn new() -> Self {
        Self::as_identity(Identity::Admin).await
    }

    /// A checker that reads (and looks up kubeconfig Secrets) as `who`.
    async fn as_identity(who: Identity) -> Self {
        Self::with_exec(who, Exec::Refused).await
    }

    /// [`Flux::as_identity`], running kubeconfigs' `exec` plugins as `exec` says.
    async fn with_exec(who: Identity, exec: Exec) -> Self {
        let env = TestEnv::new().await;
        standins::install_flux_standins(&env.admin).await.unwrap();
        let (client, requests) = env.endpoint().recording_client(who).await.unwrap();
        let access = FluxAccess::new(client).allowing_exec(exec);
        let checker = FluxChecker::new(Arc::new(access), true);
        let mut registry = health::Checkers::new();
        registry.register(Arc::new(checker)).unwrap();
        Self {
            env,
            registry,
            requests,
        }
    }

    fn api(&self, kind: StandIn) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.env.admin.clone(),
            &self.env.namespace,
            &kind.api_resource(),
        )
    }

    async fn create(&self, kind: StandIn, name: &str, spec: Value) {
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": kind.api_version(),
            "kind": kind.kind,
            "metadata": {"name": name},
            "spec": spec,
        }))
        .unwrap();
        self.api(kind)
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
    }

    /// Writes `status` through the status subresource, as Flux's controllers do.
    async fn write_status(&self, kind: StandIn, name: &str, status: Value) {
        self.api(kind)
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await
            .unwrap();
    }

    async fn assess(&self, with: Value) -> Assessment {
        let check = HealthCheck {
            uses: "flux".into(),
            with: Some(with),
        };
        self.registry
            .assess(&[check], &self.env.namespace, Timestamp::now())
            .await
    }

    fn key(&self, name: &str) -> String {
        format!("Kustomization/{}/{name}", self.env.namespace)
    }
}

/// Flux's status for a Kustomization that applied `revision` at `generation`.
fn applied(generation: i64, revision: &str) -> Value {
    json!({
        "observedGeneration": generation,
        "lastAppliedRevision": revision,
        "lastAttemptedRevision": revision,
        "conditions": [{
            "type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
            "message": format!("Applied revision: {revision}"),
            "observedGeneration": generation,
            "lastTransitionTime": Timestamp::now().to_string(),
        }],
    })
}

fn app(expected_revision: &str) -> Value {
    json!({
        "resources": [{"kind": "Kustomization", "name": "app"}],
        "expectedRevision": expected_revision,
    })
}

#[tokio::test]
async fn a_kustomization_is_judged_as_flux_writes_it_at_one_get_per_check() {
    let flux = Flux::new().await;
    flux.create(
        KUSTOMIZATION,
        "app",
        json!({"interval": "5m", "path": "./app"}),
    )
    .await;

    let before = flux.assess(app("9f8c1a2b")).await;
    assert_eq!(before.status, Health::Progressing, "{before:?}");
    assert_eq!(
        before.issues,
        [format!(
            "{}: generation 1 has not been reconciled yet",
            flux.key("app")
        )]
    );
    // The first check resolves the kind through discovery; it is cached after that.
    assert_eq!(
        flux.requests.requests(),
        [
            "GET /apis/kustomize.toolkit.fluxcd.io/v1".to_string(),
            format!(
                "GET /apis/kustomize.toolkit.fluxcd.io/v1/namespaces/{}/kustomizations/app",
                flux.env.namespace
            ),
        ]
    );
    flux.requests.clear();

    flux.write_status(KUSTOMIZATION, "app", applied(1, REVISION))
        .await;
    let ready = flux.assess(app("9f8c1a2b")).await;
    assert_eq!(ready.status, Health::Healthy, "{ready:?}");
    assert_eq!(ready.issues, Vec::<String>::new());
    assert_eq!(
        ready.details,
        Some(json!({"flux": {
            flux.key("app"): {"health": "Healthy", "revision": REVISION},
        }}))
    );
    assert_eq!(
        flux.requests.requests().len(),
        1,
        "one GET, discovery cached"
    );

    let elsewhere = flux.assess(app("0123abcd")).await;
    assert_eq!(elsewhere.status, Health::Progressing, "{elsewhere:?}");
    assert_eq!(
        elsewhere.issues,
        [format!(
            "{}: Flux has not applied 0123abc yet; the last applied is 9f8c1a2",
            flux.key("app")
        )]
    );

    // A new generation the status has not caught up with is stale again.
    flux.api(KUSTOMIZATION)
        .patch(
            "app",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"path": "./app/v2"}})),
        )
        .await
        .unwrap();
    let stale = flux.assess(app("9f8c1a2b")).await;
    assert_eq!(stale.status, Health::Progressing, "{stale:?}");
    assert!(stale.issues[0].contains("generation 2"), "{stale:?}");
}

#[tokio::test]
async fn what_cannot_be_read_is_unknown_and_says_why() {
    let flux = Flux::new().await;
    let namespace = flux.env.namespace.clone();

    let missing = flux.assess(app("")).await;
    assert_eq!(missing.status, Health::Unknown);
    assert_eq!(missing.issues, [format!("{}: not found", flux.key("app"))]);

    let unserved = flux
        .assess(json!({"resources": [{"kind": "HelmRelease", "name": "api"}]}))
        .await;
    assert_eq!(unserved.status, Health::Unknown);
    assert_eq!(
        unserved.issues,
        [format!(
            "HelmRelease/{namespace}/api: cannot read it: the cluster does not serve HelmRelease in helm.toolkit.fluxcd.io/v2 (is its CRD installed?)"
        )]
    );

    flux.requests.clear();
    let elsewhere = flux
        .assess(json!({"resources": [{"kind": "Kustomization", "name": "app", "namespace": "flux-system"}]}))
        .await;
    assert_eq!(elsewhere.status, Health::Unknown);
    assert!(
        elsewhere.issues[0].contains("references outside namespace"),
        "{elsewhere:?}"
    );
    assert_eq!(
        flux.requests.requests(),
        Vec::<String>::new(),
        "refused unread"
    );

    let bad = flux.assess(json!({"resources": []})).await;
    assert_eq!(
        (bad.status, bad.issues),
        (
            Health::Unknown,
            vec!["flux check: no resources to check".to_string()]
        )
    );
}

#[tokio::test]
async fn a_forbidden_read_is_unknown_with_the_api_servers_answer() {
    let flux = Flux::as_identity(Identity::Alice).await;
    flux.create(KUSTOMIZATION, "app", json!({})).await;
    let forbidden = flux.assess(app("")).await;
    assert_eq!(forbidden.status, Health::Unknown);
    assert!(
        forbidden.issues[0].contains("cannot read it") && forbidden.issues[0].contains("403"),
        "{forbidden:?}"
    );
}

#[tokio::test]
async fn a_remote_cluster_is_read_through_the_kubeconfig_in_a_secret() {
    let flux = Flux::new().await;
    flux.create(KUSTOMIZATION, "app", json!({})).await;
    flux.write_status(KUSTOMIZATION, "app", applied(1, REVISION))
        .await;
    let endpoint = flux.env.endpoint();
    // Labelled as the settings page's "connect cluster" labels its Secrets, which opts
    // them in as kubeconfigs (DECISION 147).
    let secret = |name: &str, data: BTreeMap<String, String>| Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some([(wellknown::LABEL_CLUSTER.to_string(), "true".to_string())].into()),
            ..ObjectMeta::default()
        },
        data: Some(
            data.into_iter()
                .map(|(k, v)| (k, ByteString(v.into_bytes())))
                .collect(),
        ),
        ..Secret::default()
    };
    let value = |kubeconfig: String| BTreeMap::from([("value".to_string(), kubeconfig)]);
    // The "remote" cluster is the test's own API server, reached as someone else: what
    // the verdict says about permissions shows which credentials were used.
    flux.env
        .create(secret(
            "as-admin",
            value(endpoint.kubeconfig_yaml(Identity::Admin)),
        ))
        .await;
    flux.env
        .create(secret(
            "as-alice",
            value(endpoint.kubeconfig_yaml(Identity::Alice)),
        ))
        .await;
    // JSON is YAML: the kubeconfig is edited as a value and handed over as JSON.
    let mut exec: Value =
        serde_yaml_ng::from_str(&endpoint.kubeconfig_yaml(Identity::Admin)).unwrap();
    for user in exec["users"].as_array_mut().unwrap() {
        user["user"] = json!({"exec": {
            "apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/true",
        }});
    }
    let exec = exec.to_string();
    flux.env.create(secret("runs-a-program", value(exec))).await;
    let down = endpoint
        .kubeconfig_yaml(Identity::Admin)
        .replace(&endpoint.server, "https://127.0.0.1:1");
    flux.env.create(secret("down", value(down))).await;
    flux.env
        .create(secret(
            "no-value",
            BTreeMap::from([("kubeconfig".into(), "x".into())]),
        ))
        .await;
    // Flux's other conventions (DECISION 154): `value.yaml` when there is no `value`,
    // and a key the reference names — one Secret may hold several clusters.
    flux.env
        .create(secret(
            "flux-style",
            BTreeMap::from([(
                "value.yaml".to_string(),
                endpoint.kubeconfig_yaml(Identity::Admin),
            )]),
        ))
        .await;
    flux.env
        .create(secret(
            "fleet",
            BTreeMap::from([
                (
                    "eu-1".to_string(),
                    endpoint.kubeconfig_yaml(Identity::Admin),
                ),
                (
                    "eu-2".to_string(),
                    endpoint.kubeconfig_yaml(Identity::Alice),
                ),
            ]),
        ))
        .await;
    // Without an opt-in label the kubeconfig is not used (nor parsed); the general one,
    // `hecate.dev/usable`, opts a Secret in as a kubeconfig too.
    let admin = endpoint.kubeconfig_yaml(Identity::Admin);
    let mut unlabelled = secret("unlabelled", value(admin.clone()));
    unlabelled.metadata.labels = None;
    flux.env.create(unlabelled).await;
    let mut usable = secret("usable", value(admin));
    usable.metadata.labels =
        Some([(wellknown::LABEL_USABLE.to_string(), "true".to_string())].into());
    flux.env.create(usable).await;

    let through = |secret: &str| {
        json!({
            "resources": [{"kind": "Kustomization", "name": "app"}],
            "expectedRevision": REVISION,
            "clusterRef": {"name": secret},
        })
    };
    let remote = flux.assess(through("as-admin")).await;
    assert_eq!(remote.status, Health::Healthy, "{remote:?}");
    let again = flux.assess(through("as-admin")).await;
    assert_eq!(again.status, Health::Healthy, "{again:?}");
    assert_eq!(flux.assess(through("usable")).await.status, Health::Healthy);
    assert_eq!(
        flux.assess(through("flux-style")).await.status,
        Health::Healthy
    );
    let keyed = |key: &str| {
        json!({
            "resources": [{"kind": "Kustomization", "name": "app"}],
            "expectedRevision": REVISION,
            "clusterRef": {"name": "fleet", "key": key},
        })
    };
    assert_eq!(flux.assess(keyed("eu-1")).await.status, Health::Healthy);
    // eu-2 is alice's kubeconfig: the key chose whose credentials were used.
    let as_alice = flux.assess(keyed("eu-2")).await;
    assert!(
        as_alice.issues.iter().any(|i| i.contains("403")),
        "{as_alice:?}"
    );
    let missing = flux.assess(keyed("eu-3")).await;
    assert_eq!(missing.status, Health::Unknown);
    assert!(
        missing
            .issues
            .iter()
            .any(|i| i.contains("it has no key \"eu-3\"")),
        "{missing:?}"
    );

    let cases = [
        ("as-alice", "403"),
        ("runs-a-program", "run a program (exec)"),
        ("down", "cannot reach the cluster of Secret"),
        ("no-value", "neither key \"value\" nor \"value.yaml\""),
        ("absent", "kubeconfig Secret absent does not exist"),
        ("unlabelled", "is not labelled hecate.dev/cluster=true"),
    ];
    for (secret, problem) in cases {
        let assessment = flux.assess(through(secret)).await;
        assert_eq!(
            assessment.status,
            Health::Unknown,
            "{secret}: {assessment:?}"
        );
        assert!(
            assessment.issues.iter().any(|i| i.contains(problem)),
            "{secret}: {:?} lacks {problem:?}",
            assessment.issues
        );
    }

    // A remote cluster does not relax the namespace rule.
    let elsewhere = flux
        .assess(json!({
            "resources": [{"kind": "Kustomization", "name": "app", "namespace": "flux-system"}],
            "clusterRef": {"name": "as-admin"},
        }))
        .await;
    assert_eq!(elsewhere.status, Health::Unknown);
    assert!(
        elsewhere.issues[0].contains("references outside namespace"),
        "{elsewhere:?}"
    );
}

/// A connected cluster whose kubeconfig gets its token from an `exec` plugin (as
/// EKS's, GKE's and AKS's do) is reached only where the operator allows plugins: the
/// plugin runs once while its token is fresh, and its failures are said in our words.
#[tokio::test]
async fn a_kubeconfigs_exec_plugin_runs_only_where_the_operator_allows_it() {
    use std::os::unix::fs::PermissionsExt as _;
    let (allowed, refused) =
        tokio::join!(Flux::with_exec(Identity::Admin, Exec::Allowed), Flux::new());
    let endpoint = allowed.env.endpoint();
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let token = endpoint.tokens[&Identity::Admin].clone();
    let expires = Timestamp::now() + jiff::SignedDuration::from_hours(1);
    let plugin = |name: &str, body: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let issuer = plugin(
        "issuer.sh",
        format!(
            r#"echo run >> {runs}
echo '{{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{{"token":"{token}","expirationTimestamp":"{expires}"}}}}'"#,
            runs = runs.display()
        ),
    );
    let broken = plugin("broken.sh", "echo SECRET-WORDS >&2; exit 7".into());
    // The admin's kubeconfig, its user's token replaced by the plugin.
    let kubeconfig = |command: &std::path::Path| {
        let mut config: Value =
            serde_yaml_ng::from_str(&endpoint.kubeconfig_yaml(Identity::Admin)).unwrap();
        for user in config["users"].as_array_mut().unwrap() {
            user["user"] = json!({"exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": command,
                "args": ["token", "--cluster", "eu-1"],
                "interactiveMode": "Never",
            }});
        }
        config.to_string()
    };
    for flux in [&allowed, &refused] {
        flux.create(KUSTOMIZATION, "app", json!({})).await;
        flux.write_status(KUSTOMIZATION, "app", applied(1, REVISION))
            .await;
        for (name, command) in [("eks", &issuer), ("broken", &broken)] {
            let secret: Secret = serde_json::from_value(json!({
                "metadata": {"name": name, "labels": {wellknown::LABEL_CLUSTER: "true"}},
                "stringData": {"value": kubeconfig(command)},
            }))
            .unwrap();
            flux.env.create(secret).await;
        }
    }
    let through = |secret: &str| {
        json!({
            "resources": [{"kind": "Kustomization", "name": "app"}],
            "expectedRevision": REVISION,
            "clusterRef": {"name": secret},
        })
    };

    // Allowed: the plugin's token reaches the cluster, and is kept while fresh.
    for _ in 0..2 {
        let reached = allowed.assess(through("eks")).await;
        assert_eq!(reached.status, Health::Healthy, "{reached:?}");
    }
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "run\n");
    let failing = allowed.assess(through("broken")).await;
    assert_eq!(failing.status, Health::Unknown);
    assert!(
        failing.issues[0].contains("its exec plugin failed (exit status 7)")
            && !failing.issues[0].contains("SECRET"),
        "{failing:?}"
    );

    // Refused by default, with the flag that would allow it named.
    let unallowed = refused.assess(through("eks")).await;
    assert_eq!(unallowed.status, Health::Unknown);
    assert!(
        unallowed.issues[0].contains("it asks to run a program (exec)")
            && unallowed.issues[0].contains("--insecure-kubeconfig-exec"),
        "{unallowed:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap(),
        "run\n",
        "refused, the plugin never ran"
    );
}

#[tokio::test]
async fn the_flagger_verifier_follows_a_canary() {
    let env = TestEnv::new().await;
    standins::install(&env.admin, &[CANARY]).await.unwrap();
    let canaries: Api<DynamicObject> =
        Api::namespaced_with(env.admin.clone(), &env.namespace, &CANARY.api_resource());
    let namespace = env.namespace.as_str();

    let absent = look(&env, json!({"name": "api"})).await.unwrap_err();
    assert!(
        matches!(&absent, VerifyError::NotFound(what) if *what == format!("Canary {namespace}/api")),
        "{absent:?}"
    );

    let canary: DynamicObject = serde_json::from_value(json!({
        "apiVersion": CANARY.api_version(), "kind": "Canary",
        "metadata": {"name": "api"},
        "spec": {"targetRef": {"kind": "Deployment", "name": "api"}},
    }))
    .unwrap();
    canaries
        .create(&PostParams::default(), &canary)
        .await
        .unwrap();

    let cases = [
        (None, json!({"name": "api"}), Seen::NotYet, "no phase yet"),
        (
            Some(json!({"phase": "Initialized"})),
            json!({"name": "api"}),
            Seen::NotYet,
            "Initialized",
        ),
        (
            Some(json!({
                "phase": "Failed", "failedChecks": 3,
                "conditions": [{"type": "Promoted", "status": "False", "reason": "Failed",
                                "message": "Canary analysis failed, Deployment api scaled to zero."}],
            })),
            json!({"name": "api", "namespace": namespace}),
            Seen::Refused,
            "failed after 3 failed checks: Canary analysis failed, Deployment api scaled to zero.",
        ),
        (
            Some(json!({"phase": "Succeeded"})),
            json!({"name": "api"}),
            Seen::Pass,
            "succeeded",
        ),
    ];
    for (status, with, seen, message) in cases {
        if let Some(status) = status {
            set_status(&canaries, status).await;
        }
        let look = look(&env, with).await.unwrap();
        assert_eq!(look.seen, seen, "{look:?}");
        assert!(look.message.contains(message), "{look:?} lacks {message:?}");
    }

    let unnamed = look(&env, json!({})).await.unwrap_err();
    assert!(matches!(unnamed, VerifyError::Config { .. }), "{unnamed:?}");
}

/// One look by the `flagger` verifier, with `with`, at a crossing in `env`'s namespace,
/// as the controller runs by default (`--no-cross-namespace-refs`).
async fn look(env: &TestEnv, with: Value) -> Result<Look, VerifyError> {
    look_refusing(env, with, true).await
}

/// [`look`], refusing Canaries of other namespaces or not.
async fn look_refusing(env: &TestEnv, with: Value, refuse: bool) -> Result<Look, VerifyError> {
    let gate = Gate::new("staging", GateSpec::default());
    let passage = Passage::new("staging-1", PassageSpec::default());
    let now = Timestamp::now();
    let subject = Subject {
        namespace: &env.namespace,
        gate: &gate,
        passage: &passage,
        started: now,
        now,
    };
    FlaggerVerifier::new(env.admin.clone(), refuse)
        .look(Some(&with), &subject)
        .await
}

/// A Canary of another namespace is refused, as a Flux object there is (#50): a Gate
/// author reads their own namespace only, unless the operator turns
/// `--no-cross-namespace-refs` off.
#[tokio::test]
async fn the_flagger_verifier_reads_no_canary_of_another_namespace() {
    let env = TestEnv::new().await;
    let other = TestEnv::new().await;
    standins::install(&env.admin, &[CANARY]).await.unwrap();
    let canaries: Api<DynamicObject> = Api::namespaced_with(
        other.admin.clone(),
        &other.namespace,
        &CANARY.api_resource(),
    );
    let canary: DynamicObject = serde_json::from_value(json!({
        "apiVersion": CANARY.api_version(), "kind": "Canary",
        "metadata": {"name": "api"},
        "spec": {"targetRef": {"kind": "Deployment", "name": "api"}},
    }))
    .unwrap();
    canaries
        .create(&PostParams::default(), &canary)
        .await
        .unwrap();
    set_status(&canaries, json!({"phase": "Succeeded"})).await;
    let elsewhere = json!({"name": "api", "namespace": other.namespace});

    let refused = look(&env, elsewhere.clone()).await.expect_err("refused");
    assert!(
        matches!(&refused, VerifyError::Config { .. })
            && refused.to_string().contains(&format!(
                "Canary {}/api: references outside namespace {} are refused",
                other.namespace, env.namespace
            )),
        "{refused}"
    );
    let allowed = look_refusing(&env, elsewhere, false).await.unwrap();
    assert_eq!(allowed.seen, Seen::Pass, "{allowed:?}");
}

/// Writes the Canary's status, as Flagger would.
async fn set_status(canaries: &Api<DynamicObject>, status: Value) {
    canaries
        .patch_status(
            "api",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .unwrap();
}
