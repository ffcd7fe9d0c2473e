//! The results as Markdown, with the machine and versions they were measured on, and
//! publishing them into `docs/BENCHMARKS.md`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use serde::Serialize;

use super::{Measurement, Results};

/// Where the results section of `docs/BENCHMARKS.md` starts and ends.
const BEGIN: &str = "<!-- bench:begin (written by `cargo xtask bench --scale large`) -->";
const END: &str = "<!-- bench:end -->";

/// What the numbers were measured on.
#[derive(Serialize)]
pub(crate) struct Environment {
    pub(crate) date: String,
    pub(crate) commit: String,
    pub(crate) cpu: String,
    pub(crate) cores: usize,
    pub(crate) memory_gib: f64,
    pub(crate) rustc: String,
    pub(crate) kube_apiserver: &'static str,
    pub(crate) etcd: &'static str,
}

impl Environment {
    pub(crate) async fn describe(root: &Path) -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let field = |text: &str, name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
                .unwrap_or_default()
        };
        let memory_kib: f64 = field(&meminfo, "MemTotal")
            .trim_end_matches(" kB")
            .parse()
            .unwrap_or(0.0);
        Self {
            date: jiff::Timestamp::now().strftime("%Y-%m-%d").to_string(),
            commit: output(root, "git", &["describe", "--always", "--dirty"]).await,
            cpu: field(&cpuinfo, "model name"),
            cores: std::thread::available_parallelism().map_or(0, usize::from),
            memory_gib: memory_kib / 1024.0 / 1024.0,
            rustc: output(root, "rustc", &["--version"]).await,
            kube_apiserver: hecate_testenv::KUBERNETES_VERSION,
            etcd: hecate_testenv::ETCD_VERSION,
        }
    }
}

/// The first line a command prints, or "unknown".
async fn output(root: &Path, program: &str, args: &[&str]) -> String {
    tokio::process::Command::new(program)
        .args(args)
        .current_dir(root)
        .output()
        .await
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|o| o.lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// The results section.
pub(crate) fn markdown(results: &Results) -> String {
    let env = &results.environment;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## {} — `{}` scale, {} build, commit `{}`\n",
        env.date, results.scale, results.profile, env.commit
    );
    if results.profile != "release" {
        let _ = writeln!(
            md,
            "**A debug build: these numbers check the harness; they do not measure Hecate.**\n"
        );
    }
    let _ = writeln!(
        md,
        "Machine: {} cores ({}), {:.0} GiB; kube-apiserver {} and etcd {} on loopback, \
         sharing those cores with everything measured; {}. Namespace `{}`: {} Gates, {} \
         Bundles, {} Passages. Times are medians of 7 runs after a warm-up; requests \
         are what the API server counted for one run.\n",
        env.cores,
        env.cpu,
        env.memory_gib,
        env.kube_apiserver,
        env.etcd,
        env.rustc,
        results.namespace,
        results.gates,
        results.bundles,
        results.passages
    );

    let _ = writeln!(md, "### Commands (whole process)\n");
    table(&mut md, &results.commands.measurements);
    match results.commands.status_over_kubectl {
        Some(ratio) => {
            let _ = writeln!(
                md,
                "\n`hecate status` takes {ratio:.2}× the time of `kubectl get` reading the same \
                 objects ({}).\n",
                results.commands.kubectl
            );
        }
        None => {
            let _ = writeln!(md, "\nkubectl: {}.\n", results.commands.kubectl);
        }
    }

    let _ = writeln!(md, "### hecate-ops, in process\n");
    table(&mut md, &results.ops);

    let api = &results.api;
    levels(&mut md, api);
    let _ = writeln!(
        md,
        "\nOver {} requests in {:.0} s the API server served {} requests for Hecate objects, \
         {} TokenReviews ({:.2} per 1,000 requests; {:.2} per token per 10 s cache period) and \
         {} SubjectAccessReviews ({:.2} per 1,000). Peak RSS {:.1} MiB.\n",
        api.requests,
        api.load_seconds,
        api.apiserver.hecate,
        api.apiserver.token_reviews,
        api.token_reviews_per_1000,
        api.token_reviews_per_period,
        api.apiserver.access_reviews,
        api.access_reviews_per_1000,
        api.peak_rss_mib
    );
    let _ = writeln!(
        md,
        "### hecate-mcp over stdio and over HTTP ({} calls each after a warm-up)\n",
        super::mcp::CALLS
    );
    table(&mut md, &results.mcp);
    let _ = writeln!(md, "\n{}", controller(&results.controller));
    let _ = writeln!(md, "\n{}", crossings(&results.crossings));
    let _ = writeln!(md, "\n{}", flux(&results.flux));
    let b = &results.beacons;
    let _ = writeln!(
        md,
        "\n### Beacons polling a registry (the controller as its own process)\n\n\
         {} Beacons, {} on each of {} repositories of {} tags in one loopback registry \
         (CNCF Distribution), each polling every {}; requests are what the registry's \
         access log shows the controller asked.\n\n\
         | what | value |\n|---|---:|\n\
         | start to every Beacon polled once: time / registry requests per poll | {:.0} ms / {:.2} |\n\
         | every Beacon asked to poll (`hecate poll`: digests looked up afresh), nothing changed: time / registry requests per poll | {:.0} ms / {:.2} |\n\
         | a new tag in every repository, every Beacon asked: time / registry requests per poll | {:.0} ms / {:.2} |\n\
         | Beacons that emitted the new tag's Bundle in that cycle | {} of {} |\n\
         | polling on their own, nothing changed ({} polls in {:.0} s): registry requests per poll / per minute | {:.2} / {:.0} |\n\
         | resident memory at the end / peak | {:.1} / {:.1} MiB |",
        b.beacons,
        b.beacons / b.repositories.max(1),
        b.repositories,
        b.tags_per_repository,
        b.interval,
        b.first_cycle_ms,
        b.first_requests_per_poll,
        b.requested_cycle_ms,
        b.requested_requests_per_poll,
        b.new_tag_cycle_ms,
        b.new_tag_requests_per_poll,
        b.new_tag_emitted,
        b.beacons,
        b.routine_polls,
        b.routine_window_s,
        b.routine_requests_per_poll,
        b.routine_requests_per_minute,
        b.rss_mib,
        b.peak_rss_mib
    );
    md.push('\n');
    md.push_str(&fleet(&results.fleet));
    let _ = writeln!(
        md,
        "\nReproduce: `cargo xtask bench --scale {}`.",
        results.scale
    );
    md
}

/// The controller over a fleet, as a section.
pub(crate) fn controller(c: &super::controller::ControllerResults) -> String {
    format!(
        "### hecate-controller over a fleet (its own process)\n\n\
         {} Gates in {} namespaces, each namespace with {} Bundles every Gate judges.\n\n\
         | what | value |\n|---|---:|\n\
         | start to every Gate reconciled once | {:.0} ms |\n\
         | requests per Gate reconcile (first pass, the controller's own count) | {:.2} |\n\
         | Bundle created → automatic Gate's Passage exists, p50 / p99 / max ({} samples) | {:.0} / {:.0} / {:.0} ms |\n\
         | requests per minute while idle (over {:.0} s) | {:.0} |\n\
         | resident memory at the end / peak | {:.1} / {:.1} MiB |",
        c.gates,
        c.namespaces,
        c.bundles / c.namespaces.max(1),
        c.first_pass_ms,
        c.requests_per_gate_reconcile,
        c.namespaces,
        c.eligible_to_passage_p50_ms,
        c.eligible_to_passage_p99_ms,
        c.eligible_to_passage_max_ms,
        c.idle_window_s,
        c.idle_requests_per_minute,
        c.rss_mib,
        c.peak_rss_mib
    )
}

/// The fleet, as a section.
pub(crate) fn fleet(f: &super::fleet::FleetResults) -> String {
    let mut md = format!(
        "### A fleet ({} namespaces: {} Gates, {} Beacons, {} Bundles, {} Passages)\n\n",
        f.namespaces, f.gates, f.beacons, f.bundles, f.passages
    );
    if let Some(seeded) = &f.seeded {
        let _ = writeln!(
            md,
            "Seeded {} objects in {:.0} s ({:.0} objects/s).\n",
            seeded.objects, seeded.seconds, seeded.per_second
        );
    }
    let _ = writeln!(
        md,
        "| hecate-controller | namespaces | Gates | every Gate reconciled once | requests per Gate | idle requests/min | RSS at rest / peak |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    for c in &f.controllers {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.0} ms | {:.2} | {:.0} | {:.1} / {:.1} MiB |",
            c.name,
            c.namespaces,
            c.gates,
            c.first_pass_ms,
            c.requests_per_gate,
            c.idle_requests_per_minute,
            c.rss_mib,
            c.peak_rss_mib
        );
    }
    let _ = writeln!(
        md,
        "\nOne replica, the fleet at rest: one Bundle → its crossing succeeded in {:.0} ms; \
         then one Bundle in each of {} namespaces at once: p50 {:.0} ms, p99 {:.0} ms, \
         max {:.0} ms (seen by a LIST every 50 ms).\n",
        f.one_crossing_ms, f.at_once, f.at_once_p50_ms, f.at_once_p99_ms, f.at_once_max_ms
    );
    let _ = writeln!(
        md,
        "hecate-api: ready {:.0} ms after start, {:.1} MiB resident when ready, peak {:.1} MiB. \
         Alice may read one namespace, carol all of them; 32 clients each.\n\n\
         | route | clients | req/s | p50 ms | p99 ms | errors |\n|---|---:|---:|---:|---:|---:|",
        f.api_ready_ms, f.api_rss_mib, f.api_peak_rss_mib
    );
    level_rows(&mut md, &f.api);
    md.push('\n');
    let rows: Vec<&Measurement> = f
        .first_page
        .iter()
        .chain(&f.commands)
        .chain([&f.mcp])
        .collect();
    table(&mut md, rows);
    let _ = writeln!(
        md,
        "\nhecate-mcp --listen peak RSS {:.1} MiB.",
        f.mcp_peak_rss_mib
    );
    md
}

/// The "Crossings end to end" section.
pub(crate) fn crossings(crossings: &super::crossings::CrossingResults) -> String {
    let x = crossings;
    let mut md = String::new();
    let _ = write!(
        md,
        "### Crossings end to end (the controller as its own process)\n\n\
         Gates of the §10.1 shape: clone a local fleet repository, edit `values.yaml`, \
         commit, push, wait for the stand-in Kustomization (Flux played every 200 ms), \
         call a loopback receiver.\n\n\
         | what | value |\n|---|---:|\n\
         | one crossing: Beacon and Gate applied → Bundle / Passage / succeeded | {:.0} / {:.0} / {:.0} ms |\n\
         | requests the controller sent for it (Beacon, Gate, Passage) | {:.0} |\n\
         | {} releases, one after another, the Beacon asked to look: commit → Bundle (Beacon), p50 / p99 | {:.0} / {:.0} ms |\n\
         | Bundle → Passage (Gate), p50 / p99 | {:.0} / {:.0} ms |\n\
         | Passage → crossed (steps), p50 / p99 | {:.0} / {:.0} ms |\n\
         | commit → crossed, p50 / p99 | {:.0} / {:.0} ms |\n\
         | requests per release / in 10 s idle afterwards | {:.1} / {:.0} |\n\
         | left after the releases: solo's Passages (retain {}, {} it names) / app's Bundles (retain {}, {} referenced) | {} / {} |\n\
         | {} crossings at once (one Bundle, {} automatic Gates): all succeeded | {:.0} ms ({:.1} per second) |\n\
         | requests per crossing among them | {:.1} |\n\
         | resident memory at the end / peak | {:.1} / {:.1} MiB |",
        x.one_bundle_ms,
        x.one_passage_ms,
        x.one_succeeded_ms,
        x.one_requests,
        x.releases,
        x.loop_beacon_p50_ms,
        x.loop_beacon_p99_ms,
        x.loop_gate_p50_ms,
        x.loop_gate_p99_ms,
        x.loop_steps_p50_ms,
        x.loop_steps_p99_ms,
        x.loop_total_p50_ms,
        x.loop_total_p99_ms,
        x.loop_requests_per_release,
        x.loop_idle_requests,
        x.retained.gate_retain,
        x.retained.named,
        x.retained.beacon_retain,
        x.retained.referenced,
        x.retained.passages,
        x.retained.bundles,
        x.concurrent,
        x.concurrent,
        x.concurrent_all_ms,
        x.concurrent_per_second,
        x.concurrent_requests_per_crossing,
        x.rss_mib,
        x.peak_rss_mib
    );
    md
}

pub(crate) fn flux(results: &super::flux::FluxResults) -> String {
    let mut md = format!(
        "### Releases through Flux's own controllers\n\n\
         {} releases, each carried dev (by itself) → staging (promoted) → production \
         (approved), by `hecate-controller` as its own process: every crossing clones the \
         fleet and the application at its tag, renders the application's manifests with \
         kustomize, edits `values.yaml`, commits and pushes over git's smart HTTP, and waits \
         for kustomize-controller to apply that commit and find the Deployment healthy on \
         kwok's node. p50 / p99 in ms.\n\n\
         | stage | Flux asked | trigger → Passage | steps | Flux (`flux-wait`) | the stage |\n\
         |---|---|---:|---:|---:|---:|\n",
        results.releases
    );
    for (variant, asked) in [
        (&results.with_reconcile, "`flux-reconcile`".to_string()),
        (
            &results.without_reconcile,
            format!("its interval, {}", results.interval_without_reconcile),
        ),
    ] {
        for (stage, times, trigger) in [
            ("dev", &variant.dev, "commit"),
            ("staging", &variant.staging, "promote"),
            ("production", &variant.production, "approve"),
        ] {
            let _ = writeln!(
                md,
                "| {stage} ({trigger} →) | {asked} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} |",
                times.gate_p50_ms,
                times.gate_p99_ms,
                times.steps_p50_ms,
                times.steps_p99_ms,
                times.flux_p50_ms,
                times.flux_p99_ms,
                times.total_p50_ms,
                times.total_p99_ms
            );
        }
        let _ = writeln!(
            md,
            "| (of dev's first column: commit → Bundle, the Beacon) | {asked} | {:.0} / {:.0} | | | |",
            variant.beacon_p50_ms, variant.beacon_p99_ms
        );
    }
    md
}

/// hecate-api's ready time and its latency at each load level.
pub(crate) fn levels(md: &mut String, api: &super::load::ApiResults) {
    let _ = writeln!(
        md,
        "\n### hecate-api under load (as alice, from a second process)\n\n\
         Ready (cache listed) {:.0} ms after start.\n\n\
         | route | clients | req/s | p50 ms | p99 ms | errors |\n|---|---:|---:|---:|---:|---:|",
        api.ready_ms
    );
    level_rows(md, &api.levels);
}

/// One table row per load level.
fn level_rows(md: &mut String, levels: &[super::load::Level]) {
    for level in levels {
        let _ = writeln!(
            md,
            "| `{}` | {} | {:.0} | {:.1} | {:.1} | {} |",
            level.route,
            level.concurrency,
            level.requests_per_second,
            level.p50_ms,
            level.p99_ms,
            level.errors
        );
    }
}

pub(crate) fn table<'a>(md: &mut String, measurements: impl IntoIterator<Item = &'a Measurement>) {
    let _ = writeln!(
        md,
        "| what | median | min–max | API server requests |\n|---|---:|---:|---|"
    );
    for m in measurements {
        let requests = m.apiserver_requests.map_or("—".to_string(), |r| {
            let mut parts = vec![format!("{}", r.hecate)];
            if r.token_reviews + r.access_reviews > 0.0 {
                parts.push(format!("+ {} reviews", r.token_reviews + r.access_reviews));
            }
            if r.discovery > 0.0 {
                parts.push(format!("+ {} discovery", r.discovery));
            }
            parts.join(" ")
        });
        let _ = writeln!(
            md,
            "| `{}` | {:.1} ms | {:.1}–{:.1} ms | {} |",
            m.name, m.median_ms, m.min_ms, m.max_ms, requests
        );
    }
}

/// Replaces the results section of `path` with `section`.
pub(crate) fn publish(path: &Path, section: &str) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let (before, rest) = text
        .split_once(BEGIN)
        .with_context(|| format!("{} has no `{BEGIN}` line", path.display()))?;
    let (_, after) = rest
        .split_once(END)
        .with_context(|| format!("{} has no `{END}` line", path.display()))?;
    std::fs::write(path, format!("{before}{BEGIN}\n\n{section}\n{END}{after}"))?;
    Ok(())
}

/// `--only fan-out`'s table.
pub(crate) fn fan_out(x: &super::fan_out::FanOutResults) -> String {
    let mut md = String::new();
    let _ = write!(
        md,
        "### Fan-out: one Gate, many targets (the controller as its own process)\n\n\
         One manual Gate over {} targets in four waves, none soaking; each target's \
         crossing is one `flux-wait` on a Kustomization of its own, already applied and \
         healthy — what is measured is Hecate's cost per target.\n\n\
         | what | value |\n|---|---:|\n\
         | promote → succeeded, one target | {:.0} ms, {:.0} requests |\n\
         | promote → succeeded, {} targets | {:.0} ms, {:.0} requests |\n\
         | each target beyond the first | {:.1} ms, {:.1} requests |\n\
         | the Passage's status when done | {} bytes |\n\
         | controller resident memory at the end / peak | {:.1} / {:.1} MiB |\n\n\
         {} targets' requests by verb and resource:\n{}",
        x.targets,
        x.one_ms,
        x.one_requests,
        x.targets,
        x.all_ms,
        x.all_requests,
        x.per_target_ms,
        x.per_target_requests,
        x.status_bytes,
        x.memory_mib,
        x.peak_mib,
        x.targets,
        x.all_breakdown.lines()
    );
    md
}
