//! What a crossing's steps may reach is the operator's to decide, not the Gate
//! author's (issue 30), shown through the controller process: a repository on the
//! controller's own disk only with `--allow-local-git`, a clone no larger than
//! `--max-checkout-size`, this host's addresses only with `--allow-local-http`, and the
//! controller's own metrics and probes never. Each refusal is recorded on the step, in
//! words that name the flag.

use std::time::Duration;

use hecate_steps::reason::Reason;
use hecate_testenv::world::{Repository, git};
use hecate_types::{Passage, PassagePhase, Step, StepPhase, StepStatus};
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;
use crate::process::{Controller, eventually, join_shard};

/// A test's namespace, its own shard.
async fn setup() -> Harness {
    let h = Harness::new().await;
    let ns = h.env.namespace.clone();
    join_shard(&h.env, &ns, &ns).await;
    h
}

/// An automatic Gate `name` whose crossing is `steps`.
async fn gate_with(h: &Harness, name: &str, steps: Vec<Step>) {
    let mut spec = gate_spec(true, &[], false);
    spec.passage.as_mut().unwrap().steps = steps;
    create_gate(h, name, spec).await;
}

fn step(uses: &str, with: Value) -> Step {
    Step {
        uses: uses.into(),
        with: Some(with),
        ..Step::default()
    }
}

/// Passage `name` once it has finished.
async fn finished(h: &Harness, name: &str) -> Passage {
    eventually(Duration::from_secs(30), name, || async {
        h.env
            .api::<Passage>()
            .get_opt(name)
            .await
            .unwrap()
            .filter(|p| p.is_terminal())
    })
    .await
}

/// The first step of a finished Passage `name`, and the Passage's phase.
async fn first_step(h: &Harness, name: &str) -> (PassagePhase, StepStatus) {
    let status = finished(h, name).await.status.unwrap();
    (status.phase(), status.steps[0].clone())
}

/// A fleet repository under `root`, whose `main` holds a `values.yaml`.
async fn fleet(root: &std::path::Path) -> Repository {
    Repository::create(root, "fleet", &["main"], &[("values.yaml", "app: {}\n")])
        .await
        .unwrap()
}

#[tokio::test]
async fn a_clone_of_the_controllers_own_disk_is_refused_unless_the_operator_allows_it() {
    let repos = tempfile::tempdir().unwrap();
    let fleet = fleet(repos.path()).await;
    let bare = fleet.bare.to_str().unwrap().to_string();
    assert!(fleet.url.starts_with("file://"), "{}", fleet.url);
    // Gate dev clones the file:// URL, Gate qa the bare path.
    async fn clones(h: &Harness, url: &str, bare: &str) {
        gate_with(h, "dev", vec![step("git-clone", json!({"repo": url}))]).await;
        gate_with(h, "qa", vec![step("git-clone", json!({"repo": bare}))]).await;
        bundle(&h.env, "b1").await;
    }

    // As deployed: refused, and the step says which flag would allow it.
    let h = setup().await;
    let _controller = Controller::start_as_deployed(&h.env, &h.env.namespace, &[]).await;
    clones(&h, &fleet.url, &bare).await;
    for passage in ["dev-1", "qa-1"] {
        let (phase, step) = first_step(&h, passage).await;
        assert_eq!(
            (phase, step.phase, step.reason.as_str()),
            (
                PassagePhase::Failed,
                StepPhase::Failed,
                Reason::NotAllowed.as_str()
            ),
            "{passage}: {}",
            step.message
        );
        assert!(
            step.message.contains("the controller's own disk")
                && step.message.contains("--allow-local-git"),
            "{passage}: {}",
            step.message
        );
        assert_eq!(step.attempts, 1, "{passage}: refused once, not retried");
        eprintln!("{passage}: {}", step.message);
    }

    // With the operator's flag, the same Gates clone.
    let h = setup().await;
    let _controller =
        Controller::start_as_deployed(&h.env, &h.env.namespace, &["--allow-local-git"]).await;
    clones(&h, &fleet.url, &bare).await;
    let head = fleet.head("main").await.unwrap();
    for passage in ["dev-1", "qa-1"] {
        let (phase, step) = first_step(&h, passage).await;
        assert_eq!(
            (phase, step.phase),
            (PassagePhase::Succeeded, StepPhase::Succeeded),
            "{passage}: {}",
            step.message
        );
        assert_eq!(step.output.unwrap()["sha"], json!(head), "{passage}");
    }
}

#[tokio::test]
async fn a_clone_larger_than_the_operators_limit_fails_and_says_so() {
    let repos = tempfile::tempdir().unwrap();
    let fleet = fleet(repos.path()).await;
    // 6 MiB of hexadecimal noise: about 3 MiB however git packs it.
    let mut noise = String::with_capacity(6 << 20);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    while noise.len() < 6 << 20 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        noise.push_str(&format!("{x:016x}"));
    }
    fleet
        .commit("main", "blob.txt", &noise, "a large file")
        .await
        .unwrap();
    let packed = git(&fleet.bare, &["count-objects", "-vH"]).await.unwrap();
    eprintln!("the fleet's objects: {}", packed.replace('\n', "; "));

    let h = setup().await;
    let _controller =
        Controller::start(&h.env, &h.env.namespace, &["--max-checkout-size=1Mi"]).await;
    gate_with(
        &h,
        "dev",
        vec![step("git-clone", json!({"repo": fleet.url, "depth": 1}))],
    )
    .await;
    bundle(&h.env, "b1").await;
    let (phase, step) = first_step(&h, "dev-1").await;
    assert_eq!(
        (phase, step.phase, step.reason.as_str()),
        (
            PassagePhase::Failed,
            StepPhase::Failed,
            Reason::CheckoutTooLarge.as_str()
        ),
        "{}",
        step.message
    );
    assert!(
        step.message.contains("1 MiB") && step.message.contains("--max-checkout-size"),
        "{}",
        step.message
    );
    assert_eq!(
        step.attempts, 1,
        "terminal: the same clone would be as large"
    );
    eprintln!("dev-1: {}", step.message);
}

#[tokio::test]
async fn an_http_step_reaches_this_host_only_if_allowed_and_the_controller_itself_never() {
    let hook = MockServer::start().await;
    Mock::given(path("/hook"))
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&hook)
        .await;
    let call = |url: String| step("http", json!({"url": url}));

    // As deployed: loopback is this host's, refused.
    let h = setup().await;
    let _controller = Controller::start_as_deployed(&h.env, &h.env.namespace, &[]).await;
    gate_with(&h, "dev", vec![call(format!("{}/hook", hook.uri()))]).await;
    bundle(&h.env, "b1").await;
    let (phase, step) = first_step(&h, "dev-1").await;
    assert_eq!(
        (phase, step.reason.as_str()),
        (PassagePhase::Failed, Reason::NotAllowed.as_str()),
        "{}",
        step.message
    );
    assert!(
        step.message.contains("--allow-local-http"),
        "{}",
        step.message
    );
    eprintln!("dev-1: {}", step.message);
    assert!(hook.received_requests().await.unwrap().is_empty());

    // With loopback allowed the hook answers; the controller's own metrics and probes
    // still do not, however they are named.
    let h = setup().await;
    let controller = Controller::start(&h.env, &h.env.namespace, &[]).await;
    let (metrics, probes) = (controller.metrics.port(), controller.probes.port());
    let gates = [
        ("dev", format!("{}/hook", hook.uri())),
        ("metrics", format!("http://127.0.0.1:{metrics}/metrics")),
        ("named", format!("http://localhost:{metrics}/metrics")),
        ("any", format!("http://0.0.0.0:{metrics}/metrics")),
        ("probes", format!("http://127.0.0.1:{probes}/readyz")),
    ];
    for (gate, url) in &gates {
        gate_with(&h, gate, vec![call(url.clone())]).await;
    }
    bundle(&h.env, "b1").await;
    let (phase, step) = first_step(&h, "dev-1").await;
    assert_eq!(phase, PassagePhase::Succeeded, "{}", step.message);
    for (gate, _) in &gates[1..] {
        let (phase, step) = first_step(&h, &format!("{gate}-1")).await;
        assert_eq!(
            (phase, step.reason.as_str()),
            (PassagePhase::Failed, Reason::NotAllowed.as_str()),
            "{gate}: {}",
            step.message
        );
        assert!(
            step.message.contains("the controller itself serves"),
            "{gate}: {}",
            step.message
        );
        assert_eq!(step.output, None, "{gate}: nothing of its answer is kept");
        eprintln!("{gate}-1: {}", step.message);
    }
    assert!(
        controller.scrape().await.contains("hecate_"),
        "the metrics are there, only not for steps"
    );
}

/// This machine's name, which must resolve to one of its own addresses (as `/etc/hosts`
/// makes it in a container or a VM): a name that is neither `localhost` nor an address.
async fn this_hosts_name() -> String {
    let name = tokio::fs::read_to_string("/proc/sys/kernel/hostname")
        .await
        .unwrap()
        .trim()
        .to_string();
    assert!(
        !name.is_empty() && !name.eq_ignore_ascii_case("localhost"),
        "{name:?}"
    );
    let found: Vec<_> = tokio::net::lookup_host((name.as_str(), 0))
        .await
        .unwrap_or_else(|e| panic!("this test needs the machine's name {name:?} to resolve: {e}"))
        .collect();
    assert!(
        found.iter().any(|a| hecate_steps::reach::is_local(a.ip())),
        "this test needs the machine's name {name:?} to resolve to one of its own addresses: {found:?}"
    );
    name
}

/// With this host's addresses allowed, a redirect to a *name* that resolves here —
/// not `localhost`, not an address, so no redirect policy can tell — still reaches
/// neither the controller's metrics nor its probes: every address is judged with its
/// port when the connection is made (#50, DECISION 149). The `http` verifier sends its
/// requests the same way.
#[tokio::test]
async fn a_redirect_to_a_name_of_this_host_never_reaches_the_controller() {
    use hecate_controller::verify::HttpVerifier;
    use hecate_steps::reach::Reach;
    use wiremock::matchers::path;

    let host = this_hosts_name().await;
    let h = setup().await;
    let controller = Controller::start_serving_everywhere(&h.env, &h.env.namespace).await;
    let (metrics, probes) = (controller.metrics.port(), controller.probes.port());
    let away = MockServer::start().await;
    for (route, port, to) in [
        ("/to-metrics", metrics, "metrics"),
        ("/to-probes", probes, "readyz"),
    ] {
        Mock::given(path(route))
            .respond_with(
                ResponseTemplate::new(302)
                    .insert_header("location", format!("http://{host}:{port}/{to}")),
            )
            .mount(&away)
            .await;
    }
    let to = |route: &str| format!("{}{route}", away.uri());
    gate_with(
        &h,
        "metrics",
        vec![step("http", json!({"url": to("/to-metrics")}))],
    )
    .await;
    gate_with(
        &h,
        "probes",
        vec![step("http", json!({"url": to("/to-probes")}))],
    )
    .await;
    bundle(&h.env, "b1").await;
    for gate in ["metrics", "probes"] {
        let (phase, step) = first_step(&h, &format!("{gate}-1")).await;
        assert_eq!(
            (phase, step.reason.as_str()),
            (PassagePhase::Failed, Reason::NotAllowed.as_str()),
            "{gate}: {}",
            step.message
        );
        assert!(
            step.message.contains("the controller itself serves") && step.message.contains(&host),
            "{gate}: {}",
            step.message
        );
        assert_eq!(step.output, None, "{gate}: nothing of its answer is kept");
        eprintln!("{gate}-1: {}", step.message);
    }

    let own = [metrics, probes].map(|port| std::net::SocketAddr::from(([0, 0, 0, 0], port)));
    let verifier = HttpVerifier::new(
        crate::verifiers::no_cluster(),
        Reach {
            local: true,
            own: own.to_vec(),
        },
    );
    let refused = crate::verifiers::look(&verifier, &json!({"url": to("/to-metrics")}))
        .await
        .expect_err("refused");
    assert!(
        refused.to_string().contains("the controller itself serves"),
        "{refused}"
    );
    assert!(controller.scrape().await.contains("hecate_"));
}
