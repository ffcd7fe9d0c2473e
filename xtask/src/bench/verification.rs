//! Verification at once (issue 32, DECISION 139): `hecate-controller` as its own
//! process, a hundred Gates (`small`: twenty) that each verify their crossing three ways
//! — `http` and `prometheus` every 5 s (the floor) until three passes in a row, and a 10-minute
//! `soak` — and ten plain Gates that verify nothing. One loopback server stands in for
//! the smoke endpoint, for Prometheus' `/api/v1/query` (a vector sample of 0.5) and for
//! the crossings' one `http` step, and counts what it receives per path.
//!
//! Measured: the stand-ins' requests per verifier look (looks read from the Passages'
//! `status.verification`); the controller's API-server requests per Gate reconcile
//! while the looks run, by its own count; once every Gate is soaking, what a minute
//! costs the stand-ins and the API server; and the crossing latency of the ten plain
//! Gates (their Bundle created → each Passage Succeeded) while the hundred start
//! verifying, against the same ten with nothing verifying and once more while every
//! Gate soaks.
//!
//! Each run uses a new namespace and removes it afterwards.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hecate_testenv::Endpoint;
use hecate_types::{
    Admission, Bundle, BundleOrigin, Gate, GateSpec, Passage, PassagePhase, PassageTemplate, Step,
    Verification, VerificationPhase,
};
use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde::Serialize;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::Scale;
use super::controller::{Breakdown, Process};

/// The label that makes a run's namespace the benched controller's shard.
const SHARD_LABEL: &str = "hecate.dev/bench-verification";

/// Gates that verify nothing, crossing beside the verifying ones.
const PLAIN: usize = 10;
/// How long the soaking Gates are watched for requests.
const SOAK_WINDOW: Duration = Duration::from_secs(60);
/// The verifications' cadence, as they declare it: the shortest a Gate may ask for
/// (`rules::verification::MIN_INTERVAL`; the runs of 2026-12-03 used 2 s, before it).
const INTERVAL_S: u64 = 5;
const SUCCESSES: i32 = 3;
/// How long each soak lasts, in minutes.
const SOAK_MINUTES: i64 = 10;

/// The stand-ins' paths.
const HOOK: &str = "/hook";
const SMOKE: &str = "/smoke";
const QUERY: &str = "/api/v1/query";

impl Scale {
    fn verifying_gates(self) -> usize {
        match self {
            Self::Small => 20,
            Self::Large | Self::Fleet => 100,
        }
    }
}

/// What one run measured.
#[derive(Serialize)]
pub(crate) struct VerificationResults {
    /// Gates verifying (three verifiers each), and plain Gates.
    pub(crate) verifying: usize,
    pub(crate) plain: usize,
    /// Their Bundle created → every verifying Gate's crossing Succeeded.
    pub(crate) verifying_crossed_ms: f64,
    /// → every `http` and `prometheus` verification Verified (the soaks still running).
    pub(crate) looks_done_ms: f64,
    /// Looks recorded on the Passages (passes, failures and looks that could not judge)
    /// and requests the stand-in received, per verifier.
    pub(crate) http_looks: f64,
    pub(crate) http_requests: f64,
    pub(crate) prometheus_looks: f64,
    pub(crate) prometheus_requests: f64,
    /// Looks that did not pass (failures and looks that could not judge), all
    /// verifiers: 0 when every look saw the stand-ins' healthy answer.
    pub(crate) looks_not_passing: f64,
    /// Requests to the stand-ins on any other path (a soak has none to make).
    pub(crate) other_requests: f64,
    /// From every verifying crossing Succeeded to every look done (the plain
    /// crossings run inside it): Gate reconciles, the controller's requests, by verb
    /// and resource.
    pub(crate) looking_window_ms: f64,
    pub(crate) looking_gate_reconciles: f64,
    /// http and prometheus looks taken inside that window.
    pub(crate) looking_looks: f64,
    pub(crate) looking_requests: f64,
    pub(crate) looking_breakdown: Breakdown,
    /// The same, less what the plain crossings cost in the baseline.
    pub(crate) looking_requests_per_reconcile_net: f64,
    /// Every Gate soaking: over `soak_window_s`, requests to the stand-ins, the
    /// controller's requests (by verb and resource) and Gate reconciles.
    pub(crate) soak_window_s: f64,
    pub(crate) soak_next_look_min_s: f64,
    pub(crate) soak_next_look_max_s: f64,
    pub(crate) soak_stand_in_requests: f64,
    pub(crate) soak_requests: f64,
    pub(crate) soak_breakdown: Breakdown,
    pub(crate) soak_gate_reconciles: f64,
    /// The plain Gates' crossings (Bundle created → Passage Succeeded), with nothing
    /// verifying and while the verifying Gates look: p50, p99 (of ten: the slowest).
    pub(crate) baseline_p50_ms: f64,
    pub(crate) baseline_max_ms: f64,
    pub(crate) during_p50_ms: f64,
    pub(crate) during_max_ms: f64,
    /// Once more after the minute of soaking, while every Gate soaks.
    pub(crate) soaking_p50_ms: f64,
    pub(crate) soaking_max_ms: f64,
    /// What the baseline's ten crossings cost: controller requests, Gate reconciles.
    pub(crate) baseline_requests: f64,
    pub(crate) baseline_gate_reconciles: f64,
    /// Looks the verifying Gates had taken, http and prometheus together, when the
    /// last plain crossing finished (how much of the looking the crossings met).
    pub(crate) looks_before_plain_done: f64,
    /// Resident memory at the end, and its peak.
    pub(crate) rss_mib: f64,
    pub(crate) peak_rss_mib: f64,
}

pub(crate) async fn run(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    scale: Scale,
) -> anyhow::Result<VerificationResults> {
    let namespace = format!(
        "bench-verification-{}-{}",
        scale.name(),
        jiff::Timestamp::now().as_second()
    );
    super::shard_namespace(admin, &namespace, SHARD_LABEL).await?;
    let result = measure(root, endpoint, admin, &namespace, scale.verifying_gates()).await;
    Api::<Namespace>::all(admin.clone())
        .delete(&namespace, &DeleteParams::background())
        .await?;
    result
}

async fn measure(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    namespace: &str,
    verifying: usize,
) -> anyhow::Result<VerificationResults> {
    let stand_in = StandIn::start().await?;
    let process = Process::start(
        root,
        endpoint,
        "bench-verification",
        &format!("{SHARD_LABEL}=true"),
    )?;
    process.serving().await?;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let gates = Api::<Gate>::namespaced(admin.clone(), namespace);
    let bundles = Api::<Bundle>::namespaced(admin.clone(), namespace);
    let passages = Api::<Passage>::namespaced(admin.clone(), namespace);
    let verifying_names: Vec<String> = (0..verifying).map(|i| format!("v{i}")).collect();
    let plain_names: Vec<String> = (0..PLAIN).map(|i| format!("p{i}")).collect();
    for name in &verifying_names {
        gates
            .create(&PostParams::default(), &gate(name, "v", &stand_in, true))
            .await?;
    }
    for name in &plain_names {
        gates
            .create(&PostParams::default(), &gate(name, "p", &stand_in, false))
            .await?;
    }
    // Every Gate reconciled once (a Ready condition), then the start-up's last wave.
    let started = Instant::now();
    loop {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(120),
            "the controller did not reconcile {} Gates within 2 minutes (its log: {})",
            verifying + PLAIN,
            process.log.display()
        );
        let ready = gates
            .list(&ListParams::default())
            .await?
            .items
            .iter()
            .filter(|g| g.status.as_ref().is_some_and(|s| !s.conditions.is_empty()))
            .count();
        if ready == verifying + PLAIN {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;

    // The baseline: the plain Gates cross with nothing verifying.
    eprintln!("[bench] {PLAIN} plain crossings, nothing verifying…");
    let requests_before = process.requests().await?;
    let reconciles_before = process.reconciles("gate").await?;
    let (baseline, _) = plain_crossings(&bundles, &passages, &plain_names, 1, false).await?;
    // The last status writes of those crossings land a moment after the Passages
    // succeed.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let baseline_requests = process.requests().await? - requests_before;
    let baseline_gate_reconciles = process.reconciles("gate").await? - reconciles_before;

    // The verifying Gates cross at once; the plain ones right after they have.
    eprintln!("[bench] {verifying} verifying Gates cross at once…");
    let created = Instant::now();
    bundles
        .create(
            &PostParams::default(),
            &super::controller::bundle("v-1", "v", 1),
        )
        .await?;
    loop {
        anyhow::ensure!(
            created.elapsed() < Duration::from_secs(600),
            "{verifying} crossings did not finish within 10 minutes (the controller's log: {})",
            process.log.display()
        );
        let all = of_gates(&passages, "v").await?;
        if let Some(failed) = all
            .iter()
            .find(|p| matches!(p.phase(), PassagePhase::Failed | PassagePhase::Aborted))
        {
            anyhow::bail!("a crossing failed: {:?}", failed.status);
        }
        if all
            .iter()
            .filter(|p| p.phase() == PassagePhase::Succeeded)
            .count()
            == verifying
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let verifying_crossed = created.elapsed();
    let looking_from = Instant::now();
    let looking_requests_before = process.requests_by_kind().await?;
    let (http, prometheus, _) = looks(&of_gates(&passages, "v").await?);
    let looks_before_window = http + prometheus;
    let looking_reconciles_before = process.reconciles("gate").await?;

    eprintln!("[bench] {PLAIN} plain crossings while they verify…");
    let (during, looks_before_plain_done) =
        plain_crossings(&bundles, &passages, &plain_names, 2, true).await?;

    // Every http and prometheus verification decided; the soaks running.
    let soaked = loop {
        anyhow::ensure!(
            looking_from.elapsed() < Duration::from_secs(300),
            "the verifications' looks were not done within 5 minutes (the controller's \
             log: {})",
            process.log.display()
        );
        let all = of_gates(&passages, "v").await?;
        if let Some(failed) = all.iter().find(|p| verification_failed(p)) {
            anyhow::bail!(
                "a verification said no: {:?}",
                failed.status.as_ref().and_then(|s| s.verification.as_ref())
            );
        }
        if all.len() == verifying && all.iter().all(soaking) {
            break all;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let looks_done = created.elapsed();
    let looking_window = looking_from.elapsed();
    let looking_breakdown = process
        .requests_by_kind()
        .await?
        .since(&looking_requests_before, 1.0);
    // (A sum of nothing is -0.)
    let looking_requests: f64 = looking_breakdown.0.values().sum::<f64>() + 0.0;
    let looking_gate_reconciles = process.reconciles("gate").await? - looking_reconciles_before;
    let now = jiff::Timestamp::now();
    let soak_ends: Vec<f64> = soaked
        .iter()
        .filter_map(|p| {
            let v = p.status.as_ref()?.verification.as_ref()?;
            let soak = v.verifiers.iter().find(|v| v.uses == "soak")?;
            Some(
                soak.next_look_at
                    .as_ref()?
                    .0
                    .duration_since(now)
                    .as_secs_f64(),
            )
        })
        .collect();
    anyhow::ensure!(
        soak_ends.len() == verifying,
        "{} of {verifying} soaks name no next look",
        verifying - soak_ends.len()
    );
    let (http_looks, prometheus_looks, looks_not_passing) = looks(&soaked);

    // A minute of soaking: what does it cost?
    eprintln!(
        "[bench] every Gate soaking: {} s of it…",
        SOAK_WINDOW.as_secs()
    );
    // The last looks' writes land a moment after the Passages show them.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let seen_before = stand_in.total();
    let soak_requests_before = process.requests_by_kind().await?;
    let soak_reconciles_before = process.reconciles("gate").await?;
    tokio::time::sleep(SOAK_WINDOW).await;
    let soak_stand_in_requests = stand_in.total() - seen_before;
    let soak_breakdown = process
        .requests_by_kind()
        .await?
        .since(&soak_requests_before, 1.0);
    let soak_requests = soak_breakdown.0.values().sum::<f64>() + 0.0;
    let soak_gate_reconciles = process.reconciles("gate").await? - soak_reconciles_before;
    let still = of_gates(&passages, "v").await?;
    anyhow::ensure!(
        still.iter().all(soaking),
        "after the minute, not every Gate was soaking"
    );
    // The plain Gates cross once more while every Gate soaks (nothing looks).
    eprintln!("[bench] {PLAIN} plain crossings while they soak…");
    let (soaking_plain, _) = plain_crossings(&bundles, &passages, &plain_names, 3, false).await?;
    let (rss_mib, peak_rss_mib) = process.memory();
    drop(process);

    let seen = stand_in.by_path();
    let count = |path: &str| seen.get(path).copied().unwrap_or(0) as f64;
    let other_requests = seen
        .iter()
        .filter(|(path, _)| ![HOOK, SMOKE, QUERY].contains(&path.as_str()))
        .map(|(_, n)| *n as f64)
        .sum::<f64>()
        + 0.0;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let net_reconciles = looking_gate_reconciles - baseline_gate_reconciles;
    Ok(VerificationResults {
        verifying,
        plain: PLAIN,
        verifying_crossed_ms: ms(verifying_crossed),
        looks_done_ms: ms(looks_done),
        http_looks,
        http_requests: count(SMOKE),
        prometheus_looks,
        prometheus_requests: count(QUERY),
        looks_not_passing,
        other_requests,
        looking_window_ms: ms(looking_window),
        looking_gate_reconciles,
        looking_looks: http_looks + prometheus_looks - looks_before_window,
        looking_requests,
        looking_breakdown,
        looking_requests_per_reconcile_net: if net_reconciles > 0.0 {
            (looking_requests - baseline_requests) / net_reconciles
        } else {
            0.0
        },
        soak_window_s: SOAK_WINDOW.as_secs_f64(),
        soak_next_look_min_s: soak_ends.iter().copied().fold(f64::INFINITY, f64::min),
        soak_next_look_max_s: soak_ends.iter().copied().fold(0.0, f64::max),
        soak_stand_in_requests,
        soak_requests,
        soak_breakdown,
        soak_gate_reconciles,
        baseline_p50_ms: super::percentile_ms(&baseline, 0.5),
        baseline_max_ms: super::percentile_ms(&baseline, 1.0),
        during_p50_ms: super::percentile_ms(&during, 0.5),
        during_max_ms: super::percentile_ms(&during, 1.0),
        soaking_p50_ms: super::percentile_ms(&soaking_plain, 0.5),
        soaking_max_ms: super::percentile_ms(&soaking_plain, 1.0),
        baseline_requests,
        baseline_gate_reconciles,
        looks_before_plain_done,
        rss_mib,
        peak_rss_mib,
    })
}

/// Creates Bundle `p-<n>` and times each plain Gate's `n`th crossing of it, from the
/// Bundle's creation to its Passage Succeeded, sorted. With `watch_looks`, also the
/// looks the verifying Gates had taken when the last crossing finished.
async fn plain_crossings(
    bundles: &Api<Bundle>,
    passages: &Api<Passage>,
    names: &[String],
    n: usize,
    watch_looks: bool,
) -> anyhow::Result<(Vec<Duration>, f64)> {
    let created = Instant::now();
    bundles
        .create(
            &PostParams::default(),
            &super::controller::bundle(&format!("p-{n}"), "p", n),
        )
        .await?;
    let mut done: BTreeMap<String, Duration> = BTreeMap::new();
    while done.len() < names.len() {
        anyhow::ensure!(
            created.elapsed() < Duration::from_secs(300),
            "{} of {} plain crossings did not finish within 5 minutes",
            names.len() - done.len(),
            names.len()
        );
        for passage in of_gates(passages, "p").await? {
            let name = passage.name_any();
            if !names.iter().any(|gate| name == format!("{gate}-{n}")) {
                continue;
            }
            match passage.phase() {
                PassagePhase::Succeeded => {
                    done.entry(name).or_insert_with(|| created.elapsed());
                }
                PassagePhase::Failed | PassagePhase::Aborted => {
                    anyhow::bail!("plain crossing {name} failed: {:?}", passage.status)
                }
                _ => {}
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let looks_so_far = if watch_looks {
        let (http, prometheus, _) = looks(&of_gates(passages, "v").await?);
        http + prometheus
    } else {
        0.0
    };
    let mut samples: Vec<Duration> = done.into_values().collect();
    samples.sort();
    Ok((samples, looks_so_far))
}

/// The namespace's Passages of the Gates named `<prefix><i>`.
async fn of_gates(passages: &Api<Passage>, prefix: &str) -> anyhow::Result<Vec<Passage>> {
    Ok(passages
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|p| {
            p.spec
                .gate
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.parse::<usize>().is_ok())
        })
        .collect())
}

/// Whether `passage`'s verification (or one of its verifiers) said no.
fn verification_failed(passage: &Passage) -> bool {
    passage
        .status
        .as_ref()
        .and_then(|s| s.verification.as_ref())
        .is_some_and(|v| {
            v.phase == VerificationPhase::Failed
                || v.verifiers
                    .iter()
                    .any(|v| v.phase == VerificationPhase::Failed)
        })
}

/// Whether `passage` crossed and only its soak is left: http and prometheus
/// Verified, the soak Verifying with the instant it ends.
fn soaking(passage: &Passage) -> bool {
    let Some(verification) = passage
        .status
        .as_ref()
        .and_then(|s| s.verification.as_ref())
    else {
        return false;
    };
    let phase = |uses: &str| {
        verification
            .verifiers
            .iter()
            .find(|v| v.uses == uses)
            .map(|v| (v.phase, v.next_look_at.is_some()))
    };
    passage.phase() == PassagePhase::Succeeded
        && verification.phase == VerificationPhase::Verifying
        && matches!(phase("http"), Some((VerificationPhase::Verified, _)))
        && matches!(phase("prometheus"), Some((VerificationPhase::Verified, _)))
        && phase("soak") == Some((VerificationPhase::Verifying, true))
}

/// The looks `passages` record: (http, prometheus, not passing among all three).
fn looks(passages: &[Passage]) -> (f64, f64, f64) {
    let (mut http, mut prometheus, mut not_passing) = (0.0, 0.0, 0.0);
    for verifier in passages
        .iter()
        .filter_map(|p| p.status.as_ref()?.verification.as_ref())
        .flat_map(|v| &v.verifiers)
    {
        let looks = f64::from(verifier.passes + verifier.failures + verifier.inconclusive);
        match verifier.uses.as_str() {
            "http" => http += looks,
            "prometheus" => prometheus += looks,
            _ => {}
        }
        not_passing += f64::from(verifier.failures + verifier.inconclusive);
    }
    (http, prometheus, not_passing)
}

/// An automatic Gate admitting Beacon `beacon`'s Bundles, whose crossing is one `http`
/// step to the stand-in; with `verify`, three verifications after it.
fn gate(name: &str, beacon: &str, stand_in: &StandIn, verify: bool) -> Gate {
    let cadence = |mut with: serde_json::Value| {
        with["interval"] = format!("{INTERVAL_S}s").into();
        with["successes"] = SUCCESSES.into();
        with
    };
    let verify = if verify {
        vec![
            Verification {
                uses: "http".into(),
                with: Some(cadence(serde_json::json!({"url": stand_in.url(SMOKE)}))),
            },
            Verification {
                uses: "prometheus".into(),
                with: Some(cadence(serde_json::json!({
                    "address": stand_in.url(""),
                    "query": "sum(rate(http_requests_total{code=~\"5..\"}[1m]))",
                    "successIf": "result < 1",
                }))),
            },
            Verification {
                uses: "soak".into(),
                with: Some(serde_json::json!({"duration": format!("{SOAK_MINUTES}m")})),
            },
        ]
    } else {
        Vec::new()
    };
    Gate::new(
        name,
        GateSpec {
            admits: vec![Admission {
                from: BundleOrigin {
                    beacon: beacon.into(),
                },
                ..Admission::default()
            }],
            passage: Some(PassageTemplate {
                steps: vec![Step {
                    uses: "http".into(),
                    with: Some(serde_json::json!({"url": stand_in.url(HOOK)})),
                    ..Step::default()
                }],
            }),
            verify,
            auto: true,
            ..GateSpec::default()
        },
    )
}

/// A loopback server answering every request: `/api/v1/query` with one vector sample
/// of 0.5 (Prometheus' shape), anything else `200 ok`. Counts requests per path (the
/// query string left out). It runs until the runtime stops.
struct StandIn {
    address: std::net::SocketAddr,
    seen: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl StandIn {
    async fn start() -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let seen: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
        let counts = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let counts = counts.clone();
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buffer = [0u8; 4096];
                    while !complete(&request) {
                        match stream.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let line = String::from_utf8_lossy(&request);
                    let target = line.split_whitespace().nth(1).unwrap_or_default();
                    let path = target.split('?').next().unwrap_or_default().to_string();
                    let body = if path == QUERY {
                        format!(
                            r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{{}},"value":[{},"0.5"]}}]}}}}"#,
                            jiff::Timestamp::now().as_second()
                        )
                    } else {
                        "ok".to_string()
                    };
                    *counts
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .entry(path)
                        .or_default() += 1;
                    let _ = stream
                        .write_all(
                            format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                                body.len()
                            )
                            .as_bytes(),
                        )
                        .await;
                });
            }
        });
        Ok(Self { address, seen })
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    fn by_path(&self) -> BTreeMap<String, u64> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn total(&self) -> f64 {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .sum::<u64>() as f64
    }
}

/// Whether `request` holds its headers and the body they announce.
fn complete(request: &[u8]) -> bool {
    let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let headers = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
    let length = headers
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    request.len() >= end + 4 + length
}

/// The run as a Markdown table, with the requests by verb and resource after it.
pub(crate) fn report(r: &VerificationResults) -> String {
    let per = |requests: f64, looks: f64| {
        if looks > 0.0 {
            format!("{:.2}", requests / looks)
        } else {
            "—".into()
        }
    };
    let per_reconcile = |requests: f64, reconciles: f64| {
        if reconciles > 0.0 {
            format!("{:.2}", requests / reconciles)
        } else {
            "—".into()
        }
    };
    let mut out = format!(
        "{} Gates verifying (http and prometheus every {INTERVAL_S} s until {SUCCESSES} \
         passes in a row, a {SOAK_MINUTES}-minute soak), {} plain Gates\n\n\
         | what | figure |\n|---|---:|\n",
        r.verifying, r.plain
    );
    let mut row = |what: String, figure: String| out.push_str(&format!("| {what} | {figure} |\n"));
    row(
        format!("their Bundle → all {} crossings Succeeded", r.verifying),
        format!("{:.0} ms", r.verifying_crossed_ms),
    );
    row(
        "→ every http and prometheus verification Verified".into(),
        format!("{:.0} ms", r.looks_done_ms),
    );
    row(
        "http: looks / requests to the smoke endpoint / per look".into(),
        format!(
            "{:.0} / {:.0} / {}",
            r.http_looks,
            r.http_requests,
            per(r.http_requests, r.http_looks)
        ),
    );
    row(
        "prometheus: looks / queries / per look".into(),
        format!(
            "{:.0} / {:.0} / {}",
            r.prometheus_looks,
            r.prometheus_requests,
            per(r.prometheus_requests, r.prometheus_looks)
        ),
    );
    row(
        "looks that did not pass; requests on other paths (soak)".into(),
        format!("{:.0}; {:.0}", r.looks_not_passing, r.other_requests),
    );
    row(
        format!(
            "while looking ({:.1} s, plain crossings inside): Gate reconciles / controller \
             requests / per reconcile",
            r.looking_window_ms / 1000.0
        ),
        format!(
            "{:.0} / {:.0} / {}",
            r.looking_gate_reconciles,
            r.looking_requests,
            per_reconcile(r.looking_requests, r.looking_gate_reconciles)
        ),
    );
    row(
        "looks inside that window (http and prometheus)".into(),
        format!("{:.0}", r.looking_looks),
    );
    row(
        format!(
            "the same less the baseline's {} plain crossings ({:.0} requests, {:.0} reconciles)",
            r.plain, r.baseline_requests, r.baseline_gate_reconciles
        ),
        format!("{:.2} per reconcile", r.looking_requests_per_reconcile_net),
    );
    row(
        "soaks' next look, from when all were soaking: min / max".into(),
        format!(
            "{:.0} / {:.0} s",
            r.soak_next_look_min_s, r.soak_next_look_max_s
        ),
    );
    row(
        format!(
            "every Gate soaking, {:.0} s: stand-in requests / controller requests / Gate \
             reconciles",
            r.soak_window_s
        ),
        format!(
            "{:.0} / {:.0} / {:.0}",
            r.soak_stand_in_requests, r.soak_requests, r.soak_gate_reconciles
        ),
    );
    row(
        format!("{} plain crossings, nothing verifying: p50 / max", r.plain),
        format!("{:.0} / {:.0} ms", r.baseline_p50_ms, r.baseline_max_ms),
    );
    row(
        format!(
            "{} plain crossings while {} verify: p50 / max",
            r.plain, r.verifying
        ),
        format!("{:.0} / {:.0} ms", r.during_p50_ms, r.during_max_ms),
    );
    row(
        format!(
            "{} plain crossings while {} soak: p50 / max",
            r.plain, r.verifying
        ),
        format!("{:.0} / {:.0} ms", r.soaking_p50_ms, r.soaking_max_ms),
    );
    row(
        "looks taken when the last plain crossing finished".into(),
        format!(
            "{:.0} of {:.0}",
            r.looks_before_plain_done,
            r.http_looks + r.prometheus_looks
        ),
    );
    row(
        "controller memory: at the end / peak".into(),
        format!("{:.1} / {:.1} MiB", r.rss_mib, r.peak_rss_mib),
    );
    out.push_str(&format!(
        "\nwhile looking, controller requests by verb and resource:\n{}",
        r.looking_breakdown.lines()
    ));
    out.push_str(&format!(
        "every Gate soaking, controller requests by verb and resource:\n{}",
        r.soak_breakdown.lines()
    ));
    out
}
