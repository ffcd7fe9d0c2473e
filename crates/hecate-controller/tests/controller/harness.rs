//! A Gate reconciler over a test's namespace, with a clock the test moves, and the
//! helpers its cases share.

use std::sync::Arc;

use hecate_controller::events::Events;
use hecate_controller::gate::reads::Lists;
use hecate_controller::gate::{GateReconciler, Outcome};
use hecate_controller::metrics::Metrics;
use hecate_controller::verify;
use hecate_steps::clock::ManualClock;
use hecate_steps::health;
use hecate_testenv::TestEnv;
use hecate_types::{
    Admission, Bundle, BundleOrigin, Condition, Gate, GateSpec, Passage, PassagePhase,
    PassageStatus, PassageTemplate, Step, wellknown,
};
use jiff::Timestamp;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams};

pub(crate) use hecate_testenv::fixtures::{bundle, bundles_in_order};

/// A test's namespace and a Gate reconciler over it.
pub(crate) struct Harness {
    pub(crate) env: TestEnv,
    pub(crate) clock: ManualClock,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) reconciler: GateReconciler<Lists>,
}

impl Harness {
    /// No health checkers and no verifiers.
    pub(crate) async fn new() -> Self {
        Self::with(health::Checkers::new(), verify::Verifiers::new()).await
    }

    /// With these health checkers and verifiers.
    pub(crate) async fn with(health: health::Checkers, verifiers: verify::Verifiers) -> Self {
        Self::over(TestEnv::new().await, health, verifiers)
    }

    /// Another reconciler over the same namespace (a restarted controller): its own
    /// clock, metrics, checkers and verifiers.
    pub(crate) fn sibling(&self, health: health::Checkers, verifiers: verify::Verifiers) -> Self {
        Self::over(self.env.clone(), health, verifiers)
    }

    fn over(env: TestEnv, health: health::Checkers, verifiers: verify::Verifiers) -> Self {
        // Whole seconds: that is all a stored timestamp keeps.
        let clock = ManualClock::at(Timestamp::from_second(Timestamp::now().as_second()).unwrap());
        let metrics = Arc::new(Metrics::new());
        let reconciler = GateReconciler {
            client: env.admin.clone(),
            reads: Lists(env.admin.clone()),
            clock: Arc::new(clock.clone()),
            health,
            verifiers,
            events: Events::new(env.admin.clone(), "gate-controller", None),
            metrics: metrics.clone(),
            written: Default::default(),
            fides_server: None,
            outbox: Default::default(),
        };
        Self {
            env,
            clock,
            metrics,
            reconciler,
        }
    }

    /// Reconciles Gate `name`, which must succeed.
    pub(crate) async fn reconcile(&self, name: &str) -> Outcome {
        self.reconciler
            .reconcile_named(&self.env.namespace, name)
            .await
            .unwrap_or_else(|e| panic!("reconciling Gate {name}: {e}"))
    }

    /// Gate `name` as stored.
    pub(crate) async fn gate(&self, name: &str) -> Gate {
        self.env.api::<Gate>().get(name).await.unwrap()
    }

    /// Bundle `name` as stored.
    pub(crate) async fn bundle(&self, name: &str) -> Bundle {
        self.env.api::<Bundle>().get(name).await.unwrap()
    }

    /// Every Passage in the namespace, oldest name first.
    pub(crate) async fn passages(&self) -> Vec<Passage> {
        let mut passages = self
            .env
            .api::<Passage>()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        passages.sort_by_key(|p| p.metadata.creation_timestamp.clone());
        passages
    }

    /// The only Passage there is.
    pub(crate) async fn the_passage(&self) -> Passage {
        let passages = self.passages().await;
        assert_eq!(
            passages.len(),
            1,
            "expected exactly one Passage: {passages:#?}"
        );
        passages.into_iter().next().unwrap()
    }

    /// Writes `passage`'s phase and message, as the Passage controller would.
    pub(crate) async fn finish(
        &self,
        passage: &Passage,
        phase: PassagePhase,
        message: &str,
    ) -> Passage {
        let mut passage = passage.clone();
        passage.status = Some(PassageStatus {
            phase: Some(phase),
            message: message.into(),
            ..passage.status.unwrap_or_default()
        });
        self.env.write_status(&passage).await
    }

    /// Gate `name`'s Ready condition.
    pub(crate) async fn ready(&self, name: &str) -> Condition {
        let gate = self.gate(name).await;
        gate.status
            .unwrap_or_default()
            .conditions
            .into_iter()
            .find(|c| c.type_ == wellknown::condition::READY)
            .unwrap_or_else(|| panic!("Gate {name} has no Ready condition"))
    }

    /// Every Event in the namespace.
    pub(crate) async fn events(&self) -> Vec<Event> {
        Api::<Event>::namespaced(self.env.admin.clone(), &self.env.namespace)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
    }

    /// Waits (up to 10 s) until an Event with `reason` exists; the recorder writes in
    /// the background of nothing, but the API server may take a moment to list it.
    pub(crate) async fn event(&self, reason: &str) -> Event {
        for _ in 0..50 {
            if let Some(event) = self
                .events()
                .await
                .into_iter()
                .find(|e| e.reason.as_deref() == Some(reason))
            {
                return event;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        panic!("no {reason} Event: {:#?}", self.events().await)
    }
}

/// A step list the real step validation accepts: wait for Kustomization `app`.
pub(crate) fn steps() -> Vec<Step> {
    vec![Step {
        uses: "flux-wait".into(),
        with: Some(serde_json::json!({"resources": [{"kind": "Kustomization", "name": "app"}]})),
        ..Step::default()
    }]
}

/// A Gate admitting Beacon `app`'s Bundles after `after`, crossing with [`steps`].
pub(crate) fn gate_spec(auto: bool, after: &[&str], require_approval: bool) -> GateSpec {
    GateSpec {
        admits: vec![Admission {
            from: BundleOrigin {
                beacon: "app".into(),
            },
            after: after.iter().map(|s| s.to_string()).collect(),
            require_approval,
            approvals: None,
        }],
        passage: Some(PassageTemplate { steps: steps() }),
        auto,
        ..GateSpec::default()
    }
}

/// Creates Gate `name` with `spec`.
pub(crate) async fn create_gate(h: &Harness, name: &str, spec: GateSpec) -> Gate {
    h.env.create(Gate::new(name, spec)).await
}

/// Creates an automatic Gate `name` admitting `app` after `after`.
pub(crate) async fn auto_gate(h: &Harness, name: &str, after: &[&str]) -> Gate {
    create_gate(h, name, gate_spec(true, after, false)).await
}

/// Flux's stand-in CRDs installed, and Kustomization `name` in the test's namespace
/// reporting `revision` applied (Ready) — what a Gate watching it finds healthy.
pub(crate) async fn applied_kustomization(h: &Harness, name: &str, revision: &str) {
    use hecate_testenv::flux::{self as standins, KUSTOMIZATION};
    use kube::api::{Api, DynamicObject, PostParams};
    standins::install_flux_standins(&h.env.admin).await.unwrap();
    let kustomizations: Api<DynamicObject> = Api::namespaced_with(
        h.env.admin.clone(),
        &h.env.namespace,
        &KUSTOMIZATION.api_resource(),
    );
    let mut object = DynamicObject::new(name, &KUSTOMIZATION.api_resource());
    object.data = serde_json::json!({"spec": {"path": "./apps"}});
    kustomizations
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    standins::report_applied(
        &h.env.admin,
        KUSTOMIZATION,
        &h.env.namespace,
        name,
        revision,
    )
    .await
    .unwrap();
}

/// A client acting as the controller's identity, its ClusterRole installed and in
/// force in `h`'s namespace.
pub(crate) async fn controller_client(h: &Harness) -> kube::Client {
    hecate_testenv::rbac::install_controller_role(&h.env.admin)
        .await
        .unwrap();
    let client = h
        .env
        .client(hecate_testenv::Identity::HecateController)
        .await;
    let passages = Api::<Passage>::namespaced(client.clone(), &h.env.namespace);
    // RBAC reaches the authorizer a moment after it is written.
    crate::process::eventually(
        std::time::Duration::from_secs(10),
        "the controller's role",
        || async { passages.list(&Default::default()).await.ok().map(drop) },
    )
    .await;
    client
}

/// The controller's Passage reconciler over `h`'s namespace, as the controller's
/// identity (its role installed and in force), reading `clock`, its work directories
/// under the system's temporary directory in `work`.
pub(crate) async fn passage_reconciler(
    h: &Harness,
    clock: Arc<dyn hecate_steps::clock::Clock>,
    work: &str,
) -> hecate_controller::passage::PassageReconciler {
    let client = controller_client(h).await;
    // A rollout verifies its targets itself: `http` reaching this host, as the test
    // world's steps do.
    let mut verifiers = verify::Verifiers::new();
    let reach = hecate_steps::reach::Reach {
        local: true,
        own: Vec::new(),
    };
    verifiers
        .register(Arc::new(verify::HttpVerifier::new(client.clone(), reach)))
        .unwrap();
    hecate_controller::passage::PassageReconciler {
        client: client.clone(),
        clock,
        steps: hecate_steps::runners(&crate::process::test_world_tools(client.clone())).unwrap(),
        verifiers,
        events: Events::new(client, "passage-controller", None),
        metrics: Arc::new(Metrics::new()),
        work_root: std::env::temp_dir().join(work),
        fides_server: None,
        tracing: hecate_controller::telemetry::Tracing::off(),
    }
}
